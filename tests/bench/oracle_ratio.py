#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""dtypelint against the real-torch FSDP1 dry run (issue 6): the same verdict, and how much faster.

    python3 tests/bench/oracle_ratio.py BUILD/dtypelint MANIFEST.json [--runs 3]

MANIFEST is an FSDP1 manifest with load_dtype as-is (tests/bench/gen_moe_manifest.py --plan
fsdp1 writes one). Two models are timed: the manifest as it is (real torch raises at the first
mixed-dtype FlatParameter, so its run is short) and a clean twin with every float32 tensor
made bfloat16 (torch wraps every unit: the whole dry run). For each: the oracle
(python3 -m dtypelint.oracle from python/, Debian's python3-torch, CPU) and dtypelint's full run (every
rule, text report to /dev/null) are timed: --runs torch runs, each followed by five dtypelint
runs (their median), and the ratio is given of the medians and run by run (the median of each
torch run over the dtypelint runs beside it); the verdicts are compared the way
tests/oracle/fsdp1_differential.py does (ok or not, torch's error text, number of units),
with dtypelint told the oracle's torch version (--with torch=1.13).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
from fsdp1_differential import dtypelint_verdict  # noqa: E402  the differential test's reading
PYDIR = os.path.normpath(os.path.join(HERE, "..", "..", "python"))  # the project's oracle
ORACLE = ["/usr/bin/python3", "-m", "dtypelint.oracle"]
TORCH = "torch=1.13"  # the oracle's torch (Debian's python3-torch): its error texts


def timed(argv, runs):
    walls, out = [], None
    for _ in range(runs):
        start = time.perf_counter()
        run = subprocess.run(argv, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        out = run
    return statistics.median(walls), out


def oracle_verdict(stdout):
    line = json.loads(stdout.strip().splitlines()[-1])
    if line["ok"]:
        return {"ok": True, "units": line["units"]}
    return {"ok": False, "error": f"{line['error_type']}: {line['error']}"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dtypelint")
    ap.add_argument("manifest")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (PYDIR, os.environ.get("PYTHONPATH"))
                                               if p)
    with open(a.manifest) as f:
        m = json.load(f)
    clean = json.loads(json.dumps(m))
    for t in clean["tensors"]:
        if t.get("dtype") in ("float32", "fp32"):
            t["dtype"] = "bfloat16"
    with tempfile.TemporaryDirectory() as work:
        twin = os.path.join(work, "clean-" + os.path.basename(a.manifest))
        with open(twin, "w") as f:
            json.dump(clean, f)
        for label, path in (("as generated", a.manifest), ("clean twin", twin)):
            # run by run: each torch run beside five dtypelint runs made right after it, so
            # that a VM whose speed moves from minute to minute slows both alike
            torch_runs, dtl_runs, ratios, run = [], [], [], None
            for _ in range(a.runs):
                t, run = timed([*ORACLE, path], 1)
                d, _ = timed([a.dtypelint, "--with", TORCH, path], 5)
                torch_runs.append(t)
                dtl_runs.append(d)
                ratios.append(t / d)
            torch_s, dtl_s = statistics.median(torch_runs), statistics.median(dtl_runs)
            want = oracle_verdict(run.stdout)
            got = dtypelint_verdict(a.dtypelint, path, ("--with", TORCH))
            if not got.get("ok"):
                got.pop("units", None)  # torch says nothing of units when it refuses
            same = got == want
            print(f"{os.path.basename(a.manifest)} ({len(m['tensors'])} tensors), {label}: "
                  f"torch {torch_s:.2f} s, dtypelint {dtl_s:.3f} s, ratio {torch_s / dtl_s:.0f}x "
                  f"(run by run {statistics.median(ratios):.0f}x: "
                  f"{', '.join(f'{r:.0f}' for r in ratios)}); "
                  f"verdict {'same' if same else 'DIFFERENT'}: {json.dumps(want)[:120]}")
            if not same:
                print(f"  dtypelint: {json.dumps(got)[:200]}")
                sys.exit(1)


if __name__ == "__main__":
    main()
