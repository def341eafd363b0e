#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The shell steps of action.yml and contrib/github-workflow.yml, run as GitHub would, on a
clean clone of the committed tree (HEAD), in a scratch workspace holding manifests.

usage: ci_steps.py SOURCE_ROOT BUILD_ROOT
Both install the dtypelint wheel with pip (issue 34 item 3); with no network, pip finds it in
a local wheel index (PIP_NO_INDEX, PIP_FIND_LINKS), the wheel this test builds from the clone
with meson-python. `sudo apt-get update` is skipped and `sudo apt-get install PKG...` checks
that each package is installed. The `uses:` steps are checked by hand: checkout is the
workspace, upload-sarif gets a SARIF file. `if:` conditions are evaluated (always(),
success(), inputs.X == 'v', hashFiles()). The action runs twice: on a clean workspace with the
default inputs (no upload), which must pass with annotations and a job summary; and on one
with findings, a file named -o.dtypelint.yaml and upload turned on, which must fail on the
findings, lint that file as a file and give upload-sarif its report.
The wheel is built with the tests' venv ($DTL_VENV_PYTHON, else BUILD_ROOT/venv/bin/python,
from `sh tools/venv.sh build/venv`). Skipped (77) when git or that venv is missing.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SUDO = """#!/bin/sh
# ci_steps.py's sudo: no network, so apt-get only checks what is installed
if [ "$1" = apt-get ] && [ "$2" = update ]; then exit 0; fi
if [ "$1" = apt-get ] && [ "$2" = install ]; then
    shift 2; missing=""
    for p in "$@"; do
        case $p in -*) continue ;; esac
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] || { echo "sudo apt-get install: not installed:$missing" >&2; exit 1; }
    exit 0
fi
exec "$@"
"""


def expr(text, ctx):
    """${{ ... }} with the few names the steps use."""
    def one(m):
        name = m.group(1).strip()
        if name not in ctx:
            raise KeyError(f"unknown expression {name}")
        return ctx[name]
    return re.sub(r"\$\{\{([^}]*)\}\}", one, str(text))


def condition(text, ctx, work, failed):
    """An `if:` of the few forms the steps use, evaluated as a runner would."""
    text = str(text).strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]

    def hashfiles(m):
        path = os.path.join(work, ctx[m.group(1).strip()])
        return "'x'" if os.path.isfile(path) else "''"
    text = re.sub(r"hashFiles\(([^)]*)\)", hashfiles, text)
    text = re.sub(r"(inputs\.[a-z-]+)", lambda m: repr(ctx[m.group(1)]), text)
    text = text.replace("always()", "True").replace("success()", str(not failed))
    text = text.replace("failure()", str(failed)).replace("&&", " and ").replace("||", " or ")
    if not re.fullmatch(r"[A-Za-z0-9_'\s=!.-]*", text):
        raise ValueError(f"cannot evaluate if: {text}")
    return bool(eval(text, {"__builtins__": {}}))  # only literals, comparisons and booleans


def run_steps(label, steps, env, ctx, work, failures):
    """Runs the steps; returns (the log, the names of the steps that failed)."""
    log, failed = [], []
    for step in steps:
        if "if" in step:
            if not condition(step["if"], ctx, work, bool(failed)):
                print(f"== {label}: {step.get('name', step.get('uses'))}: skipped (if)")
                continue
        elif failed:
            continue
        if "uses" in step:
            if step["uses"].startswith("github/codeql-action/upload-sarif"):
                sarif = os.path.join(work, expr(step["with"]["sarif_file"], ctx))
                try:
                    with open(sarif) as f:
                        runs = json.load(f)["runs"]
                    print(f"{label}: upload-sarif gets {sarif}: {len(runs[0]['results'])} results")
                    log.append(f"upload-sarif: {len(runs[0]['results'])} results")
                except (OSError, ValueError, KeyError, IndexError) as e:
                    failures.append(f"{label}: no SARIF for upload-sarif: {e}")
                # a private repository without code scanning refuses the upload: that must
                # never fail the check
                if label.startswith("action") and step.get("continue-on-error") is not True:
                    failures.append(f"{label}: upload-sarif has no continue-on-error: true")
            continue
        step_env = dict(env)
        for k, v in (step.get("env") or {}).items():
            step_env[k] = expr(v, ctx)
        with open(env["GITHUB_PATH"]) as f:
            extra = [l.strip() for l in f if l.strip()]
        step_env["PATH"] = os.pathsep.join(extra[::-1] + [env["PATH"]])
        script = expr(step["run"], ctx)
        print(f"== {label}: {step.get('name', script.splitlines()[0])}", flush=True)
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                           cwd=work, env=step_env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        print(r.stdout, end="", flush=True)
        log.append(r.stdout)
        if r.returncode != 0:
            failed.append(step.get("name"))
        with open(env["GITHUB_ENV"]) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v
    return "".join(log), failed


def build_wheel(py, clone, wheelhouse):
    """The wheel from the clone, as the release workflow makes it (meson-python)."""
    r = subprocess.run([py, "-m", "pip", "wheel", "--quiet", "--no-build-isolation", "--no-deps",
                        "--no-index", "--wheel-dir", wheelhouse, clone],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(r.stdout[-4000:])
        raise SystemExit("FAIL: pip wheel of the clone")
    wheel = [w for w in os.listdir(wheelhouse) if w.endswith(".whl")][0]
    return wheel.split("-")[1]


def workspace(tmp, label, clone, findings):
    """The user's repository: a clean manifest, and with findings a failing one and a failing
    one named like an option."""
    work = os.path.join(tmp, label + "-workspace")
    os.makedirs(os.path.join(work, "models"))
    shutil.copy(os.path.join(clone, "fixtures/rules/dt101-silent.yaml"),
                os.path.join(work, "models/ok.dtypelint.yaml"))
    if findings:
        shutil.copy(os.path.join(clone, "fixtures/rules/dt101-fires.yaml"),
                    os.path.join(work, "models/failing.dtypelint.yaml"))
        # at the top, where a glob expands to a name that starts with -
        shutil.copy(os.path.join(clone, "fixtures/rules/dt101-fires.yaml"),
                    os.path.join(work, "-o.dtypelint.yaml"))
    return work


def runner_env(tmp, label, shims, wheelhouse, work):
    runner = os.path.join(tmp, label + "-runner")
    os.makedirs(runner)
    env = {"PATH": shims + os.pathsep + os.environ["PATH"], "HOME": tmp,
           "RUNNER_OS": "Linux", "RUNNER_TEMP": runner,
           "GITHUB_PATH": os.path.join(runner, "path"),
           "GITHUB_ENV": os.path.join(runner, "env"),
           "GITHUB_OUTPUT": os.path.join(runner, "output"),
           "GITHUB_STEP_SUMMARY": os.path.join(runner, "summary.md"),
           "GITHUB_SERVER_URL": "https://github.com", "GITHUB_WORKSPACE": work,
           # no network: pip reads only the wheel this test built
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": wheelhouse, "PIP_CONFIG_FILE": os.devnull,
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "XDG_CACHE_HOME": os.path.join(runner, "cache")}
    for name in ("GITHUB_PATH", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        open(env[name], "w").close()
    return env


def check_run(label, log, failed, env, work, failures, findings, upload):
    with open(env["GITHUB_STEP_SUMMARY"]) as f:
        summary = f.read()
    # the Markdown report in the job summary (issue 26)
    if "dtypelint" not in summary:
        failures.append(f"{label}: nothing in the job summary: {summary[:200]!r}")
    if findings:
        # annotations on the failing manifests, -o.dtypelint.yaml linted as a file
        for name in ("models/failing.dtypelint.yaml", "-o.dtypelint.yaml"):
            if not re.search(r"^::error file=" + re.escape(name) + r",line=6,", log, re.M):
                failures.append(f"{label}: no -f github annotation on {name}")
        if os.path.exists(os.path.join(work, ".dtypelint.yaml")):
            failures.append(f"{label}: -o.dtypelint.yaml was read as -o: .dtypelint.yaml written")
        if not failed or failed[-1] != "Findings" and not label.startswith("workflow"):
            failures.append(f"{label}: the findings did not fail the check: {failed}")
    elif failed:
        failures.append(f"{label}: steps failed on a clean workspace: {failed}")
    if label.startswith("action"):
        if "::add-matcher::" not in log or "contrib/dtypelint-matcher.json" not in log:
            failures.append(f"{label}: the problem matcher was not registered")
        if upload != ("upload-sarif:" in log):
            failures.append(f"{label}: upload is {upload}, but upload-sarif ran: {not upload}")


def main():
    root = os.path.abspath(sys.argv[1])
    build = os.path.abspath(sys.argv[2])
    if not shutil.which("git"):
        print("SKIP: git is not installed")
        return 77
    py = os.environ.get("DTL_VENV_PYTHON") or os.path.join(build, "venv/bin/python")
    if not os.access(py, os.X_OK) or subprocess.run([py, "-c", "import mesonpy"]).returncode:
        print(f"SKIP: {py} has no meson-python to build the wheel (sh tools/venv.sh build/venv)")
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        clone = os.path.join(tmp, "dtypelint")
        subprocess.run(["git", "clone", "--quiet", root, clone], check=True)
        wheelhouse = os.path.join(tmp, "wheelhouse")
        version = build_wheel(py, clone, wheelhouse)
        shims = os.path.join(tmp, "shims")
        os.makedirs(shims)
        if os.getuid() == 0 or not shutil.which("sudo"):
            with open(os.path.join(shims, "sudo"), "w") as f:
                f.write(SUDO)
            os.chmod(os.path.join(shims, "sudo"), 0o755)
        with open(os.path.join(clone, "action.yml")) as f:
            action = yaml.safe_load(f)
        with open(os.path.join(clone, "contrib/github-workflow.yml")) as f:
            workflow = yaml.safe_load(f)
        defaults = {"inputs." + k: str(v.get("default", "")) for k, v in action["inputs"].items()}
        runs = [("action-clean", False, {"inputs.files": "models/*.dtypelint.yaml"}),
                ("action-findings", True, {"inputs.files": "*.dtypelint.yaml\nmodels/**/*.dtypelint.yaml\n",
                                           "inputs.upload": "true"}),
                ("workflow", True, {})]
        for label, findings, inputs in runs:
            work = workspace(tmp, label, clone, findings)
            env = runner_env(tmp, label, shims, wheelhouse, work)
            if label == "workflow":
                env.update({k: str(v) for k, v in workflow.get("env", {}).items()})
                env["DTYPELINT_VERSION"] = version
                # the workspace's top too, where -o.dtypelint.yaml lies
                env["MANIFESTS"] = "*.dtypelint.yaml " + env["MANIFESTS"]
                steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
                ctx = {}
            else:
                steps = action["runs"]["steps"]
                ctx = dict(defaults, **inputs)
                ctx.update({"github.action_path": clone, "github.action_ref": "",
                            "github.action_repository": ""})
            log, failed = run_steps(label, steps, env, ctx, work, failures)
            check_run(label, log, failed, env, work, failures, findings,
                      ctx.get("inputs.upload") == "true")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
