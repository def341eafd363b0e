# Shared set-up of the shell tests, sourced with `. "$(dirname "$0")/lib.sh"`: the script's
# arguments DTYPELINT and SOURCE_ROOT made absolute in $dtypelint and $root, a temporary
# directory $tmp removed at exit, and the ok/bad counters $pass and $fail.
set -u
dtypelint=$1 root=$2
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
case "$root" in /*) ;; *) root="$(pwd)/$root" ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
