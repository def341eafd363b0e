#!/usr/bin/env python3
"""The problem matchers of contrib/ (GitHub Actions and the VS Code task), applied to real text
output, extract file, line, column, severity, message and code of every error, warning and
info finding (GitHub: info as a notice; the importers' warnings on standard error as DT003,
which --ignore silences), and match nothing else (notes and details are not problems). The
truth comes from the same run's json-lines output. Colour codes (--color always) must not change the result.

Usage: problem-matcher.py DTYPELINT SOURCE_ROOT
"""
import json
import os
import re
import subprocess
import sys

dtypelint, root = os.path.abspath(sys.argv[1]), sys.argv[2]
os.chdir(root)
INPUTS = ["fixtures/rules/dt101-fires.yaml", "fixtures/rules/dt102-orig-params.yaml",
          "fixtures/cli/suppress/listed.yaml", "fixtures/cli/formats/many-units.yaml",
          "fixtures/cli/config/orig-params.yaml", "fixtures/rules/dt203-fires.yaml",
          "fixtures/cli/formats/odd,100%.yaml"]
INPUTS = [p for p in INPUTS if os.path.exists(p)]


def run(*args):
    return subprocess.run([dtypelint, "-q", *args, *INPUTS], capture_output=True, text=True,
                          check=False).stdout


def js_to_python(regexp):
    # the matchers are ECMAScript (VS Code) and .NET (GitHub) regexes; this subset is also
    # Python's
    return re.compile(regexp)


def extract(pattern, text):
    got = []
    for line in text.splitlines():
        m = pattern["re"].match(line)
        if not m:
            continue
        g = lambda key: m.group(pattern[key]) if key in pattern else None  # noqa: E731
        got.append((g("file"), int(g("line")), int(g("column")),
                    g("severity") or pattern.get("fixed_severity"), g("message"), g("code")))
    return got


truth = []
for line in run("-f", "json-lines").splitlines():
    f = json.loads(line)
    truth.append((f["location"]["file"], f["location"]["line"], f["location"]["column"],
                  f["severity"], f["message"], f["rule"]))
if not any(t[3] == "error" for t in truth) or not any(t[3] == "warning" for t in truth):
    sys.exit("the inputs give no error and warning findings to match")

failures = 0


def check(name, patterns, severities):
    global failures
    expected = sorted(t for t in truth if t[3] in severities)
    for color in ("never", "always"):
        text = run("--color", color)
        got = []
        for p in patterns:
            got += extract(p, text)
        got.sort()
        if got != expected:
            failures += 1
            print(f"{name} (--color {color}): extracted {len(got)} problems, expected "
                  f"{len(expected)}")
            for item in sorted(set(got) ^ set(expected)):
                print("  ", "unexpected" if item in got else "missing", item)
        else:
            print(f"{name} (--color {color}): {len(got)} problems, every field right")


def compile_pattern(p, fixed_severity=None):
    out = dict(p)
    out["re"] = js_to_python(p["regexp"])
    if fixed_severity:
        out["fixed_severity"] = fixed_severity
    return out


gh = json.load(open("contrib/dtypelint-matcher.json"))
owners = [m["owner"] for m in gh["problemMatcher"]]
assert len(set(o.lower() for o in owners)) == len(owners), "the runner refuses a repeated owner"
gh_patterns = []
for matcher in gh["problemMatcher"]:
    assert matcher["owner"].startswith("dtypelint")
    assert len(matcher["pattern"]) == 1, "one line per problem"
    # the runner's severities: error, warning, notice (an info finding is a notice)
    assert matcher.get("severity", "error") in ("error", "warning", "notice")
    default = {"notice": "info", "warning": "warning"}.get(matcher.get("severity", ""))
    gh_patterns.append(compile_pattern(matcher["pattern"][0], default))
check("GitHub problem matcher", gh_patterns, {"error", "warning", "info"})

# the near-miss warning of an importer, on standard error (the runner reads both streams)
typo = subprocess.run([dtypelint, "-q", "fixtures/import/tiny-qwen2", "--trainer-args",
                       "fixtures/recipes/alignment-handbook-qlora-fsdp-typo.yaml"],
                      capture_output=True, text=True, check=False).stderr
near = [line for line in typo.splitlines() if "is not a key dtypelint reads" in line]
got = [x for p in gh_patterns for line in near for x in extract(p, line)]
want = [("fixtures/recipes/alignment-handbook-qlora-fsdp-typo.yaml", 25, 1, "warning")]
if not near or [g[:4] for g in got] != want or "bnb_4bit_quant_storge" not in got[0][4] \
        or got[0][5] != "DT003":
    failures += 1
    print(f"GitHub problem matcher: the near-miss warning {near} gave {got}, want {want} "
          f"with its rule DT003")
else:
    print(f"GitHub problem matcher: the near-miss warning on stderr: {got[0][4]}")

# --ignore DT003 silences them, as it would a finding; --select does not
for extra, want_line in ((["--ignore", "DT003"], False), (["--ignore", "input-warning"], False),
                         (["--select", "DT4"], True)):
    err = subprocess.run([dtypelint, "-q", *extra, "fixtures/import/tiny-qwen2", "--trainer-args",
                          "fixtures/recipes/alignment-handbook-qlora-fsdp-typo.yaml"],
                         capture_output=True, text=True, check=False).stderr
    if ("[DT003 input-warning]" in err) != want_line:
        failures += 1
        print(f"{extra}: the near-miss warning {'missing' if want_line else 'printed'}")

vs = json.load(open("contrib/vscode-tasks.json"))
task = vs["tasks"][0]
patterns = []
severities = set()
for pm in task["problemMatcher"]:
    assert pm["owner"] == "dtypelint"
    if "severity" in pm:  # the info matcher: no severity group
        patterns.append(compile_pattern(pm["pattern"], pm["severity"] == "info" and "info"))
        severities.add("info")
    else:
        patterns.append(compile_pattern(pm["pattern"]))
        severities |= {"error", "warning"}
check("VS Code task", patterns, severities)
sys.exit(1 if failures else 0)
