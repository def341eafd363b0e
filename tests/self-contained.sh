#!/bin/sh
# The repository stands on its own (issue 37): no file of the source tree may read or cite the
# reference folder that sits beside a development checkout (the sibling "shared" folder of
# design notes, fact files and the real-file corpus). A release tarball (meson dist) has no such
# folder, so a test input there cannot run and a citation there cannot be followed. Test inputs
# are copied into fixtures/ with their provenance (fixtures/corpus/SOURCES.md); citations name
# an upstream URL or an in-tree file.
#
# The patterns are written with bracket expressions so that this script does not match itself.
# Before the scan, a planted reference in a scratch tree must be found: a checker that cannot
# fail proves nothing.
# Usage: self-contained.sh SOURCE_ROOT
set -u
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a path up into the sibling folder, in any spelling a script, C string or meson file uses
UP='[.][.]/shared([/"'"'"'[:space:]]|$)'
MESON="'[.][.]'[[:space:]]*/[[:space:]]*'shared'"
# Python joining the parts: os.path.join(HERE, <dot-dot parts>, <the folder name>, ...)
PYJOIN='"[.][.]"[[:space:]]*,[[:space:]]*("[.][.]"[[:space:]]*,[[:space:]]*)*"shared"'
# its sub-folders and notes, named from elsewhere (the folder name, a slash, "corpus/...")
NAMED='(^|[^[:alnum:]_.-])shared/(corpus|facts|bench|oracle|hooks|schemas)/'
NOTES='(^|[^[:alnum:]_.-])shared/(DESIGN|STYLE|README)[.]md'

# Prints file:line:text of every reference under $1 (build folders and git data skipped).
scan() {
	grep -rInE --exclude-dir='build*' --exclude-dir=.git --exclude-dir=__pycache__ \
		-e "$UP" -e "$MESON" -e "$PYJOIN" -e "$NAMED" -e "$NOTES" "$1"
}

mkdir -p "$tmp/tree/src" "$tmp/tree/build/x"
# the planted lines are assembled at run time, so that this file holds none of them
up=.. s=shared
printf '/* see %s/%s/corpus/x.json */\n' $up $s >"$tmp/tree/src/a.c"
printf "x = '%s' / '%s'\n" $up $s >"$tmp/tree/src/meson.build"
printf '# %s/%s/f.md §1\n' $s facts >"$tmp/tree/src/b.yaml"
printf 'G = os.path.join(HERE, "%s", "%s", "bench")\n' $up $s >"$tmp/tree/src/c.py"
printf '%s/%s/corpus in a build folder is not the source\n' $up $s >"$tmp/tree/build/x/log"
found=$(scan "$tmp/tree" | wc -l)
if [ "$found" -ne 4 ]; then
	echo "self-check: the scan found $found of the 4 planted references (build/ skipped):"
	scan "$tmp/tree"
	exit 99
fi

if scan "$root" >"$tmp/hits"; then
	echo "these lines reach outside the repository; copy the input into fixtures/ (with"
	echo "its provenance) or cite an upstream URL or an in-tree file instead:"
	sed "s|^$root/||" "$tmp/hits"
	echo "$(wc -l <"$tmp/hits") reference(s)"
	exit 1
fi
echo "no file of the source tree reaches outside it"
