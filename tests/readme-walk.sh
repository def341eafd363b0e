#!/bin/sh
# README's "Use in a repository" walk, run as written: the block between <!-- walk:begin -->
# and <!-- walk:end --> in README.md, in a scratch directory, with the built dtypelint on PATH
# and the real pre-commit. It must show DT121 at the DeepSpeed JSON, fail the first hook run,
# write the fix, pass the second hook run and leave a SARIF file. Skips (77) without
# pre-commit or git, outside a git checkout (a release tarball), or when the hooks file has
# changes not committed yet (pre-commit reads the commit).
# Usage: readme-walk.sh DTYPELINT SOURCE_ROOT
set -u
dtypelint=$1 root=$2
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
case "$root" in /*) ;; *) root="$(pwd)/$root" ;; esac
for tool in pre-commit git; do
	command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
# the root itself must be the checkout: a tarball unpacked inside another git repository (as
# meson dist unpacks it in the build folder) is none
{ [ -e "$root/.git" ] && git -C "$root" rev-parse HEAD >/dev/null 2>&1; } ||
	{ echo "SKIP: $root is no git checkout"; exit 77; }
if ! git -C "$root" diff --quiet HEAD -- .pre-commit-hooks.yaml; then
	echo "SKIP: .pre-commit-hooks.yaml has changes not committed"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PRE_COMMIT_HOME="$tmp/cache" HOME="$tmp" XDG_CACHE_HOME="$tmp/cache"
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.invalid
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.invalid
export DTYPELINT_SRC="$root"
mkdir "$tmp/bin" && ln -s "$dtypelint" "$tmp/bin/dtypelint"
export PATH="$tmp/bin:$PATH"
# the lines strictly between the ```sh and ``` of the walk block
sed -n '/<!-- walk:begin -->/,/<!-- walk:end -->/p' "$root/README.md" |
	sed -e '1,2d' -e '$d' | sed '$d' > "$tmp/walk.sh"
[ -s "$tmp/walk.sh" ] || { echo "README.md has no walk block"; exit 1; }
cd "$tmp" || exit 99
sh -x "$tmp/walk.sh" > "$tmp/out" 2>&1
status=$?
fail=0
check() { grep -q -- "$2" "$tmp/out" || { echo "FAIL $1: no '$2' in the transcript"; fail=1; }; }
check lint 'ds_config.json:6:43: error: .*\[DT121'
check hook-fails 'dtypelint set-ups.*Failed'
check fix-written 'applied to ds_config.json'
check fix-proven 'DT121 zero3-mixed-dtype-persistent-gather is gone'
check hook-passes 'dtypelint set-ups.*Passed'
grep -q '"stage3_allgather_sequential": true' "$tmp/demo/ds_config.json" ||
	{ echo "FAIL: the fix is not in ds_config.json"; fail=1; }
grep -q '"executionSuccessful": true' "$tmp/demo/dtypelint.sarif" ||
	{ echo "FAIL: no SARIF report"; fail=1; }
[ $status = 0 ] || { echo "FAIL: the walk's last command exited $status"; fail=1; }
[ $fail = 0 ] || cat "$tmp/out"
[ $fail = 0 ] && echo "README walk: lint, hook fails, fix written and proven, hook passes, SARIF"
exit $fail
