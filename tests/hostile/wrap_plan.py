#!/usr/bin/env python3
"""Generated code is code the user meant (issue 21, requirement 3): --wrap-plan's Python snippet
over fuzzed module names always parses (ast.parse; it is never executed), every
get_submodule() argument is a plain string constant equal to a module of the manifest, and a
name that is not a dotted path of identifiers and indices is refused (exit 2), never pasted.
Usage: wrap_plan.py DTYPELINT"""
import ast
import json
import os
import random
import subprocess
import sys
import tempfile

dtypelint = os.path.abspath(sys.argv[1])
failures = []
rng = random.Random(21)
ALPHABET = ['a', 'b', '_', '0', '7', '.', '"', "'", '\\', '\n', '\r', '\t', ')', '(', ';', '#',
            ' ', '\x1b', '\x00', '\x7f', '\u00e9', '\u202e', '\u2028', '{', '%', 'x', 'Z']


def check(name, ok, detail=""):
    if not ok:
        print(f"FAIL {name}: {detail}")
        failures.append(name)


def manifest(names, path):
    # a float32 module inside a bfloat16 layer: the float32 one gets its own group
    tensors = []
    for n in names:
        tensors.append({"name": f"layers.0.{n}.weight", "dtype": "float32", "shape": [4]})
    tensors.append({"name": "layers.0.norm1.weight", "dtype": "bfloat16", "shape": [4]})
    tensors.append({"name": "layers.0.norm2.weight", "dtype": "bfloat16", "shape": [4]})
    doc = {"dtypelint": 1, "model": {"checkpoint_dtype": "bfloat16"}, "tensors": tensors,
           "training": {"strategy": "fsdp2", "world_size": 2}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=rng.random() < 0.5)


def calls(tree):
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get_submodule":
            out.append(node.args[0])
    return out


def valid(name):
    for seg in name.split("."):
        if not seg:
            return False
        if seg[0].isdigit():
            if not seg.isdigit() or not seg.isascii():
                return False
        elif not (seg.isascii() and seg.replace("_", "a").isalnum()):
            return False
    return True


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "m.json")
    planned = refused = 0
    for case in range(300):
        name = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12)))
        if rng.random() < 0.3:
            name = "mlp." + name.replace(".", "")
        manifest([name], path)
        r = subprocess.run([dtypelint, "--wrap-plan", path], capture_output=True, timeout=60)
        out = r.stdout.decode("utf-8", errors="strict")
        err = r.stderr.decode("utf-8", errors="replace")
        if r.returncode == 2 and ("is not a dotted path" in err or "error:" in err):
            # refused, by --wrap-plan or by the manifest's own checks; nothing printed
            check(f"case {case} refused cleanly", "fully_shard(model.get_submodule" not in out,
                  repr(name))
            refused += 1
            continue
        check(f"case {case} exit", r.returncode in (0, 1), f"{r.returncode} {err[:200]!r}")
        try:
            tree = ast.parse(out)
        except SyntaxError as e:
            check(f"case {case} parses", False, f"{name!r}: {e}")
            continue
        args = calls(tree)
        for a in args:
            check(f"case {case} literal", isinstance(a, ast.Constant) and isinstance(a.value, str),
                  ast.dump(a))
        got = {a.value for a in args if isinstance(a, ast.Constant)}
        # the float32 subtree's top module is the group
        want = "layers.0." + name.split(".")[0]
        check(f"case {case} module", want in got, f"{want!r} not in {got}")
        for g in got:
            check(f"case {case} valid name", valid(g), repr(g))
        planned += 1
    print(f"{planned} planned, {refused} refused")
    check("both kinds seen", planned > 10 and refused > 10, f"{planned} {refused}")

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
