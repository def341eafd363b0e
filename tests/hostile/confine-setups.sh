#!/bin/sh
# One confinement for every path a file names (issue 35, item 1): a config's setups: entries
# follow the rule of paths named by other files (inside the folder of the config, the working
# directory or their git repository); devices, FIFOs and standard input ("-", /dev/stdin,
# /proc/self/fd/0) are refused unless typed on the command line; a .dtypelint.yaml that is a
# link to outside is refused; --fix-plan --write edits nothing outside the repository; and a
# file that fails to parse as what it was named for is never quoted, in any format.
# Usage: confine-setups.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/../lib.sh"
# refused NAME STATUS [PATTERN]: exit 2, PATTERN said, no byte of the secret anywhere
refused() {
	if [ "$2" = 2 ] && grep -q "${3:-resolves outside}" out && ! grep -q SECRET out; then
		ok "$1"; else bad "$1" "exit $2: $(head -c 300 out)"; fi
}
mkdir -p "$tmp/outside" "$tmp/repo/.git" "$tmp/repo/cfg" "$tmp/repo/model"
printf 'https://user:ghp_SECRET4242@github.com\n' > "$tmp/outside/token"
printf '{"SECRET-4242": [\n' > "$tmp/outside/secret.json"
cp "$root/fixtures/import/tiny-qwen2/config.json" "$root/fixtures/import/tiny-qwen2/model.safetensors" \
	"$tmp/repo/model/"
cp "$root/fixtures/import/ds_z3_bf16.json" "$tmp/repo/cfg/"
cp "$root/fixtures/import/ds_z3_bf16.json" "$tmp/outside/ds.json"
cd "$tmp/repo" || exit 99
setup() { # key value: one set-up of model/ with key: value, in .dtypelint.yaml
	printf 'setups:\n  - name: s\n    model: model\n    %s: %s\n' "$1" "$2" > .dtypelint.yaml
}
run() { timeout 20 "$dtypelint" "$@" </dev/null >out 2>&1; }

# 1. set-ups that climb out, or are absolute
printf 'setups:\n  - {name: s, model: ../outside/token}\n' > .dtypelint.yaml
run; refused setup-model-dotdot $?
for f in text json sarif markdown github gitlab html; do
	run --format "$f"; refused "setup-model-dotdot-$f" $?
done
printf 'setups:\n  - {name: s, model: %s/outside/token}\n' "$tmp" > .dtypelint.yaml
run; refused setup-model-absolute $?
setup deepspeed ../outside/secret.json; run; refused setup-deepspeed-dotdot $?
setup accelerate ../outside/secret.json; run; refused setup-accelerate-dotdot $?
setup plan ../outside/secret.json; run; refused setup-plan-dotdot $?
setup peft ../outside/secret.json; run; refused setup-peft-dotdot $?
setup trainer-args ../outside/secret.json; run; refused setup-trainer-args-dotdot $?
# ... and a set-up inside is read
setup deepspeed cfg/ds_z3_bf16.json; run; st=$?
if [ $st -lt 2 ]; then ok setup-inside; else bad setup-inside "exit $st: $(head -c 300 out)"; fi

# 2. standard input, devices and FIFOs named by a file. Standard input is a FIFO that this
# shell holds open for writing and never writes: a read of it blocks until the timeout (124)
mkfifo "$tmp/blocking-stdin"
exec 3<>"$tmp/blocking-stdin"
for p in - /dev/stdin /proc/self/fd/0 /dev/zero; do
	printf 'setups:\n  - {name: s, model: "%s"}\n' "$p" > .dtypelint.yaml
	timeout 10 "$dtypelint" <"$tmp/blocking-stdin" >out 2>&1; st=$?
	refused "setup-model-stdin-$p" $st "not a regular file\|standard input"
	setup deepspeed "\"$p\""
	timeout 10 "$dtypelint" <"$tmp/blocking-stdin" >out 2>&1; st=$?
	refused "setup-deepspeed-stdin-$p" $st "not a regular file\|standard input"
done
exec 3>&-
mkfifo cfg/fifo.json
setup deepspeed cfg/fifo.json; run; refused setup-fifo $? "not a regular file"
sed 's|deepspeed_config_file: .*|deepspeed_config_file: fifo.json|' \
	"$root/fixtures/import/accelerate_zero3.yaml" > cfg/acc-fifo.yaml
run model --accelerate cfg/acc-fifo.yaml; refused accelerate-names-fifo $? "not a regular file"
# typed on the command line, a FIFO stays the user's choice (it is read)
# (the writer must be waiting in open() when dtypelint opens the FIFO, or the FIFO reads as
# empty: a short sleep first, and three tries on a loaded machine; each writer is bounded in
# time and holds none of the test's output)
st=9
for try in 1 2 3; do
	(timeout 10 sh -c 'printf "%s\n" "{\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 3}}" > cfg/fifo.json' >/dev/null 2>&1 &)
	sleep 0.3
	timeout 10 "$dtypelint" model --deepspeed cfg/fifo.json >out 2>&1; st=$?
	[ $st -lt 2 ] && break
done
if [ $st -lt 2 ]; then ok typed-fifo-read; else bad typed-fifo-read "exit $st: $(head -c 300 out)"; fi

# 3. a .dtypelint.yaml that is a link to outside
printf 'setups:\n  - {name: s, model: model}\n# SECRET\n' > ../outside/cfg.yaml
rm -f .dtypelint.yaml && ln -s ../outside/cfg.yaml .dtypelint.yaml
run; refused config-link-outside $?
run model; refused config-link-outside-with-input $?
rm .dtypelint.yaml && ln -s ../outside/token .dtypelint.yaml
run model; refused config-link-token $?
rm .dtypelint.yaml

# 4. --fix-plan --write edits nothing outside the repository, even a file typed
cp "$root/fixtures/rules/dt101-fires.yaml" ../outside/m.yaml
cp ../outside/m.yaml ../outside/m-before.yaml
run ../outside/m.yaml --fix-plan --write; st=$?
if [ $st = 2 ] && cmp -s ../outside/m.yaml ../outside/m-before.yaml && grep -q "refusing to edit" out; then
	ok fix-write-outside; else bad fix-write-outside "exit $st: $(head -c 300 out)"; fi
cp ../outside/m-before.yaml m.yaml
run m.yaml --fix-plan --write; st=$?
if [ $st = 0 ] && ! cmp -s m.yaml ../outside/m.yaml; then ok fix-write-inside
else bad fix-write-inside "exit $st: $(head -c 300 out)"; fi

# 5. a file that fails to parse as what it was named for is not quoted
cp ../outside/token cfg/token
printf 'setups:\n  - {name: s, model: cfg/token}\n' > .dtypelint.yaml
for f in text json sarif markdown github gitlab html; do
	run --format "$f"; refused "unparsable-not-quoted-$f" $? "cfg/token"
done
setup deepspeed cfg/token; run; refused unparsable-deepspeed-not-quoted $? "cfg/token"
setup accelerate cfg/token; run; refused unparsable-accelerate-not-quoted $? "cfg/token"
setup peft cfg/token; run; refused unparsable-peft-not-quoted $? "cfg/token"
rm .dtypelint.yaml
printf 'https://user:ghp_SECRET4242@github.com\n' > .dtypelint.yaml
run model; refused unparsable-config-not-quoted $? ".dtypelint.yaml"
printf 'SECRET: [1, 2\n' > .dtypelint.yaml
run model; refused unparsable-config-yaml-not-quoted $? ".dtypelint.yaml"
rm .dtypelint.yaml

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
