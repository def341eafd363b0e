#!/bin/sh
# The fuzz smoke run of CI (issue 7): builds the libFuzzer targets with clang, ASan and UBSan
# in BUILD_DIR (default build-fuzz) and runs each for SECONDS (default 9; five targets and
# their start-up: under a minute in all) from SEEDS inputs of its kept corpus (default 300, the
# first by name: libFuzzer runs every seed before it starts, and the whole pipeline corpus
# takes ~40 s under ASan; `meson test` replays every kept input anyway). New inputs go to a
# temporary directory, so the run
# leaves tests/fuzz/corpus alone; a crash, a sanitizer report, a leak or a hang (10 s) fails
# the run and leaves the input in BUILD_DIR/fuzz-artifacts/ to be added to
# tests/fuzz/regressions/<target>/.
# The seed is fixed (-seed=1): a run explores the same inputs in the same order on every
# machine, up to where its time ends, so a failure in CI replays here.
# Usage, from the source root: sh tests/fuzz/smoke.sh [BUILD_DIR] [SECONDS] [SEEDS]
set -eu
build=${1:-build-fuzz}
seconds=${2:-9}
seeds=${3:-300}
cc=${CC:-clang-14}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "smoke.sh: $cc not found (apt-get install clang-14 libclang-rt-14-dev)" >&2
	exit 2
fi
if [ ! -f "$build/build.ninja" ]; then
	CC=$cc meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
		-Dkernels=disabled >/dev/null
fi
# a build error must say what failed: ninja prints it on standard output
if ! log=$(ninja -C "$build" 2>&1); then
	printf '%s\n' "$log" | tail -n 40 >&2
	echo "smoke.sh: the fuzz build in $build failed" >&2
	exit 1
fi
mkdir -p "$build/fuzz-artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
for target in json yaml toml safetensors pipeline importers; do
	mkdir "$work/$target" "$work/seed-$target"
	for f in $(ls "tests/fuzz/corpus/$target" | head -n "$seeds"); do
		ln -s "$PWD/tests/fuzz/corpus/$target/$f" "$work/seed-$target/$f"
	done
	if "$build/tests/fuzz/fuzz-$target" -seed=1 -max_total_time="$seconds" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$build/fuzz-artifacts/$target-" \
		"$work/$target" "$work/seed-$target" >"$work/$target.log" 2>&1; then
		echo "fuzz-$target: $(grep -E '^#[0-9]+.*DONE' "$work/$target.log" | tail -n 1)"
	else
		echo "fuzz-$target: FAILED"
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$work/$target.log" || tail -n 20 "$work/$target.log"
		status=1
	fi
done
exit $status
