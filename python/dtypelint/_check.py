"""dtypelint.check: run the dtypelint program on a model or a manifest and read its JSON report."""
import dataclasses
import json
import os
import re
import shutil
import subprocess
import tempfile

# the oldest dtypelint whose JSON report (schema version 1) and options this module uses
MIN_VERSION = (0, 1, 0)
JSON_SCHEMA = 1
FRAMEWORKS = ("torch", "transformers", "peft", "deepspeed", "accelerate", "trl", "bitsandbytes")


class DtypelintError(Exception):
    """Base class of the errors of this package."""


class BinaryNotFoundError(DtypelintError):
    """The dtypelint program is not installed (neither DTYPELINT_BIN nor PATH has it)."""


class BinaryTooOldError(DtypelintError):
    """The dtypelint program is older than this package needs."""


class InputError(DtypelintError):
    """dtypelint refused its input (exit status 2): diagnostics holds its file:line:col messages."""

    def __init__(self, message, diagnostics=""):
        super().__init__(message)
        self.diagnostics = diagnostics


@dataclasses.dataclass
class Location:
    file: str
    line: int
    column: int

    def __str__(self):
        return f"{self.file}:{self.line}:{self.column}"


@dataclasses.dataclass
class Finding:
    """One finding of the JSON report (see dtypelint(1), JSON OUTPUT)."""
    rule: str
    name: str
    severity: str
    message: str
    framework_error: str = None   # the exact text the framework raises, or None
    error_when: str = None        # when it raises it
    error_versions: str = None    # the versions that raise it
    tensors: list = dataclasses.field(default_factory=list)
    fix: str = None
    location: Location = None
    group: dict = None
    effect: str = None
    trace: list = dataclasses.field(default_factory=list)

    @classmethod
    def from_json(cls, f):
        err = f.get("framework_error") or {}
        loc = f.get("location")
        return cls(rule=f["rule"], name=f.get("name", ""), severity=f["severity"],
                   message=f["message"], framework_error=err.get("text"),
                   error_when=err.get("when"), error_versions=err.get("versions"),
                   tensors=list(f.get("tensors", [])), fix=f.get("fix"),
                   location=Location(loc["file"], loc["line"], loc["column"]) if loc else None,
                   group=f.get("group"), effect=f.get("effect"), trace=list(f.get("trace", [])))

    def __str__(self):
        text = f"{self.rule} {self.severity}: {self.message}"
        if self.framework_error:
            text += f"\n  predicted: {self.framework_error}"
            if self.error_when:
                text += f"\n  when: {self.error_when}"
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text


class Report(list):
    """The findings (a list of Finding), with the whole JSON report in .raw."""

    def __init__(self, findings, raw):
        super().__init__(findings)
        self.raw = raw

    @property
    def errors(self):
        return [f for f in self if f.severity == "error"]


_checked_versions = {}


def find_binary(binary=None):
    """The dtypelint program: binary, else $DTYPELINT_BIN, else dtypelint on PATH."""
    name = binary or os.environ.get("DTYPELINT_BIN") or "dtypelint"
    found = shutil.which(name)
    if not found:
        where = ("DTYPELINT_BIN=" + name) if not binary and os.environ.get("DTYPELINT_BIN") \
            else name
        raise BinaryNotFoundError(
            f"the dtypelint program is not installed ({where} not found): build it "
            f"(meson setup build && ninja -C build) and put it on PATH, or set DTYPELINT_BIN")
    return found


def binary_version(binary):
    """(major, minor, patch) of `binary --version`; raises BinaryTooOldError below MIN_VERSION."""
    if binary in _checked_versions:
        return _checked_versions[binary]
    try:
        run = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise BinaryNotFoundError(f"cannot run {binary}: {e}") from e
    m = re.match(r"dtypelint (\d+)\.(\d+)\.(\d+)", run.stdout.strip())
    if run.returncode != 0 or not m:
        raise BinaryTooOldError(f"{binary} --version printed {run.stdout.strip()!r} "
                                f"(exit {run.returncode}): not a dtypelint this package knows")
    version = tuple(int(x) for x in m.groups())
    if version < MIN_VERSION:
        raise BinaryTooOldError(
            f"{binary} is dtypelint {'.'.join(map(str, version))}; this package needs "
            f"{'.'.join(map(str, MIN_VERSION))} or newer")
    _checked_versions[binary] = version
    return version


def installed_versions():
    """The versions of the frameworks installed in this Python, as --with takes them."""
    from importlib import metadata
    out = {}
    for name in FRAMEWORKS:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        # "2.7.1+cu126", "1.13.0a0+git..." -> the release numbers dtypelint compares
        m = re.match(r"\d+(\.\d+)*", version)
        if m:
            out[name] = m.group(0)
    return out


def _is_module(obj):
    return hasattr(obj, "_parameters") and hasattr(obj, "_modules")


def _jsonable(value):
    """What json cannot write, as the libraries' own to_dict/to_json do: sets (PEFT's
    target_modules) as sorted lists, enums as their values, torch dtypes as names."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if hasattr(value, "value") and type(value).__module__ != "builtins":
        return value.value
    text = str(value)
    return text[len("torch."):] if text.startswith("torch.") else text


class _Inputs:
    """Temporary files for the inputs given as objects; removed on exit."""

    def __init__(self):
        self.dir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.dir:
            self.dir.cleanup()

    def write(self, name, data):
        if self.dir is None:
            self.dir = tempfile.TemporaryDirectory(prefix="dtypelint-")
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, default=_jsonable)
            f.write("\n")
        return path

    def path(self, value, name, what):
        """A path for value: a str/PathLike as is, a dict (or an object with to_dict) written out."""
        if value is None:
            return None
        if isinstance(value, (str, os.PathLike)):
            return os.fspath(value)
        if hasattr(value, "to_dict") and not isinstance(value, dict):
            value = value.to_dict()
        if isinstance(value, dict):
            return self.write(name, value)
        raise TypeError(f"{what} must be a path or a dict, not {type(value).__name__}")


def _recipe(d, inputs):
    """A recipe dict as --trainer-args reads it: a DeepSpeed config dict becomes a file."""
    d = dict(d)
    if isinstance(d.get("deepspeed"), dict):
        d["deepspeed"] = inputs.write("deepspeed.json", d["deepspeed"])
    return d


def check(model_or_manifest, *, plan=None, deepspeed=None, accelerate=None, peft=None,
          trainer_args=None, versions=None, select=None, ignore=None, binary=None,
          extra_args=()):
    """Lint a training set-up with the dtypelint program; return its findings (a Report).

    model_or_manifest: a torch.nn.Module (exported with dtypelint.export, PEFT models too), a
        manifest dict, or the path of a manifest or a Hugging Face model folder.
    plan: the training plan (a path, or a dict as the manifest's `training:` section).
    deepspeed, accelerate, peft, trainer_args: paths of a DeepSpeed JSON, an accelerate config,
        a PEFT adapter_config.json, a recipe (as the command line's --trainer-args); or dicts
        with their contents. peft may be a PeftConfig; trainer_args may be a live
        TrainingArguments (or TRL config), read as DtypelintCallback reads it.
    versions: {framework: version}. A live model is checked with the versions installed in
        this Python, overridden by these; a path or a dict with its own (or dtypelint's
        newest, and the findings say so) overridden by these.
    Raises BinaryNotFoundError, BinaryTooOldError, InputError (dtypelint's exit status 2, with
    its diagnostics) or DtypelintError (any other failure)."""
    exe = find_binary(binary)
    binary_version(exe)
    with _Inputs() as inputs:
        live = _is_module(model_or_manifest)
        if live:
            from .exporter import build_manifest
            source = inputs.write("model.json", build_manifest(model_or_manifest))
        elif isinstance(model_or_manifest, dict):
            source = inputs.write("manifest.json", model_or_manifest)
        elif isinstance(model_or_manifest, (str, os.PathLike)):
            source = os.fspath(model_or_manifest)
        else:
            raise TypeError("check() takes a torch model, a manifest dict or a path, not "
                            f"{type(model_or_manifest).__name__}")
        if live:  # the versions installed here, under the ones given
            versions = dict(installed_versions(), **(versions or {}))
        argv = [exe, "-f", "json", "-q"]
        if trainer_args is not None and not isinstance(trainer_args, (str, os.PathLike, dict)):
            # a live TrainingArguments: its plan (a recipe file would also replay loading)
            from ._plans import training_args_inputs
            if plan is not None and not isinstance(plan, dict):
                raise TypeError("with a TrainingArguments, give plan as a dict")
            args_plan, args_deepspeed = training_args_inputs(
                trainer_args, (versions or {}).get("transformers"))
            plan = dict(args_plan, **(plan or {}))
            deepspeed = deepspeed or args_deepspeed
            trainer_args = None
        for option, value, name in (("--plan", plan, "plan.json"),
                                    ("--deepspeed", deepspeed, "deepspeed.json"),
                                    ("--accelerate", accelerate, "accelerate.json"),
                                    ("--peft", peft, "adapter_config.json")):
            path = inputs.path(value, name, option[2:])
            if path:
                argv += [option, path]
        if isinstance(trainer_args, dict):
            trainer_args = inputs.write("trainer_args.json", _recipe(trainer_args, inputs))
        if trainer_args is not None:
            argv += ["--trainer-args", os.fspath(trainer_args)]
        if versions:
            unknown = sorted(set(versions) - set(FRAMEWORKS))
            if unknown:
                raise ValueError(f"versions: unknown framework {unknown[0]!r} "
                                 f"(one of {', '.join(FRAMEWORKS)})")
            argv += ["--with", ",".join(f"{k}={v}" for k, v in versions.items())]
        if select:
            argv += ["--select", select if isinstance(select, str) else ",".join(select)]
        if ignore:
            argv += ["--ignore", ignore if isinstance(ignore, str) else ",".join(ignore)]
        argv += list(extra_args)
        argv.append(source)
        return run_json(argv)


def run_json(argv):
    """Run dtypelint argv (with -f json) and read its report into a Report."""
    try:
        run = subprocess.run(argv, capture_output=True, text=True)
    except OSError as e:
        raise BinaryNotFoundError(f"cannot run {argv[0]}: {e}") from e
    if run.returncode == 2:
        # an unreadable input is a DT001 finding in the JSON report (the others are still
        # linted); a usage error has no report, only standard error
        lines = []
        try:
            for f in json.loads(run.stdout).get("findings", []):
                if f.get("rule") == "DT001":
                    loc = f.get("location") or {}
                    lines.append(f"{loc.get('file')}:{loc.get('line')}:{loc.get('column')}: "
                                 f"error: {f.get('message')}")
        except (ValueError, AttributeError):
            pass
        diagnostics = "\n".join(lines) or run.stderr.strip()
        raise InputError(f"dtypelint refused its input:\n{diagnostics}", diagnostics)
    if run.returncode not in (0, 1):
        raise DtypelintError(f"dtypelint failed (exit {run.returncode}):\n{run.stderr.strip()}")
    try:
        report = json.loads(run.stdout)
    except ValueError as e:
        raise DtypelintError(f"dtypelint printed no JSON report ({e})") from e
    if report.get("version") != JSON_SCHEMA:
        raise BinaryTooOldError(f"dtypelint's JSON report has schema version "
                                f"{report.get('version')!r}; this package reads {JSON_SCHEMA}")
    return Report([Finding.from_json(f) for f in report.get("findings", [])], report)
