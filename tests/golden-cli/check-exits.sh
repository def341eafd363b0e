#!/bin/sh
# Guards the CLI golden files: each must end with the exit status its case declares (in its
# header, "# exit: N", or for a case still listed in tests/golden-cli/meson.build, there),
# and none may record a missing binary.
# Usage: check-exits.sh DIR NAME=STATUS...
set -u
dir=$1
shift
fail=0
n=0
for f in "$dir"/*.expected; do
	name=$(basename "$f" .expected)
	n=$((n + 1))
	status=$(sed -n '/^--- stdout$/q; s/^# exit: //p' "$f")
	if [ -z "$status" ]; then
		for pair in "$@"; do
			[ "${pair%=*}" = "$name" ] && status=${pair##*=}
		done
	fi
	if [ -z "$status" ]; then
		echo "$f: no exit status declared (\"# exit: N\" in its header)"
		fail=1
		continue
	fi
	tail -n 1 "$f" | grep -qx -- "--- exit $status" || { echo "$f: not '--- exit $status'"; fail=1; }
	if grep -q 'not found$' "$f"; then
		echo "$f: records a missing binary"
		fail=1
	fi
done
for pair in "$@"; do
	[ -f "$dir/${pair%=*}.expected" ] || { echo "$dir/${pair%=*}.expected: missing"; fail=1; }
done
[ $fail = 0 ] && echo "golden-cli files: $n cases, exit statuses as declared"
exit $fail
