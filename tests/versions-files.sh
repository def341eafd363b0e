#!/bin/sh
# The versions users really run (issue 33, item 1): a scratch repository with a ZeRO-3 JSON, a
# LoRA adapter config and deepspeed 0.19.2 pinned in one of the files a Python project keeps
# fails with DT121 and no option, and the versions line names the file and line of the pin.
# Usage: versions-files.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/lib.sh"
f="$root/fixtures/import"

# a fresh repository: the model, the two configs, then one dependency file ($1) holding $2
repo() {
	rm -rf "$tmp/r" && mkdir "$tmp/r" && mkdir "$tmp/r/.git" || exit 99
	cp -r "$f/tiny-qwen2" "$tmp/r/model" && cp "$f/ds_z3_bf16.json" "$tmp/r/ds.json" &&
		cp "$f/adapter_config.json" "$tmp/r/adapter_config.json" || exit 99
	[ -n "$1" ] && mkdir -p "$(dirname "$tmp/r/$1")" && printf '%s\n' "$2" > "$tmp/r/$1"
	printf '%s\n' 'setups:' '  - name: zero3-lora' '    model: model' \
		'    deepspeed: ds.json' '    peft: adapter_config.json' > "$tmp/r/.dtypelint.yaml"
}

# expect NAME FILE LINE: exit 1, DT121, and "deepspeed 0.19.2 (FILE:LINE:" on the versions line
expect() {
	(cd "$tmp/r" && "$dtypelint") > "$tmp/out" 2> "$tmp/err"; st=$?
	if [ $st = 1 ] && grep -q '\[DT121' "$tmp/out" &&
		grep -q "^Versions.*deepspeed 0.19.2 ($2:$3:" "$tmp/err"; then ok "$1"
	else bad "$1" "exit $st: $(grep -v '^ ' "$tmp/out" | head -3) $(cat "$tmp/err")"; fi
}

# 0. no dependency file: newest known, clean of DT121 (today's behaviour)
repo "" ""
(cd "$tmp/r" && "$dtypelint") > "$tmp/out" 2> "$tmp/err"; st=$?
if ! grep -q '\[DT121' "$tmp/out" && grep -q 'deepspeed 0.19.8 (newest known)' "$tmp/err"
then ok no-file; else bad no-file "exit $st: $(cat "$tmp/err")"; fi

repo requirements.txt "$(printf '%s\n' '# training' 'torch' 'deepspeed==0.19.2  # the cluster image')"
expect requirements-txt requirements.txt 3
repo requirements.txt "$(printf '%s\n' '-r requirements/base.txt' '-c constraints.txt')"
mkdir -p "$tmp/r/requirements" && printf 'peft>=0.10\n' > "$tmp/r/requirements/base.txt"
printf 'DeepSpeed == 0.19.2 ; sys_platform == "linux"\n' > "$tmp/r/constraints.txt"
expect requirements-includes constraints.txt 1
repo freeze.txt "$(printf '%s\n' 'accelerate==1.15.0' 'deepspeed==0.19.2' 'torch==2.13.0')"
mv "$tmp/r/freeze.txt" "$tmp/r/requirements-lock.txt"
expect pip-freeze requirements-lock.txt 2
repo environment.yml "$(printf '%s\n' 'name: train' 'dependencies:' '  - python=3.11' \
	'  - pytorch=2.4.1' '  - pip' '  - pip:' '      - deepspeed==0.19.2')"
expect environment-yml environment.yml 7
repo Dockerfile "$(printf '%s\n' 'FROM python:3.11' 'RUN pip install --no-cache-dir \' \
	'    torch==2.4.1 "deepspeed==0.19.2" peft')"
expect dockerfile Dockerfile 3
repo Pipfile.lock '{"default": {"deepspeed": {"hashes": [], "version": "==0.19.2"}}, "develop": {}}'
expect pipfile-lock Pipfile.lock 1
repo uv.lock "$(printf '%s\n' 'version = 1' 'requires-python = ">=3.10"' '' '[[package]]' \
	'name = "deepspeed"' 'version = "0.19.2"' 'source = { registry = "https://pypi.org/simple" }')"
expect uv-lock uv.lock 6
repo poetry.lock "$(printf '%s\n' '[[package]]' 'name = "torch"' 'version = "2.4.1"' '' \
	'[[package]]' 'name = "deepspeed"' 'version = "0.19.2"' 'optional = false')"
expect poetry-lock poetry.lock 7
repo pylock.toml "$(printf '%s\n' 'lock-version = "1.0"' '[[packages]]' 'name = "deepspeed"' \
	'version = "0.19.2"')"
expect pylock-toml pylock.toml 4
repo pyproject.toml "$(printf '%s\n' '[project]' 'name = "train"' \
	'dependencies = ["torch>=2.4", "peft"]' '[project.optional-dependencies]' \
	'zero3 = [' '  "deepspeed==0.19.2",' ']')"
expect pyproject-pep621 pyproject.toml 6
repo pyproject.toml "$(printf '%s\n' '[project]' 'dependencies = ["deepspeed>=0.18"]' \
	'[tool.uv]' 'constraint-dependencies = ["deepspeed==0.19.2"]')"
expect pyproject-uv-constraints pyproject.toml 4
repo pyproject.toml "$(printf '%s\n' '[tool.poetry.dependencies]' 'python = "^3.10"' \
	'deepspeed = "0.19.2"' '[tool.poetry.group.dev.dependencies]' 'trl = "^1.6"')"
expect pyproject-poetry pyproject.toml 3

# a file in a sub-folder of the set-up's model is not beside it; one up to the root is
repo requirements.txt 'deepspeed==0.19.2'
mkdir "$tmp/r/train" && mv "$tmp/r/.dtypelint.yaml" "$tmp/r/train/" &&
	sed -i 's|: \([a-z]\)|: ../\1|' "$tmp/r/train/.dtypelint.yaml"
(cd "$tmp/r/train" && "$dtypelint") > "$tmp/out" 2> "$tmp/err"; st=$?
if [ $st = 1 ] && grep -q "deepspeed 0.19.2 (../requirements.txt:1:1)" "$tmp/err"
then ok up-to-root; else bad up-to-root "exit $st: $(cat "$tmp/err")"; fi

# --versions-from FILE and a set-up's versions: name the file (and nothing else is searched)
repo requirements.txt 'deepspeed==0.19.8'
printf '[{"name": "torch", "version": "2.4.1"}, {"name": "deepspeed", "version": "0.19.2"}]\n' \
	> "$tmp/r/pip-list.json"
(cd "$tmp/r" && "$dtypelint" --versions-from pip-list.json) > "$tmp/out" 2> "$tmp/err"; st=$?
if [ $st = 1 ] && grep -q "deepspeed 0.19.2 (pip-list.json:1:74)" "$tmp/err"
then ok versions-from; else bad versions-from "exit $st: $(cat "$tmp/err")"; fi
echo '    versions: pip-list.json' >> "$tmp/r/.dtypelint.yaml"
expect setup-versions-key pip-list.json 1

# options and dtypelint's own files still win over a dependency file
repo requirements.txt 'deepspeed==0.19.2'
(cd "$tmp/r" && "$dtypelint" --with deepspeed=0.19.3) > "$tmp/out" 2> "$tmp/err"; st=$?
if [ $st = 0 ] && grep -q "deepspeed 0.19.3 (--with)" "$tmp/err"
then ok with-wins; else bad with-wins "exit $st: $(cat "$tmp/err")"; fi

# --show-plan says where each version came from
(cd "$tmp/r" && "$dtypelint" --show-plan) > "$tmp/out" 2> "$tmp/err"; st=$?
if grep -q "deepspeed *0.19.2 (requirements.txt:1:1)" "$tmp/out"
then ok show-plan; else bad show-plan "exit $st: $(cat "$tmp/out")"; fi

# a bad version of a framework is an input error at its line; an include leaving the
# repository is refused
repo requirements.txt "$(printf '%s\n' 'torch' 'deepspeed==0.19.x2')"
(cd "$tmp/r" && "$dtypelint") > "$tmp/out" 2> "$tmp/err"; st=$?
if [ $st = 2 ] && grep -q "requirements.txt:2:.*error: " "$tmp/out" "$tmp/err"
then ok bad-version; else bad bad-version "exit $st: $(cat "$tmp/out" "$tmp/err")"; fi
mkdir -p "$tmp/outside" && printf 'deepspeed==0.19.2\n' > "$tmp/outside/secret.txt"
repo requirements.txt "-r $tmp/outside/secret.txt"
(cd "$tmp/r" && "$dtypelint") > "$tmp/out" 2> "$tmp/err"; st=$?
if [ $st = 2 ] && ! grep -q 'deepspeed 0.19.2' "$tmp/err"
then ok include-confined; else bad include-confined "exit $st: $(cat "$tmp/out" "$tmp/err")"; fi

# ranges (item 2): every behaviour boundary inside the range is linted; the finding says
# where it fires and which pin avoids it, and the verdict follows the worst allowed version.
# DT121 fires with 0.19.2 alone: up to 0.19.1 deepspeed.initialize casts the whole module,
# adapters included, to bfloat16 (rules/versions.yaml deepspeed-blanket-module-cast)
repo requirements.txt "$(printf '%s\n' 'torch' 'deepspeed>=0.18')"
(cd "$tmp/r" && "$dtypelint") > "$tmp/out" 2> "$tmp/err"; st=$?
if [ $st = 1 ] && grep -q '\[DT121' "$tmp/out" &&
	grep -q "fails with deepspeed 0.19.2, which requirements.txt:2:1 allows (>=0.18); \`deepspeed>=0.19.3\` avoids it" "$tmp/out"
then ok range-fires; else bad range-fires "exit $st: $(grep -v note: "$tmp/out" | head -5)"; fi
(cd "$tmp/r" && "$dtypelint" -f json) > "$tmp/out" 2> "$tmp/err"
if python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
f = [f for f in d["findings"] if f["rule"] == "DT121"][0]
assert f["versions"] == [{"name": "deepspeed", "fires": "0.19.2", "from": "0.19.2",
  "to": "0.19.2", "allowed": ">=0.18", "allowed_at": "requirements.txt:2:1",
  "avoided_by": "deepspeed>=0.19.3", "not_with": None}], f["versions"]' "$tmp/out"
then ok range-json; else bad range-json "$(head -c 300 "$tmp/out")"; fi
(cd "$tmp/r" && "$dtypelint" -f sarif) > "$tmp/out" 2> "$tmp/err"
if python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
r = [r for r in d["runs"][0]["results"] if r["ruleId"] == "DT121"][0]
assert r["properties"]["versions"][0]["avoided_by"] == "deepspeed>=0.19.3"' "$tmp/out"
then ok range-sarif; else bad range-sarif "$(head -c 300 "$tmp/out")"; fi
(cd "$tmp/r" && "$dtypelint" --assume newest) > "$tmp/out" 2> "$tmp/err"; st=$?
if [ $st = 0 ] && ! grep -q '\[DT121' "$tmp/out"; then ok assume-newest
else bad assume-newest "exit $st: $(grep -v note: "$tmp/out" | head -3)"; fi
repo requirements.txt 'deepspeed>=0.19.3'
(cd "$tmp/r" && "$dtypelint") > "$tmp/out" 2> "$tmp/err"; st=$?
if [ $st = 0 ] && ! grep -q '\[DT121' "$tmp/out"; then ok range-clean
else bad range-clean "exit $st: $(grep -v note: "$tmp/out" | head -3)"; fi
repo requirements.txt 'deepspeed<0.19.3,>=0.19.2'
(cd "$tmp/r" && "$dtypelint") > "$tmp/out" 2> "$tmp/err"; st=$?
if [ $st = 1 ] && grep -q '\[DT121' "$tmp/out" && ! grep -q 'with deepspeed' "$tmp/out"
then ok range-fires-everywhere; else bad range-fires-everywhere "exit $st: $(grep -v note: "$tmp/out" | head -3)"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
