#!/bin/sh
# Guards the CLI golden files: each must end with the exit status its case declares in
# tests/golden-cli/meson.build, and none may record a missing binary.
# Usage: check-exits.sh DIR NAME=STATUS...
set -u
dir=$1
shift
fail=0
for pair in "$@"; do
	name=${pair%=*} status=${pair##*=}
	f="$dir/$name.expected"
	if [ ! -f "$f" ]; then
		echo "$f: missing"
		fail=1
		continue
	fi
	tail -n 1 "$f" | grep -qx -- "--- exit $status" || { echo "$f: not '--- exit $status'"; fail=1; }
	if grep -q 'not found$' "$f"; then
		echo "$f: records a missing binary"
		fail=1
	fi
done
for f in "$dir"/*.expected; do
	name=$(basename "$f" .expected)
	case " $* " in
	*" $name="*) ;;
	*) echo "$f: no case in meson.build"; fail=1 ;;
	esac
done
[ $fail = 0 ] && echo "golden-cli files: $# cases, exit statuses as declared"
exit $fail
