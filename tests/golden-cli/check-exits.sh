#!/bin/sh
# Guards the CLI golden files: each must declare the exit status its case must end with in
# its header ("# exit: N") and end with it, and none may record a missing binary.
# Usage: check-exits.sh DIR
set -u
dir=$1
fail=0
n=0
for f in "$dir"/*.expected; do
	n=$((n + 1))
	status=$(sed -n '/^--- stdout$/q; s/^# exit: //p' "$f")
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
[ $fail = 0 ] && echo "golden-cli files: $n cases, exit statuses as declared"
exit $fail
