#!/bin/sh
# A test case survives data updates (issue 37): in a scratch copy of the source tree, a new
# newest release of one framework (accelerate's newest: in rules/versions.yaml, one patch
# release up, no behaviour changed) is built in, the golden suites are run with
# DTL_UPDATE_GOLDEN=1, and at most $max expected files may come out different. The goldens
# run at the frozen snapshot tests/golden/newest.yaml (tests/golden.sh), so only the cases
# about the newest versions may move. A full build of the copy: suite 'slow' (--setup full).
# Usage: versions-update.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/lib.sh"
max=10
for p in meson ninja tar awk; do
	command -v "$p" > /dev/null || { echo "versions-update: no $p"; exit 77; }
done

# the tree as a tarball would hold it: git's files (tracked, and new ones not ignored) when
# it is a checkout, else all but build folders
mkdir "$tmp/src" || exit 99
if git -C "$root" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	(cd "$root" && git ls-files -z -co --exclude-standard |
		tar --null --ignore-failed-read -T - -cf - 2> /dev/null)
else
	(cd "$root" && tar --exclude='./build*' -cf - .)
fi | tar -xf - -C "$tmp/src" || exit 99

# the data update: accelerate's newest, one patch release up
v=$tmp/src/rules/versions.yaml
old=$(awk '/^newest:/ { n = 1; next } n && /^[^ ]/ { n = 0 }
	n && $1 == "accelerate:" { gsub(/"/, "", $2); print $2; exit }' "$v")
new=$(echo "$old" | awk -F. '{ $NF = $NF + 1; print }' OFS=.)
case "$old" in *.*.*) ;; *) echo "versions-update: accelerate's newest is '$old'"; exit 99 ;; esac
awk -v old="\"$old\"" -v new="\"$new\"" '/^newest:/ { n = 1 } n && /^[^ ]/ && !/^newest:/ { n = 0 }
	n && $1 == "accelerate:" && !done { sub(old, new); done = 1 } { print }' "$v" > "$tmp/v" &&
	mv "$tmp/v" "$v" || exit 99
grep -q "^  accelerate: \"$new\"" "$v" || { echo "versions-update: the bump did not apply"; exit 99; }
echo "accelerate's newest: $old -> $new"

# build dtypelint alone (what the golden tests run), unoptimised: the quickest build
if ! meson setup "$tmp/build" "$tmp/src" --buildtype=plain > "$tmp/setup.log" 2>&1 ||
	! ninja -C "$tmp/build" dtypelint > "$tmp/build.log" 2>&1; then
	tail -n 30 "$tmp/setup.log" "$tmp/build.log" 2> /dev/null
	echo "versions-update: the scratch copy does not build"
	exit 99
fi
# the update is in the binary: the real table's newest is the new release
"$tmp/build/dtypelint" "$tmp/src/fixtures/rules/dt101-silent.yaml" > /dev/null 2> "$tmp/err"
if ! grep -q "^Versions: .*accelerate $new (newest known)" "$tmp/err"; then
	echo "versions-update: the new release is not the newest known: $(cat "$tmp/err")"
	exit 1
fi

# every golden suite, updating its expected files in the copy
touch "$tmp/stamp"
sleep 1
(unset DTL_VALGRIND DTYPELINT_NEWEST_KNOWN
	DTL_UPDATE_GOLDEN=1 meson test -C "$tmp/build" --no-rebuild --num-processes 2 \
		--suite golden --suite malformed > "$tmp/test.log" 2>&1)
total=0 rewritten=0 changed=0
for f in "$tmp"/src/tests/golden/*.expected "$tmp"/src/tests/golden-cli/*.expected \
	"$tmp"/src/tests/malformed/*.expected "$tmp"/src/tests/kernels/golden/*.expected; do
	[ -e "$f" ] || continue
	total=$((total + 1))
	[ "$f" -nt "$tmp/stamp" ] && rewritten=$((rewritten + 1))
	rel=${f#"$tmp/src/"}
	if ! cmp -s "$f" "$root/$rel"; then
		changed=$((changed + 1))
		echo "changed: $rel"
		[ $changed -le 3 ] && diff -u "$root/$rel" "$f" | head -n 20
	fi
done
echo "$changed of $total golden files changed ($rewritten rewritten by the run)"
# the run must have reached the goldens (a broken run would change nothing)
if [ $((rewritten * 10)) -lt $((total * 9)) ]; then
	tail -n 30 "$tmp/test.log"
	echo "versions-update: the golden suites did not run"
	exit 1
fi
[ $changed -le $max ] || { echo "FAIL: more than $max goldens depend on the newest release"; exit 1; }
echo "ok"
