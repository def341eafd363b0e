#!/bin/sh
# The pre-commit hook (.pre-commit-hooks.yaml) run by `pre-commit try-repo` on a scratch git
# repository: it must fail on a failing manifest, pass on a passing one and leave files that
# are not manifests alone. Skips (77) when pre-commit or git is not installed.
# Usage: pre-commit.sh DTYPELINT SOURCE_ROOT
set -u
dtypelint=$1 root=$2
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
for tool in pre-commit git; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "SKIP: $tool is not installed (Debian: apt-get install pre-commit)"
		exit 77
	fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PRE_COMMIT_HOME="$tmp/cache" HOME="$tmp" XDG_CACHE_HOME="$tmp/cache"
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.invalid
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.invalid
# the hooks' `system` variants: their entry is `dtypelint` on PATH
bindir="$tmp/bin"
mkdir -p "$bindir"
ln -s "$dtypelint" "$bindir/dtypelint"
export PATH="$bindir:$PATH"

# the hook repository: this project's .pre-commit-hooks.yaml, committed
mkdir "$tmp/hooks" && cp "$root/.pre-commit-hooks.yaml" "$tmp/hooks/" || exit 99
(cd "$tmp/hooks" && git init -q && git add .pre-commit-hooks.yaml && git commit -qm hooks) || exit 99

# a project with a failing and a passing manifest, and a YAML file that is no manifest
mkdir -p "$tmp/project/models" || exit 99
cp "$root/fixtures/rules/dt101-fires.yaml" "$tmp/project/models/failing.dtypelint.yaml"
cp "$root/fixtures/rules/dt101-silent.yaml" "$tmp/project/models/passing.dtypelint.yaml"
printf 'steps: [build, test]\n' >"$tmp/project/ci.yaml"
(cd "$tmp/project" && git init -q && git add . && git commit -qm project) || exit 99
cd "$tmp/project" || exit 99

fail=0
run() {
	expect=$1
	shift
	pre-commit try-repo "$tmp/hooks" dtypelint-system "$@" >"$tmp/out" 2>&1
	status=$?
	if { [ "$expect" = pass ] && [ $status -ne 0 ]; } ||
		{ [ "$expect" = fail ] && [ $status -eq 0 ]; }; then
		cat "$tmp/out"
		echo "pre-commit try-repo $*: expected to $expect, exit $status"
		fail=1
	fi
}
run pass --files models/passing.dtypelint.yaml
run fail --files models/failing.dtypelint.yaml
grep -q 'failing.dtypelint.yaml:6:22: error: .*\[DT101 fsdp1-mixed-dtype-unit\]' "$tmp/out" ||
	{ cat "$tmp/out"; echo "the failing run does not show the DT101 finding"; fail=1; }
run fail --all-files
# ci.yaml is no manifest: the hook's files: pattern must skip it
run pass --files ci.yaml
# the set-ups hook: a repository as ML teams keep one (an HF model folder, a DeepSpeed JSON,
# a PEFT config) with its set-ups in .dtypelint.yaml; it fails on the broken set-up and passes
# once the DeepSpeed JSON is fixed
mkdir -p "$tmp/repo" && cd "$tmp/repo" || exit 99
cp -r "$root/fixtures/import/tiny-qwen2" model
cp "$root/fixtures/import/ds_z3_bf16.json" ds_config.json
cp "$root/fixtures/import/adapter_config.json" adapter_config.json
cat > .dtypelint.yaml <<'YAML'
setups:
  - name: zero3-lora
    model: model
    deepspeed: ds_config.json
    peft: adapter_config.json
    with: {deepspeed: "0.19.2"}
YAML
git init -q && git add . && git commit -qm repo || exit 99
setups() {
	expect=$1
	shift
	pre-commit try-repo "$tmp/hooks" dtypelint-setups-system "$@" >"$tmp/out" 2>&1
	status=$?
	if { [ "$expect" = pass ] && [ $status -ne 0 ]; } ||
		{ [ "$expect" = fail ] && [ $status -eq 0 ]; }; then
		cat "$tmp/out"
		echo "pre-commit try-repo dtypelint-setups $*: expected to $expect, exit $status"
		fail=1
	fi
}
setups fail --files ds_config.json
grep -q 'ds_config.json:[0-9]*:[0-9]*: error: .*\[DT121 zero3-mixed-dtype-persistent-gather\]' "$tmp/out" ||
	{ cat "$tmp/out"; echo "the set-ups hook does not show DT121 at the DeepSpeed JSON"; fail=1; }
# the fix dtypelint proposes: gather the persistent parameters one dtype at a time
sed -i 's/"stage3_param_persistence_threshold"/"stage3_allgather_sequential": true, "stage3_param_persistence_threshold"/' ds_config.json
git add ds_config.json
setups pass --files ds_config.json
# a change to a file no set-up reads (a .txt) does not run the hook at all
printf 'notes\n' > notes.txt && git add notes.txt
setups pass --files notes.txt
[ $fail = 0 ] && echo "pre-commit hooks: the manifest hook and the set-ups hook fail and pass as they should"
exit $fail
