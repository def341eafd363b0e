#!/usr/bin/env python3
"""--export writes every key of the plan's key table (include/dtypelint/model/plan-keys.h) back, and reads
its own output back to the same bytes: fixtures/plans/every-key.yaml sets every key (a new row
must be added there too), the composed manifest is exported as JSON and as YAML, each key's
path (dtl-gen-plan-schema keys) must be in the JSON, and exporting either export again gives
the same file.

Usage: plan-keys-export.py DTYPELINT GEN_PLAN_SCHEMA SOURCE_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

dtypelint, gen, root = (os.path.abspath(a) for a in sys.argv[1:4])
os.chdir(root)
failures = []
keys = [line.split()[0] for line in
        subprocess.run([gen, "keys"], capture_output=True, text=True, check=True).stdout.splitlines()]


def export(source, out, plan=None):
    args = [dtypelint, source] + (["--plan", plan] if plan else []) + ["--export", out]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode not in (0, 1) or not os.path.exists(out):
        failures.append(f"{' '.join(args)}: exit status {done.returncode}: {done.stderr.strip()}")
        return b""
    with open(out, "rb") as f:
        return f.read()


with tempfile.TemporaryDirectory() as tmp:
    first = {}
    for ext in ("json", "yaml"):
        first[ext] = export("fixtures/clean/llama-bf16-ddp.yaml", f"{tmp}/a.{ext}",
                            "fixtures/plans/every-key.yaml")
        again = export(f"{tmp}/a.{ext}", f"{tmp}/b.{ext}")
        if first[ext] and again != first[ext]:
            failures.append(f"--export of the .{ext} export differs from it")
    plan = json.loads(first["json"] or b"{}").get("training", {})
    for path in keys:
        node, found = plan, True
        for part in path.split("."):
            found = isinstance(node, dict) and part in node
            node = node[part] if found else None
        if not found:
            failures.append(f"'{path}' is in include/dtypelint/model/plan-keys.h but not in --export of "
                            "fixtures/plans/every-key.yaml")

for f in failures:
    print("FAIL:", f)
if not failures:
    print(f"--export writes all {len(keys)} keys of the plan's table and reads them back")
sys.exit(1 if failures else 0)
