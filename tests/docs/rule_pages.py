#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""docs/rules/: one Markdown page per rule, what `dtypelint --explain RULE` prints (the rule
table is the one source of rule text), and README.md, the index from --list-rules. Each page is
rendered with cmark-gfm (GitHub's renderer; Debian package cmark-gfm) and must render its
example and its quoted errors as code (<pre><code>), never as bullet lists or run-on text; SARIF
carries the same text as help.markdown.

usage: rule_pages.py DTYPELINT SOURCE_ROOT
A page missing, stale or left over from a removed rule fails the test;
DTL_UPDATE_GOLDEN=1 rewrites the folder instead (read the diff).
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys


def fenced_lines(page):
    """The lines of page inside ``` fences."""
    inside, lines = False, []
    for line in page.split("\n"):
        if line.startswith("```"):
            inside = not inside
        elif inside and line.strip():
            lines.append(line)
    return lines


def check_rendering(rule_id, page):
    """What is wrong with the page as cmark-gfm renders it (a list of failures)."""
    out = subprocess.run(["cmark-gfm", "-e", "table", "-e", "autolink"], input=page.encode(),
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    failures = []
    sections = re.split(r"<h2>", out)
    by_title = {sec.split("</h2>")[0]: sec for sec in sections[1:]}
    example = by_title.get("Example", "")
    if "<pre><code" not in example:
        failures.append(f"{rule_id}: the example does not render as <pre><code>")
    for title in ("What happens", "Example", "Fix"):
        if "<li>" in by_title.get(title, ""):
            failures.append(f"{rule_id}: '{title}' renders a bullet list")
    code = "".join(re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", out, re.S))
    for line in fenced_lines(page):
        # cmark-gfm escapes &, <, > and " (not ')
        if html.escape(line, quote=False).replace('"', "&quot;") not in code:
            failures.append(f"{rule_id}: {line[:60]!r} is not inside <pre><code>")
    return failures


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
    if not shutil.which("cmark-gfm"):
        failures.append("cmark-gfm is not installed (Debian package cmark-gfm)")
    else:
        for name, text in want.items():
            if name != "README.md":
                failures += check_rendering(name[:-3], text)
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
        if rule.get("help", {}).get("markdown") != want.get(rule["id"] + ".md"):
            failures.append(f"SARIF rule {rule['id']}: help.markdown is not its page")
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
