#!/usr/bin/env python3
"""Write a dtypelint manifest (schema version 1) from a live torch model.

    from dtypelint_export import export_manifest
    export_manifest(model, "manifest.json")          # or .yaml (needs PyYAML)

or from the command line:

    python3 dtypelint_export.py --factory mypkg.models:build_model out.json
    python3 dtypelint_export.py --hf Qwen/Qwen2.5-0.5B out.json      # needs transformers

Every parameter and buffer is listed in registration order (state_dict order: a module's own
parameters, then its own buffers, then its children), with shape, dtype, requires_grad and, for
buffers, whether they are persistent. Parameters shared under several names (tied weights) are
listed once and named in model.tied. Module classes become model.modules globs (numeric path
segments collapsed to '*' when every index has the same class). transformers' keep-in-fp32 and
no-split lists are copied when the model has them. load_dtype is "as-is": the dtypes are the
dtypes in memory when the model was exported.
"""
import argparse
import importlib
import json
import re
import sys

DTYPES = {
    "torch.float32": "float32", "torch.bfloat16": "bfloat16", "torch.float16": "float16",
    "torch.float64": "float64", "torch.float8_e4m3fn": "float8_e4m3fn",
    "torch.float8_e5m2": "float8_e5m2", "torch.uint8": "uint8", "torch.int8": "int8",
    "torch.int16": "int16", "torch.int32": "int32", "torch.int64": "int64", "torch.bool": "bool",
}


def _dtype_name(dtype):
    name = str(dtype)
    if name not in DTYPES:
        raise ValueError(f"dtypelint has no dtype for {name}")
    return DTYPES[name]


def _walk(module, prefix, seen, tensors, tied, classes):
    """Registration order: own parameters, own buffers, then children (torch's state_dict)."""
    classes.append((prefix, type(module).__name__))
    for name, param in module._parameters.items():
        if param is None:
            continue
        full = f"{prefix}.{name}" if prefix else name
        if id(param) in seen:
            tied.setdefault(seen[id(param)], [seen[id(param)]]).append(full)
            continue
        seen[id(param)] = full
        tensors.append({"name": full, "shape": list(param.shape), "dtype": _dtype_name(param.dtype),
                        "trainable": bool(param.requires_grad)})
    non_persistent = getattr(module, "_non_persistent_buffers_set", set())
    for name, buf in module._buffers.items():
        if buf is None:
            continue
        full = f"{prefix}.{name}" if prefix else name
        entry = {"name": full, "kind": "buffer", "shape": list(buf.shape),
                 "dtype": _dtype_name(buf.dtype)}
        if name in non_persistent:
            entry["persistent"] = False
        tensors.append(entry)
    for name, child in module._modules.items():
        if child is not None:
            _walk(child, f"{prefix}.{name}" if prefix else name, seen, tensors, tied, classes)


def _module_globs(classes):
    """path -> class as globs: a numeric segment becomes '*' when all its siblings agree."""
    by_pattern = {}
    order = []
    for path, cls in classes:
        if not path:
            continue
        pattern = re.sub(r"(^|\.)\d+(?=\.|$)", r"\1*", path)
        if pattern not in by_pattern:
            by_pattern[pattern] = set()
            order.append(pattern)
        by_pattern[pattern].add(cls)
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
    """The manifest as a dict."""
    tensors, tied, classes = [], {}, []
    _walk(model, "", {}, tensors, tied, classes)
    info = {"architecture": type(model).__name__, "load_dtype": "as-is",
            "modules": _module_globs(classes)}
    config = getattr(model, "config", None)
    name = getattr(config, "_name_or_path", None)
    if name:
        info["name"] = name
    hidden = getattr(config, "hidden_size", None)
    if isinstance(hidden, int) and hidden > 0:
        info["hidden_size"] = hidden
    for attr, key in (("_keep_in_fp32_modules", "keep_in_fp32"),
                      ("_keep_in_fp32_modules_strict", "keep_in_fp32_strict"),
                      ("_no_split_modules", "no_split_modules")):
        value = _as_list(getattr(model, attr, None))
        if value is not None:
            info[key] = value
    if tied:
        info["tied"] = list(tied.values())
    manifest = {"dtypelint": 1, "model": info, "tensors": tensors}
    if training:
        manifest["training"] = training
    return manifest


def export_manifest(model, path=None, training=None):
    """Write the manifest to path (.json, or .yaml with PyYAML); return it as a dict."""
    manifest = build_manifest(model, training)
    if path:
        with open(path, "w") as f:
            if path.endswith((".yaml", ".yml")):
                import yaml
                yaml.safe_dump(manifest, f, sort_keys=False, default_flow_style=None, width=1000)
            else:
                json.dump(manifest, f, indent=1)
                f.write("\n")
    return manifest


def _load_hf(model_id):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    config = AutoConfig.from_pretrained(model_id)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--factory", help="module:function that returns the torch model")
    g.add_argument("--hf", help="a transformers model id or folder, built on the meta device")
    p.add_argument("output", help="manifest to write (.json or .yaml)")
    a = p.parse_args(argv)
    if a.factory:
        mod, _, fn = a.factory.partition(":")
        model = getattr(importlib.import_module(mod), fn)()
    else:
        model = _load_hf(a.hf)
    export_manifest(model, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
