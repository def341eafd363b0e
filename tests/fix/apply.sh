#!/bin/sh
# --fix-plan --diff / --write on copies of the inputs of tests/fix: for each case the diff is
# accepted by both `git apply --check` and `patch -p1 --dry-run` (run where dtypelint ran),
# --write leaves exactly the file that patch makes, edits the file that holds the setting
# (every other input stays byte-identical), reports the finding gone, and a re-run is clean.
# Usage: apply.sh DTYPELINT SOURCE_DIR (this folder)
set -u
dtypelint=$1 src=$2
case "$dtypelint" in /*) ;; *) dtypelint="$(pwd)/$dtypelint" ;; esac
case "$src" in /*) ;; *) src="$(pwd)/$src" ;; esac
# both tools must accept the diff: without one of them the test cannot say (skip)
command -v git >/dev/null && command -v patch >/dev/null || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp"

bad() { echo "FAIL $name: $*"; fail=$((fail + 1)); }

# case NAME RULE TARGET PICK ARGS...: TARGET is the file the fix must edit; PICK 0 for the top
case_() {
	name=$1 rule=$2 target=$3 pick=$4
	shift 4
	dir="$tmp/$name"
	mkdir -p "$dir/orig" "$dir/patched"
	cp "$src"/*.yaml "$src"/*.json "$dir/"
	cp "$src"/*.yaml "$src"/*.json "$dir/orig/"
	cp "$src"/*.yaml "$src"/*.json "$dir/patched/"
	set -- "$@"
	pickarg=""
	[ "$pick" != 0 ] && pickarg="--pick $pick"
	cd "$dir" || return
	"$dtypelint" -q "$@" --select "$rule" >/dev/null 2>&1
	[ $? -eq 1 ] || { bad "$rule does not fire before the fix"; return; }
	# shellcheck disable=SC2086
	"$dtypelint" "$@" --fix-plan --diff $pickarg >d.diff 2>d.err
	st=$?; [ $st -eq 0 ] || { bad "--diff exited $st: $(cat d.err)"; return; }
	grep -qxF -- "--- a/$target" d.diff && grep -qxF -- "+++ b/$target" d.diff ||
		{ bad "the diff is not for a/$target"; cat d.diff; return; }
	for f in *.yaml *.json; do
		cmp -s "$f" "orig/$f" || { bad "--diff changed $f"; return; }
	done
	git apply --check d.diff 2>d.git || { bad "git apply --check: $(cat d.git)"; cat d.diff; return; }
	patch -p1 --dry-run <d.diff >d.patch 2>&1 || { bad "patch --dry-run: $(cat d.patch)"; cat d.diff; return; }
	(cd patched && patch -s -p1 <../d.diff) || { bad "patch failed"; return; }
	# shellcheck disable=SC2086
	"$dtypelint" "$@" --fix-plan --write $pickarg >w.diff 2>w.err
	status=$?
	# WRITE_STATUS=1: the edit brings another finding (the plan says "it creates")
	[ $status -eq "${WRITE_STATUS:-0}" ] || { bad "--write exited $status: $(cat w.err)"; return; }
	cmp -s d.diff w.diff || { bad "--write printed another diff than --diff"; return; }
	grep -q "$rule.* is gone" w.err || { bad "--write did not report the finding gone: $(cat w.err)"; return; }
	for f in *.yaml *.json; do
		if [ "$f" = "$target" ]; then
			cmp -s "$f" "patched/$f" || { bad "--write differs from patch -p1"; diff -u "patched/$f" "$f"; return; }
		else
			cmp -s "$f" "orig/$f" || { bad "--write changed $f, not $target"; diff -u "orig/$f" "$f"; return; }
		fi
	done
	# FAIL_ON=error: the fix turns the error into a warning (use_orig_params)
	"$dtypelint" -q "$@" --select "$rule" --fail-on "${FAIL_ON:-warning}" >after.out 2>&1
	[ $? -eq 0 ] || { bad "$rule still fires after the fix"; cat after.out; return; }
	echo "ok $name"
	[ -n "${SHOW_DIFF:-}" ] && cat d.diff w.err
	pass=$((pass + 1))
}

# insertion into a block mapping of a --plan file (the manifest stays as it is)
case_ plan-insert DT121 plan-zero3.yaml 0 model-zero3.yaml --plan plan-zero3.yaml
# replacement of a single-quoted YAML scalar: the quotes and the comment stay
case_ plan-replace-quoted DT121 plan-zero3.yaml 3 model-zero3.yaml --plan plan-zero3.yaml
# insertion into a multi-line DeepSpeed JSON object, at its indentation
case_ ds-insert DT121 ds-insert.json 0 model-zero3-ds.yaml --deepspeed ds-insert.json
# a JSON file indented with tabs and no newline at its end ("\ No newline at end of file")
case_ ds-no-eol DT121 ds-no-eol.json 0 model-zero3-ds.yaml --deepspeed ds-no-eol.json
# replacement of a JSON value
case_ ds-replace DT121 ds-replace.json 0 model-zero3-ds.yaml --deepspeed ds-replace.json
# deletion of a block-list item (DT131: the embedding leaves fsdp.wrap)
case_ plan-delete DT131 plan-tied.yaml 0 model-tied.yaml --plan plan-tied.yaml
# an accelerate YAML key (DT102: fsdp_use_orig_params), its comment kept
FAIL_ON=error case_ accelerate-replace DT102 accelerate-fsdp1.yaml 0 model-fsdp1.yaml --accelerate accelerate-fsdp1.yaml
# accelerate's comma-separated class list: one class removed (DT131), the comment kept
case_ accelerate-classes DT131 accelerate-fsdp2.yaml 0 model-tied-classes.yaml --accelerate accelerate-fsdp2.yaml
# "buffer_dtype:" with no value, on the last line, no final newline: the value after the colon
# (FSDP1 buffer_dtype for DT301; it brings DT302 for inv_freq, so exit 1)
WRITE_STATUS=1 case_ plan-empty-value DT301 plan-empty-value.yaml 0 model-buffers.yaml --plan plan-empty-value.yaml
# a trainer-args YAML (DT401: bnb_4bit_quant_storage)
case_ trainer-args-storage DT401 trainer-qlora.yaml 0 model-qlora.yaml --trainer-args trainer-qlora.yaml
# DT302: keep the buffers in float32 (DeepSpeed data_types.buffer_dtype, spelled fp32)
case_ ds-buffers DT302 ds-buffers.json 0 model-rope.yaml --deepspeed ds-buffers.json
# DT302 by 0.19.1's blanket cast: the version in the manifest's block mapping, comment kept
case_ manifest-version DT302 model-rope-0.19.1.yaml 0 model-rope-0.19.1.yaml

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
