"""check_accelerator: dtypelint's check of an accelerate set-up, run before prepare."""
from __future__ import annotations

import warnings
from typing import Any, Iterable, List

from ._check import DtypelintError, Finding, check
from ._plans import accelerator_inputs


class PredictedFrameworkError(DtypelintError):
    """dtypelint predicts that the framework will raise: framework_error is the text it will
    raise, findings the findings that predict it."""

    def __init__(self, findings: Iterable[Finding]) -> None:
        self.findings = list(findings)
        first = self.findings[0]
        self.framework_error = first.framework_error
        lines = [f"dtypelint predicts {len(self.findings)} error(s) before the first step:"]
        lines += [str(f) for f in self.findings]
        super().__init__("\n".join(lines))


class DtypelintWarning(UserWarning):
    """A finding that does not stop training (or any finding with warn_only)."""


def raise_or_warn(findings: List[Finding], warn_only: bool = False,
                  fail_on: str = "error") -> List[Finding]:
    """Raise PredictedFrameworkError for the findings at fail_on ("error" or "warning"), warn
    for the others (all of them with warn_only). Returns the findings."""
    levels = ("error",) if fail_on == "error" else ("error", "warning")
    failing = [f for f in findings if f.severity in levels]
    others = [f for f in findings if f.severity not in levels and f.severity != "info"]
    for f in (findings if warn_only else others):
        if f.severity != "info":
            warnings.warn(f"dtypelint: {f}", DtypelintWarning, stacklevel=3)
    if failing and not warn_only:
        raise PredictedFrameworkError(failing)
    return findings


def check_accelerator(accelerator: Any, model: Any, *, raise_on_error: bool = True,
                      warn_only: bool = False, fail_on: str = "error",
                      **kwargs: Any) -> List[Finding]:
    """Check model under accelerator's set-up (FSDP plugin, DeepSpeed plugin, mixed precision,
    number of processes); call it before accelerator.prepare(model).

    Returns the findings; with raise_on_error (the default) a finding at fail_on raises
    PredictedFrameworkError carrying the predicted framework error (warn_only: a warning).
    kwargs go to dtypelint.check (versions, peft, ...)."""
    plan, deepspeed = accelerator_inputs(accelerator, model)
    findings = check(model, plan=plan, deepspeed=deepspeed, **kwargs)
    if raise_on_error:
        raise_or_warn(findings, warn_only, fail_on)
    return findings
