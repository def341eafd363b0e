#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write a Hugging Face style model folder of sparse safetensors shards (issue 5 benchmark).

The folder holds K shards model-0000k-of-0000K.safetensors with T tensors in total, named as
in a Qwen3-MoE / DeepSeek checkpoint (model.layers.N.mlp.experts.E.gate_proj.weight, ...),
a model.safetensors.index.json weight_map and a minimal config.json. Each shard is a valid
safetensors file (8-byte little-endian header length, JSON header padded with spaces to a
multiple of 8 as the reference writer does, data section) whose data section is a hole made
with truncate: hundreds of GB nominal, a few MB on disk.

    python3 tests/bench/gen_safetensors_folder.py /tmp/moe --shards 60 --tensors 100000

Standard library only.
"""
import argparse
import json
import os
import struct
import sys

ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "U8": 1, "I64": 8, "I32": 4}
TORCH_DTYPE = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}


def tensor_list(args):
    """[(name, shape)] in checkpoint order, exactly args.tensors long."""
    h, v, e = args.hidden, args.vocab, args.experts
    heads, kv, hd, inter = args.heads, args.kv_heads, args.head_dim, args.moe_intermediate
    glob_head = [("model.embed_tokens.weight", [v, h])]
    glob_tail = [("model.norm.weight", [h])]
    if not args.tie_word_embeddings:
        glob_tail.append(("lm_head.weight", [v, h]))
    want = args.tensors - len(glob_head) - len(glob_tail)
    if want < 0:
        sys.exit("--tensors is smaller than the embedding, norm and head tensors")
    layers = []
    n = 0
    while len(layers) < want:
        p = f"model.layers.{n}."
        layers += [
            (p + "input_layernorm.weight", [h]),
            (p + "self_attn.q_proj.weight", [heads * hd, h]),
            (p + "self_attn.k_proj.weight", [kv * hd, h]),
            (p + "self_attn.v_proj.weight", [kv * hd, h]),
            (p + "self_attn.o_proj.weight", [h, heads * hd]),
            (p + "self_attn.q_norm.weight", [hd]),
            (p + "self_attn.k_norm.weight", [hd]),
            (p + "post_attention_layernorm.weight", [h]),
            (p + "mlp.gate.weight", [e, h]),
        ]
        for x in range(e):
            q = f"{p}mlp.experts.{x}."
            layers += [
                (q + "gate_proj.weight", [inter, h]),
                (q + "up_proj.weight", [inter, h]),
                (q + "down_proj.weight", [h, inter]),
            ]
        n += 1
    return glob_head + layers[:want] + glob_tail, n


def numel(shape):
    out = 1
    for d in shape:
        out *= d
    return out


def write_shard(path, tensors, dtype):
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape in tensors:
        size = numel(shape) * ITEMSIZE[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.truncate(8 + len(text) + offset)
    return offset


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="folder to write (created if missing)")
    ap.add_argument("--shards", type=int, default=60)
    ap.add_argument("--tensors", type=int, default=100000)
    ap.add_argument("--experts", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--moe-intermediate", type=int, default=768)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=151936)
    ap.add_argument("--dtype", default="BF16", choices=sorted(ITEMSIZE))
    ap.add_argument("--tie-word-embeddings", action="store_true")
    args = ap.parse_args()
    if args.shards < 1 or args.tensors < args.shards:
        sys.exit("need 1 <= --shards <= --tensors")

    tensors, layers = tensor_list(args)
    os.makedirs(args.out, exist_ok=True)
    weight_map, total = {}, 0
    per, extra = divmod(len(tensors), args.shards)
    start = 0
    for k in range(args.shards):
        count = per + (1 if k < extra else 0)
        chunk = tensors[start:start + count]
        start += count
        shard = f"model-{k + 1:05d}-of-{args.shards:05d}.safetensors"
        total += write_shard(os.path.join(args.out, shard), chunk, args.dtype)
        for name, _ in chunk:
            weight_map[name] = shard

    with open(os.path.join(args.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")
    config = {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "hidden_size": args.hidden,
        "moe_intermediate_size": args.moe_intermediate,
        "num_experts": args.experts,
        "num_experts_per_tok": 8,
        "num_hidden_layers": layers,
        "num_attention_heads": args.heads,
        "num_key_value_heads": args.kv_heads,
        "head_dim": args.head_dim,
        "vocab_size": args.vocab,
        "tie_word_embeddings": args.tie_word_embeddings,
        "torch_dtype": TORCH_DTYPE.get(args.dtype, "bfloat16"),
    }
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    print(f"{args.out}: {args.shards} shards, {len(tensors)} tensors, {layers} layers, "
          f"{total / 2**30:.1f} GiB nominal")


if __name__ == "__main__":
    main()
