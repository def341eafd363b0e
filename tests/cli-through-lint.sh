#!/bin/sh
# SPDX-License-Identifier: MIT
# The command line reaches the simulation and the rules only through the lint library
# (include/dtypelint/lint/lint.h, issue 37): no object of src/cli/ may refer to a symbol that
# libdtl-sim.a or libdtl-rules.a defines. (Their headers' types stay visible to it: the
# reporters' inputs are the rules layer's findings.)
#   cli-through-lint.sh NM CLI_OBJECT_DIR LIB...
set -u
nm=$1 objdir=$2
shift 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dtl-cli-lint.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
# the folder must hold the cli's objects, main's among them: a rename fails, never passes
ls "$objdir"/*src_cli_main.c.o >/dev/null 2>&1 || { echo "no src/cli objects in $objdir"; exit 2; }
for lib in "$@"; do
	"$nm" -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }'
done | sort -u >"$tmp/defined"
[ -s "$tmp/defined" ] || { echo "no symbols defined in $*"; exit 2; }
fail=0
for obj in "$objdir"/*src_cli_*.o; do
	"$nm" -u "$obj" | awk '{ print $NF }' | sort -u >"$tmp/used"
	calls=$(comm -12 "$tmp/defined" "$tmp/used")
	if [ -n "$calls" ]; then
		echo "FAIL: $(basename "$obj") calls into the simulation or the rules: $calls"
		fail=1
	fi
done
[ "$fail" = 0 ] && echo "ok: src/cli calls the simulation and the rules only through src/lint"
exit "$fail"
