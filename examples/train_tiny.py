#!/usr/bin/env python3
"""A training script, shaped like one: build the model, check the set-up with dtypelint before
the first step, then train.

    python3 -m pip install --no-build-isolation ./python     # once (see README.md)
    DTYPELINT_BIN=build/dtypelint python3 examples/train_tiny.py

The model is a tiny decoder in bfloat16 whose norms are kept in float32 "for stability", to be
sharded with FSDP1 on 8 GPUs, one unit per decoder layer. FSDP1 flattens each unit into one
FlatParameter, which needs one dtype, so the wrap would fail on every rank. dtypelint says so
(with the exact error of the torch installed here) before any GPU is allocated; the script then
stops with exit status 1. With --fixed the norms are left in bfloat16 and the script trains a
few steps on the CPU."""
import sys

import torch
import torch.nn as nn

import dtypelint


class DecoderLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.attn = nn.Linear(d, d, bias=False)
        self.mlp = nn.Linear(d, d, bias=False)

    def forward(self, x):
        return x + self.mlp(torch.relu(self.attn(self.norm(x))))


class TinyLM(nn.Module):
    _no_split_modules = ["DecoderLayer"]

    def __init__(self, vocab=64, d=32, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([DecoderLayer(d) for _ in range(layers)])
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(x)


def main():
    fixed = "--fixed" in sys.argv[1:]
    torch.manual_seed(0)
    model = TinyLM().to(torch.bfloat16)
    if not fixed:
        for layer in model.layers:
            layer.norm.float()
    plan = {"strategy": "fsdp1", "precision": "bf16", "world_size": 8,
            "fsdp": {"wrap": ["DecoderLayer"]}}
    findings = dtypelint.check(model, plan=plan)
    for f in findings:
        if f.severity != "info":
            print(f)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        print(f"dtypelint: {len(errors)} error(s): FSDP would raise\n  {errors[0].framework_error}"
              f"\nnot starting the run")
        return 1
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ids = torch.randint(0, 64, (4, 8))
    for step in range(3):
        logits = model(ids[:, :-1]).float()
        loss = nn.functional.cross_entropy(logits.reshape(-1, 64), ids[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step}: loss {loss.item():.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
