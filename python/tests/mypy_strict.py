#!/usr/bin/env python3
"""The package's types as a user's type checker sees them (issue 38 item 3): mypy --strict (the
pinned mypy of tests/requirements.txt) passes on typed_user.py, a user's script that calls
check() and reads every field of a Finding, with the package found as an installed one (so its
py.typed marker decides whether mypy reads it at all); and on the package itself but its
oracle. Usage: mypy_strict.py SOURCE_ROOT BUILD_ROOT (re-runs itself in BUILD_ROOT/venv)."""
import os
import subprocess
import sys
import tempfile

ROOT, BUILD = (os.path.abspath(a) for a in sys.argv[1:3])
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from testvenv import in_venv  # noqa: E402

python = in_venv(BUILD)
package = os.path.join(ROOT, "python", "dtypelint")
failures = 0
with tempfile.TemporaryDirectory() as cache:
    runs = [("typed_user.py", [os.path.join(HERE, "typed_user.py")]),
            ("the package", ["-p", "dtypelint", "--exclude", "oracle"])]
    for what, args in runs:
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", cache,
                              *args], env=env, capture_output=True, text=True, cwd=cache)
        print(f"mypy --strict {what}: exit {run.returncode}\n{run.stdout}{run.stderr}")
        failures += run.returncode != 0
sys.exit(1 if failures else 0)
