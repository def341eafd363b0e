#!/bin/sh
# Writes that survive the real world (issue 35, item 6), each made deterministic by a
# debugger or a tracer stopping dtypelint at the one system call where the race happens:
# - a user's edit saved while --fix-plan --write writes (gdb stops it at the fsync(2) of the temporary file and the
#   test edits the file there) is kept, the write refused (exit 3, a write error: file: error:), no
#   temporary file left;
# - SIGTERM or SIGINT while a temporary file exists (strace delivers it at fsync(2)) removes
#   the temporary file, and dtypelint still dies of the signal;
# - the owner of a replaced file is kept (run as root: a file owned by another user).
# A tool missing (or ptrace forbidden) skips its part. Usage: write-races.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/../lib.sh"
cp "$root/fixtures/rules/dt101-fires.yaml" "$tmp/m.yaml"
cd "$tmp" || exit 99
temps() { ls -a | grep -c dtypelint- || true; }
ran=0

# 1. a concurrent edit between the plan and the rename
# a tracer needs ptrace, which some containers forbid: a part whose tool cannot run skips
if gdb -q -nx -batch -ex run --args true >/dev/null 2>&1 </dev/null; then
	ran=1
	cp m.yaml fixme.yaml
	# LeakSanitizer cannot run under a tracer (an ASan build would exit 1 for it)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" gdb -q -nx -batch -ex 'set breakpoint pending on' -ex 'break fsync' -ex run \
		-ex 'shell echo "# saved by the user" >> fixme.yaml' -ex continue \
		--args "$dtypelint" fixme.yaml --fix-plan --write >out 2>err </dev/null
	st=$(sed -n 's/.*exited with code 0*\([0-9][0-9]*\).*/\1/p' out | tail -1)
	grep -q 'exited normally' out && st=0
	if [ "$st" = 3 ] && tail -1 fixme.yaml | grep -q 'saved by the user' &&
		grep -q '^fixme.yaml: error: .*changed' err && [ "$(temps)" = 0 ]; then
		ok concurrent-edit-kept
	else
		bad concurrent-edit-kept "exit ${st:-?}, $(temps) temporary files, $(tail -1 fixme.yaml), $(grep error err)"
	fi
fi

# 2. a signal while the temporary file exists
if strace -o /dev/null true >/dev/null 2>&1; then
	ran=1
	for sig in TERM INT; do
		echo old > out-$sig.txt
		strace -f -o /dev/null -e trace=fsync -e inject=fsync:signal=$sig \
			"$dtypelint" m.yaml -o out-$sig.txt >/dev/null 2>&1
		st=$?
		if [ "$(temps)" = 0 ] && [ "$(cat out-$sig.txt)" = old ] && [ $st -ne 0 ]; then
			ok signal-$sig-removes-temporary
		else
			bad signal-$sig-removes-temporary "exit $st, $(temps) temporary files"
			rm -f ./*dtypelint-*
		fi
	done
fi

# 3. the owner kept (only root may give a file to another user)
if [ "$(id -u)" = 0 ]; then
	ran=1
	echo old > owned.txt
	chown 4321:4322 owned.txt
	"$dtypelint" m.yaml -o owned.txt >/dev/null 2>&1
	cp m.yaml owned.yaml
	chown 4321:4322 owned.yaml
	"$dtypelint" owned.yaml --fix-plan --write >/dev/null 2>&1
	if [ "$(stat -c %u:%g owned.txt)" = 4321:4322 ] && grep -q DT101 owned.txt &&
		[ "$(stat -c %u:%g owned.yaml)" = 4321:4322 ] && ! cmp -s m.yaml owned.yaml; then
		ok owner-kept
	else
		bad owner-kept "$(stat -c %u:%g owned.txt owned.yaml)"
	fi
fi
[ $ran = 1 ] || { echo "skip: no gdb, no strace, not root"; exit 77; }
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
