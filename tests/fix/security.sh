#!/bin/sh
# --fix-plan --write touches only the input's own files, through the safe writer: a setting
# that comes from a file not named on the command line is refused; a symlinked file keeps its
# link and has its target written; a hard-linked file is refused; the mode is kept; no
# temporary file is left behind; several inputs each get their own file edited.
# Usage: security.sh DTYPELINT SOURCE_DIR (this folder)
set -u
dtypelint=$1 src=$2
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
case "$src" in /*) ;; *) src="$(pwd)/$src" ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
leftovers() { find "$tmp" -name '*.dtypelint-*' | grep -q .; }

# 1. an accelerate config naming a DeepSpeed file: the setting lives in that file, which is not
#    one of the files given, so it is not edited (the next fix, a version, goes to the manifest)
mkdir "$tmp/1" && cd "$tmp/1" || exit 2
cp "$src/model-zero3-ds.yaml" m.yaml
cp "$src/ds-insert.json" ds.json
cp ds.json ds.orig
printf 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n  zero3_init_flag: true\nnum_processes: 8\n' >acc.yaml
"$dtypelint" m.yaml --accelerate acc.yaml --fix-plan --write >w.out 2>w.err
status=$?
if cmp -s ds.json ds.orig && grep -q "ds.json, which is none of the files named" w.err &&
	grep -qF -- '--- a/m.yaml' w.out && [ $status -eq 0 ]; then
	ok "not-named-file"
else
	bad "not-named-file (exit $status)"; cat w.out w.err
fi

# 2. a symlinked plan file: the link stays a link, its target is edited, its mode kept
mkdir -p "$tmp/2/real" && cd "$tmp/2" || exit 2
cp "$src/model-zero3.yaml" m.yaml
cp "$src/plan-zero3.yaml" real/plan.yaml
chmod 640 real/plan.yaml
ln -s real/plan.yaml plan.yaml
"$dtypelint" m.yaml --plan plan.yaml --fix-plan --write >w.out 2>w.err
status=$?
if [ $status -eq 0 ] && [ -L plan.yaml ] && grep -q 'allgather_sequential: true' real/plan.yaml &&
	[ "$(stat -c %a real/plan.yaml)" = 640 ] && cmp -s m.yaml "$src/model-zero3.yaml" && ! leftovers; then
	ok "symlink-and-mode"
else
	bad "symlink-and-mode (exit $status)"; cat w.err; ls -l . real
fi

# 3. a hard-linked plan file: refused (a rename would split it from its other name), untouched
mkdir "$tmp/3" && cd "$tmp/3" || exit 2
cp "$src/model-zero3.yaml" m.yaml
cp "$src/plan-zero3.yaml" plan.yaml
ln plan.yaml other-name.yaml
"$dtypelint" m.yaml --plan plan.yaml --fix-plan --write >w.out 2>w.err
status=$?
if [ $status -eq 2 ] && cmp -s plan.yaml "$src/plan-zero3.yaml" && grep -q "hard links" w.err && ! leftovers; then
	ok "hard-link-refused"
else
	bad "hard-link-refused (exit $status)"; cat w.err
fi

# 4. two inputs with the same --plan: each input's own manifest is edited (DT202 pins its
#    router in its manifest), the shared plan only when the setting lives there
mkdir "$tmp/4" && cd "$tmp/4" || exit 2
for n in a b; do
	cp "$src/../../fixtures/rules/dt202-load.yaml" "$n.yaml"
done
"$dtypelint" a.yaml b.yaml --fix-plan --write >w.out 2>w.err
status=$?
if [ $status -eq 0 ] && grep -qF -- '--- a/a.yaml' w.out && grep -qF -- '--- a/b.yaml' w.out &&
	grep -q 'keep_in_fp32_strict: \[gate\]' a.yaml && grep -q 'keep_in_fp32_strict: \[gate\]' b.yaml; then
	ok "several-inputs"
else
	bad "several-inputs (exit $status)"; cat w.out w.err
fi

# 5. a file changed between reading and writing is not overwritten: simulated by a plan that
#    is not a regular file (a FIFO would be read twice): refused before anything is read twice
mkdir "$tmp/5" && cd "$tmp/5" || exit 2
cp "$src/model-zero3.yaml" m.yaml
cp "$src/plan-zero3.yaml" plan.yaml
# the writer is bounded in time and holds none of the test's output: a writer that never meets
# a reader would keep meson waiting for the test's end
mkfifo fifo.yaml 2>/dev/null && (timeout 10 sh -c 'cat plan.yaml >fifo.yaml' >/dev/null 2>&1 &) &&
	timeout 10 "$dtypelint" m.yaml --plan fifo.yaml --fix-plan --write >w.out 2>w.err
status=$?
# which refusal comes first depends on the writer: a FIFO read before cat has written is an
# empty plan (an input error); read after, the edit is refused. Either way exit 2, and the
# FIFO is never replaced by a file.
if [ $status -eq 2 ] && [ -p fifo.yaml ] &&
	grep -q "not a regular file\|the file is empty" w.err; then
	ok "fifo-refused"
else
	bad "fifo-refused (exit $status)"; cat w.err
fi

# 6. a setting written through a YAML anchor or alias is not edited (that would change the
#    anchor, and every key aliasing it): the next fix is taken, the anchored lines stay
mkdir "$tmp/6" && cd "$tmp/6" || exit 2
cp "$src/model-zero3.yaml" m.yaml
printf 'x-defaults: &thr 100000\nstrategy: zero3\nprecision: bf16\nworld_size: 8\nversions: {deepspeed: "0.19.2"}\nzero3:\n  init: true\n  persistence_threshold: *thr\n  allgather_sequential: &no false\n' >p.yaml
cp p.yaml p.orig
"$dtypelint" m.yaml --plan p.yaml --fix-plan --write >w.out 2>w.err
status=$?
if [ $status -eq 0 ] && grep -q "anchor, alias or tag: edit it by hand" w.err &&
	grep -q '^+versions: {deepspeed: "0.19.3"}$' w.out &&
	[ "$(diff p.orig p.yaml | grep -c '^[<>]')" = 2 ]; then
	ok "yaml-alias-untouched"
else
	bad "yaml-alias-untouched (exit $status)"; cat w.out w.err
fi

# 6b. a tagged mapping (!!map) is left alone too: the fix goes elsewhere
mkdir "$tmp/6b" && cd "$tmp/6b" || exit 2
cp "$src/model-zero3.yaml" m.yaml
printf 'strategy: zero3\nprecision: bf16\nworld_size: 8\nversions: {deepspeed: "0.19.2"}\nzero3: !!map {init: true}\n' >p.yaml
"$dtypelint" m.yaml --plan p.yaml --fix-plan --write >w.out 2>w.err
status=$?
if [ $status -eq 0 ] && grep -q "anchor, alias or tag" w.err && grep -q '^ zero3: !!map {init: true}$' w.out; then
	ok "yaml-tag-untouched"
else
	bad "yaml-tag-untouched (exit $status)"; cat w.out w.err
fi

# 7. CRLF line endings stay CRLF in the inserted line
mkdir "$tmp/7" && cd "$tmp/7" || exit 2
cp "$src/model-zero3.yaml" m.yaml
printf 'strategy: zero3\r\nprecision: bf16\r\nworld_size: 8\r\nversions: {deepspeed: "0.19.2"}\r\nzero3:\r\n  init: true\r\n' >c.yaml
"$dtypelint" m.yaml --plan c.yaml --fix-plan --write >w.out 2>w.err
status=$?
if [ $status -eq 0 ] && [ "$(grep -c "$(printf '\r$')" c.yaml)" = 7 ] && [ "$(wc -l <c.yaml)" = 7 ]; then
	ok "crlf-kept"
else
	bad "crlf-kept (exit $status)"; od -c c.yaml | head; cat w.err
fi

# 8. file names with a space, a newline and a quote: the diff header names them as git does
#    (a tab after a name with a space; C-quoted otherwise), and both tools find the file
mkdir "$tmp/8" && cd "$tmp/8" || exit 2
cp "$src/model-zero3.yaml" m.yaml
for name in "my plan.yaml" "$(printf 'odd\nname"q.yaml')"; do
	cp "$src/plan-zero3.yaml" "$name"
	"$dtypelint" m.yaml --plan "$name" --fix-plan --diff >d.diff 2>d.err
	if git apply --check d.diff 2>>d.err && patch -s -p1 --dry-run <d.diff >>d.err 2>&1 &&
		[ "$(grep -c '^@@' d.diff)" = 1 ]; then
		ok "diff-name $(head -1 d.diff | tr -d '\t\\')"
	else
		bad "diff-name: $(cat d.err)"; cat d.diff
	fi
done

# 9. a module name holding quotes and a backslash (from the model's tensor names): the wrap entry
#    it adds is escaped, so the plan still parses and names that module (before: the edited file
#    did not parse, and the fix was refused)
mkdir "$tmp/9" && cd "$tmp/9" || exit 2
cat >m.yaml <<'MODEL'
dtypelint: 1
model:
  checkpoint_dtype: bfloat16
tensors:
  - {name: 'model.layers.0.a"b\c''d.gate.weight', shape: [8, 64], dtype: float32}
  - {name: 'model.layers.0.a"b\c''d.up.weight', shape: [8, 64]}
  - {name: model.norm.weight, shape: [64]}
MODEL
printf "strategy: fsdp1\nversions: {torch: \"2.4.1\"}\nfsdp:\n  wrap: ['model.layers.*']\n" >plan.yaml
"$dtypelint" m.yaml --plan plan.yaml --fix-plan --write >w.out 2>w.err
status=$?
"$dtypelint" m.yaml --plan plan.yaml --select DT101 >again.out 2>&1
again=$?
if [ $status -eq 0 ] && [ $again -eq 0 ] &&
	grep -qF "wrap: ['model.layers.*', \"model.layers.0.a\\\"b\\\\c'd.up\"]" plan.yaml; then
	ok "escaped-module-name"
else
	bad "escaped-module-name (exit $status, again $again)"; cat plan.yaml w.err again.out
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
