#!/bin/sh
# SPDX-License-Identifier: MIT
# HACKING.md "Add an option", followed in a scratch copy of the source (issue 37 item 2): the
# row of its code block goes into src/cli/option-table.h and a handler into options.c, and
# nothing else changes; the copy is built (no tests, no kernel scanner), and then --help, the
# three built completions (tests/install/completions.py drives the shells) and the man page
# check (which must name the option as missing from the man page's OPTIONS) all know it, and
# the option works. A few minutes on 2 cores: the whole program is built again.
# Usage: add-option.sh SOURCE_ROOT
walk=add-option
. "$(dirname "$0")/scratch.sh"
mkdir "$tmp/orig"
cp "$tmp/src/src/cli/option-table.h" "$tmp/src/src/cli/options.c" "$tmp/orig/"

# step 1: the row of HACKING.md's example, before the Rules group
awk '/^## Add an option/ { on = 1 } on && /^   ```c/ { take = 1; next }
	take && /^   ```/ { exit } take { sub(/^   /, ""); print }' "$root/HACKING.md" >"$tmp/row"
grep -q '^DTL_OPTION(NO_COLOR, "no-color"' "$tmp/row" || { bad "no row in HACKING.md"; exit 1; }
awk -v row="$tmp/row" '/^DTL_OPTION_GROUP\(RULES/ { while ((getline l < row) > 0) print l; print "" }
	{ print }' "$tmp/orig/option-table.h" >"$tmp/src/src/cli/option-table.h"
# step 2: its handler, in the Output group's parser
awk '/^\tcase OPT_STATISTICS:/ { print "\tcase OPT_NO_COLOR:"; print "\t\to->color = DTL_COLOR_NEVER;"
	print "\t\treturn OPTION_TAKEN;" } { print }' "$tmp/orig/options.c" >"$tmp/src/src/cli/options.c"
changed=$(diff -r -q "$root/src" "$tmp/src/src" | grep -v '^Only in' | wc -l)
[ "$changed" = 2 ] || bad "the walk-through changed $changed files, not option-table.h and options.c"
[ "$(diff "$tmp/orig/option-table.h" "$tmp/src/src/cli/option-table.h" | grep -c '^>')" = 3 ] ||
	bad "option-table.h: not one row (and a blank line) added"

# step 3: build
scratch_build
dtl=$tmp/build/dtypelint
"$dtl" --help | grep -q '^  --no-color            the same as --color never$' ||
	bad "--help does not list --no-color"
out=$("$dtl" --no-color --color always "$root/fixtures/rules/dt102-orig-params.yaml" 2>&1)
printf '%s' "$out" | grep -q "$(printf '\033')" || bad "--color after --no-color did not win"
out=$("$dtl" --color always --no-color "$root/fixtures/rules/dt102-orig-params.yaml" 2>&1)
[ $? = 1 ] || bad "--no-color: not the findings' exit status 1"
printf '%s' "$out" | grep -q "$(printf '\033')" && bad "--no-color still colors"
for f in dtypelint _dtypelint dtypelint.fish; do
	grep -q 'no-color' "$tmp/build/completions/$f" || bad "completions/$f does not know --no-color"
done
python3 "$root/tests/install/completions.py" "$dtl" "$tmp/build/completions" >"$tmp/compl.log" 2>&1 ||
	{ cat "$tmp/compl.log"; bad "the built completions disagree with --help"; }
# step 4 is the man page: its check must name the new option, and nothing else
python3 "$root/tests/golden-cli/man-options.py" "$dtl" "$tmp/src" >"$tmp/man.log" 2>&1 &&
	bad "cli-man-options passed without --no-color in the man page"
grep -q -- "--no-color is in --help but not in the man page's OPTIONS" "$tmp/man.log" ||
	{ cat "$tmp/man.log"; bad "cli-man-options does not name --no-color"; }
[ "$(grep -vc '^man page: ' "$tmp/man.log")" = 1 ] || { cat "$tmp/man.log"; bad "more than --no-color"; }
[ $fail = 0 ] && echo "ok: one row and its handler give --help, the completions and the man check"
exit $fail
