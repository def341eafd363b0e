#!/bin/sh
# Without libclang (-Dkernels=auto on a machine without it, or -Dkernels=disabled) dtypelint
# lints as before, and the kernel options exit 2 saying the scanner is unavailable and why.
# With it, --scan-kernels on an empty folder finds no ops and exits 0.
# usage: no-kernels.sh DTYPELINT SOURCE_ROOT HAVE_KERNELS(true|false)
set -u
dtypelint=$1 root=$2 have=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$dtypelint" -q --no-config "$root/fixtures/rules/dt101-silent.yaml" >/dev/null || {
	echo "FAIL: a plain lint fails"
	exit 1
}
out=$("$dtypelint" --scan-kernels "$dir" 2>&1)
status=$?
if [ "$have" = true ]; then
	[ $status -eq 0 ] || { echo "FAIL: --scan-kernels on an empty folder exits $status: $out"; exit 1; }
	echo "ok: built with the kernel scanner"
	exit 0
fi
case $out in
*"the kernel scanner is unavailable: this dtypelint was built without libclang ("?*"); install"*) ;;
*) echo "FAIL: --scan-kernels says: $out"; exit 1 ;;
esac
[ $status -eq 2 ] || { echo "FAIL: --scan-kernels exits $status, want 2"; exit 1; }
"$dtypelint" --kernels "$dir" "$root/fixtures/rules/dt101-silent.yaml" >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: --kernels without the scanner does not exit 2"; exit 1; }
echo "ok: $out"
