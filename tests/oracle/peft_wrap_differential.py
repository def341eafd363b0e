#!/usr/bin/env python3
"""Differential test: the HF Trainer's FSDP1 plan for a PEFT model, dtypelint against real torch.

transformers' Trainer._fsdp_qlora_plugin_updates (4.39+) installs PEFT's fsdp_auto_wrap_policy
for a PEFT model under FSDP1. That policy is `_or_policy` of a lambda policy ("a leaf module whose
weight requires grad": the LoRA A/B layers) and the transformer-layer classes:
https://github.com/huggingface/peft/blob/v0.20.0/src/peft/utils/other.py (fsdp_auto_wrap_policy).

The models of fsdp1_differential.py are given LoRA adapters (`<m>.lora_A.default.weight`,
`<m>.lora_B.default.weight`, in random dtypes, the base weight frozen as PEFT leaves it) and the
plan {trainer: hf-trainer}. The project's oracle (python/dtypelint/oracle.py) builds each as a real
module, which this script wraps with the real FullyShardedDataParallel under the same policy as PEFT's: the
wrap list (classes, as FSDP_TRANSFORMER_CLS_TO_WRAP, or path globs) OR the lambda. Verdicts,
the error text of the first unit torch fails on and the number of units must agree.
Usage: peft_wrap_differential.py DTYPELINT PYTHON_DIR [COUNT] [SEED]
(PYTHON_DIR: the folder that holds the dtypelint package, python/ in the source tree).
Exit 77 (skip) only when Debian's /usr/bin/python3 has no torch.
"""
import functools, json, os, random, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fsdp1_differential as base  # noqa: E402

ADAPTER_DTYPES = ["float32", "bfloat16", "float16"]


def manifest(rng):
    m = base.manifest(rng)
    default = m["model"].get("checkpoint_dtype", "float32")
    tensors = []
    for t in m["tensors"]:
        tensors.append(t)
        path, _, leaf = t["name"].rpartition(".")
        dtype = t.get("dtype", default)
        # (PEFT wraps submodules: a root-level weight gets no adapter)
        if leaf != "weight" or not path or t.get("kind") == "buffer" or rng.random() < 0.4:
            continue
        t["trainable"] = False  # get_peft_model freezes the base
        a = rng.choice(ADAPTER_DTYPES) if rng.random() < 0.5 else dtype
        if a in ("uint8", "int8"):
            a = "float32"
        for part in ("lora_A", "lora_B"):
            tensors.append({"name": f"{path}.{part}.default.weight",
                            "shape": [2, 2], "dtype": a})
    m["tensors"] = tensors
    m["training"]["trainer"] = "hf-trainer"
    m["training"]["versions"]["transformers"] = "4.57.0"
    return m


def oracle(pydir, paths):
    """Real FSDP1 verdicts under PEFT's policy, one per manifest."""
    sys.path.insert(0, pydir)
    from dtypelint import oracle as o  # noqa: E402  (patches torch 1.13 on import)
    from torch.distributed.fsdp.wrap import _or_policy, lambda_auto_wrap_policy

    def peft_policy(mods, wrap):
        def lambda_policy_fn(module):  # PEFT's, verbatim
            if (len(list(module.named_children())) == 0 and getattr(module, "weight", None) is not None
                    and module.weight.requires_grad):
                return True
            return False
        lambda_policy = functools.partial(lambda_auto_wrap_policy, lambda_fn=lambda_policy_fn)
        policies = [lambda_policy]
        if wrap:
            policies.append(o.policy_for(mods, wrap))
        return functools.partial(_or_policy, policies=policies)

    out = []
    for p in paths:
        with open(p) as f:
            m = json.load(f)
        root, mods = o.build(m)
        wrap = m["training"]["fsdp"]["wrap"]
        # the Trainer installs PEFT's policy only on a PEFT model
        peft = any(".lora_" in t["name"] for t in m["tensors"])
        policy = peft_policy(mods, wrap) if peft else o.policy_for(mods, wrap) if wrap else None
        out.append(o.fsdp1(root, policy))
    return out


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    binary, pydir = args[0], args[1]
    count = int(args[2]) if len(args) > 2 else 200
    count = int(os.environ.get("DTL_ORACLE_MODELS", count))
    seed = int(args[3]) if len(args) > 3 else 20261126
    if not base.has_torch():
        print(f"SKIP: {base.PYTHON} has no torch (Debian's python3-torch)")
        return 77
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i in range(count):
            p = os.path.join(tmp, f"m{i:04d}.json")
            with open(p, "w") as f:
                json.dump(manifest(rng), f)
            paths.append(p)
        # torch runs in a child of Debian's python3 (the oracle needs its torch 1.13)
        run = subprocess.run([base.PYTHON, "-c",
                              "import json, sys; sys.path.insert(0, sys.argv[1]); "
                              "import peft_wrap_differential as d; "
                              "print(json.dumps(d.oracle(sys.argv[2], sys.argv[3:])))",
                              os.path.dirname(os.path.abspath(__file__)), pydir, *paths],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"oracle failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
            return 1
        truth = json.loads(run.stdout.strip().splitlines()[-1])
        return base.compare(binary, paths, truth, f"{count} PEFT models (seed {seed})")

if __name__ == "__main__":
    sys.exit(main())
