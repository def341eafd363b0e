#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Validates SARIF files against the OASIS SARIF 2.1.0 schema (draft-07) with python-jsonschema
and its format checker: the check ajv-cli did, with no npm.

usage: sarif_validate.py SCHEMA FILE...
Prints each error with its JSON path; exit 1 when a file is invalid, 77 (skipped) when
python3-jsonschema is not installed.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(77)


def main():
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    bad = 0
    for path in sys.argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:20]:
            where = "/".join(str(p) for p in e.absolute_path)
            print(f"{path}: /{where}: {e.message[:300]}")
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
