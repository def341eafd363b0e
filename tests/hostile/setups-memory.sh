#!/bin/sh
# Per-set-up memory stays small (issue 35, item 7): 2,000 set-ups of a three-tensor model are
# linted within 128 MiB of address space (ulimit -v). Each set-up's lint runs in a scratch
# arena freed once its findings are kept; when every set-up's simulations were kept, the same
# run needed over 200 MiB (about 100 KB a set-up) and failed here with exit 3 (out of memory).
# Today it fits in 64 MiB. Skipped under sanitizers, whose shadow memory is address space.
# Usage: setups-memory.sh DTYPELINT SOURCE_ROOT SANITIZE
. "$(dirname "$0")/../lib.sh"
[ "${3:-none}" = none ] || { echo "skip: built with -Db_sanitize=$3"; exit 77; }
cd "$tmp" || exit 99
cat >m.json <<'JSON'
{"dtypelint": 1, "tensors": [
  {"name": "model.embed_tokens.weight", "shape": [100, 8]},
  {"name": "model.layers.0.self_attn.q_proj.weight", "shape": [1024, 1024]},
  {"name": "lm_head.weight", "shape": [100, 8]}]}
JSON
{
	echo "setups:"
	i=0
	while [ $i -lt 2000 ]; do
		echo "  - {name: s$i, model: m.json}"
		i=$((i + 1))
	done
} >.dtypelint.yaml
(ulimit -v 131072 && "$dtypelint" -q >out 2>err)
st=$?
if [ $st = 0 ] && [ ! -s out ]; then
	ok setups-2000-in-128-MiB
else
	bad setups-2000-in-128-MiB "exit $st: $(head -c 200 err)"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
