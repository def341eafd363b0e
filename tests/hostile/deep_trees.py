#!/usr/bin/env python3
"""No unbounded recursion (issue 21, requirement 6): a module tree is as deep as its longest
tensor name has segments, so every walk over it is iterative. Run with a 1 MiB stack, a
40,000-segment name must not crash the module checks or --wrap-plan (both recursed before and
died with SIGSEGV). Usage: deep_trees.py DTYPELINT"""
import json
import os
import resource
import subprocess
import sys
import tempfile

dtypelint = os.path.abspath(sys.argv[1])
failures = []
DEPTH = 40000


def small_stack():
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))


def check(name, ok, detail=""):
    print(("ok " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        failures.append(name)


def run(tensors, *args):
    doc = {"dtypelint": 1, "model": {"checkpoint_dtype": "bfloat16"}, "tensors": tensors,
           "training": {"strategy": "fsdp2", "world_size": 2}}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    try:
        return subprocess.run([dtypelint, "--max-name-length", "1M", *args, f.name],
                              capture_output=True, timeout=300, preexec_fn=small_stack)
    finally:
        os.unlink(f.name)


deep = ".".join(["a"] * DEPTH)
# a tensor that is also a module: the check walks the module's whole subtree
r = run([{"name": deep + ".weight", "dtype": "bfloat16", "shape": [2]},
         {"name": "a.a", "dtype": "float32", "shape": [2]}])
check("tensor-and-module walk", r.returncode == 2 and b"both a tensor and a module" in r.stdout,
      f"exit {r.returncode}: {r.stderr[-200:]!r}")
# --wrap-plan plans the whole tree bottom-up
r = run([{"name": deep + ".weight", "dtype": "float32", "shape": [2]},
         {"name": "a.norm.weight", "dtype": "bfloat16", "shape": [2]},
         {"name": "a.norm2.weight", "dtype": "bfloat16", "shape": [2]}], "--wrap-plan")
check("wrap-plan walk", r.returncode in (0, 1) and b"fully_shard(model, " in r.stdout,
      f"exit {r.returncode}: {r.stderr[-200:]!r}")
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
