#!/bin/sh
# Safe writes (issue 21, requirement 1), on files made here in a temporary directory: every
# file dtypelint writes (-o, --export, --write-baseline, --fix-plan --write) goes through a
# temporary file beside it and a rename; an output that is an input is refused (exit 2); a
# symlink keeps being a link (its target is written); a hard-linked file is refused; the mode
# of a replaced file is kept; a failed write exits 3, leaves the old file byte-identical and
# leaves no temporary file. Usage: writes.sh DTYPELINT SOURCE_ROOT
set -u
dtypelint=$1 root=$2
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
cp "$root/fixtures/rules/dt101-fires.yaml" "$tmp/m.yaml"
cd "$tmp" || exit 99
before=$(cksum < m.yaml)

# 1. an output that is an input: refused, the input unchanged
"$dtypelint" m.yaml -o m.yaml >/dev/null 2>err; st=$?
if [ $st = 2 ] && [ "$(cksum < m.yaml)" = "$before" ] && grep -q "one of the inputs" err; then
	ok output-is-input; else bad output-is-input "exit $st"; fi
"$dtypelint" m.yaml --export m.yaml >/dev/null 2>err; st=$?
if [ $st = 2 ] && [ "$(cksum < m.yaml)" = "$before" ]; then ok export-is-input; else bad export-is-input "exit $st"; fi
ln m.yaml hard.yaml 2>/dev/null
"$dtypelint" m.yaml -o hard.yaml >/dev/null 2>err; st=$?
if [ $st = 2 ] && [ "$(cksum < m.yaml)" = "$before" ]; then ok output-is-input-by-inode; else bad output-is-input-by-inode "exit $st"; fi
rm -f hard.yaml

# 2. a symlink stays a link, its target is written
echo old > target.txt
ln -s target.txt link.txt
"$dtypelint" m.yaml -o link.txt >/dev/null 2>&1
if [ -L link.txt ] && grep -q DT101 target.txt; then ok symlink-target; else bad symlink-target "link replaced or target not written"; fi

# 3. a hard-linked file is refused (a rename would split it from its other names)
echo old > h1.txt
ln h1.txt h2.txt
"$dtypelint" m.yaml -o h1.txt >/dev/null 2>err; st=$?
if [ $st = 2 ] && [ "$(cat h2.txt)" = old ] && grep -q "hard links" err; then ok hard-link-refused; else bad hard-link-refused "exit $st"; fi

# 4. the mode of a replaced file is kept
echo old > mode.txt
chmod 640 mode.txt
"$dtypelint" m.yaml -o mode.txt >/dev/null 2>&1
if [ "$(stat -c %a mode.txt)" = 640 ] && grep -q DT101 mode.txt; then ok mode-kept; else bad mode-kept "$(stat -c %a mode.txt)"; fi
"$dtypelint" m.yaml --export mode.txt -q >/dev/null 2>&1
if [ "$(stat -c %a mode.txt)" = 640 ] && grep -q "dtypelint --export" mode.txt; then ok export-mode-kept; else bad export-mode-kept "$(stat -c %a mode.txt)"; fi

# 5. a failed write: exit 3, the old file byte-identical, no temporary file left
if [ "$(id -u)" != 0 ]; then
	mkdir ro && echo old > ro/out.txt && chmod 555 ro
	"$dtypelint" m.yaml -o ro/out.txt >/dev/null 2>&1; st=$?
	if [ $st = 3 ] && [ "$(cat ro/out.txt)" = old ] && [ "$(ls ro | wc -l)" = 1 ]; then
		ok read-only-dir; else bad read-only-dir "exit $st"; fi
fi
if [ -w /dev/full ]; then
	"$dtypelint" m.yaml -o /dev/full >/dev/null 2>&1; st=$?
	if [ $st = 3 ]; then ok dev-full; else bad dev-full "exit $st"; fi
fi
# a write that fails half way (EFBIG under a file size limit, SIGXFSZ ignored): the same
# path as ENOSPC or EIO
echo old > full.txt
( trap '' XFSZ; ulimit -f 0 2>/dev/null && "$dtypelint" m.yaml -o full.txt >/dev/null 2>&1 ); st=$?
leftover=$(ls | grep -c dtypelint- || true)
if [ $st = 3 ] && [ "$(cat full.txt)" = old ] && [ "$leftover" = 0 ]; then ok write-fails-old-kept; else bad write-fails-old-kept "exit $st, $leftover temporary files, $(cat full.txt | head -c 20)"; fi

# 6. --write-baseline and --fix-plan --write leave no temporary file
"$dtypelint" m.yaml --write-baseline base.json >/dev/null 2>&1
cp m.yaml fixme.yaml
"$dtypelint" fixme.yaml --fix-plan --write >/dev/null 2>&1
if [ -s base.json ] && [ "$(ls | grep -c dtypelint-)" = 0 ]; then ok no-temporary-files; else bad no-temporary-files "$(ls)"; fi

# 7. one unreadable input loses nothing of a written report (issue 22, item 3): -o with
#    --exit-zero writes the SARIF with both inputs' results, and the status is 2
printf 'tensors: [\n' > broken.yaml
"$dtypelint" -f sarif --exit-zero -o report.sarif broken.yaml m.yaml >/dev/null 2>&1; st=$?
if [ $st = 2 ] && grep -q '"ruleId": "DT001"' report.sarif && grep -q '"ruleId": "DT101"' report.sarif &&
	grep -q '"executionSuccessful": false' report.sarif; then ok report-with-input-error
else bad report-with-input-error "exit $st: $(head -c 200 report.sarif 2>&1)"; fi

echo "$pass passed, $fail failed"
[ $fail = 0 ]
