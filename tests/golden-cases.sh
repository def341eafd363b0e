#!/bin/sh
# The self-describing golden cases (tests/golden-case.sh, tests/golden.sh) on scratch files:
# a file with no header, or a malformed one, fails the discovery and the runner loudly (never
# skipped); quoted arguments reach dtypelint as words; DTL_UPDATE_GOLDEN=1 keeps the header;
# "# exit: N" holds even a regenerated case to its status; a case file not written yet is
# written with its arguments as its header.
# Usage: golden-cases.sh DTYPELINT SOURCE_ROOT
set -u
dtypelint=$1 root=$2
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
list() { sh "$root/tests/golden-case.sh" list "$@"; }
run() { sh "$root/tests/golden.sh" "$dtypelint" "$root" "$@"; }

mkdir "$tmp/good" "$tmp/bad"
f=$tmp/good/select-quoted.expected
printf '%s\n' "# args: fixtures/rules/dt101-fires.yaml --select 'DT1'\\''' --trace 'model.**'" \
	'# exit: 2' '# a comment' '--- stdout' >"$f"
printf '# args: fixtures/corpus/models/x --kernels t\n--- stdout\n' >"$tmp/good/corpus.expected"
out=$(list "$tmp/good")
[ "$out" = "$(printf 'corpus golden,corpus kernels\nselect-quoted golden -')" ] &&
	ok "list: names, suites, needs" || bad "list printed: $out"

# every malformed header is an error naming the file and line
printf 'No problems found.\n--- stderr\n--- exit 0\n' >"$tmp/bad/no-header.expected"
printf '# args: a.yaml\n# fine\n--- stderr\n' >"$tmp/bad/no-end.expected"
printf '# args: a.yaml $(touch %s/ran)\n--- stdout\n' "$tmp" >"$tmp/bad/expands.expected"
printf "# args: 'open\\n--- stdout\\n" >"$tmp/bad/unclosed.expected"
printf '# args: a.yaml\nstray\n--- stdout\n' >"$tmp/bad/stray.expected"
printf '# args: a.yaml\n# exit: one\n--- stdout\n' >"$tmp/bad/exit-word.expected"
printf '# args: a.yaml\n# the output never comes\n' >"$tmp/bad/eof.expected"
printf '# args: a.yaml\n# env: X=$(id)\n--- stdout\n' >"$tmp/bad/env-expands.expected"
printf '# args: a.yaml\n# env: no-name\n--- stdout\n' >"$tmp/bad/env-no-name.expected"
for case in no-header no-end expands unclosed stray exit-word eof env-expands env-no-name; do
	mkdir "$tmp/one" && cp "$tmp/bad/$case.expected" "$tmp/good/select-quoted.expected" "$tmp/one/"
	if list "$tmp/one" >/dev/null 2>"$tmp/err"; then
		bad "list accepted $case"
	elif grep -q "$case.expected.*error: " "$tmp/err"; then
		ok "list refuses $case: $(cat "$tmp/err")"
	else
		bad "list failed on $case without naming it: $(cat "$tmp/err")"
	fi
	run "$tmp/one/$case.expected" >/dev/null 2>&1
	st=$?
	[ $st = 99 ] && ok "golden.sh: $case is exit 99" || bad "golden.sh ran $case: exit $st"
	rm -rf "$tmp/one"
done
[ -e "$tmp/ran" ] && bad "a header's \$(...) ran"

# the arguments reach dtypelint as words: --select "DT1'" is an unknown rule, exit 2
DTL_UPDATE_GOLDEN=1 run "$f" >/dev/null 2>&1 || bad "update of select-quoted failed"
if [ "$(sed -n 1,4p "$f")" = "$(printf '%s\n' "# args: fixtures/rules/dt101-fires.yaml --select 'DT1'\\''' --trace 'model.**'" '# exit: 2' '# a comment' '--- stdout')" ]; then
	ok "DTL_UPDATE_GOLDEN=1 keeps the header"
else
	bad "the header changed: $(sed -n 1,4p "$f")"
fi
grep -q "DT1'" "$f" && tail -n 1 "$f" | grep -qx -- '--- exit 2' &&
	ok "the quoted words reach dtypelint" || bad "select-quoted: $(cat "$f")"
run "$f" >/dev/null 2>&1 && ok "the regenerated case passes" || bad "the regenerated case fails"

# "# exit: N" holds a regenerated case: a different status fails and writes nothing
sed 's/^# exit: 2$/# exit: 0/' "$f" >"$tmp/good/exit.expected"
cp "$tmp/good/exit.expected" "$tmp/exit.before"
if DTL_UPDATE_GOLDEN=1 run "$tmp/good/exit.expected" >/dev/null 2>&1; then
	bad "a case that declares exit 0 was regenerated at exit 2"
else
	cmp -s "$tmp/good/exit.expected" "$tmp/exit.before" && ok "# exit: holds under update" ||
		bad "the exit-0 case was rewritten"
fi

# "# env: NAME=VALUE" reaches dtypelint: FORCE_COLOR=1 colours the text output (an escape)
printf '%s\n' '# args: fixtures/rules/dt101-fires.yaml' '# env: FORCE_COLOR=1' \
	'--- stdout' >"$tmp/good/env.expected"
DTL_UPDATE_GOLDEN=1 run "$tmp/good/env.expected" >/dev/null 2>&1
esc=$(printf '\033')
grep -q "$esc\\[" "$tmp/good/env.expected" && ok "# env: is set for dtypelint" ||
	bad "env: $(cat "$tmp/good/env.expected")"

# a case file not written yet (a new rule fixture): written with its arguments as header
new=$tmp/good/new.expected
run "$new" -- fixtures/rules/dt101-fires.yaml --trace 'a b' >/dev/null 2>&1 &&
	bad "a missing case file passed"
DTL_UPDATE_GOLDEN=1 run "$new" -- fixtures/rules/dt101-fires.yaml --trace "it's" >/dev/null 2>&1
[ "$(sed -n 1,2p "$new")" = "$(printf '%s\n' "# args: fixtures/rules/dt101-fires.yaml --trace 'it'\\''s'" '--- stdout')" ] &&
	ok "a new case file is written with its header" || bad "new case: $(sed -n 1,2p "$new")"
run "$new" >/dev/null 2>&1 && ok "the new case runs from its header" || bad "the new case fails"
exit $fail
