"""One set-up of the real-library oracle, run by the real libraries on the CPU.

Usage (with the venv's python): real_worker.py SPEC.json RESULT.json
                                 real_worker.py --batch SPEC RESULT [SPEC RESULT ...]
SPEC names a saved model folder and the steps: from_pretrained(dtype=...), bitsandbytes 4-bit
or 8-bit (its CPU backend), get_peft_model (LoRA or DoRA), accelerate's prepare with an FSDP1
or FSDP2 plugin, or deepspeed.initialize with ZeRO-3 under zero.Init (HfDeepSpeedConfig), then
one forward, backward and optimizer step; or a trainer's own step (run_trainer), on one
device or, under zero3/fsdp1/fsdp2, with the trainer's own DeepSpeed/FSDP arguments in
every rank (_world_args). Sharded strategies run in a 2-rank gloo world
(torch.multiprocessing). RESULT gets, for rank 0, every parameter's and buffer's dtype after
each stage and the exception that stopped it (type and message), or none."""
import inspect
import json
import os
import re
import sys
import time
import traceback

STAGES = ("load", "peft", "wrap", "step")


def _clean(name):
    # the names a user's manifest has: no PEFT, FSDP1, checkpoint or engine wrapper prefixes
    for p in ("base_model.model.", "_fsdp_wrapped_module.", "_checkpoint_wrapped_module.",
              "module."):
        if name.startswith(p):
            name = name[len(p):]
        name = name.replace("." + p, ".")
    return name


def _dtype(t):
    s = str(t.dtype).replace("torch.", "")
    return s


def imported():
    # the version of each framework this process imported: tests/oracle/boundaries.py puts
    # an older release first on PYTHONPATH and checks that it is the one that ran
    names = ("torch", "transformers", "peft", "deepspeed", "accelerate", "trl", "bitsandbytes")
    return {n: getattr(sys.modules[n], "__version__", "?") for n in names if n in sys.modules}


def snapshot(model):
    out = {}
    for n, p in model.named_parameters():
        out[_clean(n)] = _dtype(p)
    for n, b in model.named_buffers():
        if b is not None:
            out[_clean(n)] = _dtype(b)
    return out


def shapes(model, regex):
    """{tensor name (as snapshot names it): [dims]} of the parameters and buffers whose name
    matches REGEX (boundaries.py's `shapes` set-up key)."""
    out = {}
    for n, p in list(model.named_parameters()) + list(model.named_buffers()):
        if p is not None and re.search(regex, _clean(n)):
            out[_clean(n)] = list(p.shape)
    return out


def rope_positions(model, pos):
    """(dtype, {dtype: error}): what the first rotary embedding's cos for position POS was
    computed from, as the dtype whose rounding of POS explains it best ("float32": POS
    itself; "bfloat16": POS rounded to bfloat16, 256 for 257). transformers <= 4.37 returns
    rows of a cache built at __init__ from torch.arange(N, dtype=inv_freq.dtype), a float
    arange zero.Init's wrappers cast to the 16-bit dtype (transformers#28685); 4.38 computes
    cos from the int64 position_ids in forward. The cos is compared with cos(Q * inv_freq)
    in float32 for each candidate Q (the largest absolute difference; the cache's own
    bfloat16 rounding of cos is below 0.01, a position off by one is far above it)."""
    import torch
    rot = next(m for m in model.modules() if type(m).__name__.endswith("RotaryEmbedding"))
    x = torch.zeros(1, dtype=torch.float32)
    with torch.no_grad():
        if "position_ids" in inspect.signature(rot.forward).parameters:
            cos = rot(x, torch.tensor([[pos]]))[0].reshape(-1)
        else:  # forward(x, seq_len): the cache's first seq_len rows
            cos = rot(x, seq_len=pos + 1)[0][pos].reshape(-1)
        inv = rot.inv_freq.float()
        err = {}
        for name in ("float32", "bfloat16", "float16"):
            q = torch.tensor(float(pos)).to(getattr(torch, name)).float()
            if name != "float32" and q.item() == pos:
                continue  # exact in that dtype: not told apart from float32
            ref = torch.cat((q * inv, q * inv)).cos()
            err[name] = (cos.float() - ref).abs().max().item()
    return min(err, key=err.get), err


def _bnb_config(spec, torch):
    from transformers import BitsAndBytesConfig
    if spec["quant"] == "8bit":
        return BitsAndBytesConfig(load_in_8bit=True)
    # TRL's get_quantization_config: compute dtype = the model dtype (ModelConfig.dtype);
    # none without one (boundaries.py: a load without dtype), BitsAndBytesConfig's float32
    # (boundaries.py: a compute dtype apart from it, spec "compute_dtype")
    compute = spec.get("compute_dtype") or spec["load_dtype"]
    return BitsAndBytesConfig(load_in_4bit=True,
                              bnb_4bit_compute_dtype=getattr(torch, compute) if compute else None,
                              bnb_4bit_quant_storage=getattr(torch, spec["quant_storage"]))


def _load(spec, torch, ds_config):
    import transformers
    keep = None
    if ds_config is not None:
        from transformers.integrations import HfDeepSpeedConfig
        keep = HfDeepSpeedConfig(ds_config)  # zero.Init during from_pretrained
    kw = {"dtype": spec["load_dtype"] if spec["load_dtype"] == "auto"
          else getattr(torch, spec["load_dtype"])} if spec["load_dtype"] else {}
    if spec.get("quant"):
        kw["quantization_config"] = _bnb_config(spec, torch)
    if "dtype" in kw and tuple(int(x) for x in transformers.__version__.split(".")[:2]) < (4, 56):
        # before 4.56 the argument is torch_dtype (boundaries.py runs 4.x releases)
        kw["torch_dtype"] = kw.pop("dtype")
    cls = getattr(transformers, spec["auto_class"])
    if spec.get("keep_in_fp32") is not None:
        # boundaries.py: the class with another _keep_in_fp32_modules (how a release matches
        # an entry against the tensor names)
        cls = type(cls.__name__, (cls,), {"_keep_in_fp32_modules": spec["keep_in_fp32"]})
    return cls.from_pretrained(spec["folder"], **kw), keep


def _lora_from_file(spec, LoraConfig, tp):
    """LoraConfig.from_pretrained of an adapter_config.json written beside the spec's output
    (the keys _peft's own LoraConfig gets; boundaries.py's `adapter_config_file`)."""
    import tempfile
    folder = tempfile.mkdtemp(prefix="adapter-")
    with open(os.path.join(folder, "adapter_config.json"), "w") as f:
        json.dump(dict(peft_type="LORA", r=spec.get("r", 4), lora_alpha=8,
                       target_modules=spec["targets"], use_dora=spec["peft"] == "dora",
                       task_type=spec.get("task_type"), **tp), f)
    return LoraConfig.from_pretrained(folder)


def _peft(spec, model):
    from peft import LoraConfig, get_peft_model
    # boundaries.py: LoRA on nn.Parameters (MoE experts), when the spec names them
    tp = {"target_parameters": spec["target_parameters"]} if spec.get("target_parameters") \
        else {}
    if spec.get("adapter_config_file"):
        # boundaries.py: the config loaded from an adapter_config.json, as PeftModel /
        # LoraConfig.from_pretrained load one (a key the release lacks: TypeError before
        # peft 0.14.0, dropped with a warning from it)
        cfg = _lora_from_file(spec, LoraConfig, tp)
    else:
        cfg = LoraConfig(r=spec.get("r", 4), lora_alpha=8, target_modules=spec["targets"],
                         use_dora=spec["peft"] == "dora", task_type=spec.get("task_type"), **tp)
    # boundaries.py: get_peft_model's own autocast_adapter_dtype, when the spec says
    kw = {"autocast_adapter_dtype": spec["autocast_adapter_dtype"]} \
        if "autocast_adapter_dtype" in spec else {}
    model = get_peft_model(model, cfg, **kw)
    extra = spec.get("add_adapter")
    if extra:
        # a second adapter added later (boundaries.py): PeftModel.add_adapter with the
        # spec's task type and, when the spec says, its own autocast_adapter_dtype
        kw = {k: extra[k] for k in ("autocast_adapter_dtype",) if k in extra}
        cfg = LoraConfig(r=spec.get("r", 4), lora_alpha=8, target_modules=spec["targets"],
                         task_type=extra.get("task_type"))
        model.add_adapter(extra.get("name", "second"), cfg, **kw)
    return model


def _loss(model, spec, torch, out_of=None):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 400, (1, 8), generator=g)
    if spec["auto_class"] == "T5EncoderModel":
        out = model(input_ids=ids)
        return out.last_hidden_state.float().pow(2).mean()
    return model(input_ids=ids, labels=ids).loss


def _fsdp1_on_cpu():
    # accelerate passes device_id=accelerator.device, cpu:0 in a CPU world; FSDP1 takes its
    # compute device from torch.cpu.current_device(), "cpu", and refuses the pair
    # ("Inconsistent compute device and `device_id` on rank 0: cpu vs cpu:0",
    # torch/distributed/fsdp/_init_utils.py _get_compute_device); without device_id it wants
    # an accelerator. On a GPU both are the rank's cuda:N. Read a CPU device_id as "cpu".
    import torch
    import torch.distributed.fsdp._init_utils as init_utils
    orig = init_utils._get_device_from_device_id

    def device_from_id(device_id, rank, device_handle):
        dev = orig(device_id, rank, device_handle)
        return torch.device("cpu") if dev is not None and dev.type == "cpu" else dev

    init_utils._get_device_from_device_id = device_from_id


def _accelerator(spec, torch):
    from accelerate import Accelerator
    from accelerate.utils import DistributedType, FullyShardedDataParallelPlugin
    mp = {"bf16": "bf16", "fp16": "fp16", "fp32": "no"}[spec["precision"]]
    acc = Accelerator(mixed_precision=mp, cpu=True)
    if spec["strategy"] in ("fsdp1", "fsdp2"):
        # accelerate turns a plugin into FSDP only on accelerator devices (state.py: CPU
        # worlds stay MULTI_CPU and get DDP); set the state as on a GPU, so that prepare
        # runs its own FSDP path (FSDP1 wrap or fsdp2_prepare_model) on gloo
        if "fsdp_version" in inspect.signature(FullyShardedDataParallelPlugin).parameters:
            plugin = FullyShardedDataParallelPlugin(
                fsdp_version=1 if spec["strategy"] == "fsdp1" else 2,
                auto_wrap_policy="transformer_based_wrap", use_orig_params=True,
                cpu_ram_efficient_loading=False, sync_module_states=False)
        else:
            # accelerate < 1.6 (boundaries.py), FSDP1 only: its plugin reads these from the
            # environment `accelerate launch` exports from the config (and overrides the
            # arguments with it)
            os.environ.update(FSDP_AUTO_WRAP_POLICY="TRANSFORMER_BASED_WRAP",
                              FSDP_USE_ORIG_PARAMS="true", FSDP_SYNC_MODULE_STATES="false",
                              FSDP_CPU_RAM_EFFICIENT_LOADING="false")
            plugin = FullyShardedDataParallelPlugin()
        if mp != "no":
            plugin.set_mixed_precision(mp)
        from accelerate.state import PartialState
        if spec["strategy"] == "fsdp1":
            _fsdp1_on_cpu()
        PartialState._shared_state["distributed_type"] = DistributedType.FSDP
        acc.state.distributed_type = DistributedType.FSDP
        acc.state.fsdp_plugin = plugin
    return acc


def _wrapped(model):
    # what prepare made of the model: FSDP1's class, or fully_shard's FSDPModule mix-in
    kinds = {type(m).__name__ for m in model.modules()}
    if "FullyShardedDataParallel" in kinds:
        return "FullyShardedDataParallel"
    return next((k for k in kinds if k.startswith("FSDP")), type(model).__name__)


def units(model):
    """The FSDP units (FSDP1) or parameter groups (FSDP2) prepare made, in module order:
    [{"module": path, "params": [names], "dtype": stored, "compute": gathered}] (path "" is
    the root; "A+B" one group of fully_shard([A, B]), accelerate's tail), names and paths as
    snapshot() writes them. FSDP1: each FullyShardedDataParallel's FlatParameter
    (torch/distributed/fsdp/_flat_param.py: `_fqns`, relative to the wrapped module; its
    dtype; `_fwd_bwd_param_dtype`, what forward gathers). FSDP2: each FSDPModule's
    FSDPParamGroups (_fully_shard/_fsdp_state.py `_fsdp_param_groups`; an FSDPParam's
    `sharded_param` is the registered parameter; `_param_fqn` is only set at the first
    forward, so names come from named_parameters); compute = `mp_policy.param_dtype`, or the
    stored dtypes when it is None (FSDPParam.init_dtype_attrs: no cast)."""
    from torch.distributed.fsdp import FSDPModule, FullyShardedDataParallel
    names = {}
    for n, p in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), _clean(n))
    out, seen = [], {}
    for path, m in model.named_modules():
        path = _clean(path + ".")[:-1]
        if isinstance(m, FullyShardedDataParallel):
            flat = m._flat_param
            if flat is None:
                continue
            inner = "" if path == "" else path + "."
            out.append({"module": path, "params": [inner + _clean(f) for f in flat._fqns],
                        "dtype": _dtype(flat),
                        "compute": str(m._handle._fwd_bwd_param_dtype).replace("torch.", "")})
        elif isinstance(m, FSDPModule):
            for g in m._get_fsdp_state()._fsdp_param_groups or []:
                if id(g) in seen:  # fully_shard([norm, lm_head]): one group, two modules
                    seen[id(g)]["module"] += "+" + path
                    continue
                stored = sorted({_dtype(fp.sharded_param) for fp in g.fsdp_params})
                want = g.mp_policy.param_dtype
                seen[id(g)] = {"module": path,
                               "params": [names.get(id(fp.sharded_param), "?")
                                          for fp in g.fsdp_params],
                               "dtype": "/".join(stored),
                               "compute": str(want).replace("torch.", "") if want is not None
                               else "/".join(stored)}
                out.append(seen[id(g)])
    return out


def _ds_config(spec):
    cfg = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
           "zero_optimization": {"stage": 3}, "zero_force_ds_cpu_optimizer": False}
    if spec["precision"] == "bf16":
        cfg["bf16"] = {"enabled": True}
    elif spec["precision"] == "fp16":
        cfg["fp16"] = {"enabled": True}
    return ds_extra(cfg, spec)


def ds_extra(cfg, spec):
    """CFG with the spec's `ds_config` (boundaries.py): its zero_optimization keys added to
    ZeRO-3's, its other sections set (torch_autocast, ...); real_differential.py's ds.json
    reads the same key."""
    for k, v in spec.get("ds_config", {}).items():
        if k == "zero_optimization":
            cfg[k] = dict(cfg.get(k, {}), **v)
        else:
            cfg[k] = v
    return cfg


def _tensor_overrides(spec):
    # the spec's `tensor_overrides` (boundaries.py): the script's own zero.Init(
    # tensor_overrides=[DeepSpeedTensorOverride.X, ...]), passed to the zero.Init that
    # from_pretrained opens (transformers calls deepspeed.zero.Init(config_dict_or_path=...));
    # before deepspeed 0.17.1 the argument does not exist and zero.Init raises its TypeError
    if "tensor_overrides" not in spec:
        return
    import deepspeed
    init = deepspeed.zero.Init

    def with_overrides(*a, **kw):
        from deepspeed.runtime.zero.partition_parameters import DeepSpeedTensorOverride
        kw["tensor_overrides"] = [getattr(DeepSpeedTensorOverride, n)
                                  for n in spec["tensor_overrides"]]
        return init(*a, **kw)

    deepspeed.zero.Init = with_overrides


def run(spec, rank, result):
    import torch
    stages = result["stages"]
    stage = "load"
    keep = None
    try:
        ds_config = _ds_config(spec) if spec["strategy"] == "zero3" else None
        if ds_config is not None:
            import deepspeed
            deepspeed.init_distributed(dist_backend="gloo")
            _tensor_overrides(spec)
        model, keep = _load(spec, torch, ds_config)
        if spec.get("cast_to"):
            # boundaries.py: a base cast by hand after the load (a float8 base, which
            # from_pretrained cannot build: torch.set_default_dtype refuses float8)
            model.to(getattr(torch, spec["cast_to"]))
        stages["load"] = snapshot(model)
        if spec.get("shapes"):
            # boundaries.py: the named tensors' shapes at the last stage the set-up reaches,
            # here the load (an edge that changes a buffer's shape, not its dtype: Llama's
            # cos/sin cache in 4.34.1 / 4.35.0); the PEFT stage's below replace them
            result["shapes"] = shapes(model, spec["shapes"])
        if spec.get("rope_positions"):
            # boundaries.py: the rotary cache's positions, as zero.Init left them
            result["rope_positions"], result["rope_positions_error"] = \
                rope_positions(model, spec["rope_positions"])
        stage = "peft"
        if spec.get("kbit"):
            from peft import prepare_model_for_kbit_training
            model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
        if spec.get("peft"):
            model = _peft(spec, model)
        stages["peft"] = snapshot(model)
        if spec.get("shapes"):
            # boundaries.py: the shape of each tensor matching the regex, as the PEFT stage
            # left it (before any wrapper shards or partitions it)
            result["shapes"] = shapes(model, spec["shapes"])
        if spec.get("stop_after") == "peft":
            return
        stage = "wrap"
        # from_pretrained returns the model in eval mode; a trainer trains it. (In eval mode
        # on the CPU, bitsandbytes' Linear4bit.forward repacks a 4-bit weight to uint8 for its
        # CPU kernel, bitsandbytes/nn/modules.py: a CPU-only dtype change.)
        model.train()
        params = [p for p in model.parameters() if p.requires_grad]
        if ds_config is not None:
            import deepspeed
            opt = torch.optim.AdamW(params, lr=1e-3)
            engine, opt, _, _ = deepspeed.initialize(model=model, optimizer=opt,
                                                     config=ds_config)
            stages["wrap"] = snapshot(engine.module)
            stage = "step"
            # the spec's `steps` (boundaries.py; default one): ZeRO-3's prefetch gathers
            # several modules' parameters in one call only once it has a recorded trace
            for _ in range(spec.get("steps", 1)):
                loss = _loss(engine, spec, torch)
                engine.backward(loss)
                engine.step()
            stages["step"] = snapshot(engine.module)
        else:
            acc = _accelerator(spec, torch)
            opt = torch.optim.AdamW(params, lr=1e-3)
            model, opt = acc.prepare(model, opt)
            stages["wrap"] = snapshot(model)
            result["wrapped"] = _wrapped(model)
            if spec["strategy"] in ("fsdp1", "fsdp2"):
                try:
                    result["units"] = units(model)
                except Exception as e:  # noqa: B902 - a record, never the set-up's error
                    result["units_error"] = f"{type(e).__name__}: {e}"
            if spec["strategy"] == "fsdp2":
                # the parameters fully_shard does not manage (its ignored_params): not
                # DTensors (boundaries.py, accelerate-fsdp2-ignore-params4bit)
                from torch.distributed.tensor import DTensor
                result["fsdp2_unmanaged"] = sorted(
                    _clean(n) for n, p in model.named_parameters()
                    if not isinstance(p, DTensor))
            stage = "step"
            loss = _loss(model, spec, torch)
            acc.backward(loss)
            opt.step()
            opt.zero_grad()
            stages["step"] = snapshot(model)
    except BaseException as e:  # noqa: B902 - the exception is the result
        result["error"] = {"stage": stage, "type": type(e).__name__,
                           "message": str(e)[:2000],
                           "where": traceback.format_exc()[-3000:]}
    del keep


def _tokenizer():
    # the small models have no tokenizer: a word-level one over their 512 ids ("t0".."t511"),
    # pad t0 and eos t2 as real_models.py sets the config's ids; SFT's dataset is tokenized,
    # the preference and prompt datasets are text ("t5 t6 ..."), split on whitespace
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    vocab = {f"t{i}": i for i in range(512)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="t3"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="t0", eos_token="t2",
                                   bos_token="t1", unk_token="t3")


def _rows(torch):
    g = torch.Generator().manual_seed(1)
    return [torch.randint(3, 400, (8,), generator=g).tolist() for _ in range(2)]


def _training_args(spec, cls, out, **extra):
    # TrainingArguments on the CPU: one step, nothing saved or reported
    kw = dict(output_dir=out, max_steps=1, per_device_train_batch_size=1,
              bf16=spec["precision"] == "bf16", fp16=spec["precision"] == "fp16",
              use_cpu=True, report_to=[], save_strategy="no", logging_strategy="no",
              dataloader_num_workers=0)
    kw.update(extra)
    kw.update(_world_args(spec))
    return cls(**kw)


def _world_args(spec):
    """The TrainingArguments of a trainer in a rank world (strategy zero3, fsdp1 or fsdp2; each
    rank of rank_main runs run_trainer), as a user's script passes them: `deepspeed` (the
    worker's ZeRO-3 config) or `fsdp`/`fsdp_config` (the worker's FSDP plugin's settings,
    `version` the strategy's, none with fsdp_version_unset: the HF Trainer's own default).
    The trainer's own accelerate/DeepSpeed integration does the rest; the CPU adaptations
    it needs are _zero3_trainer_on_cpu's and _fsdp_trainer_on_cpu's."""
    if spec.get("strategy") == "zero3":
        _zero3_trainer_on_cpu()
        return {"deepspeed": _ds_config(spec), "use_cpu": False}
    if spec.get("strategy") in ("fsdp1", "fsdp2"):
        _fsdp_trainer_on_cpu()
        cfg = dict(use_orig_params=True, cpu_ram_efficient_loading=False,
                   sync_module_states=False)
        if _fsdp_config_strings():
            cfg = {k: str(v).lower() if isinstance(v, bool) else v for k, v in cfg.items()}
        if not spec.get("fsdp_version_unset"):
            cfg["version"] = 1 if spec["strategy"] == "fsdp1" else 2
        return {"fsdp": "full_shard auto_wrap", "fsdp_config": cfg}
    return {}


def _fsdp_config_strings():
    """Whether this transformers wants fsdp_config's flags as strings: 4.38 and 4.39's
    TrainingArguments put them into accelerate's environment variables as they are
    (os.environ["FSDP_USE_ORIG_PARAMS"] = fsdp_config.get("use_orig_params", "true"): a
    bool is "TypeError: str expected, not bool"), where a 5.x one hands them to accelerate's
    plugin, which reads a string "false" as true. real_differential.py writes the same."""
    import transformers
    from packaging.version import Version
    return Version(transformers.__version__) < Version("4.40.0")


def _zero3_trainer_on_cpu():
    # TrainingArguments chooses DeepSpeed only without use_cpu (training_args.py
    # _setup_devices; accelerate's AcceleratorState too: "ACCELERATE_USE_DEEPSPEED ... and
    # not cpu"), and refuses bf16 without use_cpu when no GPU supports it ("Your setup
    # doesn't support bf16/gpu"). So the rank runs as on a GPU: no ACCELERATE_USE_CPU, the
    # bf16 check answered as a GPU's, and DeepSpeed's CPU accelerator (DS_ACCELERATOR=cpu)
    # gives the device. Off the CPU, accelerate finds no backend ("No backend == no
    # distributed training": one process), where a GPU rank gets nccl: the rank gets gloo,
    # as MULTI_CPU, and DeepSpeed's own init_distributed makes the type DEEPSPEED after.
    import transformers.training_args as ta
    from accelerate.state import PartialState
    from accelerate.utils import DistributedType
    os.environ.pop("ACCELERATE_USE_CPU", None)
    ta.is_torch_bf16_gpu_available = lambda *a, **k: True
    orig = PartialState._prepare_backend
    if getattr(orig, "_dtl_gloo", False):
        return

    def prepare_backend(self, cpu=False, sagemaker_dp=False, backend=None):
        got = orig(self, cpu, sagemaker_dp, backend)
        if got[0] is None and not cpu and int(os.environ.get("LOCAL_RANK", -1)) != -1:
            return "gloo", DistributedType.MULTI_CPU
        return got

    prepare_backend._dtl_gloo = True
    PartialState._prepare_backend = prepare_backend


def _fsdp_trainer_on_cpu():
    # accelerate turns an FSDP plugin into distributed type FSDP only on accelerator devices
    # (state.py AcceleratorState: a CPU world stays MULTI_CPU, DDP); the Trainer builds its
    # own Accelerator, so its state gets the GPU branch's three steps after its __init__:
    # type FSDP, the plugin's mixed precision, the plugin kept. FSDP1's CPU device_id as in
    # _accelerator (_fsdp1_on_cpu).
    from accelerate.state import AcceleratorState, PartialState
    from accelerate.utils import DistributedType
    _fsdp1_on_cpu()
    if getattr(AcceleratorState, "_dtl_fsdp_on_cpu", False):
        return
    orig = AcceleratorState.__init__

    def init(self, *a, fsdp_plugin=None, **kw):
        orig(self, *a, fsdp_plugin=fsdp_plugin, **kw)
        if fsdp_plugin is not None and self.distributed_type == DistributedType.MULTI_CPU:
            PartialState._shared_state["distributed_type"] = DistributedType.FSDP
            self.distributed_type = DistributedType.FSDP
            if self._mixed_precision != "no":
                fsdp_plugin.set_mixed_precision(self._mixed_precision)
            self.fsdp_plugin = fsdp_plugin

    AcceleratorState.__init__ = init
    AcceleratorState._dtl_fsdp_on_cpu = True


def _text(rows, a, b):
    return " ".join(f"t{i}" for i in rows[0][a:b])


# TRL's trainers as its scripts build them (trl/scripts/{sft,dpo,grpo,kto,reward}.py at
# v1.16.0): the trainer class, its config class, and what one CPU step needs beside the
# script's arguments (a tiny in-memory dataset of the trainer's format, and for GRPO a reward
# function and two generations per prompt; KTO refuses a batch of one)
TRL_TRAINERS = {
    "trl-sft": ("SFTTrainer", "SFTConfig", {"max_length": 16, "packing": False}),
    "trl-dpo": ("DPOTrainer", "DPOConfig", {"max_length": 16}),
    "trl-kto": ("KTOTrainer", "KTOConfig", {"max_length": 16,
                                            "per_device_train_batch_size": 2}),
    "trl-reward": ("RewardTrainer", "RewardConfig", {"max_length": 16}),
    # trl.experimental.cpo (boundaries.py's ZeRO-3 probe; built by _cpo)
    "trl-cpo": ("CPOTrainer", "CPOConfig", {"max_length": 16}),
    "trl-grpo": ("GRPOTrainer", "GRPOConfig", {"num_generations": 2,
                                               "per_device_train_batch_size": 2,
                                               "max_completion_length": 4,
                                               "use_vllm": False}),
}


def _trl_data(spec, rows):
    import datasets
    t = spec["trainer"]
    p, c, r = _text(rows, 0, 4), _text(rows, 4, 7), _text(rows, 7, 8)
    if t == "trl-sft":
        return datasets.Dataset.from_dict({"input_ids": rows})
    if t in ("trl-dpo", "trl-cpo"):
        return datasets.Dataset.from_dict({"prompt": [p, c], "chosen": [c, r],
                                           "rejected": [r, p]})
    if t == "trl-reward":
        return datasets.Dataset.from_dict({"chosen": [p + " " + c, c + " " + r],
                                           "rejected": [p + " " + r, c + " " + p]})
    if t == "trl-kto":
        return datasets.Dataset.from_dict({"prompt": [p, c, r, p], "completion": [c, r, p, r],
                                           "label": [True, False, True, False]})
    return datasets.Dataset.from_dict({"prompt": [p, c]})  # trl-grpo


def _reward_len(completions, **kwargs):
    # GRPO's reward function: any number per completion will do
    return [float(len(x)) for x in completions]


def _ref_snapshot(trainer, model, result, stage):
    # the reference model DPO, KTO and GRPO (beta > 0) build: none with PEFT (the adapter is
    # disabled instead), else a second from_pretrained; recorded apart from the policy, whose
    # dtypes are the ones compared
    if not hasattr(trainer, "ref_model"):
        return
    ref = trainer.ref_model
    info = result.setdefault("ref_model", {"stages": {}})
    info["none"] = ref is None
    if ref is not None:
        info["stages"][stage] = snapshot(ref)
        info["shares_params"] = any(a is b for a in ref.parameters()
                                    for b in model.parameters()) if stage == "init" else \
            info.get("shares_params")


class _Snap:
    """A TrainerCallback that snapshots the model when training begins (after __init__ and
    accelerate's prepare, before the first forward)."""

    def __init__(self, stages):
        self.stages = stages

    def __getattr__(self, name):
        if name.startswith("on_"):
            return lambda *a, **k: None
        raise AttributeError(name)

    def on_train_begin(self, args, state, control, model=None, **kw):
        if model is not None:
            self.stages["prepare"] = snapshot(model)


def _script_fields(cls, kw):
    """KW without the keys config class CLS has no field for: TrlParser hands a recipe's
    unknown keys back as remaining strings, which every `trl` script ignores
    (trl/scripts/utils.py set_defaults_with_config, parse_args_and_config with
    return_remaining_strings=True), so an older release silently drops a newer key."""
    import dataclasses
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in kw.items() if k in names}


def _old_grpo(spec, margs, data, out_dir, snap):
    """GRPOTrainer as trl < 1's `trl grpo` builds it (trl/scripts/grpo.py main, the same in
    0.24.0 and 0.25.0): the model passed as its path, loaded by the trainer with
    GRPOConfig.model_init_kwargs (the script reads no ModelConfig.dtype), get_peft_config."""
    import trl
    from trl import get_peft_config
    _, cname, extra = TRL_TRAINERS["trl-grpo"]
    extra = _script_fields(trl.GRPOConfig, dict(extra, **{
        k: spec[k] for k in ("beta", "cast_lm_head_to_fp32") if k in spec}))
    args = _training_args(spec, trl.GRPOConfig, out_dir,
                          model_init_kwargs=dict(spec.get("model_init_kwargs") or {}), **extra)
    # a causal LM's tokenizer gives no token_type_ids (Qwen2's model_input_names), which
    # generate() in transformers 4.57 refuses ("model_kwargs are not used by the model")
    tok = _tokenizer()
    tok.model_input_names = ["input_ids", "attention_mask"]
    return trl.GRPOTrainer(model=spec["folder"], reward_funcs=[_reward_len], args=args,
                           train_dataset=data, processing_class=tok,
                           peft_config=get_peft_config(margs), callbacks=[snap])


def _script_route(sft_trainer):
    """How the installed trl's sft script builds the trainer: "trainer" (the trainer takes
    quantization_config: 1.8.0), "model_init_kwargs" (the model as its path, the
    quantization in SFTConfig.model_init_kwargs: the script sets
    training_args.model_init_kwargs: 1.6.0 - 1.7.1) or "script" (it loads the model itself
    and passes it: 0.25.x, 0.26.0), read in trl/scripts/sft.py of those wheels."""
    if "quantization_config" in inspect.signature(sft_trainer.__init__).parameters:
        return "trainer"
    import trl.scripts.sft as script
    src = inspect.getsource(script.main)
    return "model_init_kwargs" if "training_args.model_init_kwargs" in src else "script"


def _cpo(spec, margs, data, out_dir, snap):
    """trl.experimental.cpo's CPOTrainer as its documentation builds it (trl has no cpo
    script): the model as its path (CPOConfig.model_init_kwargs unset: from_pretrained's
    own dtype, the checkpoint's), a LoraConfig, a preference dataset."""
    from trl import get_peft_config
    from trl.experimental.cpo import CPOConfig, CPOTrainer
    args = _training_args(spec, CPOConfig, out_dir, max_length=16)
    return CPOTrainer(model=spec["folder"], args=args, train_dataset=data,
                      processing_class=_tokenizer(), peft_config=get_peft_config(margs),
                      callbacks=[snap])


def _trl09():
    """Whether the installed trl is of the 0.9 era (boundaries.py): its SFTTrainer takes
    tokenizer= (processing_class from 0.12), its SFTConfig dataset_text_field."""
    from trl import SFTTrainer
    return "tokenizer" in inspect.signature(SFTTrainer.__init__).parameters


def _trl09_sft(spec, out_dir, snap, rows):
    """SFTTrainer as trl 0.9's example script builds it (examples/scripts/sft.py: a
    ModelConfig, the model as its path with model_init_kwargs {torch_dtype,
    quantization_config} from it, get_peft_config, a text dataset, tokenizer=)."""
    import datasets
    from trl import ModelConfig, SFTConfig, SFTTrainer, get_peft_config, \
        get_quantization_config
    margs = ModelConfig(model_name_or_path=spec["folder"], torch_dtype=spec.get("load_dtype"),
                        load_in_4bit=spec.get("quant") == "4bit",
                        load_in_8bit=spec.get("quant") == "8bit",
                        use_peft=bool(spec.get("peft")), lora_r=4,
                        lora_target_modules=spec["targets"])
    mik = {"torch_dtype": margs.torch_dtype}
    qc = get_quantization_config(margs)
    if qc is not None:
        mik["quantization_config"] = qc
    args = _training_args(spec, SFTConfig, out_dir, model_init_kwargs=mik,
                          dataset_text_field="text", max_seq_length=16, packing=False)
    data = datasets.Dataset.from_dict({"text": [" ".join(f"t{i}" for i in r) for r in rows]})
    tok = _tokenizer()
    tok.model_input_names = ["input_ids", "attention_mask"]
    return SFTTrainer(model=spec["folder"], args=args, train_dataset=data, tokenizer=tok,
                      peft_config=get_peft_config(margs), callbacks=[snap])


def _reward_script_loads():
    """Whether the installed trl has no reward script (trl/scripts/reward.py: 0.18.0 has
    none, its examples/scripts/reward_modeling.py loads the model); with one, the model is
    passed as its path (the TRL_TRAINERS branch)."""
    import importlib.util
    return importlib.util.find_spec("trl.scripts.reward") is None


def _old_reward(spec, out_dir, snap, rows, stages):
    """RewardTrainer as trl < 1's examples/scripts/reward_modeling.py builds it: a
    ModelConfig (torch_dtype, lora_task_type CAUSAL_LM unless said), the script's own
    AutoModelForSequenceClassification.from_pretrained(num_labels=1, torch_dtype=...),
    pad_token_id from the tokenizer, RewardTrainer(model, peft_config=get_peft_config)."""
    import torch
    import trl
    from transformers import AutoModelForSequenceClassification
    margs = trl.ModelConfig(model_name_or_path=spec["folder"],
                            torch_dtype=spec.get("load_dtype"),
                            use_peft=bool(spec.get("peft")), lora_r=4,
                            lora_target_modules=spec["targets"],
                            **({"lora_task_type": spec["lora_task_type"]}
                               if spec.get("lora_task_type") else {}))
    dt = margs.torch_dtype
    dt = dt if dt in ("auto", None) else getattr(torch, dt)
    args = _training_args(spec, trl.RewardConfig, out_dir, max_length=16)
    tok = _tokenizer()
    model = AutoModelForSequenceClassification.from_pretrained(spec["folder"], num_labels=1,
                                                               torch_dtype=dt)
    model.config.pad_token_id = tok.pad_token_id
    stages["load"] = snapshot(model)
    trainer = trl.RewardTrainer(model=model, processing_class=tok, args=args,
                                train_dataset=_trl_data(spec, rows),
                                peft_config=trl.get_peft_config(margs), callbacks=[snap])
    return trainer


def run_trainer(spec, result, out_dir):
    """The trainer's own steps: transformers' Trainer on a model the script loaded and
    wrapped (from_pretrained, optional prepare_model_for_kbit_training, get_peft_model), or
    TRL's SFT, DPO, GRPO, KTO or reward trainer exactly as its `trl sft|dpo|grpo|kto|reward`
    script builds it (a ModelConfig read from the recipe: the model path, model_init_kwargs,
    get_quantization_config, get_peft_config). Stages: load, peft, init (the trainer's
    __init__), prepare (train begins), step; a reference model goes to result["ref_model"]."""
    import torch
    stages = result["stages"]
    stage = "load"
    rows = _rows(torch)
    try:
        from transformers import TrainerCallback
        snap = type("Snap", (_Snap, TrainerCallback), {})(stages)
        if spec["trainer"] == "trl-sft" and _trl09():
            stage = "init"
            trainer = _trl09_sft(spec, out_dir, snap, rows)
        elif spec["trainer"] == "trl-reward" and _reward_script_loads():
            stage = "init"  # the script's load, then the trainer's __init__
            trainer = _old_reward(spec, out_dir, snap, rows, stages)
        elif spec["trainer"] in TRL_TRAINERS:
            import trl
            from trl import ModelConfig, SFTConfig, SFTTrainer, get_peft_config, \
                get_quantization_config
            tname, cname, extra = TRL_TRAINERS[spec["trainer"]]
            # a recipe without dtype keeps ModelConfig's own default (float32 in trl 1.16)
            dt = {"dtype": spec["load_dtype"]} if spec.get("load_dtype") else {}
            margs = ModelConfig(model_name_or_path=spec["folder"], **dt,
                                load_in_4bit=spec.get("quant") == "4bit",
                                load_in_8bit=spec.get("quant") == "8bit",
                                **({"bnb_4bit_quant_storage": spec["quant_storage"]}
                                   if spec.get("quant") == "4bit" and spec.get("quant_storage")
                                   else {}),
                                use_peft=bool(spec.get("peft")), lora_r=4,
                                lora_target_modules=spec["targets"],
                                use_dora=spec.get("peft") == "dora",
                                **({"lora_task_type": spec["lora_task_type"]}
                                   if spec.get("lora_task_type") else {}))
            # the script: model_init_kwargs from ModelConfig, the recipe's own on top
            mik = {"dtype": margs.dtype} if margs.dtype is not None else {}
            mik.update(spec.get("model_init_kwargs") or {})
            data = _trl_data(spec, rows)
            route = _script_route(SFTTrainer)
            if spec["trainer"] == "trl-cpo":
                stage = "init"
                trainer = _cpo(spec, margs, data, out_dir, snap)
            elif route in ("trainer", "model_init_kwargs"):
                extra = dict(extra, **{k: spec[k] for k in ("beta", "cast_lm_head_to_fp32")
                                       if k in spec})
                qc = get_quantization_config(margs)
                if route == "model_init_kwargs" and qc is not None:
                    # trl 1.6 - 1.7's script: the quantization in model_init_kwargs, with
                    # device_map get_kbit_device_map() (None on the CPU: left out)
                    mik["quantization_config"] = qc
                args = _training_args(spec, getattr(trl, cname), out_dir,
                                      model_init_kwargs=mik, **extra)
                stage = "init"
                kw = {"reward_funcs": [_reward_len]} if spec["trainer"] == "trl-grpo" else {}
                if route == "trainer":
                    kw["quantization_config"] = qc
                trainer = getattr(trl, tname)(
                    model=spec["folder"], args=args, train_dataset=data,
                    processing_class=_tokenizer(),
                    peft_config=get_peft_config(margs), callbacks=[snap], **kw)
            elif spec["trainer"] == "trl-grpo":
                stage = "init"
                trainer = _old_grpo(spec, margs, data, out_dir, snap)
            else:
                # trl < 1 (boundaries.py): its script loads the model itself,
                # from_pretrained(dtype=ModelConfig.dtype, quantization_config=...), and
                # passes it (trl/scripts/sft.py main, the same in 0.25.1 and 0.26.0)
                # passes it (trl/scripts/sft.py main, the same in 0.25.1 and 0.26.0), after
                # parsing the arguments (a ZeRO-3 config's zero.Init then applies)
                from transformers import AutoModelForCausalLM
                qc = get_quantization_config(margs)
                kw = {"dtype": mik.get("dtype")}
                if qc is not None:
                    kw["quantization_config"] = qc
                args = _training_args(spec, SFTConfig, out_dir, max_length=16, packing=False)
                model = AutoModelForCausalLM.from_pretrained(spec["folder"], **kw)
                stages["load"] = snapshot(model)
                stage = "init"
                trainer = SFTTrainer(model=model, args=args, train_dataset=data,
                                     processing_class=_tokenizer(),
                                     peft_config=get_peft_config(margs), callbacks=[snap])
        else:
            from transformers import Trainer, default_data_collator
            model, _ = _load(spec, torch, None)
            stages["load"] = snapshot(model)
            stage = "peft"
            if spec.get("kbit"):
                from peft import prepare_model_for_kbit_training
                model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
            if spec.get("peft"):
                model = _peft(spec, model)
            stages["peft"] = snapshot(model)
            stage = "init"
            data = [{"input_ids": torch.tensor(r), "labels": torch.tensor(r)} for r in rows]
            trainer = Trainer(model=model, args=_training_args(spec, __import__(
                "transformers").TrainingArguments, out_dir), train_dataset=data,
                data_collator=default_data_collator, callbacks=[snap])
        stages["init"] = snapshot(trainer.model)
        _ref_snapshot(trainer, trainer.model, result, "init")
        stage = "step"
        trainer.train()
        stages["step"] = snapshot(trainer.model)
        # what the trainer's accelerate/DeepSpeed integration made of it (a rank world:
        # DeepSpeedEngine, FSDP1's class or FSDP2's FSDPModule mix-in)
        result["wrapped"] = _wrapped(trainer.model_wrapped)
        _ref_snapshot(trainer, trainer.model, result, "step")
    except BaseException as e:  # noqa: B902 - the exception is the result
        if stage == "step" and "prepare" not in stages:
            stage = "prepare"
        result["error"] = {"stage": stage, "type": type(e).__name__,
                           "message": str(e)[:2000],
                           "where": traceback.format_exc()[-3000:]}


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(rank, world, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_WORLD_SIZE=str(world), DS_ACCELERATOR="cpu",
                      ACCELERATE_USE_CPU="true", OMP_NUM_THREADS="1")


def rank_main(rank, spec, out, world, port):
    _env(rank, world, port)
    import torch
    torch.manual_seed(spec.get("seed", 0))
    result = {"stages": {}, "error": None}
    if spec.get("trainer", "none") != "none":
        run_trainer(spec, result, f"{out}.trainer-out")
    else:
        run(spec, rank, result)
    result["imported"] = imported()
    with open(f"{out}.rank{rank}", "w") as f:
        json.dump(result, f)
    os._exit(0)  # a rank whose peer failed may sit in a collective: the parent reaps it


# what a rank reports when its peer died first: the peer's own error is the set-up's
PEER_GONE = ("Connection closed by peer", "Connection reset by peer", "Gloo", "gloo")


def merge(out, world):
    results = []
    for r in range(world):
        try:
            with open(f"{out}.rank{r}") as f:
                results.append(json.load(f))
            os.unlink(f"{out}.rank{r}")
        except OSError:
            results.append(None)
    best = results[0]
    err = best and best["error"]
    if best is None or (err and any(g in err["message"] for g in PEER_GONE)):
        for other in results[1:]:
            if other and other["error"] and \
                    not any(g in other["error"]["message"] for g in PEER_GONE):
                if best is None:
                    best = other
                else:
                    best["error"] = other["error"]
                break
    if best is not None:
        with open(out, "w") as f:
            json.dump(best, f)


def batch(pairs):
    """Trainer set-ups on one device, one after another in this process: the imports
    (torch, transformers, TRL: most of a set-up's time) are paid once. Each trainer builds
    its own Accelerator; accelerate's shared state is reset between them."""
    # a free port, not 29500: the trainers' one-process world still listens on MASTER_PORT,
    # and other oracle runs on the same machine hold 29500 (EADDRINUSE at load)
    _env(0, 1, _free_port())
    import torch
    from accelerate.state import AcceleratorState, PartialState
    for spec_path, out in pairs:
        with open(spec_path) as f:
            spec = json.load(f)
        AcceleratorState._reset_state(True)
        PartialState._reset_state()
        torch.manual_seed(spec.get("seed", 0))
        result = {"stages": {}, "error": None}
        run_trainer(spec, result, f"{out}.trainer-out")
        result["imported"] = imported()
        with open(out, "w") as f:
            json.dump(result, f)
    return 0


def main():
    if sys.argv[1] == "--batch":
        # real_worker.py --batch SPEC OUT [SPEC OUT ...]: trainer set-ups, strategy single
        return batch(list(zip(sys.argv[2::2], sys.argv[3::2])))
    spec_path, out = sys.argv[1], sys.argv[2]
    with open(spec_path) as f:
        spec = json.load(f)
    world = 1 if spec["strategy"] == "single" else spec.get("world", 2)
    port = spec.get("port", 29500)
    if world == 1 and spec.get("inline"):
        # one rank, in this process (boundaries.py): torch is imported once, not twice, and
        # a trainer gets the spec's port (--batch's fixed one may be another run's)
        _env(0, 1, port)
        result = {"stages": {}, "error": None}
        if spec.get("trainer", "none") != "none":
            run_trainer(spec, result, f"{out}.trainer-out")
        else:
            run(spec, 0, result)
        result["imported"] = imported()
        with open(out, "w") as f:
            json.dump(result, f)
        return 0
    spawn_world(rank_main, (spec, out, world, port), world, 60)
    merge(out, world)
    return 0


def spawn_world(target, args, world, grace):
    """Runs target(rank, *args) in WORLD spawned processes and waits: the first rank to finish
    sets a deadline of GRACE seconds for the others (a rank left in a collective by a failed
    peer would wait for gloo's 30-minute timeout), which are then killed."""
    import torch.multiprocessing as mp
    ctx = mp.start_processes(target, args=args, nprocs=world, join=False,
                             start_method="spawn")
    procs = ctx.processes
    while all(p.is_alive() for p in procs):
        time.sleep(0.2)
    deadline = time.time() + grace
    for p in procs:
        p.join(max(0.0, deadline - time.time()))
        if p.is_alive():
            p.kill()
            p.join()


if __name__ == "__main__":
    sys.exit(main())
