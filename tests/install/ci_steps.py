#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The shell steps of action.yml and contrib/github-workflow.yml, run as GitHub would, on a
clean clone of the committed tree (HEAD), in a scratch workspace holding manifests.

usage: ci_steps.py SOURCE_ROOT
`sudo apt-get update` is skipped (no network) and `sudo apt-get install PKG...` checks that
each package is installed (the list must be enough to build: the build step proves it). The
`uses:` steps are checked by hand: checkout is the workspace, upload-sarif gets a SARIF file.
Skipped (77) when git, meson or ninja is missing.
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


def run_steps(label, steps, env, ctx, work, failures):
    for step in steps:
        if "uses" in step:
            if step["uses"].startswith("github/codeql-action/upload-sarif"):
                sarif = os.path.join(work, expr(step["with"]["sarif_file"], ctx))
                try:
                    with open(sarif) as f:
                        runs = json.load(f)["runs"]
                    print(f"{label}: upload-sarif gets {sarif}: {len(runs[0]['results'])} results")
                except (OSError, ValueError, KeyError, IndexError) as e:
                    failures.append(f"{label}: no SARIF for upload-sarif: {e}")
            continue
        if "if" in step and "inputs.fail" in str(step["if"]):
            pass
        step_env = dict(env)
        for k, v in (step.get("env") or {}).items():
            step_env[k] = expr(v, ctx)
        with open(env["GITHUB_PATH"]) as f:
            extra = [l.strip() for l in f if l.strip()]
        step_env["PATH"] = os.pathsep.join(extra[::-1] + [env["PATH"]])
        script = expr(step["run"], ctx)
        print(f"== {label}: {step.get('name', script.splitlines()[0])}", flush=True)
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                           cwd=work, env=step_env)
        if r.returncode != 0:
            failures.append(f"{label}: step '{step.get('name')}' exited {r.returncode}")
            return
        with open(env["GITHUB_ENV"]) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v


def main():
    root = os.path.abspath(sys.argv[1])
    for tool in ("git", "meson", "ninja"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed")
            return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        clone = os.path.join(tmp, "dtypelint")
        subprocess.run(["git", "clone", "--quiet", root, clone], check=True)
        branch = subprocess.run(["git", "-C", clone, "rev-parse", "--abbrev-ref", "HEAD"],
                                check=True, stdout=subprocess.PIPE).stdout.decode().strip()
        shims = os.path.join(tmp, "shims")
        os.makedirs(shims)
        if os.getuid() == 0 or not shutil.which("sudo"):
            with open(os.path.join(shims, "sudo"), "w") as f:
                f.write(SUDO)
            os.chmod(os.path.join(shims, "sudo"), 0o755)
        for label, path in (("workflow", "contrib/github-workflow.yml"), ("action", "action.yml")):
            with open(os.path.join(clone, path)) as f:
                doc = yaml.safe_load(f)
            work = os.path.join(tmp, label + "-workspace")
            runner = os.path.join(tmp, label + "-runner")
            os.makedirs(os.path.join(work, "models"))
            os.makedirs(runner)
            # the user's repository: a clean manifest and one with a finding
            shutil.copy(os.path.join(clone, "fixtures/rules/dt101-silent.yaml"),
                        os.path.join(work, "models/ok.dtypelint.yaml"))
            env = {"PATH": shims + os.pathsep + os.environ["PATH"], "HOME": tmp,
                   "RUNNER_TEMP": runner, "GITHUB_PATH": os.path.join(runner, "path"),
                   "GITHUB_ENV": os.path.join(runner, "env"),
                   "GITHUB_STEP_SUMMARY": os.path.join(runner, "summary.md"),
                   "GITHUB_SERVER_URL": "https://github.com", "GITHUB_WORKSPACE": work}
            open(env["GITHUB_PATH"], "w").close()
            open(env["GITHUB_ENV"], "w").close()
            open(env["GITHUB_STEP_SUMMARY"], "w").close()
            if label == "workflow":
                env.update({k: str(v) for k, v in doc.get("env", {}).items()})
                env["DTYPELINT_GIT"], env["DTYPELINT_REF"] = clone, branch
                steps = [s for job in doc["jobs"].values() for s in job["steps"]]
                ctx = {}
            else:
                steps = doc["runs"]["steps"]
                ctx = {"github.action_path": clone, "github.action_repository": "",
                       "github.action_ref": "", "inputs.args": "models/*.dtypelint.yaml",
                       "inputs.sarif-file": doc["inputs"]["sarif-file"]["default"],
                       "inputs.summary": doc["inputs"]["summary"]["default"]}
            run_steps(label, steps, env, ctx, work, failures)
            # both write the Markdown report to the job summary (issue 26)
            with open(env["GITHUB_STEP_SUMMARY"]) as f:
                summary = f.read()
            if "dtypelint" not in summary:
                failures.append(f"{label}: nothing in the job summary: {summary[:200]!r}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
