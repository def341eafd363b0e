#!/bin/sh
# SPDX-License-Identifier: MIT
# HACKING.md "Add an importer key", followed in a scratch copy of the source (issue 37 item 2):
# the row of its first code block goes into include/dtypelint/model/plan-keys.h and the statement of
# its second into import-deepspeed.c, and nothing else changes; the copy is built (no tests, no
# kernel scanner), and then a --plan file and a DeepSpeed config both set the key, --export
# writes it back, the built schema has it, and the man page check and the --export check name
# it as missing (HACKING's step 3). A few minutes on 2 cores: the whole program is built again.
# Usage: add-key.sh SOURCE_ROOT
walk=add-key
. "$(dirname "$0")/scratch.sh"
mkdir "$tmp/orig"
table=include/dtypelint/model/plan-keys.h
importer=src/model/import-deepspeed.c
cp "$tmp/src/$table" "$tmp/src/$importer" "$tmp/orig/"

# HACKING.md's code blocks of the section, the first (the row) and the second (the statement)
block() {
	awk -v want="$1" '/^## Add an importer key/ { on = 1; next } on && /^## / { exit }
		on && /^   ```/ { if (inside) { inside = 0; n++ } else inside = 1; next }
		on && inside && n + 1 == want { sub(/^   /, ""); print }' "$root/HACKING.md"
}
block 1 >"$tmp/row"
block 2 >"$tmp/statement"
grep -q '^DTL_PLAN_KEY(ROOT, COMMUNICATION_DATA_TYPE, "communication_data_type"' "$tmp/row" ||
	{ bad "no row in HACKING.md"; exit 1; }
grep -q 'dtl_plan_key_read(s, root, "communication_data_type"' "$tmp/statement" ||
	{ bad "no importer statement in HACKING.md"; exit 1; }
# step 1: the row after the last row of the table (ROOT's last: the table ends with it)
awk -v row="$tmp/row" '/^\/\* clang-format on \*\// { while ((getline l < row) > 0) print l }
	{ print }' "$tmp/orig/plan-keys.h" >"$tmp/src/$table"
# step 2: the statement in dtl_import_deepspeed(), after zero_optimization is read
awk -v st="$tmp/statement" '{ print } /^\tif \(\(v = dtl_node_get\(root, "zero_optimization"\)\)/ { z = 1; next }
	z && /^\t\tgoto out;$/ { while ((getline l < st) > 0) print l; z = 0 }' \
	"$tmp/orig/import-deepspeed.c" >"$tmp/src/$importer"
changed=$(diff -r -q "$root" "$tmp/src" 2>/dev/null | grep -v '^Only in' | wc -l)
[ "$changed" = 2 ] || bad "the walk-through changed $changed files, not plan-keys.h and import-deepspeed.c"
[ "$(diff "$tmp/orig/plan-keys.h" "$tmp/src/$table" | grep -c '^>')" = "$(wc -l <"$tmp/row")" ] ||
	bad "plan-keys.h: not one row added"
[ "$(diff "$tmp/orig/import-deepspeed.c" "$tmp/src/$importer" | grep -c '^>')" = "$(wc -l <"$tmp/statement")" ] ||
	bad "import-deepspeed.c: not one statement added"

# step 3: build
scratch_build
dtl=$tmp/build/dtypelint
manifest=$root/fixtures/clean/llama-bf16-ddp.yaml
printf 'strategy: ddp\ncommunication_data_type: fp32\n' >"$tmp/plan.yaml"
"$dtl" "$manifest" --plan "$tmp/plan.yaml" --export "$tmp/out.yaml" >"$tmp/run.log" 2>&1
[ $? -le 1 ] || { cat "$tmp/run.log"; bad "a --plan file with the key is refused"; }
grep -q '^  communication_data_type: "float32"$' "$tmp/out.yaml" 2>/dev/null ||
	bad "--export does not write the key of a --plan file"
printf '{"zero_optimization": {"stage": 3}, "communication_data_type": "bf16"}\n' >"$tmp/ds.json"
"$dtl" "$manifest" --deepspeed "$tmp/ds.json" --export "$tmp/ds-out.json" >"$tmp/run.log" 2>&1
[ $? -le 1 ] || { cat "$tmp/run.log"; bad "a DeepSpeed config with the key is refused"; }
grep -q '"communication_data_type": "bfloat16"' "$tmp/ds-out.json" 2>/dev/null ||
	bad "--export does not write the key the DeepSpeed importer read"
printf '{"communication_data_type": "fp42"}\n' >"$tmp/bad.json"
"$dtl" "$manifest" --deepspeed "$tmp/bad.json" >"$tmp/bad.log" 2>&1
[ $? = 2 ] && grep -q "bad.json:1:29: error: .*communication_data_type" "$tmp/bad.log" ||
	{ cat "$tmp/bad.log"; bad "a bad value is not file:line:col: error: naming the key"; }
grep -q '"communication_data_type"' "$tmp/build/schemas/plan.schema.json" ||
	bad "the built schema does not have the key"
# the checks of step 3 name the key, and nothing else
python3 "$root/tests/docs/manifest-keys.py" "$tmp/build/schemas/dtl-gen-plan-schema" "$tmp/src" \
	>"$tmp/man.log" 2>&1 && bad "docs-manifest-keys passed without the key in the man page"
[ "$(grep -c '^FAIL: ' "$tmp/man.log")" = 1 ] &&
	grep -q "'communication_data_type' is in include/dtypelint/model/plan-keys.h but not" "$tmp/man.log" ||
	{ cat "$tmp/man.log"; bad "docs-manifest-keys does not name the key alone"; }
python3 "$root/tests/plan-keys-export.py" "$dtl" "$tmp/build/schemas/dtl-gen-plan-schema" \
	"$tmp/src" >"$tmp/export.log" 2>&1 && bad "plan-keys-export passed without the key in every-key.yaml"
grep -q "'communication_data_type' is in include/dtypelint/model/plan-keys.h but not in --export" \
	"$tmp/export.log" || { cat "$tmp/export.log"; bad "plan-keys-export does not name the key"; }
[ $fail = 0 ] && echo "ok: one row and its importer statement give the plan, --export and the schema the key"
exit $fail
