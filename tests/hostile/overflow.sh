#!/bin/sh
# Arithmetic that cannot wrap (issue 35, item 5): an HF folder whose config.json makes the
# embedding 2^73 elements (vocab_size 2^40 x hidden_size 2^33, shapes from the architecture
# profile over an index without shards) is an input error naming the tensor, never a small
# count that "fits"; so is a manifest tensor of 2^60 elements or more (its float64 bytes
# would pass 2^63 - 1), while sums over many tensors in range saturate and DT801 fires; a
# LoRA tensor PEFT creates for a parameter (target_parameters) is never a wrapped count.
# Usage: overflow.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/../lib.sh"
mkdir "$tmp/hf"
python3 - "$root/fixtures/import/tiny-qwen2" "$tmp/hf" <<'PY'
import json, struct, sys
src, dst = sys.argv[1], sys.argv[2]
raw = open(src + "/model.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
names = [k for k in json.loads(raw[8:8 + n]) if k != "__metadata__"]
json.dump({"metadata": {}, "weight_map": {k: "model-00001-of-00002.safetensors" for k in names}},
          open(dst + "/model.safetensors.index.json", "w"))
c = json.load(open(src + "/config.json"))
c.update(vocab_size=2**40, hidden_size=2**33, head_dim=64)
json.dump(c, open(dst + "/config.json", "w"))
PY
cd "$tmp" || exit 99
"$dtypelint" hf --strategy fsdp2 --memory >out 2>&1; st=$?
if [ $st = 2 ] && grep -q "tensor 'model.embed_tokens.weight'.*has 2^60 elements or more" out; then
	ok hf-embedding-2-73; else bad hf-embedding-2-73 "exit $st: $(head -c 300 out)"; fi
# a per-layer created buffer (Llama's rotary per attention, model.layers.{layer}...) is one name
# per num_hidden_layers: 2^40 layers is an input error at config.json, not 2^40 names
mkdir "$tmp/layers"
cp "$root/fixtures/import/tiny-llama/model.safetensors" "$tmp/layers/"
sed 's/"num_hidden_layers": 2,/"num_hidden_layers": 1099511627776,/' \
	"$root/fixtures/import/tiny-llama/config.json" >"$tmp/layers/config.json"
"$dtypelint" layers --with transformers=4.44.2 >out 2>&1; st=$?
if [ $st = 2 ] && grep -q "layers/config.json:[0-9]*:[0-9]*: error: config.json num_hidden_layers is 1099511627776, over the limit" out
then ok hf-num-hidden-layers-2-40; else bad hf-num-hidden-layers-2-40 "exit $st: $(head -c 300 out)"; fi
cat > big.yaml <<'YAML'
dtypelint: 1
model: {checkpoint_dtype: float64}
tensors:
  - {name: model.embed_tokens.weight, shape: [1152921504606846976, 2]}
training: {strategy: fsdp2, world_size: 1, device_memory: 256GiB, versions: {torch: "2.4.1"}}
YAML
"$dtypelint" big.yaml >out 2>&1; st=$?
if [ $st = 2 ] && grep -q "big.yaml:4:.*'model.embed_tokens.weight' has 2^60 elements or more" out
then ok manifest-tensor-over-2-60; else bad manifest-tensor-over-2-60 "exit $st: $(head -c 300 out)"; fi
cat > many.yaml <<'YAML'
dtypelint: 1
model: {checkpoint_dtype: float64}
tensors:
  - {name: a.weight, shape: [576460752303423488]}
  - {name: b.weight, shape: [576460752303423488]}
  - {name: c.weight, shape: [576460752303423488]}
  - {name: d.weight, shape: [576460752303423488]}
training: {strategy: fsdp2, world_size: 1, device_memory: 256GiB, versions: {torch: "2.4.1"}}
YAML
"$dtypelint" many.yaml >out 2>&1; st=$?
if [ $st = 1 ] && grep -q "DT801" out && grep -q "over 16 EiB" out; then ok manifest-bytes-saturate
else bad manifest-bytes-saturate "exit $st: $(head -c 300 out)"; fi
# LoRA target_parameters: lora_A of a [1, 2^59, 1] parameter at r 2^20 has 2^79 elements,
# which wrapped to 0 (a "persistent" ZeRO-3 parameter); it is unknown instead
cat > wrap.yaml <<'YAML'
dtypelint: 1
model: {checkpoint_dtype: bfloat16}
tensors:
  - {name: model.layers.0.mlp.experts.gate_up_proj, shape: [1, 576460752303423488, 1]}
adapter: {type: lora, target_modules: [], target_parameters: [mlp.experts.gate_up_proj], r: 1048576}
training: {strategy: zero3, precision: bf16, zero3: {init: false}, versions: {peft: "0.18.1", deepspeed: "0.19.5"}}
YAML
"$dtypelint" --no-config --trace 'model.**.weight' wrap.yaml >out 2>&1; st=$?
if [ $st = 0 ] && grep -q "trace: 'model.layers.0.mlp.experts.lora_A.default.weight'" out &&
	! grep -q "numel 0 <=" out; then ok lora-target-parameter-numel-2-79
else bad lora-target-parameter-numel-2-79 "exit $st: $(head -c 300 out)"; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
