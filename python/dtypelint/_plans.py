"""Plans read from live objects: an accelerate Accelerator, transformers' TrainingArguments.

What they read is what accelerate documents and sets (accelerate v1.14.0,
src/accelerate/accelerator.py: distributed_type, mixed_precision, num_processes and state;
src/accelerate/state.py: AcceleratorState.fsdp_plugin and deepspeed_plugin;
src/accelerate/utils/dataclasses.py: FullyShardedDataParallelPlugin.fsdp_version,
mixed_precision_policy, auto_wrap_policy, transformer_cls_names_to_wrap, use_orig_params,
ignored_modules; DeepSpeedPlugin.deepspeed_config, zero3_init_flag)."""
from __future__ import annotations

import re
import types
from typing import Any, Dict, List, Optional, Tuple, Union

from ._check import DtypelintError
from ._text import escape

PRECISION = {"bf16": "bf16", "fp8": "bf16", "fp16": "fp16", "no": "fp32", None: "fp32"}
DTYPE_OF = {"bf16": "bfloat16", "fp16": "float16"}


def _name(value: Any) -> Optional[str]:
    """An enum's value ("FSDP"), a string as is."""
    value = getattr(value, "value", value)
    return str(value) if value is not None else None


def _dtype(value: Any) -> Optional[str]:
    return str(value).replace("torch.", "") if value is not None else None


def _policy_dtypes(policy: Any, version: int) -> Dict[str, Optional[str]]:
    keys = ("param_dtype", "reduce_dtype") + (("buffer_dtype",) if version == 1 else ())
    out: Dict[str, Optional[str]] = {}
    for key in keys:
        value = policy.get(key) if isinstance(policy, dict) else getattr(policy, key, None)
        out[key] = _dtype(value)
    return out


def _module_paths(model: Any, modules: Any) -> List[str]:
    if not modules or isinstance(modules, str) or model is None:
        return []
    ids = {id(m) for m in modules}
    return [name for name, m in model.named_modules() if id(m) in ids and name]


def _fsdp_plan(plugin: Any, precision: str, model: Any) -> Tuple[str, Dict[str, Any]]:
    version = int(getattr(plugin, "fsdp_version", None) or 1)
    fsdp: Dict[str, Any] = {}
    policy = getattr(plugin, "mixed_precision_policy", None)
    if policy is not None:
        fsdp.update(_policy_dtypes(policy, version))
    elif precision in DTYPE_OF:  # what accelerate's set_mixed_precision builds
        d = DTYPE_OF[precision]
        fsdp.update(param_dtype=d, reduce_dtype=d)
        if version == 1:
            fsdp["buffer_dtype"] = d
    wrap = getattr(plugin, "auto_wrap_policy", None)
    # before prepare it is the policy's name; prepare turns it into a function
    name = wrap if isinstance(wrap, str) else \
        getattr(getattr(wrap, "func", wrap), "__name__", "") if wrap is not None else "no_wrap"
    name = (_name(name) or "").lower()
    classes = getattr(plugin, "transformer_cls_names_to_wrap", None)
    if "size" in name:
        raise DtypelintError("accelerate's size_based_wrap is not simulated by dtypelint (units "
                             "by parameter count): set transformer_cls_names_to_wrap instead")
    if "no_wrap" in name:
        fsdp["wrap"] = []
    elif classes:
        fsdp["wrap"] = [classes] if isinstance(classes, str) else list(classes)
    if version == 1 and getattr(plugin, "use_orig_params", None) is not None:
        fsdp["use_orig_params"] = _flag(plugin.use_orig_params, True)
    ignored = _module_paths(model, getattr(plugin, "ignored_modules", None))
    if ignored:
        fsdp["ignored"] = [p + ".**" for p in ignored]
    return ("fsdp2" if version == 2 else "fsdp1"), fsdp


def accelerator_inputs(accelerator: Any,
                       model: Any) -> Tuple[Dict[str, Any], Optional[Dict[str, Any]]]:
    """(plan, deepspeed config or None) of an Accelerator (or its AcceleratorState) before
    prepare."""
    state = getattr(accelerator, "state", accelerator)
    dist = _name(getattr(accelerator, "distributed_type", None) or state.distributed_type)
    precision = PRECISION.get(_name(getattr(accelerator, "mixed_precision", None)
                                    or getattr(state, "mixed_precision", None)), "fp32")
    plan: Dict[str, Any] = {"precision": precision,
                            "world_size": int(getattr(accelerator, "num_processes", None)
                                              or getattr(state, "num_processes", 1) or 1)}
    deepspeed: Optional[Dict[str, Any]] = None
    if dist == "FSDP":
        plan["strategy"], plan["fsdp"] = _fsdp_plan(state.fsdp_plugin, precision, model)
    elif dist == "DEEPSPEED":
        plugin = state.deepspeed_plugin
        config = getattr(plugin, "deepspeed_config", None)
        if config is None:
            config = getattr(getattr(plugin, "hf_ds_config", None), "config", None)
        deepspeed = dict(config or {})
        stage = (deepspeed.get("zero_optimization") or {}).get("stage",
                                                               getattr(plugin, "zero_stage", 0))
        plan["strategy"] = "zero3" if stage == 3 else "ddp"
        if stage == 3 and getattr(plugin, "zero3_init_flag", None) is not None:
            plan["zero3"] = {"init": _flag(plugin.zero3_init_flag, False)}
    elif dist == "NO":
        plan["strategy"] = "single"
    elif dist and dist.startswith("MULTI_"):
        plan["strategy"] = "ddp"
    else:
        raise DtypelintError(f"accelerate's distributed_type {escape(dist)} is not simulated by "
                             f"dtypelint (FSDP, DEEPSPEED, MULTI_*, NO)")
    return plan, deepspeed


# TRL's configs are TrainingArguments subclasses; the plan's trainer names their trainers
TRAINERS = {"SFTConfig": "trl-sft", "DPOConfig": "trl-dpo", "GRPOConfig": "trl-grpo",
            "KTOConfig": "trl-kto", "RLOOConfig": "trl-rloo", "RewardConfig": "trl-reward",
            "ORPOConfig": "trl-orpo", "CPOConfig": "trl-cpo", "BCOConfig": "trl-bco",
            "OnlineDPOConfig": "trl-online-dpo"}


# accelerate's str_to_bool (src/accelerate/utils/environment.py), which reads the
# FSDP_USE_ORIG_PARAMS that the Trainer sets from str(fsdp_config["use_orig_params"]).lower()
TRUE_WORDS = ("y", "yes", "t", "true", "on", "1")
FALSE_WORDS = ("n", "no", "f", "false", "off", "0")


def _flag(value: Any, default: bool) -> bool:
    """A boolean of a config: a real bool (False included: `value or default` would read it as
    the default), or the words accelerate's str_to_bool takes; None is the default."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    word = str(value).lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise DtypelintError(f"fsdp_config: '{escape(value)}' is not a boolean "
                         f"(accelerate's str_to_bool raises ValueError)")


def _version_tuple(text: object) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", str(text))[:3])


def training_args_inputs(args: Any, transformers_version: Optional[str] = None
                         ) -> Tuple[Dict[str, Any], Union[str, Dict[str, Any], None]]:
    """(plan, deepspeed config or path) of a transformers TrainingArguments (or a TRL config):
    precision from bf16/fp16, FSDP from fsdp and fsdp_config (version, transformer_layer_cls_to
    _wrap, use_orig_params) with the mixed-precision policy accelerate builds from the precision,
    DeepSpeed from deepspeed, the world size, and the trainer (TRL's configs name theirs).
    With no fsdp_config version, the Trainer's default: FSDP2 from transformers 5.10.1
    (rules/versions.yaml transformers-trainer-fsdp2-default), FSDP1 before."""
    precision = "bf16" if getattr(args, "bf16", False) else \
        "fp16" if getattr(args, "fp16", False) else "fp32"
    plan: Dict[str, Any] = {"trainer": TRAINERS.get(type(args).__name__, "hf-trainer"), "precision": precision}
    world = getattr(args, "world_size", None)
    if isinstance(world, int) and world > 0:
        plan["world_size"] = world
    fsdp = getattr(args, "fsdp", None)
    wrap_name = ""
    if fsdp is True:
        # transformers 5.x (training_args.py, _process_fsdp_args): fsdp=True, the legacy
        # words folded into fsdp_config, and the wrap policy fsdp_config's auto_wrap_policy,
        # TRANSFORMER_BASED_WRAP by default ("auto_wrap" is a no-op)
        wrap_name = str(getattr(args, "fsdp_config", None) and
                        args.fsdp_config.get("auto_wrap_policy") or "TRANSFORMER_BASED_WRAP")
        words = "full_shard " + ("" if wrap_name.upper() == "NO_WRAP" else "auto_wrap")
    elif isinstance(fsdp, (list, tuple)):
        words = " ".join(_name(x) or "" for x in fsdp)
    else:
        words = str(fsdp or "")
    config = dict(getattr(args, "fsdp_config", None) or {})

    def get(key: str) -> Any:  # __post_init__ drops the fsdp_ prefix; a config file may still have it
        return config.get(key, config.get("fsdp_" + key))

    deepspeed = getattr(args, "deepspeed", None) or None
    if deepspeed:
        plan["strategy"] = "zero3"  # the DeepSpeed config's stage decides
    elif "shard" in words:
        version = get("version")
        if version is None:
            new = transformers_version and _version_tuple(transformers_version) >= (5, 10, 1)
            version = 2 if new else 1
        version = int(version)
        policy = types.SimpleNamespace(
            fsdp_version=version, mixed_precision_policy=None,
            auto_wrap_policy="no_wrap" if "auto_wrap" not in words else
            wrap_name.lower() if fsdp is True else "transformer_based_wrap",
            transformer_cls_names_to_wrap=get("transformer_layer_cls_to_wrap"),
            use_orig_params=_flag(get("use_orig_params"), True),
            ignored_modules=None)
        plan["strategy"], plan["fsdp"] = _fsdp_plan(policy, precision, None)
    elif isinstance(world, int) and world > 1:
        plan["strategy"] = "ddp"
    else:
        plan["strategy"] = "single"
    return plan, deepspeed
