#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The JSON Schemas in schemas/ against the parsers they describe.

usage: validate.py DTYPELINT SOURCE_ROOT

Every manifest, plan and config file among the fixtures (fixtures/**, tests/malformed) is
validated with python3-jsonschema and given to dtypelint. Both must agree:
- a file dtypelint accepts must validate (the schema is never stricter than the parser);
- a file dtypelint rejects must fail validation, unless it is listed in PARSER_ONLY with the
  reason the schema cannot express that check (and a listed file must still be one of those).
YAML is read with the YAML 1.2 core schema, as dtypelint's reader does (not PyYAML's 1.1).
Exit status 77 (meson's "skipped") when python3-jsonschema is not installed.
"""
import json
import os
import re
import subprocess
import sys
import warnings

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(77)
import yaml

# Files dtypelint rejects for a reason a JSON Schema cannot state. Each entry: the reason.
READER = "the reader's check, before any schema applies"
LIMIT = "a size limit: dtypelint's options set it (--max-*), not the file format"
SEMANTIC = "a check across fields or tensors, beyond what a JSON Schema states"
PARSER_ONLY = {
    "fixtures/cli/configs/unknown-rule.yaml": "rule selectors are checked against the rule table",
    "fixtures/cli/suppress/bad-directive.yaml": "an inline suppression: a YAML comment",
    "fixtures/cli/suppress/no-reason.yaml": "an inline suppression: a YAML comment",
    "tests/malformed/129-version-float.yaml": "1.0 == 1 in JSON Schema (a number is a number)",
    "tests/malformed/165-device-memory-huge.yaml": "the size's value, not its spelling, is over 2^62",
    "tests/malformed/20-duplicate-key.json": READER,
    "tests/malformed/21-duplicate-key.yaml": READER,
    "tests/malformed/65-dup-key-model.yaml": READER,
    "tests/malformed/66-dup-key-tensor.json": READER,
    "tests/malformed/68-dup-key-training.yaml": READER,
    "tests/malformed/45-escaped-nul.json": READER,
    "tests/malformed/64-escaped-nul.yaml": READER,
    "tests/malformed/149-json-lone-surrogate.json": READER,
    "tests/malformed/33-deep-nesting.json": LIMIT,
    "tests/malformed/47-rank-over-limit.yaml": LIMIT,
    "tests/malformed/87-name-too-long.yaml": LIMIT,
    "tests/malformed/15-overflow-shape.json": SEMANTIC,
    "tests/malformed/127-shape-overflow-product.yaml": SEMANTIC,
    "tests/malformed/19-duplicate-tensor.yaml": SEMANTIC,
    "tests/malformed/36-tensor-and-module.yaml": SEMANTIC,
    "tests/malformed/161-tensor-and-module-many-siblings.yaml": SEMANTIC,
    "tests/malformed/39-tied-missing.yaml": SEMANTIC,
    "tests/malformed/42-auto-threshold-no-hidden.yaml": SEMANTIC,
}


class Core12Loader(yaml.SafeLoader):
    """PyYAML with the YAML 1.2 core schema's plain-scalar resolution, and at most 100
    aliases a document (a billion-laughs fixture is a reader test, not a schema one)."""

    aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > 100:
                raise yaml.YAMLError("too many aliases")
        return super().compose_node(parent, index)


Core12Loader.yaml_implicit_resolvers = {}
for tag, regexp, first in [
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$",
     list("-+0123456789")),
    ("tag:yaml.org,2002:float",
     r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
     r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", list("-+.0123456789")),
]:
    Core12Loader.add_implicit_resolver(tag, re.compile(regexp), first)


def construct_int(loader, node):
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


Core12Loader.add_constructor("tag:yaml.org,2002:int", construct_int)


def stringify_keys(value, budget):
    """JSON has only string keys: a YAML key 1 becomes "1" (dtypelint rejects it anyway).
    Aliases make a tree of shared nodes: past budget[0] nodes the document is refused."""
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError("too many nodes once aliases are expanded")
    if isinstance(value, dict):
        return {k if isinstance(k, str) else json.dumps(k): stringify_keys(v, budget)
                for k, v in value.items()}
    if isinstance(value, list):
        return [stringify_keys(v, budget) for v in value]
    return value


def load(path, empty=None):
    """The document, or None when it is no readable JSON/YAML (a reader test, not a schema one).
    A YAML file of only comments is `empty` (a blank config is an empty one)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        if path.endswith(".json"):
            return stringify_keys(json.loads(data.decode("utf-8")), [1000000])
        docs = list(yaml.load_all(data.decode("utf-8"), Loader=Core12Loader))
        if not docs:
            return empty
        return stringify_keys(docs[0], [1000000]) if len(docs) == 1 else None
    except (ValueError, yaml.YAMLError, RecursionError):
        return None


def main():
    dtypelint, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.chdir(root)
    schemas, store = {}, {}
    for kind in ("manifest", "plan", "config"):
        path = os.path.join(root, "schemas", kind + ".schema.json")
        with open(path) as f:
            schemas[kind] = (json.load(f), "file://" + path)
        jsonschema.Draft7Validator.check_schema(schemas[kind][0])
        store["file://" + path] = schemas[kind][0]
    validators = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # RefResolver: 4.18 deprecates it
        for kind, (schema, uri) in schemas.items():
            resolver = jsonschema.RefResolver(base_uri=uri, referrer=schema, store=store)
            validators[kind] = jsonschema.Draft7Validator(schema, resolver=resolver)

    clean = "fixtures/clean/" + sorted(os.listdir("fixtures/clean"))[0]
    cases = []  # (kind, path)
    for top in ("fixtures", "tests/malformed", "examples", "contrib"):
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if not name.endswith((".yaml", ".yml", ".json")):
                    continue
                if name == ".dtypelint.yaml" or dirpath == "fixtures/cli/configs":
                    cases.append(("config", path))
                elif dirpath == "fixtures/plans":
                    cases.append(("plan", path))
                elif top == "tests/malformed" or "dtypelint" in (load(path) or {}):
                    cases.append(("manifest", path))
    counts = {"manifest": 0, "plan": 0, "config": 0}
    invalid_caught, failures, unread = 0, [], 0
    seen_parser_only = set()
    for kind, path in cases:
        doc = load(path, {} if kind == "config" else None)
        if doc is None:
            if not path.startswith("tests/malformed/"):
                failures.append(f"{path}: not readable as JSON or YAML 1.2")
            unread += 1
            continue
        counts[kind] += 1
        args = {"manifest": ["--no-config", path],
                "plan": ["--no-config", "--plan", path, clean],
                "config": ["--config", path, clean]}[kind]
        run = subprocess.run([dtypelint, "-q"] + args, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, timeout=60)
        output = (run.stdout + run.stderr).decode(errors="replace")
        # a plan or config is run with a clean manifest: only an error in the file itself
        # counts (a config's lowered limit may refuse the manifest)
        accepted = run.returncode in (0, 1) or (
            run.returncode == 2 and not re.search(
                r"^" + re.escape(path) + r":[0-9]+:[0-9]+: error: ", output, re.M))
        if run.returncode not in (0, 1, 2):
            failures.append(f"{path}: dtypelint exited {run.returncode}")
            continue
        errors = sorted(validators[kind].iter_errors(doc), key=lambda e: list(e.path))
        if accepted and errors:
            e = errors[0]
            failures.append(f"{path}: dtypelint accepts it, the {kind} schema does not: "
                            f"{'/'.join(map(str, e.path))}: {e.message[:200]}")
        elif not accepted and not errors:
            if path in PARSER_ONLY:
                seen_parser_only.add(path)
            else:
                out = output.strip().split("\n")[0]
                failures.append(f"{path}: dtypelint rejects it ({out}), the {kind} schema "
                                "accepts it")
        elif not accepted:
            invalid_caught += 1
    for path in sorted(set(PARSER_ONLY) - seen_parser_only):
        if os.path.exists(path):
            failures.append(f"{path}: listed in PARSER_ONLY, but the schema and dtypelint "
                            "agree on it now: remove it from the list")
    print(f"validated {counts['manifest']} manifests, {counts['plan']} plans, "
          f"{counts['config']} configs; {invalid_caught} rejected by both, "
          f"{len(seen_parser_only)} by dtypelint only (PARSER_ONLY), {unread} not JSON/YAML")
    if counts["manifest"] < 50 or counts["plan"] < 3 or counts["config"] < 5 \
            or invalid_caught < 50:
        failures.append("too few files found: the fixture layout changed?")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
