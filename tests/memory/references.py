#!/usr/bin/env python3
"""--memory against the references it claims to agree with (issue 25), on generated models.

Each reference formula is transcribed from its source (cited at each function, and in
rules/versions.yaml memory_formulas) and applied to the parameter counts of the generated
manifest; dtypelint's JSON (inputs[].memory) must give the same bytes, or differ by exactly the
documented reason:
- ZeRO paper (arXiv 1910.02054 §3.1, §5.1): (2 + 2 + K) * P / N with K = 12 under stage 3;
- DeepSpeed's estimate_zero3_model_states_mem_needs (v0.19.5 stage3.py L3714-L3750): with
  offload_optimizer and offload_param the GPU figures agree exactly; without offload DeepSpeed
  counts 18 bytes per parameter where the paper (and dtypelint) count 16;
- accelerate estimate-memory (v1.14.0 commands/estimate.py L224-L290) on uniform-dtype models,
  and where dtypelint differs: frozen parameters (LoRA), 4-bit storage with its quant state;
- bitsandbytes AdamW8bit state sizes (0.50.1 optim/optimizer.py L492-L530).
Usage: references.py DTYPELINT
"""
import json
import os
import random
import subprocess
import sys
import tempfile

DTYPELINT = sys.argv[1]
failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: dtypelint {got}, reference {want}")


def memory(manifest, *args):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(manifest, f)
    try:
        out = subprocess.run([DTYPELINT, "-q", "--exit-zero", "--memory", "-f", "json", f.name,
                              *args], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            sys.exit(f"dtypelint exited {out.returncode}: {out.stderr}")
        return json.loads(out.stdout)["inputs"][0]["memory"]
    finally:
        os.unlink(f.name)


def model(rng, n_layers, dtype="bfloat16", world=8):
    """Linear layers with shapes divisible by the world size (DeepSpeed's formulas use exact
    division; FSDP and ZeRO pad per tensor)."""
    tensors, shapes = [], []
    for i in range(n_layers):
        shape = [world * rng.randint(1, 64), 8 * rng.randint(1, 64)]
        tensors.append({"name": f"layers.{i}.fc.weight", "shape": shape, "dtype": dtype})
        shapes.append(shape)
    return {"dtypelint": 1, "model": {}, "tensors": tensors}, [a * b for a, b in shapes]


# DeepSpeed v0.19.5 deepspeed/runtime/zero/stage3.py L3714-L3750, transcribed
def ds_estimate_zero3(total_params, largest_layer_params, num_gpus_per_node=1, num_nodes=1,
                      cpu_offload=True, cpu_offload_params=True, zero_init=True,
                      additional_buffer_factor=1.5):
    total_gpus = num_nodes * num_gpus_per_node
    largest_layer_memory = (4 * largest_layer_params)
    if cpu_offload:
        if cpu_offload_params:
            gpu_mem = largest_layer_memory
        else:
            gpu_mem = largest_layer_memory + int(2 * total_params / total_gpus)
    else:
        gpu_mem = largest_layer_memory + int(18 * total_params / total_gpus)
    return gpu_mem


# accelerate v1.14.0 src/accelerate/commands/estimate.py L224-L256 and L276-L290, transcribed:
# `bytes` is the float32 size of the model (create_empty_model builds it in float32)
def accelerate_training(fp32_bytes, mixed_precision):
    fp16_size = fp32_bytes // 2
    if mixed_precision == "float32":
        sizes = {"model": fp32_bytes, "gradients": fp32_bytes, "optimizer": fp32_bytes * 2,
                 "step": fp32_bytes * 4}
    else:
        sizes = {"model": fp32_bytes, "gradients": fp32_bytes + fp16_size,
                 "optimizer": fp32_bytes * 2, "step": fp32_bytes * 2}
    return max(sizes.values())


def accelerate_total(fp32_bytes, dtype):
    return {"float32": fp32_bytes, "float16": fp32_bytes / 2, "int8": fp32_bytes / 4,
            "int4": fp32_bytes / 8}[dtype]


# bitsandbytes 0.50.1 bitsandbytes/optim/optimizer.py L492-L530 (Optimizer2State.init_state)
def bnb_adamw8bit_state_bytes(n, min_8bit_size=4096):
    if n < min_8bit_size:
        return 2 * n * 4
    blocks = (n // 256) + bool(n % 256)
    return 2 * n + 2 * blocks * 4


rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 25)
for trial in range(6):
    world = rng.choice([1, 2, 8, 64])
    m, numels = model(rng, rng.randint(1, 6), world=world)
    P, L = sum(numels), max(numels)
    plan = {"strategy": "zero3", "precision": "bf16", "world_size": world,
            "zero3": {"persistence_threshold": 0, "prefetch_bucket_size": 0}}

    # the ZeRO paper: 2 + 2 + 12 bytes per parameter over N at stage 3
    m["training"] = plan
    r = memory(m)["per_rank"]
    check(f"trial {trial}: ZeRO paper (2+2+12)P/N", r["params"] + r["grads"] + r["optimizer"],
          16 * P // world)
    # DeepSpeed without offload: 4L + 18P/N; dtypelint counts 16 bytes per parameter, as the
    # paper does: the difference is exactly 2P/N
    check(f"trial {trial}: DeepSpeed zero3 no offload - 2P/N", r["total"],
          ds_estimate_zero3(P, L, world, 1, cpu_offload=False) - 2 * P // world)
    # DeepSpeed with offload_optimizer: 4L + 2P/N on the GPU, exactly
    plan["zero3"]["offload_optimizer"] = "cpu"
    r = memory(m)["per_rank"]
    check(f"trial {trial}: DeepSpeed zero3 offload_optimizer", r["total"],
          ds_estimate_zero3(P, L, world, 1, cpu_offload=True, cpu_offload_params=False))
    check(f"trial {trial}: offloaded grads and optimizer on the host", r["host"],
          14 * P // world)
    # and offload_param too: 4L, exactly
    plan["zero3"]["offload_param"] = "cpu"
    r = memory(m)["per_rank"]
    check(f"trial {trial}: DeepSpeed zero3 offload_param", r["total"],
          ds_estimate_zero3(P, L, world, 1, cpu_offload=True, cpu_offload_params=True))

    # accelerate estimate-memory, float32 column: a float32 model on one device with Adam
    m32, numels = model(rng, rng.randint(1, 6), dtype="float32")
    P = sum(numels)
    m32["training"] = {"strategy": "single", "precision": "fp32"}
    r = memory(m32)["per_rank"]
    check(f"trial {trial}: accelerate total size float32", r["params"],
          accelerate_total(4 * P, "float32"))
    check(f"trial {trial}: accelerate training float32", r["total"],
          accelerate_training(4 * P, "float32"))
    # float16 column, weights stored in 16-bit (Adam's states zeros_like them): 2+2+4 = 8
    m16, numels = model(rng, rng.randint(1, 6), dtype="float16")
    P = sum(numels)
    m16["training"] = {"strategy": "single", "precision": "fp16"}
    r = memory(m16)["per_rank"]
    check(f"trial {trial}: accelerate total size float16", r["params"],
          accelerate_total(4 * P, "float16"))
    check(f"trial {trial}: accelerate training float16", r["total"],
          accelerate_training(4 * P, "float16"))
    # where dtypelint differs: frozen parameters carry no gradient and no optimizer state
    # (accelerate counts every parameter as trained)
    m16["frozen"] = ["layers.0.**"]
    r = memory(m16)["per_rank"]
    frozen = numels[0]
    check(f"trial {trial}: frozen layer: accelerate minus its grads and Adam states",
          r["total"], accelerate_training(4 * P, "float16") - frozen * (2 + 4))
    # 4-bit storage: accelerate's int4 column is the packed weights; dtypelint adds the
    # QuantState (float32 absmax per 64 elements and the 16-entry code per weight)
    m4, numels = model(rng, rng.randint(1, 6), dtype="bfloat16")
    m4["model"] = {"checkpoint_dtype": "bfloat16"}
    m4["quantization"] = {"method": "bnb-4bit", "compute_dtype": "bfloat16"}
    m4["training"] = {"strategy": "single", "precision": "bf16"}
    r = memory(m4)["per_rank"]
    P = sum(numels)
    check(f"trial {trial}: 4-bit packed weights = accelerate int4", r["params"],
          accelerate_total(4 * P, "int4"))
    check(f"trial {trial}: 4-bit quant state", r["quant_state"],
          sum(-(-n // 64) * 4 + 16 * 4 for n in numels))
    # bitsandbytes AdamW8bit on a 16-bit model on one device
    m16b, numels = model(rng, rng.randint(1, 6), dtype="bfloat16")
    numels.append(world * 7)  # below min_8bit_size: float32 states
    m16b["tensors"].append({"name": "norm.weight", "shape": [world * 7], "dtype": "bfloat16"})
    m16b["training"] = {"strategy": "single", "precision": "bf16", "optimizer": "adamw_8bit"}
    r = memory(m16b)["per_rank"]
    check(f"trial {trial}: bitsandbytes AdamW8bit states", r["optimizer"],
          sum(bnb_adamw8bit_state_bytes(n) for n in numels))

for f in failures:
    print("FAIL:", f)
print(f"memory references: {len(failures)} failures")
sys.exit(1 if failures else 0)
