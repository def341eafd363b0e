#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs real-ext.py with a python3 that can import torch (DTL_TORCH_PYTHON, Debian's
# /usr/bin/python3, then python3 on PATH); exit 77 (skip) when there is none.
# usage: real-ext.sh REAL_EXT_PY PREDICTOR SOURCE_DIR
script=$1
shift
for py in "${DTL_TORCH_PYTHON:-}" /usr/bin/python3 python3; do
	[ -n "$py" ] || continue
	if "$py" -c 'import torch' >/dev/null 2>&1; then
		exec "$py" "$script" "$@"
	fi
done
echo "SKIP: no python3 that can import torch (install python3-torch, or set DTL_TORCH_PYTHON)"
exit 77
