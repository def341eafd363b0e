#!/bin/sh
# Every write error exits 3 (issue 35, item 6): --fix-plan, --wrap-plan and --fix-plan --diff
# when standard output cannot take the plan (/dev/full), --export and --write-baseline to a
# file or a stream that fails, and --fix-plan --write when the edited file cannot be
# written or changed meanwhile (write-races.sh). A refusal (an output that is an input) stays 2.
# Usage: write-errors.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/../lib.sh"
[ -w /dev/full ] || { echo "skip: no /dev/full"; exit 77; }
cp "$root/fixtures/rules/dt101-fires.yaml" "$tmp/m.yaml"
cd "$tmp" || exit 99
three() { # name status
	if [ "$2" = 3 ]; then ok "$1"; else bad "$1" "exit $2: $(head -c 200 err)"; fi
}
"$dtypelint" m.yaml --fix-plan >/dev/full 2>err; three fix-plan-stdout $?
"$dtypelint" m.yaml --fix-plan --format json >/dev/full 2>err; three fix-plan-json-stdout $?
"$dtypelint" m.yaml --fix-plan --diff >/dev/full 2>err; three fix-plan-diff-stdout $?
"$dtypelint" m.yaml --wrap-plan >/dev/full 2>err; three wrap-plan-stdout $?
"$dtypelint" m.yaml --export /dev/full >/dev/null 2>err; three export-file $?
"$dtypelint" m.yaml --export - >/dev/full 2>err; three export-stdout $?
"$dtypelint" m.yaml --write-baseline /dev/full >/dev/null 2>err; three write-baseline-file $?
"$dtypelint" m.yaml --write-baseline - >/dev/full 2>err; three write-baseline-stdout $?
"$dtypelint" m.yaml >/dev/full 2>err; three report-stdout $?
# --fix-plan --write: the edited file cannot be written (strace makes the temporary file's
# fsync(2) fail, as a full disk would; the read-only folder of a non-root user would too)
if strace -o /dev/null true >/dev/null 2>&1; then
	cp m.yaml fixme.yaml
	# LeakSanitizer cannot run under a tracer (an ASan build would abort for it)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO \
		"$dtypelint" fixme.yaml --fix-plan --write >/dev/null 2>err
	three fix-write-fsync $?
	if cmp -s m.yaml fixme.yaml && ! ls -a | grep -q dtypelint-; then
		ok fix-write-fsync-unchanged
	else
		bad fix-write-fsync-unchanged "the file or a temporary file changed"
	fi
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
