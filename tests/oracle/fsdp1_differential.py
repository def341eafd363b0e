#!/usr/bin/env python3
"""Differential test: dtypelint's FSDP1 verdict against real PyTorch FSDP1.

Generates random models (depth, classes, wrap lists, mixed dtypes, frozen tensors, buffers,
registration orders), writes each as a manifest, runs `dtypelint -f json` on it with the plan
{strategy: fsdp1, versions: {torch: "1.13"}} and the project's oracle, python/dtypelint/oracle.py
(the real torch.distributed.fsdp.FullyShardedDataParallel on the CPU), on all of them; fails on any
disagreement in verdict, in the error text of the first unit torch fails on, or in the number
of units. Usage: fsdp1_differential.py [--wrap-plan] DTYPELINT PYTHON_DIR [COUNT] [SEED]
(PYTHON_DIR: the folder that holds the dtypelint package, python/ in the source tree).
With --wrap-plan, each model is instead wrapped as `dtypelint --wrap-plan` proposes, and the real
FSDP1 must wrap every one of them without error (and dtypelint must agree).
Exit 77 (skip) only when Debian's /usr/bin/python3 has no torch.
"""
import json, os, random, subprocess, sys, tempfile

CLASSES = ["Block", "Attn", "MLP", "Norm", "Router", "Expert"]
PARAM_NAMES = ["weight", "bias", "scale", "proj"]
FLOAT_DTYPES = ["bfloat16"] * 6 + ["float32"] * 3 + ["float16"]
INT_DTYPES = ["uint8", "int8"]


def gen_model(rng):
    """Returns (tensors, modules globs, frozen globs, wrap, checkpoint_dtype)."""
    paths = []

    def grow(prefix, depth):
        n = rng.randint(1, 3) if depth < rng.randint(2, 4) else 0
        for i in range(n):
            name = rng.choice(["layers", "attn", "mlp", "norm", "gate", "h", "block"])
            child = f"{prefix}.{name}{i}" if prefix else f"{name}{i}"
            paths.append(child)
            grow(child, depth + 1)

    grow("", 0)
    if not paths:
        paths.append("m0")
    checkpoint = rng.choice([None, "bfloat16", "float32"])
    base = rng.choice(["bfloat16", "float32"]) if checkpoint is None else checkpoint
    tensors = []
    mixed = rng.random() < 0.6
    for path in [""] + paths:
        for pname in rng.sample(PARAM_NAMES, rng.randint(0, 2)):
            t = {"name": f"{path}.{pname}" if path else pname,
                 "shape": [rng.randint(1, 8)] * rng.randint(1, 2)}
            r = rng.random()
            if mixed and r < 0.15:
                t["dtype"] = rng.choice(FLOAT_DTYPES)
            elif mixed and r < 0.19:
                t["dtype"] = rng.choice(INT_DTYPES)
            elif checkpoint is None or rng.random() < 0.2:
                t["dtype"] = base
            if rng.random() < 0.08 and t.get("dtype") not in INT_DTYPES:
                t["trainable"] = False
            tensors.append(t)
        if rng.random() < 0.15:
            tensors.append({"name": f"{path}.buf" if path else "buf", "kind": "buffer",
                            "shape": [4], "dtype": rng.choice(["float32", "bfloat16", "int64"]),
                            "persistent": rng.random() < 0.5})
    if not tensors:
        tensors.append({"name": f"{paths[0]}.weight", "shape": [2], "dtype": base})
    # registration order: usually pre-order, sometimes shuffled within the file (the module
    # tree keeps first-appearance order either way)
    if rng.random() < 0.3:
        rng.shuffle(tensors)
    modules = {}
    for p in paths:
        if rng.random() < 0.5:
            modules[p] = rng.choice(CLASSES)
    if rng.random() < 0.3:
        modules["*.norm*"] = "Norm"  # leading "**." differs: the oracle needs one segment, the manifest's globs allow none (docs/design.md §3)
    frozen = []
    if rng.random() < 0.3:
        frozen.append(rng.choice(["*.bias", "attn*.**", "*.*.scale", "layers0.**"]))
    wrap = []
    for c in rng.sample(CLASSES, rng.randint(0, 3)):
        wrap.append(c)
    if rng.random() < 0.3:
        wrap.append(rng.choice(paths))
    if rng.random() < 0.2:
        wrap.append(rng.choice(["layers*", "*.mlp*", "block*.*"]))
    return tensors, modules, frozen, wrap, checkpoint


def manifest(rng, torch_version="1.13"):
    tensors, modules, frozen, wrap, checkpoint = gen_model(rng)
    model = {"modules": modules}
    if checkpoint:
        model["checkpoint_dtype"] = checkpoint
    m = {"dtypelint": 1, "model": model, "tensors": tensors,
         "training": {"strategy": "fsdp1", "versions": {"torch": torch_version},
                      "fsdp": {"wrap": wrap}}}
    if frozen:
        m["frozen"] = frozen
    return m


PYTHON = os.environ.get("DTL_ORACLE_PYTHON", "/usr/bin/python3")  # Debian's python3-torch, or a venv


def has_torch():
    if not os.path.exists(PYTHON):  # a venv not made yet (sh tools/venv.sh)
        return False
    return subprocess.run([PYTHON, "-c", "import torch"], capture_output=True).returncode == 0


def no_torch(what="Debian's python3-torch"):
    """Skip (77) without the oracle's torch; fail where CI asks for the venv (DTL_REQUIRE_VENV)."""
    if "DTL_ORACLE_PYTHON" in os.environ and os.environ.get("DTL_REQUIRE_VENV") == "1":
        print(f"FAIL: {PYTHON} has no torch and DTL_REQUIRE_VENV=1 (sh tools/venv.sh)")
        return 1
    print(f"SKIP: {PYTHON} has no torch ({what})")
    return 77


def oracle_torch_version():
    """The oracle's torch as MAJOR.MINOR: the manifests name it, so that dtypelint predicts
    the messages of the torch that really runs (Debian's 1.13, or a venv's 2.x)."""
    run = subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True, check=True)
    return ".".join(run.stdout.strip().split("+")[0].split(".")[:2])


def run_oracle(pydir, paths, *options):
    """python3 -m dtypelint.oracle on the manifests, with the package from pydir."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (pydir, os.environ.get("PYTHONPATH")) if p))
    return subprocess.run([PYTHON, "-m", "dtypelint.oracle", *options, *paths], env=env,
                          capture_output=True, text=True)


PRIORITY = {"DT103": 0, "DT101": 1, "DT102": 2}


def dtypelint_verdict(binary, path, extra=()):
    """dtypelint's FSDP1 verdict (extra: more options, e.g. --with torch=1.13)."""
    run = subprocess.run([binary, *extra, "-f", "json", "-q", "--select", "DT101,DT102,DT103",
                          path], capture_output=True, text=True)
    if run.returncode not in (0, 1):
        return {"crash": f"exit {run.returncode}: {run.stderr.strip()}"}
    report = json.loads(run.stdout)
    groups = report["inputs"][0]["plan"]["groups"]
    fsdp = [f for f in report["findings"] if f["rule"] in PRIORITY]
    if not fsdp:
        return {"ok": True, "units": groups}
    first = min(fsdp, key=lambda f: (f["group"]["index"], f["group"]["offset"], PRIORITY[f["rule"]]))
    return {"ok": False, "error": first["framework_error"]["text"], "units": groups}


def fixable_by_grouping(m):
    """Grouping cannot help integer parameters (FSDP1 flattens none) or a module whose own
    parameters already mix dtype or requires_grad."""
    default = m["model"].get("checkpoint_dtype", "float32")
    frozen = m.get("frozen", [])
    own = {}
    for t in m["tensors"]:
        if t.get("kind") == "buffer":
            continue
        dtype = t.get("dtype", default)
        if dtype in ("uint8", "int8", "int32", "int64", "bool"):
            return False
        # the oracle's rule: trainable unless stated or frozen by a glob
        import re as _re
        def g(path, glob):
            rx = _re.escape(glob).replace(r"\*\*", "\0").replace(r"\*", r"[^.]*").replace("\0", r".*")
            return _re.fullmatch(rx, path) is not None
        trainable = t.get("trainable", not any(g(t["name"], f) for f in frozen))
        mod = t["name"].rpartition(".")[0]
        own.setdefault(mod, set()).add((dtype, trainable))
    return all(len(keys) == 1 for keys in own.values())


def wrap_planned(binary, path):
    """The manifest at path rewritten with the wrap plan dtypelint proposes for it."""
    run = subprocess.run([binary, "--wrap-plan", "-f", "json", path], capture_output=True, text=True)
    if run.returncode not in (0, 1):
        raise SystemExit(f"--wrap-plan failed on {path}: {run.stderr}")
    plan = json.loads(run.stdout)
    with open(path) as f:
        m = json.load(f)
    m["training"]["fsdp"]["wrap"] = [g["module"] for g in plan["fully_shard"]]
    m["model"]["modules"] = {}  # paths only: no class may add units the plan did not choose
    with open(path, "w") as f:
        json.dump(m, f)


def main():
    args = sys.argv[1:]
    wrap_mode = bool(args) and args[0] == "--wrap-plan"
    if wrap_mode:
        args = args[1:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    binary, pydir = args[0], args[1]
    count = int(args[2]) if len(args) > 2 else 500
    # `meson test --setup full` (what CI runs) asks for more models than the quick default run
    count = int(os.environ.get("DTL_ORACLE_MODELS", count))
    seed = int(args[3]) if len(args) > 3 else 20261121
    if not has_torch():
        return no_torch()
    rng = random.Random(seed)
    torch_version = oracle_torch_version()
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        skipped = 0
        for i in range(count):
            p = os.path.join(tmp, f"m{i:04d}.json")
            m = manifest(rng, torch_version)
            if wrap_mode and not fixable_by_grouping(m):
                skipped += 1
                continue
            with open(p, "w") as f:
                json.dump(m, f)
            if wrap_mode:
                wrap_planned(binary, p)
            paths.append(p)
        run = run_oracle(pydir, paths)
        if run.returncode != 0:
            print(f"oracle failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
            return 1
        truth = [json.loads(line) for line in run.stdout.splitlines()]
        if len(truth) != len(paths):
            print(f"oracle printed {len(truth)} verdicts for {len(paths)} models")
            return 1
        count = len(paths)
        if wrap_mode:
            print(f"{skipped} generated models left out: integer parameters or modules whose own "
                  f"parameters mix, which no grouping can fix")
        return compare(binary, paths, truth, f"{count} models (seed {seed})", wrap_mode)


def compare(binary, paths, truth, label, wrap_mode=False):
    """dtypelint against torch's verdicts, model by model; prints the tally, returns the exit
    status (shared with peft_wrap_differential.py)."""
    failures = fails = oks = 0
    for p, t in zip(paths, truth):
        d = dtypelint_verdict(binary, p)
        if wrap_mode and not t["ok"]:
            failures += 1
            if failures <= 5:
                print(f"WRAP PLAN FAILED on {os.path.basename(p)}: {t}")
            continue
        if t["ok"]:
            oks += 1
            expected = {"ok": True, "units": t["units"]}
        else:
            fails += 1
            expected = {"ok": False, "error": f"{t['error_type']}: {t['error']}"}
            d.pop("units", None)
        if d != expected:
            failures += 1
            if failures <= 5:
                with open(p) as f:
                    body = f.read()
                print(f"DISAGREE on {os.path.basename(p)}:\n  torch:     {expected}\n"
                      f"  dtypelint: {d}\n  manifest: {body}\n")
    count = len(paths)
    print(f"{label}: torch wrapped {oks}, raised on {fails}; "
          f"{count - failures} agree, {failures} disagree")
    print(f"{count - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
