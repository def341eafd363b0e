#!/bin/sh
# `pip install ./python` as the README says (offline, no build isolation), into a scratch
# prefix, with the tests' Python (BUILD_ROOT/venv: torch 2.13.0), then the training-script
# example from that install: it must print the predicted FSDP1 error and stop with exit status
# 1, real FSDP1 must raise that error, and with --fixed it must train. Without the venv:
# SKIP, or FAIL where DTL_REQUIRE_VENV=1.
# Usage: pip_example.sh BUILD_ROOT DTYPELINT SOURCE_ROOT
set -eu
build=$1 dtypelint=$2 root=$3
python=$build/venv/bin/python
if [ ! -x "$python" ]; then
	why="$python is missing: make it with \`sh tools/venv.sh $build/venv\`"
	[ "${DTL_REQUIRE_VENV:-}" = 1 ] && { echo "FAIL: $why (DTL_REQUIRE_VENV=1)"; exit 1; }
	echo "SKIP: $why"
	exit 77
fi
"$python" -c 'import torch' 2>/dev/null || { echo "FAIL: $python has no torch"; exit 1; }
"$python" -m pip --version >/dev/null 2>&1 || { echo "SKIP: $python has no pip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a copy: setuptools writes build/ and *.egg-info beside the sources
cp -R "$root/python" "$tmp/src"
"$python" -m pip install --quiet --root-user-action=ignore --no-build-isolation --no-deps \
	--no-index --target "$tmp/site" "$tmp/src"
where=$(PYTHONPATH=$tmp/site "$python" -c 'import dtypelint; print(dtypelint.__file__)')
[ "$where" = "$tmp/site/dtypelint/__init__.py" ] || { echo "FAIL: imported $where"; exit 1; }
status=0
DTYPELINT_BIN=$dtypelint PYTHONPATH=$tmp/site "$python" "$root/examples/train_tiny.py" \
	>"$tmp/out" 2>&1 || status=$?
cat "$tmp/out"
[ "$status" = 1 ] || { echo "FAIL: the example exited $status, expected 1"; exit 1; }
grep -q '^  predicted: ValueError: .*uniform dtype' "$tmp/out" ||
	{ echo "FAIL: no predicted FSDP1 error"; exit 1; }
# and real torch raises exactly the predicted error on the example's model (the README says so)
truth=$(PYTHONPATH=$tmp/site:$root/examples "$python" -c '
import torch, train_tiny
from dtypelint import oracle
model = train_tiny.TinyLM().to(torch.bfloat16)
for layer in model.layers:
    layer.norm.float()
v = oracle.fsdp1(model, oracle.policy_for(dict(model.named_modules()), ["DecoderLayer"]))
print(v["error_type"] + ": " + v["error"] if not v["ok"] else "wrapped")')
grep -qxF "  predicted: $truth" "$tmp/out" ||
	{ echo "FAIL: real FSDP1 says '$truth'"; exit 1; }
echo "ok: real FSDP1 raises it: $truth"
DTYPELINT_BIN=$dtypelint PYTHONPATH=$tmp/site "$python" "$root/examples/train_tiny.py" --fixed \
	>"$tmp/out" 2>&1 || { cat "$tmp/out"; echo "FAIL: --fixed did not train"; exit 1; }
grep -q '^step 2: loss' "$tmp/out" || { cat "$tmp/out"; exit 1; }
echo "ok: pip install ./python, the example predicts the error, --fixed trains"
