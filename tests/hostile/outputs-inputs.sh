#!/bin/sh
# No output replaces any input (issue 35, item 2): -o, --export and --write-baseline are
# compared by device and inode with every file the run reads, not only the typed ones: a model
# folder's shards, config.json and index, a DeepSpeed JSON named by an accelerate YAML or by
# trainer arguments, a kernel source. Refused with exit 2, the file untouched. --export with
# several inputs refuses rather than keep the last. Usage: outputs-inputs.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/../lib.sh"
mkdir -p "$tmp/.git" "$tmp/model" "$tmp/cfg" "$tmp/kern"
cp "$root/fixtures/import/tiny-qwen2/config.json" "$root/fixtures/import/tiny-qwen2/model.safetensors" \
	"$tmp/model/"
cp "$root/fixtures/import/ds_z3_bf16.json" "$tmp/cfg/"
sed 's|deepspeed_config_file: .*|deepspeed_config_file: ds_z3_bf16.json|' \
	"$root/fixtures/import/accelerate_zero3.yaml" > "$tmp/cfg/acc.yaml"
printf 'model_name_or_path: m\nbf16: true\ndeepspeed: ds_z3_bf16.json\n' > "$tmp/cfg/args.yaml"
cd "$tmp" || exit 99
# untouched NAME FILE STATUS: exit 2 and FILE as it was
untouched() {
	st=$3
	changed=
	cmp -s "$2" "$2.before" || changed=yes
	for b in model/*.before cfg/*.before sharded/*.before kern/*.before; do
		[ -e "$b" ] && ! cmp -s "$b" "${b%.before}" && cp "$b" "${b%.before}"
	done
	if [ "$st" = 2 ] && [ -z "${changed:-}" ]; then ok "$1"
	else bad "$1" "exit $st, replaced: ${changed:-no}: $(head -c 200 out)"; fi
}
for f in model/model.safetensors model/config.json cfg/ds_z3_bf16.json; do cp "$f" "$f.before"; done
for opt in -o --export --write-baseline; do
	"$dtypelint" model "$opt" model/model.safetensors >out 2>&1
	untouched "shard$opt" model/model.safetensors $?
	"$dtypelint" model "$opt" model/config.json >out 2>&1
	untouched "config-json$opt" model/config.json $?
	"$dtypelint" model --accelerate cfg/acc.yaml "$opt" cfg/ds_z3_bf16.json >out 2>&1
	untouched "named-by-accelerate$opt" cfg/ds_z3_bf16.json $?
	"$dtypelint" model --trainer-args cfg/args.yaml "$opt" cfg/ds_z3_bf16.json >out 2>&1
	untouched "named-by-trainer-args$opt" cfg/ds_z3_bf16.json $?
done
# an index of shards
mkdir sharded
cp model/config.json.before sharded/config.json
cp model/model.safetensors.before sharded/model-00001-of-00001.safetensors
printf '{"metadata": {}, "weight_map": {}}' > sharded/idx.tmp
python3 - sharded <<'PY'
import json, struct, sys
d = sys.argv[1]
raw = open(d + "/model-00001-of-00001.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
names = [k for k in json.loads(raw[8:8 + n]) if k != "__metadata__"]
json.dump({"metadata": {}, "weight_map": {k: "model-00001-of-00001.safetensors" for k in names}},
          open(d + "/model.safetensors.index.json", "w"))
PY
cp sharded/model.safetensors.index.json sharded/model.safetensors.index.json.before
"$dtypelint" sharded -o sharded/model.safetensors.index.json >out 2>&1
untouched index-json sharded/model.safetensors.index.json $?
# a kernel source
if "$dtypelint" --help | grep -q -- --kernels; then
	printf '#include <torch/extension.h>\nat::Tensor f(at::Tensor x) { return x; }\n' > kern/op.cpp
	cp kern/op.cpp kern/op.cpp.before
	"$dtypelint" model --kernels kern -o kern/op.cpp >out 2>&1
	untouched kernel-source kern/op.cpp $?
fi
# --export of several inputs: refused, nothing written
cp "$root/fixtures/rules/dt101-fires.yaml" a.yaml
cp "$root/fixtures/rules/dt102-fires.yaml" b.yaml
"$dtypelint" a.yaml b.yaml --export both.yaml >out 2>&1; st=$?
if [ $st = 2 ] && [ ! -e both.yaml ]; then ok export-several-refused
else bad export-several-refused "exit $st: $(head -c 300 out)"; fi
# an output that is no input is still written
"$dtypelint" model -o report.txt >out 2>&1; st=$?
if [ $st -lt 2 ] && [ -e report.txt ]; then ok output-written; else bad output-written "exit $st"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
