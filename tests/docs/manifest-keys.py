#!/usr/bin/env python3
"""dtypelint-manifest(5)'s Plan section and the plan's key table (include/dtypelint/model/plan-keys.h) name
the same keys: each top-level key of the table is a .TP heading of the section and each
heading a key of the table, and each nested key (fsdp.wrap, zero3.data_types.param_dtype) is
set in bold in its top-level key's paragraph, as is each word an enumeration takes. The table's keys come from
`dtl-gen-plan-schema keys`.

Usage: manifest-keys.py GEN_PLAN_SCHEMA SOURCE_ROOT
"""
import os
import re
import shlex
import subprocess
import sys

gen, root = os.path.abspath(sys.argv[1]), sys.argv[2]
page = open(os.path.join(root, "man", "dtypelint-manifest.5"), encoding="utf-8").read()
rows = [line.split() for line in
        subprocess.run([gen, "keys"], capture_output=True, text=True, check=True).stdout.splitlines()]
keys = [row[0] for row in rows]
section = re.search(r"^\.SS Plan\n(.*?)^\.(?:SS|SH) ", page, re.S | re.M).group(1)


def bold_words(lines):
    """the words set in bold by .B, .BR (its odd arguments) and .RB (its even ones)"""
    words = set()
    for line in lines:
        macro, _, rest = line.partition(" ")
        if macro not in (".B", ".BR", ".RB"):
            continue
        try:
            args = shlex.split(rest.replace("\\-", "-"))
        except ValueError:
            continue
        if macro == ".B":
            args = [" ".join(args)]
        start = 1 if macro == ".RB" else 0
        for arg in args[start::2] if macro != ".B" else args:
            words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_-]*", arg))
    return words


# the .TP paragraphs: heading (the .B line after .TP) -> the paragraph's lines
paragraphs = {}
lines = section.splitlines()
for i, line in enumerate(lines):
    if line == ".TP" and i + 1 < len(lines) and lines[i + 1].startswith(".B "):
        name = lines[i + 1][3:].replace("\\-", "-").strip('"')
        body = []
        for following in lines[i + 2:]:
            if following in (".TP", ".PP"):
                break
            body.append(following)
        paragraphs[name] = body

failures = []
top = [k for k in keys if "." not in k]
for k in top:
    if k not in paragraphs:
        failures.append(f"'{k}' is in include/dtypelint/model/plan-keys.h but not a key of "
                        "dtypelint-manifest(5)'s Plan section")
for name in paragraphs:
    if name not in top:
        failures.append(f"'{name}' is in dtypelint-manifest(5)'s Plan section but not in "
                        "include/dtypelint/model/plan-keys.h")
for k in keys:
    if "." not in k:
        continue
    parent, leaf = k.split(".")[0], k.split(".")[-1]
    if parent in paragraphs and leaf not in bold_words(paragraphs[parent]):
        failures.append(f"'{k}' is in include/dtypelint/model/plan-keys.h but dtypelint-manifest(5)'s "
                        f"'{parent}' does not name '{leaf}' in bold")
for path, _, *values in rows:
    top_key = path.split(".")[0]
    missing = [v for v in values if top_key in paragraphs and v not in bold_words(paragraphs[top_key])]
    if missing:
        failures.append(f"'{path}' takes {', '.join(missing)} (include/dtypelint/model/plan-keys.h), which "
                        f"dtypelint-manifest(5)'s '{top_key}' does not name in bold")
for f in failures:
    print("FAIL:", f)
if not failures:
    print(f"dtypelint-manifest(5) names all {len(keys)} keys of the plan's table")
sys.exit(1 if failures else 0)
