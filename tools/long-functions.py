#!/usr/bin/env python3
"""List C functions longer than a limit (default 120 lines), longest first.

Usage: tools/long-functions.py [--limit N] [paths...]   (default path: src)
       tools/long-functions.py --check [paths...]

--check is the test `function-size` (issue 37: functions stay small): it fails when the 99th
percentile of all functions' lengths reaches 100 lines or one is longer than --limit (then 150).

A function is a body whose opening brace stands alone in column 0 (the
.clang-format style, BreakBeforeBraces: Linux); its length counts the lines
from the signature's first line to the closing brace in column 0.
"""

import argparse
import os
import re
import sys

NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def signature_start(lines, brace):
    """Index of the first line of the signature that ends just before brace."""
    i = brace - 1
    while i > 0:
        prev = lines[i - 1].rstrip()
        if (not prev or prev.startswith(("#", "/*", " *", "*/"))
                or prev.endswith((";", "}", "*/"))):
            break
        i -= 1
    return i


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            start = signature_start(lines, i)
            sig = " ".join(lines[start:i])
            m = NAME.search(sig)
            end = i + 1
            while end < len(lines) and not lines[end].startswith("}"):
                end += 1
            if m:
                yield m.group(1), start + 1, end - start + 1
            i = end
        i += 1


P99_LIMIT = 100


def check(every, limit):
    """--check: the p99 and the longest, against their limits; 1 when one is passed."""
    if len(every) < 100:
        print(f"FAIL: only {len(every)} functions found")
        return 1
    lengths = sorted(t[0] for t in every)
    p99 = lengths[int(len(lengths) * 0.99)]
    print(f"{len(lengths)} functions: median {lengths[len(lengths) // 2]} lines, "
          f"99th percentile {p99}, longest {lengths[-1]}")
    fail = 0
    if p99 >= P99_LIMIT:
        print(f"FAIL: the 99th percentile of function lengths is {p99} lines (limit {P99_LIMIT})")
        fail = 1
    for length, path, line, name in every:
        if length > limit:
            print(f"FAIL: {path}:{line}: {name} is {length} lines (limit {limit}): split it")
            fail = 1
    return fail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("paths", nargs="*", default=["src"])
    args = ap.parse_args()
    limit = args.limit or (150 if args.check else 120)
    every = []
    for top in args.paths:
        files = [top] if os.path.isfile(top) else [
            os.path.join(d, n) for d, _, ns in os.walk(top) for n in ns if n.endswith(".c")]
        for path in sorted(files):
            every += [(length, path, line, name) for name, line, length in functions(path)]
    if args.check:
        return check(every, limit)
    found = [t for t in every if t[0] > limit]
    for length, path, line, name in sorted(found, key=lambda t: (-t[0], t[1], t[2])):
        print(f"{length:5d}  {path}:{line}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
