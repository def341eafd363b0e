#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the skeleton of a new rule: src/rules/dtNNN-<name>.c (the rule, its documentation and
# its fix candidates, registered by DTL_RULE) and the fixtures/rules/dtNNN-fires.yaml and
# dtNNN-silent.yaml pair its golden cases are found from. Nothing else needs an edit: the
# registry, the golden list, docs/rules/, the man page and README's table follow from these.
# Usage: tools/new-rule.sh DTNNN name severity   (severity: error, warning or info)
# DTL_ROOT: the source tree to write into (default: the one holding this script).
set -eu

usage() {
	echo "usage: tools/new-rule.sh DTNNN name severity (e.g. DT132 fsdp1-tied-split error)" >&2
	exit 2
}
[ $# -eq 3 ] || usage
id=$1 name=$2 severity=$3
root=${DTL_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}

case "$id" in
DT[0-9][0-9][0-9]) ;;
*)
	echo "new-rule.sh: '$id' is not an id DTNNN (three digits)" >&2
	usage
	;;
esac
if ! printf '%s\n' "$name" | grep -Eqx '[a-z][a-z0-9]*(-[a-z0-9]+)*'; then
	echo "new-rule.sh: '$name' is not a name in lower-case-words" >&2
	usage
fi
case "$severity" in
error) sev=DTL_SEVERITY_ERROR ;;
warning) sev=DTL_SEVERITY_WARNING ;;
info) sev=DTL_SEVERITY_INFO ;;
*)
	echo "new-rule.sh: severity '$severity' is none of error, warning, info" >&2
	usage
	;;
esac
sym=$(printf '%s' "$id" | tr A-Z a-z)
rule="$root/src/rules/$sym-$name.c"
fires="$root/fixtures/rules/$sym-fires.yaml"
silent="$root/fixtures/rules/$sym-silent.yaml"
for f in "$root/src/rules/$sym"-*.c; do
	if [ -e "$f" ]; then
		echo "new-rule.sh: $id exists: $f" >&2
		exit 1
	fi
done
for f in "$fires" "$silent"; do
	if [ -e "$f" ]; then
		echo "new-rule.sh: $f exists" >&2
		exit 1
	fi
done

cat >"$rule" <<EOF
/* SPDX-License-Identifier: MIT */
/* $id $name: what goes wrong, in one line. */
#include <errno.h>

#include "rule-util.h"

/* Cite the fact the rule copies (an upstream URL at a tag or commit, or its behaviour in
 * rules/versions.yaml). Report with dtl_check_report() and dtl_check_add_tensor();
 * dtl_check_predict() names the error the framework raises. dt602-tied-weights-dtype.c is a
 * small complete rule. */
static int ${sym}_check(struct dtl_check *c)
{
	(void)c;
	return 0;
}

DTL_RULE($sym) = {
    .id = "$id",
    .name = "$name",
    .severity = $sev,
    .summary = "what goes wrong, in one line",
    .explanation = "What happens, when and why, with the framework's error text.",
    .example = "tensors:\\n"
               "  - {name: model.norm.weight, shape: [64], dtype: bfloat16}",
    .fix = "What to change.",
    .facts = "https://github.com/<owner>/<repo>/blob/<commit>/<path>#L1-L2",
    .check = ${sym}_check,
};
EOF

cat >"$fires" <<EOF
# $id: a set-up that makes it fire.
dtypelint: 1
tensors:
  - {name: model.norm.weight, shape: [64], dtype: bfloat16}
training: {strategy: ddp}
EOF

cat >"$silent" <<EOF
# $id stays silent: the same set-up, fixed.
dtypelint: 1
tensors:
  - {name: model.norm.weight, shape: [64], dtype: bfloat16}
training: {strategy: ddp}
EOF

cat <<EOF
wrote ${rule#"$root"/}, ${fires#"$root"/} and ${silent#"$root"/}
next: write the check and the fixtures, then
  meson setup --reconfigure build && ninja -C build
  DTL_UPDATE_GOLDEN=1 meson test -C build golden-$sym-fires golden-$sym-silent docs-rule-pages
  DTL_UPDATE_MAN=1 meson test -C build cli-man-options
EOF
