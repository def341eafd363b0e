#!/bin/sh
# SPDX-License-Identifier: MIT
# `meson dist` from a clean clone of HEAD (issue 34 item 4): it builds the tarball, unpacks
# it, builds it and runs its own test suite (the quick setup); all must pass. The tarball
# carries .tarball-version (tools/dist-version.sh), so that a build from it, which has no git
# tags, has the release's version. Tests that need what a tarball lacks skip themselves: a git
# checkout (readme-walk); the real-file corpus is in the tarball (fixtures/corpus). Several
# minutes on 2 cores (a whole build and test run), so in the install-slow suite. The build
# folder is inside the checkout, as users make it: meson dist unpacks the tarball there, inside
# a git repository.
# usage: dist.sh SOURCE_ROOT
set -eu
root=$1
command -v git >/dev/null || { echo "SKIP: git is not installed"; exit 77; }
[ -e "$root/.git" ] || { echo "SKIP: not a git checkout"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone --quiet "$root" "$tmp/src"
cd "$tmp/src"
start=$(date +%s)
# the tarball's build has no venv (tools/venv.sh): the tests that need the real libraries skip
# there, as a user's tarball build would; CI runs them in its main build (DTL_REQUIRE_VENV=1)
unset DTL_REQUIRE_VENV
meson setup "$tmp/src/build" >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; echo "FAIL: meson setup"; exit 1; }
version=$(meson introspect --projectinfo "$tmp/src/build" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
if ! meson dist -C "$tmp/src/build" --formats xztar >"$tmp/dist.log" 2>&1; then
	grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|ERROR|TIMEOUT)' "$tmp/dist.log" || tail -40 "$tmp/dist.log"
	echo "FAIL: meson dist (its tests: $tmp/src/build/meson-private/dist-build/meson-logs/testlog.txt)"
	exit 1
fi
grep -E '^(Ok|Fail|Skipped):' "$tmp/dist.log"
tarball="$tmp/src/build/meson-dist/dtypelint-$version.tar.xz"
[ -f "$tarball" ] || { ls "$tmp/src/build/meson-dist"; echo "FAIL: no $tarball"; exit 1; }
got=$(tar -xJOf "$tarball" "dtypelint-$version/.tarball-version")
[ "$got" = "$version" ] || { echo "FAIL: .tarball-version is '$got', want '$version'"; exit 1; }
echo "ok: meson dist of $version passes its tests ($(($(date +%s) - start)) s)"
