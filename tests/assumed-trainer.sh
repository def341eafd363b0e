#!/bin/sh
# The trainer is a fact with a source, not a hidden default (issue 33, item 3): with no input
# naming it, the set-up is linted with a hand-written loop, the HF Trainer and a TRL trainer,
# and a finding says which of them it fires with; trainer arguments say which trainer runs
# (TRL-only keys: TRL; generic TrainingArguments: the HF Trainer).
# Usage: assumed-trainer.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/lib.sh"
cd "$root" || exit 99
model=fixtures/import/tiny-qwen2 adapter=fixtures/import/adapter_config.json
sed 's/fsdp_version: 2/fsdp_version: 1/' fixtures/import/accelerate_fsdp2.yaml > "$tmp/fsdp1.yaml"

# 1. accelerate FSDP1 + LoRA, no trainer named: DT101 fires with a hand-written loop only
"$dtypelint" "$model" --accelerate "$tmp/fsdp1.yaml" --peft "$adapter" > "$tmp/out" 2> "$tmp/err"; st=$?
if [ $st = 1 ] && grep -q '\[DT101' "$tmp/out" &&
	grep -q '^  fails with trainer none (a hand-written loop), not with hf-trainer or trl-sft: no input names the trainer; `trainer: hf-trainer` in the plan avoids it$' "$tmp/out"
then ok no-trainer; else bad no-trainer "exit $st: $(grep -v note: "$tmp/out" | head -8)"; fi
"$dtypelint" -f json "$model" --accelerate "$tmp/fsdp1.yaml" --peft "$adapter" > "$tmp/out" 2> "$tmp/err"
if python3 -c 'import json,sys
f = [f for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "DT101"][0]
assert f["versions"] == [{"name": "trainer", "fires": "none (a hand-written loop)", "from": None,
  "to": None, "allowed": "none, hf-trainer, trl-sft", "allowed_at": "assumed: no input names the trainer",
  "avoided_by": "trainer: hf-trainer", "not_with": "hf-trainer, trl-sft"}], f["versions"]' "$tmp/out"
then ok no-trainer-json; else bad no-trainer-json "$(grep -A2 '"versions"' "$tmp/out" | head -5)"; fi
"$dtypelint" --show-plan "$model" --accelerate "$tmp/fsdp1.yaml" --peft "$adapter" > "$tmp/out" 2> "$tmp/err"
if grep -q '^  trainer       none (assumed: no input names it; also linted as hf-trainer, trl-sft)$' "$tmp/out"
then ok show-plan-assumed; else bad show-plan-assumed "$(grep trainer "$tmp/out")"; fi

# 2. generic TrainingArguments: the HF Trainer, which installs PEFT's wrap policy: no DT101
printf '%s\n' 'output_dir: out' 'per_device_train_batch_size: 4' 'learning_rate: 2.0e-4' \
	'gradient_checkpointing: true' 'bf16: true' > "$tmp/args.yaml"
"$dtypelint" "$model" --accelerate "$tmp/fsdp1.yaml" --peft "$adapter" --trainer-args "$tmp/args.yaml" \
	> "$tmp/out" 2> "$tmp/err"; st=$?
if ! grep -q '\[DT101' "$tmp/out"; then ok training-arguments; else bad training-arguments "exit $st: $(grep -v note: "$tmp/out" | head -4)"; fi
"$dtypelint" --show-plan "$model" --accelerate "$tmp/fsdp1.yaml" --trainer-args "$tmp/args.yaml" > "$tmp/out" 2>&1
if grep -q "^  trainer       hf-trainer ($tmp/args.yaml:1:1)" "$tmp/out"
then ok training-arguments-not-trl; else bad training-arguments-not-trl "$(grep trainer "$tmp/out")"; fi

# 3. a TRL recipe (TRL ModelConfig keys) is still TRL
"$dtypelint" --show-plan "$model" --trainer-args fixtures/recipes/alignment-handbook-zephyr-7b-beta-sft-config_qlora.yaml > "$tmp/out" 2>&1
if grep -q "^  trainer       trl-sft (" "$tmp/out"; then ok trl-recipe; else bad trl-recipe "$(grep trainer "$tmp/out")"; fi

# 4. a plan that names the trainer is not varied
printf 'trainer: none\n' > "$tmp/plan.yaml"
"$dtypelint" "$model" --accelerate "$tmp/fsdp1.yaml" --peft "$adapter" --plan "$tmp/plan.yaml" > "$tmp/out" 2>&1; st=$?
if [ $st = 1 ] && grep -q '\[DT101' "$tmp/out" && ! grep -q 'fails with trainer' "$tmp/out"
then ok named-trainer; else bad named-trainer "exit $st: $(grep -v note: "$tmp/out" | head -4)"; fi

# 5. the other facts of the verdict say where they came from, or that they are assumed
"$dtypelint" --show-plan "$model" --deepspeed fixtures/import/ds_z3_bf16.json > "$tmp/out" 2>&1
if grep -q '^  strategy      zero3 (from fixtures/import/ds_z3_bf16.json:5:14)$' "$tmp/out" &&
	grep -q '^  precision     bf16 (from fixtures/import/ds_z3_bf16.json:3:23) (mode dtype bfloat16)$' "$tmp/out" &&
	grep -q '^  world size    2 (assumed)$' "$tmp/out"
then ok plan-sources; else bad plan-sources "$(head -4 "$tmp/out")"; fi
"$dtypelint" --show-plan "$model" --strategy fsdp2 > "$tmp/out" 2>&1
if grep -q '^  strategy      fsdp2 (from --strategy)$' "$tmp/out" &&
	grep -q '^  precision     unset (no input sets it: no mixed-precision cast) (mode dtype none)$' "$tmp/out"
then ok plan-assumed; else bad plan-assumed "$(head -4 "$tmp/out")"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
