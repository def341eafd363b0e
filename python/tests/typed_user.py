"""A user's script as mypy --strict sees it (tests/mypy_strict.sh): it calls check() and reads
every field of a Finding and its Location, with the types the package declares. It is type
checked, never run."""
from typing import Any, Dict, List, Optional, Tuple

import dtypelint
from dtypelint.integrations.transformers import DtypelintCallback


def summary(path: str) -> List[str]:
    version: Tuple[int, int, int] = dtypelint.binary_version()
    report: dtypelint.Report = dtypelint.check(path, plan={"strategy": "fsdp1"},
                                               versions={"torch": "2.13.0"}, select=["DT1"])
    program: Optional[str] = report.program_version
    raw: Dict[str, Any] = report.raw
    lines = [f"dtypelint {'.'.join(map(str, version))} ({program}, {len(raw)} keys)"]
    for f in report.errors + list(report):
        rule: str = f.rule
        name: str = f.name
        severity: str = f.severity
        message: str = f.message
        error: Optional[str] = f.framework_error
        when: Optional[str] = f.error_when
        versions: Optional[str] = f.error_versions
        tensors: List[str] = f.tensors
        fix: Optional[str] = f.fix
        group: Optional[Dict[str, Any]] = f.group
        effect: Optional[str] = f.effect
        trace: List[Dict[str, Any]] = f.trace
        where = ""
        if f.location is not None:
            file: str = f.location.file
            line: int = f.location.line
            column: int = f.location.column
            key: Optional[str] = f.location.key
            where = f"{file}:{line}:{column} {key or ''}"
        if error is not None:
            lines.append(error.upper())
        lines.append(" ".join(map(str, (rule, name, severity, message, when, versions, tensors,
                                        fix, group, effect, len(trace), where))))
    try:
        dtypelint.check({"dtypelint": 1, "tensors": []})
    except dtypelint.InputError as e:
        lines.append(e.diagnostics)
    except dtypelint.DtypelintError as e:
        lines.append(str(e))
    return lines


def callback() -> DtypelintCallback:
    return DtypelintCallback(warn_only=True, fail_on="warning")


def exported(model: Any) -> Dict[str, Any]:
    return dtypelint.export(model, "m.yaml")
