#!/bin/sh
# The two README commands. As root on a fresh Debian 12 machine:
#   sh tools/dev.sh example   install, build, lint the bundled example
#   sh tools/dev.sh test      install, build, run the whole test suite (plain, ASan+UBSan,
#                             valgrind, fuzz smoke run) — what .ci/run runs
set -eu
cd "$(dirname "$0")/.."

install_deps() {
	pkgs="meson ninja-build pkg-config gcc libcjson-dev libyaml-dev check libclang-14-dev llvm-14"
	[ "$1" = test ] && pkgs="$pkgs python3 python3-torch libtorch-dev g++ valgrind clang-14 libclang-rt-14-dev mandoc pre-commit git python3-jsonschema bash-completion zsh fish python3-venv gdb strace"
	# python-pip-example installs python/ with Debian's pip (it brings setuptools and wheel)
	[ "$1" = test ] && pkgs="$pkgs python3-pip yamllint chromium cmark-gfm clang-format-14"
	missing=""
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		if [ "$(id -u)" -ne 0 ]; then
			echo "dev.sh: missing packages:$missing (run as root to install them)" >&2
			exit 2
		fi
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
	fi
}

build() {
	dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@"
		ninja -C "$dir"
		return
	fi
	# a folder set up by an older checkout may hold an option of another type (-Dtests was
	# a boolean): when it does not build, set it up afresh (a real build error fails again)
	if ! { meson setup --reconfigure "$dir" "$@" >/dev/null && ninja -C "$dir"; }; then
		echo "dev.sh: $dir does not build as it is; setting it up afresh" >&2
		rm -rf "$dir"
		meson setup "$dir" "$@"
		ninja -C "$dir"
	fi
}

case "${1:-}" in
example)
	install_deps example
	build build
	echo "\$ ./build/dtypelint fixtures/examples/qwen2-lora-zero3.yaml"
	./build/dtypelint fixtures/examples/qwen2-lora-zero3.yaml || status=$?
	# exit status 1 means "findings": the example is meant to show one
	[ "${status:-0}" -le 1 ]
	;;
test)
	install_deps test
	build build
	# the real libraries (tests/requirements.txt, pinned) for the oracle and package tests;
	# DTL_REQUIRE_VENV=1 turns their "no venv, skipped" into a failure
	sh tools/venv.sh build/venv >/dev/null
	DTL_REQUIRE_VENV=1 meson test -C build --setup full --print-errorlogs --num-processes 2
	echo "== ASan + UBSan"
	build build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C build-asan --print-errorlogs --num-processes 2 --no-suite oracle \
		--no-suite kernels-real
	echo "== valgrind"
	# without the kernel scanner: loading libLLVM (dlopen, --scan-kernels) under valgrind
	# costs seconds a run (the scanner's own code is covered by ASan + UBSan above and by
	# its unit tests)
	build build-vg -Dkernels=disabled
	meson test -C build-vg --setup valgrindunit --print-errorlogs --num-processes 2 --suite unit
	meson test -C build-vg --setup valgrind --print-errorlogs --num-processes 2 \
		--suite golden --suite malformed --no-suite corpus
	echo "== fuzz smoke run (libFuzzer, under a minute)"
	sh tests/fuzz/smoke.sh build-fuzz
	;;
*)
	echo "usage: sh tools/dev.sh example|test" >&2
	exit 2
	;;
esac
