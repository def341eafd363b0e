#!/bin/sh
# SPDX-License-Identifier: MIT
# meson dist script (meson.build): records the version in the tarball as .tarball-version,
# since a tarball has no git tags for tools/version.sh to read. usage: dist-version.sh VERSION
set -eu
printf '%s\n' "$1" >"$MESON_DIST_ROOT/.tarball-version"
