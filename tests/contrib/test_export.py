#!/usr/bin/env python3
"""The live-model exporter (dtypelint.export, python/dtypelint/exporter.py) on plain torch models, with
Debian's python3-torch: every parameter and buffer, in named_parameters order, tied weights once,
persistence, requires_grad, module globs; and dtypelint reads what it writes, with the verdicts
the model deserves, which the project's real-torch oracle (dtypelint.oracle) confirms.
Usage: test_export.py DTYPELINT SOURCE_ROOT"""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(sys.argv[2], "python"))
try:
    import torch
    import torch.nn as nn
except ImportError:
    print("SKIP: python3-torch is not installed")
    sys.exit(77)
from dtypelint import build_manifest, export as export_manifest

failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)
    else:
        print("ok:", what)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.register_buffer("inv_freq", torch.ones(4), persistent=False)
        self.register_buffer("steps", torch.zeros(1, dtype=torch.int64))


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.layers = nn.ModuleList([Block() for _ in range(3)])
        self.head = nn.Linear(8, 16, bias=False)
        self.head.weight = self.embed.weight  # tied
        self._no_split_modules = ["Block"]


model = Tiny()
model.layers[1].attn.weight.requires_grad_(False)
m = build_manifest(model)
names = [t["name"] for t in m["tensors"] if t.get("kind") != "buffer"]
check(names == [n for n, _ in model.named_parameters()], "parameters in named_parameters() order")
check(m["model"]["tied"] == [["embed.weight", "head.weight"]], "tied weight listed once and in model.tied")
buf = {t["name"]: t for t in m["tensors"] if t.get("kind") == "buffer"}
check(buf["layers.0.inv_freq"].get("persistent") is False, "non-persistent buffer")
check("persistent" not in buf["layers.0.steps"] and buf["layers.0.steps"]["dtype"] == "int64",
      "persistent int64 buffer")
check([t for t in m["tensors"] if t["name"] == "layers.1.attn.weight"][0]["trainable"] is False,
      "requires_grad exported")
check(m["model"]["modules"].get("layers.*") == "Block", "module classes as globs")
check(m["model"]["no_split_modules"] == ["Block"], "_no_split_modules copied")
check(len(m["tensors"]) == len(list(model.parameters())) + len(list(model.buffers())),
      "every parameter and buffer")

binary = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "tiny.json")
    export_manifest(model, path, training={"strategy": "fsdp1", "versions": {"torch": "1.13"}})
    run = subprocess.run([binary, "-f", "json", path], capture_output=True, text=True)
    check(run.returncode in (0, 1), f"dtypelint reads the export (exit {run.returncode}: {run.stderr.strip()})")
    report = json.loads(run.stdout) if run.returncode in (0, 1) else {"findings": []}
    rules = sorted({f["rule"] for f in report["findings"]})
    # Block units hold one frozen and trainable params in layer 1: FSDP1 on torch 1.13 refuses it
    check("DT102" in rules, f"the frozen weight in layers.1 gives DT102 (got {rules})")
    model.layers[1].attn.weight.requires_grad_(True)
    model.layers[2].norm.to(torch.bfloat16)
    export_manifest(model, path, training={"strategy": "fsdp1", "versions": {"torch": "1.13"}})
    report = json.loads(subprocess.run([binary, "-f", "json", path], capture_output=True, text=True).stdout)
    msgs = [f["framework_error"]["text"] for f in report["findings"] if f["rule"] == "DT101"]
    check(msgs == ["ValueError: `FlatParameter` requires uniform dtype but got torch.float32 and torch.bfloat16"],
          f"a bf16 norm in a float32 block gives torch 1.13's DT101 text (got {msgs})")
    # ground truth: the real FSDP1 on the exported manifest says the same
    with open(path) as f:
        exported = json.load(f)
    exported["training"]["fsdp"] = {"wrap": ["Block"]}
    with open(path, "w") as f:
        json.dump(exported, f)
    env = dict(os.environ, PYTHONPATH=os.path.join(sys.argv[2], "python"))
    run = subprocess.run([sys.executable, "-m", "dtypelint.oracle", path], capture_output=True,
                         text=True, env=env)
    truth = json.loads(run.stdout or "{}")
    check(truth.get("ok") is False and f"{truth['error_type']}: {truth['error']}" == msgs[0],
          f"the real FSDP1 raises the same on the exported model ({truth or run.stderr[-500:]})")

print(f"{checks - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
