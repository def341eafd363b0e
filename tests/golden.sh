#!/bin/sh
# Golden CLI test: runs dtypelint on one input from the source root and compares stdout,
# stderr and the exit status with EXPECTED, byte for byte.
# Usage: golden.sh DTYPELINT SOURCE_ROOT EXPECTED -- ARGS...
# DTL_UPDATE_GOLDEN=1 rewrites EXPECTED instead (review the diff before committing).
set -u
dtypelint=$1 root=$2 expected=$3
shift 4
# meson passes the binary relative to the build directory; we run from the source root
case "$dtypelint" in
/*) ;;
*) dtypelint="$(pwd)/$dtypelint" ;;
esac
if [ ! -x "$dtypelint" ]; then
	echo "golden.sh: $dtypelint is not an executable" >&2
	exit 99
fi
actual=$(mktemp) out=$(mktemp) err=$(mktemp)
trap 'rm -f "$actual" "$out" "$err"' EXIT
cd "$root" || exit 99
# CI paths (SARIF, GitHub and GitLab formats) are relative to the repository root: make it
# the source root, whatever CI runs the tests and wherever the tree sits (a tarball unpacked
# inside another checkout, a runner that sets GITHUB_WORKSPACE)
GITHUB_WORKSPACE=$root CI_PROJECT_DIR=$root
export GITHUB_WORKSPACE CI_PROJECT_DIR
# the newest known versions (what a plan that names none is linted at) are pinned to a frozen
# snapshot, so that a release added to rules/versions.yaml leaves the goldens alone; a case whose
# name holds "newest" is about them and sees the real table (HACKING.md, "Goldens and the newest
# known versions")
case "${expected##*/}" in
*newest*) unset DTYPELINT_NEWEST_KNOWN ;;
*)
	DTYPELINT_NEWEST_KNOWN=$root/tests/golden/newest.yaml
	export DTYPELINT_NEWEST_KNOWN
	;;
esac
# under `meson test --setup valgrind` (DTL_VALGRIND=1) dtypelint itself runs in valgrind:
# an error or leak changes the exit status to 99 and fails the comparison
if [ "${DTL_VALGRIND:-}" = 1 ]; then
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=all \
		--suppressions="$root/tests/valgrind.supp" \
		"$dtypelint" "$@" >"$out" 2>"$err"
else
	"$dtypelint" "$@" >"$out" 2>"$err"
fi
status=$?
{ cat "$out"; echo "--- stderr"; cat "$err"; echo "--- exit $status"; } >"$actual"
if [ "${DTL_UPDATE_GOLDEN:-}" = 1 ]; then
	cp "$actual" "$expected"
	exit 0
fi
if ! diff -u "$expected" "$actual"; then
	echo "golden mismatch: $expected" >&2
	exit 1
fi
