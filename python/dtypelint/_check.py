"""dtypelint.check: run the dtypelint program on a model or a manifest and read its JSON report.

Strict as the program is (issue 35): a path is passed so that it can never read as an option,
versions and rule lists are checked before they reach the command line, the program's output
is read as UTF-8 whatever the locale, and every text that reaches a message, an exception, a
warning or str(Finding) is escaped as the program escapes it (_text.py)."""
from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _program
from ._text import escape, escape_lines, escape_path

# the oldest dtypelint whose JSON report (schema version 1) and options this module uses
MIN_VERSION = (0, 1, 0)
JSON_SCHEMA = 1
FRAMEWORKS = ("torch", "transformers", "peft", "deepspeed", "accelerate", "trl", "bitsandbytes",
              "nemo-automodel")
# what the program's --with takes (src/core/version.c, dtl_version_parse: N(.N){0,3}, an
# optional dev/a/b/rc tag, a local label); checked here so that no value carries a ',' or '='
# into another framework's version, or an option
VERSION = re.compile(r"[vV]?[0-9]{1,7}(\.[0-9]{1,7}){0,3}((\.?dev|a|b|rc)[0-9]*)?"
                     r"(\+[A-Za-z0-9.]+)?")
# a rule id, an id prefix, a rule name or ALL, as --select and --ignore take them
RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")

PathLike = Union[str, "os.PathLike[str]"]
Version = Tuple[int, int, int]

class DtypelintError(Exception):
    """Base class of the errors of this package."""


class BinaryNotFoundError(DtypelintError):
    """The dtypelint program is not installed (neither DTYPELINT_BIN nor PATH has it)."""


class BinaryTooOldError(DtypelintError):
    """The dtypelint program is older than this package needs."""


class InputError(DtypelintError):
    """dtypelint refused its input (exit status 2): diagnostics holds its file:line:col messages
    (for an input given as a dict: `<manifest>: key.path: error: ...`), escaped."""

    def __init__(self, message: str, diagnostics: str = "") -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


@dataclasses.dataclass
class Location:
    """Where a finding is. For a file: its path, line and column (1-based). For an input given
    as a dict or a live object (a model, a TrainingArguments): file is its name in angle
    brackets (`<manifest>`, `<plan>`, `<deepspeed>`, ...), line and column are 0, and key is
    the path of the key in it, as `tensors[3].dtype`."""
    file: str
    line: int
    column: int
    key: Optional[str] = None

    def __str__(self) -> str:
        if self.key is not None:
            return f"{escape_path(self.file)}: {escape(self.key)}" if self.key else \
                escape_path(self.file)
        return f"{escape_path(self.file)}:{self.line}:{self.column}"


@dataclasses.dataclass
class Finding:
    """One finding of the JSON report (see dtypelint(1), JSON OUTPUT). The fields hold the
    report's text as it is; str() escapes it for a terminal or a log."""
    rule: str
    name: str
    severity: str                          # "error", "warning" or "info"
    message: str
    framework_error: Optional[str] = None  # the exact text the framework raises, or None
    error_when: Optional[str] = None       # when it raises it
    error_versions: Optional[str] = None   # the versions that raise it
    tensors: List[str] = dataclasses.field(default_factory=list)
    fix: Optional[str] = None
    location: Optional[Location] = None
    group: Optional[Dict[str, Any]] = None
    effect: Optional[str] = None
    trace: List[Dict[str, Any]] = dataclasses.field(default_factory=list)

    @classmethod
    def from_json(cls, f: Mapping[str, Any]) -> "Finding":
        err = f.get("framework_error") or {}
        loc = f.get("location")
        return cls(rule=f["rule"], name=f.get("name", ""), severity=f["severity"],
                   message=f["message"], framework_error=err.get("text"),
                   error_when=err.get("when"), error_versions=err.get("versions"),
                   tensors=list(f.get("tensors", [])), fix=f.get("fix"),
                   location=Location(loc["file"], loc["line"], loc["column"], loc.get("key"))
                   if loc else None,
                   group=f.get("group"), effect=f.get("effect"), trace=list(f.get("trace", [])))

    def __str__(self) -> str:
        text = f"{escape(self.rule)} {escape(self.severity)}: {escape(self.message)}"
        if self.location is not None:
            text += f"\n  at: {self.location}"
        if self.framework_error:
            text += f"\n  predicted: {escape(self.framework_error)}"
            if self.error_when:
                text += f"\n  when: {escape(self.error_when)}"
        if self.fix:
            text += f"\n  fix: {escape(self.fix)}"
        return text


class Report(List[Finding]):
    """The findings (a list of Finding), with the whole JSON report in .raw, the program's
    version in .program_version and the importers' warnings (DT003: a key not read, a file
    named but absent, ...) in .input_warnings, which the report keeps apart from its
    findings."""

    def __init__(self, findings: Iterable[Finding], raw: Dict[str, Any]) -> None:
        super().__init__(findings)
        self.raw = raw
        self.input_warnings: List[Finding] = [Finding.from_json(w) for w in
                                              raw.get("input_warnings", [])]
        tool = raw.get("tool")
        self.program_version: Optional[str] = \
            tool.get("version") if isinstance(tool, dict) else None

    @property
    def errors(self) -> List[Finding]:
        return [f for f in self if f.severity == "error"]


_checked_versions: Dict[str, Version] = {}


def find_binary(binary: Optional[str] = None) -> str:
    """The dtypelint program: binary, else $DTYPELINT_BIN, else the one this package's wheel
    installed (_program.py), else dtypelint on PATH."""
    name = binary or os.environ.get("DTYPELINT_BIN") or _program.bundled_program() or "dtypelint"
    found = shutil.which(name)
    if not found:
        where = ("DTYPELINT_BIN=" + name) if not binary and os.environ.get("DTYPELINT_BIN") \
            else name
        raise BinaryNotFoundError(
            f"the dtypelint program is not installed ({escape_path(where)} not found): build it "
            f"(meson setup build && ninja -C build) and put it on PATH, or set DTYPELINT_BIN, "
            f"or install the wheel that ships it (pip install dtypelint)")
    return found


def _run(argv: Sequence[str], timeout: Optional[float] = None) -> "subprocess.CompletedProcess[str]":
    """Run the program; its output is UTF-8 whatever this Python's locale (invalid bytes, which
    it never writes in JSON, become U+FFFD rather than an exception)."""
    try:
        return subprocess.run(list(argv), capture_output=True, encoding="utf-8",
                              errors="replace", timeout=timeout)
    except OSError as e:
        raise BinaryNotFoundError(f"cannot run {escape_path(argv[0])}: {escape(e)}") from e


def binary_version(binary: Optional[str] = None) -> Version:
    """(major, minor, patch) of the dtypelint program (binary, else as find_binary finds it);
    raises BinaryTooOldError below MIN_VERSION."""
    binary = find_binary(binary)
    if binary in _checked_versions:
        return _checked_versions[binary]
    run = _run([binary, "--version"], timeout=60)
    m = re.match(r"dtypelint (\d+)\.(\d+)\.(\d+)", run.stdout.strip())
    if run.returncode != 0 or not m:
        raise BinaryTooOldError(f"{escape_path(binary)} --version printed "
                                f"'{escape(run.stdout.strip())}' (exit {run.returncode}): "
                                f"not a dtypelint this package knows")
    version = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    if version < MIN_VERSION:
        raise BinaryTooOldError(
            f"{escape_path(binary)} is dtypelint {'.'.join(map(str, version))}; this package "
            f"needs {'.'.join(map(str, MIN_VERSION))} or newer")
    _checked_versions[binary] = version
    return version


def installed_versions() -> Dict[str, str]:
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


def _is_module(obj: object) -> bool:
    return hasattr(obj, "_parameters") and hasattr(obj, "_modules")


def _jsonable(value: Any) -> Any:
    """What json cannot write, as the libraries' own to_dict/to_json do: sets (PEFT's
    target_modules) as sorted lists, enums as their values, torch dtypes as names."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if hasattr(value, "value") and type(value).__module__ != "builtins":
        return value.value
    text = str(value)
    return text[len("torch."):] if text.startswith("torch.") else text


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _key_path(path: str, key: str) -> str:
    if _IDENT.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


_SCALARS = (str, int, float, bool, type(None))


def _layout(value: Any, path: str, indent: int, lead: str, trail: str,
            lines: List[str], paths: List[str]) -> None:
    """value as json.dump(indent=1) writes it, one line per scalar, each line's key path in
    paths: the program's line numbers then name the key the user wrote."""
    while not isinstance(value, (dict, list, tuple) + _SCALARS):
        value = _jsonable(value)
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines.append(lead + "{")
        paths.append(path)
        items = list(value.items())
        for i, (k, v) in enumerate(items):
            k = k if isinstance(k, str) else json.dumps(k).strip('"')
            _layout(v, _key_path(path, k), indent + 1, pad + " " + json.dumps(k) + ": ",
                    "," if i + 1 < len(items) else "", lines, paths)
        lines.append(pad + "}" + trail)
        paths.append(path)
    elif isinstance(value, (list, tuple)) and value:
        lines.append(lead + "[")
        paths.append(path)
        for i, v in enumerate(value):
            _layout(v, f"{path}[{i}]", indent + 1, pad + " ", "," if i + 1 < len(value) else "",
                    lines, paths)
        lines.append(pad + "]" + trail)
        paths.append(path)
    else:
        if isinstance(value, float) and not math.isfinite(value):
            # JSON has no infinity: accelerate's DeepSpeedPlugin sets steps_per_print to
            # float("inf"), which json.dumps writes as the invalid Infinity
            value = None if math.isnan(value) else math.copysign(sys.float_info.max, value)
        lines.append(lead + json.dumps(value if not isinstance(value, tuple) else list(value))
                     + trail)
        paths.append(path)


class _Inputs:
    """Temporary files for the inputs given as objects, removed on exit; each file's lines
    know the key path they write, so that locations and messages name what the user gave."""

    def __init__(self) -> None:
        self.dir: Optional["tempfile.TemporaryDirectory[str]"] = None
        self.files: Dict[str, Tuple[str, List[str]]] = {}  # path -> (label, key path per line)

    def __enter__(self) -> "_Inputs":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.dir:
            self.dir.cleanup()

    def write(self, name: str, data: Any, label: str) -> str:
        if self.dir is None:
            self.dir = tempfile.TemporaryDirectory(prefix="dtypelint-")
        path = os.path.join(self.dir.name, name)
        lines: List[str] = []
        paths: List[str] = []
        _layout(data, "", 0, "", "", lines, paths)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        self.files[path] = (label, paths)
        return path

    def path(self, value: Any, name: str, what: str) -> Optional[str]:
        """A path for value: a str/PathLike as is, a dict (or an object with to_dict) written out."""
        if value is None:
            return None
        if isinstance(value, (str, os.PathLike)):
            return _path_arg(value)
        if hasattr(value, "to_dict") and not isinstance(value, dict):
            value = value.to_dict()
        if isinstance(value, Mapping):
            return self.write(name, dict(value), f"<{what}>")
        raise TypeError(f"{what} must be a path or a dict, not {type(value).__name__}")

    def locate(self, loc: Dict[str, Any]) -> None:
        """A location in one of these files, in place: the label and the key path."""
        known = self.files.get(loc.get("file", ""))
        if known is None:
            return
        label, paths = known
        line = loc.get("line")
        loc["file"] = label
        loc["key"] = paths[line - 1] if isinstance(line, int) and 0 < line <= len(paths) else ""
        loc["line"] = loc["column"] = 0

    def where(self, file: str, line: str) -> str:
        label, paths = self.files[file]
        n = int(line)
        key = paths[n - 1] if 0 < n <= len(paths) else ""
        return f"{label}: {key}" if key else label

    def rename(self, text: str) -> str:
        """A message of the program with each of these files, and a file:line:col in one,
        named as the user gave it."""
        for file in self.files:
            text = re.sub(re.escape(file) + r":(\d+)(?::\d+)?",
                          lambda m: self.where(file, m.group(1)), text)
            text = text.replace(file, self.files[file][0])
        return text

    def relocate(self, report: Any) -> None:
        """Every location of the report (findings, notes, traces) in place."""
        if not self.files:
            return
        stack = [report]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if isinstance(node.get("file"), str) and "line" in node:
                    self.locate(node)
                for k, v in node.items():
                    if isinstance(v, str) and self.dir is not None and self.dir.name in v:
                        node[k] = self.rename(v)
                    else:
                        stack.append(v)
            elif isinstance(node, list):
                for i, v in enumerate(node):
                    if isinstance(v, str) and self.dir is not None and self.dir.name in v:
                        node[i] = self.rename(v)
                    else:
                        stack.append(v)


def _path_arg(value: PathLike) -> str:
    """A path as an argument that no parser reads as an option: './-x' for '-x'."""
    path = os.fspath(value)
    if not isinstance(path, str):
        raise TypeError("paths are str or os.PathLike[str], not bytes")
    if not path or "\0" in path:
        raise ValueError(f"not a path: '{escape(path)}'")
    return "./" + path if path.startswith("-") else path


def _rules(value: Union[str, Iterable[str]], what: str) -> str:
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    for item in items:
        if not RULE.fullmatch(item):
            raise ValueError(f"{what}: '{escape(item)}' is not a rule id, prefix or name")
    return ",".join(items)


def _versions(versions: Mapping[str, object]) -> str:
    out = []
    for name, version in versions.items():
        if name not in FRAMEWORKS:
            raise ValueError(f"versions: unknown framework '{escape(name)}' "
                             f"(one of {', '.join(FRAMEWORKS)})")
        text = str(version)
        if not VERSION.fullmatch(text):
            raise ValueError(f"versions: {name}: '{escape(text)}' is not a version "
                             f"(such as 2.7.1, 0.19.3rc1)")
        out.append(f"{name}={text}")
    return ",".join(out)


def _recipe(d: Mapping[str, Any], inputs: _Inputs) -> Dict[str, Any]:
    """A recipe dict as --trainer-args reads it: a DeepSpeed config dict becomes a file."""
    out = dict(d)
    if isinstance(out.get("deepspeed"), Mapping):
        out["deepspeed"] = inputs.write("deepspeed.json", dict(out["deepspeed"]),
                                        "<trainer_args.deepspeed>")
    return out


def check(model_or_manifest: Any, *, plan: Any = None, deepspeed: Any = None,
          accelerate: Any = None, peft: Any = None, trainer_args: Any = None,
          versions: Optional[Mapping[str, object]] = None,
          select: Union[str, Iterable[str], None] = None,
          ignore: Union[str, Iterable[str], None] = None, binary: Optional[str] = None,
          extra_args: Sequence[str] = ()) -> Report:
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
    select, ignore: rule ids, id prefixes or names (a list, or one comma-separated str).
    Locations in an input given as a dict or an object name its key path (Location.key).
    Raises BinaryNotFoundError, BinaryTooOldError, InputError (dtypelint's exit status 2, with
    its diagnostics), ValueError (a version or rule that the program would not take) or
    DtypelintError (any other failure)."""
    exe = find_binary(binary)
    binary_version(exe)
    with _Inputs() as inputs:
        live = _is_module(model_or_manifest)
        if live:
            from .exporter import build_manifest
            source = inputs.write("model.json", build_manifest(model_or_manifest), "<model>")
        elif isinstance(model_or_manifest, Mapping):
            source = inputs.write("manifest.json", dict(model_or_manifest), "<manifest>")
        elif isinstance(model_or_manifest, (str, os.PathLike)):
            source = _path_arg(model_or_manifest)
        else:
            raise TypeError("check() takes a torch model, a manifest dict or a path, not "
                            f"{type(model_or_manifest).__name__}")
        argv = [exe, "-f", "json", "-q"]
        if live:  # the versions installed here, under the ones given
            versions = dict(installed_versions(), **(versions or {}))
        else:  # below the files' own versions, as `pip list --format=json` (issue 33)
            argv.append("--versions-from=" + inputs.write("installed-versions.json", [
                {"name": k, "version": v} for k, v in installed_versions().items()],
                "<installed versions>"))
        if trainer_args is not None and not isinstance(trainer_args,
                                                       (str, os.PathLike, Mapping)):
            # a live TrainingArguments: its plan (a recipe file would also replay loading)
            from ._plans import training_args_inputs
            if plan is not None and not isinstance(plan, Mapping):
                raise TypeError("with a TrainingArguments, give plan as a dict")
            transformers = (versions or {}).get("transformers")
            args_plan, args_deepspeed = training_args_inputs(
                trainer_args, str(transformers) if transformers is not None else None)
            plan = dict(args_plan, **(plan or {}))
            deepspeed = deepspeed if deepspeed is not None else args_deepspeed
            trainer_args = None
        for option, value, name in (("--plan", plan, "plan.json"),
                                    ("--deepspeed", deepspeed, "deepspeed.json"),
                                    ("--accelerate", accelerate, "accelerate.json"),
                                    ("--peft", peft, "adapter_config.json")):
            path = inputs.path(value, name, option[2:])
            if path:
                argv.append(f"{option}={path}")
        if isinstance(trainer_args, Mapping):
            trainer_args = inputs.write("trainer_args.json", _recipe(trainer_args, inputs),
                                        "<trainer_args>")
        if trainer_args is not None:
            argv.append(f"--trainer-args={_path_arg(trainer_args)}")
        if versions:
            argv.append(f"--with={_versions(versions)}")
        if select:
            argv.append(f"--select={_rules(select, 'select')}")
        if ignore:
            argv.append(f"--ignore={_rules(ignore, 'ignore')}")
        argv += list(extra_args)
        argv += ["--", source]
        return run_json(argv, inputs)


def run_json(argv: Sequence[str], inputs: Optional[_Inputs] = None) -> Report:
    """Run dtypelint argv (with -f json) and read its report into a Report; locations in the
    files of inputs name what the user gave."""
    inputs = inputs or _Inputs()
    run = _run(argv)
    if run.returncode == 2:
        # an unreadable input is a DT001 finding in the JSON report (the others are still
        # linted); a usage error has no report, only standard error
        lines = []
        try:
            report = json.loads(run.stdout)
            inputs.relocate(report)
            for f in report.get("findings", []):
                if f.get("rule") == "DT001":
                    loc = f.get("location") or {}
                    where = Location(str(loc.get("file")), loc.get("line") or 0,
                                     loc.get("column") or 0, loc.get("key"))
                    lines.append(f"{where}: error: {escape(f.get('message'))}")
        except (ValueError, AttributeError):
            pass
        diagnostics = "\n".join(lines) or escape_lines(inputs.rename(run.stderr.strip()))
        raise InputError(f"dtypelint refused its input:\n{diagnostics}", diagnostics)
    if run.returncode not in (0, 1):
        raise DtypelintError(f"dtypelint failed (exit {run.returncode}):\n"
                             f"{escape_lines(inputs.rename(run.stderr.strip()))}")
    try:
        report = json.loads(run.stdout)
    except ValueError as e:
        raise DtypelintError(f"dtypelint printed no JSON report ({escape(e)})") from e
    if report.get("version") != JSON_SCHEMA:
        raise BinaryTooOldError(f"dtypelint's JSON report has schema version "
                                f"'{escape(report.get('version'))}'; this package reads "
                                f"{JSON_SCHEMA}")
    inputs.relocate(report)
    return Report([Finding.from_json(f) for f in report.get("findings", [])], report)
