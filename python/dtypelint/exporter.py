"""Write a dtypelint manifest (schema version 1) from a live torch model.

    import dtypelint
    dtypelint.export(model, "manifest.json")          # or .yaml

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
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Set, Tuple

DTYPES = {
    "torch.float32": "float32", "torch.bfloat16": "bfloat16", "torch.float16": "float16",
    "torch.float64": "float64", "torch.float8_e4m3fn": "float8_e4m3fn",
    "torch.float8_e5m2": "float8_e5m2", "torch.uint8": "uint8", "torch.int8": "int8",
    "torch.int16": "int16", "torch.int32": "int32", "torch.int64": "int64", "torch.bool": "bool",
}
# the prefix get_peft_model puts before the base model's names (PeftModel.base_model is the
# tuner, e.g. LoraModel, whose .model is the base model)
PEFT_PREFIX = "base_model.model."


def _dtype_name(dtype: Any) -> str:
    name = str(dtype)
    if name not in DTYPES:
        raise ValueError(f"dtypelint has no dtype for {name}")
    return DTYPES[name]


def _shape(tensor: Any) -> List[int]:
    # ZeRO-3 partitioned parameters are empty; ds_shape is the full shape
    shape = getattr(tensor, "ds_shape", None)
    return [int(n) for n in (shape if shape is not None else tensor.shape)]


def unwrap_peft(model: Any) -> Tuple[Any, bool]:
    """(base model, True) for a PEFT model, (model, False) otherwise."""
    if getattr(model, "peft_config", None) is None:
        return model, False
    get_base = getattr(model, "get_base_model", None)
    base = get_base() if callable(get_base) else None
    if base is None:
        tuner = getattr(model, "base_model", None)
        base = getattr(tuner, "model", None)
    return (base, True) if base is not None else (model, False)


def _walk(root: Any, tensors: List[Dict[str, Any]], tied: Dict[str, List[str]],
          classes: List[Tuple[str, str]]) -> None:
    """Registration order: own parameters, own buffers, then children (torch's state_dict).
    Iterative, so that no model is too deep to export."""
    seen: Dict[int, str] = {}
    stack: List[Tuple[str, Any]] = [("", root)]
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
        non_persistent: Set[str] = getattr(module, "_non_persistent_buffers_set", set())
        for name, buf in module._buffers.items():
            if buf is None:
                continue
            full = f"{prefix}.{name}" if prefix else name
            entry: Dict[str, Any] = {"name": full, "kind": "buffer", "shape": _shape(buf),
                     "dtype": _dtype_name(buf.dtype)}
            if name in non_persistent:
                entry["persistent"] = False
            tensors.append(entry)
        children = [(f"{prefix}.{name}" if prefix else name, child)
                    for name, child in module._modules.items() if child is not None]
        stack.extend(reversed(children))


def _module_globs(classes: List[Tuple[str, str]]) -> Dict[str, str]:
    """path -> class as globs: a numeric segment becomes '*' when all its siblings agree."""
    by_pattern: Dict[str, Set[str]] = {}
    for path, cls in classes:
        if path:
            by_pattern.setdefault(re.sub(r"(^|\.)\d+(?=\.|$)", r"\1*", path), set()).add(cls)
    globs: Dict[str, str] = {}
    for path, cls in classes:
        if not path:
            continue
        pattern = re.sub(r"(^|\.)\d+(?=\.|$)", r"\1*", path)
        if len(by_pattern[pattern]) == 1:
            globs.setdefault(pattern, cls)
        else:
            globs[path] = cls
    return globs


def _as_list(value: Any) -> Optional[List[Any]]:
    if value is None:
        return None
    return sorted(value) if isinstance(value, set) else list(value)


def build_manifest(model: Any, training: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The manifest of a torch model (or a PEFT model) as a dict."""
    base, _ = unwrap_peft(model)
    tensors: List[Dict[str, Any]] = []
    tied: Dict[str, List[str]] = {}
    classes: List[Tuple[str, str]] = []
    _walk(base, tensors, tied, classes)
    info: Dict[str, Any] = {"architecture": type(base).__name__, "load_dtype": "as-is",
            "modules": _module_globs(classes)}
    config = getattr(base, "config", None)
    name = getattr(config, "_name_or_path", None)
    if name:
        info["name"] = name
    hidden = getattr(config, "hidden_size", None)
    if isinstance(hidden, int) and hidden > 0:
        info["hidden_size"] = hidden
    # the length of the RoPE cache transformers <= 4.37 builds under zero.Init (DT302)
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        info["max_position_embeddings"] = positions
    for attr, key in (("_keep_in_fp32_modules", "keep_in_fp32"),
                      ("_keep_in_fp32_modules_strict", "keep_in_fp32_strict"),
                      ("_no_split_modules", "no_split_modules")):
        value = _as_list(getattr(base, attr, None))
        if value is not None:
            info[key] = value
    if tied:
        info["tied"] = list(tied.values())
    manifest: Dict[str, Any] = {"dtypelint": 1, "model": info, "tensors": tensors}
    if training:
        manifest["training"] = training
    return manifest


# what a quoted string escapes (src/core/quoted.c, dtl_put_quoted): the same characters as
# --export, so that both exports read the same in JSON, in YAML and on a terminal
_QUOTE = re.compile("[\x00-\x1f\"\\\\\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                    "\ufeff\ufffe\uffff\ud800-\udfff]")
_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _quoted(text: str) -> str:
    def one(m: "re.Match[str]") -> str:
        c = m.group(0)
        if c in _SHORT:
            return _SHORT[c]
        return "\\ufffd" if 0xd800 <= ord(c) <= 0xdfff else "\\u%04x" % ord(c)
    return '"' + _QUOTE.sub(one, text) + '"'


def _flow(value: Any) -> str:
    """A value in YAML flow style (also JSON, but for the keys): strings always quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return _quoted(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} in a manifest")


def _key(key: object) -> str:
    text = str(key)
    return text if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text) else _quoted(text)


def yaml_text(manifest: Dict[str, Any]) -> str:
    """The manifest as YAML in --export's layout (src/model/export.c): a document start,
    block mappings for the top level and its sections, a flow value per key below them, one
    tensor per line (so line-length is disabled in the file, as --export does), strings
    quoted as --export quotes them, and no trailing spaces: yamllint's default rules pass.
    Standard library only."""
    lines = ["# written by dtypelint export; one tensor per line, so lines may be long",
             "# yamllint disable rule:line-length", "---"]
    for key, value in manifest.items():
        if isinstance(value, dict) and value:
            lines.append(f"{_key(key)}:")
            lines += [f"  {_key(k)}: {_flow(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            lines.append(f"{_key(key)}:")
            lines += [f"  - {_flow(v)}" for v in value]
        else:
            lines.append(f"{_key(key)}: {_flow(value)}")
    return "\n".join(lines) + "\n"


def write_manifest(manifest: Dict[str, Any], path: Any) -> None:
    """Write a manifest dict to path: YAML for .yaml/.yml (yaml_text), else JSON."""
    path = str(path)
    with open(path, "w", encoding="utf-8") as f:
        if path.endswith((".yaml", ".yml")):
            f.write(yaml_text(manifest))
        else:
            json.dump(manifest, f, indent=1)
            f.write("\n")


def load_hf(model_id: str) -> Any:
    """A transformers causal LM built from its config on the meta device (no weights read)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    config = AutoConfig.from_pretrained(model_id)
    if hasattr(torch, "device") and hasattr(torch.device("meta"), "__enter__"):
        with torch.device("meta"):
            return AutoModelForCausalLM.from_config(config)  # type: ignore[no-untyped-call]
    # torch before 2.0: no device context manager; transformers' init_empty_weights is accelerate's
    from accelerate import init_empty_weights  # type: ignore[import-untyped]
    with init_empty_weights():
        return AutoModelForCausalLM.from_config(config)  # type: ignore[no-untyped-call]


def export(model: Any, path: Any = None,
           training: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Write the manifest of model to path (.json, or .yaml); return it as a dict.

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


def main(argv: Optional[List[str]] = None) -> int:
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
