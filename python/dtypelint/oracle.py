"""Ground truth from real torch: build a manifest's model (or take a live model), wrap it with the
installed torch's FSDP1 FullyShardedDataParallel, or FSDP2 fully_shard where that torch has it,
in a single-process gloo world on the CPU, and report what torch did.

    python3 -m dtypelint.oracle [--fsdp2] MANIFEST.json...

prints one JSON line per manifest, in order:
    {"file": F, "ok": true, "units": N}  or  {"file": F, "ok": false, "error_type": T, "error": E}

The manifest's tensors[] (name, shape, dtype, kind, trainable, persistent), model.checkpoint_dtype
(the dtype of tensors that state none), model.modules {path glob: class name}, frozen [globs] and
training.fsdp.wrap [class names or path globs] are read (docs/design.md §3). Tensor dtypes are
the dtypes in memory when FSDP wraps the model: the manifest must have no load_dtype or
load_dtype: as-is, and no loading, quantization or PEFT step is replayed. Shapes larger than
MAX_NUMEL elements are shrunk to one element: flattening checks dtype and requires_grad, never
size. Needs torch (Debian's python3-torch 1.13 is enough for FSDP1); no GPU, no network.
"""
import copy
import dataclasses
import functools
import json
import os
import re
import socket
import sys
import warnings

MAX_NUMEL = 1 << 16


def _patch_dataclasses():
    """torch 1.13 under Python 3.11: TensorProperties() is an unhashable dataclass default there;
    make it a default_factory so that torch.distributed imports at all. Newer torch needs none."""
    if getattr(dataclasses, "_dtypelint_patched", False):
        return
    get_field = dataclasses._get_field

    def patched(cls, name, type_, *rest):
        d = cls.__dict__.get(name, dataclasses.MISSING)
        if isinstance(d, dataclasses.Field) and d.default is not dataclasses.MISSING \
                and type(d.default).__hash__ is None:
            v, d.default = d.default, dataclasses.MISSING
            d.default_factory = lambda v=v: copy.deepcopy(v)
        return get_field(cls, name, type_, *rest)

    dataclasses._get_field = patched
    dataclasses._dtypelint_patched = True


_patch_dataclasses()
warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP  # noqa: E402
from torch.distributed.fsdp.wrap import lambda_auto_wrap_policy  # noqa: E402

try:  # FSDP2: public in torch 2.6, torch.distributed._composable.fsdp from 2.4
    from torch.distributed.fsdp import fully_shard
except ImportError:
    try:
        from torch.distributed._composable.fsdp import fully_shard
    except ImportError:
        fully_shard = None

# torch 1.13's FSDP insists on a CUDA compute device; flattening itself runs anywhere.
if hasattr(FSDP, "_get_compute_device"):
    FSDP._get_compute_device = lambda self, *a, **k: torch.device("cpu")

DTYPES = {
    "float32": torch.float32, "float": torch.float32, "fp32": torch.float32,
    "float16": torch.float16, "half": torch.float16, "fp16": torch.float16,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
    "float64": torch.float64, "double": torch.float64, "fp64": torch.float64,
    "uint8": torch.uint8, "int8": torch.int8, "int32": torch.int32, "int64": torch.int64,
    "bool": torch.bool,
}


def glob_match(path, glob):
    """Dotted-path glob: '*' matches within one segment, '**' any number of segments."""
    rx = re.escape(glob).replace(r"\*\*", "\0").replace(r"\*", r"[^.]*").replace("\0", r".*")
    return re.fullmatch(rx, path) is not None


def dtype_of(name):
    key = name.lower()
    key = key[len("torch."):] if key.startswith("torch.") else key
    if key not in DTYPES:
        raise ValueError(f"dtypelint.oracle: unknown dtype {name!r}")
    return DTYPES[key]


def build(manifest):
    """The manifest's model as a real torch module: (root, {path: module})."""
    model = manifest.get("model", {})
    classes = model.get("modules", {})
    made = {}

    def cls_for(path):
        for glob, cname in classes.items():
            if glob_match(path, glob):
                break
        else:
            cname = "Module"
        if cname not in made:
            made[cname] = type(cname, (nn.Module,), {})
        return made[cname]

    if model.get("load_dtype", "as-is") != "as-is":
        raise ValueError("dtypelint.oracle: needs model.load_dtype absent or 'as-is' "
                         "(it replays no loading)")
    default_dtype = model.get("checkpoint_dtype", "float32")
    frozen = manifest.get("frozen", [])
    root = cls_for("")()
    mods = {"": root}
    for t in manifest["tensors"]:
        path, _, leaf = t["name"].rpartition(".")
        parent = ""
        for part in path.split(".") if path else []:
            child = f"{parent}.{part}" if parent else part
            if child not in mods:
                mods[child] = cls_for(child)()
                mods[parent].add_module(part, mods[child])
            parent = child
        shape = t.get("shape", [1])
        numel = 1
        for n in shape:
            numel *= n
        data = torch.zeros(shape if numel <= MAX_NUMEL else [1],
                           dtype=dtype_of(t.get("dtype", default_dtype)))
        if t.get("kind", "param") == "buffer":
            mods[path].register_buffer(leaf, data, persistent=t.get("persistent", True))
        else:
            trainable = t.get("trainable", data.is_floating_point()
                              and not any(glob_match(t["name"], g) for g in frozen))
            mods[path].register_parameter(leaf, nn.Parameter(data, requires_grad=trainable))
    return root, mods


def wanted_for(mods, wrap):
    """module -> whether the wrap list (class names or path globs) makes it a unit."""
    names = {id(m): p for p, m in mods.items()}

    def wanted(module):
        path = names.get(id(module), "")
        return path != "" and any(type(module).__name__ == w or glob_match(path, w) for w in wrap)

    return wanted


def policy_for(mods, wrap):
    """FSDP1's auto_wrap_policy for the wrap list."""
    return functools.partial(lambda_auto_wrap_policy, lambda_fn=wanted_for(mods, wrap))


def init_world():
    """A single-process gloo process group on a free local port (once)."""
    if dist.is_initialized():
        return
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(s.getsockname()[1]))
    s.close()
    dist.init_process_group("gloo", rank=0, world_size=1)


def fsdp1(root, policy=None, count_empty=True):
    """What torch's FSDP1 does with root: {"ok": True, "units": N} or the exception it raised.
    count_empty=False leaves out the units below the root that hold no tensor at all (a
    LayerNorm without affine parameters): a manifest, which lists tensors, cannot name them."""
    init_world()
    # torch 2.x's FSDP1 needs a device: with no accelerator, the CPU (torch 1.13 took none)
    cpu = {} if torch.cuda.is_available() or int(torch.__version__.split(".")[0]) < 2 else \
        {"device_id": torch.device("cpu")}
    try:
        wrapped = FSDP(root, auto_wrap_policy=policy, **cpu)
    except Exception as e:  # the verdict is the exception itself
        return {"ok": False, "error_type": type(e).__name__, "error": str(e)}
    units = [m for m in wrapped.modules() if isinstance(m, FSDP)]
    if not count_empty:
        units = [m for m in units if m is wrapped or any(True for _ in m.parameters())
                 or any(True for _ in m.buffers())]
    return {"ok": True, "units": len(units)}


def fsdp2(root, wanted):
    """What torch's FSDP2 does: fully_shard on each wanted module (children first, as the
    documented recipe does), then on the root, then the root's lazy init (what the first
    forward runs) and an unshard of every group; None when this torch has no fully_shard.
    Not run on Debian's torch 1.13, which has no fully_shard."""
    if fully_shard is None:
        return None
    init_world()
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cpu", (1,))
    groups = [m for m in root.modules() if m is not root and wanted(m)]
    try:
        for m in reversed(groups):
            fully_shard(m, mesh=mesh)
        fully_shard(root, mesh=mesh)
        # the checks of the first forward's lazy init (these modules have no forward)
        state = root._get_fsdp_state()
        state._lazy_init()
        for m in [root] + groups:
            m.unshard()
            m.reshard()
    except Exception as e:
        return {"ok": False, "error_type": type(e).__name__, "error": str(e)}
    return {"ok": True, "units": len(groups) + 1}


def verdict(manifest, strategy=None):
    """torch's verdict on a manifest under its training.fsdp.wrap (FSDP1 unless strategy or
    the manifest says fsdp2)."""
    root, mods = build(manifest)
    training = manifest.get("training", {})
    wrap = training.get("fsdp", {}).get("wrap", [])
    if (strategy or training.get("strategy")) == "fsdp2":
        return fsdp2(root, wanted_for(mods, wrap))
    return fsdp1(root, policy_for(mods, wrap) if wrap else None)


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    strategy = None
    if args[:1] == ["--fsdp2"]:
        strategy, args = "fsdp2", args[1:]
    if not args:
        raise SystemExit("usage: python3 -m dtypelint.oracle [--fsdp2] MANIFEST.json...")
    if strategy == "fsdp2" and fully_shard is None:
        print(f"dtypelint.oracle: torch {torch.__version__} has no FSDP2 fully_shard",
              file=sys.stderr)
        return 77
    for path in args:
        with open(path) as f:
            manifest = json.load(f)
        print(json.dumps({"file": path, **verdict(manifest, strategy)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
