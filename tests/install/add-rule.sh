#!/bin/sh
# SPDX-License-Identifier: MIT
# HACKING.md "Add a rule", followed in a scratch copy of the source (issue 37): tools/new-rule.sh
# writes the rule file and its fixture pair, the check and the silent fixture are filled in,
# and nothing else is edited by hand. The copy is built (no tests, no kernel scanner); then the
# rule is in --list-rules and --explain, fires on its fixture and stays silent on its twin, and
# the generated documents (docs/rules/, README's rule index, the man page's RULES section) are
# found stale by their checks, naming the rule, and rewritten by them. A few minutes on 2
# cores: the whole program is built again.
# Usage: add-rule.sh SOURCE_ROOT
walk=add-rule
. "$(dirname "$0")/scratch.sh"
src=$tmp/src

# the command of HACKING.md's code block, with this test's id and name
grep -q '^tools/new-rule.sh DT125 zero3-example warning$' "$root/HACKING.md" ||
	bad "HACKING.md's Add a rule no longer shows the tools/new-rule.sh command this test runs"
(cd "$src" && DTL_ROOT="$src" sh tools/new-rule.sh DT999 norm-bf16-example warning) \
	>"$tmp/new-rule.log" 2>&1 || { cat "$tmp/new-rule.log"; bad "tools/new-rule.sh failed"; exit 1; }
rule=$src/src/rules/dt999-norm-bf16-example.c
[ -f "$rule" ] || { bad "no $rule"; exit 1; }

# step 1: the check, in place of the skeleton's empty body
awk '/^static int dt999_check\(struct dtl_check \*c\)$/ { print; skip = 1; next }
	skip && /^}$/ { skip = 0
		print "{"
		print "\tconst struct dtl_sim *sim = c->sim;"
		print ""
		print "\tfor (uint32_t t = 0; t < sim->t.count; t++) {"
		print "\t\tsize_t n = sim->t.name_len[t];"
		print "\t\tif (sim->t.dtype[t] != DTL_DTYPE_BF16 || n < 11 ||"
		print "\t\t    strcmp(sim->t.name[t] + n - 11, \"norm.weight\") != 0 ||"
		print "\t\t    sim->t.decl[t] == DTL_NONE_INDEX)"
		print "\t\t\tcontinue;"
		print "\t\tstruct dtl_finding *f ="
		print "\t\t    dtl_check_report(c, c->rule->severity, sim->manifest->tensors[sim->t.decl[t]].loc,"
		print "\t\t                     \"norm weight '\''%s'\'' is bfloat16\", sim->t.name[t]);"
		print "\t\tif (!f || dtl_check_add_tensor(c, f, t, NULL) < 0)"
		print "\t\t\treturn -ENOMEM;"
		print "\t}"
		print "\treturn 0;"
		print "}"
		next }
	skip { next }
	{ print }' "$rule" >"$tmp/rule.c" && mv "$tmp/rule.c" "$rule"
sed -i 's/^#include <errno.h>$/#include <errno.h>\n#include <string.h>/' "$rule"
# step 2: the silent fixture is the fixed set-up
sed -i 's/dtype: bfloat16}/dtype: float32}/' "$src/fixtures/rules/dt999-silent.yaml"

# nothing but the three new files
changed=$(diff -r -q "$root" "$src" -x 'build*' -x .git -x '*.pyc' -x subprojects | grep -v '^Only in' | wc -l)
[ "$changed" = 0 ] || bad "the walk-through edited $changed existing files"
added=$(diff -r -q "$root" "$src" -x 'build*' -x .git -x '*.pyc' -x subprojects | grep -c '^Only in')
[ "$added" = 3 ] || bad "the walk-through added $added files, not the rule and its two fixtures"

# build
scratch_build
dtl=$tmp/build/dtypelint
"$dtl" --list-rules | grep -q '^DT999 ' || bad "--list-rules does not list DT999"
"$dtl" --explain DT999 >"$tmp/explain" 2>&1 || bad "--explain DT999 failed"
grep -q 'norm-bf16-example' "$tmp/explain" || bad "--explain DT999 does not name the rule"
"$dtl" "$src/fixtures/rules/dt999-fires.yaml" >"$tmp/fires" 2>&1
st=$?
[ $st = 1 ] || bad "the fires fixture exited $st, not 1"
grep -q "norm weight 'model.norm.weight' is bfloat16 .*\[DT999 norm-bf16-example\]" "$tmp/fires" ||
	{ cat "$tmp/fires"; bad "the fires fixture does not report DT999"; }
"$dtl" "$src/fixtures/rules/dt999-silent.yaml" >"$tmp/silent" 2>&1 ||
	{ cat "$tmp/silent"; bad "the silent fixture is not clean"; }

# step 3, the generated documents: each check names the new rule, then rewrites from the table
if python3 "$root/tests/docs/rule_pages.py" "$dtl" "$src" >"$tmp/pages.log" 2>&1; then
	bad "docs-rule-pages passed without a page for DT999"
fi
grep -q 'DT999' "$tmp/pages.log" || { cat "$tmp/pages.log"; bad "docs-rule-pages does not name DT999"; }
DTL_UPDATE_GOLDEN=1 python3 "$root/tests/docs/rule_pages.py" "$dtl" "$src" >/dev/null 2>&1
[ -f "$src/docs/rules/DT999.md" ] || bad "DTL_UPDATE_GOLDEN=1 wrote no docs/rules/DT999.md"
python3 "$root/tests/docs/rule_pages.py" "$dtl" "$src" >"$tmp/pages.log" 2>&1 ||
	{ cat "$tmp/pages.log"; bad "docs-rule-pages still fails after the update"; }
if python3 "$root/tests/golden-cli/man-options.py" "$dtl" "$src" >"$tmp/man.log" 2>&1; then
	bad "cli-man-options passed without DT999 in the man page"
fi
grep -q 'DT999' "$tmp/man.log" || { cat "$tmp/man.log"; bad "cli-man-options does not name DT999"; }
DTL_UPDATE_MAN=1 python3 "$root/tests/golden-cli/man-options.py" "$dtl" "$src" >/dev/null 2>&1
python3 "$root/tests/golden-cli/man-options.py" "$dtl" "$src" >"$tmp/man.log" 2>&1 ||
	{ cat "$tmp/man.log"; bad "cli-man-options still fails after DTL_UPDATE_MAN=1"; }
grep -q 'DT999' "$src/man/dtypelint.1" || bad "the man page has no DT999 after the update"
grep -q 'DT999' "$src/README.md" || bad "README's rule index has no DT999 after the update"
[ $fail = 0 ] && echo "ok: new-rule.sh, a check and a fixture give a rule every document knows"
exit $fail
