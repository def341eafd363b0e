#!/bin/sh
# SARIF output validates against the OASIS SARIF 2.1.0 JSON schema (tests/schemas, with its
# provenance in tests/schemas/SOURCES.md) with a real validator: python-jsonschema's draft-07
# validator and format checker (tests/schemas/sarif_validate.py). Skips (77) only when
# python3-jsonschema is not installed.
# Usage: sarif-schema.sh DTYPELINT SOURCE_ROOT [PYTHON]
set -u
dtypelint=$1 root=$2 python=${3:-/usr/bin/python3}
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
schema="$root/tests/schemas/sarif-schema-2.1.0.json"
validate="$root/tests/schemas/sarif_validate.py"
"$python" -c 'import jsonschema' 2>/dev/null || {
	echo "SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)"
	exit 77
}
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
	if ! "$python" "$validate" "$schema" "$tmp/$name.json" >"$tmp/$name.log" 2>&1; then
		cat "$tmp/$name.log"
		echo "$name: INVALID SARIF"
		fail=1
	fi
}
check findings fixtures/rules/dt101-fires.yaml fixtures/rules/dt102-orig-params.yaml \
	fixtures/cli/suppress/listed.yaml 'fixtures/cli/formats/odd,100%.yaml'
check silent fixtures/rules/dt101-silent.yaml
# input warnings (DT003) are results of their own, with their rule descriptor
check input-warnings fixtures/import/tiny-qwen2 fixtures/import/tiny-qwen2 \
	--framework-config fixtures/framework-keys/automodel-defaults-only.yaml
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
