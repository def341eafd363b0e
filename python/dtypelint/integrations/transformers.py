"""DtypelintCallback: the dtypelint check as a transformers TrainerCallback.

    from dtypelint.integrations.transformers import DtypelintCallback
    trainer = Trainer(model=model, args=args, ..., callbacks=[DtypelintCallback()])

It checks at on_init_end, the end of Trainer.__init__, before accelerate's prepare wraps the
model (FSDP's wrap-time errors come from prepare, which the Trainer runs before on_train_begin),
and at on_train_begin when it was added after the Trainer was built. It reads the Trainer's model
(a PEFT model with its adapters) as it is in memory, and the TrainingArguments (bf16/fp16, fsdp,
fsdp_config, deepspeed, the world size; TRL's configs name the trainer); when accelerate has set
up its state, its FSDP or DeepSpeed plugin is read as check_accelerator reads it. The framework
versions are the installed ones, overridden by versions=. A predicted framework error
raises PredictedFrameworkError before the first step; warn_only=True warns instead."""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from .._accelerate import DtypelintWarning, raise_or_warn
from .._check import Finding, check, installed_versions
from .._plans import accelerator_inputs, training_args_inputs

if TYPE_CHECKING:  # transformers has no type information: the callback is a plain class
    _Base = object
else:
    try:
        from transformers import TrainerCallback as _Base
    except ImportError:  # the callback works with any object that calls its hooks
        _Base = object


def _accelerator_state() -> Any:
    """accelerate's shared AcceleratorState once the Trainer has made its Accelerator."""
    try:
        from accelerate.state import AcceleratorState  # type: ignore[import-untyped]
    except ImportError:
        return None
    if not getattr(AcceleratorState, "_shared_state", None):
        return None
    return AcceleratorState()


def _already_wrapped(model: Any) -> bool:
    return any(type(m).__name__ == "FullyShardedDataParallel" or
               any(type(p).__name__ == "FlatParameter" for p in m._parameters.values())
               for m in model.modules())


class DtypelintCallback(_Base):
    def __init__(self, warn_only: bool = False, fail_on: str = "error",
                 **check_kwargs: Any) -> None:
        """warn_only: warn instead of raising; fail_on: "error" (default) or "warning";
        check_kwargs go to dtypelint.check (versions, peft, binary, ...)."""
        self.warn_only = warn_only
        self.fail_on = fail_on
        self.check_kwargs = check_kwargs
        self.findings: Optional[List[Finding]] = None

    def on_init_end(self, args: Any, state: Any, control: Any, model: Any = None,
                    **kwargs: Any) -> Any:
        if model is not None:
            self._check(args, model)
        return control

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None,
                       **kwargs: Any) -> Any:
        if self.findings is None and model is not None:
            if _already_wrapped(model):
                warnings.warn("dtypelint: the model is already wrapped by FSDP at on_train_begin; "
                              "pass DtypelintCallback in Trainer(callbacks=[...]) so that it "
                              "checks at on_init_end, before the wrap", DtypelintWarning)
            else:
                self._check(args, model)
        return control

    def _check(self, args: Any, model: Any) -> None:
        kwargs: Dict[str, Any] = dict(self.check_kwargs)
        versions = dict(installed_versions(), **(kwargs.get("versions") or {}))
        plan, deepspeed = training_args_inputs(args, versions.get("transformers"))
        state = _accelerator_state()
        if state is not None:  # the Trainer's Accelerator: its plugins as it will use them
            accel_plan, accel_deepspeed = accelerator_inputs(state, model)
            plan.update(accel_plan)
            deepspeed = deepspeed or accel_deepspeed
        if deepspeed:
            kwargs.setdefault("deepspeed", deepspeed)
        self.findings = check(model, plan=plan, **kwargs)
        raise_or_warn(self.findings, self.warn_only, self.fail_on)
