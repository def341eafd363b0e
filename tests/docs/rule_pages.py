#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""docs/rules/: one Markdown page per rule, what `dtypelint --explain RULE` prints (the rule
table is the one source of rule text), and README.md, the index from --list-rules.

usage: rule_pages.py DTYPELINT SOURCE_ROOT
A page missing, stale or left over from a removed rule fails the test;
DTL_UPDATE_GOLDEN=1 rewrites the folder instead (read the diff).
"""
import json
import os
import subprocess
import sys


def main():
    dtypelint, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    folder = os.path.join(root, "docs", "rules")
    update = os.environ.get("DTL_UPDATE_GOLDEN") == "1"
    rules = json.loads(subprocess.run([dtypelint, "--list-rules", "-f", "json"], check=True,
                                      stdout=subprocess.PIPE).stdout)["rules"]
    want = {}
    index = ["# dtypelint rules", "",
             "One page per rule, generated from the rule table: the same text as",
             "`dtypelint --explain RULE`. SARIF output links each rule here (`helpUri`).", "",
             "| Rule | Name | Severity | Summary |", "| --- | --- | --- | --- |"]
    for rule in rules:
        page = subprocess.run([dtypelint, "--explain", rule["id"]], check=True,
                              stdout=subprocess.PIPE).stdout.decode()
        want[rule["id"] + ".md"] = page
        index.append(f"| [{rule['id']}]({rule['id']}.md) | {rule['name']} | "
                     f"{rule['severity']} | {rule['summary'].replace('|', chr(92) + '|')} |")
    want["README.md"] = "\n".join(index) + "\n"
    if len(rules) < 10:
        print(f"FAIL: --list-rules -f json lists {len(rules)} rules")
        return 1
    have = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    failures = []
    for name in sorted(have - set(want)):
        if update:
            os.unlink(os.path.join(folder, name))
        else:
            failures.append(f"docs/rules/{name}: no such rule (left over?)")
    for name, text in want.items():
        path = os.path.join(folder, name)
        old = open(path).read() if name in have else None
        if old == text:
            continue
        if update:
            os.makedirs(folder, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            print(f"updated docs/rules/{name}")
        else:
            failures.append(f"docs/rules/{name}: " + ("missing" if old is None else "stale"))
    # SARIF links each rule to its page
    sarif = json.loads(subprocess.run(
        [dtypelint, "-q", "--no-config", "-f", "sarif",
         os.path.join(root, "fixtures/rules/dt101-fires.yaml")],
        stdout=subprocess.PIPE).stdout)
    linked = sarif["runs"][0]["tool"]["driver"]["rules"]
    for rule in linked:
        uri = rule.get("helpUri", "")
        if not uri.endswith("/" + rule["id"] + ".md") or rule["id"] + ".md" not in want:
            failures.append(f"SARIF rule {rule['id']}: helpUri {uri!r} is not its page")
    if not linked:
        failures.append("SARIF output lists no rules")
    for f in failures:
        print("FAIL:", f)
    if failures:
        print("regenerate: DTL_UPDATE_GOLDEN=1 meson test -C build docs-rule-pages")
        return 1
    print(f"{len(rules)} rule pages and the index match --explain and --list-rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
