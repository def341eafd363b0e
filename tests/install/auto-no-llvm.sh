#!/bin/sh
# The default -Dkernels=auto on a machine without llvm-config: a machine file points both
# llvm-config names at a path that does not exist. dtypelint must configure, build, lint, and
# say why --scan-kernels is unavailable (no-kernels.sh). usage: auto-no-llvm.sh SOURCE_ROOT
set -eu
root=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf "[binaries]\nllvm-config = '/nonexistent/llvm-config'\nllvm-config-14 = '/nonexistent/llvm-config'\n" \
	>"$dir/no-llvm.ini"
meson setup "$dir/build" "$root" --native-file "$dir/no-llvm.ini" -Dtests=false >"$dir/setup.log" 2>&1 ||
	{ cat "$dir/setup.log"; echo "FAIL: meson setup without llvm-config"; exit 1; }
grep -qi "kernel scanner (libclang)[ :]*false" "$dir/setup.log" ||
	{ cat "$dir/setup.log"; echo "FAIL: the scanner was configured without llvm-config"; exit 1; }
ninja -C "$dir/build" dtypelint >"$dir/build.log" 2>&1 ||
	{ tail -30 "$dir/build.log"; echo "FAIL: the build without llvm-config"; exit 1; }
sh "$(dirname "$0")/no-kernels.sh" "$dir/build/dtypelint" "$root" false
