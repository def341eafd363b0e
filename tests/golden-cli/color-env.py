#!/usr/bin/env python3
"""--color auto and the environment (issue 38 item 6): FORCE_COLOR (https://force-color.org:
present and not empty, whatever its value) and CLICOLOR_FORCE (not empty and not "0") colour
piped output, as CI logs that render ANSI want; NO_COLOR (https://no-color.org) wins over both;
--color always|never wins over every variable; TERM=dumb turns auto off but not a forced
colour; only the text format is ever coloured. On a terminal (a pty), auto colours.
Usage: color-env.py DTYPELINT SOURCE_ROOT"""
import os
import pty
import subprocess
import sys

dtypelint, root = os.path.abspath(sys.argv[1]), sys.argv[2]
os.chdir(root)
INPUT = "fixtures/rules/dt101-fires.yaml"
VARS = ("FORCE_COLOR", "CLICOLOR_FORCE", "NO_COLOR", "TERM", "CLICOLOR")
CASES = [  # (environment, extra options, coloured?)
    ({}, [], False),
    ({"FORCE_COLOR": "1"}, [], True),
    ({"FORCE_COLOR": "0"}, [], True),
    ({"FORCE_COLOR": "false"}, [], True),
    ({"FORCE_COLOR": ""}, [], False),
    ({"CLICOLOR_FORCE": "1"}, [], True),
    ({"CLICOLOR_FORCE": "0"}, [], False),
    ({"CLICOLOR_FORCE": ""}, [], False),
    ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, [], False),
    ({"NO_COLOR": "1", "CLICOLOR_FORCE": "1"}, [], False),
    ({"NO_COLOR": "", "FORCE_COLOR": "1"}, [], True),
    ({"FORCE_COLOR": "1", "TERM": "dumb"}, [], True),
    ({"FORCE_COLOR": "1"}, ["--color", "never"], False),
    ({"NO_COLOR": "1"}, ["--color", "always"], True),
    ({"FORCE_COLOR": "1"}, ["-f", "json"], False),
    ({"FORCE_COLOR": "1"}, ["--statistics"], False),
]
failures = 0
base = {k: v for k, v in os.environ.items() if k not in VARS}
for env, options, want in CASES:
    run = subprocess.run([dtypelint, "-q", *options, INPUT], env=dict(base, **env),
                         capture_output=True)
    got = b"\x1b[" in run.stdout
    if got != want or run.returncode != 1:
        failures += 1
        print(f"FAIL: {env} {options}: coloured={got}, want {want} (exit {run.returncode})")
for env, want in (({}, True), ({"NO_COLOR": "1"}, False), ({"TERM": "dumb"}, False)):
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(dtypelint, [dtypelint, "-q", INPUT], dict(base, **env))
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    if (b"\x1b[" in out) != want:
        failures += 1
        print(f"FAIL: on a terminal with {env}: coloured={not want}, want {want}")
print(f"{len(CASES) + 3} cases, {failures} failures")
sys.exit(1 if failures else 0)
