#!/bin/sh
# Standard input (issue 22, item 4): "-" reads a manifest from standard input, with the same
# findings as the file; --stdin-filename names it in the report and finds its .dtypelint.yaml
# from that name; inline suppressions in it are read; the size limits apply; "-" is given at
# most once. Usage: cli-stdin.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/lib.sh"
cd "$root" || exit 99
m=fixtures/rules/dt101-fires.yaml

# 1. the same report as the file, named as given
"$dtypelint" -q -f json "$m" > "$tmp/file.json"; a=$?
"$dtypelint" -q -f json --stdin-filename "$m" - < "$m" > "$tmp/stdin.json"; b=$?
if [ $a = 1 ] && [ $b = 1 ] && cmp -s "$tmp/file.json" "$tmp/stdin.json"; then ok same-report
else bad same-report "exit $a/$b, $(diff "$tmp/file.json" "$tmp/stdin.json" | head -5)"; fi
"$dtypelint" -q - < "$m" > "$tmp/out"; st=$?
if [ $st = 1 ] && grep -q "^-:6:22: error: .*\[DT101" "$tmp/out"; then ok unnamed-is-dash
else bad unnamed-is-dash "exit $st: $(head -c 200 "$tmp/out")"; fi

# 2. the config is found from --stdin-filename's folder
mkdir "$tmp/proj"
printf 'ignore: [DT101]\n' > "$tmp/proj/.dtypelint.yaml"
"$dtypelint" -q --stdin-filename "$tmp/proj/m.yaml" - < "$m" > "$tmp/out"; st=$?
if [ $st = 0 ]; then ok config-from-name; else bad config-from-name "exit $st: $(head -c 200 "$tmp/out")"; fi

# 3. inline suppressions are read from standard input, not from the named file on disk
printf 'not: [a manifest\n' > "$tmp/proj/inline.yaml"
"$dtypelint" -q -f json-lines --no-config --stdin-filename "$tmp/proj/inline.yaml" - \
	< fixtures/cli/suppress/inline.yaml > "$tmp/out"; st=$?
"$dtypelint" -q -f json-lines --no-config fixtures/cli/suppress/inline.yaml > "$tmp/want"
if [ $st = 1 ] && [ "$(grep -c DT002 "$tmp/out")" = "$(grep -c DT002 "$tmp/want")" ] &&
	[ "$(grep -c DT002 "$tmp/out")" -gt 0 ] && ! grep -q DT001 "$tmp/out"; then ok inline-suppressions
else bad inline-suppressions "exit $st: $(head -c 300 "$tmp/out")"; fi

# 4. the limits apply; a parse error is named --stdin-filename
head -c 2000000 /dev/zero | tr '\0' ' ' | "$dtypelint" -q --max-file-size 1M - > "$tmp/out"; st=$?
if [ $st = 2 ] && grep -q "^-:1:1: error: input is over the limit of 1048576 bytes" "$tmp/out"
then ok size-limit; else bad size-limit "exit $st: $(head -c 200 "$tmp/out")"; fi
printf 'tensors: [\n' | "$dtypelint" -q --stdin-filename a/b.yaml - > "$tmp/out"; st=$?
if [ $st = 2 ] && grep -q "^a/b.yaml:2:1: error: YAML: .*\[DT001 input-error\]" "$tmp/out"
then ok error-named; else bad error-named "exit $st: $(head -c 200 "$tmp/out")"; fi

# 5. usage errors
"$dtypelint" - - < "$m" > /dev/null 2> "$tmp/err"; st=$?
if [ $st = 2 ] && grep -q "can be given once" "$tmp/err"; then ok dash-once; else bad dash-once "exit $st"; fi
"$dtypelint" --stdin-filename x.yaml "$m" > /dev/null 2> "$tmp/err"; st=$?
if [ $st = 2 ] && grep -q "stdin-filename" "$tmp/err"; then ok name-needs-dash; else bad name-needs-dash "exit $st"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
