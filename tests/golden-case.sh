#!/bin/sh
# Reads the header of golden case files (tests/golden.sh's format), for the runner and for
# meson's discovery of the cases. A case file is self-describing:
#
#   # args: fixtures/rules/dt111-silent.yaml --select DT111 --trace 'model.**'
#   # exit: 1                (optional: the exit status the case must end with)
#   # env: NAME=VALUE        (optional, any number: set for dtypelint; VALUE plain characters)
#   # any comment: what the case is about
#   --- stdout
#   ...its standard output, then "--- stderr", standard error, "--- exit N"
#
# The arguments are words as a POSIX shell reads them, where a word holding anything but
# [A-Za-z0-9_./,=:@%+-] is in single quotes ('\'' for a quote): the line can be pasted after
# `dtypelint` in a shell. Nothing else is allowed (no $, `, ", \, globs or unquoted spaces in
# a word), so reading it can neither run nor expand anything.
#
# Usage: golden-case.sh list DIR...   one line per case file in each DIR:
#                                       "NAME SUITES NEEDS" (SUITES comma-separated, NEEDS
#                                       "kernels" or "-"); exit 1 with file:line: errors when
#                                       any file's header is missing or malformed
#        golden-case.sh check FILE     exit 1 with an error when FILE's header is malformed
set -u
LC_ALL=C
export LC_ALL

# awk over case files: checks each header, and prints one line per case ("list") or nothing
# ("check"). A file that is not a case (no "# args:" on line 1) is an error, never skipped.
read_headers='
function fail(msg) { printf "%s:%d: error: %s\n", FILENAME, FNR, msg > "/dev/stderr"; bad = 1 }
# plain characters, Q-quoted runs, and a backslash-Q between runs (the shell spelling of a quote)
function words_ok(s,    i, c, at) {
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == Q) {
			at = index(substr(s, i + 1), Q)
			if (at == 0) return 0
			i += at
		} else if (c == "\\") {
			if (substr(s, i + 1, 1) != Q) return 0
			i++
		} else if (c !~ /[A-Za-z0-9_.\/,=:@%+ -]/) {
			return 0
		}
	}
	return 1
}
function name_of(path) { sub(/.*\//, "", path); sub(/[.]expected$/, "", path); return path }
function finish() {
	if (file == "") return
	if (!closed) { printf "%s: error: no \"--- stdout\" line ends the header\n", file > "/dev/stderr"; bad = 1; return }
	if (mode == "check") return
	name = name_of(file)
	if (name !~ /^[a-z0-9][a-z0-9._+-]*$/) { printf "%s: error: a case name is [a-z0-9._+-]\n", file > "/dev/stderr"; bad = 1; return }
	# cases on the real folders copied into fixtures/corpus (models/, configs/) are also in
	# the corpus suite: the valgrind pass leaves them out
	suites = "golden"
	if (args ~ ("(^| |" Q ")fixtures/corpus/(models|configs)/")) suites = suites ",corpus"
	needs = (args ~ ("(^| |" Q ")--(scan-)?kernels([ =]|" Q "|$)")) ? "kernels" : "-"
	print name, suites, needs
}
FNR == 1 {
	finish()
	file = FILENAME; closed = 0; args = ""
	if ($0 !~ /^# args:( |$)/) { fail("the first line is not \"# args: ARGUMENTS...\" (tests/golden-case.sh)"); file = ""; nextfile }
	args = $0; sub(/^# args: ?/, "", args)
	if (!words_ok(args)) { fail("an argument outside quotes holds a character other than [A-Za-z0-9_./,=:@%+-], or a quote is not closed"); file = ""; nextfile }
	next
}
$0 == "--- stdout" { closed = 1; nextfile }
/^# exit: / { if ($0 !~ /^# exit: [0-9]+$/) fail("\"# exit:\" takes one number"); next }
/^# env: / { if ($0 !~ /^# env: [A-Z_][A-Z0-9_]*=[A-Za-z0-9_.\/,=:@%+-]*$/) fail("\"# env:\" takes NAME=VALUE, VALUE of [A-Za-z0-9_./,=:@%+-]"); next }
/^#/ { next }
{ fail("a header line that is not a \"#\" comment, before \"--- stdout\""); file = ""; nextfile }
END { finish(); exit bad }
'

case "${1:-}" in
list)
	mode=list
	shift
	for dir in "$@"; do
		set -- "$dir"/*.expected
		[ -e "$1" ] || continue
		awk -v mode="$mode" -v Q="'" "$read_headers" "$@" || exit 1
	done
	;;
check)
	awk -v mode=check -v Q="'" "$read_headers" "$2"
	;;
*)
	echo "usage: golden-case.sh list DIR... | check FILE" >&2
	exit 2
	;;
esac
