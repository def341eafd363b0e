#!/bin/sh
# SARIF output validates against the OASIS SARIF 2.1.0 JSON schema (../shared/schemas) with a
# real validator, ajv-cli, installed with npm into CACHE (under the build directory, never the
# source tree). Skips (77) only when the schema is absent or the validator cannot be
# installed, and says which.
# Usage: sarif-schema.sh DTYPELINT SOURCE_ROOT CACHE
set -u
dtypelint=$1 root=$2 cache=$3
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
case "$cache" in /*) ;; *) cache="$(pwd)/$cache" ;; esac
schema="$root/../shared/schemas/sarif-schema-2.1.0.json"
if [ ! -f "$schema" ]; then
	echo "SKIP: no SARIF schema at $schema"
	exit 77
fi
ajv="$cache/node_modules/.bin/ajv"
if [ ! -x "$ajv" ]; then
	if ! command -v npm >/dev/null 2>&1; then
		echo "SKIP: npm is not installed, so the validator (ajv-cli) cannot be installed"
		exit 77
	fi
	mkdir -p "$cache"
	if ! (cd "$cache" && npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
		ajv-cli@5 ajv-formats@2 >"$cache/npm.log" 2>&1); then
		cat "$cache/npm.log"
		echo "SKIP: 'npm install ajv-cli@5 ajv-formats@2' failed, no validator"
		exit 77
	fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root" || exit 99
fail=0
n=0
check() {
	name=$1
	shift
	n=$((n + 1))
	"$dtypelint" -q -f sarif "$@" >"$tmp/$name.json"
	status=$?
	if [ $status -gt 1 ]; then
		echo "$name: dtypelint exited $status"
		fail=1
		return
	fi
	if ! "$ajv" validate --spec=draft7 -c ajv-formats --strict=false -s "$schema" \
		-d "$tmp/$name.json" >"$tmp/$name.log" 2>&1; then
		cat "$tmp/$name.log"
		echo "$name: INVALID SARIF"
		fail=1
	fi
}
check findings fixtures/rules/dt101-fires.yaml fixtures/rules/dt102-orig-params.yaml \
	fixtures/cli/suppress/listed.yaml 'fixtures/cli/formats/odd,100%.yaml'
check silent fixtures/rules/dt101-silent.yaml
check many fixtures/cli/formats/many-units.yaml fixtures/cli/suppress/inline.yaml
check absolute "$root/fixtures/rules/dt101-fires.yaml"
# every rule fixture that lints (exit 0 or 1): rules[] then holds most of the rule table
set --
for f in fixtures/rules/*.yaml fixtures/rules/*.json; do
	"$dtypelint" -q -f json-lines "$f" >/dev/null 2>&1
	[ $? -le 1 ] && set -- "$@" "$f"
done
check all "$@"
[ $fail = 0 ] && echo "SARIF: $n reports valid against $schema"
exit $fail
