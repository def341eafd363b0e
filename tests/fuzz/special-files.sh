#!/bin/sh
# Inputs that are not plain files (issue 7): a directory, a symlink loop, a dangling symlink,
# an unreadable file, a FIFO nobody writes to, /dev/null and a file over the size limit. Each
# must end in exit status 2 with an error line that names the input, and none may hang.
# Usage: special-files.sh DTYPELINT
set -u
dtypelint=$1
case "$dtypelint" in
/*) ;;
*) dtypelint="$(pwd)/$dtypelint" ;;
esac
dir=$(mktemp -d)
trap 'chmod -R u+rwx "$dir" 2>/dev/null; rm -rf "$dir"' EXIT
cd "$dir" || exit 99
fail=0

# expect NAME PATTERN -- ARGS: exit status 2 and a report line matching PATTERN (the input is a
# DT001 input-error finding: file:line:col, line 1 column 1 when the whole file is meant)
expect() {
	name=$1 pattern=$2
	shift 3
	timeout 10 "$@" >out.txt 2>err.txt
	status=$?
	if [ "$status" -ne 2 ] || ! grep -Eq -- "$pattern" out.txt; then
		echo "FAIL $name: exit $status, stdout and stderr:"
		cat out.txt err.txt
		fail=1
	else
		echo "ok   $name: $(head -n 1 out.txt)"
	fi
}

mkdir empty-dir
expect directory '^empty-dir:1:1: error: ' -- "$dtypelint" empty-dir

ln -s loop-b loop-a
ln -s loop-a loop-b
expect symlink-loop '^loop-a:1:1: error: cannot open: Too many levels of symbolic links \[DT001 input-error\]$' -- \
	"$dtypelint" loop-a

ln -s missing.yaml dangling.yaml
expect dangling-symlink '^dangling.yaml:1:1: error: cannot open: No such file or directory \[DT001 input-error\]$' -- \
	"$dtypelint" dangling.yaml

mkfifo fifo.yaml
expect fifo-without-writer '^fifo.yaml:1:1: error: YAML: the file is empty \[DT001 input-error\]$' -- \
	"$dtypelint" fifo.yaml

expect dev-null '^/dev/null:1:1: error: not a regular file or a pipe \[DT001 input-error\]$' -- "$dtypelint" /dev/null

truncate -s 300M big.json
expect over-size-limit '^big.json:1:1: error: file is 314572800 bytes, over the limit of 268435456 bytes' -- \
	"$dtypelint" big.json

printf 'dtypelint: 1\ntensors: []\n' >unreadable.yaml
chmod 000 unreadable.yaml
if [ "$(id -u)" -ne 0 ]; then
	expect unreadable '^unreadable.yaml:1:1: error: cannot open: Permission denied \[DT001 input-error\]$' -- \
		"$dtypelint" unreadable.yaml
elif command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$dtypelint" --version >/dev/null 2>&1; then
	# root reads any file: drop to nobody for this one
	chmod 755 "$dir"
	expect unreadable '^unreadable.yaml:1:1: error: cannot open: Permission denied \[DT001 input-error\]$' -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$dtypelint" unreadable.yaml
else
	echo "skip unreadable: root ignores permissions, and nobody cannot run $dtypelint"
fi
exit $fail
