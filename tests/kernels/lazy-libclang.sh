#!/bin/sh
# libclang is loaded only for a kernel option (issue 6): a plain lint must not map libclang or
# libLLVM, --scan-kernels must (the positive case shows the check can see it). glibc's
# LD_DEBUG=files lists every object the dynamic loader opens, dlopen() included.
# Usage: lazy-libclang.sh DTYPELINT SOURCE_ROOT
set -u
dtypelint=$1 root=$2
case "$dtypelint" in
/*) ;;
*) dtypelint="$(pwd)/$dtypelint" ;;
esac
cd "$root" || exit 99
if readelf -d "$dtypelint" 2>/dev/null | grep -E 'NEEDED.*(libclang|libLLVM)'; then
	echo "dtypelint links libclang: it must dlopen() it"
	exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
LD_DEBUG=files "$dtypelint" -q fixtures/rules/dt101-silent.yaml >/dev/null 2>"$log"
status=$?
[ $status = 0 ] || { echo "plain lint: exit $status"; cat "$log"; exit 1; }
if ! grep -q 'file=libc\.so' "$log"; then
	echo "LD_DEBUG=files lists nothing here (not glibc?)"
	exit 77
fi
if grep -E 'file=[^ ]*(libclang|libLLVM)' "$log"; then
	echo "a plain lint loaded libclang"
	exit 1
fi
LD_DEBUG=files "$dtypelint" --scan-kernels tests/kernels/data/tree >/dev/null 2>"$log"
status=$?
[ $status = 0 ] || { echo "--scan-kernels: exit $status"; cat "$log"; exit 1; }
if ! grep -Eq 'file=[^ ]*libclang' "$log"; then
	echo "--scan-kernels did not load libclang"
	exit 1
fi
echo "libclang: not loaded by a plain lint, loaded by --scan-kernels"
