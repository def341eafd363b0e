#!/bin/sh
# SPDX-License-Identifier: MIT
# The `language: python` pre-commit hooks (.pre-commit-hooks.yaml), run by the real pre-commit
# (`try-repo`), offline, from a local wheel index (issue 34 item 2): the hook repository is
# dtypelint-pre-commit as the release workflow makes it (contrib/pre-commit-mirror/ and this
# repository's .pre-commit-hooks.yaml), whose one dependency is the dtypelint wheel; pip finds
# it, and setuptools to build the mirror, only in WHEELHOUSE and virtualenv's own wheels.
# The hooks must pass and fail on the right files, and take a file named -o.dtypelint.yaml as
# a file (issue 35 item 4: `--` before the names); the system variant too.
# usage: precommit.sh SOURCE_ROOT PYTHON WHEELHOUSE (wheel.sh calls it with the wheel it built)
set -u
root=$1 py=$2 wheelhouse=$3
bin=$(dirname "$py")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wheel=$(ls "$wheelhouse"/dtypelint-*.whl | head -n 1)
version=$(basename "$wheel" | cut -d- -f2)
embed=$("$py" -c 'import os, virtualenv.seed.wheels.embed as e; print(os.path.dirname(e.__file__))') ||
	{ echo "FAIL: no virtualenv wheels for setuptools"; exit 1; }
export PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheelhouse $embed" PIP_CONFIG_FILE=/dev/null
export PRE_COMMIT_HOME="$tmp/cache" HOME="$tmp" XDG_CACHE_HOME="$tmp/cache"
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.invalid
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.invalid
# no dtypelint on PATH: the python hooks must bring their own
export PATH="$bin:/usr/bin:/bin"
unset DTYPELINT_BIN
if command -v dtypelint >/dev/null; then
	echo "SKIP: $(command -v dtypelint) is on PATH: the test could not tell whose program ran"
	exit 77
fi

# dtypelint-pre-commit at the version of the wheel
mkdir "$tmp/mirror"
cp "$root/contrib/pre-commit-mirror/pyproject.toml" "$root/contrib/pre-commit-mirror/README.md" \
	"$root/.pre-commit-hooks.yaml" "$tmp/mirror/" || exit 99
sed -i "s/^version = .*/version = \"$version\"/; s/\"dtypelint==[^\"]*\"/\"dtypelint==$version\"/" \
	"$tmp/mirror/pyproject.toml"
grep -q "\"dtypelint==$version\"" "$tmp/mirror/pyproject.toml" || { echo "FAIL: no pin to set"; exit 1; }
(cd "$tmp/mirror" && git init -q && git add . && git commit -qm mirror) || exit 99

# a project: a failing and a passing manifest, a YAML file that is no manifest
mkdir -p "$tmp/project/models" || exit 99
cp "$root/fixtures/rules/dt101-fires.yaml" "$tmp/project/models/failing.dtypelint.yaml"
cp "$root/fixtures/rules/dt101-silent.yaml" "$tmp/project/models/passing.dtypelint.yaml"
printf 'steps: [build, test]\n' >"$tmp/project/ci.yaml"
(cd "$tmp/project" && git init -q && git add . && git commit -qm project) || exit 99
# a project whose one manifest is named like an option
mkdir "$tmp/dash" && cp "$root/fixtures/rules/dt101-fires.yaml" "$tmp/dash/-o.dtypelint.yaml"
(cd "$tmp/dash" && git init -q && git add . && git commit -qm dash) || exit 99

fail=0
check() { # check EXPECT LABEL: the last run's status against EXPECT
	if { [ "$1" = pass ] && [ $status -ne 0 ]; } || { [ "$1" = fail ] && [ $status -eq 0 ]; }; then
		cat "$tmp/out"
		echo "FAIL: $2: expected to $1, exit $status"
		fail=1
	fi
}
try() { # try DIR EXPECT HOOK ARGS...: pre-commit try-repo (a fresh hook venv each time)
	dir=$1 expect=$2 hook=$3
	shift 3
	t0=$(date +%s)
	(cd "$dir" && "$bin/pre-commit" try-repo "$tmp/mirror" "$hook" "$@") >"$tmp/out" 2>&1
	status=$?
	echo "try-repo $hook $* in $(basename "$dir"): exit $status, $(($(date +%s) - t0)) s"
	check "$expect" "pre-commit try-repo $hook $* in $(basename "$dir")"
}
# the same hooks from a configuration naming the mirror at its commit: the venv is made once
rev=$(git -C "$tmp/mirror" rev-parse HEAD)
printf '%s\n' repos: "  - repo: $tmp/mirror" "    rev: $rev" '    hooks:' '      - id: dtypelint' \
	'      - id: dtypelint-setups' '      - id: dtypelint-system' \
	'      - id: dtypelint-setups-system' >"$tmp/config.yaml"
hook() { # hook DIR EXPECT HOOK ARGS...: pre-commit run
	dir=$1 expect=$2 hook=$3
	shift 3
	(cd "$dir" && "$bin/pre-commit" run -c "$tmp/config.yaml" "$hook" "$@") >"$tmp/out" 2>&1
	status=$?
	check "$expect" "pre-commit run $hook $* in $(basename "$dir")"
}
try "$tmp/project" pass dtypelint --files models/passing.dtypelint.yaml
try "$tmp/project" fail dtypelint --files models/failing.dtypelint.yaml
grep -q 'failing.dtypelint.yaml:6:22: error: .*\[DT101 fsdp1-mixed-dtype-unit\]' "$tmp/out" ||
	{ cat "$tmp/out"; echo "FAIL: the failing run does not show the DT101 finding"; fail=1; }
hook "$tmp/project" fail dtypelint --all-files
hook "$tmp/project" pass dtypelint --files ci.yaml
# the hook's venv holds the wheel's program
prog=$(ls "$PRE_COMMIT_HOME"/repo*/py_env-*/lib/python*/site-packages/dtypelint.scripts/dtypelint 2>/dev/null)
[ -n "$prog" ] || { echo "FAIL: the hook's venv has no program from the wheel"; fail=1; }
# -o.dtypelint.yaml is a manifest to lint (DT101), not `-o .dtypelint.yaml`
hook "$tmp/dash" fail dtypelint --all-files
grep -q -- '-o.dtypelint.yaml:6:22: error: .*\[DT101 ' "$tmp/out" ||
	{ cat "$tmp/out"; echo "FAIL: -o.dtypelint.yaml was not linted as a file"; fail=1; }
[ ! -e "$tmp/dash/.dtypelint.yaml" ] || { echo "FAIL: the hook wrote .dtypelint.yaml"; fail=1; }
# the system variants, with the program of the hook's venv on PATH
oldpath=$PATH
PATH="$(dirname "$(dirname "$(dirname "$(dirname "$(dirname "$prog")")")")")/bin:$PATH"
hook "$tmp/dash" fail dtypelint-system --all-files
grep -q -- '-o.dtypelint.yaml:6:22: error: .*\[DT101 ' "$tmp/out" ||
	{ cat "$tmp/out"; echo "FAIL: dtypelint-system: -o.dtypelint.yaml was not linted as a file"; fail=1; }
[ ! -e "$tmp/dash/.dtypelint.yaml" ] || { echo "FAIL: dtypelint-system wrote .dtypelint.yaml"; fail=1; }
hook "$tmp/project" pass dtypelint-system --files models/passing.dtypelint.yaml
hook "$tmp/project" fail dtypelint-system --files models/failing.dtypelint.yaml
PATH=$oldpath

# the set-ups hook on a repository as ML teams keep one: fails on the broken set-up, passes
# once the DeepSpeed JSON is fixed
mkdir -p "$tmp/repo" && cd "$tmp/repo" || exit 99
cp -r "$root/fixtures/import/tiny-qwen2" model
cp "$root/fixtures/import/ds_z3_bf16.json" ds_config.json
cp "$root/fixtures/import/adapter_config.json" adapter_config.json
printf '%s\n' 'setups:' '  - name: zero3-lora' '    model: model' '    deepspeed: ds_config.json' \
	'    peft: adapter_config.json' '    with: {deepspeed: "0.19.2"}' >.dtypelint.yaml
git init -q && git add . && git commit -qm repo || exit 99
hook "$tmp/repo" fail dtypelint-setups --files ds_config.json
grep -q 'ds_config.json:[0-9]*:[0-9]*: error: .*\[DT121 ' "$tmp/out" ||
	{ cat "$tmp/out"; echo "FAIL: the set-ups hook does not show DT121"; fail=1; }
sed -i 's/"stage3_param_persistence_threshold"/"stage3_allgather_sequential": true, "stage3_param_persistence_threshold"/' ds_config.json
git add ds_config.json
hook "$tmp/repo" pass dtypelint-setups --files ds_config.json
[ $fail = 0 ] && echo "ok: the language: python hooks from the wheel pass and fail as they should"
exit $fail
