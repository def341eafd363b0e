#!/usr/bin/env python3
"""--memory against reality: the bytes a real training step holds, and the real estimators.

Usage: memory_differential.py DTYPELINT VENV_PYTHON [--fast] [--only REGEX] [--workdir DIR]
       memory_differential.py --worker SPEC RESULT [SPEC RESULT ...]   (the venv's python)

Each set-up (SETUPS below: full fine-tuning and LoRA from float32 and bfloat16 loads, 4-bit and
8-bit QLoRA on one device, FSDP1, FSDP2 and ZeRO-3 in a 2-rank gloo world on the CPU, AdamW;
the folder of golden oracle-memory-zero3-lora under ZeRO-3) is run by the real libraries
with tests/oracle/real_worker.py's own steps (from_pretrained, bitsandbytes, get_peft_model,
accelerate's prepare or deepspeed.initialize, one forward, backward and optimizer step).
After the step, before zero_grad, every rank measures from its live tensors the bytes of
each category dtypelint's --memory names:
- params: the parameters' storages (FSDP2: the DTensor's local shard; FSDP1: the flat
  parameter's shard its original parameters view; ZeRO-3: each parameter's partition
  ds_tensor, and the whole data a persistent parameter keeps beside it);
- grads: the gradients' storages (ZeRO-3: the optimizer's flat gradient-partition buffer);
- optimizer: the optimizer's state tensors (optimizer.state) but the scalar 'step' tensors,
  which are counted apart; ZeRO-3 adds its fp32 master partitions;
- quant_state: the bitsandbytes QuantState tensors (absmax, code, nested state2) and SCB;
- buffers: the model's buffers.
A tensor that shares a storage with one already counted (a tie, a view into a flat buffer)
is counted once, at the storage's full size: that is what is allocated.
Each set-up is also written as a user's files (real_differential.user_files) and dtypelint
runs on them with --memory -f json; the per-rank figures are compared per category, with the
largest rank's figure (dtypelint sizes the rank that holds the most).

Rule (tests/oracle/DISAGREEMENTS.md, section Memory): every category must agree to the
byte once the differences listed in KNOWN are taken out; each KNOWN entry (M1, M2, ...)
computes its own amount from the measured tensors (never a percentage), so a difference that
is not exactly one of them fails. The gathered working set is a peak during forward and
backward that no live tensor after the step shows; it is not compared (M5).

The estimators, run for real: DeepSpeed's estimate_zero3_model_states_mem_needs_all_live
(stage 3) and estimate_zero2_model_states_mem_needs_all_live (stage 1/2) on the loaded model,
and accelerate's estimate-memory (its CLI on the saved folder offline, then its own
calculate_maximum_sizes and estimate_training_usage on the model built from the folder's
config, as the CLI builds it). Their figures are printed beside dtypelint's total, and the
transcription of their formulas in rules/versions.yaml (memory_formulas) is checked against
what they return.

Exit 0 when every set-up agrees but for KNOWN, 1 otherwise, 77 (skip) without the venv
(1 then with DTL_REQUIRE_VENV=1)."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

CATEGORIES = ("params", "grads", "optimizer", "quant_state", "buffers")

# Llama from its real config (tests/oracle/real_models.py), LoRA on q_proj and v_proj, AdamW.
SETUPS = [
    {"arch": "llama", "load_dtype": "float32", "peft": None, "strategy": "single",
     "precision": "fp32"},
    {"arch": "llama", "load_dtype": "bfloat16", "peft": None, "strategy": "single",
     "precision": "bf16"},
    {"arch": "llama", "load_dtype": "bfloat16", "peft": "lora", "strategy": "single",
     "precision": "bf16"},
    {"arch": "llama", "load_dtype": "float32", "peft": "lora", "strategy": "single",
     "precision": "fp32"},
    {"arch": "llama", "load_dtype": "bfloat16", "quant": "4bit", "quant_storage": "uint8",
     "peft": "lora", "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "load_dtype": "bfloat16", "quant": "8bit", "peft": "lora",
     "strategy": "single", "precision": "bf16"},
    {"arch": "llama", "load_dtype": "bfloat16", "peft": "lora", "strategy": "fsdp2",
     "precision": "bf16"},
    {"arch": "llama", "load_dtype": "float32", "peft": None, "strategy": "fsdp2",
     "precision": "bf16"},
    {"arch": "llama", "load_dtype": "bfloat16", "peft": None, "strategy": "fsdp1",
     "precision": "bf16"},
    {"arch": "llama", "load_dtype": "float32", "peft": None, "strategy": "fsdp1",
     "precision": "bf16"},
    {"arch": "llama", "load_dtype": "bfloat16", "peft": None, "strategy": "zero3",
     "precision": "bf16"},
    {"arch": "llama", "load_dtype": "bfloat16", "peft": "lora", "strategy": "zero3",
     "precision": "bf16"},
    # the folder of golden oracle-memory-zero3-lora (a tiny Qwen2 with tied embeddings that
    # transformers saved), as the golden lints it: its figures are the real step's
    {"arch": "qwen2", "fixture": "fixtures/import/tiny-qwen2", "load_dtype": "bfloat16",
     "peft": "lora", "strategy": "zero3", "precision": "bf16"},
]
# the meson test (oracle-real-memory-fast): one device, each kind of tensor the categories
# hold (full fine-tuning, LoRA with 4-bit and 8-bit quant state), and one sharded world
FAST = [0, 4, 5, 6]


# ---------------------------------------------------------------- the worker (venv python)

def _storages(tensors):
    """{storage pointer: (bytes, dtype)} of TENSORS: each storage once, at its full size."""
    out = {}
    for t in tensors:
        if t is None:
            continue
        t = _local(t)
        if t.device.type == "meta":
            continue
        st = t.untyped_storage()
        if st.nbytes() == 0:
            continue
        out.setdefault(st.data_ptr(), (st.nbytes(), str(t.dtype).replace("torch.", "")))
    return out


def _local(t):
    # an FSDP2 parameter, gradient or optimizer state is a DTensor: this rank's shard
    return t._local_tensor if hasattr(t, "_local_tensor") else t


def _elements(tensors):
    """Bytes of TENSORS by their own elements (numel * element size), each tensor once."""
    seen, total = set(), 0
    tensors = list(tensors)  # held: the id of a freed temporary (p.data) is reused
    for t in tensors:
        if t is None or id(t) in seen:
            continue
        seen.add(id(t))
        t = _local(t)
        total += t.numel() * t.element_size()
    return total


def _quant_tensors(p):
    """The bitsandbytes quantization state of a parameter: QuantState's tensors (absmax,
    code, offset, the nested state2's), Int8Params' SCB."""
    import torch
    out = []
    qs = getattr(p, "quant_state", None)
    while qs is not None:
        out += [v for v in vars(qs).values() if torch.is_tensor(v)]
        qs = getattr(qs, "state2", None)
    scb = getattr(p, "SCB", None)
    if torch.is_tensor(scb):
        out.append(scb)
    return out


def _sum(storages):
    return sum(b for b, _ in storages.values())


def _by_dtype(storages):
    out = {}
    for b, d in storages.values():
        out[d] = out.get(d, 0) + b
    return out


def measure(model, opt, ds_opt=None):
    """This rank's bytes per category from its live tensors (after the step, before
    zero_grad)."""
    import torch
    params = list(model.parameters())
    res, extra = {}, {}
    ptens = [p for p in params]
    if ds_opt is not None:
        # ZeRO-3: a parameter's own data is released (numel 0) but for a persistent one;
        # its partition is ds_tensor, a view into the optimizer's flat 16-bit buffer
        ptens = [p.ds_tensor for p in params if hasattr(p, "ds_tensor")] + \
            [p.data for p in params if p.data.numel() > 0]
        extra["persistent_whole"] = _sum(_storages(p.data for p in params
                                                   if p.data.numel() > 0))
        extra["partitions"] = _sum(_storages(p.ds_tensor for p in params
                                             if hasattr(p, "ds_tensor")))
    fsdp1 = [m for m in model.modules() if hasattr(m, "_flat_param")]
    if fsdp1:
        # FSDP1 (use_orig_params): the original parameters are views into the flat
        # parameter's local shard, padded to a multiple of the world size
        ptens = [m._flat_param for m in fsdp1] + ptens
        extra["flat_padding"] = sum(
            m._flat_param._shard_numel_padded * m._flat_param.element_size() for m in fsdp1
            if hasattr(m._flat_param, "_shard_numel_padded"))
    pst = _storages(ptens)
    grads = [p.grad for p in params]
    if fsdp1:
        grads += [m._flat_param.grad for m in fsdp1]
    if ds_opt is not None:
        grads += [getattr(ds_opt, "grad_partitions_flat_buffer", None)]
        grads += [t.grad for t in getattr(ds_opt, "fp32_partitioned_groups_flat", [])]
    inner = opt
    while hasattr(inner, "optimizer") and not isinstance(inner, torch.optim.Optimizer):
        inner = inner.optimizer
    if ds_opt is not None:
        inner = ds_opt.optimizer
    states, steps = [], []
    for s in inner.state.values():
        for k, v in s.items():
            if torch.is_tensor(v):
                (steps if k == "step" else states).append(v)
    if ds_opt is not None:
        states += list(getattr(ds_opt, "fp32_partitioned_groups_flat", []))
    quant = [q for p in params for q in _quant_tensors(p)]
    # LLM.int8: the first forward moves CB and SCB from the weight to the module's
    # MatmulLtState (bitsandbytes Linear8bitLt.init_8bit_state); CB is the weight's own data
    for m in model.modules():
        st = getattr(m, "state", None)
        if type(st).__name__ == "MatmulLtState":
            quant += [v for v in vars(st).values() if torch.is_tensor(v)]
    held = set(pst)
    quant = [q for q in quant if _local(q).untyped_storage().data_ptr() not in held]
    bufs = [b for b in model.buffers() if b is not None]
    for name, tens in (("params", None), ("grads", grads), ("optimizer", states),
                       ("quant_state", quant), ("buffers", bufs)):
        st = pst if tens is None else _storages(tens)
        res[name] = {"bytes": _sum(st), "by_dtype": _by_dtype(st),
                     "elements": _elements(ptens if tens is None else tens)}
    extra["adam_step"] = _sum(_storages(steps))
    return res, extra


def _estimators(spec):
    """DeepSpeed's and accelerate's estimators on the saved folder, run for real."""
    import contextlib
    import io
    import torch
    import transformers
    out = {}
    model = getattr(transformers, spec["auto_class"]).from_pretrained(
        spec["folder"], dtype=getattr(torch, spec["load_dtype"]))
    from deepspeed.runtime.zero import stage3, stage_1_and_2
    total, largest = stage3.model_to_params(model)
    out["ds_total_params"], out["ds_largest_layer_params"] = total, largest
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        stage3.estimate_zero3_model_states_mem_needs_all_live(model, num_gpus_per_node=2)
        stage_1_and_2.estimate_zero2_model_states_mem_needs_all_live(model,
                                                                    num_gpus_per_node=2)
    out["ds_printed"] = buf.getvalue()
    z3 = {}
    for off, offp in ((False, False), (True, False), (True, True)):
        cpu, gpu, _ = stage3.estimate_zero3_model_states_mem_needs(
            total, largest, num_gpus_per_node=2, cpu_offload=off, cpu_offload_params=offp)
        z3[f"offload={off},offload_params={offp}"] = {"gpu": gpu, "cpu": cpu}
    out["ds_zero3"] = z3
    z2 = {}
    for off in (False, True):
        cpu, gpu = stage_1_and_2.estimate_zero2_model_states_mem_needs(
            total, num_gpus_per_node=2, cpu_offload=off)
        z2[f"offload={off}"] = {"gpu": gpu, "cpu": cpu}
    out["ds_zero2"] = z2
    # accelerate estimate-memory: its CLI asks the Hub for the model's metadata first
    # (huggingface_hub.model_info); offline, on a local folder
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    cli = os.path.join(os.path.dirname(sys.executable), "accelerate")
    run = subprocess.run([cli, "estimate-memory", spec["folder"], "--library_name",
                          "transformers"], capture_output=True, text=True, env=env)
    out["acc_cli"] = {"rc": run.returncode,
                      "tail": (run.stdout + run.stderr).strip().splitlines()[-1:]}
    # its own functions on the model it would build: the folder's config, AutoModel
    # (estimate.py create_empty_model), init_empty_weights, float32
    from accelerate import init_empty_weights
    from accelerate.commands.estimate import estimate_training_usage
    from accelerate.utils import calculate_maximum_sizes
    cfg = transformers.AutoConfig.from_pretrained(spec["folder"])
    with init_empty_weights():
        empty = transformers.AutoModel.from_config(cfg, dtype=torch.float32)
    size, largest_layer = calculate_maximum_sizes(empty)
    out["acc_total"] = size
    out["acc_largest_layer"] = largest_layer[0]
    out["acc_training"] = {d: estimate_training_usage(size, d)
                           for d in ("float32", "float16", "bfloat16")}
    return out


def _loss(model, vocab, torch):
    # real_worker._loss's batch (ids 3..399), kept inside a smaller vocabulary (the tiny
    # Qwen2 of fixtures/import has 256 ids)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, min(400, vocab), (1, 8), generator=g)
    return model(input_ids=ids, labels=ids).loss


def run_setup(spec, rank, result):
    import torch
    import real_worker as w
    ds_config = w._ds_config(spec) if spec["strategy"] == "zero3" else None
    if ds_config is not None:
        import deepspeed
        deepspeed.init_distributed(dist_backend="gloo")
    model, keep = w._load(spec, torch, ds_config)
    vocab = model.config.vocab_size
    if spec.get("peft"):
        model = w._peft(spec, model)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-3)
    if ds_config is not None:
        import deepspeed
        engine, ds_opt, _, _ = deepspeed.initialize(model=model, optimizer=opt,
                                                    config=ds_config)
        engine.backward(_loss(engine, vocab, torch))
        engine.step()
        result["measured"], result["extra"] = measure(engine.module, ds_opt, ds_opt)
    else:
        acc = w._accelerator(spec, torch)
        model, opt = acc.prepare(model, opt)
        acc.backward(_loss(model, vocab, torch))
        opt.step()
        result["measured"], result["extra"] = measure(model, opt)
    del keep


def one_rank(rank, spec, out, world, port):
    """Runs SPEC as RANK of WORLD and writes OUT.rankRANK."""
    import real_worker as w
    w._env(rank, world, port)
    import torch
    torch.manual_seed(0)
    result = {"rank": rank, "error": None}
    try:
        run_setup(spec, rank, result)
        if rank == 0 and spec.get("estimators"):
            result["estimators"] = _estimators(spec)
    except BaseException as e:  # noqa: B902 - the exception is the result
        import traceback
        result["error"] = f"{type(e).__name__}: {e}"[:1500] + "\n" + \
            traceback.format_exc()[-2000:]
    result["imported"] = w.imported()
    with open(f"{out}.rank{rank}", "w") as f:
        json.dump(result, f)


def rank_main(rank, spec, out, world, port):
    one_rank(rank, spec, out, world, port)
    os._exit(0)  # a rank whose peer failed may sit in a collective: the parent reaps it


def gather(out, world):
    ranks = []
    for r in range(world):
        try:
            with open(f"{out}.rank{r}") as f:
                ranks.append(json.load(f))
            os.unlink(f"{out}.rank{r}")
        except OSError:
            ranks.append({"rank": r, "error": "no result"})
    with open(out, "w") as f:
        json.dump({"ranks": ranks}, f)


def worker(pairs):
    """Runs each (SPEC, OUT) of PAIRS: one device in this process, one after another (the
    imports are paid once; accelerate's shared state is reset between them, as
    real_worker.batch does), a 2-rank world in spawned processes."""
    for spec_path, out in pairs:
        with open(spec_path) as f:
            spec = json.load(f)
        if spec["strategy"] == "single":
            from accelerate.state import AcceleratorState, PartialState
            AcceleratorState._reset_state(True)
            PartialState._reset_state()
            one_rank(0, spec, out, 1, spec["port"])
            gather(out, 1)
            continue
        import real_worker as w
        w.spawn_world(rank_main, (spec, out, 2, spec["port"]), 2, 120)
        gather(out, 2)
    return 0


# ---------------------------------------------------------------- the driver (any python)

# Differences stated in DISAGREEMENTS.md (Memory): (tag, category, applies(set-up), amount
# (real rank result) -> bytes the real rank holds beyond dtypelint's figure (negative: fewer)).
# (none left: M4, FSDP1's buffer cast, is fixed with D8)
KNOWN = []


def known_amount(s, cat, r):
    tags, amount = [], 0
    for tag, c, applies, f in KNOWN:
        if c == cat and applies(s):
            a = f(r)
            if a:
                tags.append(tag)
                amount += a
    return amount, tags


def fmt(n):
    return f"{n:,}".replace(",", " ")


def private_extensions(work):
    """A private TORCH_EXTENSIONS_DIR seeded from the user's cache: DeepSpeed's CPU
    accelerator JIT-loads its shared-memory op through torch.utils.cpp_extension, whose
    FileBaton waits (forever) while a `lock` file is there; a build killed half-way in the
    shared ~/.cache/torch_extensions leaves one, and every ZeRO-3 run of every user waits.
    The built op is copied (mtimes kept, so ninja finds it up to date), never the lock."""
    import glob
    import shutil
    mine = os.path.join(work, "torch_extensions")
    for src in glob.glob(os.path.expanduser("~/.cache/torch_extensions/*/deepspeed_shm_comm")):
        dst = os.path.join(mine, os.path.basename(os.path.dirname(src)),
                           "deepspeed_shm_comm")
        if not os.path.exists(dst):
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("lock"))
    return mine


def dtypelint_memory(binary, folder, args):
    run = subprocess.run([binary, "-f", "json", "-q", "--no-config", "--exit-zero",
                          "--memory", folder] + args, capture_output=True, text=True)
    if run.returncode != 0:
        return {"failed": run.stderr.strip()[-800:]}
    return json.loads(run.stdout)["inputs"][0]["memory"]


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(list(zip(sys.argv[2::2], sys.argv[3::2])))
    import real_differential as rd
    import real_models
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dtypelint")
    ap.add_argument("python")
    ap.add_argument("--fast", action="store_true", help="the subset the meson test runs")
    ap.add_argument("--only", default=None, help="regex on the set-up label")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--reuse", action="store_true",
                    help="reuse a set-up's stored real run (same spec): re-lints only")
    a = ap.parse_args()
    if not os.access(a.python, os.X_OK):
        msg = f"no venv python at {a.python} (sh tools/venv.sh build/venv makes it)"
        if os.environ.get("DTL_REQUIRE_VENV") == "1":
            print(f"FAIL: {msg}, and DTL_REQUIRE_VENV=1")
            return 1
        print(f"SKIP: {msg}")
        return 77
    work = os.path.abspath(a.workdir or os.path.join(os.path.dirname(os.path.abspath(
        a.dtypelint)), "oracle-memory"))
    setups = [SETUPS[i] for i in FAST] if a.fast else SETUPS
    if a.only:
        setups = [s for s in setups if re.search(a.only, rd.label(s))]
    vers = rd.versions(a.python)
    models = os.path.join(work, "models")
    archs = sorted({s["arch"] for s in setups if not s.get("fixture")})
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import real_models as m\n"
            "for a in sys.argv[3:]: m.build(a, sys.argv[2] + '/' + a)")
    subprocess.run([a.python, "-c", code, HERE, models] + archs, check=True,
                   capture_output=True)
    failures, est_done = [], set()
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=os.environ.get("TORCH_EXTENSIONS_DIR") or
               private_extensions(work))
    print(f"{'set-up':<58} {'category':<11} {'rank bytes':>11} {'dtypelint':>11} "
          f"{'diff':>8}  verdict")
    jobs, todo = [], []
    for i, s in enumerate(setups):
        d = os.path.join(work, "runs", f"{SETUPS.index(s):02d}")
        os.makedirs(d, exist_ok=True)
        root = os.path.join(HERE, "..", "..")
        s = dict(s, folder=os.path.abspath(os.path.join(root, s["fixture"])) if
                 s.get("fixture") else os.path.join(models, s["arch"]))
        spec = dict(s, auto_class=real_models.ARCHS[s["arch"]][1],
                    targets=real_models.ARCHS[s["arch"]][3],
                    quant_storage=s.get("quant_storage", "uint8"),
                    port=29500 + (os.getpid() + i * 7) % 2000,
                    estimators=s["arch"] not in est_done and
                    s["load_dtype"] == "float32" and not a.fast)
        if spec["estimators"]:
            est_done.add(s["arch"])
        out = os.path.join(d, "real.json")
        stored = os.path.join(d, "spec.json")
        same = False
        if a.reuse and os.path.exists(out) and os.path.exists(stored):
            with open(stored) as f:
                old = json.load(f)
            same = {k: v for k, v in old.items() if k != "port"} == \
                {k: v for k, v in spec.items() if k != "port"}
        if not same:
            with open(stored, "w") as f:
                json.dump(spec, f)
            if os.path.exists(out):
                os.unlink(out)
            todo += [stored, out]
        jobs.append((s, d, out))
    t0 = time.time()
    if todo:
        # one worker process: the one-device set-ups share its imports
        with open(os.path.join(work, "runs", "worker.log"), "w") as log:
            subprocess.run([a.python, os.path.abspath(__file__), "--worker"] + todo,
                           stdout=log, stderr=log, timeout=900 + 300 * len(todo), env=env)
    print(f"(real runs: {len(todo) // 2} in {time.time() - t0:.0f} s, "
          f"{len(jobs) - len(todo) // 2} stored)")
    for s, d, out in jobs:
        if not os.path.exists(out):
            real = {"ranks": [{"rank": 0, "error": f"no result (see {work}/runs/worker.log)"}]}
        else:
            with open(out) as f:
                real = json.load(f)
        t = dtypelint_memory(a.dtypelint, s["folder"], rd.user_files(s, d, vers))
        lab = rd.label(s)
        errs = [r["error"] for r in real["ranks"] if r.get("error")]
        if errs or "failed" in t:
            failures.append(f"{lab}: " + (errs[0].splitlines()[0] if errs else
                                          f"dtypelint: {t['failed']}"))
            print(f"{lab:<58} FAILED: {failures[-1][len(lab) + 2:][:200]}")
            continue
        for cat in CATEGORIES:
            r = max(real["ranks"], key=lambda x: x["measured"][cat]["bytes"])
            got = t["per_rank"][cat]
            want = r["measured"][cat]["bytes"]
            amount, tags = known_amount(s, cat, r)
            diff = want - got
            ok = diff == amount
            verdict = "equal" if diff == 0 else (f"known {'+'.join(tags)}" if ok and tags
                                                 else "DIFF")
            if not ok:
                failures.append(f"{lab}: {cat}: real {want} (rank {r['rank']}), dtypelint "
                                f"{got}, listed {amount}")
            others = " ".join(f"r{x['rank']}={fmt(x['measured'][cat]['bytes'])}"
                              for x in real["ranks"] if x is not r) if \
                len(real["ranks"]) > 1 else ""
            print(f"{lab if cat == 'params' else '':<58} {cat:<11} {fmt(want):>11} "
                  f"{fmt(got):>11} {fmt(diff):>8}  {verdict} {others}")
        ex = real["ranks"][0]["extra"]
        if "partitions" in ex:
            print(f"{'':<58} {'(params)':<11} ZeRO-3: partitions {fmt(ex['partitions'])} B, "
                  f"whole persistent parameters {fmt(ex['persistent_whole'])} B")
        print(f"{'':<58} {'(not held)':<11} adam step {fmt(ex['adam_step'])} B; gathered "
              f"(dtypelint, not measured) {fmt(t['per_rank']['gathered'])}; total "
              f"{fmt(t['per_rank']['total'])}", flush=True)
        est = real["ranks"][0].get("estimators")
        if est:
            print_estimators(est, t, failures, lab)
    print(f"\nmemory: {len(setups) - len({f.split(':')[0] for f in failures})} of "
          f"{len(setups)} set-ups agree in every category but for the listed differences "
          "(DISAGREEMENTS.md, Memory)")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def print_estimators(est, t, failures, lab):
    total, largest = est["ds_total_params"], est["ds_largest_layer_params"]
    z3 = est["ds_zero3"]["offload=False,offload_params=False"]["gpu"]
    # rules/versions.yaml memory_formulas deepspeed-zero3-estimator, transcribed
    want = 4 * largest + int(18 * total / 2)
    print(f"  DeepSpeed zero3 estimator: {fmt(total)} params, largest layer {fmt(largest)}; "
          f"per GPU {fmt(z3)} B without offload (formula {fmt(want)}); " +
          "; ".join(f"{k}: {fmt(v['gpu'])}" for k, v in est["ds_zero3"].items()))
    if z3 != want:
        failures.append(f"{lab}: DeepSpeed zero3 estimator {z3}, versions.yaml formula {want}")
    z2 = est["ds_zero2"]["offload=False"]["gpu"]
    want2 = 2 * total + int(18 * total / 2)
    print(f"  DeepSpeed zero2 estimator: per GPU {fmt(z2)} B (formula {fmt(want2)})")
    if z2 != want2:
        failures.append(f"{lab}: DeepSpeed zero2 estimator {z2}, versions.yaml formula {want2}")
    print(f"  accelerate estimate-memory CLI offline on the folder: rc {est['acc_cli']['rc']}: "
          f"{' '.join(est['acc_cli']['tail'])[:200]}")
    tr = est["acc_training"]
    print(f"  accelerate calculate_maximum_sizes: {fmt(est['acc_total'])} B (float32), largest "
          f"layer {fmt(est['acc_largest_layer'])}; training with Adam: " +
          "; ".join(f"{k} {fmt(max(v.values()))}" for k, v in tr.items()))
    if tr["float32"]["step"] != 4 * est["acc_total"]:
        failures.append(f"{lab}: accelerate float32 training {tr['float32']}, formula 4x")
    print(f"  dtypelint total for this set-up: {fmt(t['per_rank']['total'])} B")


if __name__ == "__main__":
    sys.exit(main())
