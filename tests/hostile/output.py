#!/usr/bin/env python3
"""Hostile input against the outputs (issue 21, requirement 2): nothing from an input reaches a
terminal or a CI log raw. The files are made here, in a temporary directory: a manifest named
like a GitHub workflow command, with control characters (ESC, a C1 code, CR) in its tensor
names, and a broken one of the same kind of name. Checks, for the text and github formats and
standard error:
- no ESC (0x1b), no C1 control (U+0080-U+009F), no CR reaches any output raw;
- no line starts with "::" unless it is one of dtypelint's own workflow commands, whose
  file property has its ':' and ',' encoded.
Usage: output.py DTYPELINT
"""
import os, re, subprocess, sys, tempfile

dtypelint = os.path.abspath(sys.argv[1])
OWN = re.compile(r"^::(error|warning|notice) (file=[^:,]*,line=\d+,col=\d+,title=[^:]*|"
                 r"title=dtypelint)::")
failures = []

def check(what, data):
    text = data.decode("utf-8", "replace")
    if "\x1b" in text:
        failures.append(f"{what}: a raw ESC")
    if re.search("[\u0080-\u009f]", text):
        failures.append(f"{what}: a raw C1 control")
    if "\r" in text:
        failures.append(f"{what}: a raw CR")
    for line in text.split("\n"):
        if line.startswith("::") and not OWN.match(line):
            failures.append(f"{what}: a line that is a workflow command: {line[:80]!r}")

with tempfile.TemporaryDirectory() as tmp:
    name = "::warning file=x,line=1::pwned.yaml"
    # twelve units: more than GitHub annotates, so the overflow lines are printed too
    tensors = "".join(
        f'  - {{name: "layers.{i}.\\e[31mred\\u0085.weight", shape: [4, 4]}}\n'
        f'  - {{name: "layers.{i}.n\\r::error::x.weight", shape: [4], dtype: float{16 + 16 * (i % 2)}}}\n'
        for i in range(12))
    with open(os.path.join(tmp, name), "w") as f:
        f.write("dtypelint: 1\nmodel: {checkpoint_dtype: bfloat16}\ntensors:\n" + tensors +
                'training: {strategy: fsdp1, versions: {torch: "2.4.1"}, '
                'fsdp: {wrap: ["layers.*"]}}\n')
    with open(os.path.join(tmp, "::error::bad\x1b[2J.yaml"), "w") as f:
        f.write("dtypelint: 1\ntensors: {}\n")
    for fmt in ("text", "github"):
        for target in (name, "::error::bad\x1b[2J.yaml"):
            run = subprocess.run([dtypelint, "-f", fmt, "--trace", "**", target], cwd=tmp,
                                 capture_output=True)
            if run.returncode not in (0, 1, 2):
                failures.append(f"{fmt} {target!r}: exit {run.returncode}")
            check(f"{fmt} stdout", run.stdout)
            check(f"{fmt} stderr", run.stderr)
for f in failures[:20]:
    print(f)
print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
sys.exit(1 if failures else 0)
