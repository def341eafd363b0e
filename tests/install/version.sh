#!/bin/sh
# --version: `git describe --always --dirty` in a git checkout (meson vcs_tag), else the
# release version. usage: version.sh DTYPELINT SOURCE_ROOT RELEASE_VERSION
set -eu
got=$("$1" --version)
if [ -e "$2/.git" ] && command -v git >/dev/null; then
	want="dtypelint $(git -C "$2" describe --always --dirty)"
else
	want="dtypelint $3"
fi
if [ "$got" != "$want" ]; then
	echo "FAIL: --version prints '$got', want '$want'"
	exit 1
fi
echo "ok: $got"
