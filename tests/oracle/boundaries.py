#!/usr/bin/env python3
"""Version steps from the real releases: each boundary of rules/versions.yaml on both sides.

Usage: boundaries.py DTYPELINT VENV_PYTHON [--fast] [--only REGEX] [--cache DIR]
For every behaviour of rules/versions.yaml with a since or an until, either a set-up (PROBES
below) is run by the real libraries at the last release before the boundary and at the first
after it, or the behaviour's `oracle:` field says why this machine cannot show it. The older
(or newer) release of the one pure-Python package that changes is installed with
`pip install --no-deps --target DIR PKG==VER` (an exact pin; never torch) into the cache
(build/oracle-bounds/PKG-VER) and put first on PYTHONPATH of the venv's python, so it shadows
the venv's copy; the worker reports the version it imported, and a run that imported another
one fails. The set-up is tests/oracle/real_worker.py's (a small real model saved with
save_pretrained, from_pretrained, PEFT, accelerate's prepare, a trainer, one step), and the
same set-up, as a user's files, is linted by dtypelint with `--with PKG=VER` on each side.

A boundary is shown when the real observation (the verdict: the error type or "runs", and
the final dtype of each watched tensor) differs between the two releases, and dtypelint
agrees with the real libraries on both sides. The other differences of the whole set-up
(tensors dtypelint does not list, ...) are printed as notes: real_differential.py judges them.
A framework default read off its own config object (no set-up to run) is an `expr` probe
(probe_expr): its set-up {"expr": CODE, "lint": ARGS} runs CODE (Python that prints one JSON
value) by the venv's python with the release first on PYTHONPATH, and compares the value with
dtypelint's `--show-plan -f json` plan, at the dotted path the probe's fifth element names,
for ARGS with `--with torch=VENV,PKG=VER` (NeMo Automodel's FSDP2Config default reduce dtype).
A behaviour in the values of a tensor, not its dtype, is one more observation beside the
watched dtypes: `rope_positions: P` (the RoPE cache under zero.Init) has the worker compute the
first rotary embedding's cos for position P after the load and say which dtype's rounding of P
it was computed from ("bfloat16": 257 read as 256; "float32": exact), and dtypelint's answer
is the dtype its DT302 finding citing transformers#28685 computes inv_freq in (float32 when
there is none); `config_overrides` loads a copy of the saved model whose config.json has those
keys changed (a context past 256 positions; the oracle's models have 256).
A behaviour in a tensor's shape is `shapes: REGEX`: the worker records the shape of every
tensor matching REGEX after the PEFT stage, and each side's observation gets "NAME numel"
entries, dtypelint's read off its HTML report's tensor table (lint_shapes): dtypelint keeps a
LoRA tensor's numel, not its shape, so numels are compared and the real shapes are notes
(peft-param-wrapper-swap-*: which of in and out a target_parameters LoRA tensor takes).
Each behaviour's `oracle:` field must say `shown: PKG A / B` for a probe (with the same
versions) or `cannot: REASON` without one; a boundary with neither fails.

Exit 0 when every probe run shows its boundary and agrees, 1 otherwise; 77 (skip) without
the venv, or when PyPI cannot be reached and a release is not in the cache (1 then when
DTL_REQUIRE_VENV=1)."""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import real_differential as rd  # noqa: E402

# the architectures only the probes build, known to the set-up helpers of this process
rd.real_models.ARCHS.update(rd.real_models.BOUNDARY_ARCHS)

LORA = {"peft": "lora", "strategy": "single", "precision": "bf16"}
DS_ZERO3 = {"arch": "llama", "load_dtype": "bfloat16", "peft": None, "strategy": "zero3",
            "precision": "bf16"}
DS_AUTOCAST = dict(DS_ZERO3, load_dtype="float32",
                   ds_config={"torch_autocast": {"enabled": True, "dtype": "bfloat16"}})
DS_BF16_PARAMS = dict(DS_AUTOCAST, load_dtype="bfloat16", precision="fp32",
                      tensor_overrides=["device"])
DS_LORA = dict(DS_ZERO3, peft="lora")
DS_WATCH = r"layers\.0\.(self_attn\.q_proj|input_layernorm)\.weight$"
DS_LORA_WATCH = r"layers\.0\.self_attn\.q_proj\.(weight|lora_A\.default\.weight)$"
# Llama's created buffers (the `# ---- llama buffers ----` probes): loaded in bfloat16, no adapter
LLAMA_LOAD = {"arch": "llama", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
              "precision": "bf16", "stop_after": "peft"}
LLAMA_ROTARY = r"layers\.0\.self_attn\.rotary_emb\.(inv_freq|_?cos_cached|_?sin_cached)$"
LLAMA_MASK = r"(layers\.0\.self_attn\.rotary_emb\.inv_freq|model\.causal_mask)$"
PEFT_TP_GPT_OSS = dict(LORA, arch="gpt-oss", load_dtype="bfloat16", strategy="zero3",
                       target_parameters=["mlp.experts.gate_up_proj", "mlp.experts.down_proj"],
                       stop_after="peft", own_build=True)
# the LoRA tensors of layer 0's experts (peft ParamWrapper shapes): their dtypes, and with
# `shapes` their shapes
PEFT_SHAPES = r"layers\.0\.mlp\.experts\.(base_layer\.)?lora_[AB]\.default\.weight$"
PEFT_SHAPES_GPT_OSS = dict(LORA, arch="gpt-oss", load_dtype="bfloat16",
                           target_parameters=["mlp.experts.gate_up_proj",
                                              "mlp.experts.down_proj"],
                           stop_after="peft", shapes=PEFT_SHAPES)

# (key, edge): (package, last release before the edge, first release after it, set-up,
# watched tensor regex[, the real stage observed, else the last]); the edge is the
# behaviour's since or until.
# The set-up is a real_differential.py set-up (arch, load dtype, quant, peft, strategy,
# precision, trainer) plus real_worker.py's add_adapter / stop_after / auto_class / shapes, and
# checkpoint_names: the saved tensors renamed as public checkpoints name them (model_folder).
# An `expr` set-up (probe_expr) has no model: its fifth element is the plan's dotted path.
PROBES = {
    # ---- accelerate ----
    # FSDP2 full fine-tuning of a bfloat16 model: 1.13 casts nothing, 1.14 the trainable
    ("accelerate-fsdp2-upcast", "since"): (
        "accelerate", "1.13.0", "1.14.0",
        {"arch": "llama", "load_dtype": "bfloat16", "peft": None, "strategy": "fsdp2",
         "precision": "bf16"}, r"layers\.0\.(self_attn\.q_proj|input_layernorm)\.weight$"),
    # 1.12 ran model.to(float32) after fully_shard; 1.13 casts nothing
    ("accelerate-fsdp2-model-fp32-cast", "until"): (
        "accelerate", "1.12.0", "1.13.0",
        {"arch": "llama", "load_dtype": "bfloat16", "peft": None, "strategy": "fsdp2",
         "precision": "bf16"}, r"layers\.0\.(self_attn\.q_proj|input_layernorm)\.weight$"),
    # tied embeddings under FSDP2 on torch 2.13: 1.13 leaves both embeddings to the root
    # group; 1.14 carves the input embedding out and leaves lm_head's shared weight in root
    ("accelerate-fsdp2-carve-embed-tail", "since"): (
        "accelerate", "1.13.0", "1.14.0",
        {"arch": "gemma2", "load_dtype": "bfloat16", "peft": None, "strategy": "fsdp2",
         "precision": "bf16"}, r"layers\.0\.self_attn\.q_proj\.weight$"),
    # tied embeddings under FSDP2 on torch 2.13: 1.14 leaves lm_head's shared weight to the
    # root group (torch's duplicate-parameter check refuses it), 1.15 keeps the tie together
    ("accelerate-fsdp2-tied-tail", "since"): (
        "accelerate", "1.14.0", "1.15.0",
        {"arch": "gemma2", "load_dtype": "bfloat16", "peft": None, "strategy": "fsdp2",
         "precision": "bf16"}, r"layers\.0\.self_attn\.q_proj\.weight$"),
    # FSDP1 full fine-tuning of a bfloat16 model: 0.29 keeps the flat parameters bfloat16,
    # 0.30 upcasts the trainable ones to float32 after wrapping
    ("accelerate-fsdp1-upcast", "since"): (
        "accelerate", "0.29.3", "0.30.0",
        {"arch": "llama", "load_dtype": "bfloat16", "peft": None, "strategy": "fsdp1",
         "precision": "bf16"}, r"layers\.0\.(self_attn\.q_proj|input_layernorm)\.weight$"),
    # QLoRA (uint8 storage) under FSDP2: 1.13 shards the frozen Params4bit (DTensors), 1.14
    # passes them to fully_shard's ignored_params (plain tensors, whole on every rank)
    ("accelerate-fsdp2-ignore-params4bit", "since"): (
        "accelerate", "1.13.0", "1.14.0",
        {"arch": "llama", "load_dtype": "bfloat16", "quant": "4bit", "quant_storage": "uint8",
         "peft": "lora", "strategy": "fsdp2", "precision": "bf16",
         "record": "fsdp2_unmanaged"},
        r"layers\.0\.self_attn\.q_proj\.(weight|lora_A\.default\.weight)$", "wrap"),
    # ---- peft ----
    # get_peft_model on a bfloat16 model: adapters bfloat16 before 0.12, float32 from it
    ("peft-autocast-adapter-dtype", "since"): (
        "peft", "0.11.1", "0.12.0",
        dict(LORA, arch="llama", load_dtype="bfloat16", stop_after="peft"),
        r"layers\.0\.self_attn\.q_proj\.lora_A\.default\.weight$"),
    # add_adapter: no autocast before 0.19
    ("peft-add-adapter-autocast", "since"): (
        "peft", "0.18.1", "0.19.0",
        dict(LORA, arch="llama", load_dtype="bfloat16", stop_after="peft",
             add_adapter={"name": "second"}),
        r"layers\.0\.self_attn\.q_proj\.lora_A\.second\.weight$"),
    # a sequence-classification PeftModel's add_adapter drops autocast_adapter_dtype=False
    ("peft-task-add-adapter-drops-autocast", "until"): (
        "peft", "0.20.0", "0.21.0",
        dict(LORA, arch="llama", load_dtype="bfloat16", stop_after="peft",
             auto_class="LlamaForSequenceClassification", task_type="SEQ_CLS",
             add_adapter={"name": "second", "task_type": "SEQ_CLS",
                          "autocast_adapter_dtype": False}),
        r"layers\.0\.self_attn\.q_proj\.lora_A\.second\.weight$"),
    # a float8_e4m3fn base (cast by hand: from_pretrained cannot build one, D46):
    # adapters stay float8 before 0.19, float32 from it
    ("peft-autocast-fp8", "since"): (
        "peft", "0.18.1", "0.19.0",
        dict(LORA, arch="llama", load_dtype="bfloat16", cast_to="float8_e4m3fn",
             stop_after="peft"),
        r"layers\.0\.self_attn\.q_proj\.lora_A\.default\.weight$"),
    # 4-bit base packed in bfloat16, computing in float32, no autocast: adapters bfloat16
    # (the weight's storage) before 0.19, float32 (the compute dtype) from it
    ("peft-4bit-compute-dtype", "since"): (
        "peft", "0.18.1", "0.19.0",
        dict(LORA, arch="llama", load_dtype="bfloat16", quant="4bit",
             quant_storage="bfloat16", compute_dtype="float32",
             autocast_adapter_dtype=False, stop_after="peft"),
        r"layers\.0\.self_attn\.q_proj\.lora_A\.default\.weight$"),
    # LoRA targets that match no module: ValueError up to 0.20, NoMatchingPeftModuleError
    ("peft-no-matching-module-error", "since"): (
        "peft", "0.20.0", "0.21.0",
        dict(LORA, arch="llama", load_dtype="bfloat16", targets=["qkv", "dense"],
             stop_after="peft"),
        r"layers\.0\.self_attn\.q_proj\.weight$"),
    # prepare_model_for_kbit_training on a 4-bit base packed in bfloat16: 0.9 upcasts the
    # packed weights with every other 16-bit parameter, 0.10 leaves Params4bit alone
    ("peft-kbit-skips-params4bit", "since"): (
        "peft", "0.9.0", "0.10.0",
        dict(LORA, arch="llama", load_dtype="bfloat16", quant="4bit",
             quant_storage="bfloat16", kbit=True, stop_after="peft"),
        r"layers\.0\.self_attn\.q_proj\.weight$"),
    # PeftModelForSequenceClassification's score head: get_peft_model copies it for its
    # adapter in every release (D47), add_adapter for the new one only from 0.11
    ("peft-task-heads-modules-to-save", "since"): (
        "peft", "0.10.0", "0.11.0",
        dict(LORA, arch="llama", load_dtype="bfloat16", stop_after="peft",
             auto_class="LlamaForSequenceClassification", task_type="SEQ_CLS",
             add_adapter={"name": "second", "task_type": "SEQ_CLS"}),
        r"^score\.modules_to_save\.second\.weight$|"
        r"layers\.0\.self_attn\.q_proj\.lora_A\.second\.weight$"),
    # LoRA target_parameters on an MoE's experts built under zero.Init: 0.20 reads the
    # partitioned parameter's shape, torch.Size([]) (IndexError), 0.21 its ds_shape; watched
    # too: the inner ParamWrapper's (gate_up_proj's) lora_A, float32 (D48)
    ("peft-target-parameters-zero3-shape", "until"): (
        "peft", "0.20.0", "0.21.0",
        dict(LORA, arch="mixtral", load_dtype="bfloat16", strategy="zero3",
             target_parameters=["mlp.experts.gate_up_proj", "mlp.experts.down_proj"],
             stop_after="peft"),
        r"layers\.0\.self_attn\.q_proj\.weight$|"
        r"layers\.0\.mlp\.experts\.base_layer\.lora_A\.default\.weight$"),
    # the same edge's other side, and where target_parameters arrived: gpt-oss built by
    # transformers 4.57.1 (COMPANIONS; its experts' gate_up_proj and down_proj are
    # nn.Parameters, Mixtral's are per-expert Linears there) under zero.Init: 0.16.0's
    # LoraConfig has no target_parameters (TypeError), 0.17.0 reads the partitioned
    # parameter's shape (IndexError). Each side builds the model under its own shadow
    ("peft-target-parameters-zero3-shape", "since"): (
        "peft", "0.16.0", "0.17.0", PEFT_TP_GPT_OSS, r"layers\.0\.self_attn\.q_proj\.weight$"),
    ("peft-lora-target-parameters", "since"): (
        "peft", "0.16.0", "0.17.0", PEFT_TP_GPT_OSS, r"layers\.0\.self_attn\.q_proj\.weight$"),
    # an adapter_config.json with target_parameters loaded by LoraConfig.from_pretrained
    # (gpt-oss, one rank; both releases import beside the venv's transformers): 0.13.2
    # raises TypeError, 0.14.0 drops the key with a warning and adapts the attention alone
    ("peft-config-drops-unknown-keys", "since"): (
        "peft", "0.13.2", "0.14.0",
        dict(PEFT_TP_GPT_OSS, strategy="single", adapter_config_file=True, own_build=False),
        r"layers\.0\.self_attn\.q_proj\.lora_A\.default\.weight$"),
    # ---- trl, and the trainers in rank worlds ----
    # trl sft without dtype: ModelConfig.dtype None (the checkpoint's) before 0.27, float32
    ("trl-model-config-dtype-float32", "since"): (
        "trl", "0.26.2", "0.27.0",
        {"arch": "qwen2", "trainer": "trl-sft", "load_dtype": None, "peft": "lora",
         "strategy": "single", "precision": "bf16"},
        r"layers\.0\.(self_attn\.q_proj|input_layernorm)\.weight$"),
    # QLoRA through trl sft, fp16 model: the 4-bit weights packed in float16 (the dtype) up
    # to 0.25.1, in uint8 from 0.26.0
    ("trl-quant-storage-follows-dtype", "until"): (
        "trl", "0.25.1", "0.26.0",
        {"arch": "llama", "trainer": "trl-sft", "load_dtype": "float16", "quant": "4bit",
         "quant_storage": None, "peft": "lora", "strategy": "single", "precision": "fp16"},
        r"layers\.0\.self_attn\.q_proj\.weight$"),
    # QDoRA through trl sft: the cast to bfloat16 skips the magnitude vector from 1.15. Seen
    # after the trainer's __init__ (where the cast is): on the CPU, trl 1.15.0's training
    # step itself fails ('NoneType' object has no attribute 'apply': _fused_forward's
    # _ChunkedLogProbFunction is None without its GPU kernel), 1.16.0 does not
    ("trl-qlora-skips-dora-magnitude", "since"): (
        "trl", "1.14.2", "1.15.0",
        {"arch": "llama", "trainer": "trl-sft", "load_dtype": "bfloat16", "quant": "4bit",
         "quant_storage": "uint8", "peft": "dora", "strategy": "single", "precision": "bf16"},
        r"layers\.0\.self_attn\.q_proj\.lora_magnitude_vector\.default\.weight$", "init"),
    # GRPO with cast_lm_head_to_fp32: 0.24.0's GRPOConfig has no such field (`trl grpo`
    # drops a recipe's unknown key), lm_head stays bfloat16; 0.25.0 casts it to float32
    ("trl-grpo-cast-lm-head-fp32", "since"): (
        "trl", "0.24.0", "0.25.0",
        {"arch": "qwen2", "trainer": "trl-grpo", "load_dtype": None,
         "model_init_kwargs": {"dtype": "bfloat16"}, "peft": None,
         "cast_lm_head_to_fp32": True, "strategy": "single", "precision": "bf16"},
        r"^(lm_head|model\.embed_tokens)\.weight$"),
    # a one-item lora_target_modules: 0.9.4 keeps the list, 0.9.6's ModelConfig makes it the
    # string "q_proj", a regular expression PEFT full-matches against whole module paths
    # (ValueError: "Target modules q_proj not found in the base model"). The adapter is
    # watched: the trainer loads the model itself, and 0.9.6 stops before any snapshot
    ("trl-one-target-is-regex", "since"): (
        "trl", "0.9.4", "0.9.6",
        {"arch": "llama", "trainer": "trl-sft", "load_dtype": "bfloat16", "peft": "lora",
         "targets": ["q_proj"], "strategy": "single", "precision": "bf16"},
        r"layers\.0\.self_attn\.q_proj\.lora_A\.default\.weight$"),
    # SFT with LoRA on a bfloat16 model under ZeRO-3 (the trainer in a 2-rank world): 1.6.0
    # lets PEFT autocast the adapters to float32, 1.7.0 passes autocast_adapter_dtype=False
    ("trl-zero3-no-autocast", "since"): (
        "trl", "1.6.0", "1.7.0",
        {"arch": "llama", "trainer": "trl-sft", "load_dtype": "bfloat16", "peft": "lora",
         "strategy": "zero3", "precision": "bf16"},
        r"layers\.0\.self_attn\.q_proj\.(lora_A\.default\.)?weight$"),
    # the same under CPOTrainer (trl.experimental.cpo): 1.7.1 autocasts, 1.8.0 does not
    ("trl-zero3-no-autocast-more-trainers", "since"): (
        "trl", "1.7.1", "1.8.0",
        {"arch": "llama", "trainer": "trl-cpo", "load_dtype": "bfloat16", "peft": "lora",
         "strategy": "zero3", "precision": "bf16"},
        r"layers\.0\.self_attn\.q_proj\.(lora_A\.default\.)?weight$"),
    # ---- transformers 4.x / 5.0 ----
    # the rotary's original_inv_freq: a plain attribute alias in 4.57.6, a float32 buffer in
    # 5.0.0 (seen after from_pretrained)
    ("transformers-rotary-original-inv-freq-buffer", "since"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "llama", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft"}, r"model\.rotary_emb\."),
    # Gemma 3's rotary: rotary_emb and rotary_emb_local with one inv_freq each in 4.57.6,
    # one rotary_emb with per-layer-type buffers in 5.0.0 (the two behaviours of one edge).
    # Each side saves its own model: 5.24.0 saves the SigLIP tower without its vision_model
    # prefix, which 4.57.6 does not find (37 tensors left to their random initialisation)
    ("transformers-gemma3-rotary-local-module", "until"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "gemma3-vl", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft", "own_build": True}, r"language_model\.rotary_emb"),
    ("transformers-gemma3-rotary-per-layer-type", "since"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "gemma3-vl", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft", "own_build": True}, r"language_model\.rotary_emb"),
    # Mixtral's experts: per-expert w1/w2/w3 Linears under block_sparse_moe in 4.57.6, fused
    # 3-D mlp.experts.gate_up_proj / down_proj in 5.0.0 (the checkpoint is per expert)
    ("transformers-v5-checkpoint-conversion", "since"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "mixtral", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft"},
        r"layers\.0\.(block_sparse_moe\.experts\.0\.w[13]\.weight|mlp\.experts\.gate_up_proj)$"),
    # the Qwen3-MoE router in 4-bit: an nn.Linear bitsandbytes quantizes (uint8) in 4.57.6,
    # a Qwen3MoeTopKRouter it leaves in the load dtype in 5.0.0. Saved by each side: 5.24.0
    # writes the expert count as num_local_experts, which 4.57.6 does not read (it builds
    # the default 128 experts, then the 4-expert checkpoint fails: "AttributeError: `weight`
    # is not an nn.Module" in _initialize_missing_keys, DISAGREEMENTS.md D16)
    ("transformers-v4-moe-gate-linear", "until"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "qwen3-moe", "load_dtype": "bfloat16", "quant": "4bit",
         "quant_storage": "uint8", "peft": None, "strategy": "single", "precision": "bf16",
         "stop_after": "peft", "own_build": True}, r"layers\.0\.mlp\.gate\.weight$"),
    # a bitsandbytes 4-bit load without dtype: 4.57.6's quantizer sets float16 for what it
    # does not quantize; 5.0.0 loads the checkpoint's dtype (bfloat16)
    ("transformers-bnb-default-fp16", "until"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "llama", "load_dtype": None, "quant": "4bit", "quant_storage": "uint8",
         "peft": None, "strategy": "single", "precision": "bf16", "stop_after": "peft"},
        r"(layers\.0\.(self_attn\.q_proj|input_layernorm)|embed_tokens)\.weight$"),
    # from_pretrained without dtype: float32 in 4.57.6, "auto" (the checkpoint's bfloat16)
    # in 5.0.0
    ("transformers-v5-dtype-none-auto", "since"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "llama", "load_dtype": None, "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft"},
        r"(layers\.0\.(self_attn\.q_proj|input_layernorm)|embed_tokens)\.weight$"),
    # DeepSeek-V2's router in 4-bit (layer 1: layer 0 is dense): a DeepseekV2MoEGate module
    # bitsandbytes leaves (bfloat16) in 4.57.6, an nn.Linear it quantizes (uint8) in 5.0.0
    ("transformers-v5-deepseek-v2-gate-linear", "since"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "deepseek-v2", "load_dtype": "bfloat16", "quant": "4bit",
         "quant_storage": "uint8", "peft": None, "strategy": "single", "precision": "bf16",
         "stop_after": "peft", "own_build": True}, r"layers\.1\.mlp\.gate\.weight$"),
    # LLaVA under FSDP2's TRANSFORMER_BASED_WRAP (its _no_split_modules, gathered from its
    # children since 5.1.0): the CLIP vision tower brings CLIPEncoderLayer in 5.5.4, and
    # from 5.6.0 CLIPPreTrainedModel's list with CLIPTextEmbeddings, which it does not build
    # (ValueError). 5.0.0 / 5.1.0 (transformers-no-split-gathers-children): both run, the
    # units differ, a probe with `units` at the end of PROBES
    ("transformers-clip-vision-no-split-text-embeddings", "since"): (
        "transformers", "5.5.4", "5.6.0",
        {"arch": "llava", "load_dtype": "bfloat16", "peft": None, "strategy": "fsdp2",
         "precision": "bf16", "own_build": True},
        r"language_model\.layers\.0\.self_attn\.q_proj\.weight$"),
    # T5 in float16 whose _keep_in_fp32_modules is ["layer"]: a component of the blocks'
    # names (block.N.layer.M), a substring only of encoder.final_layer_norm: 4.57.6 matches
    # whole components (final_layer_norm float16), 5.0.0 unanchored substrings (float32).
    # (An entry that is no component at all, ["Dense"], 4.57.6 refuses in post_init: D36,
    # DT204; transformers-keep-in-fp32-module-check below)
    ("transformers-keep-match-substring", "since"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "t5", "load_dtype": "float16", "peft": None, "strategy": "single",
         "precision": "fp16", "stop_after": "peft", "keep_in_fp32": ["layer"]},
        r"^encoder\.(final_layer_norm|block\.0\.layer\.1\.DenseReluDense\.wi)\.weight$"),
    # T5 loaded in bfloat16: 5.0.0 keeps wo (the plain _keep_in_fp32_modules) in float32
    # under bfloat16 too, 5.1.0 only under float16
    ("transformers-v5-plain-keep-under-bf16", "until"): (
        "transformers", "5.0.0", "5.1.0",
        {"arch": "t5", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft"},
        r"(encoder\.block\.0\.layer\.1\.DenseReluDense\.w[io]|shared)\.weight$"),
    # the HF Trainer under FSDP1 with LoRA on a bfloat16 model (peft 0.12: float32
    # adapters): 4.38.2 wraps the decoder layers, whose flat parameter would hold the
    # bfloat16 base and the float32 adapters; 4.39.0 installs PEFT's fsdp_auto_wrap_policy
    # (the adapters in units of their own)
    ("hf-trainer-peft-fsdp-wrap", "since"): (
        "transformers", "4.38.2", "4.39.0",
        {"arch": "llama", "trainer": "hf-trainer", "load_dtype": "bfloat16", "peft": "lora",
         "strategy": "fsdp1", "precision": "bf16"},
        r"layers\.0\.self_attn\.q_proj\.(lora_A\.default\.)?weight$"),
    # trl reward with LoRA and no lora_task_type (CAUSAL_LM): PEFT's PeftModelForCausalLM
    # reads prepare_inputs_for_generation, which a *ForSequenceClassification has while
    # PreTrainedModel inherits GenerationMixin (4.51.3) and lacks from 4.52.0 (AttributeError
    # in get_peft_model: the base weight is watched, the adapter is never made there)
    ("transformers-seq-cls-no-generation-mixin", "since"): (
        "transformers", "4.51.3", "4.52.0",
        {"arch": "llama", "trainer": "trl-reward", "load_dtype": "bfloat16", "peft": "lora",
         "strategy": "single", "precision": "bf16"},
        r"layers\.0\.self_attn\.q_proj\.weight$"),
    # ---- transformers 4.37 / 4.38: the RoPE cache under zero.Init ----
    # Llama under ZeRO-3 zero.Init (bf16, 2 ranks, no adapter: peft 0.21 does not import
    # beside 4.37/4.38, "cannot import name 'EncoderDecoderCache'"), with 512 positions:
    # 4.37.2's per-attention rotary caches cos/sin from torch.arange(512, dtype=float32),
    # which zero.Init's wrapper casts to bfloat16 (position 257 read as 256); 4.38.0
    # computes them in forward from the int64 position_ids. The positions are the
    # observation (rope_positions); q_proj's dtype is watched beside it (the rotary buffers'
    # names differ, D39)
    ("transformers-rope-cache-float-arange", "until"): (
        "transformers", "4.37.2", "4.38.0",
        dict(DS_ZERO3, stop_after="peft", rope_positions=257,
             config_overrides={"max_position_embeddings": 512}),
        r"layers\.0\.self_attn\.q_proj\.weight$"),
    # ---- transformers 5.x ----
    # the HF Trainer's own fsdp option, fsdp_config without a version, in a 2-rank world:
    # FSDP1 up to 5.9.0, FSDP2 from 5.10.1. Both upcast the trainable bfloat16 weights
    # (accelerate 1.15); FSDP1's MixedPrecision(buffer_dtype=bfloat16) also casts the
    # buffers at its lazy init (the rotary inv_freq), FSDP2 leaves them float32
    ("transformers-trainer-fsdp2-default", "since"): (
        "transformers", "5.9.0", "5.10.1",
        {"arch": "llama", "trainer": "hf-trainer", "load_dtype": "bfloat16", "peft": None,
         "strategy": "fsdp1", "fsdp_version_unset": True, "precision": "bf16"},
        r"(layers\.0\.self_attn\.q_proj\.weight|rotary_emb\.inv_freq)$"),
    # The model of each is saved by the venv's transformers (5.24.0, save_pretrained writes
    # the checkpoint's original names) and loaded by the older release; no adapter: the
    # watched tensors are the loaded ones (stage load). Each side needs hub 1.x beside it
    # (COMPANIONS).
    # Gemma 2's embed_scale: computed in forward in 5.3.0, a buffer in the load dtype in 5.4.0
    ("transformers-gemma2-embed-scale-buffer", "since"): (
        "transformers", "5.3.0", "5.4.0",
        {"arch": "gemma2", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft"},
        r"^model\.embed_tokens\.(weight|embed_scale)$"),
    # LLaVA's CLIP vision tower: vision_tower.vision_model.* in 5.5.4, vision_tower.* in 5.6.0;
    # the checkpoint's tower named as public ones name it (5.24.0 saves it without
    # vision_model, which 5.5.4 reports MISSING and initializes anew)
    ("transformers-vision-tower-no-vision-model", "since"): (
        "transformers", "5.5.4", "5.6.0",
        {"arch": "llava", "load_dtype": "float16", "peft": None, "strategy": "single",
         "precision": "fp16", "stop_after": "peft",
         "checkpoint_names": [[r"^vision_tower\.", "vision_tower.vision_model."]]},
        r"vision_tower\.(vision_model\.)?embeddings\.patch_embedding\.weight$"),
    # GraniteMoE's experts: block_sparse_moe.input_linear in 5.12.1, mlp.experts.gate_up_proj
    # and the router a bare weight in 5.13.0
    ("transformers-granitemoe-experts-conversion", "since"): (
        "transformers", "5.12.1", "5.13.0",
        {"arch": "granitemoe", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft"},
        r"layers\.0\.(block_sparse_moe|mlp)\.(input_linear|experts\.gate_up_proj|"
        r"router\.layer|router)\.weight$|layers\.0\.(block_sparse_moe|mlp)\.experts\."
        r"gate_up_proj$"),
    # GPT-NeoX's output layer: embed_out in 5.13.1, lm_head (renamed at load) in 5.14.0
    ("transformers-gpt-neox-lm-head", "since"): (
        "transformers", "5.13.1", "5.14.0",
        {"arch": "gpt-neox", "load_dtype": "float16", "peft": None, "strategy": "single",
         "precision": "fp16", "stop_after": "peft"},
        r"^(embed_out|lm_head)\.weight$"),
    # the vision rotary's original_inv_freq: absent in 5.16.1, a float32 buffer in 5.17.0
    ("transformers-qwen2-vl-vision-original-inv-freq", "since"): (
        "transformers", "5.16.1", "5.17.0",
        {"arch": "qwen2-vl", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft"},
        r"visual\.rotary_pos_emb\.(original_)?inv_freq$"),
    ("transformers-qwen3-vl-vision-original-inv-freq", "since"): (
        "transformers", "5.16.1", "5.17.0",
        {"arch": "qwen3-vl", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft"},
        r"visual\.rotary_pos_emb\.(original_)?inv_freq$"),
    # -- transformers 4.x: each release with hub 0.36 beside it, the model loaded with
    # torch_dtype (real_worker.py), the same saved folder
    # T5 (wo in _keep_in_fp32_modules) loaded in bfloat16: 4.50.x keeps wo in float32 under
    # every load dtype, 4.49.0 and 4.51.0 under float16 only
    ("transformers-keep-450-window", "since"): (
        "transformers", "4.49.0", "4.50.0",
        {"arch": "t5", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft"},
        r"^encoder\.block\.0\.layer\.(0\.SelfAttention\.q|1\.DenseReluDense\.wo)\.weight$"),
    # T5 in float16 whose _keep_in_fp32_modules is ["layer_norm"]: 4.50.3 matches it as an
    # unanchored substring (encoder.final_layer_norm float32 too), 4.51.0 as a dot-bounded
    # regex, (^|\.)layer_norm($|\.) (final_layer_norm float16, the blocks' layer_norm float32)
    ("transformers-keep-match-dot-regex", "since"): (
        "transformers", "4.50.3", "4.51.0",
        {"arch": "t5", "load_dtype": "float16", "peft": None, "strategy": "single",
         "precision": "fp16", "stop_after": "peft", "keep_in_fp32": ["layer_norm"]},
        r"^encoder\.(final_layer_norm|block\.0\.layer\.1\.layer_norm)\.weight$"),
    ("transformers-keep-450-window", "until"): (
        "transformers", "4.50.3", "4.51.0",
        {"arch": "t5", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
         "precision": "bf16", "stop_after": "peft"},
        r"^encoder\.block\.0\.layer\.(0\.SelfAttention\.q|1\.DenseReluDense\.wo)\.weight$"),
    # T5 in float16 whose _keep_in_fp32_modules is ["Dense"], a substring of DenseReluDense
    # and no component of any name: 4.50.3 builds it (wi and wo float32: the substring),
    # 4.51.0's post_init refuses it (ValueError: Dense was specified in the
    # `_keep_in_fp32_modules` list, ...; DISAGREEMENTS.md D36)
    ("transformers-keep-in-fp32-module-check", "since"): (
        "transformers", "4.50.3", "4.51.0",
        {"arch": "t5", "load_dtype": "float16", "peft": None, "strategy": "single",
         "precision": "fp32", "stop_after": "peft", "keep_in_fp32": ["Dense"]},
        r"^encoder\.block\.0\.layer\.1\.DenseReluDense\.w[io]\.weight$"),
    # the same: 4.57.6 refuses it, 5.0.0 (no check) builds it, wi and wo float32
    ("transformers-keep-in-fp32-module-check", "until"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "t5", "load_dtype": "float16", "peft": None, "strategy": "single",
         "precision": "fp32", "stop_after": "peft", "keep_in_fp32": ["Dense"]},
        r"^encoder\.block\.0\.layer\.1\.DenseReluDense\.w[io]\.weight$"),
    # the small Llama loaded with dtype=torch.int8: both refuse it with a ValueError, worded
    # by _set_default_dtype up to 4.57.6 and by local_torch_dtype from 5.0.0 (D46)
    ("transformers-local-torch-dtype", "since"): (
        "transformers", "4.57.6", "5.0.0",
        {"arch": "llama", "load_dtype": "int8", "peft": None, "strategy": "single",
         "precision": "fp32", "stop_after": "peft", "verdict_message": True},
        r"layers\.0\.self_attn\.q_proj\.weight$"),
    # LLaVA's checkpoint in public names (language_model.model.*, language_model.lm_head,
    # vision_tower.vision_model.*): kept by 4.51.3, renamed at load by 4.52.0
    ("transformers-vlm-checkpoint-conversion", "since"): (
        "transformers", "4.51.3", "4.52.0",
        {"arch": "llava", "load_dtype": "float16", "peft": None, "strategy": "single",
         "precision": "fp16", "stop_after": "peft",
         "checkpoint_names": [[r"^vision_tower\.", "vision_tower.vision_model."]]},
        r"^(language_model\.model|model\.language_model)\.embed_tokens\.weight$|"
        r"^(language_model\.)?lm_head\.weight$"),
    # ---- deepspeed ----
    # (ZeRO-3 in a 2-rank gloo world on DeepSpeed's CPU accelerator; `ds_config` adds keys to
    # the worker's ZeRO-3 config and to dtypelint's ds.json, `tensor_overrides` is the
    # script's own zero.Init(tensor_overrides=[...]), in dtypelint's plan as zero3.X)
    # torch_autocast with bf16 on a float32 model: 0.17.1 knows no torch_autocast section
    # (bf16 as ever), 0.17.2 refuses the pair in deepspeed.initialize
    ("deepspeed-torch-autocast", "since"): (
        "deepspeed", "0.17.1", "0.17.2", dict(DS_AUTOCAST, precision="bf16"), DS_WATCH),
    ("deepspeed-autocast-no-16bit-mode", "since"): (
        "deepspeed", "0.17.1", "0.17.2", dict(DS_AUTOCAST, precision="bf16"), DS_WATCH),
    # ... accepted from 0.18.3
    ("deepspeed-autocast-no-16bit-mode", "until"): (
        "deepspeed", "0.18.2", "0.18.3", dict(DS_AUTOCAST, precision="bf16"), DS_WATCH),
    # torch_autocast on bfloat16 parameters (zero.Init told to leave the dtype, fp32 mode):
    # 0.17.1 has no such section, 0.17.2 to 0.17.5 assert float32 parameters, 0.17.6 not
    ("deepspeed-autocast-fp32-only", "since"): (
        "deepspeed", "0.17.1", "0.17.2", DS_BF16_PARAMS, DS_WATCH),
    ("deepspeed-autocast-fp32-only", "until"): (
        "deepspeed", "0.17.5", "0.17.6", DS_BF16_PARAMS, DS_WATCH),
    # zero.Init(tensor_overrides=[device]) on a bfloat16 model in fp32 mode: 0.17.0 has no
    # such argument, 0.17.1 leaves the parameters bfloat16
    ("deepspeed-init-tensor-overrides", "since"): (
        "deepspeed", "0.17.0", "0.17.1",
        dict(DS_ZERO3, load_dtype="bfloat16", precision="fp32", tensor_overrides=["device"]),
        DS_WATCH),
    # stage3_allgather_sequential: a key 0.18.4's ZeRO config forbids (pydantic extra)
    ("deepspeed-allgather-sequential", "since"): (
        "deepspeed", "0.18.4", "0.18.5",
        dict(DS_ZERO3, ds_config={"zero_optimization": {"stage3_allgather_sequential": True}}),
        DS_WATCH),
    # LoRA under ZeRO-3 bf16: up to 0.19.1 deepspeed.initialize casts the float32 adapters
    # to bfloat16; 0.19.2 leaves them, and the coalesced re-gather of the mixed persistent
    # parameters at the end of the step allocates the first one's dtype; 0.19.3 fixes that
    ("deepspeed-blanket-module-cast", "until"): (
        "deepspeed", "0.19.1", "0.19.2", DS_LORA, DS_LORA_WATCH),
    ("deepspeed-coalesced-gather-first-dtype", "until"): (
        "deepspeed", "0.19.2", "0.19.3", DS_LORA, DS_LORA_WATCH),
    # LoRA on bfloat16 weights (zero.Init told to leave the dtype, fp32 mode) with
    # torch_autocast and no persistent parameters: 0.17.5 asserts float32 parameters in
    # deepspeed.initialize, 0.17.6 the one storage dtype of the fetch of float32 adapters and
    # bfloat16 weights, both gathered in bfloat16; two AssertionErrors, told by their message
    ("deepspeed-autocast-gather-dtype-assert", "since"): (
        "deepspeed", "0.17.5", "0.17.6",
        dict(DS_BF16_PARAMS, peft="lora", verdict_message=True, steps=3,
             ds_config=dict(DS_AUTOCAST["ds_config"], zero_optimization={
                 "stage3_param_persistence_threshold": 0})), DS_LORA_WATCH),
    # (three steps: the first step's fetches take one module at a time, ZeRO-3's prefetch
    # of a later step gathers several, and asserts). The same with bf16 on (accepted from
    # 0.18.3): 0.19.3 checks the communication dtype
    ("deepspeed-autocast-gather-dtype-assert", "until"): (
        "deepspeed", "0.19.2", "0.19.3",
        dict(DS_LORA, verdict_message=True, steps=3,
             ds_config=dict(DS_AUTOCAST["ds_config"], zero_optimization={
                 "stage3_param_persistence_threshold": 0})), DS_LORA_WATCH),
    # DeepSeek-V3's e_score_correction_bias, a float32 buffer its strict keep list names:
    # bfloat16 after zero.Init up to 0.19.7, float32 from 0.19.8
    ("deepspeed-zero-init-keep-buffers-fp32", "since"): (
        "deepspeed", "0.19.7", "0.19.8", dict(DS_ZERO3, arch="deepseek-v3"),
        r"layers\.\d+\.mlp\.gate\.e_score_correction_bias$"),
    # ---- nemo-automodel ----
    # FSDP2Config's default MixedPrecisionPolicy, a framework default read off the config
    # object (an `expr` probe, probe_expr): reduce_dtype bfloat16 up to 0.4.0, float32 from
    # 0.5.0 (PR #2237), against the plan's fsdp.reduce_dtype for a real Automodel recipe that
    # names no mp_policy (the goldens automodel-reduce-default-0.4.0-show-plan / -0.5.0-)
    ("automodel-fsdp2-default-reduce-fp32", "since"): (
        "nemo-automodel", "0.4.0", "0.5.0",
        {"expr": "from nemo_automodel.components.distributed.config import FSDP2Config\n"
                 "print(json.dumps(str(FSDP2Config().mp_policy.reduce_dtype)"
                 ".replace('torch.', '')))",
         "lint": ["fixtures/import/tiny-qwen2", "--framework-config",
                  "fixtures/frameworks/nemo-automodel/qwen2_5_7b_squad.yaml"]},
        "fsdp.reduce_dtype"),
    # ---- transformers: FSDP units (set-up key `units`) ----
    # LLaVA under FSDP2's TRANSFORMER_BASED_WRAP, each side saving its own model: 5.0.0's
    # post_init keeps LlavaForConditionalGeneration's own _no_split_modules, none, so only the
    # root and accelerate's embed_tokens and lm_head are units; 5.1.0 gathers the children's
    # (CLIPEncoderLayer, LlamaDecoderLayer): each decoder and vision encoder layer is one too.
    # The dtypes are the same on both sides: the units are compared
    ("transformers-no-split-gathers-children", "since"): (
        "transformers", "5.0.0", "5.1.0",
        {"arch": "llava", "load_dtype": "bfloat16", "peft": None, "strategy": "fsdp2",
         "precision": "bf16", "own_build": True, "units": True},
        r"language_model\.layers\.0\.self_attn\.q_proj\.weight$"),
    # the same LLaVA in the checkpoint's names (4.51.3 has no conversion; the folder of
    # transformers-vlm-checkpoint-conversion): 4.51.3's LlavaPreTrainedModel names
    # ["LlavaVisionAttention"], which no LLaVA builds (ValueError at the wrap), 4.52.0 none
    ("transformers-llava-no-split-vision-attention", "until"): (
        "transformers", "4.51.3", "4.52.0",
        {"arch": "llava", "load_dtype": "bfloat16", "peft": None, "strategy": "fsdp2",
         "precision": "bf16",
         "checkpoint_names": [[r"^vision_tower\.", "vision_tower.vision_model."]]},
        r"language_model\.(model\.)?layers\.0\.self_attn\.q_proj\.weight$"),
    # ---- llama buffers ----
    # Llama's created buffers by release (rules/architectures/llama.yaml created_buffers,
    # gated by behaviour): the oracle's Llama loaded in bfloat16 and stopped after the load,
    # no adapter (peft 0.21 does not import beside these releases). The watched buffers are
    # named on each side; one absent on one side makes the sides differ. Where the buffer
    # appears after the edge, a buffer present on both sides is watched beside it (a side
    # with nothing watched shows nothing)
    ("transformers-llama-rotary-per-attention", "until"): (
        "transformers", "4.47.1", "4.48.0", LLAMA_LOAD,
        r"(layers\.0\.self_attn\.rotary_emb\.inv_freq|model\.rotary_emb\.inv_freq)$"),
    ("transformers-llama-rotary-per-model", "since"): (
        "transformers", "4.42.4", "4.43.0", LLAMA_LOAD,
        r"(layers\.0\.self_attn\.rotary_emb\.inv_freq|model\.rotary_emb\.inv_freq)$"),
    # 4.30.2's Llama has no grouped-query attention (num_key_value_heads, 4.31.0): it cannot
    # load the oracle's Llama ("size mismatch for model.layers.0.self_attn.k_proj.weight"),
    # so it loads its own (4.31.0 cannot build one: its rope_scaling check refuses the
    # oracle config's three keys, "`rope_scaling` must be a dictionary with with two fields")
    ("transformers-llama-rotary-cos-sin-cached-4d", "since"): (
        "transformers", "4.30.2", "4.31.0", dict(LLAMA_LOAD, own_build=["4.30.2"]),
        LLAMA_ROTARY),
    ("transformers-llama-rotary-cos-sin-cached-fp32", "until"): (
        "transformers", "4.30.2", "4.31.0", dict(LLAMA_LOAD, own_build=["4.30.2"]),
        LLAMA_ROTARY),
    # the cos/sin cache's shape: [1, 1, positions, head_dim] in 4.34.1, [positions, head_dim]
    # in 4.35.0, bfloat16 on both sides (`shapes`: the named tensors' shapes are observed)
    ("transformers-llama-rotary-cos-sin-cached-4d", "until"): (
        "transformers", "4.34.1", "4.35.0", dict(LLAMA_LOAD, shapes=LLAMA_ROTARY), LLAMA_ROTARY),
    ("transformers-llama-rotary-cos-sin-cached", "since"): (
        "transformers", "4.34.1", "4.35.0", dict(LLAMA_LOAD, shapes=LLAMA_ROTARY), LLAMA_ROTARY),
    ("transformers-llama-rotary-cos-sin-cached", "until"): (
        "transformers", "4.37.2", "4.38.0", LLAMA_LOAD, LLAMA_ROTARY),
    ("transformers-llama-rotary-underscore-cached", "since"): (
        "transformers", "4.38.1", "4.38.2", LLAMA_LOAD, LLAMA_ROTARY),
    ("transformers-llama-rotary-underscore-cached", "until"): (
        "transformers", "4.40.2", "4.41.0", LLAMA_LOAD, LLAMA_ROTARY),
    # the causal mask: none in 4.37.2, int64 in 4.38.0 and 4.38.1, bool in 4.38.2, none in
    # 4.39.0
    ("transformers-llama-causal-mask-int64", "since"): (
        "transformers", "4.37.2", "4.38.0", LLAMA_LOAD, LLAMA_MASK),
    ("transformers-llama-causal-mask-int64", "until"): (
        "transformers", "4.38.1", "4.38.2", LLAMA_LOAD, LLAMA_MASK),
    ("transformers-llama-causal-mask-bool", "since"): (
        "transformers", "4.38.1", "4.38.2", LLAMA_LOAD, LLAMA_MASK),
    ("transformers-llama-causal-mask-bool", "until"): (
        "transformers", "4.38.2", "4.39.0", LLAMA_LOAD, LLAMA_MASK),
    # ---- peft ParamWrapper shapes ----
    # LoRA target_parameters on the experts' gate_up_proj and down_proj of one rank's bfloat16
    # model, no zero.Init (nothing partitioned), stopped after get_peft_model: the LoRA
    # tensors' shapes (`shapes`, compared as numels: dtypelint keeps a LoRA tensor's numel)
    # of the experts of layer 0. gpt-oss built by the venv's transformers (5.24, experts
    # is_transposed): 0.18.1 never swaps in and out, 0.19.0 swaps them for is_transposed
    ("peft-param-wrapper-swap-transposed", "since"): (
        "peft", "0.18.1", "0.19.0", PEFT_SHAPES_GPT_OSS, PEFT_SHAPES),
    # Mixtral (experts not is_transposed, 3-D): 0.19.0 does not swap, 0.20.0 swaps a 3-D
    # parameter of a module that is not is_transposed
    ("peft-param-wrapper-swap-3d", "since"): (
        "peft", "0.19.0", "0.20.0", dict(PEFT_SHAPES_GPT_OSS, arch="mixtral"), PEFT_SHAPES),
    # gpt-oss built by each side's own transformers, LoRA'd by the venv's peft 0.21.2 (it
    # imports beside 4.57.6): 4.57.6's GptOssExperts has no is_transposed, so 0.21.2 swaps
    # its 3-D parameters; 5.0.0's is_transposed, so it does not
    ("transformers-experts-is-transposed", "since"): (
        "transformers", "4.57.6", "5.0.0", dict(PEFT_SHAPES_GPT_OSS, own_build=True),
        PEFT_SHAPES),
}

# The subset the oracle-real suite runs (about a minute on a loaded 2-core machine)
FAST = (("peft-autocast-adapter-dtype", "since"), ("peft-add-adapter-autocast", "since"))


def boundary_behaviours():
    """(key, entry) of each behaviour of rules/versions.yaml with a since or an until."""
    import yaml
    with open(os.path.join(ROOT, "rules", "versions.yaml"), encoding="utf-8") as f:
        table = yaml.safe_load(f)
    return [(k, v) for k, v in table["behaviours"].items() if "since" in v or "until" in v]


def edges(entry):
    return [e for e in ("since", "until") if e in entry]


def parse_record(rec):
    """`oracle:` as {edge: ("shown", "PKG A / B"), ("cannot", REASON) or ("todo", WHAT)};
    "cannot: R" alone covers every edge. Clauses are "EDGE shown: PKG A / B", "EDGE cannot:
    R" or "EDGE todo: W", joined by "; " (a reason has no "; ")."""
    if not isinstance(rec, str):
        return {}
    if rec.startswith("cannot: "):
        return {"*": ("cannot", rec[len("cannot: "):])}
    out = {}
    for clause in rec.split("; "):
        m = re.match(r"^(since|until) (shown|cannot|todo): (.+)$", clause)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def check_records(behaviours):
    """The `oracle:` field of each boundary against PROBES: problems, as strings."""
    bad = []
    for key, entry in behaviours:
        rec = parse_record(entry.get("oracle"))
        for edge in edges(entry):
            got = rec.get(edge, rec.get("*"))
            if (key, edge) in PROBES:
                pkg, before, after = PROBES[(key, edge)][:3]
                want = ("shown", f"{pkg} {before} / {after}")
                if got != want:
                    bad.append(f"{key}: oracle says {got} for its {edge}, want "
                               f"'{edge} shown: {want[1]}' (the probe's releases)")
            elif not got or got[0] not in ("cannot", "todo"):
                bad.append(f"{key}: its {edge} has no probe and no '{edge} cannot: REASON' "
                           f"or '{edge} todo: WHAT' in its oracle field")
    known = {(k, e) for k, v in behaviours for e in edges(v)}
    bad += [f"{k} {e}: a probe for no boundary of versions.yaml" for k, e in PROBES
            if (k, e) not in known]
    return bad


# The releases that cannot import beside the venv's newer packages, with the exact pins they
# need beside them in the same shadowing folder (their own requirements, read in the
# release's metadata; none of them is torch). Example: transformers 5.0.0 requires
# huggingface-hub < 2.0 and tokenizers <= 0.23.0, and the venv has 2.x and 0.23.3.
HUB1 = ["huggingface-hub==1.33.0", "httpx==0.28.1", "httpcore==1.0.9"]
COMPANIONS = {
    # 4.57.6: huggingface-hub<1.0,>=0.34.0 and tokenizers<=0.23.0,>=0.22.0 (checked at import by
    # dependency_versions_check; the venv has 2.4.0 and 0.23.3); hub 0.36 needs nothing new
    ("transformers", "4.57.6"): ["huggingface-hub==0.36.2", "tokenizers==0.22.2"],
    # 5.0.0: huggingface-hub<2.0,>=1.3.0 and tokenizers<=0.23.0; hub 1.x imports httpx<1
    # (the venv has httpx2 only), which needs httpcore 1.x
    ("transformers", "5.0.0"): ["huggingface-hub==1.3.7", "tokenizers==0.22.2",
                                "httpx==0.28.1", "httpcore==1.0.9"],
    # 5.1.0: the same requirements as 5.0.0 (its METADATA)
    ("transformers", "5.1.0"): ["huggingface-hub==1.3.7", "tokenizers==0.22.2",
                                "httpx==0.28.1", "httpcore==1.0.9"],
    # 5.3.0 to 5.14.0: huggingface-hub<2.0 (>=1.3.0 in 5.3.0, >=1.5.0 after) and
    # tokenizers<=0.23.0,>=0.22.0; 5.16.1 and 5.17.0 take the venv's tokenizers (<0.24.0,
    # >=0.23.1) but hub < 2.0 too. Checked at import (dependency_versions_check); hub 1.x
    # imports httpx<1, which the venv lacks (it has httpx2), and httpx needs httpcore 1.x
    **{("transformers", v): HUB1 + ["tokenizers==0.22.2"]
       for v in ("5.3.0", "5.4.0", "5.5.4", "5.6.0", "5.12.1", "5.13.0", "5.13.1", "5.14.0")},
    **{("transformers", v): HUB1 for v in ("5.16.1", "5.17.0")},
    # 4.49 to 4.53: huggingface-hub<1.0 (>=0.26.0) and tokenizers<0.22,>=0.21;
    # hub 0.36 uses requests, which the venv has
    **{("transformers", v): ["huggingface-hub==0.36.2", "tokenizers==0.21.4"]
       for v in ("4.49.0", "4.50.0", "4.50.3", "4.51.0", "4.52.4", "4.53.0")},
    # (4.51.3 and 4.52.0 are below, with trl 0.18.0 and datasets beside them: the LLaVA
    # conversion probe loads with those pins as well)
    # trl 0.24.0 and 0.25.0 (transformers>=4.56.1) beside transformers 5.x: their
    # trl/import_utils.py reads transformers' _is_package_available("mergekit") as a bool,
    # and 5.x returns a tuple, (False, None), which is true: importing the GRPO trainer then
    # imports mergekit ("No module named 'mergekit'"). They ran beside 4.57, which needs
    # huggingface-hub<1.0,>=0.34.0 and tokenizers<=0.23.0,>=0.22.0 (the venv has 2.4.0, 0.23.3);
    # the venv's datasets 5.2 then fails on hub 0.36 ("cannot import name
    # 'BucketNotFoundError'"): datasets 4.3.0 (huggingface-hub<2.0,>=0.25.0, httpx<1.0.0; the
    # venv has httpx2 only, and httpx 0.28 needs httpcore 1.x)
    ("trl", "0.24.0"): ["transformers==4.57.6", "huggingface-hub==0.36.2", "tokenizers==0.22.2",
                        "datasets==4.3.0", "httpx==0.28.1", "httpcore==1.0.9"],
    ("trl", "0.25.0"): ["transformers==4.57.6", "huggingface-hub==0.36.2", "tokenizers==0.22.2",
                        "datasets==4.3.0", "httpx==0.28.1", "httpcore==1.0.9"],
    # transformers 5.9.0 and 5.10.1: huggingface-hub<2.0,>=1.5.0 and tokenizers<=0.23.0,>=0.22.0
    # (the venv has 2.4.0 and 0.23.3); hub 1.x imports httpx<1 (the venv has httpx2 only),
    # which needs httpcore 1.x
    # transformers 4.38.2 and 4.39.0: huggingface-hub<1.0,>=0.19.3 and tokenizers<0.19,>=0.14;
    # the venv's datasets then needs hub 2.x (datasets 4.3.0, as for trl 0.24 above) and its
    # peft 0.21 imports EncoderDecoderCache, which 4.38 lacks: peft 0.12.0 (the first with
    # autocast_adapter_dtype: float32 adapters beside a bfloat16 base, as today); the
    # Trainer passes Accelerator(dispatch_batches=...), which accelerate 1.x refuses ("got
    # an unexpected keyword argument 'dispatch_batches'"): accelerate 0.28.0 (March 2024)
    ("transformers", "4.38.2"): ["huggingface-hub==0.36.2", "tokenizers==0.15.2",
                                 "datasets==4.3.0", "httpx==0.28.1", "httpcore==1.0.9",
                                 "peft==0.12.0", "accelerate==0.28.0"],
    ("transformers", "4.39.0"): ["huggingface-hub==0.36.2", "tokenizers==0.15.2",
                                 "datasets==4.3.0", "httpx==0.28.1", "httpcore==1.0.9",
                                 "peft==0.12.0", "accelerate==0.28.0"],
    # trl 0.9.4 and 0.9.6: their SFTTrainer passes Trainer(tokenizer=...), which
    # transformers 5.x refuses ("got an unexpected keyword argument 'tokenizer'"): beside
    # transformers 4.44.2 (the first after 4.42's numpy<2.0 check; August 2024) and its pins
    # (huggingface-hub<1.0, tokenizers<0.20,>=0.19), with datasets, peft and accelerate
    # of that era as for transformers 4.38 above
    ("trl", "0.9.4"): ["transformers==4.44.2", "huggingface-hub==0.36.2", "tokenizers==0.19.1",
                       "datasets==4.3.0", "httpx==0.28.1", "httpcore==1.0.9", "peft==0.12.0",
                       "accelerate==0.32.1"],
    ("trl", "0.9.6"): ["transformers==4.44.2", "huggingface-hub==0.36.2", "tokenizers==0.19.1",
                       "datasets==4.3.0", "httpx==0.28.1", "httpcore==1.0.9", "peft==0.12.0",
                       "accelerate==0.32.1"],
    # transformers 4.51.3 and 4.52.0 (yanked, installable by its exact pin): trl 1.x needs a
    # newer transformers, so trl 0.18.0 (transformers>=4.50.0, May 2025); their pins
    # huggingface-hub<1.0,>=0.30.0 and tokenizers<0.22,>=0.21, and datasets as above
    ("transformers", "4.51.3"): ["trl==0.18.0", "huggingface-hub==0.36.2", "tokenizers==0.21.1",
                                 "datasets==4.3.0", "httpx==0.28.1", "httpcore==1.0.9"],
    ("transformers", "4.52.0"): ["trl==0.18.0", "huggingface-hub==0.36.2", "tokenizers==0.21.1",
                                 "datasets==4.3.0", "httpx==0.28.1", "httpcore==1.0.9"],
    # peft 0.16.0 and 0.17.0 import HybridCache from transformers, which 5.x removed
    # ("ImportError: cannot import name 'HybridCache' from 'transformers'"): beside
    # transformers 4.57.1 (October 2025) and its pins, huggingface-hub<1.0,>=0.34.0 and
    # tokenizers<=0.23.0,>=0.22.0 (the venv has 2.4.0 and 0.23.3)
    **{("peft", v): ["transformers==4.57.1", "huggingface-hub==0.36.0", "tokenizers==0.22.1"]
       for v in ("0.16.0", "0.17.0")},
    # transformers 4.37.2 and 4.38.0: huggingface-hub<1.0,>=0.19.3 and tokenizers<0.19,>=0.14
    # (their METADATA; the venv has 2.4.0 and 0.23.3); no peft, datasets or accelerate: the
    # rope probe runs no adapter and no trainer
    ("transformers", "4.37.2"): ["huggingface-hub==0.36.2", "tokenizers==0.15.2"],
    ("transformers", "4.38.0"): ["huggingface-hub==0.36.2", "tokenizers==0.15.2"],
    # the llama buffers' releases, their METADATA's ranges with the pins above where they allow:
    # 4.30.2 and 4.31.0 huggingface-hub<1.0,>=0.14.1 and tokenizers<0.14,>=0.11.1 (!=0.11.3);
    # 4.38.1 as 4.38.0; 4.40.2 to 4.43.0 tokenizers<0.20,>=0.19 (hub>=0.19.3, >=0.23.2 from
    # 4.42); 4.47.1 and 4.48.0 tokenizers<0.22,>=0.21 (hub>=0.24.0)
    **{("transformers", v): ["huggingface-hub==0.36.2", "tokenizers==0.13.3"]
       for v in ("4.30.2", "4.31.0")},
    # 4.34.1 and 4.35.0: huggingface-hub<1.0,>=0.16.4 and tokenizers<0.15,>=0.14
    **{("transformers", v): ["huggingface-hub==0.36.2", "tokenizers==0.14.1"]
       for v in ("4.34.1", "4.35.0")},
    ("transformers", "4.38.1"): ["huggingface-hub==0.36.2", "tokenizers==0.15.2"],
    **{("transformers", v): ["huggingface-hub==0.36.2", "tokenizers==0.19.1"]
       for v in ("4.40.2", "4.41.0", "4.43.0")},
    # 4.42.4 checks numpy<2.0,>=1.17 at import ("numpy>=1.17,<2.0 is required for a normal
    # functioning of this module, but found numpy==2.4.6"; 4.43.0 asks numpy>=1.17 only):
    # numpy 1.26.4 beside it
    ("transformers", "4.42.4"): ["huggingface-hub==0.36.2", "tokenizers==0.19.1",
                                 "numpy==1.26.4"],
    **{("transformers", v): ["huggingface-hub==0.36.2", "tokenizers==0.21.4"]
       for v in ("4.47.1", "4.48.0")},
    ("transformers", "5.9.0"): ["huggingface-hub==1.33.0", "tokenizers==0.22.2",
                                "httpx==0.28.1", "httpcore==1.0.9"],
    ("transformers", "5.10.1"): ["huggingface-hub==1.33.0", "tokenizers==0.22.2",
                                 "httpx==0.28.1", "httpcore==1.0.9"],
}


def companion_versions(pkg, ver):
    """{package: version} of the COMPANIONS of PKG==VER: the versions dtypelint is told too."""
    pins = (p.split("==") for p in COMPANIONS.get((pkg, ver), []))
    return {name.lower(): v for name, v in pins}


def install(python, cache, pkg, ver):
    """The folder holding PKG==VER and its COMPANIONS alone (pip --no-deps --target), None
    when pip fails."""
    if pkg == "torch":
        raise ValueError("torch is never installed here: the venv's 2.13.0 is the only one")
    folder = os.path.join(cache, f"{pkg}-{ver}")
    # the import name's folder (nemo-automodel installs nemo_automodel)
    if os.path.isdir(os.path.join(folder, pkg.replace("-", "_"))):
        return folder
    # --no-build-isolation: deepspeed is an sdist whose build imports the venv's torch
    run = subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
                          "--no-build-isolation", "--disable-pip-version-check",
                          "--target", folder + ".part", f"{pkg}=={ver}"] +
                         COMPANIONS.get((pkg, ver), []),
                         capture_output=True, text=True, timeout=1800)
    if run.returncode != 0:
        print(f"  pip install {pkg}=={ver} failed: {run.stderr.strip()[-300:]}", flush=True)
        return None
    os.rename(folder + ".part", folder)
    return folder


def run_real(python, s, d, shadow):
    """real_worker.py on set-up S with SHADOW first on PYTHONPATH; its result."""
    spec = rd.worker_spec(s, 29500 + (os.getpid() + len(d)) % 2000)
    if s.get("auto_class"):
        spec["auto_class"] = s["auto_class"]
    # one rank runs in the worker's own process, a trainer too, on the spec's port
    spec["inline"] = s["strategy"] == "single"
    with open(os.path.join(d, "spec.json"), "w") as f:
        json.dump(spec, f)
    out = os.path.join(d, "real.json")
    if os.path.exists(out):
        os.unlink(out)
    # DeepSpeed's CPU ops compile into a folder of this cache's own: the shared
    # ~/.cache/torch_extensions holds a lock another run may have left behind (a wait
    # without end), and two releases' sources differ: one folder per release, so that each
    # release's deepspeed_shm_comm is built once (about 3 minutes on 2 loaded cores), not at
    # every change of release
    env = dict(os.environ, PYTHONPATH=shadow,
               TORCH_EXTENSIONS_DIR=os.path.join(os.path.dirname(shadow), "torch_extensions",
                                                 os.path.basename(shadow)))
    with open(os.path.join(d, "real.log"), "w") as log:
        try:
            subprocess.run([python, os.path.join(HERE, "real_worker.py"),
                            os.path.join(d, "spec.json"), out], env=env,
                           stdout=log, stderr=log, timeout=600)
        except subprocess.TimeoutExpired:
            return {"error": {"stage": "?", "type": "Timeout", "message": "600 s"},
                    "stages": {}}
    if not os.path.exists(out):
        return {"error": {"stage": "?", "type": "WorkerDied",
                          "message": f"no result (see {d}/real.log)"}, "stages": {}}
    with open(out) as f:
        return json.load(f)


def run_lint(binary, s, d, vers, pkg, ver):
    """dtypelint on the set-up's files with --with PKG=VER (the adapter added later, its
    task type and autocast flag, are keys of the exported manifest: no recipe says them)."""
    args = rd.user_files(s, d, vers)
    adapter = {}
    if s.get("add_adapter"):
        extra = s["add_adapter"]
        adapter = {"name": extra.get("name", "second"), "added_with": "add_adapter"}
        if "autocast_adapter_dtype" in extra:
            adapter["autocast_adapter_dtype"] = extra["autocast_adapter_dtype"]
    if s.get("task_type"):
        adapter["task_type"] = s["task_type"]
    # get_peft_model's own autocast flag and prepare_model_for_kbit_training: adapter keys
    if "autocast_adapter_dtype" in s:
        adapter["autocast_adapter_dtype"] = s["autocast_adapter_dtype"]
    if s.get("kbit"):
        adapter["prepare_kbit_training"] = True
    if s.get("target_parameters") and not s.get("adapter_config_file"):
        adapter["target_parameters"] = s["target_parameters"]
    # from_pretrained without dtype and no trainer: a recipe naming no dtype is TRL's
    # (float32), so the manifest says it (load_dtype none)
    plain_none = s["load_dtype"] is None and s.get("trainer", "none") == "none"
    model = {"load_dtype": "none"} if plain_none else {}
    if s.get("keep_in_fp32") is not None:  # the class's list the worker set
        model["keep_in_fp32"] = s["keep_in_fp32"]
    if plain_none and not s.get("quant") and "--trainer-args" in args:
        # nothing for the recipe to say (dtypelint refuses an empty file)
        i = args.index("--trainer-args")
        del args[i:i + 2]
    folder = s["folder"]
    if adapter or model or s.get("cast_to") or s.get("compute_dtype"):
        man = os.path.join(d, "manifest.json")
        subprocess.run([binary, "-q", "--no-config", folder] + args + ["--export", man],
                       capture_output=True, text=True)
        with open(man) as f:
            m = json.load(f)
        if adapter:
            m.setdefault("adapter", {}).update(adapter)
        m["model"].update(model)
        if s.get("auto_class", "").endswith("ForSequenceClassification"):
            # a causal LM's checkpoint loaded as *ForSequenceClassification: no lm_head, a
            # new score head [num_labels (2), hidden] in the load dtype
            m["model"]["architecture"] = s["auto_class"]
            m["tensors"] = [t for t in m["tensors"] if t["name"] != "lm_head.weight"] + [
                {"name": "score.weight", "shape": [2, m["model"]["hidden_size"]]}]
        if s.get("compute_dtype"):
            # a 4-bit compute dtype apart from the load dtype: a key of the manifest (a TRL
            # recipe has none, its get_quantization_config takes the model dtype)
            m["quantization"]["compute_dtype"] = s["compute_dtype"]
        if s.get("cast_to"):
            # model.to(DTYPE) after the load: every floating tensor in DTYPE, as the
            # manifest's tensors are in memory (no load_dtype: as-is)
            m["model"].pop("load_dtype", None)
            m["model"]["checkpoint_dtype"] = s["cast_to"]
            for t in m.get("tensors", []):
                if t.get("dtype", "").startswith(("float", "bfloat")):
                    t["dtype"] = s["cast_to"]
        with open(man, "w") as f:
            json.dump(m, f, indent=1)
        folder, args = man, []
    if s.get("adapter_config_file"):
        # the adapter as the worker loads it, from its adapter_config.json (dtypelint's --peft,
        # which replaces the recipe's adapter)
        path = os.path.join(d, "adapter_config.json")
        with open(path, "w") as f:
            json.dump({"peft_type": "LORA", "r": s.get("r", 4),
                       "target_modules": s.get("targets") or rd.real_models.ARCHS[s["arch"]][3],
                       "target_parameters": s.get("target_parameters")}, f)
        args = args + ["--peft", path]
    args = args + ["--with", f"{pkg}={ver}"]
    t = rd.lint(binary, folder, args, units=bool(s.get("units")))
    if s.get("record") == "fsdp2_unmanaged" and "failed" not in t:
        t["fsdp2_unmanaged"] = lint_unmanaged(binary, folder, args)
    if s.get("rope_positions") and "failed" not in t:
        t["rope_positions"] = lint_rope_positions(binary, folder, args)
    if s.get("shapes") and "failed" not in t:
        t["shapes"] = lint_shapes(binary, folder, args, s["shapes"])
    return t


# lint_shapes' tokens of dtypelint's HTML report (src/report/html.c): a lazy module body
# (a script block "bm<input>-<module>"), its end, a module's <details> with its name below
# its parent (module_head, segment), a <details>' end, and a tensor row (tensor_row: the
# name below its table's module, then its shape, "[a, b]" or "numel N" for a tensor the
# simulation made)
HTML_TOKEN = re.compile(r'<script type="text/html" id="bm\d+-(\d+)">|(</script>)|'
                        r'<details id="m\d+-(\d+)"[^>]*><summary>([^<]*)|(</details>)|'
                        r'<tr id="t\d+-\d+"[^>]*><td class=n>([^<]*)<td>([^<]*)<td>')


def lint_shapes(binary, folder, args, regex):
    """{tensor: [dims] or numel} of the tensors matching REGEX, from dtypelint's HTML report,
    the one output that lists every tensor with its shape (a `shapes` set-up): the shape of
    a tensor of the checkpoint or of the profile's created buffers, the numel of one the
    simulation makes (a LoRA tensor: dtypelint keeps no shape for it). A module's full name
    is its parents' names joined by dots; a module of a layer drawn as "×N identical" has no
    rows of its own (only layer 0's tensors are found)."""
    run = subprocess.run([binary, "-f", "html", "-q", "--no-config", folder] + args,
                         capture_output=True, text=True)
    parent, seg, rows = {}, {}, []
    owner, stack = None, []  # the module whose lazy body is read, the open <details>
    for m in HTML_TOKEN.finditer(run.stdout):
        body, end_body, mod, name, end_mod, tensor, shape = m.groups()
        if body:
            owner, stack = int(body), []
        elif end_body:
            owner, stack = None, []
        elif mod:
            parent[int(mod)] = stack[-1] if stack else owner
            seg[int(mod)] = html.unescape(name).strip()
            stack.append(int(mod))
        elif end_mod:
            stack = stack[:-1]
        elif tensor:
            rows.append((stack[-1] if stack else owner, html.unescape(tensor), shape))

    def path(k):
        return "" if k is None else ".".join(p for p in (path(parent.get(k)), seg[k]) if p)

    out = {}
    for k, name, shape in rows:
        full = ".".join(p for p in (path(k), name) if p)
        if re.search(regex, full):
            numel = re.match(r"numel (\d+)", shape)
            out[full] = int(numel.group(1)) if numel else \
                [int(d) for d in re.findall(r"\d+", shape)]
    return out


def lint_rope_positions(binary, folder, args):
    """The dtype dtypelint says the RoPE cache's positions are held in: the dtype its DT302
    finding computes inv_freq in, at the step that cites transformers#28685 (the float
    arange zero.Init casts); float32 without one."""
    run = subprocess.run([binary, "-f", "json", "-q", "--no-config", folder] + args,
                         capture_output=True, text=True)
    for f in json.loads(run.stdout)["findings"]:
        if f["rule"] != "DT302":
            continue
        for tr in f.get("trace") or []:
            for step in tr["steps"]:
                if (step.get("fact") or "").endswith("/transformers/issues/28685"):
                    return step["to"]
    return "float32"


def lint_unmanaged(binary, folder, args):
    """The tensors dtypelint's trace keeps out of FSDP2's sharding (ignored_params)."""
    run = subprocess.run([binary, "-f", "json", "-q", "--no-config", "--trace", "**", folder] +
                         args, capture_output=True, text=True)
    out, cur = [], None
    for line in run.stderr.splitlines():  # the trace (stdout has the JSON report)
        m = rd.TRACE.search(line)
        if m:
            cur = m.group(1)
        elif not line.startswith("  "):
            cur = None
        elif cur and rd.STEP.match(line) and "(ignored_params)" in line:
            out.append(cur)
    return out


# Errors the CPU's gloo backend raises with another type than NCCL on a GPU, for the same
# check: (type on gloo, message regex, type on NCCL, the source). The real verdict is read as
# NCCL's, which dtypelint predicts; fmt() shows the message.
GLOO_AS_NCCL = [
    # ProcessGroupNCCL::_allgather_base raises TypeError on a dtype mismatch (torch's test
    # asserts it: assertRaisesRegex(TypeError, "output tensor must have the same type as
    # input tensor")); gloo's allgather checks the same with TORCH_CHECK, a RuntimeError
    ("RuntimeError", r"^ProcessGroupGloo::allgather: invalid tensor type", "TypeError",
     "https://github.com/pytorch/pytorch/blob/v2.13.0/test/distributed/test_c10d_nccl.py"),
]


def _gloo_as_nccl(err):
    for typ, pat, nccl, _ in GLOO_AS_NCCL:
        if err["type"] == typ and re.search(pat, err["message"]):
            return nccl
    return err["type"]


def observe(r, watch, stage=None, record=None, message=False):
    """(verdict, {watched tensor: final dtype}) of a real result or a lint answer; STAGE: the
    real dtypes after that stage, and the verdict up to it ("runs" when it was reached);
    RECORD: a key of both naming tensors (fsdp2_unmanaged), each then marked so; MESSAGE: the
    verdict is the error's type and first line, for two releases that raise the same type for
    different reasons."""
    marked = {rd.peft_name(n) for n in r.get(record) or []} if record else ()
    if "stages" in r:
        err = r.get("error")
        stages = r["stages"]
        verdict = "runs" if not err or (stage and stage in stages) else _gloo_as_nccl(err)
        if message and verdict != "runs":
            verdict += ": " + (err["message"].splitlines() or [""])[0]
        at = stage if stage in stages else list(stages)[-1] if stages else None
        final = {rd.peft_name(n): v for n, v in stages.get(at, {}).items()}
    else:
        err = r.get("error")
        verdict = (err if message else err.split(":")[0].strip()) if err else "runs"
        final = r.get("dtypes", {})
    return verdict, {n: v + (f" ({record})" if n in marked else "")
                     for n, v in sorted(final.items()) if re.search(watch, n)}


def with_units(obs, r):
    """OBS with the FSDP units (FSDP1) or groups (FSDP2) of R, a real result (real_worker.py
    `units`) or a lint answer (real_differential.py lint_units), as entries "unit MODULES":
    "N STORED-DTYPES" (a set-up's `units`: an edge that changes which modules are wrapped,
    not a dtype); no units at all: one entry "units": "none listed"."""
    units = r.get("units")
    if isinstance(units, list):
        units = {tuple(sorted(u["module"].split("+"))):
                 (len(u["params"]), "/".join(sorted(u["dtype"].split("/")))) for u in units}
    listed = {"unit " + ("+".join(m) or "<root>"): f"{n} {d}"
              for m, (n, d) in (units or {}).items()}
    return obs[0], dict(obs[1], **(listed or {"units": "none listed"}))


def fmt(obs):
    verdict, dtypes = obs
    short = (re.sub(r"^.*?\b(layers|block)\.0\.", "", n) for n in dtypes)
    return verdict + "; " + ", ".join(f"{n}={v}" for n, v in zip(short, dtypes.values()))


# a saved folder with its tensors renamed, as the checkpoints users load name them
RENAME = ("import json, os, re, shutil, sys\n"
          "from safetensors.torch import load_file, save_file\n"
          "src, dst, pairs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])\n"
          "os.makedirs(dst + '.part', exist_ok=True)\n"
          "for f in os.listdir(src):\n"
          "    if f.endswith('.safetensors'):\n"
          "        t = load_file(os.path.join(src, f))\n"
          "        for a, b in pairs:\n"
          "            t = {re.sub(a, b, k): v for k, v in t.items()}\n"
          "        save_file(t, os.path.join(dst + '.part', f), metadata={'format': 'pt'})\n"
          "    elif not f.endswith('.json') or 'index' not in f:\n"
          "        shutil.copy(os.path.join(src, f), dst + '.part')\n"
          "os.rename(dst + '.part', dst)")


def model_folder(python, work, setup):
    """The saved model of SETUP (built in main by the venv's transformers, 5.24.0); with
    `checkpoint_names: [[REGEX, REPLACEMENT], ...]`, a copy whose tensors are renamed so
    (models/ARCH@checkpoint-names; one .safetensors file, no index). 5.24.0 saves some
    tensors in names no public checkpoint has: LLaVA's CLIP tower without its vision_model
    prefix (vision_tower.encoder.*), which 5.5 reports MISSING and initializes anew, where the
    checkpoints users load have vision_tower.vision_model.*
    (fixtures/corpus/models/medgemma-27b-it/model.safetensors.index.json)."""
    folder = os.path.join(work, "models", setup["arch"])
    over = setup.get("config_overrides")
    if over:
        # a copy whose config.json has the probe's keys changed (models/ARCH@KEY=VALUE)
        out = folder + "@" + ",".join(f"{k}={v}" for k, v in sorted(over.items()))
        if not os.path.exists(out):
            shutil.copytree(folder, out + ".part")
            with open(os.path.join(folder, "config.json")) as f:
                cfg = json.load(f)
            with open(os.path.join(out + ".part", "config.json"), "w") as f:
                json.dump(dict(cfg, **over), f, indent=2)
            os.rename(out + ".part", out)
        return out
    pairs = setup.get("checkpoint_names")
    if not pairs:
        return folder
    out = folder + "@checkpoint-names"
    if not os.path.exists(out):
        subprocess.run([python, "-c", RENAME, folder, out, json.dumps(pairs)], check=True,
                       capture_output=True)
    return out


def probe(a, key, cache, vers, work):
    pkg, before, after, setup, watch = PROBES[key][:5]
    if "expr" in setup:
        return probe_expr(a, key, cache, vers)
    stage = PROBES[key][5] if len(PROBES[key]) > 5 else None
    row = {"key": f"{key[0]} ({key[1]})", "versions": f"{pkg} {before} / {after}",
           "sides": []}
    t0 = time.time()
    for ver in (before, after):
        shadow = install(a.python, cache, pkg, ver)
        if shadow is None:
            row["error"] = f"cannot install {pkg}=={ver}"
            return row
        d = os.path.join(work, "runs", key[0], ver)
        os.makedirs(d, exist_ok=True)
        s = dict(setup, folder=model_folder(a.python, work, setup))
        own = setup.get("own_build")
        if own is True or (isinstance(own, list) and ver in own):  # a list: those sides
            # saved by the side's own release: an older one may not load what the venv's
            # transformers saved (DISAGREEMENTS.md D16), as a user's checkpoint would be
            s["folder"] = build(a.python, os.path.join(work, "models", f"{pkg}-{ver}"),
                                [setup["arch"]], shadow)[0]
        r = run_real(a.python, s, d, shadow)
        got = r.get("imported", {}).get(pkg)
        if (got or "").split("+")[0] != ver:  # a local build may add +HASH
            row["error"] = (f"{pkg} {ver}: the worker imported {got} "
                            f"({(r.get('error') or {}).get('message', '')[:200]})")
            return row
        # the plan names the versions that ran: a companion of the plan's packages too
        ran = {k: v for k, v in companion_versions(pkg, ver).items() if k in vers}
        t = run_lint(a.dtypelint, s, d, dict(vers, **ran, **{pkg: ver}), pkg, ver)
        if "failed" in t:
            row["error"] = f"dtypelint refused the set-up at {pkg} {ver}: {t['failed']}"
            return row
        diffs, _ = rd.compare(r, t, dict.fromkeys(("verdict", "error type", "final dtypes",
                                                    "every tensor listed", "tensors compared",
                                                    "tensors differing"), 0), setup["arch"],
                              setup.get("quant"))
        if r.get("error") and not stage and r.get("stages"):
            # a real run that stopped early against dtypelint as of the same stage (D11)
            t = dict(t, dtypes=rd.dtypes_as_of(t, list(r["stages"])[-1]))
        rec = setup.get("record")
        message = setup.get("verdict_message", False)
        lint = observe(t, watch, None, rec, message)
        if not r.get("stages"):
            # the real run died before its first stage ended (zero.Init refusing its
            # config in from_pretrained): no tensor of it to compare, of dtypelint's neither
            lint = (lint[0], {})
        real = observe(r, watch, stage, rec, message)
        gpu = None if r.get("error") else rd.known_cpu(None, t)
        if gpu and lint[0] != "runs":
            # an error only a GPU raises (real_differential.py KNOWN_GPU: DT141's GradScaler,
            # which accelerate builds off the CPU only): the CPU run completes, and the
            # boundary is judged on the rest of the observation
            lint = ("runs", lint[1])
            diffs = diffs + [f"dtypelint's error is a GPU's: {gpu[:120]}"]
        if setup.get("units"):
            real, lint = with_units(real, r), with_units(lint, t)
        if setup.get("shapes"):
            # the shape of each tensor the `shapes` regex names, beside the dtypes; a tensor
            # dtypelint makes (a LoRA tensor) has only a numel there, so its real numel is
            # compared, and the real shape is printed as a note
            told = t.get("shapes") or {}
            for n, dims in sorted((r.get("shapes") or {}).items()):
                n = rd.peft_name(n)
                if isinstance(told.get(n), int):
                    numel = 1
                    for x in dims:
                        numel *= x
                    real[1][f"{n} size"] = numel
                    diffs = diffs + [f"real shape {n}: {dims}"]
                else:
                    real[1][f"{n} size"] = dims
            for n, v in sorted(told.items()):
                lint[1][f"{n} size"] = v
        if setup.get("rope_positions"):
            # an observation of values, beside the dtypes (the RoPE cache's positions)
            key_ = f"rotary position {setup['rope_positions']} from"
            real[1][key_] = r.get("rope_positions")
            lint[1][key_] = t.get("rope_positions")
        row["sides"].append({"ver": ver, "real": real,
                             "lint": lint,
                             "notes": diffs, "message": (r.get("error") or {}).get("message")})
    row["stage"] = stage
    row["secs"] = time.time() - t0
    (b, a_) = row["sides"]
    row["shown"] = b["real"] != a_["real"] and bool(b["real"][1] or b["real"][0] != "runs")
    row["agree"] = all(x["real"] == x["lint"] for x in row["sides"])
    return row


def probe_expr(a, key, cache, vers):
    """An `expr` probe: a framework default read off its own object. The set-up's expr
    (Python, `json` imported) is run by the venv's python with the side's release first on
    PYTHONPATH and prints one JSON value; dtypelint's `--show-plan -f json` on the set-up's
    `lint` arguments (paths from the repository root) with `--with torch=VENV,PKG=VER` gives
    the plan's value at the probe's fifth element, a dotted path in plans[0]. The same row
    as probe's: the verdict (the expr's exception type, else "runs") and {path: value}."""
    pkg, before, after, setup, path = PROBES[key][:5]
    row = {"key": f"{key[0]} ({key[1]})", "versions": f"{pkg} {before} / {after}",
           "sides": [], "stage": None}
    t0 = time.time()
    for ver in (before, after):
        shadow = install(a.python, cache, pkg, ver)
        if shadow is None:
            row["error"] = f"cannot install {pkg}=={ver}"
            return row
        code = ("import importlib.metadata, json\n"  # the release imported, then the value
                f"print(json.dumps(importlib.metadata.version({pkg!r})))\n" + setup["expr"])
        # -c puts the working directory first on sys.path: the cache's, which holds no module
        run = subprocess.run([os.path.abspath(a.python), "-c", code], capture_output=True,
                             text=True, env=dict(os.environ, PYTHONPATH=shadow), cwd=cache,
                             timeout=600)
        out = run.stdout.splitlines()
        if not out or json.loads(out[0]) != ver:
            row["error"] = f"{pkg} {ver}: imported {out[:1]} ({run.stderr.strip()[-200:]})"
            return row
        err = run.stderr.strip().splitlines()[-1:] if run.returncode else []
        real = ((err[0].split(":")[0] if err else "runs"),
                {} if err else {path: json.loads(out[-1])})
        lint = subprocess.run([os.path.abspath(a.dtypelint), "-q", "--no-config",
                               "--show-plan", "-f", "json"] + setup["lint"] +
                              ["--with", f"torch={vers['torch']},{pkg}={ver}"],
                              capture_output=True, text=True, cwd=ROOT)
        if lint.returncode not in (0, 1):
            row["error"] = f"dtypelint refused the set-up at {pkg} {ver}: {lint.stderr[-400:]}"
            return row
        value = json.loads(lint.stdout)["plans"][0]
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        row["sides"].append({"ver": ver, "real": real, "lint": ("runs", {path: value}),
                             "notes": [], "message": err[0] if err else None})
    row["secs"] = time.time() - t0
    (b, a_) = row["sides"]
    row["shown"] = b["real"] != a_["real"] and bool(b["real"][1] or b["real"][0] != "runs")
    row["agree"] = all(x["real"] == x["lint"] for x in row["sides"])
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dtypelint")
    ap.add_argument("python")
    ap.add_argument("--fast", action="store_true", help="the subset the oracle-real suite runs")
    ap.add_argument("--only", default=None, help="regex on the behaviour key")
    ap.add_argument("--cache", default=None,
                    help="the installed releases and runs (default: BUILD/oracle-bounds)")
    a = ap.parse_args()
    behaviours = boundary_behaviours()
    bad = check_records(behaviours)
    for b in bad:
        print(f"FAIL: versions.yaml: {b}")
    if not os.access(a.python, os.X_OK):
        msg = f"no venv python at {a.python} (sh tools/venv.sh build/venv makes it)"
        if os.environ.get("DTL_REQUIRE_VENV") == "1":
            print(f"FAIL: {msg}, and DTL_REQUIRE_VENV=1")
            return 1
        print(f"SKIP: {msg}")
        return 77 if not bad else 1
    work = os.path.abspath(a.cache or os.path.join(os.path.dirname(os.path.abspath(
        a.dtypelint)), "oracle-bounds"))
    keys = [(k, e) for k, v in behaviours for e in edges(v) if (k, e) in PROBES and
            (not a.fast or (k, e) in FAST) and (not a.only or re.search(a.only, k))]
    need = {(PROBES[k][0], v) for k in keys for v in PROBES[k][1:3]}
    missing = [p for p in need if not os.path.isdir(os.path.join(work, f"{p[0]}-{p[1]}"))]
    if missing and not reachable(a.python):
        msg = "PyPI cannot be reached and the cache lacks " + \
            ", ".join(f"{p}=={v}" for p, v in sorted(missing))
        if os.environ.get("DTL_REQUIRE_VENV") == "1":
            print(f"FAIL: {msg}, and DTL_REQUIRE_VENV=1")
            return 1
        print(f"SKIP: {msg}")
        return 77 if not bad else 1
    build(a.python, os.path.join(work, "models"),
          sorted({PROBES[k][3]["arch"] for k in keys if "arch" in PROBES[k][3]}))
    vers = rd.versions(a.python)
    rows = []
    for key in keys:
        row = probe(a, key, work, vers, work)
        rows.append(row)
        key = row["key"]
        if "error" in row:
            print(f"FAIL  {key} ({row['versions']}): {row['error']}", flush=True)
            continue
        mark = "ok  " if row["shown"] and row["agree"] else "FAIL"
        print(f"{mark}  {key} ({row['versions']}, {row['secs']:.0f} s): "
              f"{'shown' if row['shown'] else 'NOT shown'}, "
              f"{'dtypelint agrees' if row['agree'] else 'dtypelint DISAGREES'}", flush=True)
        for side in row["sides"]:
            at = f" (after {row['stage']})" if row.get("stage") else ""
            print(f"        {side['ver']}: real{at} {fmt(side['real'])}", flush=True)
            if side["lint"] != side["real"]:
                print(f"        {side['ver']}: dtypelint {fmt(side['lint'])}", flush=True)
            for n in side["notes"]:
                print(f"          note: {n}", flush=True)
    rest = {"cannot": [], "todo": []}
    for k, v in behaviours:
        rec = parse_record(v.get("oracle"))
        for e in edges(v):
            got = rec.get(e, rec.get("*"))
            if (k, e) not in PROBES and got and got[0] in rest:
                rest[got[0]].append((k, e, got[1]))
    if not a.fast and not a.only:
        for kind, title in (("cannot", "cannot be shown on this machine"),
                            ("todo", "could be shown, no probe yet")):
            print(f"\nboundaries that {title} (versions.yaml oracle: {kind}):")
            for k, e, why in rest[kind]:
                print(f"  {k} ({e}): {why}")
    good = sum(1 for r in rows if r.get("shown") and r.get("agree"))
    total = len(PROBES) + len(rest["cannot"]) + len(rest["todo"])
    print(f"\nboundaries: {good} of {len(rows)} run are shown on both sides with dtypelint "
          f"agreeing; of the {total} edges of versions.yaml, {len(PROBES)} have a probe, "
          f"{len(rest['cannot'])} cannot be shown here, {len(rest['todo'])} have none yet")
    return 0 if good == len(rows) and not bad else 1


def build(python, root, archs, shadow=None):
    """The folders of ARCHS' small models under ROOT, saved once by real_models.py with the
    venv's transformers, or with SHADOW first on PYTHONPATH (a side's own release)."""
    os.makedirs(root, exist_ok=True)
    code = ("import sys, os; sys.path.insert(0, sys.argv[1]); import real_models as m\n"
            "m.ARCHS.update(m.BOUNDARY_ARCHS)\n"
            "for a in sys.argv[3:]:\n"
            "    d = sys.argv[2] + '/' + a\n"
            "    os.path.exists(d + '/config.json') or m.build(a, d)")
    env = dict(os.environ, PYTHONPATH=shadow) if shadow else None
    subprocess.run([python, "-c", code, HERE, root] + archs, check=True, capture_output=True,
                   env=env)
    return [os.path.join(root, arch) for arch in archs]


def reachable(python):
    """Whether pip can reach its index (the boundary releases come from PyPI)."""
    run = subprocess.run([python, "-m", "pip", "index", "versions", "--disable-pip-version-check",
                          "peft"], capture_output=True, text=True, timeout=120)
    return run.returncode == 0 and "Available versions" in run.stdout


if __name__ == "__main__":
    sys.exit(main())
