#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Every fact citation resolves.

usage: citations.py DTYPELINT SOURCE_ROOT

- rules/versions.yaml: every behaviour's `fact:` is one https URL to an upstream source (a PR, an
  issue, a commit, a file at a commit or tag, official docs), never a notes file; every recipe's
  and memory formula's `source:` starts with one.
- every rule's Sources (`--explain`, from the rule table, so whatever files the rules live in):
  each citation is an https URL as above, a `docs/<file>.md §N` that resolves, or a file of the
  source tree; a § with no such file before it resolves to nothing.
- every `docs/<file>.md §N "Title"` in the source tree (comments, docs, YAML): the file is in
  the tree's docs/, §N a numbered heading there (or item M of the numbered list in §N, written
  §N.M), and the quoted title, if any, stands in that section. These always resolve: the tree
  stands on its own (issue 37).
- nothing cites the design notes and fact files of the workspace's sibling folder, which a
  clone or a tarball does not have: a `facts/<file>.md`, a section of the facts or of the
  design notes without a file, the DESIGN and STYLE notes by file name (OUTSIDE below). Cite
  an upstream URL at a tag or commit, or a docs/ section instead. The files in PENDING (none
  now) are reported, not failed: for a file being rewritten elsewhere.

The checks first run on broken copies, each of which must fail: a checker that cannot fail
proves nothing.
"""
import json
import os
import re
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed (apt-get install python3-yaml)")
    sys.exit(77)

# citations of the notes outside the repository, written so that this file matches none
OUTSIDE = re.compile(r"(?<![\w/.-])(?:DESIGN\s?§|DES" r"IGN\.md|STY" r"LE\.md|facts\s?§)")
# files whose notes citations go with a rewrite under way (issue 37 item 1: the lint as a
# library); remove an entry once its file cites upstream or docs/ instead
PENDING = set()
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+")
# facts/<file>.md (the notes folder, however reached) or docs/<file>.md (the tree's docs/, so
# not tests/docs/...)
FACTS_REF = re.compile(r"(?<![\w.-])(?:(?:\.\./)?shared/)?(facts)/([A-Za-z0-9_.-]+\.md)"
                       r"|(?<![\w./-])(docs)/([A-Za-z0-9_.-]+\.md)")
SECTION = re.compile(r"§\s?(\d+(?:\.\d+)*)")
TITLE = re.compile(r"[ \t]*\"([^\"\n]{1,80})\"")
# between two sections of one citation: "§1.2, §1.3", "§3-§6", "§3.6/§3.7", "§5.1 and\n * §5.2",
# "§1.1 (FSDP1) and §2.2"
SKIP = r"(?:[\s*#`]|//)*"  # spaces, comment leaders and Markdown code quotes
GAP = re.compile(SKIP + r"(?:\([^()\n]{0,40}\))?" + SKIP + r"(?:,|and|or|-|–|/)?" + SKIP +
                 r"(?:and\s+)?(?=§)")
LEAD = re.compile(SKIP + r"(?=§)")
PATH = re.compile(r"(?<![\w/.:-])((?:[A-Za-z0-9_-]+/)+[A-Za-z0-9_.-]+\.(?:md|yaml|c|h|py))\b")
GITHUB = re.compile(r"^/[\w.-]+/[\w.-]+/(?:"
                    r"(?:pull|issues)/\d+(?:[/#?].*)?"
                    r"|commit/[0-9a-f]{7,40}(?:[/#?].*)?"
                    r"|(?:blob|tree)/(?P<ref>[^/]+)(?:/.*)?)$")
# a file is cited at a commit or a release tag, never at a branch that moves
PINNED = re.compile(r"^(?:[0-9a-f]{40}|v?\d+(?:\.\d+)+(?:[.-]?[A-Za-z0-9]+)*)$")
TEXT_SUFFIXES = (".c", ".h", ".md", ".yaml", ".yml", ".py", ".sh", ".build", ".txt", ".1",
                 ".json", ".in", ".fish", ".bash")


def url_problem(url):
    """Why the URL is not a citation of an upstream source, or None."""
    if not url.startswith("https://"):
        return "is not an https URL"
    rest = url[len("https://"):]
    host, _, path = rest.partition("/")
    if "." not in host or host.startswith("localhost"):
        return "names no public host"
    if re.search(r"(^|/)facts/[^/]+\.md", path):
        return "is a notes file, not the upstream source"
    if host in ("github.com", "www.github.com"):
        m = GITHUB.match("/" + path)
        if not m:
            return ("is not a GitHub PR, issue, commit, or file at a commit or tag")
        if m.group("ref") is not None and not PINNED.match(m.group("ref")):
            return f"cites a file at '{m.group('ref')}', a branch; use a commit or a tag"
    return None


class Facts:
    """One folder of cited Markdown files: numbered headings and their spans."""

    def __init__(self, folder, label):
        self.folder = folder
        self.label = label  # how citations name the folder: "docs" or "facts"
        self.available = folder is not None and os.path.isdir(folder)
        self.files = {}
        self.unresolved = 0

    def load(self, name):
        if name in self.files:
            return self.files[name]
        path = os.path.join(self.folder, name)
        if not os.path.isfile(path):
            self.files[name] = None
            return None
        lines = open(path, encoding="utf-8").read().split("\n")
        headings = []  # (number or None, level, line index)
        fence = False
        for i, line in enumerate(lines):
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            m = re.match(r"^(#{1,6})\s+(.*)$", line)
            if fence or not m:
                continue
            num = re.match(r"^(?:Part\s+)?(\d+(?:\.\d+)*)\.?(?=\s|$)", m.group(2))
            headings.append((num.group(1) if num else None, len(m.group(1)), i))
        sections = {}
        for k, (num, level, start) in enumerate(headings):
            end = len(lines)
            for _, lvl, at in headings[k + 1:]:
                if lvl <= level:
                    end = at
                    break
            if num is not None and num not in sections:
                sections[num] = (start, end)
        self.files[name] = (lines, sections)
        return self.files[name]

    def resolve(self, name, section, title):
        """Why LABEL/NAME §SECTION "TITLE" does not resolve, or None."""
        if not self.available:
            self.unresolved += 1
            return None
        loaded = self.load(name)
        if loaded is None:
            return f"no {self.label}/{name} in {self.folder}"
        lines, sections = loaded
        span = (0, len(lines))
        if section is not None:
            if section in sections:
                span = sections[section]
            else:
                parent, _, item = section.rpartition(".")
                if not parent or parent not in sections:
                    return f"{self.label}/{name} has no heading §{section}"
                start, end = sections[parent]
                if not any(re.match(rf"^{item}\.\s", line) for line in lines[start:end]):
                    return (f"{self.label}/{name} has no heading §{section} nor item {item} in "
                            f"§{parent}")
                span = (start, end)
        if title is not None:
            body = norm(" ".join(lines[span[0]:span[1]]))
            if norm(title) not in body:
                where = f"§{section}" if section else "the file"
                return f"{self.label}/{name}: \"{title}\" is not in {where}"
        return None


def norm(text):
    return re.sub(r"\s+", " ", re.sub(r"[*`_]", "", text)).strip().lower()


def facts_refs(text):
    """Every docs/ or facts/<file>.md reference in TEXT:
    (offset, folder label, file, [(section, title)], end)."""
    out = []
    for m in FACTS_REF.finditer(text):
        pos, cited = m.end(), []
        t = TITLE.match(text, pos)
        if t:  # facts/<file>.md "Title": a whole-file reference
            cited.append((None, t.group(1)))
            pos = t.end()
        lead = LEAD.match(text, pos)
        if lead:
            pos = lead.end()
            while True:
                s = SECTION.match(text, pos)
                if not s:
                    break
                pos = s.end()
                t = TITLE.match(text, pos)
                if t:
                    pos = t.end()
                cited.append((s.group(1), t.group(1) if t else None))
                gap = GAP.match(text, pos)
                if not gap:
                    break
                pos = gap.end()
        label, name = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        out.append((m.start(), label, name, cited or [(None, None)], pos))
    return out


def outside(label, name):
    return (f"cites {label}/{name}, notes outside the repository: cite an upstream URL at a "
            "tag or commit, or a docs/ section")


def check_text(where, text, facts):
    """Problems of the docs/ and notes references in TEXT, as 'WHERE:LINE: ...'."""
    problems = []
    for offset, label, name, cited, _ in facts_refs(text):
        line = text.count("\n", 0, offset) + 1
        if label != "docs":
            problems.append(f"{where}:{line}: {outside(label, name)}")
            continue
        for section, title in cited:
            why = facts[label].resolve(name, section, title)
            if why:
                problems.append(f"{where}:{line}: {why}")
    for m in OUTSIDE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        problems.append(f"{where}:{line}: '{m.group(0)}' cites the workspace's notes, which are "
                        "not in the repository: cite an upstream URL or a docs/ section")
    return problems


def check_rule_sources(rule, text, facts, root):
    """Problems of one rule's Sources text."""
    problems, found = [], 0
    refs = facts_refs(text)
    for offset, label, name, cited, _ in refs:
        found += 1
        if label != "docs":
            problems.append(f"{rule} Sources: {outside(label, name)}")
            continue
        for section, title in cited:
            why = facts[label].resolve(name, section, title)
            if why:
                problems.append(f"{rule} Sources: {why}")
    # what is left once the facts/ references are cut out
    rest, last = "", 0
    for offset, _, _, _, end in refs:
        rest += text[last:offset] + " "
        last = end
    rest += text[last:]
    for m in URL.finditer(rest):
        found += 1
        url = m.group(0).rstrip(".,;:)")
        why = url_problem(url)
        if why:
            problems.append(f"{rule} Sources: {url} {why}")
    rest = URL.sub(" ", rest)
    for m in PATH.finditer(rest):
        found += 1
        if not os.path.isfile(os.path.join(root, m.group(1))):
            problems.append(f"{rule} Sources: {m.group(1)} is no file of the source tree")
    for m in re.finditer(r"§\s?\d[\d.]*", rest):
        problems.append(f"{rule} Sources: '{m.group(0)}' names no docs/ or facts/ file, so it "
                        "resolves to nothing")
    if found == 0:
        problems.append(f"{rule} Sources: no citation (an https URL or docs/<file>.md §N)")
    return problems


def check_versions(text):
    """Problems of rules/versions.yaml's facts and sources."""
    problems = []
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return [f"rules/versions.yaml: {e}"]
    behaviours = doc.get("behaviours") if isinstance(doc, dict) else None
    if not isinstance(behaviours, dict) or not behaviours:
        return ["rules/versions.yaml: no behaviours"]
    for key, entry in behaviours.items():
        fact = entry.get("fact") if isinstance(entry, dict) else None
        if not isinstance(fact, str):
            problems.append(f"rules/versions.yaml: {key}: no fact")
            continue
        why = "is not one URL" if not URL.fullmatch(fact) else url_problem(fact)
        if why:
            problems.append(f"rules/versions.yaml: {key}: fact '{fact}' {why}")
    for table in ("recipes", "memory_formulas"):
        for key, entry in (doc.get(table) or {}).items():
            source = entry.get("source") if isinstance(entry, dict) else None
            m = URL.match(source or "")
            why = "does not start with a URL" if not m else url_problem(m.group(0))
            if why:
                problems.append(f"rules/versions.yaml: {table}.{key}: source '{source}' {why}")
    return problems


def source_files(root):
    for folder, dirs, files in os.walk(root):
        # build directories (build, build-asan, ...) and .git
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.exists(
            os.path.join(folder, d, "meson-private")))
        for name in sorted(files):
            if name.endswith(TEXT_SUFFIXES) or name in ("meson.build", "meson_options.txt"):
                yield os.path.join(folder, name)


def rule_sources(dtypelint):
    listing = subprocess.run([dtypelint, "--list-rules", "-f", "json"], check=True,
                             stdout=subprocess.PIPE).stdout
    out = {}
    for rule in json.loads(listing)["rules"]:
        page = subprocess.run([dtypelint, "--explain", rule["id"]], check=True,
                              stdout=subprocess.PIPE).stdout.decode()
        _, found, sources = page.partition("\n## Sources\n\n")
        out[rule["id"]] = sources.split("\n## ")[0].strip() if found else ""
    return out


def self_test(facts, root, versions, sources):
    """Broken copies: each must fail (and the unbroken control must pass)."""
    notes = "facts" + "/"  # written apart, so this file holds no reference to check
    docs = "docs" + "/"
    rule = next(iter(sources))
    behaviour = next(iter(yaml.safe_load(versions)["behaviours"]))
    fact_line = re.compile(r"(\n  " + re.escape(behaviour) + r":\n(?:    .*\n)*?    fact: )\"[^\"]*\"")
    broken_versions = {
        "a notes file as fact": f"\"{notes}torch-and-transformers.md §1.2\"",
        "an http URL": "\"http://github.com/pytorch/pytorch/pull/97667\"",
        "a file at a branch": "\"https://github.com/pytorch/pytorch/blob/main/torch/nn/init.py\"",
        "a GitHub page that is no PR, issue or file": "\"https://github.com/pytorch/pytorch\"",
        "a URL and prose": "\"https://github.com/pytorch/pytorch/pull/97667 and more\"",
    }
    cases = []
    for what, value in broken_versions.items():
        copy, n = fact_line.subn(lambda m: m.group(1) + value, versions, count=1)
        assert n == 1, "the self-test cannot find the first behaviour's fact"
        cases.append((what, check_versions(copy)))
    cases.append(("a bare § in a rule's Sources",
                  check_rule_sources(rule, sources[rule] + " §3.4", facts, root)))
    cases.append(("a rule's Sources citing a missing file",
                  check_rule_sources(rule, "rules/no-such-file.md", facts, root)))
    cases.append(("a rule with no Sources", check_rule_sources(rule, "see above", facts, root)))
    cases.append(("a rule's Sources citing the notes",
                  check_rule_sources(rule, f"{notes}torch-and-transformers.md §1.2", facts,
                                     root)))
    for what, text in [
        ("a docs/ heading that does not exist", f"/* {docs}design.md §99 */"),
        ("a docs/ file that does not exist", f"/* {docs}no-such-page.md §1 */"),
        ("the second section of a list", f"/* {docs}design.md §2, §99 */"),
        ("a docs/ title outside its section", f"/* {docs}design.md §2 \"House style\" */"),
        ("a section on the next comment line", f"/* ({docs}design.md\n * §77) */"),
        ("a notes file", f"/* {notes}torch-and-transformers.md §1.2 */"),
        ("a notes section without a file", "/* (fa" "cts §5.3) */"),
        ("the design notes by section", "/* (DES" "IGN §3) */"),
        ("the design notes by name", "# DES" "IGN.md §2"),
        ("the style notes by name", "# STY" "LE.md"),
    ]:
        cases.append((what, check_text("copy.c", text, facts)))
    failures = [what for what, problems in cases if not problems]
    control = check_text("copy.c", f"/* {docs}design.md §2, §3 and\n * §8 \"House style\" */",
                         facts)
    if control:
        failures.append("a good reference is refused: " + "; ".join(control))
    return failures


def main():
    dtypelint, root = sys.argv[1], os.path.abspath(sys.argv[2])
    facts = {"docs": Facts(os.path.join(root, "docs"), "docs")}
    versions = open(os.path.join(root, "rules", "versions.yaml"), encoding="utf-8").read()
    sources = rule_sources(dtypelint)
    if len(sources) < 10:
        print(f"FAIL: --list-rules lists {len(sources)} rules")
        return 1
    failures = self_test(facts, root, versions, sources)
    if failures:
        for what in failures:
            print(f"FAIL: the checker passes a broken copy: {what}")
        return 1
    problems = check_versions(versions)
    for rule, text in sources.items():
        problems += check_rule_sources(rule, text, facts, root)
    refs, pending = 0, []
    for path in source_files(root):
        try:
            text = open(path, encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        refs += len(facts_refs(text))
        where = os.path.relpath(path, root)
        found = check_text(where, text, facts)
        if where in PENDING:
            pending += found
        else:
            problems += found
    for p in problems:
        print(p)
    print(f"{len(sources)} rules' Sources, {refs} docs/ references in the source tree, "
          f"{len(yaml.safe_load(versions)['behaviours'])} behaviours: "
          f"{len(problems)} citations that do not resolve")
    for p in pending:
        print(f"NOTE (pending its rewrite): {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
