"""dtypelint from Python: export a live torch model to a manifest, and check a training set-up
with the dtypelint program before the first step. Typed (py.typed): mypy --strict checks
scripts that use it.

    import dtypelint
    findings = dtypelint.check(model, plan={"strategy": "fsdp1", "precision": "bf16"})
    for f in findings:
        print(f.rule, f.framework_error)

Standard library only; torch, transformers and accelerate are used when the objects given come
from them. The checks run the dtypelint program (DTYPELINT_BIN, else dtypelint on PATH)."""
from ._check import (BinaryNotFoundError, BinaryTooOldError, DtypelintError, Finding,
                     InputError, Location, Report, binary_version, check, find_binary,
                     installed_versions)
from .exporter import build_manifest, export
from ._accelerate import PredictedFrameworkError, check_accelerator

__version__ = "0.1.0"
__all__ = ["BinaryNotFoundError", "BinaryTooOldError", "DtypelintError", "Finding", "InputError",
           "Location", "PredictedFrameworkError", "Report", "binary_version", "build_manifest", "check",
           "check_accelerator", "export", "find_binary", "installed_versions"]
