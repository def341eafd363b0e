"""The small real models of the real-library oracle (tests/oracle/README.md).

Each architecture starts from a real config: a verbatim copy of a public checkpoint's
config.json (fixtures/oracle/configs/, sources in fixtures/oracle/SOURCES.md) or, for the
architectures the corpus lacks, the defaults of its transformers configuration class. It is
shrunk in width and depth (2 layers, hidden 64, 4 experts) but keeps its real module classes,
ties, _keep_in_fp32_modules, _no_split_modules and routers, built with the real class and saved
with save_pretrained, so the oracle loads it through the real from_pretrained. Runs in the venv
of tests/requirements.txt (transformers 5.24.0)."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "..", "..", "fixtures", "oracle", "configs")

# name: (config source, architecture class, checkpoint dtype, LoRA targets)
# A source ending in .json is a copied config; otherwise the transformers config class.
ARCHS = {
    "llama": ("llama.llama-3.1-8b-bnb-int8.json", "LlamaForCausalLM", "bfloat16",
              ["q_proj", "v_proj"]),
    "mistral": ("mistral.devstral-small-2507.json", "MistralForCausalLM", "bfloat16",
                ["q_proj", "v_proj"]),
    "mixtral": ("mixtral.wizardlm-2-8x22b.json", "MixtralForCausalLM", "bfloat16",
                ["q_proj", "v_proj"]),
    "gpt-oss": ("gpt-oss.gpt-oss-20b.json", "GptOssForCausalLM", "bfloat16",
                ["q_proj", "v_proj"]),
    "granitemoe": ("granitemoe.granite-3.1-1b-a400m.json", "GraniteMoeForCausalLM", "float32",
                   ["q_proj", "v_proj"]),
    "t5-encoder": ("t5-encoder.bria-3.2.json", "T5EncoderModel", "float16", ["q", "v"]),
    "gemma3-vl": ("gemma3-vl.medgemma-27b-it.json", "Gemma3ForConditionalGeneration",
                  "bfloat16", ["q_proj", "v_proj"]),
    "qwen3-vl": ("qwen3-vl.cosmos-reason2-8b.json", "Qwen3VLForConditionalGeneration",
                 "bfloat16", ["q_proj", "v_proj"]),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", "bfloat16", ["q_proj", "v_proj"]),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", "bfloat16", ["q_proj", "v_proj"]),
    "qwen3-moe": ("Qwen3MoeConfig", "Qwen3MoeForCausalLM", "bfloat16", ["q_proj", "v_proj"]),
    "deepseek-v3": ("DeepseekV3Config", "DeepseekV3ForCausalLM", "bfloat16",
                    ["q_b_proj", "kv_b_proj"]),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", "bfloat16", ["q_proj", "v_proj"]),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", "bfloat16", ["qkv_proj"]),
    "gpt-neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", "float16", ["query_key_value"]),
    "t5": ("T5Config", "T5ForConditionalGeneration", "float32", ["q", "v"]),
    "qwen2-vl": ("Qwen2VLConfig", "Qwen2VLForConditionalGeneration", "bfloat16",
                 ["q_proj", "v_proj"]),
    "llava": ("LlavaConfig", "LlavaForConditionalGeneration", "float16", ["q_proj", "v_proj"]),
}

# Architectures only tests/oracle/boundaries.py builds (it adds them to ARCHS in its own
# process): left out of the corpus and of the generators' draws, whose seeds give the same
# set-ups as before. DeepSeek-V2's router changed class at transformers 5.0.0.
BOUNDARY_ARCHS = {
    "deepseek-v2": ("DeepseekV2Config", "DeepseekV2ForCausalLM", "bfloat16",
                    ["q_proj", "kv_b_proj"]),
}

# keys set when present, at any depth (text_config, vision_config, ...)
SHRINK = {
    "num_hidden_layers": 2, "num_layers": 2, "num_decoder_layers": 2, "depth": 2,
    "hidden_size": 64, "d_model": 64, "embed_dim": 64, "intermediate_size": 128, "d_ff": 128,
    "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
    "num_attention_heads": 4, "num_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "d_kv": 16, "vocab_size": 512, "num_local_experts": 4, "num_experts": 4,
    "n_routed_experts": 4, "num_experts_per_tok": 2, "experts_per_token": 2,
    "n_shared_experts": 1, "max_position_embeddings": 256, "q_lora_rank": 32,
    "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16,
    "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1, "sliding_window": 64,
    "out_hidden_size": 64, "linear_num_key_heads": 2, "linear_num_value_heads": 2,
    "linear_key_head_dim": 16, "linear_value_head_dim": 16, "mm_tokens_per_image": 4,
    "image_size": 32, "patch_size": 8, "spatial_merge_size": 2, "temporal_patch_size": 2,
    "num_position_embeddings": 16, "projection_dim": 64, "mtp_num_hidden_layers": 0,
    "relative_attention_num_buckets": 8, "initial_context_length": 256,
}
TOKEN_IDS = ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id",
             "image_token_id", "image_token_index", "video_token_id", "boi_token_index",
             "eoi_token_index", "vision_start_token_id", "vision_end_token_id")
VOCAB = 512


def _shrink(d):
    for k, v in list(d.items()):
        if isinstance(v, dict):
            _shrink(v)
        elif k in SHRINK and isinstance(v, int) and not isinstance(v, bool):
            d[k] = SHRINK[k]
        elif k in TOKEN_IDS and v is not None:
            # ids past the small vocabulary; the oracle's inputs use ids 3..399
            base = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
                    "decoder_start_token_id": 0}.get(k, 400 + TOKEN_IDS.index(k))
            d[k] = [base] if isinstance(v, list) else base
    layers = d.get("num_hidden_layers") or d.get("num_layers")
    for k in ("layer_types", "mlp_only_layers"):
        if isinstance(d.get(k), list) and layers:
            kinds = list(dict.fromkeys(d[k]))[:layers] if k == "layer_types" else []
            d[k] = (kinds * layers)[:layers] if kinds else []
    if "qk_rope_head_dim" in d:
        # DeepSeek: head_dim is the rotary part of the query/key head (DeepseekV3Config);
        # multi-head latent attention gives every query head its own key and value, so
        # the published configs name as many key/value heads as heads (DeepseekV3Config's
        # defaults: 128 and 128). Fewer made sdpa's padded path repeat the keys (repeat_kv)
        # past the query's heads (DISAGREEMENTS.md D33: an oracle bug).
        d["head_dim"] = d["qk_rope_head_dim"]
        d["num_key_value_heads"] = d["num_attention_heads"]
    if "deepstack_visual_indexes" in d:
        d["deepstack_visual_indexes"] = [0]
    if "fullatt_block_indexes" in d:
        d["fullatt_block_indexes"] = [1]
    if "rope_scaling" in d and isinstance(d["rope_scaling"], dict) and \
            "mrope_section" in d["rope_scaling"]:
        d["rope_scaling"]["mrope_section"] = [2, 3, 3]
    if "rope_parameters" in d and isinstance(d["rope_parameters"], dict) and \
            "mrope_section" in d["rope_parameters"]:
        d["rope_parameters"]["mrope_section"] = [2, 3, 3]
    return d


# What a shrunk config class default lacks and a real checkpoint's config has
FIXUPS = {
    # Qwen2-VL's multimodal rotary sections default to [16, 24, 24] (head_dim 128); they
    # must sum to head_dim / 2
    "qwen2-vl": lambda d: d["text_config"].setdefault("rope_parameters", {}).update(
        mrope_section=[2, 3, 3]),
    # T5Config() has no decoder_start_token_id in transformers 5 (it moved to the
    # generation config); t5-large's config.json has 0
    "t5": lambda d: d.update(decoder_start_token_id=0),
}


def config_dict(arch):
    import transformers
    src = ARCHS[arch][0]
    if src.endswith(".json"):
        with open(os.path.join(CONFIGS, src)) as f:
            d = json.load(f)
        d.pop("quantization_config", None)
    else:
        d = getattr(transformers, src)().to_dict()
    d = _shrink(d)
    if arch in FIXUPS:
        FIXUPS[arch](d)
    return d


def build(arch, folder, seed=0):
    """Saves the small model of ARCH into FOLDER (once); returns its class name."""
    import torch
    import transformers
    _, cls_name, dtype, _ = ARCHS[arch]
    if os.path.exists(os.path.join(folder, "config.json")):
        return cls_name
    d = config_dict(arch)
    model_type = d.pop("model_type")
    for k in ("transformers_version", "architectures", "_name_or_path", "torch_dtype",
              "dtype"):
        d.pop(k, None)
    cfg = transformers.AutoConfig.for_model(model_type, **d)
    cfg.architectures = [cls_name]
    torch.manual_seed(seed)
    cls = getattr(transformers, cls_name)
    try:
        model = cls._from_config(cfg, dtype=getattr(torch, dtype))
    except TypeError:
        # a release before 4.56 (boundaries.py's own_build): _from_config takes torch_dtype
        # and hands dtype on to the model's __init__, which refuses it; before 4.35 it saves
        # pytorch_model.bin unless asked for safetensors (which dtypelint reads)
        model = cls._from_config(cfg, torch_dtype=getattr(torch, dtype))
        model.save_pretrained(folder, safe_serialization=True)
        return cls_name
    model.save_pretrained(folder)
    return cls_name
