#!/bin/sh
# SPDX-License-Identifier: MIT
# The kernel scanner's shape (src/kernels/README.md "Files and their order"), read from its static
# library with nm: a file uses another when it references a symbol the other defines.
# - No call circle between its files: the "uses" graph must sort topologically (tsort), so that
#   each file can be read knowing only the files below it.
# - One prefix: every symbol a file exports starts with dtl_kernels_ (static functions are free),
#   and so does every name the public header declares (DTL_KERNELS_ for constants).
#   call-graph.sh NM LIBDTL-KERNELS.a [include/dtypelint/kernels/kernels.h]
set -u
nm=$1
lib=$2
header=${3:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dtl-kgraph.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

# "member symbol" for the defined and the undefined symbols of each object in the archive
"$nm" -A -g --defined-only "$lib" >"$tmp/nm-defs" || exit 2
"$nm" -A -u "$lib" >"$tmp/nm-uses" || exit 2
member() {
	# libdtl-kernels.a:scan.c.o: 0000 T sym -> "scan sym" (a thin archive names
	# libdtl-kernels.a.p/scan.c.o)
	sed -n 's/^[^:]*:\([^:]*\/\)\{0,1\}\([^:/]*\)\.c\.o:[0-9a-f ]* [A-Za-z] \(.*\)$/\2 \3/p'
}
member <"$tmp/nm-defs" >"$tmp/defs"
member <"$tmp/nm-uses" >"$tmp/uses"
if [ ! -s "$tmp/defs" ]; then
	echo "FAIL: no symbols read from $lib"
	exit 1
fi

awk '$2 !~ /^dtl_kernels_/ { print "FAIL: " $1 ".c exports " $2 ", not dtl_kernels_*"; bad = 1 }
	END { exit bad }' "$tmp/defs" || fail=1

# the header's own names: struct and enum tags it defines, macros, enum constants, functions
if [ -n "$header" ]; then
	{
		sed -n 's/^\(struct\|enum\) \([A-Za-z0-9_]*\) {.*/\2/p; s/^#define \([A-Za-z0-9_]*\).*/\1/p' "$header"
		sed -n 's/^\t\([A-Z][A-Z0-9_]*\)\( = [^,]*\)\{0,1\},.*/\1/p' "$header"
		sed -n 's/^[a-z].*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p' "$header"
	} | grep -v '^DTYPELINT_KERNELS_H$' | grep -v '^dtl_kernels$\|^dtl_kernels_\|^DTL_KERNELS_' |
		sed "s|^|FAIL: $(basename "$header") declares |; s|\$|, not dtl_kernels_* / DTL_KERNELS_*|" >"$tmp/hdr"
	if [ -s "$tmp/hdr" ]; then
		cat "$tmp/hdr"
		fail=1
	fi
fi

# "user definer symbol" for every cross-file reference, then the file edges
awk 'NR == FNR { def[$2] = $1; next }
	($2 in def) && def[$2] != $1 { print $1, def[$2], $2 }' "$tmp/defs" "$tmp/uses" |
	sort -u >"$tmp/refs"
awk '{ print $1, $2 }' "$tmp/refs" | sort -u >"$tmp/edges"
# every file is a node, also those nothing uses and that use nothing
awk '{ print $1, $1 }' "$tmp/defs" | sort -u >>"$tmp/edges"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loops"; then
	echo "FAIL: call circles between the files of src/kernels (tsort):"
	sed 's/^/    /' "$tmp/loops"
	echo "  the references that make them (user -> definer: symbol):"
	for f in $(sed -n 's/^tsort: \([a-z0-9-]*\)$/\1/p' "$tmp/loops" | sort -u); do
		awk -v f="$f" '$1 == f { print "    " $1 " -> " $2 ": " $3 }' "$tmp/refs"
	done | sort -u
	fail=1
fi
[ "$fail" = 0 ] && echo "ok: $(awk '{print $1}' "$tmp/defs" | sort -u | wc -l) files, no call circle, one prefix"
exit "$fail"
