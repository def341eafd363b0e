#!/usr/bin/env python3
"""The man page and --help name the same long options with the same arguments, and the man page's RULES section is
the rule table (`dtypelint --list-rules -f json`): ids, names, severities and summaries, in
order, each followed by the rule's whole `--explain` page (the text of SARIF help.markdown and
docs/rules, issue 36 item 3) rendered as roff; README.md's rule table names the same ids, names
and severities, in order.
DTL_UPDATE_MAN=1 rewrites both from the rule table instead (a new rule's README row starts
as its summary).

Usage: man-options.py DTYPELINT SOURCE_ROOT
"""
import json
import os
import re
import subprocess
import sys

dtypelint, root = os.path.abspath(sys.argv[1]), sys.argv[2]
page_path = os.path.join(root, "man", "dtypelint.1")
page = open(page_path, encoding="utf-8").read()
failures = []

help_text = subprocess.run([dtypelint, "--help"], capture_output=True, text=True,
                           check=True).stdout
help_options = set(re.findall(r"(?<![\w-])--([a-z][a-z-]*)", help_text))
options = re.search(r"^\.SH OPTIONS\n(.*?)^\.SH ", page, re.S | re.M).group(1)
man_options = set(re.findall(r"^\.B[IR]? \\-\\-([a-z\\-]+)", options, re.M))
man_options |= set(re.findall(r"^\.B[IR]? \\-[a-z] \"?, \"? ?\\-\\-([a-z\\-]+)", options, re.M))
man_options = {o.replace("\\-", "-") for o in man_options}
for o in sorted(help_options - man_options):
    failures.append(f"--{o} is in --help but not in the man page's OPTIONS")
for o in sorted(man_options - help_options):
    failures.append(f"--{o} is in the man page's OPTIONS but not in --help")

# each option's heading in OPTIONS (the line after .TP) gives the argument --help gives it,
# which is the option table's (src/cli/option-table.h); "..." after it (repeatable) aside
def option_args(pairs):
    args = {}
    for name, arg in pairs:
        args.setdefault(name, set()).add(" ".join(arg.split()).removesuffix(" ...").strip())
    return args


def help_labels(text):
    """--help's option labels: columns 3 to 23, or the whole line when longer"""
    for line in text.splitlines():
        if line.startswith("  -"):
            label = line[2:23] if len(line) > 23 and line[23] == " " else line[2:]
            m = re.match(r"(?:-\w, )?--([a-z][a-z-]*)(.*)$", label.rstrip())
            if m:
                yield m.groups()


help_args = option_args(help_labels(help_text))
heads = [" ".join(h.replace("\\-", "-").replace('"', " ").split())
         for h in re.findall(r"^\.TP\n(\.B[IR]? .*)$", options, re.M)]
man_args = option_args(m.groups() for m in
                        (re.match(r"^\.B[IR]? (?:-\w , )?--([a-z][a-z-]*)(.*)$", h) for h in heads)
                        if m)
for name in sorted(help_args):
    if man_args.get(name, help_args[name]) != help_args[name]:
        failures.append(f"--{name}: the man page's OPTIONS give it {sorted(man_args[name])}, "
                        f"--help {sorted(help_args[name])}")

# the limits' defaults: --help prints dtl_limits_default()'s, the man page must say the same
for name, default in re.findall(r"--(max-[a-z-]+) N +.*\(default (\d+)\)", help_text):
    entry = re.search(r"^\.BI \\-\\-" + re.escape(name.replace("-", "\\-")) +
                      r' " N"\n(.*?)(?=^\.[A-Z])', options, re.S | re.M)
    if not entry or f"(default {default}" not in entry.group(1).replace("\n", " "):
        failures.append(f"--{name}: the man page does not give its default {default}")


def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = re.sub(r"[^\x00-\x7f]", lambda m: "\\[u%04X]" % ord(m.group(0)), text)
    return "\\&" + text if text[:1] in (".", "'") else text


rules = json.loads(subprocess.run([dtypelint, "--list-rules", "-f", "json"], capture_output=True,
                                  text=True, check=True).stdout)["rules"]


def wrap(text):
    """roff text in lines of at most 80 bytes (mandoc -T lint's style), no line starting with
    a control character"""
    words = text.split(" ")
    lines = [words[0]]
    for w in words[1:]:
        if len(lines[-1]) + 1 + len(w) > 80:
            lines.append(w)
        else:
            lines[-1] += " " + w
    return "".join(("\\&" if line[:1] in (".", "'") else "") + line + "\n" for line in lines)


def summary(text):
    """the summary as one sentence"""
    return wrap(roff(text[0].upper() + text[1:] + "."))


def inline(text):
    """Markdown's `code` in bold and <url> as the bare URL, the rest escaped for roff"""
    out = []
    for i, part in enumerate(re.split(r"`([^`]*)`", text)):
        if i % 2:
            out.append("\\fB" + roff(part) + "\\fR")
            continue
        # <url>: the bare URL, which may break after each '/' (\: in roff)
        pieces = re.split(r"<(https?://[^>]+)>", part)
        out.append("".join(roff(p).replace("/", "/\\:") if j % 2 else roff(p)
                           for j, p in enumerate(pieces)))
    return "".join(out)


def explained(rule_id):
    """The rule's --explain page (Markdown) after its title, severity and summary, as roff:
    sections in bold, paragraphs, bullet lists and code blocks kept as they are"""
    text = subprocess.run([dtypelint, "--explain", rule_id], capture_output=True, text=True,
                          check=True).stdout
    body = text.split("\n## ", 1)
    if len(body) < 2:
        return ""
    # left-adjusted: a line holding a long URL cannot be justified (groff's warning)
    out, para, in_code = [".RS\n.ad l\n"], [], False

    def flush():
        if para:
            out.append(".PP\n" + wrap(inline(" ".join(para))))
            para.clear()
    for line in ("## " + body[1]).splitlines():
        if in_code:
            if line.startswith("```"):
                out.append(".fi\n.RE\n")
                in_code = False
            else:
                out.append(("\\&" if line[:1] in (".", "'") else "") + roff(line) + "\n"
                           if line else ".sp\n")
        elif line.startswith("```"):
            flush()
            out.append(".sp\n.RS 2\n.nf\n")
            in_code = True
        elif line.startswith("## "):
            flush()
            out.append(".PP\n.B " + roff(line[3:]) + "\n")
        elif line.startswith("- "):
            flush()
            out.append(".IP \\(bu 2\n" + wrap(inline(line[2:])))
        elif not line.strip():
            flush()
        else:
            para.append(line.strip())
    flush()
    out.append(".ad\n.RE\n")
    return "".join(out)


block = "".join(f".TP\n.BR {roff(r['id'])} \" {roff(r['name'])} ({r['severity']})\"\n"
                + summary(r["summary"]) + explained(r["id"]) for r in rules)
begin, end = ".\\\" rules: begin (generated from the rule table)\n", ".\\\" rules: end\n"
if begin not in page or end not in page:
    failures.append("the man page has no generated RULES block")
else:
    current = page.split(begin, 1)[1].split(end, 1)[0]
    if current != block:
        if os.environ.get("DTL_UPDATE_MAN") == "1":
            page = page.replace(begin + current + end, begin + block + end)
            open(page_path, "w", encoding="utf-8").write(page)
            print(f"rewrote the RULES section of {page_path}")
        else:
            listed = set(re.findall(r"^\.BR (DT\d+) ", current, re.M))
            which = ", ".join(sorted({r["id"] for r in rules} ^ listed)) or "their text"
            failures.append(f"the man page's RULES section differs from the rule table ({which}); "
                            "DTL_UPDATE_MAN=1 meson test -C build cli-man-options rewrites it")
# README.md's table: | id | name | default | predicts |, one row per rule in the table's order
readme_path = os.path.join(root, "README.md")
readme = open(readme_path, encoding="utf-8").read()
head = "| id | name | default | predicts |\n| --- | --- | --- | --- |\n"
if head not in readme:
    failures.append("README.md has no rule table")
else:
    start = readme.index(head) + len(head)
    end = start
    while readme.startswith("| DT", end):
        end = readme.index("\n", end) + 1
    rows = [line.split(" | ") for line in readme[start:end].splitlines()]
    predicts = {row[0][2:]: " | ".join(row[3:])[:-2] for row in rows if len(row) >= 4}
    want = "".join(f"| {r['id']} | {r['name']} | {r['severity']} | "
                   f"{predicts.get(r['id'], r['summary'].replace('|', chr(92) + '|'))} |\n"
                   for r in rules)
    if readme[start:end] != want:
        if os.environ.get("DTL_UPDATE_MAN") == "1":
            open(readme_path, "w", encoding="utf-8").write(readme[:start] + want + readme[end:])
            print(f"rewrote the rule table of {readme_path}")
        else:
            which = ", ".join(sorted(set(predicts) ^ {r["id"] for r in rules})) or "a name or severity"
            failures.append(f"README.md's rule table differs from the rule table ({which}); "
                            "DTL_UPDATE_MAN=1 meson test -C build cli-man-options rewrites it")
for f in failures:
    print(f)
print(f"man page: {len(man_options)} options as in --help, {len(rules)} rules as in the table")
sys.exit(1 if failures else 0)
