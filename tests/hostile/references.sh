#!/bin/sh
# Files reached through a reference or a link stay inside the tree (issue 21, requirement 4):
# accelerate's deepspeed_config_file, the trainer args' deepspeed, an HF folder's config and
# shards, and a typed path that is a link must resolve under the folder of the file naming them,
# the working directory or their git repository; otherwise exit 2, and no byte of the refused
# file appears in any message. HF cache folders (snapshots/ linking to ../../blobs/) keep
# working. Usage: references.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/../lib.sh"
# refused: exit 2, the refusal said, the secret nowhere in stdout or stderr
refused() { # name exit-status
	if [ "$2" = 2 ] && grep -q "resolves outside" out && ! grep -q SECRET out; then
		ok "$1"; else bad "$1" "exit $2: $(head -c 300 out)"; fi
}

# a file outside the repository whose bytes a parse error would quote
mkdir -p "$tmp/outside" "$tmp/repo/.git" "$tmp/repo/cfg" "$tmp/repo/model"
printf '{"SECRET-TOKEN-4242": [\n' > "$tmp/outside/secret.json"
printf 'SECRET-TOKEN-4242 is not a safetensors file\n' > "$tmp/outside/secret.bin"
cp "$root/fixtures/import/tiny-qwen2/config.json" "$root/fixtures/import/tiny-qwen2/model.safetensors" \
	"$tmp/repo/model/"
cp "$root/fixtures/import/ds_z3_bf16.json" "$tmp/repo/cfg/"
cd "$tmp/repo" || exit 99

# 1. accelerate's deepspeed_config_file climbing out of the repository
sed 's|deepspeed_config_file: .*|deepspeed_config_file: ../../outside/secret.json|' \
	"$root/fixtures/import/accelerate_zero3.yaml" > cfg/acc-out.yaml
"$dtypelint" model --accelerate cfg/acc-out.yaml >out 2>&1; refused accelerate-deepspeed-file $?
grep -q "^cfg/acc-out.yaml:4:" out || bad accelerate-deepspeed-file-location "$(head -c 200 out)"
# ... and inside it, it is read
sed 's|deepspeed_config_file: .*|deepspeed_config_file: ds_z3_bf16.json|' \
	"$root/fixtures/import/accelerate_zero3.yaml" > cfg/acc-in.yaml
"$dtypelint" model --accelerate cfg/acc-in.yaml >out 2>&1; st=$?
if [ $st -lt 2 ]; then ok accelerate-inside; else bad accelerate-inside "exit $st: $(head -c 300 out)"; fi

# 2. a link inside the repository pointing outside it
ln -s ../../outside/secret.json cfg/ds-link.json
printf 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds-link.json\n' \
	> cfg/acc-link.yaml
"$dtypelint" model --accelerate cfg/acc-link.yaml >out 2>&1; refused accelerate-link-out $?

# 3. the trainer args' deepspeed (a recipe)
printf 'model_name_or_path: m\nbf16: true\ndeepspeed: ../outside/secret.json\n' > cfg/args.yaml
"$dtypelint" model --trainer-args cfg/args.yaml >out 2>&1; refused trainer-args-deepspeed $?

# 4. an HF folder whose shard or config is a link out of the tree
mkdir hf-shard hf-config
cp model/config.json hf-shard/
ln -s ../../outside/secret.bin hf-shard/model.safetensors
"$dtypelint" hf-shard >out 2>&1; refused hf-shard-link $?
cp model/model.safetensors hf-config/
ln -s ../../outside/secret.json hf-config/config.json
"$dtypelint" hf-config >out 2>&1; refused hf-config-link $?

# 5. a typed path that is a link out of the tree; a typed path that is not a link is the
#    user's choice
ln -s ../outside/secret.json typed-link.json
"$dtypelint" model --deepspeed typed-link.json >out 2>&1; refused typed-link $?
cp ../outside/secret.json ../outside/typed.json
"$dtypelint" model --deepspeed ../outside/typed.json >out 2>&1; st=$?
if [ $st = 2 ] && ! grep -q "resolves outside" out; then ok typed-outside-not-link
else bad typed-outside-not-link "exit $st: $(head -c 300 out)"; fi

# 6. an HF cache entry: snapshots/<rev>/ files are links to ../../blobs/<sha>, and are read
cache="$tmp/cache/models--org--tiny"
mkdir -p "$cache/blobs" "$cache/snapshots/abc123"
cp model/config.json "$cache/blobs/c0ffee"
cp model/model.safetensors "$cache/blobs/beef"
ln -s ../../blobs/c0ffee "$cache/snapshots/abc123/config.json"
ln -s ../../blobs/beef "$cache/snapshots/abc123/model.safetensors"
"$dtypelint" "$cache/snapshots/abc123" >out 2>&1; st=$?
if [ $st -lt 2 ]; then ok hf-cache-snapshot; else bad hf-cache-snapshot "exit $st: $(head -c 300 out)"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
