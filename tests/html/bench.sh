#!/bin/sh
# Size of the -f html page and Chromium's time to load and paint it (--screenshot, minus the
# time for an empty page), at 10k and 100k tensors (issue 26). Not part of the test suite
# (tests/html/big.py, suite html-slow, holds the 100k page to 10 s: issue 36).
#   sh tests/html/bench.sh build/dtypelint [tests/bench/gen_moe_manifest.py]
# Manifests from tests/bench's generator (61 layers; --experts 51 / 541, fsdp2), as generated
# (layers and experts repeat) and with every tensor given its own shape (nothing repeats).
set -eu
dtypelint=$(realpath "$1")
gen=$(realpath "${2:-$(dirname "$0")/../bench/gen_moe_manifest.py}")
dir=${TMPDIR:-/tmp}/dtl-html-bench
mkdir -p "$dir"
cd "$dir"
render() { # seconds to load and paint $1
	profile=$(mktemp -d)
	start=$(date +%s.%N)
	chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
		--window-size=1280,1600 --screenshot="$1.png" "file://$dir/$1" >/dev/null 2>&1
	end=$(date +%s.%N)
	rm -rf "$profile"
	echo "$end - $start" | bc
}
echo '<!DOCTYPE html><title>empty</title><p>empty' >empty.html
base=$(render empty.html)
echo "empty page: $base s"
for experts in 51 541; do
	python3 "$gen" --experts "$experts" --plan fsdp2 >"moe-$experts.json"
	python3 - "moe-$experts.json" "distinct-$experts.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for i, t in enumerate(d["tensors"]):
    if t.get("shape"):
        t["shape"][0] += i  # every tensor its own shape: nothing repeats
json.dump(d, open(sys.argv[2], "w"))
PY
	for kind in moe distinct; do
		"$dtypelint" -q -f html -o "$kind-$experts.html" "$kind-$experts.json" || [ $? = 1 ]
		t=$(render "$kind-$experts.html")
		printf '%s-%s: %s tensors, %s bytes, %s s over the empty page\n' "$kind" "$experts" \
			"$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tensors']))" "$kind-$experts.json")" \
			"$(stat -c %s "$kind-$experts.html")" "$(echo "$t - $base" | bc)"
	done
done
