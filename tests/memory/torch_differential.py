#!/usr/bin/env python3
"""Differential test of --memory against real torch tensors (Debian python3-torch).

Builds random torch models (Linear, Embedding, LayerNorm, registered buffers persistent or
not, blocks cast to bfloat16, blocks frozen, embedding and head tied), exports each with
dtypelint.export under {strategy: single}, and compares dtypelint's per-rank bytes with the
live tensors after one real backward and one real optimizer step on the CPU:
- params: sum of numel() * element_size() over model.parameters() (a tie counted once);
- buffers: the same over model.buffers();
- grads: the same over the .grad of every trainable parameter;
- optimizer: the same over the optimizer's state tensors (AdamW: exp_avg, exp_avg_sq; SGD:
  momentum_buffer), leaving out torch's scalar 'step' tensor (4 bytes per parameter in torch
  1.13, not a per-element state).
Usage: torch_differential.py DTYPELINT PYTHON_DIR [COUNT] [SEED]
Exit 77 (skip) only when this Python has no torch."""
import json
import os
import random
import subprocess
import sys
import tempfile

try:
    import torch
    import torch.nn as nn
except ImportError:
    print("SKIP: python3-torch is not installed")
    sys.exit(77)

DTYPELINT, PYDIR = sys.argv[1], sys.argv[2]
COUNT = int(sys.argv[3]) if len(sys.argv) > 3 else 20
SEED = int(sys.argv[4]) if len(sys.argv) > 4 else 25
sys.path.insert(0, PYDIR)
import dtypelint  # noqa: E402


class Block(nn.Module):
    def __init__(self, rng, width):
        super().__init__()
        self.fc = nn.Linear(width, width, bias=rng.random() < 0.5)
        self.norm = nn.LayerNorm(width) if rng.random() < 0.5 else None
        self.register_buffer("scale", torch.ones(rng.randint(1, 9)),
                             persistent=rng.random() < 0.5)

    def forward(self, x):
        x = x.to(self.fc.weight.dtype)
        x = self.fc(x)
        if self.norm is not None:
            x = self.norm(x.to(self.norm.weight.dtype))
        return x


class Net(nn.Module):
    def __init__(self, rng):
        super().__init__()
        self.width = rng.randint(2, 24)
        vocab = rng.randint(4, 40)
        self.embed = nn.Embedding(vocab, self.width)
        self.blocks = nn.ModuleList(Block(rng, self.width) for _ in range(rng.randint(1, 4)))
        self.head = nn.Linear(self.width, vocab, bias=False)
        if rng.random() < 0.4:
            self.head.weight = self.embed.weight
        self.vocab = vocab

    def forward(self, ids):
        x = self.embed(ids)
        for b in self.blocks:
            x = b(x)
        return self.head(x.to(self.head.weight.dtype)).float().sum()


def nbytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        if t is None or id(t) in seen:
            continue
        seen.add(id(t))
        total += t.numel() * t.element_size()
    return total


def run(manifest_path):
    out = subprocess.run([DTYPELINT, "-q", "--exit-zero", "--memory", "-f", "json",
                          manifest_path], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"dtypelint exited {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)["inputs"][0]["memory"]["per_rank"]


rng = random.Random(SEED)
torch.manual_seed(SEED)
failures = []
covered = {"tied": 0, "bfloat16": 0, "frozen": 0, "sgd": 0, "adamw": 0}
with tempfile.TemporaryDirectory() as tmp:
    for case in range(COUNT):
        net = Net(rng)
        for b in net.blocks:
            if rng.random() < 0.4:
                b.to(torch.bfloat16)
            if rng.random() < 0.3:
                b.requires_grad_(False)
        optimizer_name = rng.choice(["adamw", "sgd"])
        path = os.path.join(tmp, f"m{case}.json")
        dtypelint.export(net, path, training={"strategy": "single",
                                              "optimizer": optimizer_name})
        got = run(path)
        covered["tied"] += net.head.weight is net.embed.weight
        covered["bfloat16"] += any(p.dtype == torch.bfloat16 for p in net.parameters())
        covered["frozen"] += any(not p.requires_grad for p in net.parameters())
        covered[optimizer_name] += 1
        params = [p for p in net.parameters()]
        trainable = [p for p in params if p.requires_grad]
        if optimizer_name == "adamw":
            opt = torch.optim.AdamW(trainable, lr=1e-3)
        else:
            opt = torch.optim.SGD(trainable, lr=1e-3, momentum=0.9)
        net(torch.randint(0, net.vocab, (3,))).backward()
        opt.step()
        states = [v for s in opt.state.values() for k, v in s.items()
                  if torch.is_tensor(v) and k != "step"]
        want = {"params": nbytes(params), "buffers": nbytes(net.buffers()),
                "grads": nbytes(p.grad for p in trainable), "optimizer": nbytes(states)}
        for key, value in want.items():
            if got[key] != value:
                failures.append(f"case {case} ({optimizer_name}): {key}: dtypelint "
                                f"{got[key]}, torch {value}")
failures += [f"no generated model is {k}" for k, v in covered.items() if not v]
for f in failures:
    print("FAIL:", f)
print(f"covered: {covered}")
print(f"torch {torch.__version__}: {COUNT} models, {len(failures)} disagreements")
sys.exit(1 if failures else 0)
