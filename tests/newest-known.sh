#!/bin/sh
# DTYPELINT_NEWEST_KNOWN, the test-only hook that pins the newest known versions to a snapshot
# file (tests/golden/newest.yaml for the goldens): the snapshot is what an unpinned plan is
# linted at, and a bad snapshot is an input error (exit 2, file:line:col), never a silent
# fallback to the real table.
# Usage: newest-known.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/lib.sh"
m=$root/fixtures/rules/dt101-silent.yaml

# snapshot NAME ACCELERATE TORCH [EXTRA LINE]: a snapshot file $tmp/NAME.yaml
snapshot() {
	{
		printf 'newest:\n  torch: "%s"\n  transformers: "5.0.0"\n  peft: "0.17.1"\n' "$3"
		printf '  deepspeed: "0.18.2"\n  accelerate: "%s"\n  trl: "0.20.0"\n' "$2"
		printf '  bitsandbytes: "0.45.0"\n  nemo-automodel: "0.5.0"\n%s' "${4:-}"
	} > "$tmp/$1.yaml"
}

# run NAME: dtypelint on $m with the snapshot $tmp/NAME.yaml
run() {
	DTYPELINT_NEWEST_KNOWN=$tmp/$1.yaml "$dtypelint" "$m" > "$tmp/out" 2> "$tmp/err"
	st=$?
}

# the snapshot's versions are the newest known, on the versions line and in the lint
snapshot old 1.14.0 2.9.0
run old
if [ $st = 0 ] && grep -q '^Versions: .*accelerate 1\.14 (newest known)' "$tmp/err" &&
	grep -q '^Versions: .*transformers 5\.0 (newest known)' "$tmp/err"; then ok "pinned"
else bad "pinned" "exit $st: $(cat "$tmp/err")"; fi

# unset or empty: the real table (not the snapshot's 1.14)
DTYPELINT_NEWEST_KNOWN= "$dtypelint" "$m" > "$tmp/out" 2> "$tmp/err"
if grep -q '^Versions: .*accelerate [0-9.]* (newest known)' "$tmp/err" &&
	! grep -q 'accelerate 1\.14 (newest known)' "$tmp/err"; then ok "empty is unset"
else bad "empty is unset" "$(cat "$tmp/err")"; fi

# refuse NAME LINE:COL MESSAGE: exit 2 and one error at the snapshot's line and column
refuse() {
	run "$1"
	if [ $st = 2 ] && grep -qx "$tmp/$1.yaml:$2: error: newest-known snapshot: $3" "$tmp/err" &&
		[ ! -s "$tmp/out" ]; then ok "$1"
	else bad "$1" "exit $st: $(cat "$tmp/err")"; fi
}
snapshot too-new 999.0.0 2.9.0
refuse too-new 6:15 "newer than the table's newest"
snapshot unknown-framework 1.14.0 2.9.0 '  jax: "0.4.0"
'
refuse unknown-framework 2:3 "'newest' must name every framework once"
sed 's/^  trl:/  trlx:/' "$tmp/old.yaml" > "$tmp/renamed.yaml"
refuse renamed 7:3 "not a framework of the version table"
printf 'newest:\n  torch: "2.9.0"\n' > "$tmp/partial.yaml"
refuse partial 2:3 "'newest' must name every framework once"
sed 's/"2\.9\.0"/2.9/' "$tmp/old.yaml" > "$tmp/unquoted.yaml"
refuse unquoted 2:10 "a version must be a quoted string"
{ cat "$tmp/old.yaml"; echo 'behaviours: {}'; } > "$tmp/extra-key.yaml"
refuse extra-key 1:1 "needs 'newest:' and nothing else"
DTYPELINT_NEWEST_KNOWN=$tmp/missing.yaml "$dtypelint" "$m" > "$tmp/out" 2> "$tmp/err"
st=$?
if [ $st = 2 ] && grep -q "^$tmp/missing.yaml: error: " "$tmp/err"; then ok "missing"
else bad "missing" "exit $st: $(cat "$tmp/err")"; fi

# the goldens' snapshot is accepted as it stands
DTYPELINT_NEWEST_KNOWN=$root/tests/golden/newest.yaml "$dtypelint" "$m" > "$tmp/out" 2> "$tmp/err"
st=$?
if [ $st = 0 ]; then ok "golden snapshot"; else bad "golden snapshot" "exit $st: $(cat "$tmp/err")"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
