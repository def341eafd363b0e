#!/bin/sh
# Inert Markdown (issue 35, item 8): names that are URLs, e-mail addresses, @-mentions and
# #-references, in a table cell, in prose (the fix quotes a name) and in the file's path,
# rendered by cmark-gfm with GFM's autolink and table extensions (what GitHub runs on a job
# summary): no link comes out of them, and no '@name' or '#123' is left outside <code>, where
# GitHub would notify a user or team or link an issue.
# Usage: markdown-inert.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/../lib.sh"
command -v cmark-gfm >/dev/null || { echo "skip: no cmark-gfm"; exit 77; }
dir="$tmp/a@b.example @user #12 www.x.example"
mkdir -p "$dir"
cat > "$dir/m.yaml" <<'YAML'
dtypelint: 1
model: {checkpoint_dtype: bfloat16, modules: {"layers.*": Block}, no_split_modules: [Block]}
tensors:
  - {name: "layers.0.https://x.example/a @user @org/team #123 a@b.example www.y.example.weight", shape: [4], dtype: float32}
  - {name: "layers.0.`@tick` |x|.weight", shape: [4, 4]}
  - {name: "layers.0.proj.weight", shape: [4, 4]}
training: {strategy: fsdp1, versions: {torch: "2.4.1"}}
YAML
"$dtypelint" -f markdown "$dir/m.yaml" >"$tmp/md" 2>"$tmp/err"; st=$?
[ $st = 1 ] && grep -q 'x.example' "$tmp/md" || { bad set-up "exit $st: $(cat "$tmp/err")"; }
cmark-gfm --unsafe -e autolink -e table "$tmp/md" >"$tmp/html"
if grep -q '<a ' "$tmp/html"; then bad no-links "$(grep -o '<a [^>]*>' "$tmp/html" | head -5)"
else ok no-links; fi
# outside <code> (its text has no '<': the renderer writes it as &lt;)
sed 's|<code>[^<]*</code>||g' "$tmp/html" >"$tmp/outside"
if grep -Eq '@[A-Za-z0-9]|#[0-9]' "$tmp/outside"; then
	bad no-mentions "$(grep -Eo '.{20}(@[A-Za-z0-9]|#[0-9]).{10}' "$tmp/outside" | head -5)"
else ok no-mentions; fi
# the names are still all there, shown as they are
for s in 'https://x.example/a @user @org/team #123 a@b.example www.y.example' \
	'`@tick` |x|' 'a@b.example @user #12 www.x.example/m.yaml'; do
	if grep -qF "<code>$s" "$tmp/html" || grep -qF "$s</code>" "$tmp/html" ||
		grep -qF "$s" "$tmp/html"; then ok "shown: $s"; else bad "shown: $s" "$(head -c 2000 "$tmp/html")"; fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
