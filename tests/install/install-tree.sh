#!/bin/sh
# `meson install` into a scratch DESTDIR: the binary, the man pages, the bash/zsh/fish
# completions, the schemas, the rule pages and contrib/ (pre-commit and CI examples) land
# where their tools look. usage: install-tree.sh BUILD_ROOT PREFIX DATADIR MANDIR BINDIR
set -eu
build=$1 prefix=$2 datadir=$3 mandir=$4 bindir=$5
case $datadir in /*) ;; *) datadir=$prefix/$datadir ;; esac
case $mandir in /*) ;; *) mandir=$prefix/$mandir ;; esac
case $bindir in /*) ;; *) bindir=$prefix/$bindir ;; esac
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet
status=0
for f in "$bindir/dtypelint" "$mandir/man1/dtypelint.1" "$mandir/man5/dtypelint-manifest.5" \
	"$datadir/bash-completion/completions/dtypelint" "$datadir/zsh/site-functions/_dtypelint" \
	"$datadir/fish/vendor_completions.d/dtypelint.fish" \
	"$datadir/dtypelint/schemas/manifest.schema.json" "$datadir/dtypelint/schemas/plan.schema.json" \
	"$datadir/dtypelint/schemas/config.schema.json" "$datadir/doc/dtypelint/rules/DT101.md" \
	"$datadir/doc/dtypelint/rules/README.md" "$datadir/dtypelint/contrib/github-workflow.yml" \
	"$datadir/dtypelint/contrib/pre-commit-hooks.yaml" "$datadir/dtypelint/contrib/dtypelint-matcher.json"; do
	if [ ! -s "$dest$f" ]; then
		echo "FAIL: meson install did not put $f in place"
		status=1
	fi
done
"$dest$bindir/dtypelint" --version >/dev/null || { echo "FAIL: the installed binary does not run"; status=1; }
[ $status -eq 0 ] && echo "ok: $(find "$dest" -type f | wc -l) files installed"
exit $status
