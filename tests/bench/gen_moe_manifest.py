#!/usr/bin/env python3
"""Write a DeepSeek-V3-shaped MoE manifest (README.md "The manifest") for benchmarks and scale tests.

Usage: gen_moe_manifest.py --layers 61 --experts 256 [--format json|yaml] [--lora] [--plan fsdp2|zero3|fsdp1] > out
Each MoE layer has attention, a router (mlp.gate, kept fp32 by the model), a correction-bias buffer,
a shared expert and E routed experts with gate/up/down projections; with --lora every attention
projection gets fp32 LoRA A/B tensors. 61 layers x 256 experts gives about 48k expert tensors and
about 50k tensors in all; use --experts 512 for about 100k.
"""
import argparse, json, sys

p = argparse.ArgumentParser()
p.add_argument("--layers", type=int, default=61)
p.add_argument("--experts", type=int, default=256)
p.add_argument("--hidden", type=int, default=7168)
p.add_argument("--inter", type=int, default=2048)
p.add_argument("--lora", action="store_true")
p.add_argument("--plan", choices=["fsdp1", "fsdp2", "zero3", "none"], default="fsdp2")
p.add_argument("--format", choices=["json", "yaml"], default="json")
a = p.parse_args()
H, I, E = a.hidden, a.inter, a.experts
T = []
def t(name, shape, dtype=None, **kw):
    d = {"name": name, "shape": shape}
    if dtype: d["dtype"] = dtype
    d.update(kw); T.append(d)
t("model.embed_tokens.weight", [129280, H])
for l in range(a.layers):
    p_ = f"model.layers.{l}"
    t(f"{p_}.input_layernorm.weight", [H])
    for proj, shape in (("q_proj", [H, H]), ("k_proj", [512, H]), ("v_proj", [512, H]), ("o_proj", [H, H])):
        t(f"{p_}.self_attn.{proj}.weight", shape)
        if a.lora:
            t(f"{p_}.self_attn.{proj}.lora_A.default.weight", [16, shape[1]], "float32")
            t(f"{p_}.self_attn.{proj}.lora_B.default.weight", [shape[0], 16], "float32")
    t(f"{p_}.post_attention_layernorm.weight", [H])
    t(f"{p_}.mlp.gate.weight", [E, H], "float32")
    t(f"{p_}.mlp.gate.e_score_correction_bias", [E], "float32", kind="buffer")
    for proj, shape in (("gate_proj", [I, H]), ("up_proj", [I, H]), ("down_proj", [H, I])):
        t(f"{p_}.mlp.shared_experts.{proj}.weight", shape)
    for e in range(E):
        for proj, shape in (("gate_proj", [I, H]), ("up_proj", [I, H]), ("down_proj", [H, I])):
            t(f"{p_}.mlp.experts.{e}.{proj}.weight", shape)
t("model.norm.weight", [H])
t("model.rotary_emb.inv_freq", [32], "float32", kind="buffer", persistent=False)
t("lm_head.weight", [129280, H])
m = {"dtypelint": 1,
     "model": {"name": f"synthetic-moe-{a.layers}x{E}", "architecture": "DeepseekV3ForCausalLM",
               "checkpoint_dtype": "bfloat16", "load_dtype": "as-is", "hidden_size": H,
               "keep_in_fp32_strict": ["e_score_correction_bias"],
               "no_split_modules": ["DeepseekV3DecoderLayer"],
               "modules": {"model.layers.*": "DeepseekV3DecoderLayer"},
               "routers": ["model.layers.*.mlp.gate"]},
     "tensors": T}
if a.plan != "none":
    tr = {"strategy": a.plan, "precision": "bf16", "world_size": 8,
          "versions": {"torch": "2.7.1", "transformers": "4.57.0", "peft": "0.17.1", "deepspeed": "0.19.2"}}
    if a.plan.startswith("fsdp"):
        tr["fsdp"] = {"wrap": ["DeepseekV3DecoderLayer"], "param_dtype": "bfloat16", "reduce_dtype": "float32"}
    else:
        tr["zero3"] = {"init": True, "persistence_threshold": 100000}
    m["training"] = tr
if a.format == "json":
    json.dump(m, sys.stdout, indent=1)
else:
    import yaml
    yaml.safe_dump(m, sys.stdout, sort_keys=False, default_flow_style=None, width=1000)
