#!/usr/bin/env python3
"""The JSON output's schema, as man/dtypelint.1 documents it (section JSON OUTPUT: one
`.BR path " (type)"` entry per field), is the schema of the real output: every field the
output has is documented with the right type, and every documented field occurs. json-lines
objects are the documented findings[] objects.

Usage: json-schema-doc.py DTYPELINT SOURCE_ROOT
"""
import glob
import json
import os
import re
import subprocess
import sys

dtypelint, root = os.path.abspath(sys.argv[1]), sys.argv[2]
os.chdir(root)
FRAMEWORKS = {"torch", "transformers", "peft", "deepspeed", "accelerate", "trl", "bitsandbytes",
              "nemo-automodel"}

# the documented fields
page = open("man/dtypelint.1", encoding="utf-8").read()
section = re.search(r"^\.SH \"?JSON OUTPUT\"?\n(.*?)^\.SH ", page, re.S | re.M)
if not section:
    sys.exit("man/dtypelint.1 has no JSON OUTPUT section")
documented = {}
for m in re.finditer(r'^\.BR (\S+) " \(([a-z ]+)\)"$', section.group(1), re.M):
    path = m.group(1).replace("\\-", "-").replace("\\&", "")
    types = set(m.group(2).split(" or "))
    bad = types - {"string", "integer", "boolean", "object", "array", "null"}
    if bad:
        sys.exit(f"man page: unknown type {bad} for {path}")
    documented[path] = types
if len(documented) < 20:
    sys.exit(f"man page: only {len(documented)} documented JSON fields")


def type_of(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "number"


seen = {}


def walk(path, v):
    seen.setdefault(path, set()).add(type_of(v))
    if path == "input_warnings[]":  # documented as objects of the findings[] shape
        path = "findings[]"
    if isinstance(v, dict):
        for k, x in v.items():
            if path.endswith("versions") and k in FRAMEWORKS:
                k = "NAME"
            walk(f"{path}.{k}" if path else k, x)
    elif isinstance(v, list):
        for x in v:
            walk(path + "[]", x)


inputs = sorted(glob.glob("fixtures/rules/*.yaml") + glob.glob("fixtures/rules/*.json"))
inputs += ["fixtures/cli/suppress/listed.yaml", "fixtures/cli/config/no-plan.yaml",
           "fixtures/versions/range/qwen2-lora-zero3.yaml"]
# the manifests that lint (exit 0 or 1: a fixture may be an input error on purpose)
inputs = [p for p in inputs
          if subprocess.run([dtypelint, "-q", "-f", "json-lines", p], capture_output=True,
                            check=False).returncode <= 1]
out = subprocess.run([dtypelint, "-q", "--memory", "-f", "json", *inputs], capture_output=True,
                     text=True, check=False)
if out.returncode > 1:
    sys.exit(f"dtypelint -f json exited {out.returncode}: {out.stderr}")
walk("", json.loads(out.stdout))
# input warnings (DT003), which the manifests above do not have
WARNED = ["fixtures/import/tiny-qwen2", "--framework-config",
          "fixtures/framework-keys/automodel-defaults-only.yaml"]
out = subprocess.run([dtypelint, "-q", "-f", "json", *WARNED], capture_output=True, text=True,
                     check=False)
report = json.loads(out.stdout)
if not report["input_warnings"] or report["summary"]["input_warnings"] != len(
        report["input_warnings"]):
    sys.exit(f"-f json {' '.join(WARNED)}: no input_warnings, or a count that differs")
walk("", report)
lines = subprocess.run([dtypelint, "-q", "-f", "json-lines", *inputs], capture_output=True,
                       text=True, check=False).stdout.splitlines()
if not lines:
    sys.exit("json-lines printed nothing")
lines += subprocess.run([dtypelint, "-q", "-f", "json-lines", *WARNED], capture_output=True,
                        text=True, check=False).stdout.splitlines()
for line in lines:
    walk("findings[]", json.loads(line))
seen.pop("", None)

failures = []
for path, types in sorted(seen.items()):
    if path not in documented:
        failures.append(f"output field {path} ({' or '.join(sorted(types))}) is not documented")
    elif not types <= documented[path]:
        failures.append(f"{path}: output has {sorted(types)}, documented "
                        f"{sorted(documented[path])}")
for path in sorted(documented):
    if path not in seen:
        failures.append(f"documented field {path} never occurs in the output")
for f in failures:
    print(f)
print(f"JSON schema: {len(documented)} documented fields, {len(seen)} in the output of "
      f"{len(inputs)} manifests")
sys.exit(1 if failures else 0)
