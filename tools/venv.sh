#!/bin/sh
# Creates (or refreshes) a Python environment of the tests: a venv at DIR holding exactly one
# requirements file. Re-installs only when that file changed since the last install (its copy
# is kept in the venv). Prints the venv's python on stdout.
#   sh tools/venv.sh [DIR]                  tests/requirements.txt (default DIR build/venv)
#   sh tools/venv.sh DIR llamafactory       tests/requirements-llamafactory.txt (LLaMA-Factory
#                                           0.9.5 and its own older transformers, PEFT, TRL)
#   sh tools/venv.sh DIR axolotl            tests/requirements-axolotl.txt (axolotl 0.19.0)
# The trainers' venvs (build/venv-llamafactory, build/venv-axolotl by convention) serve
# tests/oracle/trainer_apps.py only; nothing in the default or CI suites needs them.
# Needs python3 with venv and pip, and the registries of the machine (PyPI and the local
# wheel of torch 2.13.0).
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build/venv}
nodeps=
case ${2:-} in
'') req=tests/requirements.txt ;;
llamafactory | axolotl)
	# every package is pinned in the file; what the trainers require but cannot run here
	# (CUDA-only builds) is left out of it, so pip must not add it back
	req=tests/requirements-$2.txt
	nodeps=--no-deps
	;;
*)
	echo "tools/venv.sh: unknown set '$2' (llamafactory or axolotl)" >&2
	exit 2
	;;
esac
if [ -x "$dir/bin/python" ] && cmp -s "$req" "$dir/requirements.installed"; then
	echo "$dir/bin/python"
	exit 0
fi
python3 -m venv "$dir" >&2
"$dir/bin/python" -m pip install -q --disable-pip-version-check $nodeps -r "$req" >&2
cp "$req" "$dir/requirements.installed"
echo "$dir/bin/python"
