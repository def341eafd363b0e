#!/usr/bin/env python3
"""The trainers users launch as the judge: LLaMA-Factory and axolotl against dtypelint.

Usage: trainer_apps.py DTYPELINT [--lf PYTHON] [--axolotl PYTHON] [--only REGEX] [--fast]
                       [--workdir DIR] [--reuse]
PYTHON is the python of a trainer's own venv (`sh tools/venv.sh build/venv-llamafactory
llamafactory`, `sh tools/venv.sh build/venv-axolotl axolotl`; the defaults are those paths).
Each set-up is a small real model (tests/oracle/real_models.py, saved by the trainer venv's
own transformers, with a word-level tokenizer) and a recipe: the dict the trainer's own
argument parsing takes (LLaMA-Factory `get_train_args`, axolotl `validate_config` +
`normalize_config`), then its own model loading (LLaMA-Factory `load_tokenizer` +
`load_model`, axolotl `ModelLoader.load`), run by tests/oracle/trainer_apps_worker.py on the
CPU. The same recipe is written as the user's YAML and linted as a user would lint it:
`dtypelint FOLDER --trainer-args RECIPE.yaml --plan PLAN` (the plan names the venv's versions
and strategy single), and once more through the launch script of the trainer's docs
(`llamafactory-cli train RECIPE.yaml`, `axolotl train RECIPE.yaml`: `--launch train.sh`), which
must give the same answer. They agree when the verdict (the trainer refuses or loads), the error's
type, and every tensor's final dtype and requires_grad both sides name are the same.
Real refusals that come from running on the CPU (CPU_ONLY below, each with its source) are
listed apart. Prints the agreement table; exit 0 when every compared set-up agrees but for
the open disagreements of DISAGREEMENTS.md (KNOWN below), 1 otherwise; 77 (skip) when no
trainer venv is there, unless DTL_REQUIRE_TRAINER_VENV=1 (then 1)."""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# LLaMA-Factory recipes (the keys of its YAML); the model path and the keys every run needs
# are added. "lf-" labels.
LF_BASE = {"stage": "sft", "do_train": True, "dataset": "identity", "template": "default",
           "report_to": "none"}
LF = [
    ("llama", {"finetuning_type": "lora", "lora_target": "q_proj,v_proj", "bf16": True}),
    ("llama", {"finetuning_type": "lora", "lora_target": "all", "fp16": True}),
    ("llama", {"finetuning_type": "lora", "lora_target": "q_proj,v_proj"}),
    ("llama", {"finetuning_type": "full", "bf16": True}),
    ("llama", {"finetuning_type": "freeze", "bf16": True}),
    ("llama", {"finetuning_type": "freeze", "fp16": True, "freeze_trainable_layers": 1,
               "freeze_trainable_modules": "mlp"}),
    ("qwen2", {"finetuning_type": "lora", "lora_target": "all", "bf16": True,
               "quantization_bit": 4}),
    ("qwen2", {"finetuning_type": "lora", "lora_target": "q_proj,v_proj", "fp16": True,
               "quantization_bit": 8}),
    ("qwen2", {"finetuning_type": "full", "bf16": True, "quantization_bit": 4}),
    ("qwen2", {"finetuning_type": "qlora", "bf16": True}),
    ("qwen2", {"finetuning_type": "lora", "lora_target": "q_proj,v_proj", "bf16": True,
               "upcast_layernorm": True}),
    ("llama", {"finetuning_type": "lora", "lora_target": "q_proj,v_proj", "pure_bf16": True}),
    ("qwen2-vl", {"finetuning_type": "full", "bf16": True}),
    ("qwen2-vl", {"finetuning_type": "full", "bf16": True, "freeze_vision_tower": False}),
    ("qwen2-vl", {"finetuning_type": "full", "bf16": True, "freeze_multi_modal_projector": False,
                  "freeze_language_model": True}),
    ("qwen2-vl", {"finetuning_type": "lora", "lora_target": "all", "bf16": True}),
    ("llava", {"finetuning_type": "full", "bf16": True}),
    ("gemma3-vl", {"finetuning_type": "full", "bf16": True}),
    ("qwen3-vl", {"finetuning_type": "full", "fp16": True}),
    # L3: LoRA on a composite model, the vision tower trained (patch_target_modules still
    # drops the projector and patch_embed), and a list target the CLIP tower also has
    ("qwen2-vl", {"finetuning_type": "lora", "lora_target": "all", "bf16": True,
                  "freeze_vision_tower": False}),
    ("llava", {"finetuning_type": "lora", "lora_target": "q_proj,v_proj", "bf16": True}),
]

# axolotl recipes; "axolotl-" labels. base_model and the keys its validation needs are added.
AXO_BASE = {"datasets": [{"path": "tatsu-lab/alpaca", "type": "alpaca"}], "sequence_len": 64,
            "micro_batch_size": 1, "gradient_accumulation_steps": 1, "num_epochs": 1,
            "learning_rate": 0.0001, "optimizer": "adamw_torch"}
AXO = [
    ("llama", {"adapter": "lora", "lora_r": 4, "lora_alpha": 8,
               "lora_target_modules": ["q_proj", "v_proj"], "bf16": True}),
    ("llama", {"adapter": "qlora", "load_in_4bit": True, "lora_r": 4, "lora_alpha": 8,
               "lora_target_linear": True, "bf16": True}),
    ("llama", {"adapter": "qlora", "load_in_4bit": True, "lora_r": 4, "lora_alpha": 8,
               "lora_target_linear": True, "fp16": True}),
    ("llama", {"bf16": True}),
    ("llama", {"fp16": True}),
    ("llama", {}),
    ("qwen2", {"adapter": "lora", "load_in_8bit": True, "lora_r": 4, "lora_alpha": 8,
               "lora_target_modules": ["q_proj", "v_proj"], "fp16": True}),
    ("qwen2", {"adapter": "lora", "lora_r": 4, "lora_alpha": 8, "lora_target_linear": True}),
    ("qwen2", {"adapter": "qlora", "lora_r": 4, "lora_alpha": 8, "lora_target_linear": True,
               "bf16": True}),
    ("qwen2", {"adapter": "lora", "lora_r": 4, "lora_alpha": 8, "lora_target_linear": True,
               "bf16": True, "fp16": True}),
]

# Real refusals that come from the CPU, not from the set-up: (type, message regex, why).
CPU_ONLY = [
    ("ValueError", r"^This device does not support `pure_bf16`",
     "LLaMA-Factory's get_train_args asks is_torch_bf16_gpu_available(); a bf16 GPU passes "
     "(https://github.com/hiyouga/LLaMA-Factory/blob/v0.9.5/src/llamafactory/hparams/"
     "parser.py)"),
]

# Errors dtypelint predicts that only a GPU raises: (rule, why). A set-up the real run on the
# CPU loads and dtypelint fails this way is CPU-only, not compared (D15).
GPU_ONLY = [
    ("DT141", "accelerate builds fp16's GradScaler only off the CPU, whose unscale_ refuses "
     "float16 gradients (https://github.com/huggingface/accelerate/blob/v1.15.0/src/"
     "accelerate/accelerator.py)"),
]

# Open disagreements of DISAGREEMENTS.md ("LLaMA-Factory and axolotl"): set-up label regex
# -> tag. A set-up listed here still prints its differences; it does not fail the run.
# None open since L3 and L4 (2026-11-28).
KNOWN = {}

# The subset the meson test runs (suite oracle-trainers): the set-ups of the fixed
# disagreements L1, L2, L5 and a QLoRA load of each trainer, by index in LF / AXO.
FAST = {"lf": (6, 8, 12), "axolotl": (1, 8)}

TRACE = re.compile(r": trace: '(.*)' \((frozen|trainable|buffer|tied)\), "
                   r"stored (\w+)")
QUOTED = re.compile(r"'([A-Za-z]+(?:Error|Exception)): (.*)'$")
# a tied weight's trace: dtypelint lists it with its partner's history; named_parameters()
# yields the shared Parameter once, under its first name
TIED = re.compile(r"tied to '([^']+)', the same Parameter")


def label(kind, arch, args):
    keys = " ".join(f"{k}={v}" for k, v in args.items() if k not in ("lora_alpha",))
    return f"{kind} {arch} {keys}"


def venv_versions(py):
    code = ("import importlib.metadata as m, json\nout = {}\n"
            "for n in ('torch','transformers','peft','accelerate','trl','bitsandbytes',"
            "'deepspeed'):\n    try: out[n] = m.version(n).split('+')[0]\n"
            "    except m.PackageNotFoundError: pass\nprint(json.dumps(out))")
    run = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def yaml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(yaml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {yaml_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def user_files(d, kind, folder, args, vers):
    """The recipe as the user's YAML (as the trainer's docs write it, for a GPU: no use_cpu)
    and a plan naming the trainer venv's versions; returns dtypelint's arguments."""
    rec = dict(LF_BASE if kind == "lf" else AXO_BASE)
    rec["model_name_or_path" if kind == "lf" else "base_model"] = folder
    rec.update(args)
    rec["output_dir"] = os.path.join(d, "out")
    with open(os.path.join(d, "recipe.yaml"), "w") as f:
        for k, v in rec.items():
            f.write(f"{k}: {yaml_value(v)}\n")
    plan = {"strategy": "single", "world_size": 1, "versions": vers}
    with open(os.path.join(d, "plan.yaml"), "w") as f:
        json.dump(plan, f)
    # the same recipe launched as its docs launch it, for `dtypelint --launch train.sh`
    with open(os.path.join(d, "train.sh"), "w") as f:
        f.write("#!/bin/sh\n" + ("llamafactory-cli train" if kind == "lf" else
                                  "axolotl train") + " recipe.yaml\n")
    return rec, ["--trainer-args", os.path.join(d, "recipe.yaml"),
                 "--plan", os.path.join(d, "plan.yaml")]


def lint(binary, folder, args, arch):
    run = subprocess.run([binary, "-f", "json", "-q", "--no-config", "--trace", "**", folder] +
                         args, capture_output=True, text=True)
    try:
        report = json.loads(run.stdout)
    except ValueError:
        return {"exit": run.returncode, "error": None, "stderr": run.stderr.strip()[-600:],
                "dtypes": {}}
    err = rule = None
    crash = [f for f in report["findings"]
             if f["severity"] == "error" and f.get("framework_error")]
    refused = [f for f in report["findings"] if f["rule"] == "DT001"]
    if crash:
        text = crash[0]["framework_error"]["text"]
        err, rule = text.split(":", 1) if ":" in text else (text, ""), crash[0]["rule"]
    elif refused:
        # an input error: a trainer's own refusal quotes the trainer's exception
        m = QUOTED.search(refused[0]["message"])
        err = (m.group(1), m.group(2)) if m else ("input error", refused[0]["message"])
        rule = "DT001"
    heads = list(TRACE.finditer(run.stderr))
    dtypes, ties = {}, {}
    for i, m in enumerate(heads):
        # a buffer, or a tied name (the partner's Parameter), has no requires_grad of its own
        dtypes[m.group(1)] = (m.group(3), None if m.group(2) in ("buffer", "tied") else
                              m.group(2) == "trainable")
        tie = TIED.search(run.stderr, m.end(),
                          heads[i + 1].start() if i + 1 < len(heads) else len(run.stderr))
        if tie:
            ties[m.group(1)] = tie.group(1)
    return {"exit": run.returncode, "error": [e.strip() for e in err] if err else None,
            "dtypes": dtypes, "ties": ties, "rule": rule}


def gpu_auto(r, kind, args):
    """axolotl's bf16 "auto" (its default when neither bf16 nor fp16 is set): resolve_dtype
    makes it bf16 on a GPU with bf16 and fp16 on the CPU (is_torch_bf16_gpu_available(),
    utils/config/__init__.py#L163-L203 at
    https://github.com/axolotl-ai-cloud/axolotl/blob/v0.19.0/src/axolotl/).
    dtypelint predicts the GPU: the CPU's float16 tensors are compared as bfloat16."""
    if kind != "axolotl" or "bf16" in args or "fp16" in args or r.get("error"):
        return r
    load = {n: ["bfloat16" if v[0] == "float16" else v[0], v[1]]
            for n, v in r["stages"].get("load", {}).items()}
    return dict(r, stages={"load": load})


TALLY = {"tensors compared": 0, "tensors differing": 0}


def show(v):
    """(dtype, requires_grad or None for a buffer) as words"""
    return v[0] + ("" if v[1] is None else " trainable" if v[1] else " frozen")


def compare(r, t):
    """Differences between the real run R and dtypelint's answer T (empty: they agree)."""
    diffs = []
    rerr = r.get("error")
    if (rerr is None) != (t["error"] is None):
        diffs.append("verdict: real " + (f"{rerr['type']} at {rerr['stage']}: "
                                         f"{rerr['message'][:200]}" if rerr else "loads") +
                     "; dtypelint " + (f"{t['error'][0]}: {t['error'][1][:200]}" if t["error"]
                                       else "exit %d %s" % (t["exit"], t.get("stderr", "")[-300:])
                                       if t["exit"] == 2 else "silent"))
        return diffs
    if rerr is not None:
        if t["error"][0] != rerr["type"]:
            diffs.append(f"error type: real {rerr['type']}: {rerr['message'][:200]}; "
                         f"dtypelint {t['error'][0]}: {t['error'][1][:200]}")
        elif t["error"][1].rstrip(".") not in rerr["message"]:
            diffs.append(f"error message: real {rerr['message'][:200]!r}; dtypelint "
                         f"{t['error'][1][:200]!r}")
        return diffs
    final = r["stages"].get("load", {})
    missing = sorted(set(final) - set(t["dtypes"]))
    if missing:
        diffs.append(f"{len(missing)} real tensors dtypelint does not list: " +
                     ", ".join(missing[:5]))
    # a tie real lists once: the second name is the partner's Parameter (its dtype must be
    # the partner's; dtypelint's trace prints a tie without requires_grad, as "tied")
    extra = sorted(n for n in set(t["dtypes"]) - set(final)
                   if not (t.get("ties", {}).get(n) in final and
                           t["dtypes"][n][0] == final[t["ties"][n]][0]))
    if extra:
        diffs.append(f"{len(extra)} tensors dtypelint lists that the real model lacks: " +
                     ", ".join(extra[:5]))
    both = sorted(set(final) & set(t["dtypes"]))
    bad = [f"{n}: real {show(final[n])}, dtypelint {show(t['dtypes'][n])}"
           for n in both if tuple(final[n]) != tuple(t["dtypes"][n])]
    TALLY["tensors compared"] += len(both)
    TALLY["tensors differing"] += len(bad)
    if bad:
        diffs.append(f"{len(bad)} of {len(both)} tensors differ (dtype, requires_grad): " +
                     "; ".join(bad[:6]))
    return diffs


def cpu_only(err, t=None):
    """Why a set-up is not compared: the real run's ERR is the CPU's own (CPU_ONLY), or it
    loads where dtypelint's answer T predicts an error only a GPU raises (GPU_ONLY)."""
    for typ, pat, why in CPU_ONLY:
        if err and err["type"] == typ and re.search(pat, err["message"]):
            return why
    for rule, why in GPU_ONLY:
        if not err and t and t.get("rule") == rule:
            return f"{rule} on a GPU: {why}"
    return None


def run_trainer(kind, py, binary, work, only, reuse, fast):
    setups = LF if kind == "lf" else AXO
    vers = venv_versions(py)
    models = os.path.join(work, kind, "models")
    todo, rows = [], []
    for i, (arch, args) in enumerate(setups):
        lab = label(kind, arch, args)
        if (only and not re.search(only, lab)) or (fast and i not in FAST[kind]):
            continue
        folder = os.path.join(models, arch)
        if not os.path.exists(os.path.join(folder, "tokenizer.json")):
            subprocess.run([py, os.path.join(HERE, "trainer_apps_worker.py"), "build", folder,
                            arch], check=True, capture_output=True)
        d = os.path.join(work, kind, "runs", f"{i:02d}-{arch}")
        os.makedirs(d, exist_ok=True)
        rec, dargs = user_files(d, kind, folder, args, vers)
        # the real run on the CPU: use_cpu (LLaMA-Factory: TrainingArguments refuses bf16 on
        # a CPU without it); a fresh output_dir (it refuses a non-empty one)
        real_args = dict(rec, output_dir=os.path.join(d, "out-real"))
        if kind == "lf":
            real_args["use_cpu"] = True
        spec = {"args": real_args}
        with open(os.path.join(d, "spec.json"), "w") as f:
            json.dump(spec, f, indent=1)
        out = os.path.join(d, "real.json")
        if not (reuse and os.path.exists(out)):
            if os.path.exists(out):
                os.unlink(out)
            todo += [os.path.join(d, "spec.json"), out]
        rows.append((lab, d, folder, dargs, arch, args))
    if todo:
        with open(os.path.join(work, kind, "worker.log"), "w") as log:
            subprocess.run([py, os.path.join(HERE, "trainer_apps_worker.py"),
                            "lf" if kind == "lf" else "axolotl"] + todo,
                           stdout=log, stderr=log, timeout=300 + 120 * len(todo) // 2)
    results = []
    for lab, d, folder, dargs, arch, args in rows:
        out = os.path.join(d, "real.json")
        if not os.path.exists(out):
            results.append((lab, d, None, None, ["no real result (see worker.log)"]))
            continue
        with open(out) as f:
            r = json.load(f)
        t = lint(binary, folder, dargs, arch)
        with open(os.path.join(d, "dtypelint.json"), "w") as f:
            json.dump(t, f, indent=1)
        # the launch script names the same recipe: dtypelint must read it alike
        launch = lint(binary, folder, ["--launch", os.path.join(d, "train.sh")] + dargs[2:],
                      arch)
        why = cpu_only(r.get("error"), t)
        r = gpu_auto(r, kind, args)
        diffs = None if why else compare(r, t)
        if diffs is not None and (launch["error"] != t["error"] or
                                  launch["dtypes"] != t["dtypes"]):
            diffs.append("`--launch train.sh` is linted differently from `--trainer-args`: "
                         f"{launch.get('error')} / {len(launch['dtypes'])} tensors")
        results.append((lab, d, r, t, diffs, why))
    return vers, results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dtypelint")
    ap.add_argument("--lf", default=os.path.join(ROOT, "build", "venv-llamafactory", "bin",
                                                 "python"))
    ap.add_argument("--axolotl", default=os.path.join(ROOT, "build", "venv-axolotl", "bin",
                                                      "python"))
    ap.add_argument("--workdir", default=os.path.join(ROOT, "build", "oracle-trainers"))
    ap.add_argument("--only", default=None, help="regex on the set-up label")
    ap.add_argument("--fast", action="store_true", help="only the FAST subset")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the real runs the work folder holds: re-lints only")
    a = ap.parse_args()
    have = [(k, p) for k, p in (("lf", a.lf), ("axolotl", a.axolotl)) if os.access(p, os.X_OK)]
    if not have:
        msg = (f"no trainer venv at {a.lf} or {a.axolotl} (sh tools/venv.sh "
               "build/venv-llamafactory llamafactory; sh tools/venv.sh build/venv-axolotl "
               "axolotl)")
        if os.environ.get("DTL_REQUIRE_TRAINER_VENV") == "1":
            print(f"FAIL: {msg}, and DTL_REQUIRE_TRAINER_VENV=1")
            return 1
        print(f"SKIP: {msg}")
        return 77
    bad = 0
    total = agree = listed = known = 0
    for kind, py in have:
        vers, results = run_trainer(kind, py, a.dtypelint, a.workdir, a.only, a.reuse,
                                      a.fast)
        print(f"== {kind}: {' '.join(f'{k} {v}' for k, v in vers.items())}")
        for lab, d, r, t, diffs, *why in results:
            total += 1
            real = "loads" if r and not r.get("error") else \
                f"{r['error']['type']} at {r['error']['stage']}" if r else "?"
            if why and why[0]:
                listed += 1
                print(f"CPU-ONLY {lab}: real {real}: {why[0]}")
                continue
            tag = next((v for k, v in KNOWN.items() if re.search(k, lab)), None)
            if not diffs:
                agree += 1
                print(f"AGREE    {lab}: {real}")
                continue
            if tag:
                known += 1
            else:
                bad += 1
            print(f"{'KNOWN ' + tag if tag else 'DISAGREE'} {lab} ({d}): real {real}")
            for x in diffs:
                print(f"    {x}")
    print(f"agreement: {agree} of {total - listed} set-ups agree ({known} more but for an "
          f"open disagreement of DISAGREEMENTS.md; {listed} CPU-only, not compared)")
    print(f"tensors: {TALLY['tensors compared'] - TALLY['tensors differing']} of "
          f"{TALLY['tensors compared']} agree in dtype and requires_grad (of the set-ups "
          "that load on both sides)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
