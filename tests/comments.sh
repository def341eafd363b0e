#!/bin/sh
# SPDX-License-Identifier: MIT
# The comment rules of docs/design.md §8 that a script can check (HACKING.md, "Comments"):
#  1. every C file (src/, include/, tools/, tests/) opens, right after its SPDX line, with a
#     comment block of at least MIN_WORDS words, before any #include or code: what the file is
#     for and where it sits in the flow;
#  2. every function a header (include/dtypelint/*/*.h, the public API, and the private ones of
#     src/) declares or defines at file scope
#     has a comment that ends on the line just above it, or a comment on its own last line, or
#     sits in a group: prototypes on consecutive lines (no blank line between) whose first one
#     has such a comment. The comment says what the function takes, returns and owns.
# Prints each offender and a count per rule; fails when there is any.
#   comments.sh SOURCE_ROOT
set -u
root=$1
MIN_WORDS=8
cd "$root" || exit 2

# Inputs of the kernel-scanner tests (tests/kernels/data/), shaped like third-party sources, keep
# their own openings.
ALLOW='tests/kernels/data/*'
allowed() {
	set -f # the list holds glob patterns, matched by case, never expanded against the tree
	for pattern in $ALLOW; do
		# shellcheck disable=SC2254 # patterns on purpose
		case "$1" in $pattern)
			set +f
			return 0
			;;
		esac
	done
	set +f
	return 1
}

# git's files in a checkout; in a tarball (meson dist unpacks it inside the build folder of
# a checkout, where git answers for the outer tree and lists nothing here) every C file
files=$(git ls-files 'src/*.[ch]' 'include/*.h' 'tools/*.[ch]' 'tests/*.[ch]' 2>/dev/null)
[ -n "$files" ] || files=$(find src include tools tests -name '*.[ch]' | sort)
[ -n "$files" ] || {
	echo "FAIL: no C files found under $root"
	exit 2
}

# Rule 1: the opening comment. Line 1 is the SPDX line; blank lines may follow; then a /* block
# (or // lines) with MIN_WORDS words or more, before anything else.
opening_bad=0
for f in $files; do
	allowed "$f" && continue
	awk -v min="$MIN_WORDS" -v f="$f" '
		NR == 1 { if ($0 !~ /SPDX-License-Identifier/) { print "FAIL: " f ":1: no SPDX line"; bad = 1; exit } next }
		state == 0 && /^[ \t]*$/ { next }
		state == 0 && /^[ \t]*\/\*/ { state = 1 }
		state == 0 && /^[ \t]*\/\// { state = 2 }
		state == 0 { print "FAIL: " f ":" NR ": no opening comment before the first code"; bad = 1; exit }
		state == 1 {
			line = $0; gsub(/\/\*|\*\/|^[ \t]*\*/, " ", line); words += split(line, w, /[ \t]+/) - (line ~ /^[ \t]/)
			if ($0 ~ /\*\//) exit
			next
		}
		state == 2 {
			if ($0 !~ /^[ \t]*\/\//) exit
			line = $0; sub(/^[ \t]*\/\//, " ", line); words += split(line, w, /[ \t]+/) - 1
		}
		END {
			if (bad) exit 1
			if (words < min) { print "FAIL: " f ": opening comment has " words " words, fewer than " min; exit 1 }
		}' "$f" || opening_bad=$((opening_bad + 1))
done

tmp=$(mktemp "${TMPDIR:-/tmp}/dtl-comments.XXXXXX") || exit 2
trap 'rm -f "$tmp"' EXIT

# Rule 2: the functions of the headers. A file-scope statement (brace depth 0, not a preprocessor line,
# not a typedef) with an identifier followed by "(" declares or defines a function.
api_bad=0
for h in $(echo "$files" | grep -E '^(include|src)/.*\.h$'); do
	allowed "$h" && continue
	awk -v f="$h" '
		function strip(s) { gsub(/"([^"\\]|\\.)*"/, "\"\"", s); gsub(/\/\*.*\*\//, "", s); return s }
		# whether a comment ends on line i (a /* */ closing, or a // line)
		function comment_ends(i) { return text[i] ~ /\*\/[ \t]*$/ || text[i] ~ /^[ \t]*\/\// }
		{ text[NR] = $0 }
		END {
			depth = 0; incomment = 0; stmt = ""; start = 0; prev_ok = 0; prev_end = -1
			for (i = 1; i <= NR; i++) {
				line = text[i]
				if (incomment) { if (line ~ /\*\//) { incomment = 0; sub(/^.*\*\//, "", line) } else continue }
				line = strip(line)
				if (line ~ /\/\*/) { incomment = 1; sub(/\/\*.*/, "", line) }
				sub(/\/\/.*/, "", line)
				if (depth == 0 && stmt == "" && (line ~ /^[ \t]*#/ || cont)) { cont = (line ~ /\\$/); continue }
				if (depth == 0 && stmt == "" && line ~ /^[ \t]*$/) continue
				if (depth == 0 && stmt == "") start = i
				if (depth == 0) stmt = stmt " " line
				opens = gsub(/\{/, "{", line); closes = gsub(/\}/, "}", line)
				ended = (depth == 0 && (line ~ /;[ \t]*$/ || opens > 0))
				depth += opens - closes
				if (!ended && !(depth == 0 && closes > 0)) continue
				s = stmt; stmt = ""
				if (s ~ /^[ \t]*(typedef|extern "C")/ || s !~ /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/ ||
				    s ~ /^[ \t]*(struct|enum|union)[ \t]+[A-Za-z_0-9]*[ \t]*\{/ || s ~ /^[^(]*\(\*/) { prev_end = -1; continue }
				ok = comment_ends(start - 1) || text[i] ~ /\/\*.*\*\/[ \t]*$/ || (prev_ok && prev_end == start - 1)
				if (!ok) {
					name = s; sub(/[ \t]*\(.*/, "", name); sub(/.*[ \t*]/, "", name)
					print "FAIL: " f ":" start ": " name "() has no comment (and is in no commented group)"
					bad++
				}
				prev_ok = ok; prev_end = i
				# a definition ends at its closing brace, not here
				if (depth > 0) { while (depth > 0 && ++i <= NR) { l = strip(text[i]); depth += gsub(/\{/, "{", l) - gsub(/\}/, "}", l) } prev_end = i }
			}
			exit bad > 0
		}' "$h" >"$tmp" || api_bad=$((api_bad + $(grep -c '^FAIL' "$tmp")))
	cat "$tmp"
done

echo "files without an opening comment: $opening_bad"
echo "header functions without a comment: $api_bad"
[ "$opening_bad" -eq 0 ] && [ "$api_bad" -eq 0 ]
