#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""completions/ (bash, zsh, fish) against the binary: every option of --help and no other,
every format of --help's -f list, and, run in the real shells where they are installed, the
rule ids of --list-rules (bash always; fish and zsh skipped, with a message, when missing).

usage: completions.py DTYPELINT SOURCE_ROOT
"""
import os
import re
import shutil
import subprocess
import sys


def help_facts(dtypelint):
    text = subprocess.run([dtypelint, "--help"], check=True, stdout=subprocess.PIPE).stdout.decode()
    options, formats, in_format = set(), [], False
    for line in text.splitlines():
        m = re.match(r"^  (-[\w-]+)(?:, (--[\w-]+))?", line)
        if m:
            options.update(o for o in m.groups() if o)
            in_format = m.group(2) == "--format"
            if in_format:
                line = line.split("FMT", 1)[1]
        elif not line.startswith("    "):
            in_format = False
        if in_format:
            formats += [w.split("(")[0].strip() for w in re.sub(r"\([^)]*\)", "", line).split("|")]
    return options, [f for f in formats if f]


def main():
    dtypelint, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    options, formats = help_facts(dtypelint)
    rules = subprocess.run([dtypelint, "--list-rules"], check=True,
                           stdout=subprocess.PIPE).stdout.decode().split()
    ids = [w for w in rules if re.fullmatch(r"DT[0-9]+", w)]
    failures = []
    if len(options) < 30 or len(formats) < 5 or len(ids) < 10:
        failures.append(f"--help/--list-rules parsed badly: {len(options)} options, "
                        f"formats {formats}, {len(ids)} rules")
    files = {"bash": "dtypelint.bash", "zsh": "_dtypelint", "fish": "dtypelint.fish"}
    format_lists = {
        "bash": r'-f \| --format\)\s*\n\s*COMPREPLY=\(\$\(compgen -W "([^"]*)"',
        "zsh": r"--format\}'\[[^]]*\]:format:\(([^)]*)\)",
        "fish": r"-l format -x -a '([^']*)'",
    }
    for shell, name in files.items():
        text = open(os.path.join(root, "completions", name)).read()
        code = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
        if shell == "fish":
            have = {"--" + o for o in re.findall(r" -l (\S+)", code)}
            have |= {"-" + o for o in re.findall(r" -s (\S)", code)}
        else:
            spec = code
            if shell == "bash":  # the list completed for a word starting with '-'
                spec = re.search(r'\$cur == -\* \]\]; then\s*COMPREPLY=\(\$\(compgen -W "([^"]*)"',
                                 code).group(1)
            else:  # the option of each _arguments spec
                spec = "\n".join(re.findall(r"^\t'(?:\([^)]*\))?\*?([^\[']+)", code, re.M))
            have = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", spec))
            have = {o for o in have if o in options or o.startswith("--")}
        for o in sorted(options - have):
            failures.append(f"{name}: no completion for {o} (in --help)")
        for o in sorted(have - options):
            failures.append(f"{name}: completes {o}, which --help does not list")
        m = re.search(format_lists[shell], code)
        if not m or m.group(1).split() != formats:
            failures.append(f"{name}: formats {m.group(1).split() if m else None}, "
                            f"--help lists {formats}")
    env = dict(os.environ, PATH=os.path.dirname(dtypelint) + os.pathsep + os.environ["PATH"])
    bash = os.path.join(root, "completions", "dtypelint.bash")
    for words, want in [("dtypelint --explain DT", ids), ("dtypelint -f ''", formats),
                        ("dtypelint --ign", ["--ignore"])]:
        script = (f"source {bash}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1));"
                  f" [ -z \"${{COMP_WORDS[COMP_CWORD]}}\" ] || true; _dtypelint;"
                  " printf '%s\\n' \"${COMPREPLY[@]}\"")
        if words.endswith("''"):
            script = script.replace("COMP_CWORD=$((${#COMP_WORDS[@]} - 1))",
                                    "COMP_WORDS+=(''); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))")
            script = script.replace(f"COMP_WORDS=({words})", f"COMP_WORDS=({words[:-3]})")
        got = subprocess.run(["bash", "-c", script], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE).stdout.decode().split()
        if sorted(set(got)) != sorted(set(want)):
            failures.append(f"bash: '{words}' completes {got}, want {want}")
    if shutil.which("fish"):
        fish = os.path.join(root, "completions", "dtypelint.fish")
        got = subprocess.run(["fish", "--no-config", "-c",
                              f"source {fish}; complete -C 'dtypelint --explain DT'"],
                             env=env, stdout=subprocess.PIPE).stdout.decode().splitlines()
        got = [line.split("\t")[0] for line in got]
        if sorted(got) != sorted(ids):
            failures.append(f"fish: '--explain DT' completes {got}, want {ids}")
    else:
        print("SKIP (part): fish is not installed; dtypelint.fish checked as text only")
    if shutil.which("zsh"):
        r = subprocess.run(["zsh", "-n", os.path.join(root, "completions", "_dtypelint")])
        if r.returncode:
            failures.append("_dtypelint: zsh -n fails")
    else:
        print("SKIP (part): zsh is not installed; _dtypelint checked as text only")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(options)} options, {len(formats)} formats, {len(ids)} rules checked")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
