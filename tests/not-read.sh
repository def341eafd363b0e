#!/bin/sh
# Nothing passes silently (issue 32): every file in fixtures/not-read/ is something dtypelint
# does not read (other tools' configs, CI and container files, notebooks, empty and
# comment-only files, scripts with no launcher). Given as the input, as --trainer-args and as
# --launch, none may give exit 0 or "No problems found"; each must exit 2 with an error at
# file:line:col that names the file and says what it looks like. The messages are also
# compared with tests/not-read.expected (DTL_UPDATE_GOLDEN=1 rewrites it).
# Usage: not-read.sh DTYPELINT SOURCE_ROOT
set -u
dtypelint=$1 root=$2
case "$dtypelint" in
/*) ;;
*) dtypelint="$(pwd)/$dtypelint" ;;
esac
cd "$root" || exit 99
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 count=0
find fixtures/not-read -type f | LC_ALL=C sort >"$tmp/files"
while IFS= read -r f; do
	count=$((count + 1))
	for role in input trainer-args launch; do
		if [ $role = input ]; then
			"$dtypelint" --no-config "$f" >"$tmp/out" 2>"$tmp/err"
		elif [ $role = launch ]; then
			"$dtypelint" --no-config fixtures/import/tiny-qwen2 --launch "$f" \
				>"$tmp/out" 2>"$tmp/err"
		else
			"$dtypelint" --no-config fixtures/import/tiny-qwen2 --trainer-args "$f" \
				>"$tmp/out" 2>"$tmp/err"
		fi
		status=$?
		{ echo "== $role $f: exit $status"; grep ': error: ' "$tmp/out" "$tmp/err" -h; } \
			>>"$tmp/actual"
		why=
		[ $status = 2 ] || why="exit $status, not 2"
		grep -q 'No problems found' "$tmp/err" && why="$why; says No problems found"
		grep -qF "$f:" "$tmp/out" "$tmp/err" || why="$why; does not name the file"
		grep -q "looks like\|is empty" "$tmp/out" "$tmp/err" ||
			why="$why; does not say what the file looks like"
		if [ -n "$why" ]; then
			echo "not-read: $role $f: $why" >&2
			fail=1
		fi
	done
done <"$tmp/files"
if [ "$count" -lt 30 ]; then
	echo "not-read: only $count files in fixtures/not-read (the acceptance asks for 30)" >&2
	fail=1
fi
if [ "${DTL_UPDATE_GOLDEN:-}" = 1 ]; then
	cp "$tmp/actual" tests/not-read.expected
elif ! diff -u tests/not-read.expected "$tmp/actual"; then
	echo "golden mismatch: tests/not-read.expected" >&2
	fail=1
fi
exit $fail
