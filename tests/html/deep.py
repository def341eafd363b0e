#!/usr/bin/env python3
"""-f html and -f markdown on a chain of 1,000 nested modules, every one an FSDP1 unit that
mixes dtypes (issue 26, hostile inputs): no crash, no recursion, <details> balanced, nesting
capped, and an output linear in the input (no full path per module or group: that would be
1,000 x 2 kB).
Usage: deep.py DTYPELINT
"""
import os, re, subprocess, sys, tempfile

dtypelint = os.path.abspath(sys.argv[1])
DEPTH = 1000
failures = []
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "deep.yaml")
    with open(path, "w") as f:
        f.write("dtypelint: 1\nmodel: {checkpoint_dtype: bfloat16}\ntensors:\n")
        for d in range(1, DEPTH + 1):
            name = ".".join(["m"] * d)
            f.write(f"  - {{name: {name}.w, shape: [2]}}\n"
                    f"  - {{name: {name}.v, shape: [2], dtype: float32}}\n")
        f.write('training: {strategy: fsdp1, versions: {torch: "2.4.1"}, '
                'fsdp: {wrap: ["**"]}}\n')
    for fmt in ("html", "markdown"):
        r = subprocess.run([dtypelint, "-q", "-f", fmt, path], capture_output=True, timeout=240)
        if r.returncode != 1:
            failures.append(f"{fmt}: exit {r.returncode}: {r.stderr[:200]!r}")
        out = r.stdout.decode("utf-8")
        # two rows per module: 2 kB each is plenty; a full path per module or group is not
        if len(out) > DEPTH * 2000:
            failures.append(f"{fmt}: {len(out)} bytes for {DEPTH} modules")
        if fmt == "html":
            opened, closed = out.count("<details"), out.count("</details>")
            if opened != closed or opened < DEPTH:
                failures.append(f"html: {opened} <details>, {closed} closed")
            depth = deepest = 0
            for tok in re.findall(r"<details id=|</details>", out):
                depth += 1 if tok.startswith("<details") else -1
                deepest = max(deepest, depth)
            if deepest > 40:
                failures.append(f"html: modules nested {deepest} deep")
for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
