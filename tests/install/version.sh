#!/bin/sh
# --version: the release version, and in a git checkout also `git describe --always --dirty`
# (meson vcs_tag): "dtypelint 0.1.0 (git 36e2460-dirty)". usage: version.sh DTYPELINT
# SOURCE_ROOT RELEASE_VERSION
set -eu
got=$("$1" --version)
if [ -e "$2/.git" ] && command -v git >/dev/null; then
	want="dtypelint $3 (git $(git -C "$2" describe --always --dirty))"
else
	want="dtypelint $3"
fi
if [ "$got" != "$want" ]; then
	echo "FAIL: --version prints '$got', want '$want'"
	exit 1
fi
echo "ok: $got"
