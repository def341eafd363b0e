#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The built completions (bash, zsh, fish) against the binary: every option of --help and no other,
every format of --help's -f list, and, run in the real shells where they are installed (bash
always; fish and zsh skipped, with a message, when missing), the rule ids of --list-rules,
--opt=value (--format=s, --fail-on=e), comma lists (--select DT101,DT1) and the set-up names of
the nearest .dtypelint.yaml or --config's (issue 38 item 5): bash through its COMP_WORDS and
the completion function, alone and under bash-completion; zsh in a pseudo-terminal with a
typed TAB; fish with `complete -C`.

usage: completions.py DTYPELINT COMPLETIONS
(COMPLETIONS: the folder of the built completions, build/completions: tools/gen-completions.c
writes them from completions/*.in and src/cli/option-table.h)
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


CONFIG = """# set-ups, block and flow style
plan: {strategy: fsdp1}
setups:
  - name: zero3-lora
    model: m.yaml
  - {name: "fsdp1-full", model: m.yaml}
  - model: m.yaml
    name: 'zero3-qlora'
limits: {max-depth: 64}
"""


def bash_cases(ids, formats):
    """(COMP_WORDS as bash splits them with its default COMP_WORDBREAKS, which holds '=',
    the wanted replies): --opt=value, comma lists, set-up names."""
    dt1 = [i for i in ids if i.startswith("DT1")]
    return [
        (["--explain", "DT"], ids),
        (["-f", ""], formats),
        (["--ign"], ["--ignore"]),
        (["--format", "=", "s"], ["sarif"]),
        (["--format", "="], formats),
        (["--format=s"], ["--format=sarif"]),  # a COMP_WORDBREAKS without '='
        (["--fail-on", "=", "e"], ["error"]),
        (["--fail-on", "e"], ["error"]),
        (["--color", "=", "a"], ["always", "auto"]),
        (["--select", "DT101,DT1"], [f"DT101,{i}" for i in dt1] if len(dt1) > 1 else
         [f"DT101,{dt1[0]}"]),
        (["--ignore", "=", "DT101,DT2"], [f"DT101,{i}" for i in ids if i.startswith("DT2")]),
        (["--setup", ""], ["zero3-lora", "fsdp1-full", "zero3-qlora"]),
        (["--setup", "zero3"], ["zero3-lora", "zero3-qlora"]),
        (["--setup", "=", "f"], ["fsdp1-full"]),
        (["--config", "other.yaml", "--setup", ""], ["other-setup"]),
        (["--no-config", "--setup", ""], []),
    ]


def drive_bash(root, env, ids, formats):
    """The bash completion driven as bash drives it (COMP_WORDS, COMP_CWORD, then the
    function), alone and under bash-completion's own library where it is installed, in a
    folder whose .dtypelint.yaml names set-ups. Returns the number of failures."""
    import tempfile
    bash = os.path.join(root, "dtypelint")
    libraries = [""]
    if os.path.exists("/usr/share/bash-completion/bash_completion"):
        libraries.append("source /usr/share/bash-completion/bash_completion;")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, ".dtypelint.yaml"), "w") as f:
            f.write(CONFIG)
        with open(os.path.join(tmp, "other.yaml"), "w") as f:
            f.write("setups:\n  - name: other-setup\n    model: m.yaml\n")
        os.mkdir(os.path.join(tmp, "sub"))
        for library in libraries:
            for words, want in bash_cases(ids, formats):
                quoted = " ".join("'" + w + "'" for w in ["dtypelint"] + words)
                script = (f"{library} source {bash}; COMP_WORDS=({quoted}); "
                          "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
                          "COMP_LINE=\"${COMP_WORDS[*]}\"; COMP_POINT=${#COMP_LINE}; "
                          "_dtypelint dtypelint \"${COMP_WORDS[COMP_CWORD]}\" "
                          "\"${COMP_WORDS[COMP_CWORD-1]}\"; printf '%s\\n' \"${COMPREPLY[@]}\"")
                # from a sub-folder: the nearest .dtypelint.yaml is the parent's
                got = subprocess.run(["bash", "-c", script], env=env, cwd=os.path.join(tmp, "sub")
                                     if "--config" not in words else tmp,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE
                                     ).stdout.decode().split()
                if sorted(set(got)) != sorted(set(want)):
                    failures += 1
                    where = "with bash-completion" if library else "alone"
                    print(f"FAIL: bash ({where}): 'dtypelint {' '.join(words)}' completes "
                          f"{got}, want {want}")
    return failures


def drive_zsh(root, env, ids):
    """zsh's own completion system (compinit) in a pseudo-terminal: a line typed with a TAB,
    then Enter, runs a function that prints the completed words. Returns the failures."""
    import pty
    import tempfile
    import time
    unique = [i for i in ids if i.startswith("DT13")]
    cases = [("--format=s", "--format=sarif"), ("--fail-on=e", "--fail-on=error"),
             ("--color=al", "--color=always"), ("--setup zero3-l", "--setup zero3-lora"),
             ("--setup=fsdp", "--setup=fsdp1-full")]
    if len(unique) == 1:
        cases.append(("--select DT101,DT13", f"--select DT101,{unique[0]}"))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, ".dtypelint.yaml"), "w") as f:
            f.write(CONFIG)
        for typed, want in cases:
            script = (f"fpath=({root} $fpath); autoload -Uz compinit; "
                      "compinit -u -d $PWD/.zcompdump; compdef _dtypelint fakelint; "
                      "fakelint() { print -r -- \"ARGS:$*:END\" }; PS1='> '")
            pid, fd = pty.fork()
            if pid == 0:
                os.chdir(tmp)
                os.execve("/bin/sh", ["sh", "-c", "exec zsh -f -i"], dict(env, TERM="dumb"))
            out = b""

            def send(data, wait=1.0):
                nonlocal out
                os.write(fd, data)
                end = time.time() + wait
                while time.time() < end:
                    import select
                    r, _, _ = select.select([fd], [], [], 0.1)
                    if r:
                        try:
                            out += os.read(fd, 65536)
                        except OSError:
                            return
            send(script.encode() + b"\n", 2.0)
            send(b"fakelint " + typed.encode() + b"\t", 2.0)
            send(b"\n", 1.0)
            send(b"exit\n", 0.5)
            os.waitpid(pid, 0)
            import re as _re
            got = _re.findall(r"ARGS:(.*?):END", out.decode("utf-8", "replace"))
            if not got or got[-1].strip() != want:
                failures += 1
                print(f"FAIL: zsh: 'fakelint {typed}<TAB>' gave {got[-1:] or out[-300:]}, "
                      f"want {want!r}")
    return failures


def drive_fish(fish, env, ids, formats):
    """fish's `complete -C` on --opt=value, comma lists and set-up names, in a folder whose
    .dtypelint.yaml names set-ups. Returns the failures."""
    import tempfile
    cases = [("--format=s", ["--format=sarif"]), ("--fail-on=e", ["--fail-on=error"]),
             ("--format ", formats),
             ("--select DT101,DT1", [f"DT101,{i}" for i in ids if i.startswith("DT1")]),
             ("--ignore=DT2", [f"--ignore={i}" for i in ids if i.startswith("DT2")]),
             ("--setup ", ["zero3-lora", "fsdp1-full", "zero3-qlora"]),
             ("--setup=z", ["--setup=zero3-lora", "--setup=zero3-qlora"])]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, ".dtypelint.yaml"), "w") as f:
            f.write(CONFIG)
        for typed, want in cases:
            run = subprocess.run(["fish", "--no-config", "-c",
                                  f"source {fish}; complete -C 'dtypelint {typed}'"],
                                 env=env, cwd=tmp, stdout=subprocess.PIPE)
            got = [line.split("\t")[0] for line in run.stdout.decode().splitlines()]
            if sorted(set(got)) != sorted(set(want)):
                failures += 1
                print(f"FAIL: fish: 'dtypelint {typed}' completes {got}, want {want}")
    return failures


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
    files = {"bash": "dtypelint", "zsh": "_dtypelint", "fish": "dtypelint.fish"}
    format_lists = {
        "bash": r'-f \| --format\)\s*\n\s*COMPREPLY=\(\$\(compgen -W "([^"]*)"',
        "zsh": r"--format=?\}'\[[^]]*\]:\w+:\(([^)]*)\)",
        "fish": r"-l format -x -a '([^']*)'",
    }
    for shell, name in files.items():
        text = open(os.path.join(root, name)).read()
        code = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
        if shell == "fish":  # the complete commands, not the helper functions' `set -l`
            specs = "\n".join(l for l in code.splitlines() if l.startswith("complete -c "))
            have = {"--" + o for o in re.findall(r" -l (\S+)", specs)}
            have |= {"-" + o for o in re.findall(r" -s (\S)", specs)}
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
    shell_failures = drive_bash(root, env, ids, formats)
    if shutil.which("fish"):
        fish = os.path.join(root, "dtypelint.fish")
        got = subprocess.run(["fish", "--no-config", "-c",
                              f"source {fish}; complete -C 'dtypelint --explain DT'"],
                             env=env, stdout=subprocess.PIPE).stdout.decode().splitlines()
        got = [line.split("\t")[0] for line in got]
        if sorted(got) != sorted(ids):
            failures.append(f"fish: '--explain DT' completes {got}, want {ids}")
        shell_failures += drive_fish(fish, env, ids, formats)
    else:
        print("SKIP (part): fish is not installed; dtypelint.fish checked as text only")
    if shutil.which("zsh"):
        r = subprocess.run(["zsh", "-n", os.path.join(root, "_dtypelint")])
        if r.returncode:
            failures.append("_dtypelint: zsh -n fails")
        shell_failures += drive_zsh(root, env, ids)
    else:
        print("SKIP (part): zsh is not installed; _dtypelint checked as text only")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(options)} options, {len(formats)} formats, {len(ids)} rules checked")
    return 1 if failures or shell_failures else 0


if __name__ == "__main__":
    sys.exit(main())
