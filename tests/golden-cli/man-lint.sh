#!/bin/sh
# The man pages pass `mandoc -T lint` with no message at all (style included). Skips (77)
# when mandoc is not installed (Debian: apt-get install mandoc).
# Usage: man-lint.sh SOURCE_ROOT
set -u
root=$1
if ! command -v mandoc >/dev/null 2>&1; then
	echo "SKIP: mandoc is not installed"
	exit 77
fi
fail=0
for page in "$root"/man/dtypelint.1 "$root"/man/dtypelint-manifest.5; do
	out=$(mandoc -T lint -W style "$page" 2>&1)
	status=$?
	if [ -n "$out" ] || [ $status -ne 0 ]; then
		echo "$out"
		echo "$page: mandoc -T lint exit $status"
		fail=1
	fi
done
[ $fail = 0 ] && echo "man pages: mandoc -T lint clean"
exit $fail
