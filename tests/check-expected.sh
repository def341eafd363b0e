#!/bin/sh
# Guards the golden files themselves, so that a regenerated file cannot bless a broken run:
# every malformed input must end in exit 2 with one "file:line:col: error:" line, every
# "-fires" case must exit 1 with a finding, every "-silent" case must exit 0 with none.
set -u
root=$1
fail=0
# a case file's output: what follows its header ("# args: ..." up to "--- stdout")
body() { awk 'FNR == 1 && /^# args:/ { h = 1 } h { if ($0 == "--- stdout") h = 0; next } { print }' "$1"; }
for f in "$root"/tests/malformed/*.expected; do
	tail -n 1 "$f" | grep -qx -- '--- exit 2' || { echo "$f: not exit 2"; fail=1; }
	grep -Eq '^tests/malformed/[^:]+:[0-9]+:[0-9]+: error: ' "$f" ||
		{ echo "$f: no file:line:col: error: line"; fail=1; }
done
for f in "$root"/tests/golden/*-fires.expected "$root"/tests/golden/*-fires-json.expected; do
	tail -n 1 "$f" | grep -qx -- '--- exit 1' || { echo "$f: not exit 1"; fail=1; }
	grep -Eq '(: (error|warning|info): |"severity": )' "$f" || { echo "$f: no finding"; fail=1; }
done
for f in "$root"/tests/golden/*-silent.expected; do
	tail -n 1 "$f" | grep -qx -- '--- exit 0' || { echo "$f: not exit 0"; fail=1; }
	grep -Eqx 'No problems found(; [0-9]+ input warnings? above)?\.' "$f" || { echo "$f: has findings"; fail=1; }
done
if grep -l 'not found$\|exit 12[67]$' "$root"/tests/golden/*.expected "$root"/tests/malformed/*.expected; then
	echo "a golden file records a missing binary"
	fail=1
fi
# Read the goldens for sense: a NULL given to %s ("(null)"), a framework error with no subject
# ("  raises when ..."), or a placeholder standing where a value belongs ("unknown") is a bug
# the golden would otherwise freeze in.
# One awk pass over every file's output (its header skipped), printing file:line: and the line.
if ! awk '
	FNR == 1 { h = ($0 ~ /^# args:/) }
	h { if ($0 == "--- stdout") h = 0; next }
	/\(null\)|\(nil\)/ { print FILENAME ":" FNR ": prints a NULL string: " $0; bad = 1 }
	/(^[[:space:]]*|[:>"(][[:space:]]*)raises / {
		print FILENAME ":" FNR ": a framework error with no subject (who raises?): " $0; bad = 1
	}
	/"unknown"|[=:][[:space:]]*unknown([,;)]|$)|\(unknown\)|<unknown>/ {
		print FILENAME ":" FNR ": an \"unknown\" placeholder where a value belongs: " $0; bad = 1
	}
	END { exit bad }' "$root"/tests/golden/*.expected "$root"/tests/golden-cli/*.expected \
	"$root"/tests/malformed/*.expected; then
	fail=1
fi
# Quiet by default (issue 36): the Mixtral FSDP1 + LoRA set-up reads in at most 12 lines, and
# -f concise is one line per finding (the summary on standard error counts them).
quiet=$root/tests/golden/quiet-mixtral-fsdp1-lora
lines=$(body "$quiet.expected" | sed '/^--- stderr$/,$d' | wc -l)
[ "$lines" -le 12 ] || { echo "$quiet.expected: $lines lines of text, more than 12"; fail=1; }
lines=$(body "$quiet-concise.expected" | sed '/^--- stderr$/,$d' | wc -l)
found=$(sed -n 's/^Found \([0-9]*\) problems* .*/\1/p' "$quiet-concise.expected")
[ "$lines" = "$found" ] || { echo "$quiet-concise.expected: $lines lines for $found findings"; fail=1; }
# "auto" is never shown as a default the frameworks would not pick (issue 36): DeepSpeed's
# bf16/fp16 "enabled": "auto" is unresolved until trainer arguments resolve it.
auto=$root/tests/golden/show-plan-deepspeed-auto
if grep -n 'precision *fp32\|"precision": "fp32"' "$auto.expected" "$auto-json.expected"; then
	echo "show-plan-deepspeed-auto: an \"auto\" precision shown as fp32"
	fail=1
fi
grep -q 'precision *bf16 (from fixtures/import/trainer_args.yaml' "$auto-trainer.expected" ||
	{ echo "$auto-trainer.expected: the precision is not resolved with its source"; fail=1; }
n=$(ls "$root"/tests/malformed/*.expected | wc -l)
[ "$n" -ge 30 ] || { echo "only $n malformed cases"; fail=1; }
[ $fail = 0 ] && echo "golden files: sane ($n malformed cases)"
exit $fail
