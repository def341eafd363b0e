#!/bin/sh
# SPDX-License-Identifier: MIT
# The layers of docs/design.md §2 as the build enforces them. For every layer (compiled with the
# DTL_SEES_ macros meson gives it) and every public header: the header must compile exactly
# when its layer is one the layer may use. Then no source file may include another folder's
# private header (a path into src/).
#   layers.sh SOURCE_ROOT BUILD_ROOT CC LAYER=seen,seen,... ...
set -u
root=$1
build=$2
cc=$3
shift 3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dtl-layers.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

header_layer() {
	sed -n 's/^#ifndef DTL_SEES_\([A-Z]*\)$/\1/p' "$1" | head -n 1 | tr 'A-Z' 'a-z'
}

for spec in "$@"; do
	layer=${spec%%=*}
	seen=${spec#*=}
	defs=
	for s in $(echo "$seen" | tr ',' ' '); do
		defs="$defs -DDTL_SEES_$(echo "$s" | tr 'a-z' 'A-Z')"
	done
	: >"$tmp/allowed.c"
	for h in "$root"/include/dtypelint/*/*.h; do
		name=${h#"$root"/include/dtypelint/}
		owner=$(header_layer "$h")
		if [ -z "$owner" ]; then
			echo "FAIL: include/dtypelint/$name has no DTL_SEES_ guard"
			fail=1
			continue
		fi
		# the include path names the layer: dtypelint/<layer>/<name>.h
		if [ "${name%%/*}" != "$owner" ]; then
			echo "FAIL: include/dtypelint/$name is in the $owner layer: move it to include/dtypelint/$owner/"
			fail=1
		fi
		case ",$seen," in
		*",$owner,"*)
			# the allowed headers are checked together, below
			printf '#include "dtypelint/%s"\n' "$name" >>"$tmp/allowed.c"
			continue
			;;
		esac
		printf '#include "dtypelint/%s"\n' "$name" >"$tmp/probe.c"
		# shellcheck disable=SC2086
		if $cc -std=c11 -D_GNU_SOURCE $defs -I"$root/include" -I"$build" -E "$tmp/probe.c" \
			>/dev/null 2>&1; then
			echo "FAIL: layer $layer may include dtypelint/$name ($owner layer), which docs/design.md §2 forbids"
			fail=1
		fi
	done
	# shellcheck disable=SC2086
	if ! $cc -std=c11 -D_GNU_SOURCE $defs -I"$root/include" -I"$build" -fsyntax-only "$tmp/allowed.c" \
		2>"$tmp/err"; then
		echo "FAIL: layer $layer cannot include the headers of the layers it may use:"
		sed 's/^/    /' "$tmp/err" | head -n 5
		fail=1
	fi
done

# Private headers stay in their folder. A header in src/<folder>/ is internal to the layers that
# see that folder when it carries a DTL_SEES_ guard (src/core/bytes.h); without one it is private
# to its folder. No include names another folder's path.
if grep -rnE '#include "(core|input|model|sim|rules|report|fix|kernels|cli)/' "$root/src" \
	--include='*.c' --include='*.h' | grep -v '"rules/dtl-'; then
	echo "FAIL: the includes above name another folder's path"
	fail=1
fi
for f in "$root"/src/*/*.c "$root"/src/*/*.h; do
	folder=$(basename "$(dirname "$f")")
	for name in $(sed -n 's/^#include "\([^"/]*\.h\)".*/\1/p' "$f"); do
		[ -e "$root/src/$folder/$name" ] && continue
		for other in "$root"/src/*/"$name"; do
			[ -e "$other" ] || continue
			if ! grep -q '^#ifndef DTL_SEES_' "$other"; then
				echo "FAIL: ${f#"$root"/} includes $name, private to $(basename "$(dirname "$other")")"
				fail=1
			fi
		done
	done
done
[ "$fail" = 0 ] && echo "layers: every header compiles exactly where docs/design.md §2 allows it"
exit "$fail"
