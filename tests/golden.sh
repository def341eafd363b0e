#!/bin/sh
# Golden CLI test: runs dtypelint on one case from the source root and compares stdout,
# stderr and the exit status with the case file EXPECTED, byte for byte.
# Usage: golden.sh DTYPELINT SOURCE_ROOT EXPECTED [-- ARGS...]
# A case file names its own arguments in its header ("# args: ...", tests/golden-case.sh);
# ARGS are used only for a file without one: a malformed input's expected lines
# (tests/malformed), or a case file not written yet, a new rule fixture's
# (DTL_UPDATE_GOLDEN=1 then writes it with the header "# args: ARGS").
# A case whose header says "# exit: N" fails on any other status, regenerated or not;
# "# env: NAME=VALUE" sets a variable for dtypelint.
# DTL_UPDATE_GOLDEN=1 rewrites EXPECTED, header kept (review the diff before committing).
set -u
dtypelint=$1 root=$2 expected=$3
shift 3
# "--" says the arguments come from meson.build (a malformed input, a case not written yet)
from_meson=0
if [ $# -gt 0 ]; then
	shift
	from_meson=1
fi
# meson passes the binary relative to the build directory; we run from the source root
case "$dtypelint" in
/*) ;;
*) dtypelint="$(pwd)/$dtypelint" ;;
esac
if [ ! -x "$dtypelint" ]; then
	echo "golden.sh: $dtypelint is not an executable" >&2
	exit 99
fi
header=$(mktemp)
trap 'rm -f "$header"' EXIT
if [ -f "$expected" ] && head -n 1 "$expected" | grep -q '^# args:'; then
	# a malformed header fails the case (99: a broken test, not a wrong output)
	sh "$root/tests/golden-case.sh" check "$expected" || exit 99
	sed '/^--- stdout$/q' "$expected" >"$header"
	args=$(sed -n '1s/^# args: \{0,1\}//p' "$expected")
	# golden-case.sh checked that the words are plain or single-quoted: no expansion can run
	set -f
	eval "set -- $args"
	set +f
elif [ -f "$expected" ] && [ $from_meson = 0 ]; then
	echo "$expected:1: error: no \"# args:\" header (tests/golden-case.sh)" >&2
	exit 99
elif [ ! -f "$expected" ]; then
	[ $from_meson = 1 ] || { echo "golden.sh: $expected: no such case file" >&2; exit 99; }
	# a case not written yet (a new rule fixture): its header is its arguments
	printf '# args:' >"$header"
	for a in "$@"; do
		case "$a" in
		*[!A-Za-z0-9_./,=:@%+-]* | '') printf " '%s'" "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")" ;;
		*) printf ' %s' "$a" ;;
		esac >>"$header"
	done
	printf '\n--- stdout\n' >>"$header"
else
	: >"$header" # tests/malformed: the input is the argument, the file has no header
fi
declared=$(sed -n '/^--- stdout$/q; s/^# exit: //p' "$header")
# "# env: NAME=VALUE" lines (checked by golden-case.sh: a name, then plain characters)
for assignment in $(sed -n '/^--- stdout$/q; s/^# env: //p' "$header"); do
	export "$assignment"
done
actual=$(mktemp) out=$(mktemp) err=$(mktemp)
trap 'rm -f "$header" "$actual" "$out" "$err"' EXIT
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
{ cat "$header" "$out"; echo "--- stderr"; cat "$err"; echo "--- exit $status"; } >"$actual"
if [ -n "$declared" ] && [ "$status" != "$declared" ]; then
	diff -u "$expected" "$actual"
	echo "golden mismatch: $expected: exit $status, its case says \"# exit: $declared\"" >&2
	exit 1
fi
if [ "${DTL_UPDATE_GOLDEN:-}" = 1 ]; then
	cp "$actual" "$expected"
	exit 0
fi
if ! diff -u "$expected" "$actual"; then
	echo "golden mismatch: $expected" >&2
	exit 1
fi
