"""Write a dtypelint manifest (schema version 1) from a live torch model.

    import dtypelint
    dtypelint.export(model, "manifest.json")          # or .yaml (needs PyYAML)

or from the command line:

    python3 -m dtypelint export --factory mypkg.models:build_model out.json
    python3 -m dtypelint export --hf Qwen/Qwen2.5-0.5B out.json      # needs transformers

Every parameter and buffer is listed in registration order (state_dict order: a module's own
parameters, then its own buffers, then its children), with shape, dtype, requires_grad and, for
buffers, whether they are persistent. Parameters shared under several names (tied weights) are
listed once and named in model.tied. Module classes become model.modules globs (numeric path
segments collapsed to '*' when every index has the same class). transformers' keep-in-fp32 and
no-split lists are copied when the model has them. load_dtype is "as-is": the dtypes are the
dtypes in memory when the model was exported.

A PEFT model (get_peft_model's PeftModel) is exported as its base model with the adapters in it:
the base model's class is the architecture (so its profile applies), the names lose PEFT's
"base_model.model." prefix, and the adapter tensors (lora_A, lora_B, ...) are listed as PEFT
created them. Parameters that DeepSpeed ZeRO-3 has already partitioned keep their full shape
(ds_shape). Meta-device models export like real ones: only shapes and dtypes are read.
"""
import json
import re

DTYPES = {
    "torch.float32": "float32", "torch.bfloat16": "bfloat16", "torch.float16": "float16",
    "torch.float64": "float64", "torch.float8_e4m3fn": "float8_e4m3fn",
    "torch.float8_e5m2": "float8_e5m2", "torch.uint8": "uint8", "torch.int8": "int8",
    "torch.int16": "int16", "torch.int32": "int32", "torch.int64": "int64", "torch.bool": "bool",
}
# the prefix get_peft_model puts before the base model's names (PeftModel.base_model is the
# tuner, e.g. LoraModel, whose .model is the base model)
PEFT_PREFIX = "base_model.model."


def _dtype_name(dtype):
    name = str(dtype)
    if name not in DTYPES:
        raise ValueError(f"dtypelint has no dtype for {name}")
    return DTYPES[name]


def _shape(tensor):
    # ZeRO-3 partitioned parameters are empty; ds_shape is the full shape
    shape = getattr(tensor, "ds_shape", None)
    return [int(n) for n in (shape if shape is not None else tensor.shape)]


def unwrap_peft(model):
    """(base model, True) for a PEFT model, (model, False) otherwise."""
    if getattr(model, "peft_config", None) is None:
        return model, False
    get_base = getattr(model, "get_base_model", None)
    base = get_base() if callable(get_base) else None
    if base is None:
        tuner = getattr(model, "base_model", None)
        base = getattr(tuner, "model", None)
    return (base, True) if base is not None else (model, False)


def _walk(root, tensors, tied, classes):
    """Registration order: own parameters, own buffers, then children (torch's state_dict).
    Iterative, so that no model is too deep to export."""
    seen = {}
    stack = [("", root)]
    while stack:
        prefix, module = stack.pop()
        classes.append((prefix, type(module).__name__))
        for name, param in module._parameters.items():
            if param is None:
                continue
            full = f"{prefix}.{name}" if prefix else name
            if id(param) in seen:
                tied.setdefault(seen[id(param)], [seen[id(param)]]).append(full)
                continue
            seen[id(param)] = full
            tensors.append({"name": full, "shape": _shape(param), "dtype": _dtype_name(param.dtype),
                            "trainable": bool(param.requires_grad)})
        non_persistent = getattr(module, "_non_persistent_buffers_set", set())
        for name, buf in module._buffers.items():
            if buf is None:
                continue
            full = f"{prefix}.{name}" if prefix else name
            entry = {"name": full, "kind": "buffer", "shape": _shape(buf),
                     "dtype": _dtype_name(buf.dtype)}
            if name in non_persistent:
                entry["persistent"] = False
            tensors.append(entry)
        children = [(f"{prefix}.{name}" if prefix else name, child)
                    for name, child in module._modules.items() if child is not None]
        stack.extend(reversed(children))


def _module_globs(classes):
    """path -> class as globs: a numeric segment becomes '*' when all its siblings agree."""
    by_pattern = {}
    for path, cls in classes:
        if path:
            by_pattern.setdefault(re.sub(r"(^|\.)\d+(?=\.|$)", r"\1*", path), set()).add(cls)
    globs = {}
    for path, cls in classes:
        if not path:
            continue
        pattern = re.sub(r"(^|\.)\d+(?=\.|$)", r"\1*", path)
        if len(by_pattern[pattern]) == 1:
            globs.setdefault(pattern, cls)
        else:
            globs[path] = cls
    return globs


def _as_list(value):
    if value is None:
        return None
    return sorted(value) if isinstance(value, set) else list(value)


def build_manifest(model, training=None):
    """The manifest of a torch model (or a PEFT model) as a dict."""
    base, _ = unwrap_peft(model)
    tensors, tied, classes = [], {}, []
    _walk(base, tensors, tied, classes)
    info = {"architecture": type(base).__name__, "load_dtype": "as-is",
            "modules": _module_globs(classes)}
    config = getattr(base, "config", None)
    name = getattr(config, "_name_or_path", None)
    if name:
        info["name"] = name
    hidden = getattr(config, "hidden_size", None)
    if isinstance(hidden, int) and hidden > 0:
        info["hidden_size"] = hidden
    for attr, key in (("_keep_in_fp32_modules", "keep_in_fp32"),
                      ("_keep_in_fp32_modules_strict", "keep_in_fp32_strict"),
                      ("_no_split_modules", "no_split_modules")):
        value = _as_list(getattr(base, attr, None))
        if value is not None:
            info[key] = value
    if tied:
        info["tied"] = list(tied.values())
    manifest = {"dtypelint": 1, "model": info, "tensors": tensors}
    if training:
        manifest["training"] = training
    return manifest


def write_manifest(manifest, path):
    """Write a manifest dict to path: YAML for .yaml/.yml (needs PyYAML), else JSON."""
    path = str(path)
    with open(path, "w", encoding="utf-8") as f:
        if path.endswith((".yaml", ".yml")):
            import yaml
            yaml.safe_dump(manifest, f, sort_keys=False, default_flow_style=None, width=1000)
        else:
            json.dump(manifest, f, indent=1)
            f.write("\n")


def load_hf(model_id):
    """A transformers causal LM built from its config on the meta device (no weights read)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    config = AutoConfig.from_pretrained(model_id)
    if hasattr(torch, "device") and hasattr(torch.device("meta"), "__enter__"):
        with torch.device("meta"):
            return AutoModelForCausalLM.from_config(config)
    # torch before 2.0: no device context manager; transformers' init_empty_weights is accelerate's
    from accelerate import init_empty_weights
    with init_empty_weights():
        return AutoModelForCausalLM.from_config(config)


def export(model, path=None, training=None):
    """Write the manifest of model to path (.json, or .yaml with PyYAML); return it as a dict.

    model is a torch.nn.Module (real or on the meta device, PEFT-wrapped or not) or a
    transformers model id or folder (built on the meta device; needs transformers)."""
    if isinstance(model, str):
        model = load_hf(model)
    manifest = build_manifest(model, training)
    if path:
        write_manifest(manifest, path)
    return manifest


# the name of the former contrib/export/dtypelint_export.py
export_manifest = export


def main(argv=None):
    import argparse
    import importlib
    p = argparse.ArgumentParser(prog="python3 -m dtypelint export",
                                description=__doc__.split("\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--factory", help="module:function that returns the torch model")
    g.add_argument("--hf", help="a transformers model id or folder, built on the meta device")
    p.add_argument("output", help="manifest to write (.json or .yaml)")
    a = p.parse_args(argv)
    if a.factory:
        mod, _, fn = a.factory.partition(":")
        model = getattr(importlib.import_module(mod), fn)()
    else:
        model = load_hf(a.hf)
    export(model, a.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
