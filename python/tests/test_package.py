#!/usr/bin/env python3
"""Unit tests of the dtypelint package against the real libraries of <build>/venv (torch 2.13.0,
transformers, accelerate, PEFT and TRL pinned in tests/requirements.txt), on tiny models built
here (no downloads): export (ties, meta device, a real PEFT model, ZeRO-3 shapes), check (model,
manifest, dicts, versions, the binary's errors, strictness), check_accelerator on a real
Accelerator with accelerate's real FSDP and DeepSpeed plugins, and DtypelintCallback driven by
transformers' own CallbackHandler with real TrainingArguments (and TRL's SFTConfig),
TrainerState and TrainerControl, and by a real Trainer. torch 1.13 appears only as a version
given to the program, for its own behaviour (DT104).
Usage: test_package.py DTYPELINT SOURCE_ROOT BUILD_ROOT (run by any python3: it re-runs itself in
BUILD_ROOT/venv, python/tests/testvenv.py)"""
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest
import warnings

BINARY, ROOT, BUILD = (os.path.abspath(a) for a in sys.argv[1:4])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testvenv import in_venv  # noqa: E402

in_venv(BUILD)
sys.path.insert(0, os.path.join(ROOT, "python"))
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import accelerate  # noqa: E402
import peft  # noqa: E402
import transformers  # noqa: E402
import trl  # noqa: E402
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
    """A bf16 norm in a float32 FSDP1 unit: FSDP1 refuses to flatten it at wrap time."""
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


# --- real transformers and PEFT models, tiny: Qwen2ForCausalLM from a small config, and
# get_peft_model's PeftModel around it ---
def qwen2(dtype=torch.float32):
    config = transformers.Qwen2Config(vocab_size=32, hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2,
                                      num_key_value_heads=1, max_position_embeddings=32,
                                      tie_word_embeddings=False)
    config._name_or_path = "tiny/qwen2"
    return transformers.Qwen2ForCausalLM(config).to(dtype)


def peft_model(dtype=torch.bfloat16):
    return peft.get_peft_model(qwen2(dtype), peft.LoraConfig(
        r=2, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))


class Export(unittest.TestCase):
    def test_ties_are_kept(self):
        m = dtypelint.build_manifest(Tiny())
        self.assertEqual(m["model"]["tied"], [["embed.weight", "head.weight"]])
        self.assertNotIn("head.weight", [t["name"] for t in m["tensors"]])
        # and the program reads the tie: the second name comes back from model.tied
        report = dtypelint.check(m, plan={"strategy": "fsdp1"})
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
        bare = dtypelint.build_manifest(qwen2())
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
                "strategy": "fsdp1", "versions": {"torch": TORCH}})
            with open(path) as f:
                self.assertEqual(json.load(f), returned)
            self.assertEqual(cli_verdicts(cli(path)), verdicts(dtypelint.check(
                broken(), plan={"strategy": "fsdp1"})))
            self.assertIn("DT101", [rule for rule, _ in cli_verdicts(cli(path))])

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
    def test_path_gets_the_installed_versions_below_its_own(self):
        # issue 33: the live environment's versions (importlib.metadata) are what runs; a
        # manifest's own versions still win over them
        from dtypelint._check import installed_versions
        installed = installed_versions()
        if "torch" not in installed:
            self.skipTest("no torch installed here")
        manifest = {"dtypelint": 1,
                    "tensors": [{"name": "w", "shape": [2, 2], "dtype": "float32"}],
                    "training": {"strategy": "ddp", "versions": {"deepspeed": "0.19.2"}}}
        raw = dtypelint.check(manifest).raw["inputs"][0]["plan"]["versions"]
        self.assertTrue(installed["torch"].startswith(raw["torch"]["version"]))
        self.assertIn("<installed versions>", raw["torch"]["from"])
        self.assertEqual(raw["deepspeed"]["version"], "0.19.2")
        self.assertNotIn("installed-versions", raw["deepspeed"]["from"])

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

    def test_input_warnings_are_in_the_report(self):
        # issue 32: a key the program did not read is a DT003 input warning, kept apart from
        # the findings, as the JSON report keeps it
        fixture = os.path.join(ROOT, "fixtures", "import", "tiny-qwen2")
        report = dtypelint.check(fixture, trainer_args={"bf16": True,
                                                        "torch_dtyp": "bfloat16"})
        self.assertEqual([f.rule for f in report.input_warnings], ["DT003"])
        w = report.input_warnings[0]
        self.assertEqual(w.severity, "warning")
        self.assertIn("did you mean 'torch_dtype'", w.message)
        self.assertEqual(w.location.file, "<trainer_args>")
        self.assertNotIn("DT003", [f.rule for f in report])
        self.assertEqual(dtypelint.check(fixture, trainer_args={"bf16": True}).input_warnings,
                         [])

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
        # a real LoraConfig: to_dict() holds target_modules as a set
        lora = peft.LoraConfig(r=2, target_modules=["v_proj", "q_proj"], task_type="CAUSAL_LM",
                               base_model_name_or_path="tiny/qwen2")
        self.assertIsInstance(lora.to_dict()["target_modules"], set)
        findings = dtypelint.check(dtypelint.build_manifest(qwen2(torch.bfloat16)),
                                   peft=lora, accelerate={"distributed_type": "FSDP",
                                                          "mixed_precision": "bf16",
                                                          "num_processes": 2,
                                                          "fsdp_config": {"fsdp_version": 2}})
        self.assertEqual(findings.raw["inputs"][0]["plan"]["strategy"], "fsdp2")
        # the adapters were injected: 2 targets x (lora_A, lora_B) in the one layer
        self.assertEqual(findings.raw["inputs"][0]["tensors"],
                         len(dtypelint.build_manifest(qwen2())["tensors"]) + 4)

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


# --- the real transformers Trainer machinery: TrainingArguments (and TRL's configs),
# TrainerState, TrainerControl, and CallbackHandler, which calls a callback's hooks as
# Trainer.__init__ and Trainer.train do. An FSDP or DeepSpeed Trainer cannot be built on a
# CPU-only machine (accelerate: "There are currently no available devices found"), so those
# set-ups drive the callback through CallbackHandler; a plain Trainer is built for real. ---
OUT = tempfile.mkdtemp(prefix="dtypelint-test-")


def training_args(cls=transformers.TrainingArguments, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FSDP1 and the legacy fsdp strings are deprecated
        return cls(output_dir=OUT, report_to=[], use_cpu=True, **kw)


def fsdp1_args(**config):
    return training_args(fsdp=True, fsdp_config=dict(
        {"version": 1, "transformer_layer_cls_to_wrap": ["Block"], "use_orig_params": False},
        **config))


def init_end(cb, args, model):
    """What Trainer.__init__ does last: CallbackHandler.on_init_end with the model."""
    handler = transformers.trainer_callback.CallbackHandler([cb], model, None, None, None)
    return handler.on_init_end(args, transformers.TrainerState(), transformers.TrainerControl())


def train_begin(cb, args, model):
    handler = transformers.trainer_callback.CallbackHandler([cb], model, None, None, None)
    return handler.on_train_begin(args, transformers.TrainerState(),
                                  transformers.TrainerControl())


def fsdp1_verdicts(model, **plan):
    """The program's verdicts on the exported model with the FSDP1 plan of fsdp1_args."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.json")
        dtypelint.export(model, path, training=dict({
            "strategy": "fsdp1", "world_size": 1, "versions": dtypelint.installed_versions(),
            "fsdp": {"wrap": ["Block"], "use_orig_params": False}}, **plan))
        return cli_verdicts(cli(path))


class Callback(unittest.TestCase):
    def test_raises_before_the_first_step_with_the_framework_error(self):
        cb = DtypelintCallback()
        with self.assertRaises(dtypelint.PredictedFrameworkError) as e:
            init_end(cb, fsdp1_args(), broken())
        self.assertIn("uniform dtype", e.exception.framework_error)
        self.assertIn(e.exception.framework_error, str(e.exception))
        # the same set-up on the command line: a manifest with the same plan
        self.assertEqual(sorted(verdicts(cb.findings)), fsdp1_verdicts(broken()))

    def test_trainer_default_use_orig_params_on_torch_113(self):
        # a torch 1.13 behaviour (DT104): the Trainer's default fsdp_config use_orig_params
        # reaches FSDP1's constructor through accelerate, and torch 1.13's FSDP1 has no such
        # argument. Left out of fsdp_config it is true; False (a real bool) is false.
        args = training_args(fsdp=True, fsdp_config={
            "version": 1, "transformer_layer_cls_to_wrap": ["Block"]})
        cb = DtypelintCallback(versions=V113)
        with self.assertRaises(dtypelint.PredictedFrameworkError) as e:
            init_end(cb, args, Tiny())
        self.assertIn("unexpected keyword argument 'use_orig_params'",
                      e.exception.framework_error)
        cb = DtypelintCallback(versions=V113)
        init_end(cb, fsdp1_args(), Tiny())
        self.assertNotIn("DT104", [f.rule for f in cb.findings])

    def test_on_train_begin_when_added_after_init(self):
        cb = DtypelintCallback()
        with self.assertRaises(dtypelint.PredictedFrameworkError):
            train_begin(cb, fsdp1_args(), broken())

    def test_check_reads_training_arguments_as_the_callback_does(self):
        via_check = dtypelint.check(broken(), trainer_args=fsdp1_args())
        self.assertIn("DT101", [f.rule for f in via_check])
        cb = DtypelintCallback(warn_only=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            init_end(cb, fsdp1_args(), broken())
        self.assertEqual(verdicts(via_check), verdicts(cb.findings))

    def test_fsdp2_by_default(self):
        # transformers 5.24: fsdp=True, and FSDP2 when fsdp_config names no version
        args = training_args(fsdp=True, fsdp_config={"transformer_layer_cls_to_wrap": ["Block"]})
        self.assertIs(args.fsdp, True)
        findings = dtypelint.check(broken(), trainer_args=args)
        self.assertEqual(findings.raw["inputs"][0]["plan"]["strategy"], "fsdp2")
        self.assertIn("DT111", [f.rule for f in findings])
        # the legacy string still means FSDP (transformers turns it into fsdp=True)
        legacy = training_args(fsdp="full_shard auto_wrap",
                               fsdp_config={"transformer_layer_cls_to_wrap": ["Block"]})
        self.assertEqual(dtypelint.check(broken(), trainer_args=legacy).raw["inputs"][0]
                         ["plan"]["strategy"], "fsdp2")

    def test_model_already_wrapped_at_train_begin_is_not_exported(self):
        # torch's own FSDP1 on a one-rank gloo world (the CPU's): what prepare leaves
        import torch.distributed as dist
        from torch.distributed.fsdp import FullyShardedDataParallel
        with tempfile.TemporaryDirectory() as tmp:
            dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "store"),
                                    rank=0, world_size=1)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # NO_SHARD on one rank
                    wrapped = FullyShardedDataParallel(Tiny(), device_id=torch.device("cpu"))
            finally:
                dist.destroy_process_group()
        cb = DtypelintCallback()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            train_begin(cb, fsdp1_args(), wrapped)
        self.assertTrue(any("on_init_end" in str(x.message) for x in w))
        self.assertIsNone(cb.findings)

    def test_warn_only(self):
        cb = DtypelintCallback(warn_only=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            control = init_end(cb, fsdp1_args(), broken())
        self.assertIsInstance(control, transformers.TrainerControl)
        self.assertTrue(any("uniform dtype" in str(x.message) for x in w))

    def test_clean_setup_passes(self):
        cb = DtypelintCallback()
        init_end(cb, fsdp1_args(), Tiny())
        self.assertEqual([f for f in cb.findings if f.severity == "error"], [])

    def test_a_real_trainer_calls_it(self):
        # a plain Trainer is built for real on the CPU: its __init__ calls on_init_end
        cb = DtypelintCallback()
        model = peft_model(torch.float32)
        trainer = transformers.Trainer(model=model, args=training_args(), callbacks=[cb])
        self.assertIs(trainer.model, model)
        self.assertIsNotNone(cb.findings)
        self.assertEqual(cb.findings.raw["inputs"][0]["plan"]["strategy"], "single")
        self.assertEqual(cb.findings.raw["inputs"][0]["tensors"],
                         len(dtypelint.build_manifest(model)["tensors"]))

    def test_deepspeed_and_peft_from_trl_config(self):
        with open(os.path.join(ROOT, "fixtures", "import", "ds_z3_bf16.json")) as f:
            ds = json.load(f)
        args = training_args(trl.SFTConfig, bf16=True, deepspeed=ds)
        from dtypelint._plans import training_args_inputs
        plan, deepspeed = training_args_inputs(args)
        self.assertEqual((plan["trainer"], plan["strategy"]), ("trl-sft", "zero3"))
        self.assertEqual(deepspeed, ds)
        cb = DtypelintCallback(versions={"deepspeed": "0.19.2"}, warn_only=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            init_end(cb, args, peft_model())
        self.assertEqual(cb.findings.raw["inputs"][0]["plan"]["strategy"], "zero3")
        # the coalesced gather needs ranks: this CPU machine is one, the set-up is eight
        findings = dtypelint.check(peft_model(), trainer_args=args, plan={"world_size": 8},
                                   versions={"deepspeed": "0.19.2"})
        self.assertIn("DT121", [f.rule for f in findings])
        with self.assertRaises(dtypelint.PredictedFrameworkError) as e:
            dtypelint._accelerate.raise_or_warn(findings)
        self.assertIn("output tensor must have the same type", e.exception.framework_error)


class Accelerate(unittest.TestCase):
    """check_accelerator on a real Accelerator and accelerate's real plugins. On a CPU-only
    machine accelerate builds no FSDP or DeepSpeed Accelerator, so the plugin is set on the
    real AcceleratorState as accelerate sets it on a GPU machine (state.distributed_type,
    state.fsdp_plugin / deepspeed_plugin)."""

    def accelerator(self, dist, mixed="bf16", **plugins):
        accelerate.state.AcceleratorState._reset_state(True)
        acc = accelerate.Accelerator(cpu=True, mixed_precision=mixed)
        acc.state.distributed_type = dist
        if "fsdp_plugin" in plugins:
            acc.state.fsdp_plugin = plugins["fsdp_plugin"]
        if "deepspeed_plugin" in plugins:  # what AcceleratorState keeps: the selected plugin
            acc.state.deepspeed_plugins = plugins["deepspeed_plugin"]
        return acc

    def tearDown(self):
        accelerate.state.AcceleratorState._reset_state(True)

    def test_no_distribution(self):
        accelerate.state.AcceleratorState._reset_state(True)
        acc = accelerate.Accelerator(cpu=True)
        findings = dtypelint.check_accelerator(acc, Tiny())
        self.assertEqual(findings.raw["inputs"][0]["plan"]["strategy"], "single")

    def test_fsdp_plugin_reads_like_the_accelerate_config(self):
        from torch.distributed.fsdp import MixedPrecision
        plugin = accelerate.utils.FullyShardedDataParallelPlugin(
            fsdp_version=1, auto_wrap_policy="transformer_based_wrap",
            transformer_cls_names_to_wrap=["Block"], use_orig_params=False,
            mixed_precision_policy=MixedPrecision(param_dtype=torch.bfloat16,
                                                  reduce_dtype=torch.bfloat16,
                                                  buffer_dtype=torch.bfloat16))
        acc = self.accelerator(accelerate.utils.DistributedType.FSDP, fsdp_plugin=plugin)
        model = Tiny()
        model.layers[1].attn.weight.requires_grad_(False)
        findings = dtypelint.check_accelerator(acc, model, raise_on_error=False)
        with tempfile.TemporaryDirectory() as tmp:
            yaml = os.path.join(tmp, "accelerate.yaml")
            with open(yaml, "w") as f:
                f.write("distributed_type: FSDP\nmixed_precision: bf16\nnum_processes: 1\n"
                        "fsdp_config:\n  fsdp_version: 1\n"
                        "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
                        "  fsdp_transformer_layer_cls_to_wrap: Block\n"
                        "  fsdp_use_orig_params: false\n")
            path = os.path.join(tmp, "m.json")
            dtypelint.export(model, path)
            expected = cli_verdicts(cli("--accelerate", yaml, "--with",
                                        "torch=" + TORCH, path))
        self.assertEqual(verdicts(findings), expected)
        self.assertIn("DT102", [f.rule for f in findings])
        with self.assertRaises(dtypelint.PredictedFrameworkError), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DT302, a warning, is warned about
            dtypelint.check_accelerator(acc, model)

    def test_deepspeed_plugin(self):
        with open(os.path.join(ROOT, "fixtures", "import", "ds_z3_bf16.json")) as f:
            ds = json.load(f)
        plugin = accelerate.utils.DeepSpeedPlugin(hf_ds_config=ds, zero3_init_flag=True)
        acc = self.accelerator(accelerate.utils.DistributedType.DEEPSPEED,
                               deepspeed_plugin=plugin)
        findings = dtypelint.check_accelerator(acc, peft_model(), versions={"deepspeed": "0.19.2"})
        plan = findings.raw["inputs"][0]["plan"]
        self.assertEqual((plan["strategy"], plan["world_size"]), ("zero3", 1))
        # the coalesced gather (DT121) needs ranks: this CPU Accelerator has one; the same
        # plugin's plan at eight ranks
        from dtypelint._plans import accelerator_inputs
        plan, config = accelerator_inputs(acc, None)
        self.assertEqual(plan["zero3"], {"init": True})
        plan["world_size"] = 8
        with self.assertRaises(dtypelint.PredictedFrameworkError) as e:
            dtypelint._accelerate.raise_or_warn(dtypelint.check(
                peft_model(), plan=plan, deepspeed=config, versions={"deepspeed": "0.19.2"}))
        self.assertIn("DT121", [f.rule for f in e.exception.findings])
        # DeepSpeed 0.19.3 fixed the gather
        findings = dtypelint.check(peft_model(), plan=plan, deepspeed=config,
                                   versions={"deepspeed": "0.19.3"})
        self.assertNotIn("DT121", [f.rule for f in findings])

    def test_size_based_wrap_is_refused(self):
        plugin = accelerate.utils.FullyShardedDataParallelPlugin(
            fsdp_version=2, auto_wrap_policy="size_based_wrap")
        acc = self.accelerator(accelerate.utils.DistributedType.FSDP, fsdp_plugin=plugin)
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
            args = fsdp1_args(use_orig_params=value)
            plan, _ = training_args_inputs(args, "5.24.0")
            self.assertIs(plan["fsdp"]["use_orig_params"], False, value)
            rules = [f.rule for f in dtypelint.check(Tiny(), trainer_args=args, versions=V113)]
            self.assertNotIn("DT104", rules, value)
        for value in (True, "true", None):
            args = fsdp1_args(use_orig_params=value) if value is not None else \
                training_args(fsdp=True, fsdp_config={"version": 1})
            plan, _ = training_args_inputs(args, "5.24.0")
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
            # a config with a set-up: the program given no file lints it (and would write a
            # report where an argument became -o)
            with open("m.json", "w") as f:
                json.dump(DT101_DICT, f)
            with open(".dtypelint.yaml", "w") as f:
                f.write("setups:\n  - name: one\n    model: m.json\n")
            inputs = sorted(os.listdir(tmp))
            try:
                for arg in ("-oreport.yaml", "--output=report.yaml"):
                    with self.assertRaises(dtypelint.InputError):
                        dtypelint.check(arg)
                    with self.assertRaises(dtypelint.InputError):
                        dtypelint.check(DT101_DICT, plan=arg)
                    self.assertEqual(sorted(os.listdir(tmp)), inputs, arg)
                for bad in ({"torch": "2.7.1,deepspeed=0.19.3"}, {"torch": "2.7.1 "},
                            {"torch": "--help"}, {"torch": ""}):
                    with self.assertRaises(ValueError):
                        dtypelint.check(DT101_DICT, versions=bad)
                for bad in ("DT101,--output=x", ["DT101", "-ox"], ["DT1,DT2"]):
                    with self.assertRaises(ValueError):
                        dtypelint.check(DT101_DICT, select=bad)
                self.assertEqual(sorted(os.listdir(tmp)), inputs)
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
                    "strategy": "fsdp1", "versions": {"torch": TORCH}})
                lint = subprocess.run(["yamllint", "-f", "parsable", path],
                                      capture_output=True, text=True)
                self.assertEqual((lint.returncode, lint.stdout), (0, ""))
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                self.assertIn("\n---\n", "\n" + text)
                self.assertIn("DT101", [rule for rule, _ in cli_verdicts(cli(path))])
                json_path = os.path.join(tmp, "m.json")
                dtypelint.export(model, json_path, training=returned["training"])
                self.assertEqual(cli_verdicts(cli(path)), cli_verdicts(cli(json_path)))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
