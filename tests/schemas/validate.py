#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The JSON Schemas in schemas/ against the parsers they describe.

usage: validate.py DTYPELINT SOURCE_ROOT PLAN_SCHEMA (build/schemas/plan.schema.json)

Every manifest, plan and config file among the fixtures (fixtures/**, tests/malformed) is
validated with python3-jsonschema and given to dtypelint. Both must agree:
- a file dtypelint accepts must validate (the schema is never stricter than the parser);
- a file dtypelint rejects must fail validation, unless it is listed in PARSER_ONLY with the
  reason the schema cannot express that check (and a listed file must still be one of those).
YAML is read with the YAML 1.2 core schema, as dtypelint's reader does (not PyYAML's 1.1).
The schemas must pass a strict check first: each has its SchemaStore $id, every $ref resolves
by $id alone (a registry of the three, no file names), only draft-07 keywords appear.
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

try:  # jsonschema >= 4.18 (tests/requirements.txt); Debian 12's 4.10 has RefResolver only
    import referencing
    import referencing.jsonschema
except ImportError:
    referencing = None

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
    "tests/malformed/172-target-parameters-over-64.yaml": SEMANTIC,
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


# Draft-07's keywords, and the places where a key is a name, not a keyword (ajv's strict mode
# refuses an unknown keyword: a typo such as "additionalProperty" would silently allow all).
DRAFT7_KEYWORDS = {
    "$schema", "$id", "$ref", "$comment", "title", "description", "default", "examples",
    "readOnly", "writeOnly", "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum",
    "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "items",
    "additionalItems", "maxItems", "minItems", "uniqueItems", "contains", "maxProperties",
    "minProperties", "required", "properties", "patternProperties", "additionalProperties",
    "dependencies", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
    "definitions", "contentMediaType", "contentEncoding",
}
NAME_MAPS = {"properties", "patternProperties", "definitions", "dependencies"}
ID_PREFIX = "https://json.schemastore.org/dtypelint-"


def strict_problems(schemas):
    """Each schema's $id, every $ref resolvable by $id, only draft-07 keywords, checked schemas."""
    problems, ids = [], {}
    for kind, schema in schemas.items():
        want = ID_PREFIX + kind + ".json"
        if schema.get("$id") != want:
            problems.append(f"schemas/{kind}.schema.json: $id {schema.get('$id')!r}, want {want!r}")
        ids[schema.get("$id")] = schema
        jsonschema.Draft7Validator.check_schema(schema)

    def walk(kind, node, where):
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(kind, item, f"{where}/{i}")
            return
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            if key not in DRAFT7_KEYWORDS:
                problems.append(f"schemas/{kind}.schema.json{where}: unknown keyword {key!r}")
            if key == "$ref":
                target, _, pointer = value.partition("#")
                if target and target not in ids:
                    problems.append(f"schemas/{kind}.schema.json{where}: $ref {value!r} names "
                                    "no schema by its $id")
                doc = ids.get(target) if target else schemas[kind]
                for part in filter(None, pointer.split("/")):
                    doc = doc.get(part) if isinstance(doc, dict) else None
                if doc is None:
                    problems.append(f"schemas/{kind}.schema.json{where}: $ref {value!r} "
                                    "points at nothing")
            elif key in NAME_MAPS and isinstance(value, dict):
                for name, sub in value.items():
                    walk(kind, sub, f"{where}/{key}/{name}")
            elif key in ("enum", "const", "default", "examples"):
                continue
            else:
                walk(kind, value, f"{where}/{key}")

    for kind, schema in schemas.items():
        walk(kind, schema, "")
    # the SchemaStore catalogue entries point at the schemas by their $id
    with open(os.path.join("schemas", "schemastore-catalog.json")) as f:
        catalog = json.load(f)
    urls = sorted(entry["url"] for entry in catalog["schemas"])
    if urls != sorted(ids):
        problems.append(f"schemas/schemastore-catalog.json: urls {urls} are not the $ids")
    for entry in catalog["schemas"]:
        if not entry.get("name") or not entry.get("description"):
            problems.append(f"schemas/schemastore-catalog.json: {entry['url']}: no name or "
                            "description")
    return problems


def main():
    dtypelint, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    plan = os.path.abspath(sys.argv[3])  # built from include/dtypelint/model/plan-keys.h (schemas/meson.build)
    os.chdir(root)
    schemas = {}
    for kind in ("manifest", "plan", "config"):
        path = plan if kind == "plan" else os.path.join(root, "schemas", kind + ".schema.json")
        with open(path) as f:
            schemas[kind] = json.load(f)
    problems = strict_problems(schemas)
    if problems:
        for p in problems:
            print("FAIL:", p)
        return 1
    # the schemas find each other by their $id alone, as SchemaStore and editors do: no file
    # names, no base URI given from outside
    by_id = {schema["$id"]: schema for schema in schemas.values()}
    validators = {}
    for kind, schema in schemas.items():
        if referencing:
            registry = referencing.Registry().with_resources(
                (uri, referencing.Resource.from_contents(
                    doc, default_specification=referencing.jsonschema.DRAFT7))
                for uri, doc in by_id.items())
            validators[kind] = jsonschema.Draft7Validator(
                schema, registry=registry, format_checker=jsonschema.FormatChecker())
        else:
            resolver = jsonschema.RefResolver(base_uri=schema["$id"], referrer=schema,
                                              store=dict(by_id))
            validators[kind] = jsonschema.Draft7Validator(
                schema, resolver=resolver, format_checker=jsonschema.FormatChecker())

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
