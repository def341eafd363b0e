#!/bin/sh
# --fix-plan --diff / --write on copies of fixtures, one case per rule with a fix: the diff is
# accepted by git apply --check and patch -p1 --dry-run, --write leaves what patch -p1 makes and
# the expected line, and re-linting no longer reports the finding the fix was for.
# Usage: fix-write.sh DTYPELINT SOURCE_ROOT
set -u
dtypelint=$1 root=$2
command -v git >/dev/null && command -v patch >/dev/null || exit 77
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
case "$root" in /*) ;; *) root="$(pwd)/$root" ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

check() { # name fixture rule expected-diff-line [args...]
	name=$1 fixture=$2 rule=$3 expect=$4
	shift 4
	cd "$tmp" || exit 2
	cp "$root/$fixture" "$name.yaml"
	"$dtypelint" -q "$name.yaml" --select "$rule" >/dev/null 2>&1
	if [ $? -ne 1 ]; then echo "FAIL $name: $rule does not fire before the fix"; fail=$((fail + 1)); return; fi
	# the diff --write will make, checked by both tools before anything is written
	"$dtypelint" "$name.yaml" --fix-plan --diff "$@" >"$name.d" 2>"$name.err"
	status=$?
	if [ $status -ne 0 ]; then echo "FAIL $name: --diff exited $status: $(cat "$name.err")"; fail=$((fail + 1)); return; fi
	if ! git apply --check "$name.d" 2>"$name.err" || ! patch -s -p1 --dry-run <"$name.d" >>"$name.err" 2>&1; then
		echo "FAIL $name: the diff does not apply: $(cat "$name.err")"; cat "$name.d"; fail=$((fail + 1)); return
	fi
	mkdir -p "p-$name" && cp "$name.yaml" "p-$name/" && (cd "p-$name" && patch -s -p1 <"../$name.d")
	# WRITE_STATUS=1: the edit brings another finding at --fail-on (the plan said "it creates")
	"$dtypelint" "$name.yaml" --fix-plan --write "$@" >"$name.diff" 2>"$name.err"
	status=$?
	if [ $status -ne "${WRITE_STATUS:-0}" ]; then echo "FAIL $name: --write exited $status: $(cat "$name.err")"; fail=$((fail + 1)); return; fi
	if ! grep -qxF -- "$expect" "$name.diff"; then
		echo "FAIL $name: the diff lacks: $expect"; cat "$name.diff"; fail=$((fail + 1)); return
	fi
	if ! cmp -s "$name.yaml" "p-$name/$name.yaml"; then
		echo "FAIL $name: --write and patch -p1 differ"; fail=$((fail + 1)); return
	fi
	# FAIL_ON=error: the fix turns the error into a warning (use_orig_params)
	"$dtypelint" -q "$name.yaml" --select "$rule" --fail-on "${FAIL_ON:-warning}" >"$name.after" 2>&1
	status=$?
	if [ $status -ne 0 ]; then echo "FAIL $name: $rule still fires after the fix (exit $status)"; cat "$name.after"; fail=$((fail + 1)); return; fi
	echo "ok $name"
	pass=$((pass + 1))
}

check dt121-allgather fixtures/rules/dt121-fires.yaml DT121 \
	'+  zero3: {init: true, persistence_threshold: 100000, allgather_sequential: true}'
check dt121-version fixtures/qlora/zero3-peft-0.19.2.yaml DT121 \
	'+  versions: {torch: "2.7.1", peft: "0.17.1", deepspeed: "0.19.3", transformers: "4.57.0"}' --pick 4
check dt121-autocast fixtures/qlora/zero3-peft-0.19.2.yaml DT121 \
	'+adapter: {type: lora, target_modules: [q_proj, v_proj], r: 16, autocast_adapter_dtype: false}' --pick 1
check dt101-wrap fixtures/rules/dt101-fires.yaml DT101 \
	'+  fsdp: {wrap: [DecoderLayer, model.layers.0.mlp.gate]}'
check dt102-wrap fixtures/rules/dt102-fires.yaml DT102 \
	'+  fsdp: {wrap: [Block, layers.0.norm], use_orig_params: false}'
FAIL_ON=error
check dt102-orig-params fixtures/rules/dt102-fires.yaml DT102 \
	'+  fsdp: {wrap: [Block], use_orig_params: true}' --pick 2
FAIL_ON=warning
# the storage fixed, the float32 adapters now clash with the bfloat16 weights of their unit
# (DT101, which the plan lists as created): --write says so and exits 1
WRITE_STATUS=1
check dt401-storage fixtures/qlora/fsdp1-uint8-storage.yaml DT401 \
	'+quantization: {method: bnb-4bit, compute_dtype: bfloat16, quant_storage: bfloat16}'
WRITE_STATUS=0
check dt302-buffer fixtures/rules/dt302-fires.yaml DT302 \
	'+  fsdp: {param_dtype: bfloat16, reduce_dtype: float32, buffer_dtype: null}'
check dt202-pin fixtures/rules/dt202-load.yaml DT202 \
	'+model: {architecture: MixtralForCausalLM, checkpoint_dtype: bfloat16, load_dtype: bfloat16, keep_in_fp32_strict: [gate]}'

# DT111: each LoRA module a group of its own
check dt111-split fixtures/rules/dt111-fires.yaml DT111 \
	'+  fsdp: {wrap: [DecoderLayer, "**.lora_*.*"]}'
check dt201-ignored fixtures/rules/dt201-fires.yaml DT201 \
	'+  fsdp: {wrap: ["encoder.block.*.layer.1.DenseReluDense.wo"], param_dtype: float16, ignored: ["encoder.block.*.layer.1.DenseReluDense.wo.**"]}'
check dt131-unwrap fixtures/rules/dt131-fires.yaml DT131 \
	'+  fsdp: {wrap: [DecoderLayer]}'
check dt103-qdora fixtures/qlora/fsdp1-qdora.yaml DT103 \
	'+  versions: {torch: "2.3.1", peft: "0.12.0", transformers: "4.41.0", bitsandbytes: "0.43.1"}'
check dt501-trl fixtures/qlora/zero3-dpo-ref-model.yaml DT501 \
	'+  versions: {trl: "0.7.2", deepspeed: "0.10.0"}'
check dt404-storage fixtures/qlora/zero3-float-storage-fp16.yaml DT404 \
	'+quantization: {method: bnb-4bit, compute_dtype: float16, quant_storage: float16}'
check dt124-version fixtures/rules/dt124-nontrainable.yaml DT124 \
	'+  versions: {deepspeed: "0.19.8"}'
# DT801: the top fix that the re-simulation proves fits (8-bit AdamW states)
check dt801-optimizer fixtures/rules/dt801-fires.yaml DT801 \
	'+  optimizer: adamw_8bit'
check dt801-world-size fixtures/rules/dt801-fires.yaml DT801 \
	'+  world_size: 16' --pick 2
WRITE_STATUS=1
check dt301-buffer tests/fix/model-dt301-fsdp1.yaml DT301 \
	'+  fsdp: {wrap: [VisionTower], param_dtype: bfloat16, buffer_dtype: bfloat16}'
WRITE_STATUS=0
if grep -q "re-run: the edit brings DT302 fp32-buffer-downcast" "$tmp/dt301-buffer.err"; then
	echo "ok dt301-brings-dt302"; pass=$((pass + 1))
else
	echo "FAIL dt301-brings-dt302: $(cat "$tmp/dt301-buffer.err")"; fail=$((fail + 1))
fi

# a JSON manifest: the key is inserted into the object
cp "$root/fixtures/rules/dt101-torch113.json" "$tmp/j.json"
if "$dtypelint" "$tmp/j.json" --fix-plan --write >"$tmp/j.diff" 2>/dev/null &&
	"$dtypelint" -q "$tmp/j.json" --select DT101 >/dev/null 2>&1; then
	echo "ok json-manifest"; pass=$((pass + 1))
else
	echo "FAIL json-manifest"; cat "$tmp/j.diff"; fail=$((fail + 1))
fi
# the adapters listed in the manifest: autocast cannot be written, and nothing is touched
cp "$root/fixtures/rules/dt122-fires.yaml" "$tmp/n.yaml"
if "$dtypelint" "$tmp/n.yaml" --fix-plan --write >/dev/null 2>"$tmp/n.err"; then
	echo "FAIL unwritable: --write succeeded"; fail=$((fail + 1))
elif cmp -s "$root/fixtures/rules/dt122-fires.yaml" "$tmp/n.yaml"; then
	echo "ok unwritable ($(cat "$tmp/n.err"))"; pass=$((pass + 1))
else
	echo "FAIL unwritable: the file changed"; fail=$((fail + 1))
fi
# a fix that re-simulation ranks first but that leaves the rule firing on the finding's
# tensors (it creates a root group that mixes them): --write writes it, lints again, says the
# finding is still reported and exits 1
cp "$root/fixtures/rules/dt202-fires.yaml" "$tmp/s.yaml"
"$dtypelint" "$tmp/s.yaml" --fix-plan --write >"$tmp/s.out" 2>"$tmp/s.err"
status=$?
if [ $status -eq 1 ] && grep -q "re-run: DT111 fsdp2-mixed-dtype-group is still reported" "$tmp/s.err" &&
	grep -q '^+  fsdp: {param_dtype: bfloat16, wrap: \[model.layers.0.block_sparse_moe.experts.0.w1\]}$' "$tmp/s.out"; then
	echo "ok still-reported"; pass=$((pass + 1))
else
	echo "FAIL still-reported (exit $status)"; cat "$tmp/s.out" "$tmp/s.err"; fail=$((fail + 1))
fi
# DT501: the fix is a code change (a gather context), proven by re-simulation: printed in the
# plan, never written
cp "$root/fixtures/qlora/zero3-direct-access.yaml" "$tmp/g.yaml"
"$dtypelint" "$tmp/g.yaml" --fix-plan >"$tmp/g.plan" 2>&1
"$dtypelint" "$tmp/g.yaml" --fix-plan --write >"$tmp/g.out" 2>"$tmp/g.err"
status=$?
if grep -q "1. code change: read 'lm_head.weight' inside .with deepspeed.zero.GatheredParameters" "$tmp/g.plan" &&
	grep -q "findings at warning or above: 1 -> 0" "$tmp/g.plan" && [ $status -eq 2 ] &&
	grep -q "is not written: code change" "$tmp/g.err" && [ ! -s "$tmp/g.out" ] &&
	cmp -s "$root/fixtures/qlora/zero3-direct-access.yaml" "$tmp/g.yaml"; then
	echo "ok dt501-code-change"; pass=$((pass + 1))
else
	echo "FAIL dt501-code-change (exit $status)"; cat "$tmp/g.plan" "$tmp/g.err"; fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
