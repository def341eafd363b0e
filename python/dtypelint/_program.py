# SPDX-License-Identifier: MIT
"""Where the dtypelint program lies when it came in this package's wheel (issue 34).

The wheel (pyproject.toml, built by meson-python from the same meson build) installs the
program as a script. `auditwheel repair` then moves it to <site-packages>/dtypelint.scripts/
(its RPATH reaches the vendored libcJSON and libyaml in dtypelint.libs/) and leaves a Python
shim in bin/ that execs it. The RECORD of the installed distribution names both, so the
program is looked up there: the moved program first (no Python start-up per run), else the
script. Nothing is found when the package was installed without the program (pip install
./python, a source checkout): the caller then falls back to DTYPELINT_BIN and PATH.
"""
import os
from importlib import metadata
from typing import Dict, Optional


def bundled_program() -> Optional[str]:
    """The absolute path of the program this distribution installed, or None."""
    try:
        files = metadata.distribution("dtypelint").files or []
    except metadata.PackageNotFoundError:
        return None
    found: Dict[str, str] = {}
    for entry in files:
        parts = entry.parts
        if entry.name != "dtypelint" or len(parts) < 2:
            continue
        kind = "moved" if parts[-2] == "dtypelint.scripts" else "script" if parts[-2] in (
            "bin", "Scripts") else None
        path = os.path.abspath(str(entry.locate()))
        if kind and kind not in found and os.path.isfile(path) and os.access(path, os.X_OK):
            found[kind] = path
    return found.get("moved") or found.get("script")
