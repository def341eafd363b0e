#!/bin/sh
# SPDX-License-Identifier: MIT
# The release version, for meson.build's project() (and so --version, the wheel and the
# tarball's name), from git tags (issue 34 item 4):
#   - a checkout at tag vX.Y.Z: X.Y.Z
#   - N commits after it: X.Y.Z.postN (PEP 440, so that pip orders it after X.Y.Z)
#   - a tarball from `meson dist` (an sdist too): the .tarball-version file that
#     tools/dist-version.sh wrote into it
#   - otherwise (a checkout with no tag, or git missing): FALLBACK, the first argument
# usage: version.sh SOURCE_ROOT FALLBACK
root=$1 fallback=$2
if [ -f "$root/.tarball-version" ]; then
	cat "$root/.tarball-version"
	exit 0
fi
if [ -e "$root/.git" ] && desc=$(git -C "$root" describe --tags --match 'v[0-9]*' --long 2>/dev/null); then
	# vX.Y.Z-N-gHASH
	n=${desc%-g*}
	n=${n##*-}
	tag=${desc%-*-g*}
	version=${tag#v}
	case $version in
	*[!0-9.]* | '' | .* | *.)
		echo "$fallback"
		exit 0
		;;
	esac
	if [ "$n" = 0 ]; then
		echo "$version"
	else
		echo "$version.post$n"
	fi
	exit 0
fi
echo "$fallback"
