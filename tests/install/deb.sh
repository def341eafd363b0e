#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian package (debian/, issue 34 item 4) from a clean clone of HEAD: `dpkg-buildpackage
# -us -uc -b` builds it, lintian accepts it (no error or warning), dpkg installs it into a
# scratch root (--root: the test never changes the machine's own packages), and the installed
# program lints the bundled example (exit 1, DT121) and has its man page and completions.
# About 1 to 2 minutes on 2 cores (the build). Skipped (77) when dpkg-buildpackage, debhelper,
# lintian, git or a build dependency is missing.
# usage: deb.sh SOURCE_ROOT
set -eu
root=$1
for tool in dpkg-buildpackage dh lintian git; do
	command -v $tool >/dev/null 2>&1 ||
		{ echo "SKIP: $tool is not installed (apt-get install dpkg-dev debhelper lintian git)"; exit 77; }
done
[ -e "$root/.git" ] || { echo "SKIP: not a git checkout"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
git clone --quiet "$root" "$tmp/src"
cd "$tmp/src"
if ! dpkg-checkbuilddeps >"$tmp/deps" 2>&1; then
	cat "$tmp/deps"
	echo "SKIP: build dependencies are missing"
	exit 77
fi
start=$(date +%s)
dpkg-buildpackage -us -uc -b >"$tmp/build.log" 2>&1 || { tail -60 "$tmp/build.log"; fail "dpkg-buildpackage"; }
echo "dpkg-buildpackage: $(($(date +%s) - start)) s"
deb=$(ls "$tmp"/dtypelint_*.deb)
changes=$(ls "$tmp"/dtypelint_*.changes)
# lintian: no error and no warning (informational tags are listed, not fatal)
lintian --fail-on error,warning --info "$changes" >"$tmp/lintian.log" 2>&1 ||
	{ cat "$tmp/lintian.log"; fail "lintian"; }
cat "$tmp/lintian.log"
# dpkg -i into a scratch root
r="$tmp/root"
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates"
: >"$r/var/lib/dpkg/status"
dpkg --root="$r" --force-not-root --force-depends --force-script-chrootless --log=/dev/null \
	-i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i"; }
dpkg --root="$r" -s dtypelint | grep -q '^Status: install ok installed' || fail "not installed"
for f in usr/bin/dtypelint usr/share/man/man1/dtypelint.1.gz usr/share/man/man5/dtypelint-manifest.5.gz \
	usr/share/bash-completion/completions/dtypelint usr/share/dtypelint/schemas/manifest.schema.json \
	usr/share/doc/dtypelint/copyright usr/share/doc/dtypelint/rules/DT121.md; do
	[ -e "$r/$f" ] || fail "the package has no /$f"
done
"$r/usr/bin/dtypelint" --version
status=0
"$r/usr/bin/dtypelint" "$root/fixtures/examples/qwen2-lora-zero3.yaml" >"$tmp/out" 2>&1 || status=$?
[ $status = 1 ] && grep -q '\[DT121 ' "$tmp/out" || { cat "$tmp/out"; fail "the example: exit $status"; }
echo "ok: $(basename "$deb") builds, passes lintian, installs and runs ($(($(date +%s) - start)) s)"
