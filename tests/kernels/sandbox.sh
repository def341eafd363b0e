#!/bin/sh
# The kernel scanner's sandbox (issue 21, requirement 7): libclang parses each file in a child
# with CPU, memory and wall-clock limits, includes outside the scanned directories or from
# /dev, /proc and /sys are refused, and every failure is "file:line:col: error: ..." with exit
# status 2. The files are generated here. Usage: sandbox.sh DTYPELINT CASE
#
# DTYPELINT_TEST_KERNEL_CHILD (src/kernels/sandbox.c, a test-only knob that is not documented
# for users) makes the child crash, hang, spin, allocate without end or send a malformed result
# on a file whose path contains "misbehave", under limits shortened to 1 s of CPU, 8 s of wall
# clock and 256 MiB.
set -u
dtypelint=$1 case=$2
case "$dtypelint" in
/*) ;;
*) dtypelint="$(pwd)/$dtypelint" ;;
esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out="$dir/out" err="$dir/err"
mkdir "$dir/root" "$dir/outside" "$dir/second"
good='#include <torch/extension.h>
void fill(at::Tensor t) {
  AT_DISPATCH_FLOATING_TYPES(t.scalar_type(), "fill", [&] { t.fill_(1); });
}
PYBIND11_MODULE(ext, m) { m.def("NAME", &fill); }'
printf '%s\n' "$good" | sed 's/NAME/first_op/' >"$dir/root/good.cpp"

# run ARGS...: dtypelint with a safety net of 120 s, status in $status, seconds in $took
run() {
	start=$(date +%s)
	timeout 120 "$dtypelint" "$@" >"$out" 2>"$err"
	status=$?
	took=$(($(date +%s) - start))
}

# hostile FILE: a few hundred bytes of object-like macros, each four of the one before, so that
# one #if expands to 4^15 tokens (over a minute of libclang's CPU time, in little memory)
hostile() {
	{
		echo '#define B0 +1'
		i=1
		while [ $i -le 15 ]; do
			echo "#define B$i B$((i - 1)) B$((i - 1)) B$((i - 1)) B$((i - 1))"
			i=$((i + 1))
		done
		printf '#if 0 B15\nint hostile;\n#endif\n'
	} >"$1"
}
fail() {
	echo "FAIL: $*"
	echo "--- exit $status"
	echo "--- stdout"
	cat "$out"
	echo "--- stderr"
	cat "$err"
	exit 1
}
expect_error() { # FILE MESSAGE-PATTERN
	[ $status = 2 ] || fail "exit status $status, not 2"
	grep -Eq "^$1:[0-9]+:[0-9]+: error: .*$2" "$err" || fail "no '$1:L:C: error: ...$2' on stderr"
}

case $case in
dev-zero)
	# before the sandbox: libclang read /dev/zero until memory ran out, and exit 0
	printf '#include "/dev/zero"\nvoid f() {}\n' >"$dir/root/zero.cpp"
	run --scan-kernels "$dir/root"
	expect_error "$dir/root/zero.cpp" "refused"
	! grep -q "good.cpp" "$err" || fail "the good file is reported"
	# through a header (not itself scanned: .inc), and through a macro (seen after the parse)
	rm "$dir/root/zero.cpp"
	printf '#include "/dev/zero"\n' >"$dir/root/zero.inc"
	printf 'int a;\n#include "zero.inc"\n' >"$dir/root/nested.cpp"
	run --scan-kernels "$dir/root"
	expect_error "$dir/root/nested.cpp" "'/dev/zero' \\(in '$dir/root/zero.inc'\\) refused"
	rm "$dir/root/nested.cpp"
	printf '#define DEV "/dev/null"\nint a;\n  #include DEV\n' >"$dir/root/macro.cpp"
	run --scan-kernels "$dir/root"
	expect_error "$dir/root/macro.cpp" "'/dev/null' refused"
	grep -q "macro.cpp:3:[0-9]*: error" "$err" || fail "not on the #include line"
	;;
dev-stdin)
	# a child must not wait for the terminal or a pipe
	printf '#include </dev/stdin>\nvoid f() {}\n' >"$dir/root/stdin.cpp"
	mkfifo "$dir/fifo"
	exec 3<>"$dir/fifo" # stdin that never ends and never sends a byte
	run --scan-kernels "$dir/root" <&3
	exec 3>&-
	expect_error "$dir/root/stdin.cpp" "refused"
	;;
outside)
	printf 'int secret_fn();\n' >"$dir/outside/secret.h"
	printf '#include "../outside/secret.h"\nvoid f() {}\n' >"$dir/root/up.cpp"
	run --scan-kernels "$dir/root"
	expect_error "$dir/root/up.cpp" "outside the scanned directories"
	# nested: a header in the root includes a file outside it, through a symlink
	ln -s "$dir/outside/secret.h" "$dir/root/link.h"
	printf '#include "link.h"\n' >"$dir/root/inner.h"
	printf '#include "inner.h"\nvoid g() {}\n' >"$dir/root/nested.cpp"
	run --scan-kernels "$dir/root"
	expect_error "$dir/root/nested.cpp" "outside the scanned directories"
	rm "$dir/root/nested.cpp" "$dir/root/up.cpp"
	printf '#define UP "../outside/secret.h"\n#include UP\n' >"$dir/root/macro.cpp"
	run --scan-kernels "$dir/root"
	expect_error "$dir/root/macro.cpp" "outside the scanned directories"
	;;
crash | hang | spin | alloc | garbage)
	printf '%s\n' "$good" | sed 's/NAME/bad_op/' >"$dir/root/misbehave.cpp"
	DTYPELINT_TEST_KERNEL_CHILD=$case run --scan-kernels "$dir/root"
	case $case in
	crash) expect_error "$dir/root/misbehave.cpp" "crashed" ;;
	hang) expect_error "$dir/root/misbehave.cpp" "wall-clock" ;;
	# the CPU limit (1 s), or on a loaded machine the wall-clock limit (8 s) first: either stops it
	spin) expect_error "$dir/root/misbehave.cpp" "(CPU time|wall-clock limit)" ;;
	alloc) expect_error "$dir/root/misbehave.cpp" "(memory|crashed)" ;;
	garbage) expect_error "$dir/root/misbehave.cpp" "malformed result" ;;
	esac
	! grep -q "good.cpp" "$err" || fail "the good file is reported"
	;;
two-dirs)
	printf '%s\n' "$good" | sed 's/NAME/second_op/' >"$dir/second/more.cpp"
	for args in "$dir/root $dir/second" "$dir/root --scan-kernels $dir/second"; do
		# shellcheck disable=SC2086
		run --scan-kernels $args
		[ $status = 0 ] || fail "exit status $status for --scan-kernels $args"
		grep -q first_op "$out" || fail "first_op is missing for --scan-kernels $args"
		grep -q second_op "$out" || fail "second_op is missing for --scan-kernels $args"
	done
	;;
budget-file)
	# issue 35: the sandbox allowed a file 60 s of CPU time and 120 s of wall clock; now a
	# hostile file is stopped within seconds, by name, and the next file is still scanned
	hostile "$dir/root/a-hostile.cpp"
	run --scan-kernels "$dir/root"
	expect_error "$dir/root/a-hostile.cpp" "(CPU time|wall-clock) limit of (5|10) s"
	! grep -q "good.cpp" "$err" || fail "the good file after the hostile one is reported"
	[ "$took" -le 12 ] || fail "the hostile file took $took s"
	;;
budget-total)
	# issue 35: 16 such files scanned for minutes; --scan-budget bounds the whole run, the file
	# being parsed is stopped and every file not reached is named, with exit status 2
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
		hostile "$dir/root/h$i.cpp"
	done
	run --scan-kernels "$dir/root" --scan-budget 2
	[ "$took" -le 8 ] || fail "a budget of 2 s took $took s"
	[ $status = 2 ] || fail "exit status $status, not 2"
	stopped=$(grep -c "budget of 2 s ran out while libclang parsed this file" "$err")
	skipped=$(grep -c "error: not scanned: the scan's wall-clock budget of 2 s was spent" "$err")
	[ "$stopped" = 1 ] || fail "$stopped files stopped by the budget, not 1"
	[ $((stopped + skipped)) = 16 ] || fail "$stopped + $skipped files named, not 16"
	grep -q "^$dir/root/h9.cpp:1:1: error: not scanned" "$err" || fail "h9.cpp not named"
	! grep -q "good.cpp" "$err" || fail "good.cpp, scanned first, is reported"
	# 0: no budget; anything else than seconds is a usage error
	run --scan-kernels "$dir/root" --scan-budget 1s
	[ $status = 2 ] && grep -q "scan-budget: '1s' is not a number" "$err" || fail "1s taken"
	;;
*)
	echo "unknown case $case"
	exit 99
	;;
esac
echo "ok: $case"
