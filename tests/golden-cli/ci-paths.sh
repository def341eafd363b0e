#!/bin/sh
# CI paths (issue 36): SARIF artifactLocation.uri relative to the repository root with uriBaseId
# %SRCROOT%, GitLab location.path relative to CI_PROJECT_DIR, GitHub annotations relative to
# GITHUB_WORKSPACE, whichever subfolder dtypelint runs from.
# Usage: ci-paths.sh DTYPELINT SOURCE_ROOT
set -u
dtypelint=$1 root=$2
# meson passes the binary relative to the build directory; the cases run elsewhere
case "$dtypelint" in
/*) ;;
*) dtypelint="$(pwd)/$dtypelint" ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mkdir -p "$tmp/repo/.git" "$tmp/repo/configs" "$tmp/repo/sub/deeper"
cp "$root/fixtures/rules/dt101-fires.yaml" "$tmp/repo/configs/m.yaml"
unset GITHUB_WORKSPACE CI_PROJECT_DIR

# expect WHAT OUTPUT PATTERN: OUTPUT (a file) holds PATTERN (grep -E)
expect() {
	if ! grep -Eq -- "$3" "$2"; then
		echo "FAIL: $1: no /$3/ in:"
		head -c 600 "$2"
		echo
		fail=1
	fi
}
# refuse OUTPUT PATTERN: an absolute path or ../ in a CI path
refuse() {
	if grep -Eq -- "$3" "$2"; then
		echo "FAIL: $1: /$3/ in the output"
		fail=1
	fi
}

for dir in "$tmp/repo" "$tmp/repo/sub" "$tmp/repo/sub/deeper"; do
	rel=$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
		"$tmp/repo/configs/m.yaml" "$dir")
	(cd "$dir" && "$dtypelint" -q --no-config -f sarif "$rel" >"$tmp/sarif" 2>/dev/null)
	expect "sarif from $dir" "$tmp/sarif" '"uri": "configs/m.yaml", "uriBaseId": "%SRCROOT%"'
	refuse "sarif from $dir" "$tmp/sarif" '"uri": "(file:|\.\./)'
	(cd "$dir" && "$dtypelint" -q --no-config -f gitlab "$rel" >"$tmp/gitlab" 2>/dev/null)
	expect "gitlab from $dir" "$tmp/gitlab" '"path": "configs/m.yaml"'
	(cd "$dir" && "$dtypelint" -q --no-config -f github "$rel" >"$tmp/github" 2>/dev/null)
	expect "github from $dir" "$tmp/github" '^::error file=configs/m.yaml,'
	# the CI system's own variable wins over the repository root
	(cd "$dir" && CI_PROJECT_DIR="$tmp/repo/configs" "$dtypelint" -q --no-config -f gitlab \
		"$rel" >"$tmp/gitlab" 2>/dev/null)
	expect "gitlab with CI_PROJECT_DIR from $dir" "$tmp/gitlab" '"path": "m.yaml"'
	(cd "$dir" && GITHUB_WORKSPACE="$tmp/repo/configs" "$dtypelint" -q --no-config -f github \
		"$rel" >"$tmp/github" 2>/dev/null)
	expect "github with GITHUB_WORKSPACE from $dir" "$tmp/github" '^::error file=m.yaml,'
	(cd "$dir" && GITHUB_WORKSPACE="$tmp/repo/configs" "$dtypelint" -q --no-config -f sarif \
		"$rel" >"$tmp/sarif" 2>/dev/null)
	expect "sarif with GITHUB_WORKSPACE from $dir" "$tmp/sarif" '"uri": "m.yaml", "uriBaseId"'
done
[ $fail = 0 ] && echo "ci paths: relative to the repository root from every subfolder"
exit $fail
