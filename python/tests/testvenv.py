"""The tests' Python: <build>/venv/bin/python (tools/venv.sh makes it, with the pinned
transformers, accelerate, PEFT, TRL and torch 2.13.0 of tests/requirements.txt). A test script
calls in_venv(build_root) first: it re-runs itself there when another Python started it. Without
the venv it skips (exit 77, with the reason), or fails where DTL_REQUIRE_VENV=1 (CI sets it)."""
import os
import sys


def in_venv(build_root):
    python = os.path.join(os.path.abspath(build_root), "venv", "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(os.path.join(build_root, "venv")):
        return python
    if not os.access(python, os.X_OK):
        why = f"{python} is missing: make it with `sh tools/venv.sh {build_root}/venv`"
        if os.environ.get("DTL_REQUIRE_VENV") == "1":
            print(f"FAIL: {why} (DTL_REQUIRE_VENV=1)")
            sys.exit(1)
        print(f"SKIP: {why}")
        sys.exit(77)
    sys.stdout.flush()
    os.execv(python, [python] + sys.argv)
    return python  # not reached
