#!/bin/sh
# On a terminal (a pty from script(1)), text lines wrap at its width with four-column
# continuations and -f concise lines are cut with an ellipsis; in a file every line is whole.
# Usage: tty-width.sh DTYPELINT SOURCE_ROOT
set -u
dtypelint=$1 root=$2
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
command -v script >/dev/null 2>&1 || { echo "SKIP: no script(1)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root" || exit 99
fail=0
input=fixtures/corpus/mixtral-fsdp1-lora/wizardlm-2-8x22b
args="--accelerate fixtures/corpus/mixtral-fsdp1-lora/fsdp_config.yaml --peft fixtures/corpus/mixtral-fsdp1-lora/adapter_config.json"
# widest line in columns: colours dropped, UTF-8 counted as characters, CR from the pty dropped
widest() {
	sed 's/\x1b\[[0-9;]*m//g' "$1" | tr -d '\r' | python3 -c \
		'import sys; print(max(len(l.rstrip("\n")) for l in sys.stdin.buffer.read().decode().splitlines(True)))'
}
for fmt in text concise; do
	script -qec "stty cols 70; '$dtypelint' -q --no-config -f $fmt $input $args" /dev/null \
		>"$tmp/$fmt.tty" 2>&1
	w=$(widest "$tmp/$fmt.tty")
	[ "$w" -le 70 ] || { echo "FAIL: $fmt on a 70-column terminal: a line of $w columns"; fail=1; }
	"$dtypelint" -q --no-config -f $fmt $input $args >"$tmp/$fmt.file" 2>&1
	w=$(widest "$tmp/$fmt.file")
	[ "$w" -gt 70 ] || { echo "FAIL: $fmt in a file: lines cut to $w columns"; fail=1; }
done
grep -q '^    ' "$tmp/text.tty" || { echo "FAIL: text on a terminal: no wrapped continuation"; fail=1; }
n=$(sed 's/\x1b\[[0-9;]*m//g' "$tmp/concise.tty" | tr -d '\r' | grep -c '…$')
[ "$n" = 3 ] || { echo "FAIL: concise on a terminal: $n lines cut with an ellipsis, want 3"; fail=1; }
[ $fail = 0 ] && echo "terminal width: text wraps, concise cuts, files stay whole"
exit $fail
