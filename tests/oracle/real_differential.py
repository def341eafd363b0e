#!/usr/bin/env python3
"""The real frameworks as the judge: whole set-ups run by the real libraries against dtypelint.

Usage: real_differential.py DTYPELINT VENV_PYTHON [--fast | --corpus | --random N]
                            [--seed S] [--workdir DIR] [--list-disagreements]
Each set-up is a small real model (tests/oracle/real_models.py, saved with save_pretrained),
a load dtype, optional bitsandbytes quantization, an optional LoRA or DoRA adapter, a strategy
(single, FSDP1 or FSDP2 through accelerate's prepare, ZeRO-3 through deepspeed.initialize) and a
precision. tests/oracle/real_worker.py runs it with the venv's real libraries on the CPU; the
same set-up is written as a user's files (the saved folder, a TRL-style recipe, an accelerate
YAML or a DeepSpeed JSON, and a plan naming the installed versions) and linted by dtypelint.
They agree when the crash / no-crash verdict, the error type and the final dtype of every tensor
both sides name are the same (a real run that stopped early: its dtypes and dtypelint's as of
the stage it reached, REAL_STAGE_CUT). Set-ups the CPU cannot run as a GPU would (KNOWN_CPU
and KNOWN_GPU below, each with the source that shows it) are listed apart and left out of the
figure. Prints the agreement table; exit 0 when every compared set-up agrees but for the open disagreements
of DISAGREEMENTS.md (KNOWN_MISSING, KNOWN_RENAMED), 1 otherwise, 77 (skip) when the venv
is missing, unless DTL_REQUIRE_VENV=1 (then 1)."""
import argparse
import html
import json
import os
import random
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_models  # noqa: E402
import real_worker  # noqa: E402

STRATEGIES = ("single", "fsdp1", "fsdp2", "zero3")

# The fast subset CI runs (suite oracle-real): one set-up per kind of step, the slowest first.
FAST = [
    {"arch": "qwen2", "load_dtype": "bfloat16", "peft": "lora", "strategy": "fsdp1",
     "precision": "bf16"},
    {"arch": "llama", "load_dtype": "bfloat16", "peft": "lora", "strategy": "fsdp2",
     "precision": "bf16"},
    {"arch": "mixtral", "load_dtype": "bfloat16", "quant": "4bit", "quant_storage": "uint8",
     "peft": "lora", "strategy": "single", "precision": "bf16"},
    {"arch": "t5-encoder", "load_dtype": "float16", "peft": None, "strategy": "single",
     "precision": "fp32"},
    {"arch": "gemma2", "load_dtype": "float32", "peft": "dora", "strategy": "fsdp2",
     "precision": "bf16"},
    {"arch": "gpt-oss", "load_dtype": "bfloat16", "quant": "8bit", "peft": "lora",
     "strategy": "single", "precision": "bf16"},
]

# The trainers' own steps (strategy single, CPU): transformers' Trainer on a model the script
# loaded and wrapped, and TRL's SFTTrainer built as its `trl sft` script builds it (the model
# path, model_init_kwargs, get_quantization_config, get_peft_config). "load_dtype": None is a
# recipe without dtype (TRL's default float32); "kbit" runs prepare_model_for_kbit_training.
TRAINERS = [
    {"arch": "llama", "trainer": "trl-sft", "load_dtype": "bfloat16", "quant": "4bit",
     "quant_storage": "uint8", "peft": "dora", "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "trl-sft", "load_dtype": None,
     "model_init_kwargs": {"dtype": "bfloat16"}, "peft": "lora", "strategy": "single",
     "precision": "bf16"},
    {"arch": "qwen2", "trainer": "trl-sft", "load_dtype": None, "peft": "lora",
     "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "hf-trainer", "load_dtype": "bfloat16", "kbit": True,
     "peft": "lora", "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "hf-trainer", "load_dtype": "bfloat16", "quant": "4bit",
     "quant_storage": "uint8", "peft": None, "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "hf-trainer", "load_dtype": "float16", "peft": None,
     "strategy": "single", "precision": "fp16"},
    {"arch": "qwen3", "trainer": "hf-trainer", "load_dtype": "float32", "peft": None,
     "strategy": "single", "precision": "bf16"},
    {"arch": "mistral", "trainer": "trl-sft", "load_dtype": "float16", "quant": "8bit",
     "peft": "lora", "strategy": "single", "precision": "fp16"},
    {"arch": "gemma2", "trainer": "trl-sft", "load_dtype": "bfloat16", "quant": "4bit",
     "quant_storage": "bfloat16", "peft": "lora", "strategy": "single", "precision": "bf16"},
    # TRL's DPO, GRPO, KTO and reward trainers, built as trl/scripts/{dpo,grpo,kto,reward}.py
    # build them (the same model path, model_init_kwargs, get_quantization_config and
    # get_peft_config as SFT): one each here (--fast runs them), the rest in TRAINERS_MORE.
    # DPO and KTO without PEFT load a reference model; GRPO loads one only with beta > 0
    # (its default is 0); the reward trainer loads AutoModelForSequenceClassification with
    # num_labels=1, and PEFT's task type is ModelConfig's lora_task_type (default CAUSAL_LM:
    # D23 of DISAGREEMENTS.md).
    {"arch": "llama", "trainer": "trl-dpo", "load_dtype": "bfloat16", "peft": None,
     "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "trl-grpo", "load_dtype": "bfloat16", "peft": "lora",
     "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "trl-kto", "load_dtype": "bfloat16", "peft": "lora",
     "strategy": "single", "precision": "bf16"},
    {"arch": "qwen2", "trainer": "trl-reward", "load_dtype": "bfloat16", "peft": "lora",
     "strategy": "single", "precision": "bf16"},
]

# More of TRL's trainers (--trainers only): QLoRA-DoRA and no dtype under DPO, GRPO with a
# reference model and cast_lm_head_to_fp32, 8-bit GRPO under fp16, full KTO in float32, and
# the reward trainer that runs (its `score` head: D22, open) with and without SEQ_CLS.
TRAINERS_MORE = [
    {"arch": "qwen2", "trainer": "trl-dpo", "load_dtype": "bfloat16", "quant": "4bit",
     "quant_storage": "uint8", "peft": "dora", "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "trl-dpo", "load_dtype": None, "peft": "lora",
     "strategy": "single", "precision": "bf16"},
    {"arch": "qwen2", "trainer": "trl-grpo", "load_dtype": "bfloat16", "peft": None,
     "beta": 0.04, "cast_lm_head_to_fp32": True, "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "trl-grpo", "load_dtype": "float16", "quant": "8bit",
     "peft": "lora", "strategy": "single", "precision": "fp16"},
    {"arch": "qwen2", "trainer": "trl-kto", "load_dtype": "float32", "peft": None,
     "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "trl-reward", "load_dtype": None, "peft": None,
     "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "trl-reward", "load_dtype": "bfloat16", "peft": "lora",
     "lora_task_type": "SEQ_CLS", "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "trainer": "trl-reward", "load_dtype": "bfloat16", "quant": "4bit",
     "quant_storage": "uint8", "peft": "lora", "lora_task_type": "SEQ_CLS",
     "strategy": "single", "precision": "bf16"},
]

# Real failures that come from running on the CPU, not from the set-up: (type, message regex,
# why, the source that shows it). A set-up that fails this way is listed, not compared.
KNOWN_CPU = [
    ("RuntimeError", r"^mixed dtype \(CPU\): expect parameter to have scalar type of Float",
     "the CPU layer_norm refuses a float32 input with 16-bit weights (CPU autocast runs "
     "layer_norm in float32); the check is the CPU kernel's own",
     "https://github.com/pytorch/pytorch/blob/v2.13.0/aten/src/ATen/native/mixed_data_type.h"),
    ("RuntimeError", r"^Unexpected floating ScalarType in at::autocast::prioritize",
     "the CPU's autocast registers cat, stack and index_copy as promote ops, and prioritize "
     "refuses two float16 inputs under bfloat16 autocast (rotate_half's torch.cat of the "
     "float16 4-bit compute output); CUDA's promote list (AT_FORALL_PROMOTE) has no cat, so "
     "a GPU never calls prioritize there (D10)",
     "https://github.com/pytorch/pytorch/blob/v2.13.0/aten/src/ATen/autocast_mode.cpp"),
    ("ValueError", r"^Type fp16 is not supported on your device",
     "DeepSpeed's CPU accelerator supports no fp16 (CPU_Accelerator.is_fp16_supported() is "
     "False); ZeRO-3 fp16 needs a GPU",
     "https://github.com/deepspeedai/DeepSpeed/blob/v0.19.8/accelerator/cpu_accelerator.py"),
]

# Errors dtypelint predicts that only a GPU raises, the CPU path skipping the step that raises
# them: (rule, why, the source that shows it). A set-up the real run completes and dtypelint
# fails this way is listed with the CPU-only ones, not compared (D15).
KNOWN_GPU = [
    ("DT141", "accelerate builds fp16's GradScaler only off the CPU (the `mixed_precision == "
     "'fp16' and self.device.type != 'cpu'` branch), so the CPU run never unscales the "
     "float16 gradients that GradScaler.unscale_ refuses on a GPU",
     "https://github.com/huggingface/accelerate/blob/v1.15.0/src/accelerate/accelerator.py"),
]


# Open disagreements of DISAGREEMENTS.md: real tensors dtypelint does not list, by name
# (none left: D22, the TRL reward model's score head, D25 and D26, Qwen2-VL's rotary buffers
# and the towers' int64 position_ids, are fixed) or by architecture (none left: D1 is fixed).
# They are reported on every set-up and counted apart:
# a set-up whose only difference is one of these "agrees but for a listed open disagreement";
# any other difference fails.
KNOWN_MISSING = []
# Real errors dtypelint does not predict, open in DISAGREEMENTS.md: (type, message regex, tag)
# (D6, D14, D18 and D20 are fixed: DT105, DT408, DT410, DT409; D10 is the CPU's: KNOWN_CPU;
# D33 was the oracle's DeepSeek-V3 config: real_models.py)
KNOWN_VERDICT = [
]
# Final dtypes that differ for an open disagreement: (tensor regex, real, dtypelint, tag[,
# the set-up's quant it is limited to])
# (D8, FSDP1's buffer_dtype cast, is fixed; D9, FSDP1's stale views, is read through the
# units' FlatParameters in compare())
# (D13's open part, Linear4bit's bias cast to the compute dtype at the first forward, is
# fixed: bnb-4bit-forward-bias-cast)
KNOWN_DTYPE = [
    # Linear8bitLt casts its bias to its input's dtype at the first forward (D32): to the
    # 16-bit attention output, or to float32 after a float32 norm; 8-bit set-ups only
    (r"\.bias$", r"^(bfloat16|float16|float32)$", r"^(bfloat16|float16|float32)$", "D32",
     "8bit"),
]
# (D1 is fixed: rules/conversions.yaml names an HF folder's tensors as transformers loads them)
KNOWN_RENAMED = {}


def versions(py):
    code = ("import importlib.metadata as m, json; print(json.dumps({n: m.version(n) for n in "
            "('torch','transformers','peft','deepspeed','accelerate','trl','bitsandbytes')}))")
    run = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True)
    return {k: v.split("+")[0] for k, v in json.loads(run.stdout).items()}


def corpus_setups():
    """Every architecture under every strategy, in its checkpoint dtype, with LoRA."""
    out = []
    for strategy in STRATEGIES:
        for arch, (_, _, dtype, _) in real_models.ARCHS.items():
            out.append({"arch": arch, "load_dtype": dtype, "peft": "lora",
                        "strategy": strategy, "precision": "bf16"})
    return out


def random_setups(n, seed):
    """N set-ups drawn with a fixed seed: model, load dtype, quantization, adapter, strategy,
    precision."""
    rng = random.Random(seed)
    archs = sorted(real_models.ARCHS)
    out = []
    for _ in range(n):
        s = {"arch": rng.choice(archs),
             "load_dtype": rng.choice(["bfloat16", "float16", "float32", "auto"]),
             "peft": rng.choice([None, "lora", "lora", "dora"]),
             "strategy": rng.choice(STRATEGIES),
             "precision": rng.choice(["bf16", "bf16", "fp16", "fp32"])}
        if s["load_dtype"] != "auto" and s["strategy"] == "single" and rng.random() < 0.4:
            s["quant"] = rng.choice(["4bit", "8bit"])
            s["quant_storage"] = rng.choice(["uint8", s["load_dtype"]])
        out.append(s)
    return out


def wide_setups(n, seed):
    """N whole set-ups drawn with a fixed seed from the widened space: what random_setups
    draws (kept as it was, so that its seeds still give the same set-ups), plus the trainer
    that runs it (none, or on one device the HF Trainer or TRL's SFTTrainer), TRL recipes
    without a dtype or with model_init_kwargs, prepare_model_for_kbit_training, and QLoRA
    under FSDP1/FSDP2 (bitsandbytes 4-bit with a floating storage). A set-up drawn with
    TRL's SFTTrainer on a causal LM may then get another of TRL's trainers (DPO, GRPO, KTO,
    reward; their scripts take the same recipe) from a second generator: the first draws
    what it drew before they were added, so a seed's set-ups stay as they were but for the
    trainer of some trl-sft ones."""
    rng = random.Random(seed)
    rng_trl = random.Random(f"{seed}-trl")
    archs = sorted(real_models.ARCHS)
    out = []
    for _ in range(n):
        s = {"arch": rng.choice(archs),
             "load_dtype": rng.choice(["bfloat16", "float16", "float32", "auto"]),
             "peft": rng.choice([None, "lora", "lora", "dora"]),
             "strategy": rng.choice(["single", "single", "fsdp1", "fsdp2", "zero3"]),
             "precision": rng.choice(["bf16", "bf16", "fp16", "fp32"])}
        if s["load_dtype"] != "auto" and s["strategy"] in ("single", "fsdp1", "fsdp2") and \
                rng.random() < 0.4:
            s["quant"] = "4bit" if s["strategy"] != "single" else rng.choice(["4bit", "8bit"])
            s["quant_storage"] = s["load_dtype"] if s["strategy"] != "single" else \
                rng.choice(["uint8", s["load_dtype"]])
            s["peft"] = s["peft"] or "lora"
        # the trainers train a causal LM here (the T5 models have no labels-only loss path)
        if s["strategy"] == "single" and s["load_dtype"] != "auto" and \
                not s["arch"].startswith("t5"):
            s["trainer"] = rng.choice(["none", "hf-trainer", "trl-sft", "trl-sft"])
        if s.get("trainer") == "trl-sft" and rng.random() < 0.3:
            if rng.random() < 0.5:
                s["model_init_kwargs"] = {"dtype": s["load_dtype"]}
            s["load_dtype"] = None
        if s.get("trainer") == "hf-trainer" and not s.get("quant") and s["peft"] and \
                rng.random() < 0.3:
            s["kbit"] = True
        if s.get("trainer") == "trl-sft" and \
                real_models.ARCHS[s["arch"]][1].endswith("ForCausalLM"):
            s["trainer"] = rng_trl.choice(["trl-sft", "trl-sft", "trl-dpo", "trl-grpo",
                                           "trl-kto", "trl-reward"])
        out.append(s)
    return out


def label(s):
    q = s.get("quant") or "-"
    if q == "4bit":
        q += "/" + s.get("quant_storage", "uint8")
    extra = ""
    if s.get("trainer", "none") != "none":
        extra = f" trainer={s['trainer']}"
    if s.get("model_init_kwargs"):
        extra += " model_init_kwargs=" + ",".join(f"{k}:{v}" for k, v in
                                                  s["model_init_kwargs"].items())
    if s.get("kbit"):
        extra += " kbit"
    for k in ("lora_task_type", "beta", "cast_lm_head_to_fp32"):
        if k in s:
            extra += f" {k}={s[k]}"
    return (f"{s['arch']} load={s['load_dtype']} quant={q} peft={s.get('peft') or '-'} "
            f"{s['strategy']} {s['precision']}{extra}")


def user_files(s, d, vers):
    """The set-up as a user's files; returns dtypelint's arguments after the folder."""
    rec = [f"dtype: {s['load_dtype']}"] if s["load_dtype"] else []
    if s.get("model_init_kwargs"):
        rec.append("model_init_kwargs: {" + ", ".join(
            f"{k}: {v}" for k, v in s["model_init_kwargs"].items()) + "}")
    if s.get("trainer", "none") != "none" and s["precision"] != "fp32":
        rec.append(f"{s['precision']}: true")
    if s.get("quant") == "4bit":
        rec.append("load_in_4bit: true")
        if s.get("quant_storage"):  # none: the trainer's own default (boundaries.py)
            rec.append(f"bnb_4bit_quant_storage: {s['quant_storage']}")
    elif s.get("quant") == "8bit":
        rec.append("load_in_8bit: true")
    if s.get("peft"):
        # "targets": LoRA's target_modules apart from the architecture's (boundaries.py)
        targets = ", ".join(s.get("targets") or real_models.ARCHS[s["arch"]][3])
        # lora_dropout: the worker's LoraConfig takes PEFT's default, 0.0, not TRL's
        # ModelConfig default (0.05), which ParamWrapper would refuse (DT412)
        rec += ["use_peft: true", "lora_r: 4", "lora_dropout: 0.0",
                f"lora_target_modules: [{targets}]"]
        if s["peft"] == "dora":
            rec.append("use_dora: true")
        if s.get("lora_task_type"):
            rec.append(f"lora_task_type: {s['lora_task_type']}")
    if "beta" in s:
        rec.append(f"beta: {s['beta']}")
    if s.get("cast_lm_head_to_fp32"):
        rec.append("cast_lm_head_to_fp32: true")
    if not rec:
        # a recipe that sets nothing dtypelint reads (no dtype, adapter, quantization or
        # precision) still names its model, as every TRL recipe does; an empty file is
        # refused (DT001), rightly, and was once the oracle's own mistake (--wide #521)
        rec.append(f"model_name_or_path: {s['folder']}")
    args = []
    with open(os.path.join(d, "recipe.yaml"), "w") as f:
        f.write("\n".join(rec) + "\n")
    args += ["--trainer-args", os.path.join(d, "recipe.yaml")]
    mp = {"bf16": "bf16", "fp16": "fp16", "fp32": "no"}[s["precision"]]
    if s["strategy"] in ("fsdp1", "fsdp2") and s.get("trainer", "none") != "none":
        # a trainer in an FSDP world: the Trainer's own fsdp arguments, as real_worker.py's
        # _world_args passes them (no version with fsdp_version_unset: the Trainer's default)
        # (transformers < 4.40 wants the flags as strings: real_worker.py _fsdp_config_strings)
        version = "" if s.get("fsdp_version_unset") else \
            f", version: {1 if s['strategy'] == 'fsdp1' else 2}"
        t, f_ = ('"true"', '"false"') if re.match(r"4\.([0-9]|[1-3][0-9])\.",
                                                 vers["transformers"]) else ("true", "false")
        with open(os.path.join(d, "recipe.yaml"), "a") as f:
            f.write(f"fsdp: full_shard auto_wrap\nfsdp_config: {{use_orig_params: {t}, "
                    f"cpu_ram_efficient_loading: {f_}, sync_module_states: {f_}{version}}}\n")
    elif s["strategy"] in ("fsdp1", "fsdp2"):
        with open(os.path.join(d, "accelerate.yaml"), "w") as f:
            f.write("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\n"
                    f"mixed_precision: {mp}\nnum_processes: 2\nfsdp_config:\n"
                    f"  fsdp_version: {1 if s['strategy'] == 'fsdp1' else 2}\n"
                    "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
                    "  fsdp_use_orig_params: true\n  fsdp_cpu_ram_efficient_loading: false\n"
                    "  fsdp_sync_module_states: false\n")
        args += ["--accelerate", os.path.join(d, "accelerate.yaml")]
    elif s["strategy"] == "zero3":
        ds = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
              "zero_optimization": {"stage": 3}}
        if s["precision"] != "fp32":
            ds[s["precision"]] = {"enabled": True}
        ds = real_worker.ds_extra(ds, s)  # the worker's own ZeRO-3 config keys
        with open(os.path.join(d, "ds.json"), "w") as f:
            json.dump(ds, f, indent=1)
        args += ["--deepspeed", os.path.join(d, "ds.json")]
    plan = {"strategy": s["strategy"], "precision": s["precision"],
            "world_size": 1 if s["strategy"] == "single" else 2,
            "trainer": s.get("trainer", "none"),
            "versions": vers}
    if "tensor_overrides" in s:  # the script's zero.Init(tensor_overrides=...)
        plan["zero3"] = {"tensor_overrides": s["tensor_overrides"]}
    with open(os.path.join(d, "plan.yaml"), "w") as f:
        json.dump(plan, f)
    return args + ["--plan", os.path.join(d, "plan.yaml")]


TRACE = re.compile(r": trace: '(.*)' \((?:frozen|trainable|buffer|tied)\), "
                   r"stored (\w+)")
# one step of a --trace history: the stage, the stored dtype before and after
STEP = re.compile(r"^  (\S+)\s+(\w+) -> (\w+): ")
# dtypelint's stages in order (src/sim/trace.c); "manifest" is the declared dtype
SIM_STAGES = ("manifest", "load", "zero-init", "quantize", "kbit-prepare", "peft", "trainer",
              "engine", "shard", "compute")
# The last dtypelint stage each stage of real_worker.py has been through: "load" is
# from_pretrained (zero.Init, quantization), "peft" prepare_model_for_kbit_training and
# get_peft_model, "init" the trainer's __init__, "wrap" and "prepare" accelerate's prepare or
# deepspeed.initialize (engine and shard); "step", the forward that runs FSDP1's lazy init
# (the compute stage), is dtypelint's final answer.
REAL_STAGE_CUT = {"load": "quantize", "peft": "peft", "init": "trainer", "wrap": "shard",
                  "prepare": "shard"}


def trace_steps(text):
    """{tensor: [(stage, stored dtype after it), ...]} from dtypelint's --trace output."""
    steps, cur = {}, None
    for line in text.splitlines():
        m = TRACE.search(line)
        if m:
            cur = steps.setdefault(m.group(1), [])
            continue
        m = STEP.match(line)
        if m and cur is not None and m.group(1) in SIM_STAGES:
            cur.append((m.group(1), m.group(3)))
        elif not line.startswith("  "):
            cur = None
    return steps


def dtypes_as_of(t, real_stage):
    """dtypelint's stored dtypes as of the end of the stage real_stage of the real run maps
    to (REAL_STAGE_CUT): the dtype after the last step at or before it; a tensor with no
    step that early does not exist yet. Its final dtypes for "step" or an unknown stage."""
    cut = REAL_STAGE_CUT.get(real_stage)
    if cut is None:
        return t["dtypes"]
    last = SIM_STAGES.index(cut)
    out = {}
    for name, steps in t["steps"].items():
        done = [to for stage, to in steps if SIM_STAGES.index(stage) <= last]
        if done:
            out[name] = done[-1]
    return out


def lint(binary, folder, args, kbit_dir=None, units=False):
    if kbit_dir:
        # prepare_model_for_kbit_training is a manifest's adapter key (no recipe key asks for
        # it): the user's files composed and exported, with the key set, are the input
        man = os.path.join(kbit_dir, "manifest.json")
        subprocess.run([binary, "-q", "--no-config", folder] + args + ["--export", man],
                       capture_output=True, text=True)
        with open(man) as f:
            m = json.load(f)
        m.setdefault("adapter", {})["prepare_kbit_training"] = True
        with open(man, "w") as f:
            json.dump(m, f, indent=1)
        folder, args = man, []
    run = subprocess.run([binary, "-f", "json", "-q", "--no-config", "--trace", "**", folder] +
                         args, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        # with -f json the refusal (DT001) is in the report on standard output
        return {"failed": (run.stderr.strip() or run.stdout.strip())[-800:]}
    report = json.loads(run.stdout)
    crash = [f for f in report["findings"]
             if f["severity"] == "error" and f.get("framework_error")]
    dtypes = {m.group(1): m.group(2) for m in TRACE.finditer(run.stderr)}
    err = crash[0]["framework_error"]["text"] if crash else None
    return {"error": err, "rule": crash[0]["rule"] if crash else None, "dtypes": dtypes,
            "steps": trace_steps(run.stderr),
            "units": lint_units(binary, folder, args) if units else None}


# a row of the groups table of dtypelint's HTML report (src/report/html.c groups_table): the
# one output that lists every FSDP unit or group (JSON names only a finding's group)
GROUP_ROW = re.compile(r'<tr id="g\d+-\d+"><td>(FSDP1 unit|FSDP2 group)<td>\d+<td>(?:<a [^>]*>)?'
                       r'(.*?)(?:</a>)?<td>(\d+)<td>([^<]*)')
SHORT = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f64": "float64",
         "u8": "uint8", "i8": "int8", "f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2"}


def lint_units(binary, folder, args):
    """dtypelint's FSDP units / groups: {(module, ...): (tensor count, stored dtypes)}, from
    its HTML report (None if it lists fewer than all: a "more groups" row, a cut name)."""
    run = subprocess.run([binary, "-f", "html", "-q", "--no-config", folder] + args,
                         capture_output=True, text=True)
    page = run.stdout
    i = page.find("<h3>Groups</h3>")
    table = page[i:page.find("</table>", i)] if i >= 0 else ""
    if " more group" in table:
        return None
    out = {}
    for kind, name, count, dts in GROUP_ROW.findall(table):
        name = html.unescape(name)
        if name.startswith("\u2026"):
            return None
        mods = tuple(sorted("" if m == "<root>" else m for m in name.split("+")))
        if int(count):  # a root that keeps no tensor has no group in torch
            out[mods] = (int(count), "/".join(sorted(SHORT.get(d, d)
                                                     for d in dts.strip().split("+") if d)))
    return out


def compare_units(r, t):
    """A note, no criterion: the FSDP units the real prepare made (real_worker.py units)
    against dtypelint's; None when either side has none; else the differences (empty:
    the same modules wrapped, each with as many parameters and the same stored dtypes)."""
    if r.get("units") is None or t.get("units") is None:
        return None
    real = {tuple(sorted(u["module"].split("+"))):
            (len(u["params"]), "/".join(sorted(u["dtype"].split("/")))) for u in r["units"]}
    lint_ = t["units"]
    out = []
    for mods in sorted(set(real) | set(lint_)):
        a, b = real.get(mods), lint_.get(mods)
        name = "+".join(mods) or "<root>"
        if a is None:
            out.append(f"{name}: dtypelint only ({b[0]} tensors)")
        elif b is None:
            out.append(f"{name}: real only ({a[0]} params)")
        elif a != b:
            out.append(f"{name}: real {a[0]} params {a[1]}, dtypelint {b[0]} {b[1]}")
    return out


def worker_spec(s, port):
    return dict(s, folder=s["folder"], auto_class=real_models.ARCHS[s["arch"]][1],
                targets=s.get("targets") or real_models.ARCHS[s["arch"]][3], port=port,
                quant_storage=s.get("quant_storage", "uint8"))


def batch_trainers(py, todo):
    """Runs the trainer set-ups TODO ([(set-up, folder)], strategy single) in one worker
    process (real_worker.py --batch): their real.json is then there for real(reuse=True)."""
    argv = []
    for s, d in todo:
        with open(os.path.join(d, "spec.json"), "w") as f:
            json.dump(worker_spec(s, 0), f)
        out = os.path.join(d, "real.json")
        if os.path.exists(out):
            os.unlink(out)
        argv += [os.path.join(d, "spec.json"), out]
    if not argv:
        return
    with open(os.path.join(todo[0][1], "batch.log"), "w") as log:
        try:
            subprocess.run([py, os.path.join(HERE, "real_worker.py"), "--batch"] + argv,
                           stdout=log, stderr=log, timeout=600 + 60 * len(todo))
        except subprocess.TimeoutExpired:
            pass  # the set-ups without a result run one by one


def real(py, s, d, port, reuse=False):
    spec = worker_spec(s, port)
    out = os.path.join(d, "real.json")
    old = os.path.join(d, "spec.json")
    if reuse and os.path.exists(out) and os.path.exists(old):
        with open(old) as f:
            same = {k: v for k, v in json.load(f).items() if k != "port"} == \
                {k: v for k, v in spec.items() if k != "port"}
        if same:
            with open(out) as f:
                return json.load(f)
    with open(old, "w") as f:
        json.dump(spec, f)
    if os.path.exists(out):
        os.unlink(out)
    with open(os.path.join(d, "real.log"), "w") as log:
        try:
            subprocess.run([py, os.path.join(HERE, "real_worker.py"),
                            os.path.join(d, "spec.json"), out], stdout=log, stderr=log,
                           timeout=600)
        except subprocess.TimeoutExpired:
            return {"error": {"stage": "?", "type": "Timeout", "message": "ran past 600 s"},
                    "stages": {}}
    if not os.path.exists(out):
        return {"error": {"stage": "?", "type": "WorkerDied",
                          "message": f"no result (see {d}/real.log)"}, "stages": {}}
    with open(out) as f:
        return json.load(f)


def known_cpu(err, t=None):
    """Why a set-up is left out: the real run's ERR is the CPU's own (KNOWN_CPU), or the real
    run completes where dtypelint's answer T predicts an error only a GPU raises (KNOWN_GPU);
    None when it is compared."""
    for typ, pat, why, src in KNOWN_CPU:
        if err and err["type"] == typ and re.search(pat, err["message"]):
            return f"{why} ({src})"
    for rule, why, src in KNOWN_GPU:
        if not err and t and t.get("rule") == rule:
            return f"{rule} on a GPU: {why} ({src})"
    return None


# a wrapped module's own parameter: NAME.base_layer.LEAF (lora.Linear) or, for LoRA
# target_parameters, NAME.base_layer.base_layer.LEAF (one ParamWrapper per parameter, nested);
# an inner ParamWrapper's LoRA tensors keep their NAME.base_layer.lora_A... (dtypelint names
# them so: DISAGREEMENTS.md D48)
BASE_LAYER = re.compile(r"(\.base_layer)+\.(?!lora_)")


def peft_name(n):
    """A real tensor's name as a manifest keeps it: PEFT's wrappers left out."""
    return BASE_LAYER.sub(".", n)


def compare(r, t, tally, arch, quant=None):
    """Differences between the real run R and dtypelint's answer T (empty: they agree);
    TALLY counts the set-ups that agree on each criterion."""
    diffs = []
    rerr = r.get("error")
    if (rerr is None) != (t["error"] is None):
        tag = next((k for typ, pat, k in KNOWN_VERDICT if rerr and not t["error"] and
                    rerr["type"] == typ and re.search(pat, rerr["message"])), None)
        diffs.append("verdict: real " + (f"{rerr['type']} at {rerr['stage']}: "
                                         f"{rerr['message'][:160]}" if rerr else "runs") +
                     "; dtypelint " + (f"{t['rule']}: {t['error'][:160]}" if t["error"]
                                       else "silent") +
                     (f" (known: {tag})" if tag else ""))
    else:
        tally["verdict"] += 1
        ttype = t["error"].split(":")[0].strip() if t["error"] else None
        if rerr is not None and ttype != rerr["type"]:
            diffs.append(f"error type: real {rerr['type']}: {rerr['message'][:160]}; "
                         f"dtypelint {t['rule']}: {t['error'][:160]}")
        else:
            tally["error type"] += 1
    stages = r.get("stages", {})
    # PEFT moves a wrapped weight to NAME.base_layer.weight (a LoRA layer) or
    # NAME.original_module.weight (modules_to_save); a manifest keeps NAME.weight
    last = dict(stages[list(stages)[-1]]) if stages else {}
    if r.get("wrapped") == "FullyShardedDataParallel" and list(stages)[-1:] == ["step"]:
        # FSDP1 re-points a unit's parameters, views into its FlatParameter, when the unit
        # runs its forward: a unit the step never ran (a vision tower under a text-only
        # step) still shows views of the flat parameter as it was before prepare upcast it
        # in place. The optimizer updates the FlatParameter, so its dtype is the
        # parameter's (D9; real_worker.py units(), recorded after prepare).
        for u in r.get("units") or []:
            for n in u["params"]:
                if n in last and "/" not in u["dtype"]:
                    last[n] = u["dtype"]
    final = {peft_name(n).replace(".original_module.", "."): v for n, v in last.items()}
    # a real run that stopped early is compared with dtypelint as of the same stage (D11)
    t = dict(t, dtypes=dtypes_as_of(t, list(stages)[-1] if stages else "step"))
    missing = sorted(set(final) - set(t["dtypes"]))
    if missing:
        tags = {next((d for p, d in KNOWN_MISSING if re.search(p, n)),
                     KNOWN_RENAMED.get(arch)) for n in missing}
        known = "" if None in tags else f" (known: {', '.join(sorted(tags))})"
        diffs.append(f"{len(missing)} real tensors dtypelint does not list{known}: " +
                     ", ".join(missing[:4]))
    else:
        tally["every tensor listed"] += 1
    both = sorted(set(final) & set(t["dtypes"]))
    bad = [f"{n}: real {final[n]}, dtypelint {t['dtypes'][n]}" for n in both
           if final[n] != t["dtypes"][n]]
    if bad:
        tags = {next((k[3] for k in KNOWN_DTYPE if re.search(k[0], n) and
                      re.search(k[1], final[n]) and re.search(k[2], t["dtypes"][n]) and
                      (len(k) < 5 or k[4] == quant)), None)
                for n in both if final[n] != t["dtypes"][n]}
        known = "" if None in tags else f" (known: {', '.join(sorted(tags))})"
        diffs.append(f"{len(bad)} of {len(both)} final dtypes differ{known}: " +
                     "; ".join(bad[:4]))
    else:
        tally["final dtypes"] += 1
    tally["tensors compared"] += len(both)
    tally["tensors differing"] += len(bad)
    return diffs, len(both)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dtypelint")
    ap.add_argument("python")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--fast", action="store_true")
    g.add_argument("--corpus", action="store_true")
    g.add_argument("--trainers", action="store_true",
                   help="only the trainers' own steps (TRAINERS and TRAINERS_MORE; --fast "
                        "includes TRAINERS)")
    g.add_argument("--random", type=int, metavar="N")
    g.add_argument("--wide", type=int, metavar="N",
                   help="N random set-ups of the widened space (trainers, QLoRA under FSDP, "
                        "prepare_model_for_kbit_training, model_init_kwargs)")
    ap.add_argument("--budget", type=float, default=0, metavar="SECONDS",
                    help="start no set-up after SECONDS (0: no limit); the table covers "
                         "those run")
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--only", default=None, help="regex on the set-up label")
    ap.add_argument("--stored-only", action="store_true",
                    help="with --reuse: skip the set-ups that have no stored real run")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the real run a set-up's folder already holds (same spec): "
                         "re-lints only, e.g. after a change to dtypelint")
    a = ap.parse_args()
    if not os.access(a.python, os.X_OK):
        msg = f"no venv python at {a.python} (sh tools/venv.sh build/venv makes it)"
        if os.environ.get("DTL_REQUIRE_VENV") == "1":
            print(f"FAIL: {msg}, and DTL_REQUIRE_VENV=1")
            return 1
        print(f"SKIP: {msg}")
        return 77
    work = os.path.abspath(a.workdir or os.path.join(os.path.dirname(os.path.abspath(
        a.dtypelint)), "oracle-real"))
    os.makedirs(os.path.join(work, "models"), exist_ok=True)
    # DeepSpeed builds its CPU ops (deepspeed_shm_comm) under TORCH_EXTENSIONS_DIR; a build
    # killed in the shared ~/.cache leaves a lock that makes every later ZeRO-3 run wait for
    # ever (seen: a 600 s timeout). The oracle's own folder keeps other runs' locks out.
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(work, "torch_extensions"))
    setups = FAST + TRAINERS if a.fast else TRAINERS + TRAINERS_MORE if a.trainers else \
        random_setups(a.random, a.seed) if a.random else \
        wide_setups(a.wide, a.seed) if a.wide else \
        corpus_setups() if a.corpus else FAST + TRAINERS + corpus_setups()
    if a.only:
        setups = [s for s in setups if re.search(a.only, label(s))]
    vers = versions(a.python)
    archs = sorted({s["arch"] for s in setups})
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import real_models as m\n"
            "for a in sys.argv[3:]: m.build(a, sys.argv[2] + '/' + a)")
    subprocess.run([a.python, "-c", code, HERE, os.path.join(work, "models")] + archs,
                   check=True, capture_output=True)
    rows, agree, agree_known, compared, cpu_only = [], 0, 0, 0, []
    units_seen = units_same = 0
    tally = dict.fromkeys(("verdict", "error type", "final dtypes", "every tensor listed",
                           "tensors compared", "tensors differing"), 0)
    tag = "fast" if a.fast else "trainers" if a.trainers else \
        f"random-{a.seed}" if a.random else f"wide-{a.seed}" if a.wide else "corpus"
    start = time.time()
    # the trainer set-ups on one device share a worker process (imports paid once), ten at a
    # time: the first of a chunk runs it
    pending = [i for i, s in enumerate(setups)
               if s.get("trainer", "none") != "none" and s["strategy"] == "single"]
    batched = set()
    for i, s in enumerate(setups):
        if a.budget and time.time() - start > a.budget and not a.stored_only:
            print(f"budget of {a.budget:.0f} s spent: {len(setups) - i} set-ups not run",
                  flush=True)
            break
        d = os.path.join(work, "runs", tag, f"{i:04d}")
        os.makedirs(d, exist_ok=True)
        s = dict(s, folder=os.path.join(work, "models", s["arch"]))
        if a.stored_only and not os.path.exists(os.path.join(d, "real.json")):
            continue
        t0 = time.time()
        if i in pending and i not in batched and not a.stored_only:
            chunk = []
            for j in pending[pending.index(i):]:
                dj = os.path.join(work, "runs", tag, f"{j:04d}")
                if a.reuse and os.path.exists(os.path.join(dj, "real.json")):
                    continue
                os.makedirs(dj, exist_ok=True)
                chunk.append((dict(setups[j], folder=os.path.join(work, "models",
                                                                  setups[j]["arch"])), dj))
                batched.add(j)
                if len(chunk) == 10:
                    break
            batch_trainers(a.python, chunk)
        r = real(a.python, s, d, 29500 + (os.getpid() + i) % 2000, a.reuse or i in batched)
        t = lint(a.dtypelint, s["folder"], user_files(s, d, vers), d if s.get("kbit") else None,
                 units=s["strategy"] in ("fsdp1", "fsdp2"))
        secs = time.time() - t0
        if "failed" in t:
            diffs, n = [f"dtypelint refused the set-up: {t['failed']}"], 0
        else:
            why = known_cpu(r.get("error"), t)
            if why:
                cpu_only.append((label(s), why))
                print(f"{i:4d} CPU   {label(s)}  ({why})", flush=True)
                continue
            diffs, n = compare(r, t, tally, s["arch"], s.get("quant"))
        compared += 1
        agree += not diffs
        open_only = [x for x in diffs if " (known: " not in x]
        agree_known += bool(diffs) and not open_only
        rerr = r.get("error")
        verdict = f"{rerr['type']}" if rerr else "runs"
        mark = "ok  " if not diffs else "open" if not open_only else "DIFF"
        print(f"{i:4d} {mark}  {label(s)}  real: {verdict}; "
              f"{n} tensors; {secs:.0f} s", flush=True)
        for x in diffs:
            print(f"        {x}", flush=True)
        unit_diffs = compare_units(r, t)
        if unit_diffs is not None:
            units_seen += 1
            units_same += not unit_diffs
            for x in unit_diffs:
                print(f"        note, units: {x}", flush=True)
        rows.append((label(s), not diffs, diffs))
    print(f"\n{'criterion':<22} set-ups agreeing (of {compared})")
    for k in ("verdict", "error type", "final dtypes", "every tensor listed"):
        print(f"{k:<22} {tally[k]}")
    print(f"{'tensors':<22} {tally['tensors compared'] - tally['tensors differing']} of "
          f"{tally['tensors compared']} final dtypes agree")
    print(f"\nagreement: {agree} of {compared} set-ups agree in everything; "
          f"{agree + agree_known} of {compared} but for the open disagreements of "
          f"DISAGREEMENTS.md ({len(cpu_only)} left out: the CPU cannot run them as a GPU "
          "would)")
    for lab, why in cpu_only:
        print(f"  CPU-only: {lab}: {why}")
    if units_seen:
        print(f"FSDP units (a note, no criterion): {units_same} of {units_seen} set-ups that "
              "reached prepare wrap the same modules as dtypelint")
    return 0 if agree + agree_known == compared else 1


if __name__ == "__main__":
    sys.exit(main())
