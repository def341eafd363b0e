"""One trainer set-up of tests/oracle/trainer_apps.py, run by the trainer itself on the CPU.

Usage (with the trainer venv's python): trainer_apps_worker.py build FOLDER ARCH
                                        trainer_apps_worker.py lf|axolotl SPEC RESULT [...]
`build` saves the small real model ARCH (tests/oracle/real_models.py) into FOLDER with the
venv's own transformers, and a word-level tokenizer over its 512 ids (the trainers load one).
`lf` runs LLaMA-Factory's own argument parsing (`llamafactory.hparams.get_train_args` on the
recipe dict), then its `load_tokenizer` and `load_model(..., is_trainable=True)`, which patch
the config, quantize (bitsandbytes), load with `torch_dtype="auto"` and run `init_adapter`
(LoRA, freeze, full: the frozen towers and the float32 casts). `axolotl` runs axolotl's config
load, validation and normalization (`axolotl.utils.config.validate_config` and
`normalize_config` on the recipe dict), then its `ModelLoader(cfg, tokenizer).load()`, which
loads the model and applies the adapter (LoRA, QLoRA) its own way. RESULT gets every
parameter's and buffer's dtype and requires_grad after the load (adapters included), the
versions imported, and the exception that stopped it (type, message, stage). Several SPEC
RESULT pairs run in one process, one after the other, so the imports are paid once."""
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _clean(name):
    # the names a user's manifest has: no PEFT wrapper prefix, NAME.base_layer.weight as
    # NAME.weight (PEFT moves the wrapped weight there; a manifest keeps its checkpoint name)
    if name.startswith("base_model.model."):
        name = name[len("base_model.model."):]
    return name.replace(".base_layer.", ".")


def snapshot(model):
    out = {}
    for n, p in model.named_parameters():
        out[_clean(n)] = [str(p.dtype).replace("torch.", ""), bool(p.requires_grad)]
    for n, b in model.named_buffers():
        if b is not None:
            out[_clean(n)] = [str(b.dtype).replace("torch.", ""), None]
    return out


def versions():
    import importlib.metadata as md
    out = {}
    for n in ("torch", "transformers", "peft", "accelerate", "trl", "bitsandbytes",
              "llamafactory", "axolotl", "deepspeed"):
        try:
            out[n] = md.version(n).split("+")[0]
        except md.PackageNotFoundError:
            pass
    return out


def build(folder, arch):
    import real_models
    real_models.build(arch, folder)
    if not os.path.exists(os.path.join(folder, "tokenizer.json")):
        from tokenizers import Tokenizer, models
        from transformers import PreTrainedTokenizerFast
        tok = Tokenizer(models.WordLevel({f"t{i}": i for i in range(512)}, unk_token="t3"))
        PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="t0", eos_token="t2",
                                bos_token="t1", unk_token="t3").save_pretrained(folder)


def run_lf(spec, result):
    result["stage"] = "import"
    from llamafactory.hparams import get_train_args
    from llamafactory.model import load_model, load_tokenizer
    result["stage"] = "args"
    model_args, _, training_args, finetuning_args, _ = get_train_args(dict(spec["args"]))
    result["parsed"] = {"compute_dtype": str(model_args.compute_dtype),
                        "bf16": training_args.bf16, "fp16": training_args.fp16}
    result["stage"] = "tokenizer"
    tok = load_tokenizer(model_args)
    result["stage"] = "load"
    model = load_model(tok["tokenizer"], model_args, finetuning_args, is_trainable=True)
    result["stages"]["load"] = snapshot(model)


def run_axolotl(spec, result):
    result["stage"] = "import"
    from axolotl.loaders import ModelLoader, load_tokenizer
    from axolotl.utils.config import normalize_config, validate_config
    from axolotl.utils.dict import DictDefault
    result["stage"] = "args"
    cfg = validate_config(DictDefault(dict(spec["args"])))
    normalize_config(cfg)
    result["parsed"] = {"torch_dtype": str(cfg.torch_dtype), "bf16": cfg.bf16,
                        "fp16": cfg.fp16}
    result["stage"] = "tokenizer"
    tok = load_tokenizer(cfg)
    result["stage"] = "load"
    model, _ = ModelLoader(cfg, tok).load()
    result["stages"]["load"] = snapshot(model)


def one(kind, spec_path, out):
    with open(spec_path) as f:
        spec = json.load(f)
    result = {"versions": {}, "stages": {}, "error": None, "stage": "start"}
    try:
        (run_lf if kind == "lf" else run_axolotl)(spec, result)
    except (Exception, SystemExit) as e:  # an argument parser's exit too
        tb = traceback.extract_tb(e.__traceback__)
        result["error"] = {"type": type(e).__name__, "message": str(e)[:2000],
                           "stage": result["stage"],
                           "where": f"{tb[-1].filename}:{tb[-1].lineno}" if tb else "",
                           "trace": traceback.format_exc()[-3000:]}
    result["versions"] = versions()
    with open(out, "w") as f:
        json.dump(result, f, indent=1)


def main():
    if sys.argv[1] == "build":
        build(sys.argv[2], sys.argv[3])
        return 0
    kind, pairs = sys.argv[1], sys.argv[2:]
    for spec_path, out in zip(pairs[::2], pairs[1::2]):
        one(kind, spec_path, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
