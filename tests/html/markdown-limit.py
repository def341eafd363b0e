#!/usr/bin/env python3
"""-f markdown stays within GitHub's 1 MiB step-summary limit and counts what it leaves out
(issue 26). A generated FSDP1 set-up with thousands of mixed units (one finding with a note
per unit) and thousands of unused frozen patterns (a finding each): far more than 1 MiB. The
summary must be at most 1 MiB, show the error, cap its notes with a count, say how many
findings (of which severity) it left out, and those plus the shown ones must be every
finding of -f json.
Usage: markdown-limit.py DTYPELINT
"""
import json, os, re, subprocess, sys, tempfile

dtypelint = os.path.abspath(sys.argv[1])
LIMIT = 1 << 20
UNITS = 3000
PATTERNS = 8000
failures = []
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "many-units.yaml")
    with open(path, "w") as f:
        f.write("dtypelint: 1\nmodel: {checkpoint_dtype: bfloat16}\ntensors:\n")
        for i in range(UNITS):
            f.write(f"  - {{name: layers.{i}.attn.weight, shape: [4, 4]}}\n"
                    f"  - {{name: layers.{i}.norm.weight, shape: [4], dtype: float32}}\n")
        f.write("frozen: [" + ", ".join(f'"gone.{i}.**"' for i in range(PATTERNS)) + "]\n")
        f.write('training: {strategy: fsdp1, versions: {torch: "2.4.1"}, '
                'fsdp: {wrap: ["layers.*"]}}\n')
    md = subprocess.run([dtypelint, "-q", "-f", "markdown", path], capture_output=True)
    js = subprocess.run([dtypelint, "-q", "-f", "json", path], capture_output=True)
findings = json.loads(js.stdout)["findings"]
text = md.stdout.decode("utf-8")
if md.returncode != 1:
    failures.append(f"exit {md.returncode}, want 1")
if len(js.stdout) <= LIMIT:
    failures.append(f"the case is too small to test the limit: -f json is {len(js.stdout)} B")
if len(md.stdout) > LIMIT:
    failures.append(f"the summary is {len(md.stdout)} bytes, GitHub takes {LIMIT}")
shown = len(re.findall(r"^### \S+ DT\d+ ", text, re.M))
m = re.search(r"\*\*(\d+) more findings? not shown\*\* \((\d+) errors?, (\d+) warnings?, "
              r"(\d+) info\)", text)
if not m:
    failures.append("no count of the findings left out")
else:
    left = int(m.group(1))
    if shown + left != len(findings):
        failures.append(f"{shown} shown + {left} left out != {len(findings)} findings")
    errors = sum(1 for f in findings if f["severity"] == "error")
    shown_errors = len(re.findall(r"^### \u274c DT\d+ ", text, re.M))
    if not shown_errors:
        failures.append("the error is not shown: the most severe come first")
    if int(m.group(2)) != errors - shown_errors:
        failures.append(f"{m.group(2)} errors left out, want {errors - shown_errors}")
    if int(m.group(2)) + int(m.group(3)) + int(m.group(4)) != left:
        failures.append("the counts by severity do not add up")
if not re.search(r"^- \u2026 and %d more notes$" % (UNITS - 1 - 20), text, re.M):
    failures.append("the error's notes are not capped with a count")
if shown < 100:
    failures.append(f"only {shown} findings shown: the limit is 1 MiB, not far less")
if "### Versions assumed" not in text:
    failures.append("the versions are gone")
for f in failures:
    print("FAIL:", f)
print(f"{shown} shown, {len(md.stdout)} bytes; {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
