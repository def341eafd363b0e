#!/bin/sh
# tools/new-rule.sh writes a rule file the registry generator accepts, that compiles without a
# warning and is clang-formatted, and a fixture pair dtypelint reads; it refuses a bad id, name
# or severity and an id that exists. tools/gen-rule-registry.sh refuses a rule file whose name
# disagrees with the id or name it registers.
# Usage: new-rule.sh DTYPELINT SOURCE_ROOT BUILD_ROOT CC
set -u
dtypelint=$1 root=$2 build=$3 cc=$4
case "$dtypelint" in
/*) ;;
*) dtypelint="$(pwd)/$dtypelint" ;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dtl-new-rule.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
mkdir -p "$tmp/src/rules" "$tmp/fixtures/rules"
new_rule() {
	DTL_ROOT="$tmp" sh "$root/tools/new-rule.sh" "$@" >"$tmp/out" 2>&1
}

new_rule DT990 test-skeleton warning || bad "new-rule.sh DT990 test-skeleton warning: $(cat "$tmp/out")"
rule="$tmp/src/rules/dt990-test-skeleton.c"
for f in "$rule" "$tmp/fixtures/rules/dt990-fires.yaml" "$tmp/fixtures/rules/dt990-silent.yaml"; do
	[ -s "$f" ] || bad "$f not written"
done
new_rule DT990 other-name error && bad "DT990 written twice"
new_rule DT99 short-id error && bad "accepted the id DT99"
new_rule DT991 Bad_Name error && bad "accepted the name Bad_Name"
new_rule DT992 good-name fatal && bad "accepted the severity fatal"
[ "$(ls "$tmp/src/rules" | wc -l)" = 1 ] || bad "a refused call wrote a file: $(ls "$tmp/src/rules")"

# registered beside the real rules, in id order
cp "$root"/src/rules/dt[0-9][0-9][0-9]-*.c "$tmp/src/rules/"
sh "$root/tools/gen-rule-registry.sh" "$tmp/registry.c" "$tmp/src/rules" "$tmp"/src/rules/dt*.c ||
	bad "the generator refused the skeleton"
grep -A1 '&dtl_rule_dt801,' "$tmp/registry.c" | grep -q '&dtl_rule_dt990,' ||
	bad "dt990 is not last in the registry"
# shellcheck disable=SC2086 # the rules layer's -DDTL_SEES_ macros (meson.build layer_sees)
"$cc" -fsyntax-only -std=c11 -D_GNU_SOURCE ${DTL_RULES_LAYER_ARGS:-} -Wall -Wextra -Werror -I"$root/include" \
	-I"$root/src/rules" -I"$build" "$rule" || bad "the skeleton does not compile cleanly"
if command -v clang-format >/dev/null 2>&1; then
	# the root's .clang-format, as if the file were in src/rules
	clang-format --assume-filename="$root/src/rules/${rule##*/}" <"$rule" | cmp -s - "$rule" ||
		bad "the skeleton is not clang-formatted"
fi
for f in fires silent; do
	"$dtypelint" --no-config -q "$tmp/fixtures/rules/dt990-$f.yaml" >/dev/null 2>&1 ||
		bad "dt990-$f.yaml does not lint clean before the rule exists"
done

# the generator holds a file to the id and name its file name gives
sed 's/\.name = "test-skeleton"/.name = "other"/' "$rule" >"$tmp/src/rules/dt990-x.c"
rm "$rule"
sh "$root/tools/gen-rule-registry.sh" "$tmp/registry.c" "$tmp/src/rules" "$tmp"/src/rules/dt*.c \
	2>"$tmp/err" && bad "the generator accepted a name that is not the file's"
grep -q 'dt990-x.c: registers no rule with .name = "x"' "$tmp/err" ||
	bad "the generator said: $(cat "$tmp/err")"
# and notices a rule file the build was not set up with
sh "$root/tools/gen-rule-registry.sh" "$tmp/registry.c" "$tmp/src/rules" \
	"$tmp/src/rules/dt001-input-error.c" 2>"$tmp/err" && bad "the generator missed new rule files"
grep -q 'is a new rule file' "$tmp/err" || bad "the generator said: $(cat "$tmp/err")"

[ $fail = 0 ] && echo "new-rule.sh: skeleton registered, compiled, formatted; bad input refused"
exit $fail
