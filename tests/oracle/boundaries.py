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
Each behaviour's `oracle:` field must say `shown: PKG A / B` for a probe (with the same
versions) or `cannot: REASON` without one; a boundary with neither fails.

Exit 0 when every probe run shows its boundary and agrees, 1 otherwise; 77 (skip) without
the venv, or when PyPI cannot be reached and a release is not in the cache (1 then when
DTL_REQUIRE_VENV=1)."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import real_differential as rd  # noqa: E402

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

# (key, edge): (package, last release before the edge, first release after it, set-up,
# watched tensor regex[, the real stage observed, else the last]); the edge is the
# behaviour's since or until.
# The set-up is a real_differential.py set-up (arch, load dtype, quant, peft, strategy,
# precision, trainer) plus real_worker.py's add_adapter / stop_after / auto_class.
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
    # ---- transformers 4.x / 5.0 ----
    # ---- transformers 5.x ----
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
COMPANIONS = {
}


def install(python, cache, pkg, ver):
    """The folder holding PKG==VER and its COMPANIONS alone (pip --no-deps --target), None
    when pip fails."""
    if pkg == "torch":
        raise ValueError("torch is never installed here: the venv's 2.13.0 is the only one")
    folder = os.path.join(cache, f"{pkg}-{ver}")
    if os.path.isdir(os.path.join(folder, pkg)):
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
    folder = s["folder"]
    if adapter:
        man = os.path.join(d, "manifest.json")
        subprocess.run([binary, "-q", "--no-config", folder] + args + ["--export", man],
                       capture_output=True, text=True)
        with open(man) as f:
            m = json.load(f)
        m.setdefault("adapter", {}).update(adapter)
        with open(man, "w") as f:
            json.dump(m, f, indent=1)
        folder, args = man, []
    return rd.lint(binary, folder, args + ["--with", f"{pkg}={ver}"])


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


def observe(r, watch, stage=None, message=False):
    """(verdict, {watched tensor: final dtype}) of a real result or a lint answer; STAGE: the
    real dtypes after that stage, and the verdict up to it ("runs" when it was reached);
    MESSAGE: the verdict is the error's type and first line, for two releases that raise the
    same type for different reasons."""
    if "stages" in r:
        err = r.get("error")
        stages = r["stages"]
        verdict = "runs" if not err or (stage and stage in stages) else _gloo_as_nccl(err)
        if message and verdict != "runs":
            verdict += ": " + (err["message"].splitlines() or [""])[0]
        at = stage if stage in stages else list(stages)[-1] if stages else None
        final = {n.replace(".base_layer.", "."): v for n, v in stages.get(at, {}).items()}
    else:
        err = r.get("error")
        verdict = (err if message else err.split(":")[0].strip()) if err else "runs"
        final = r.get("dtypes", {})
    return verdict, {n: v for n, v in sorted(final.items()) if re.search(watch, n)}


def fmt(obs):
    verdict, dtypes = obs
    short = (re.sub(r"^.*?\b(layers|block)\.0\.", "", n) for n in dtypes)
    return verdict + "; " + ", ".join(f"{n}={v}" for n, v in zip(short, dtypes.values()))


def probe(a, key, cache, vers, work):
    pkg, before, after, setup, watch = PROBES[key][:5]
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
        s = dict(setup, folder=os.path.join(work, "models", setup["arch"]))
        r = run_real(a.python, s, d, shadow)
        got = r.get("imported", {}).get(pkg)
        if (got or "").split("+")[0] != ver:  # a local build may add +HASH
            row["error"] = (f"{pkg} {ver}: the worker imported {got} "
                            f"({(r.get('error') or {}).get('message', '')[:200]})")
            return row
        t = run_lint(a.dtypelint, s, d, dict(vers, **{pkg: ver}), pkg, ver)
        if "failed" in t:
            row["error"] = f"dtypelint refused the set-up at {pkg} {ver}: {t['failed']}"
            return row
        diffs, _ = rd.compare(r, t, dict.fromkeys(("verdict", "error type", "final dtypes",
                                                    "every tensor listed", "tensors compared",
                                                    "tensors differing"), 0), setup["arch"])
        message = setup.get("verdict_message", False)
        lint = observe(t, watch, message=message)
        if not r.get("stages"):
            # the real run died before its first stage ended (zero.Init refusing its
            # config in from_pretrained): no tensor of it to compare, of dtypelint's neither
            lint = (lint[0], {})
        row["sides"].append({"ver": ver, "real": observe(r, watch, stage, message),
                             "lint": lint,
                             "notes": diffs, "message": (r.get("error") or {}).get("message")})
    row["stage"] = stage
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
    os.makedirs(os.path.join(work, "models"), exist_ok=True)
    archs = sorted({PROBES[k][3]["arch"] for k in keys})
    code = ("import sys, os; sys.path.insert(0, sys.argv[1]); import real_models as m\n"
            "for a in sys.argv[3:]:\n"
            "    d = sys.argv[2] + '/' + a\n"
            "    os.path.exists(d + '/config.json') or m.build(a, d)")
    subprocess.run([a.python, "-c", code, HERE, os.path.join(work, "models")] + archs,
                   check=True, capture_output=True)
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


def reachable(python):
    """Whether pip can reach its index (the boundary releases come from PyPI)."""
    run = subprocess.run([python, "-m", "pip", "index", "versions", "--disable-pip-version-check",
                          "peft"], capture_output=True, text=True, timeout=120)
    return run.returncode == 0 and "Available versions" in run.stdout


if __name__ == "__main__":
    sys.exit(main())
