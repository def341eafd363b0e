#!/bin/sh
# Inert scanner text (issue 35, item 8): --scan-kernels text output escapes what the sources
# give it, as the lint's text report does: an op name holding a newline and "::warning::"
# (a workflow command in a CI log) or ESC comes out as \xNN, never raw.
# Usage: scan-kernels-text.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/../lib.sh"
"$dtypelint" --help | grep -q -- --scan-kernels || { echo "skip: no kernel scanner"; exit 77; }
cp -r "$root/tests/kernels/data/tree" "$tmp/tree"
sed 's|m.def("fill", &fill);|m.def("fill", \&fill);\n\tm.def("x\\n::warning::pwn\\x1b[31m", \&fill);|' \
	"$root/tests/kernels/data/tree/csrc/ops/ops.cpp" > "$tmp/tree/csrc/ops/ops.cpp"
grep -q '::warning::pwn' "$tmp/tree/csrc/ops/ops.cpp" || { echo "FAIL set-up"; exit 1; }
"$dtypelint" --scan-kernels "$tmp/tree" >"$tmp/out" 2>"$tmp/err"; st=$?
if [ $st = 0 ] && grep -q 'pwn' "$tmp/out" && ! grep -q '^::' "$tmp/out" &&
	! grep -q "$(printf '\033')" "$tmp/out" && grep -q 'x\\x0a::warning::pwn' "$tmp/out"; then
	ok scan-kernels-text-escaped; else bad scan-kernels-text-escaped "exit $st: $(head -c 400 "$tmp/out")"; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
