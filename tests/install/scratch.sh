# SPDX-License-Identifier: MIT
# Shared by the walk-through tests (add-option.sh, add-key.sh, add-rule.sh), sourced with
# `walk=NAME; . "$(dirname "$0")/scratch.sh"` (dash's `.` takes no arguments, so the source
# root is the sourcing script's own $1): $root made absolute, a temporary folder
# $tmp removed at exit, $fail and bad(), and $tmp/src, a copy of the tree without build
# folders or git metadata, where a walk-through follows HACKING.md. scratch_build builds that
# copy into $tmp/build (no tests, no kernel scanner: the whole program, seconds to minutes)
# and exits 1 with the logs' tails when it does not build.
set -u
root=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dtl-$walk.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
mkdir "$tmp/src"
(cd "$root" && tar -cf - --exclude='./build*' --exclude=./.git --exclude=./subprojects \
	--exclude='*.pyc' .) | tar -xf - -C "$tmp/src" || exit 99

scratch_build() {
	if ! meson setup "$tmp/build" "$tmp/src" -Dtests=disabled -Dkernels=disabled \
		>"$tmp/setup.log" 2>&1 || ! ninja -C "$tmp/build" >"$tmp/build.log" 2>&1; then
		tail -n 30 "$tmp/setup.log" "$tmp/build.log"
		echo "FAIL: the scratch copy does not build"
		exit 1
	fi
}
