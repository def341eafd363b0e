#!/bin/sh
# Creates (or refreshes) the tests' Python environment: a venv at DIR (default build/venv)
# holding exactly tests/requirements.txt. Re-installs only when that file changed since the
# last install (its copy is kept in the venv). Prints the venv's python on stdout.
# Needs python3 with venv and pip, and the registries of the machine (PyPI and the local
# wheel of torch 2.13.0).
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build/venv}
req=tests/requirements.txt
if [ -x "$dir/bin/python" ] && cmp -s "$req" "$dir/requirements.installed"; then
	echo "$dir/bin/python"
	exit 0
fi
python3 -m venv "$dir" >&2
"$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2
cp "$req" "$dir/requirements.installed"
echo "$dir/bin/python"
