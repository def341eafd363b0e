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

# expect NAME PATTERN -- ARGS: exit status 2 and a stderr line matching PATTERN
expect() {
	name=$1 pattern=$2
	shift 3
	timeout 10 "$@" >out.txt 2>err.txt
	status=$?
	if [ "$status" -ne 2 ] || ! grep -Eq -- "$pattern" err.txt; then
		echo "FAIL $name: exit $status, stderr:"
		cat err.txt
		fail=1
	else
		echo "ok   $name: $(head -n 1 err.txt)"
	fi
}

mkdir empty-dir
expect directory '^empty-dir: error: ' -- "$dtypelint" empty-dir

ln -s loop-b loop-a
ln -s loop-a loop-b
expect symlink-loop '^loop-a: error: cannot open: Too many levels of symbolic links$' -- \
	"$dtypelint" loop-a

ln -s missing.yaml dangling.yaml
expect dangling-symlink '^dangling.yaml: error: cannot open: No such file or directory$' -- \
	"$dtypelint" dangling.yaml

mkfifo fifo.yaml
expect fifo-without-writer '^fifo.yaml:1:1: error: YAML: the file is empty$' -- \
	"$dtypelint" fifo.yaml

expect dev-null '^/dev/null: error: not a regular file or a pipe$' -- "$dtypelint" /dev/null

truncate -s 300M big.json
expect over-size-limit '^big.json: error: file is 314572800 bytes, over the limit of 268435456 bytes' -- \
	"$dtypelint" big.json

printf 'dtypelint: 1\ntensors: []\n' >unreadable.yaml
chmod 000 unreadable.yaml
if [ "$(id -u)" -ne 0 ]; then
	expect unreadable '^unreadable.yaml: error: cannot open: Permission denied$' -- \
		"$dtypelint" unreadable.yaml
elif command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$dtypelint" --version >/dev/null 2>&1; then
	# root reads any file: drop to nobody for this one
	chmod 755 "$dir"
	expect unreadable '^unreadable.yaml: error: cannot open: Permission denied$' -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$dtypelint" unreadable.yaml
else
	echo "skip unreadable: root ignores permissions, and nobody cannot run $dtypelint"
fi
exit $fail
