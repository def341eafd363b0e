"""dtypelint from Python: export a live torch model to a dtypelint manifest.

    import dtypelint
    dtypelint.export(model, "manifest.json")

Standard library only; torch and transformers are used when the objects given come from them."""
from .exporter import build_manifest, export

__version__ = "0.1.0"
__all__ = ["build_manifest", "export"]
