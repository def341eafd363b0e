#!/usr/bin/env python3
"""Differential test: dtypelint's FSDP2 verdict against the real fully_shard of the installed torch.

The random models of fsdp1_differential.py, under the plan {strategy: fsdp2, versions: {torch:
<the installed torch>}}, go through `dtypelint -f json` (rules DT103 and DT111) and through
`python3 -m dtypelint.oracle --fsdp2` (fully_shard on each module of the wrap list, children
first, then on the root, then lazy init and an unshard of every group, on the CPU in a
single-process gloo world). The verdicts and the error text up to its dtype set (Python prints
a set in no fixed order) must agree, and the number of groups when torch raises nothing.
Usage: fsdp2_differential.py DTYPELINT PYTHON_DIR [COUNT] [SEED]
Exit 77 (skip, with the reason) when Debian's /usr/bin/python3 has no torch, or a torch without
fully_shard (FSDP2 is in torch 2.4 and later; Debian's 1.13 has none)."""
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fsdp1_differential as base  # noqa: E402


def torch_version():
    if not base.has_torch():
        return None
    run = subprocess.run([base.PYTHON, "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True)
    return run.stdout.strip().split("+")[0] if run.returncode == 0 else None


def head(text):
    return text.split(" but got")[0]


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    binary, pydir = args[0], args[1]
    count = int(os.environ.get("DTL_ORACLE_MODELS", args[2] if len(args) > 2 else 200))
    seed = int(args[3]) if len(args) > 3 else 20261126
    version = torch_version()
    if version is None:
        return base.no_torch()
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i in range(count):
            m = base.manifest(rng)
            m["training"].update(strategy="fsdp2", versions={"torch": version})
            p = os.path.join(tmp, f"m{i:04d}.json")
            with open(p, "w") as f:
                json.dump(m, f)
            paths.append(p)
        run = base.run_oracle(pydir, paths, "--fsdp2")
        if run.returncode == 77:
            if "DTL_ORACLE_PYTHON" in os.environ and os.environ.get("DTL_REQUIRE_VENV") == "1":
                print(f"FAIL: {run.stderr.strip()}, and DTL_REQUIRE_VENV=1 asks for the venv's")
                return 1
            print(f"SKIP: {run.stderr.strip()}: the FSDP2 half of the oracle needs torch >= 2.4")
            return 77
        if run.returncode != 0:
            print(f"oracle failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
            return 1
        truth = [json.loads(line) for line in run.stdout.splitlines()]
        failures = 0
        for p, t in zip(paths, truth):
            run = subprocess.run([binary, "-f", "json", "-q", "--select", "DT103,DT111", p],
                                 capture_output=True, text=True)
            if run.returncode not in (0, 1):
                failures += 1
                print(f"dtypelint failed on {p}: {run.stderr}")
                continue
            report = json.loads(run.stdout)
            found = report["findings"]
            d = {"ok": True, "units": report["inputs"][0]["plan"]["groups"]} if not found else \
                {"ok": False, "error": head(found[0]["framework_error"]["text"])}
            e = {"ok": True, "units": t["units"]} if t["ok"] else \
                {"ok": False, "error": head(f"{t['error_type']}: {t['error']}")}
            if d != e:
                failures += 1
                if failures <= 5:
                    with open(p) as f:
                        print(f"DISAGREE on {os.path.basename(p)}:\n  torch:     {e}\n"
                              f"  dtypelint: {d}\n  manifest: {f.read()}\n")
        print(f"{count} models (seed {seed}, torch {version}, FSDP2): "
              f"{count - failures} agree, {failures} disagree")
        print(f"{count - failures} passed, {failures} failed")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
