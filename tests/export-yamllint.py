#!/usr/bin/env python3
"""--export writes YAML that editors and linters accept (issue 22, item 7): for every rule
fixture, the HF model folder and a manifest of hostile names, the exported YAML passes yamllint
with its default rules (line-length is disabled by a comment in the file: one tensor per line),
and both exports (YAML and JSON) read back to the same findings as the input, one tensor entry
per line. Skips (77) where yamllint is missing. Usage: export-yamllint.py DTYPELINT SOURCE_ROOT"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

dtypelint = os.path.abspath(sys.argv[1])
root = os.path.abspath(sys.argv[2])
if not shutil.which("yamllint"):
    print("SKIP: yamllint is not installed (Debian: apt-get install yamllint)")
    sys.exit(77)
os.chdir(root)
failures = []


def findings(path):
    r = subprocess.run([dtypelint, "-q", "--no-config", "-f", "json", path],
                       capture_output=True, text=True, timeout=120)
    doc = json.loads(r.stdout)
    # the same findings; their order follows line numbers, which an export changes
    return r.returncode, sorted((f["rule"], f["message"], tuple(f["tensors"]))
                                for f in doc["findings"])


inputs = sorted(glob.glob("fixtures/rules/*.yaml")) + ["fixtures/import/tiny-qwen2"]
with tempfile.TemporaryDirectory() as tmp:
    hostile = os.path.join(tmp, "hostile.json")
    names = ['q"uote', "back\\slash", "nel\u0085line", "ls\u2028sep", "colon: x", "# hash",
             "- dash", "&anchor", "!tag", "{flow}", "[seq]", "yes", "null", "~", "0x10", "'s'"]
    with open(hostile, "w", encoding="utf-8") as f:
        json.dump({"dtypelint": 1, "model": {"checkpoint_dtype": "bfloat16"},
                   "tensors": [{"name": f"m.{n}.weight", "dtype": "float32", "shape": [2]}
                               for n in names]}, f, ensure_ascii=False)
    inputs.append(hostile)
    checked = 0
    yamls = {}  # every YAML export, linted by one yamllint run at the end: {path: input}
    for i, src in enumerate(inputs):
        try:
            want = findings(src)
        except (ValueError, KeyError):
            continue  # an input error fixture: nothing to export
        if want[0] == 2:
            continue
        for ext in ("yaml", "json"):
            out = os.path.join(tmp, f"export-{i}.{ext}")
            r = subprocess.run([dtypelint, "-q", "--no-config", "--export", out, src],
                               capture_output=True, text=True, timeout=120)
            if not os.path.exists(out):
                failures.append(f"{src}: no export ({r.stderr[:200]})")
                continue
            if ext == "yaml":
                yamls[out] = src
                text = open(out, encoding="utf-8").read()
                entries = [line for line in text.splitlines() if line.startswith("  - {name: ")]
                if len(entries) == 0:
                    failures.append(f"{src}: the YAML has no one-line tensor entries")
            got = findings(out)
            if got != want:
                failures.append(f"{src} ({ext}): read back to {got} instead of {want}")
        checked += 1
    # one yamllint process for all (it starts in about 0.1 s; one per file was most of the
    # test's time); -f parsable prints "PATH:LINE:COL: [LEVEL] MESSAGE" per problem
    y = subprocess.run(["yamllint", "-f", "parsable"] + sorted(yamls), capture_output=True,
                       text=True)
    problems = [line for line in y.stdout.splitlines() if line.strip()]
    for path, src in sorted(yamls.items()):
        mine = [line for line in problems if line.startswith(path + ":")]
        if mine:
            failures.append(f"{src}: yamllint: {' '.join(mine)[:300]}")
    if y.returncode != 0 and not problems:
        failures.append(f"yamllint exited {y.returncode}: {y.stderr.strip()[:300]}")
    print(f"{checked} inputs exported, {len(yamls)} YAML files linted, "
          f"{len(failures)} failures")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures or checked < 10 else 0)
