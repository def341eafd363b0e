#!/usr/bin/env python3
"""Unit tests of the dtypelint package with Debian's python3-torch, on tiny models built here (no
downloads): export (ties, meta device, PEFT, ZeRO-3 shapes), check (model, manifest, dicts,
versions, the binary's errors), check_accelerator and DtypelintCallback.

transformers, accelerate and peft are not installed on the test machine: the callback is driven
the way transformers' CallbackHandler calls a TrainerCallback (on_init_end / on_train_begin with
args, state, control and model=...), with stand-ins for TrainingArguments, TrainerState and
TrainerControl carrying the documented attributes; the Accelerator stand-in carries accelerate's
documented attributes (state.distributed_type, mixed_precision, num_processes, fsdp_plugin,
deepspeed_plugin); the PEFT stand-in has PeftModel's layout (base_model.model, peft_config,
get_base_model, lora_A/lora_B.default under each target).
Usage: test_package.py DTYPELINT SOURCE_ROOT BUILD_ROOT (run by any python3: it re-runs itself in
BUILD_ROOT/venv, python/tests/testvenv.py)"""
import enum
import json
import os
import stat
import subprocess
import sys
import tempfile
import types
import unittest
import warnings

BINARY, ROOT, BUILD = (os.path.abspath(a) for a in sys.argv[1:4])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testvenv import in_venv  # noqa: E402

in_venv(BUILD)
sys.path.insert(0, os.path.join(ROOT, "python"))
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import dtypelint  # noqa: E402
from dtypelint.integrations.transformers import DtypelintCallback  # noqa: E402

os.environ["DTYPELINT_BIN"] = BINARY
# transformers before 5.10.1: the Trainer's FSDP is FSDP1 when fsdp_config names no version
V113 = {"torch": "1.13", "transformers": "4.57.0"}
TORCH = dtypelint.installed_versions()["torch"]
FSDP1_113 = "ValueError: `FlatParameter` requires uniform dtype but got torch.float32 and torch.bfloat16"


class Block(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.attn = nn.Linear(8, 8, device=device)
        self.norm = nn.LayerNorm(8, device=device)
        self.register_buffer("inv_freq", torch.ones(4, device=device), persistent=False)


class Tiny(nn.Module):
    def __init__(self, device=None, tie=True):
        super().__init__()
        self.embed = nn.Embedding(16, 8, device=device)
        self.layers = nn.ModuleList([Block(device) for _ in range(2)])
        self.head = nn.Linear(8, 16, bias=False, device=device)
        if tie:
            self.head.weight = self.embed.weight
        self._no_split_modules = ["Block"]


def broken():
    """A bf16 norm in a float32 FSDP1 unit: torch 1.13 raises FSDP1_113 at wrap time."""
    m = Tiny()
    m.layers[1].norm.to(torch.bfloat16)
    return m


def cli(*args):
    """The dtypelint program's own JSON report."""
    run = subprocess.run([BINARY, "-f", "json", "-q", *args], capture_output=True, text=True)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


def verdicts(findings):
    return sorted((f.rule, f.framework_error) for f in findings)


def cli_verdicts(report):
    return sorted((f["rule"], (f["framework_error"] or {}).get("text"))
                  for f in report["findings"])


# --- a PEFT model as get_peft_model leaves it (peft's LoraModel, lora.Linear layout) ---
class LoraLinear(nn.Module):
    def __init__(self, base, r=2, dtype=torch.float32):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.ModuleDict({"default": nn.Linear(base.in_features, r, bias=False,
                                                          dtype=dtype)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, base.out_features, bias=False,
                                                          dtype=dtype)})


class Qwen2Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(16, 16, bias=False)
        self.v_proj = nn.Linear(16, 16, bias=False)


class Qwen2DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(16)
        self.self_attn = Qwen2Attention()


class Qwen2Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(32, 16)
        self.layers = nn.ModuleList([Qwen2DecoderLayer()])


class Qwen2ForCausalLM(nn.Module):
    _no_split_modules = ["Qwen2DecoderLayer"]

    def __init__(self):
        super().__init__()
        self.model = Qwen2Model()
        self.lm_head = nn.Linear(16, 32, bias=False)
        self.config = types.SimpleNamespace(_name_or_path="tiny/qwen2", hidden_size=16)


class LoraModel(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model


class PeftModelForCausalLM(nn.Module):
    def __init__(self, model, lora_dtype=torch.float32):
        super().__init__()
        for p in model.parameters():
            p.requires_grad_(False)
        for layer in model.model.layers:
            for name in ("q_proj", "v_proj"):
                setattr(layer.self_attn, name,
                        LoraLinear(getattr(layer.self_attn, name), dtype=lora_dtype))
        self.base_model = LoraModel(model)
        self.peft_config = {"default": {"r": 2}}

    def get_base_model(self):
        return self.base_model.model


def peft_model(dtype=torch.bfloat16, lora_dtype=torch.float32):
    return PeftModelForCausalLM(Qwen2ForCausalLM().to(dtype), lora_dtype)


class Export(unittest.TestCase):
    def test_ties_are_kept(self):
        m = dtypelint.build_manifest(Tiny())
        self.assertEqual(m["model"]["tied"], [["embed.weight", "head.weight"]])
        self.assertNotIn("head.weight", [t["name"] for t in m["tensors"]])
        # and the program reads the tie: the second name comes back from model.tied
        report = dtypelint.check(m, plan={"strategy": "fsdp1"}, versions={"torch": "1.13"})
        self.assertEqual(report.raw["inputs"][0]["tensors"], len(m["tensors"]) + 1)

    def test_meta_device_exports_like_a_real_model(self):
        real = dtypelint.build_manifest(Tiny())
        meta = dtypelint.build_manifest(Tiny(device="meta"))
        self.assertTrue(all(p.is_meta for p in Tiny(device="meta").parameters()))
        self.assertEqual(meta, real)

    def test_order_dtype_trainable_persistence(self):
        model = broken()
        model.layers[0].attn.weight.requires_grad_(False)
        m = dtypelint.build_manifest(model)
        params = [t for t in m["tensors"] if t.get("kind") != "buffer"]
        self.assertEqual([t["name"] for t in params], [n for n, _ in model.named_parameters()])
        by = {t["name"]: t for t in m["tensors"]}
        self.assertEqual(by["layers.1.norm.weight"]["dtype"], "bfloat16")
        self.assertIs(by["layers.0.attn.weight"]["trainable"], False)
        self.assertIs(by["layers.0.inv_freq"]["persistent"], False)
        self.assertEqual(m["model"]["modules"]["layers.*"], "Block")

    def test_peft_model_keeps_the_base_architecture(self):
        m = dtypelint.build_manifest(peft_model())
        self.assertEqual(m["model"]["architecture"], "Qwen2ForCausalLM")
        self.assertEqual(m["model"]["name"], "tiny/qwen2")
        self.assertEqual(m["model"]["no_split_modules"], ["Qwen2DecoderLayer"])
        names = [t["name"] for t in m["tensors"]]
        self.assertIn("model.layers.0.self_attn.q_proj.lora_A.default.weight", names)
        self.assertFalse([n for n in names if n.startswith("base_model.")])
        # the Qwen2 profile applies: no DT603 (unknown architecture), as for the bare model
        rules = {f.rule for f in dtypelint.check(m, plan={"strategy": "single"})}
        self.assertNotIn("DT603", rules)
        bare = dtypelint.build_manifest(Qwen2ForCausalLM())
        self.assertEqual(bare["model"]["architecture"], m["model"]["architecture"])
        self.assertIn("DT603", {f.rule for f in dtypelint.check(
            dict(bare, model=dict(bare["model"], architecture="PeftModelForCausalLM")),
            plan={"strategy": "single"})})  # what the wrapper's class name would have given

    def test_zero3_partitioned_parameters_keep_their_shape(self):
        model = Tiny(tie=False)
        w = model.layers[0].attn.weight
        w.ds_shape = w.shape
        w.data = torch.empty(0)
        by = {t["name"]: t for t in dtypelint.build_manifest(model)["tensors"]}
        self.assertEqual(by["layers.0.attn.weight"]["shape"], [8, 8])

    def test_export_writes_the_file_the_program_reads(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.json")
            returned = dtypelint.export(broken(), path, training={
                "strategy": "fsdp1", "versions": {"torch": "1.13"}})
            with open(path) as f:
                self.assertEqual(json.load(f), returned)
            self.assertIn(("DT101", FSDP1_113), cli_verdicts(cli(path)))

    def test_command_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "factory.py"), "w") as f:
                f.write("import torch.nn as nn\n"
                        "def build():\n    return nn.Sequential(nn.Linear(2, 2))\n")
            out = os.path.join(tmp, "out.json")
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([tmp, os.path.join(ROOT, "python")]))
            run = subprocess.run([sys.executable, "-m", "dtypelint", "export", "--factory",
                                  "factory:build", out], env=env, capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(out) as f:
                self.assertEqual([t["name"] for t in json.load(f)["tensors"]],
                                 ["0.weight", "0.bias"])


class Check(unittest.TestCase):
    def test_live_model_gives_the_programs_findings(self):
        plan = {"strategy": "fsdp1", "world_size": 2}
        findings = dtypelint.check(broken(), plan=plan)
        # versions=None on a live model: the torch installed here (the venv's 2.13.0)
        used = findings.raw["inputs"][0]["plan"]["versions"]["torch"]["version"]
        self.assertEqual(used.split("."), TORCH.split(".")[:len(used.split("."))])
        f = [f for f in findings if f.rule == "DT101"][0]
        self.assertEqual(f.severity, "error")
        self.assertIn("layers.1.norm.weight", f.tensors)
        self.assertTrue(f.fix)
        self.assertIn(f.framework_error, str(f))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.json")
            dtypelint.export(broken(), path, training=dict(plan, versions={"torch": TORCH}))
            self.assertEqual(verdicts(findings), cli_verdicts(cli(path)))

    def test_versions_are_passed(self):
        findings = dtypelint.check(broken(), plan={"strategy": "fsdp1"},
                                   versions={"torch": "2.4.1"})
        errors = [f.framework_error for f in findings if f.rule == "DT101"]
        self.assertEqual(len(errors), 1)
        self.assertNotEqual(errors[0], FSDP1_113)  # torch 2.x words it differently
        self.assertRaises(ValueError, dtypelint.check, broken(), versions={"tensorflow": "2"})

    def test_manifest_path_and_dict_inputs(self):
        fixture = os.path.join(ROOT, "fixtures", "qlora", "fsdp1-uint8-storage.yaml")
        findings = dtypelint.check(fixture)
        self.assertEqual(verdicts(findings), cli_verdicts(cli(fixture)))
        self.assertIn("DT401", [f.rule for f in findings])
        ds = os.path.join(ROOT, "fixtures", "import", "ds_z3_bf16.json")
        with open(ds) as f:
            ds_dict = json.load(f)
        model = peft_model()
        by_path = dtypelint.check(model, deepspeed=ds, versions={"deepspeed": "0.19.2"},
                                  plan={"world_size": 8})
        by_dict = dtypelint.check(model, deepspeed=ds_dict, versions={"deepspeed": "0.19.2"},
                                  plan={"world_size": 8})
        self.assertEqual(verdicts(by_path), verdicts(by_dict))
        self.assertIn("DT121", [f.rule for f in by_dict])

    def test_config_objects(self):
        # a PeftConfig-like object (to_dict with a set, as LoraConfig has) and an accelerate dict
        peft = types.SimpleNamespace(to_dict=lambda: {
            "peft_type": "LORA", "r": 2, "target_modules": {"v_proj", "q_proj"},
            "base_model_name_or_path": "tiny/qwen2"})
        findings = dtypelint.check(dtypelint.build_manifest(Qwen2ForCausalLM().bfloat16()),
                                   peft=peft, accelerate={"distributed_type": "FSDP",
                                                          "mixed_precision": "bf16",
                                                          "num_processes": 2,
                                                          "fsdp_config": {"fsdp_version": 2}})
        self.assertEqual(findings.raw["inputs"][0]["plan"]["strategy"], "fsdp2")
        # the adapters were injected: 2 targets x (lora_A, lora_B) in the one layer
        self.assertEqual(findings.raw["inputs"][0]["tensors"],
                         len(dtypelint.build_manifest(Qwen2ForCausalLM())["tensors"]) + 4)

    def test_missing_binary(self):
        with self.assertRaises(dtypelint.BinaryNotFoundError) as e:
            dtypelint.check(Tiny(), binary="/nonexistent/dtypelint")
        self.assertIn("not installed", str(e.exception))
        os.environ["DTYPELINT_BIN"] = "/nonexistent/dtypelint"
        try:
            with self.assertRaises(dtypelint.BinaryNotFoundError) as e:
                dtypelint.check(Tiny())
            self.assertIn("DTYPELINT_BIN", str(e.exception))
        finally:
            os.environ["DTYPELINT_BIN"] = BINARY

    def fake(self, tmp, text):
        path = os.path.join(tmp, "dtypelint")
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\necho '{text}'\n")
        os.chmod(path, stat.S_IRWXU)
        return path

    def test_too_old_binary(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(dtypelint.BinaryTooOldError) as e:
                dtypelint.check(Tiny(), binary=self.fake(tmp, "dtypelint 0.0.9"))
            self.assertIn("0.0.9", str(e.exception))
            with self.assertRaises(dtypelint.BinaryTooOldError):
                dtypelint.check(Tiny(), binary=self.fake(tmp + "/", "fsdp-linter 3.0"))

    def test_input_error_carries_the_diagnostics(self):
        with self.assertRaises(dtypelint.InputError) as e:
            dtypelint.check({"dtypelint": 1, "tensors": [], "modle": {}})
        self.assertRegex(e.exception.diagnostics, r"^<manifest>: modle: error: .*'modle'")


# --- stand-ins with the attributes transformers and accelerate document ---
class FSDPOption(str, enum.Enum):
    FULL_SHARD = "full_shard"
    AUTO_WRAP = "auto_wrap"


def training_args(cls_name="TrainingArguments", **kw):
    fields = dict(bf16=False, fp16=False, fsdp=[], fsdp_config={}, deepspeed=None, world_size=2)
    fields.update(kw)
    return type(cls_name, (types.SimpleNamespace,), {})(**fields)


STATE = types.SimpleNamespace(is_world_process_zero=True, global_step=0)
CONTROL = types.SimpleNamespace(should_training_stop=False)


class Callback(unittest.TestCase):
    def fsdp_args(self):
        # torch 1.13's FSDP1 has no use_orig_params (DT104): these runs leave it off
        return training_args(fsdp=[FSDPOption.FULL_SHARD, FSDPOption.AUTO_WRAP],
                             fsdp_config={"transformer_layer_cls_to_wrap": ["Block"],
                                          "use_orig_params": "false"})

    def test_raises_before_the_first_step_with_the_framework_error(self):
        cb = DtypelintCallback(versions=V113)
        with self.assertRaises(dtypelint.PredictedFrameworkError) as e:
            cb.on_init_end(self.fsdp_args(), STATE, CONTROL, model=broken(), optimizer=None)
        self.assertEqual(e.exception.framework_error, FSDP1_113)
        self.assertIn(FSDP1_113, str(e.exception))
        # the same set-up on the command line: a recipe with the same keys
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.json")
            dtypelint.export(broken(), path, training={
                "strategy": "fsdp1", "world_size": 2, "versions": {"torch": "1.13"},
                "fsdp": {"wrap": ["Block"]}})
            self.assertEqual(sorted(verdicts(cb.findings)), cli_verdicts(cli(path)))

    def test_trainer_default_use_orig_params_on_torch_113(self):
        # the Trainer's default fsdp_config use_orig_params reaches FSDP1's constructor through
        # accelerate, and torch 1.13's FSDP1 has no such argument (DT104)
        args = training_args(fsdp=[FSDPOption.FULL_SHARD, FSDPOption.AUTO_WRAP],
                             fsdp_config={"transformer_layer_cls_to_wrap": ["Block"]})
        cb = DtypelintCallback(versions=V113)
        with self.assertRaises(dtypelint.PredictedFrameworkError) as e:
            cb.on_init_end(args, STATE, CONTROL, model=Tiny(), optimizer=None)
        self.assertIn("unexpected keyword argument 'use_orig_params'",
                      e.exception.framework_error)

    def test_on_train_begin_when_added_after_init(self):
        cb = DtypelintCallback(versions=V113)
        with self.assertRaises(dtypelint.PredictedFrameworkError):
            cb.on_train_begin(self.fsdp_args(), STATE, CONTROL, model=broken())

    def test_check_reads_training_arguments_as_the_callback_does(self):
        via_check = dtypelint.check(broken(), trainer_args=self.fsdp_args(), versions=V113)
        self.assertIn(("DT101", FSDP1_113), verdicts(via_check))
        cb = DtypelintCallback(warn_only=True, versions=V113)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cb.on_init_end(self.fsdp_args(), STATE, CONTROL, model=broken())
        self.assertEqual(verdicts(via_check), verdicts(cb.findings))

    def test_fsdp2_by_default_from_transformers_5_10_1(self):
        findings = dtypelint.check(broken(), trainer_args=self.fsdp_args(),
                                   versions={"torch": "2.6.0", "transformers": "5.15.0"})
        self.assertEqual(findings.raw["inputs"][0]["plan"]["strategy"], "fsdp2")
        self.assertIn("DT111", [f.rule for f in findings])

    def test_model_already_wrapped_at_train_begin_is_not_exported(self):
        FullyShardedDataParallel = type("FullyShardedDataParallel", (nn.Module,), {})
        wrapped = FullyShardedDataParallel()
        wrapped.module = broken()
        cb = DtypelintCallback(versions=V113)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cb.on_train_begin(self.fsdp_args(), STATE, CONTROL, model=wrapped)
        self.assertTrue(any("on_init_end" in str(x.message) for x in w))
        self.assertIsNone(cb.findings)

    def test_warn_only(self):
        cb = DtypelintCallback(warn_only=True, versions=V113)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.assertIs(cb.on_init_end(self.fsdp_args(), STATE, CONTROL, model=broken()),
                          CONTROL)
        self.assertTrue(any(FSDP1_113 in str(x.message) for x in w))

    def test_clean_setup_passes(self):
        cb = DtypelintCallback(versions=V113)
        self.assertIs(cb.on_init_end(self.fsdp_args(), STATE, CONTROL, model=Tiny()), CONTROL)
        self.assertEqual([f for f in cb.findings if f.severity == "error"], [])

    def test_deepspeed_and_peft_from_training_arguments(self):
        with open(os.path.join(ROOT, "fixtures", "import", "ds_z3_bf16.json")) as f:
            ds = json.load(f)
        cb = DtypelintCallback(versions={"deepspeed": "0.19.2"})
        args = training_args("SFTConfig", bf16=True, deepspeed=ds, world_size=8)
        with self.assertRaises(dtypelint.PredictedFrameworkError) as e:
            cb.on_init_end(args, STATE, CONTROL, model=peft_model())
        self.assertIn("DT121", [f.rule for f in e.exception.findings])
        self.assertIn("output tensor must have the same type", e.exception.framework_error)


class Accelerate(unittest.TestCase):
    class DistributedType(str, enum.Enum):
        FSDP = "FSDP"
        DEEPSPEED = "DEEPSPEED"
        NO = "NO"

    def accelerator(self, dist, mixed="bf16", n=2, **state):
        st = types.SimpleNamespace(distributed_type=dist, mixed_precision=mixed,
                                   num_processes=n, **state)
        return types.SimpleNamespace(state=st, distributed_type=dist, mixed_precision=mixed,
                                     num_processes=n)

    def test_fsdp_plugin_reads_like_the_accelerate_config(self):
        plugin = types.SimpleNamespace(
            fsdp_version=1, auto_wrap_policy="transformer_based_wrap",
            transformer_cls_names_to_wrap=["Block"], use_orig_params=False,
            mixed_precision_policy=types.SimpleNamespace(param_dtype=torch.bfloat16,
                                                         reduce_dtype=torch.bfloat16,
                                                         buffer_dtype=torch.bfloat16),
            ignored_modules=None)
        acc = self.accelerator(self.DistributedType.FSDP, fsdp_plugin=plugin)
        model = Tiny()
        model.layers[1].attn.weight.requires_grad_(False)
        findings = dtypelint.check_accelerator(acc, model, raise_on_error=False,
                                               versions={"torch": "1.13"})
        with tempfile.TemporaryDirectory() as tmp:
            yaml = os.path.join(tmp, "accelerate.yaml")
            with open(yaml, "w") as f:
                f.write("distributed_type: FSDP\nmixed_precision: bf16\nnum_processes: 2\n"
                        "fsdp_config:\n  fsdp_version: 1\n"
                        "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
                        "  fsdp_transformer_layer_cls_to_wrap: Block\n"
                        "  fsdp_use_orig_params: false\n")
            path = os.path.join(tmp, "m.json")
            dtypelint.export(model, path)
            expected = cli_verdicts(cli("--accelerate", yaml, "--with", "torch=1.13", path))
        self.assertEqual(verdicts(findings), expected)
        self.assertIn("DT102", [f.rule for f in findings])
        with self.assertRaises(dtypelint.PredictedFrameworkError), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DT302, a warning, is warned about
            dtypelint.check_accelerator(acc, model, versions={"torch": "1.13"})

    def test_deepspeed_plugin(self):
        with open(os.path.join(ROOT, "fixtures", "import", "ds_z3_bf16.json")) as f:
            ds = json.load(f)
        plugin = types.SimpleNamespace(deepspeed_config=ds, zero3_init_flag=True)
        acc = self.accelerator(self.DistributedType.DEEPSPEED, n=8, deepspeed_plugin=plugin)
        with self.assertRaises(dtypelint.PredictedFrameworkError) as e:
            dtypelint.check_accelerator(acc, peft_model(), versions={"deepspeed": "0.19.2"})
        self.assertIn("DT121", [f.rule for f in e.exception.findings])
        # DeepSpeed 0.19.3 fixed the gather
        findings = dtypelint.check_accelerator(acc, peft_model(), versions={"deepspeed": "0.19.3"})
        self.assertNotIn("DT121", [f.rule for f in findings])

    def test_size_based_wrap_is_refused(self):
        plugin = types.SimpleNamespace(fsdp_version=2, auto_wrap_policy="size_based_wrap",
                                       transformer_cls_names_to_wrap=None,
                                       mixed_precision_policy=None)
        acc = self.accelerator(self.DistributedType.FSDP, fsdp_plugin=plugin)
        self.assertRaisesRegex(dtypelint.DtypelintError, "size_based_wrap",
                               dtypelint.check_accelerator, acc, Tiny())


# --- the package as strict as the program (issues 35 item 3, 38 items 1, 2, 4) ---
DT101_DICT = {"dtypelint": 1,
              "model": {"checkpoint_dtype": "bfloat16",
                        "modules": {"model.layers.*": "DecoderLayer"},
                        "no_split_modules": ["DecoderLayer"]},
              "tensors": [{"name": "model.embed_tokens.weight", "shape": [100, 8]},
                          {"name": "model.layers.0.self_attn.q_proj.weight", "shape": [8, 8]},
                          {"name": "model.layers.0.mlp.gate.weight", "shape": [2, 8],
                           "dtype": "float32"},
                          {"name": "model.norm.weight", "shape": [8]}],
              "training": {"strategy": "fsdp1", "versions": {"torch": "2.4.1"}}}


class Strict(unittest.TestCase):
    def test_false_use_orig_params_stays_false(self):
        # TrainingArguments keeps fsdp_config's bools as given; False must not read as true
        # (on torch 1.13 a true use_orig_params is DT104)
        from dtypelint._plans import training_args_inputs
        for value in (False, "false", "False", 0):
            args = training_args(fsdp=[FSDPOption.FULL_SHARD, FSDPOption.AUTO_WRAP],
                                 fsdp_config={"transformer_layer_cls_to_wrap": ["Block"],
                                              "use_orig_params": value})
            plan, _ = training_args_inputs(args, "4.57.0")
            self.assertIs(plan["fsdp"]["use_orig_params"], False, value)
            rules = [f.rule for f in dtypelint.check(Tiny(), trainer_args=args, versions=V113)]
            self.assertNotIn("DT104", rules, value)
        for value in (True, "true", None):
            config = {"use_orig_params": value} if value is not None else {}
            args = training_args(fsdp=[FSDPOption.FULL_SHARD], fsdp_config=config)
            plan, _ = training_args_inputs(args, "4.57.0")
            self.assertIs(plan["fsdp"]["use_orig_params"], True, value)

    def test_dict_locations_name_the_key(self):
        findings = dtypelint.check(DT101_DICT)
        f = [f for f in findings if f.rule == "DT101"][0]
        self.assertEqual(f.location.file, "<manifest>")
        # the unit's location is the no-split entry that made it; the tensor's, its dtype key
        self.assertEqual(f.location.key, "model.no_split_modules[0]")
        self.assertEqual(str(f.location), "<manifest>: model.no_split_modules[0]")
        self.assertEqual(f.trace[0]["steps"][0]["location"]["key"], "tensors[2].dtype")
        self.assertNotIn(tempfile.gettempdir(), json.dumps(findings.raw))
        with self.assertRaises(dtypelint.InputError) as e:
            dtypelint.check(dict(DT101_DICT, modle={}))
        self.assertIn("<manifest>: modle", e.exception.diagnostics)
        self.assertNotIn(tempfile.gettempdir(), str(e.exception))
        with self.assertRaises(dtypelint.InputError) as e:
            dtypelint.check(DT101_DICT, plan={"strategy": "fsdp1", "precison": "bf16"})
        self.assertRegex(e.exception.diagnostics, "^<plan>: precison: error: unknown key")

    def test_a_path_never_becomes_an_option(self):
        with tempfile.TemporaryDirectory() as tmp:
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                for arg in ("-oreport.yaml", "--output=report.yaml"):
                    with self.assertRaises(dtypelint.InputError):
                        dtypelint.check(arg)
                    with self.assertRaises(dtypelint.InputError):
                        dtypelint.check(DT101_DICT, plan=arg)
                    self.assertEqual(os.listdir(tmp), [], arg)
                for bad in ({"torch": "2.7.1,deepspeed=0.19.3"}, {"torch": "2.7.1 "},
                            {"torch": "--help"}, {"torch": ""}):
                    with self.assertRaises(ValueError):
                        dtypelint.check(DT101_DICT, versions=bad)
                for bad in ("DT101,--output=x", ["DT101", "-ox"], ["DT1,DT2"]):
                    with self.assertRaises(ValueError):
                        dtypelint.check(DT101_DICT, select=bad)
                self.assertEqual(os.listdir(tmp), [])
            finally:
                os.chdir(cwd)

    def test_output_decoded_as_utf8_whatever_the_locale(self):
        manifest = json.loads(json.dumps(DT101_DICT))
        manifest["tensors"][2]["name"] = "model.layers.0.mlp.gäte\u00e9.weight"
        script = ("import json, sys, dtypelint\n"
                  "r = dtypelint.check(json.loads(sys.argv[1]))\n"
                  "print(ascii([t for f in r for t in f.tensors]))\n")
        for lang in ("C", "en_US.ISO-8859-1"):
            env = dict(os.environ, LC_ALL=lang, LANG=lang, PYTHONUTF8="0",
                       PYTHONCOERCECLOCALE="0", PYTHONPATH=os.path.join(ROOT, "python"))
            run = subprocess.run([sys.executable, "-c", script, json.dumps(manifest)],
                                 env=env, capture_output=True)
            self.assertEqual(run.returncode, 0, run.stderr.decode("utf-8", "replace"))
            self.assertIn(ascii("gäte\u00e9")[1:-1], run.stdout.decode())

    def test_messages_are_escaped(self):
        manifest = json.loads(json.dumps(DT101_DICT))
        evil = "model.layers.0.mlp.gate\x1b[2J\r\n::warning file=x::pwned\u009b.weight"
        manifest["tensors"][2]["name"] = evil
        findings = dtypelint.check(manifest)
        f = [f for f in findings if f.rule == "DT101"][0]
        self.assertIn(evil, f.tensors)  # the data stays as it is
        for text in [str(f)] + [str(x) for x in findings]:
            self.assertNotRegex(text, "[\x1b\r\x85\x9b]")
            self.assertFalse([line for line in text.split("\n") if line.startswith("::")])
            self.assertNotIn("\n::", text)
        self.assertIn("\\x1b[2J\\x0d\\x0a::warning", str(f))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            from dtypelint._accelerate import raise_or_warn
            with self.assertRaises(dtypelint.PredictedFrameworkError) as e:
                raise_or_warn(findings)
        for text in [str(e.exception)] + [str(x.message) for x in w]:
            self.assertNotRegex(text, "[\x1b\r\x85\x9b]")
            self.assertNotIn("\n::", text)
        with self.assertRaises(dtypelint.InputError) as e:
            dtypelint.check(dict(manifest, **{"mod\x1ble\n::error::x": 1}))
        self.assertNotRegex(str(e.exception), "[\x1b\r]")
        self.assertNotIn("\n::", str(e.exception))
        with self.assertRaises(dtypelint.BinaryNotFoundError) as e:
            dtypelint.check(manifest, binary="/nonexistent/\x1b]0;x\x07\n::error::y")
        self.assertNotRegex(str(e.exception), "[\x1b\x07]")
        self.assertNotIn("\n::", str(e.exception))

    def test_binary_version_and_types(self):
        version = dtypelint.binary_version()
        self.assertEqual(len(version), 3)
        self.assertTrue(all(isinstance(n, int) for n in version))
        run = subprocess.run([BINARY, "--version"], capture_output=True, text=True)
        self.assertTrue(run.stdout.startswith("dtypelint %d.%d.%d" % version))
        self.assertTrue(os.path.exists(os.path.join(ROOT, "python", "dtypelint", "py.typed")))
        info = [f for f in dtypelint.check(os.path.join(ROOT, "fixtures", "rules",
                                                        "dt603-fires.yaml"))]
        self.assertTrue(info)
        self.assertIsNone(info[0].framework_error)

    def test_yaml_export_passes_yamllint(self):
        import shutil
        if not shutil.which("yamllint"):
            self.skipTest("yamllint is not installed")
        model = broken()
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("m.yaml", "m.yml"):
                path = os.path.join(tmp, name)
                returned = dtypelint.export(model, path, training={
                    "strategy": "fsdp1", "versions": {"torch": "1.13"}})
                lint = subprocess.run(["yamllint", "-f", "parsable", path],
                                      capture_output=True, text=True)
                self.assertEqual((lint.returncode, lint.stdout), (0, ""))
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                self.assertIn("\n---\n", "\n" + text)
                self.assertIn(("DT101", FSDP1_113), cli_verdicts(cli(path)))
                json_path = os.path.join(tmp, "m.json")
                dtypelint.export(model, json_path, training=returned["training"])
                self.assertEqual(cli_verdicts(cli(path)), cli_verdicts(cli(json_path)))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
