#!/usr/bin/env python3
"""NVIDIA-NeMo/Automodel#2017's load, built by the real transformers, against dtypelint.

Usage: automodel_gemma4.py DTYPELINT VENV_PYTHON SOURCE_ROOT
NeMo Automodel 0.4.0 builds its own Gemma4ForConditionalGeneration with model_cls(hf_config)
under the requested default dtype after setting torch_dtype on the top-level config alone
(_transformers/model_init.py#L743-L747 at v0.4.0); 0.5.0 first sets it on every nested config
(_propagate_torch_dtype_to_subconfigs, PR #2027). The dense Gemma 4 is Hugging Face's own
__init__ (components/models/gemma4_moe/model.py#L494-L502 at v0.4.0), so the venv's
transformers builds fixtures/import/tiny-gemma4 both ways with model.torch_dtype float32, and
each parameter's dtype must be the one dtypelint's load stage gives at --with
nemo-automodel=0.4.0 and 0.5.0 (rules/versions.yaml automodel-subconfig-dtype-not-propagated):
the construction half of issue #2017's account.
The two releases must differ too: a check that cannot fail proves nothing. Automodel itself is
not imported: the two lines of its model_init.py that handle the dtype are replayed below,
quoted from its source, on transformers' own class. Automodel's own Gemma 4 class, built by
its _init_model, casts the whole model to bfloat16 in initialize_weights at construction
(tests/oracle/DISAGREEMENTS.md D55), and the recipe's load path after it (meta device,
checkpoint load, FSDP2 on CUDA) is not run here.

Exit 0 when both agree, 1 otherwise; 77 (skip) without the venv, 1 then when
DTL_REQUIRE_VENV=1."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_differential as rd  # noqa: E402

WORKER = r'''
import json, sys, torch
from transformers import PretrainedConfig, Gemma4Config, Gemma4ForConditionalGeneration

def build(folder, propagate):
    cfg = Gemma4Config.from_pretrained(folder)
    if propagate:  # 0.5.0: _propagate_torch_dtype_to_subconfigs(hf_config, torch_dtype)
        seen = set()
        def rec(c):
            if id(c) in seen:
                return
            seen.add(id(c))
            c.torch_dtype = torch.float32
            for v in vars(c).values():
                if isinstance(v, PretrainedConfig):
                    rec(v)
        rec(cfg)
    else:  # 0.4.0: if torch_dtype != "auto": hf_config.torch_dtype = torch_dtype
        cfg.torch_dtype = torch.float32
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)  # local_torch_dtype(torch_dtype, ...)
    try:
        model = Gemma4ForConditionalGeneration(cfg)
    finally:
        torch.set_default_dtype(old)
    return {n: str(p.dtype).replace("torch.", "") for n, p in model.named_parameters()}

print(json.dumps({"0.4.0": build(sys.argv[1], False), "0.5.0": build(sys.argv[1], True)}))
'''


def lint(binary, root, version):
    """dtypelint's dtype of each tensor after its load stage, at nemo-automodel VERSION"""
    run = subprocess.run(
        [binary, "-q", "--no-config", "--trace", "**", "fixtures/import/tiny-gemma4",
         "--framework-config", "fixtures/frameworks/nemo-automodel/gemma4_4b.yaml",
         "--framework-override", "model.torch_dtype=torch.float32",
         "--framework-override", "freeze_config.freeze_vision_tower=false",
         "--with", f"torch=2.10.0,nemo-automodel={version}"],
        cwd=root, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"FAIL: dtypelint exited {run.returncode}: {run.stderr[-800:]}")
    out = {}
    for name, steps in rd.trace_steps(run.stdout).items():  # text format: on stdout
        done = [to for stage, to in steps if stage in ("manifest", "load")]
        if done:
            out[name] = done[-1]
    return out


def main():
    binary, py, root = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
    if not os.path.exists(py):
        msg = f"no venv python at {py} (sh tools/venv.sh <build>/venv)"
        if os.environ.get("DTL_REQUIRE_VENV") == "1":
            print(f"FAIL: {msg}, and DTL_REQUIRE_VENV=1")
            return 1
        print(f"SKIP: {msg}")
        return 77
    run = subprocess.run([py, "-c", WORKER, os.path.join(root, "fixtures/import/tiny-gemma4")],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL: the real build failed: {run.stderr[-1500:]}")
        return 1
    real = json.loads(run.stdout.splitlines()[-1])
    fails = 0
    for version in ("0.4.0", "0.5.0"):
        mine = lint(binary, root, version)
        for name, dtype in sorted(real[version].items()):
            if mine.get(name) != dtype:
                print(f"FAIL {version}: {name}: real {dtype}, dtypelint {mine.get(name)}")
                fails += 1
        mixed = sorted(set(real[version].values()))
        print(f"{version}: {len(real[version])} parameters, real dtypes {mixed}")
    if real["0.4.0"] == real["0.5.0"]:
        print("FAIL: 0.4.0 and 0.5.0 build the same dtypes: the check cannot fail")
        fails += 1
    print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
