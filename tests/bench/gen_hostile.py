#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes the crafted manifests of issue 21, requirement 5 (one per class that once ran in
quadratic or exponential time) into a directory; the files are generated, never stored.

    python3 tests/bench/gen_hostile.py DIR CLASS N    -> prints the path of the file written

CLASS and what N counts:
  keep       N keep_in_fp32 entries that match nothing, N quantized linear layers
             (the quantize stage's skip-list check: entries x modules)
  direct     direct_access: ["**"] under ZeRO-3, N tensors (the per-tensor alias scan)
  routers    N routers globs that match nothing, N layers (DT601's unused-pattern check)
  suppress   N findings (DT202 routers kept in float32), N suppressions of DT202
             (suppressions x findings)
  longname   one tensor whose name has N segments
  yamlnest   a YAML flow sequence nested N deep ('[[[[...')
  jsonnest   a JSON array nested N deep
  globstar   frozen: one glob of N '**' segments and a literal that no name has, N tensors
             (backtracking at '**')
  pfiglob    a .dtypelint.yaml whose per-file-ignores glob is N '**/' and a name no file has,
             beside a manifest N / 2 folders deep (backtracking at '**' in path globs)
  setups     a .dtypelint.yaml of N set-ups whose names share a 200-byte prefix, the last
             one named as the first (the duplicate-name check: set-ups x set-ups)
  launch     a launch script of N assignments and one command of N continued arguments
  fwkeys     a verl trainer config of N keys dtypelint does not read: N / 2 top-level
             sections, N / 2 keys in one section, and a chain of mappings 60 deep of long
             keys (--show-plan's keys not read: each key's path against the keys read)

Standard library only.
"""
import json
import os
import sys

HEAD = {"dtypelint": 1}


def layers(n, extra=None):
    """n decoder layers with a linear weight each (and whatever extra(i) adds)."""
    tensors = [{"name": "model.embed_tokens.weight", "shape": [100, 8]}]
    for i in range(n):
        tensors.append({"name": f"model.layers.{i}.self_attn.q_proj.weight", "shape": [1024, 1024]})
        if extra:
            tensors.extend(extra(i))
    tensors.append({"name": "lm_head.weight", "shape": [100, 8]})
    return tensors


def keep(n):
    return dict(HEAD, model={"checkpoint_dtype": "bfloat16",
                             "keep_in_fp32": [f"nomatch_{i}" for i in range(n)]},
                tensors=layers(n),
                quantization={"method": "bnb-4bit", "compute_dtype": "bfloat16"},
                training={"strategy": "fsdp2", "precision": "bf16"})


def direct(n):
    return dict(HEAD, model={"checkpoint_dtype": "bfloat16"}, tensors=layers(n),
                training={"strategy": "zero3", "precision": "bf16", "world_size": 8,
                          "direct_access": ["**"]})


def routers(n):
    return dict(HEAD, model={"checkpoint_dtype": "bfloat16",
                             "routers": [f"model.layers.*.mlp.router_{i}" for i in range(n)]},
                tensors=layers(n), training={"strategy": "fsdp2", "precision": "bf16"})


def suppress(n):
    def router(i):
        return [{"name": f"model.layers.{i}.mlp.gate.weight", "shape": [4, 8], "dtype": "float32"},
                {"name": f"model.layers.{i}.mlp.experts.0.up_proj.weight", "shape": [1024, 1024]}]
    return dict(HEAD, model={"checkpoint_dtype": "bfloat16"}, tensors=layers(n, router),
                training={"strategy": "fsdp2", "precision": "bf16",
                          "fsdp": {"param_dtype": "bfloat16"}},
                suppress=[{"rule": "DT202", "tensors": f"model.layers.{i}.mlp.gate.*",
                           "reason": "benchmark"} for i in range(n)])


def longname(n):
    name = ".".join(f"s{i % 10}" for i in range(n)) + ".weight"
    return dict(HEAD, model={"checkpoint_dtype": "bfloat16"},
                tensors=[{"name": name, "shape": [1024, 1024]}],
                training={"strategy": "fsdp2", "precision": "bf16"})


def globstar(n):
    pattern = ".".join(["**"] * n) + ".nomatch"
    return dict(HEAD, model={"checkpoint_dtype": "bfloat16"}, tensors=layers(n),
                frozen=[pattern], training={"strategy": "fsdp2", "precision": "bf16"})


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    out, cls, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    if cls == "yamlnest":
        path = os.path.join(out, f"yamlnest-{n}.yaml")
        with open(path, "w") as f:
            f.write("dtypelint: 1\nmodel: " + "[" * n + "]" * n + "\n")
    elif cls == "jsonnest":
        path = os.path.join(out, f"jsonnest-{n}.json")
        with open(path, "w") as f:
            f.write('{"dtypelint": 1, "model": ' + "[" * n + "]" * n + "}\n")
    elif cls == "pfiglob":
        top = os.path.join(out, f"pfiglob-{n}")
        deep = os.path.join(top, *(["a"] * (n // 2)))
        os.makedirs(deep, exist_ok=True)
        with open(os.path.join(top, ".dtypelint.yaml"), "w") as f:
            f.write('per-file-ignores:\n  "' + "**/" * n + 'nomatch": [DT101]\n')
        # a finding, so that the glob is tried (DT101: an FSDP1 unit mixing dtypes)
        path = os.path.join(deep, "m.json")
        with open(path, "w") as f:
            json.dump(dict(HEAD, model={"checkpoint_dtype": "bfloat16",
                                        "modules": {"layers.*": "Block"},
                                        "no_split_modules": ["Block"]},
                           tensors=[{"name": "layers.0.a.weight", "shape": [4, 4]},
                                    {"name": "layers.0.b.weight", "shape": [4],
                                     "dtype": "float32"}],
                           training={"strategy": "fsdp1", "versions": {"torch": "2.4.1"}}), f)
    elif cls == "setups":
        top = os.path.join(out, f"setups-{n}")
        os.makedirs(top, exist_ok=True)
        prefix = "s" * 200
        with open(os.path.join(top, ".dtypelint.yaml"), "w") as f:
            f.write("setups:\n")
            f.write("".join(f"  - {{name: {prefix}{i}, model: m.json}}\n" for i in range(n - 1)))
            f.write(f"  - {{name: {prefix}0, model: m.json}}\n")
        path = os.path.join(top, "m.json")
        with open(path, "w") as f:
            json.dump(dict(HEAD, tensors=layers(1)), f)
    elif cls == "fwkeys":
        path = os.path.join(out, f"fwkeys-{n}.yaml")
        with open(path, "w") as f:
            f.write("actor_rollout_ref:\n  actor:\n    strategy: fsdp\n")
            f.write("  rollout:\n    name: vllm\n")
            f.write("".join(f"    k{i}: {i}\n" for i in range(n // 2)))
            f.write("".join(f"s{i}:\n  k: {i}\n" for i in range(n // 2)))
            f.write("".join("  " * d + "k" * 200 + f"{d}:\n" for d in range(60)))
            f.write("  " * 60 + "leaf: 1\n")
    elif cls == "launch":
        # --launch: n assignments, then one command of n continued lines, each argument a
        # quoted expansion (a variable, a default, an unset one), and n comments
        path = os.path.join(out, f"launch-{n}.sh")
        with open(path, "w") as f:
            f.write("".join(f"V{i}=value{i}  # comment {i}\n" for i in range(n)))
            f.write("deepspeed --num_gpus 8 train.py \\\n")
            f.write("".join(f'  --a{i} "$V{i % 300}" \'${{V{i}:-x}}\' ${{U{i}:-$V{i}}} \\\n'
                            for i in range(n)))
            f.write("  --bf16\n")
    else:
        make = {"keep": keep, "direct": direct, "routers": routers, "suppress": suppress,
                "longname": longname, "globstar": globstar}.get(cls)
        if not make:
            sys.exit(f"unknown class {cls!r}")
        path = os.path.join(out, f"{cls}-{n}.json")
        with open(path, "w") as f:
            json.dump(make(n), f)
    print(path)


if __name__ == "__main__":
    main()
