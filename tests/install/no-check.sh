#!/bin/sh
# SPDX-License-Identifier: MIT
# Building dtypelint needs no test library (issue 34): with pkg-config seeing only libcjson and
# yaml-0.1 (no Check), a plain `meson setup` must succeed and say that the tests are not built
# (-Dtests=auto), while -Dtests=enabled must fail for want of Check. Configure only (seconds).
# usage: no-check.sh SOURCE_ROOT
set -u
root=$1
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/pc"
for lib in libcjson yaml-0.1; do
	pc=$(pkg-config --variable=pcfiledir $lib 2>/dev/null) || { echo "SKIP: no $lib.pc"; exit 77; }
	cp "$pc/$lib.pc" "$tmp/pc/"
done
export PKG_CONFIG_LIBDIR="$tmp/pc" PKG_CONFIG_PATH=
if ! meson setup "$tmp/build" "$root" >"$tmp/setup.log" 2>&1; then
	tail -20 "$tmp/setup.log"
	echo "FAIL: meson setup without Check failed"
	exit 1
fi
grep -Eq '^ *tests *: *(false|NO)' "$tmp/setup.log" ||
	{ tail -20 "$tmp/setup.log"; echo "FAIL: the summary does not say the tests are off"; exit 1; }
if meson setup "$tmp/build2" "$root" -Dtests=enabled >"$tmp/setup2.log" 2>&1; then
	echo "FAIL: -Dtests=enabled configured without Check"
	exit 1
fi
echo "ok: meson setup without Check builds dtypelint alone; -Dtests=enabled asks for Check"
