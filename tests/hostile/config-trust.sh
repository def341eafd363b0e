#!/bin/sh
# Configs are trusted only where that is safe (issue 21, requirement 8): a .dtypelint.yaml that
# other users can write (the file or its folder world-writable, or owned by another user below
# a world-writable folder such as /tmp) is ignored with a warning; --config still reads it. A
# config can lower limits but not raise them above their defaults; options can.
# Usage: config-trust.sh DTYPELINT SOURCE_ROOT
. "$(dirname "$0")/../lib.sh"
# the config silences DT101, which the manifest fires: exit 0 when read, 1 when ignored
setup() { # dir
	mkdir -p "$1"
	cp "$root/fixtures/rules/dt101-fires.yaml" "$1/m.yaml"
	printf 'ignore: [DT101]\n' > "$1/.dtypelint.yaml"
	chmod 644 "$1/.dtypelint.yaml"
}
expect() { # name dir want-exit want-warning(yes|no) [options...]
	name=$1 dir=$2 want=$3 warn=$4
	shift 4
	(cd "$dir" && "$dtypelint" "$@" m.yaml) >out 2>err
	st=$?
	if [ "$warn" = yes ]; then w=$(grep -c "warning: ignoring .dtypelint.yaml" err); else w=0; fi
	if [ $st = "$want" ] && { [ "$warn" = no ] || [ "$w" = 1 ]; } &&
		{ [ "$warn" = yes ] || ! grep -q "ignoring" err; }; then ok "$name"
	else bad "$name" "exit $st (want $want), stderr: $(head -c 300 err)"; fi
}
chmod 755 "$tmp"

setup "$tmp/mine"
expect trusted "$tmp/mine" 0 no

setup "$tmp/ww"
chmod 1777 "$tmp/ww"
expect world-writable-folder "$tmp/ww" 1 yes
expect world-writable-folder-explicit "$tmp/ww" 0 no --config .dtypelint.yaml

setup "$tmp/wf"
chmod 666 "$tmp/wf/.dtypelint.yaml"
expect world-writable-file "$tmp/wf" 1 yes

# owned by another user below a sticky world-writable folder (needs root to chown)
if [ "$(id -u)" = 0 ]; then
	mkdir "$tmp/sticky" && chmod 1777 "$tmp/sticky"
	setup "$tmp/sticky/theirs"
	chown -R 65534:65534 "$tmp/sticky/theirs"
	chmod 755 "$tmp/sticky/theirs"
	expect foreign-under-sticky "$tmp/sticky/theirs" 1 yes
	setup "$tmp/sticky/ours"
	expect ours-under-sticky "$tmp/sticky/ours" 0 no
else
	echo "skip foreign-under-sticky: needs root to chown"
fi

# limits: lowering is fine, raising is for the command line only
setup "$tmp/limits"
printf 'limits: {max-tensors: 20M}\n' > "$tmp/limits/.dtypelint.yaml"
(cd "$tmp/limits" && "$dtypelint" m.yaml) >out 2>err
st=$?
if [ $st = 2 ] && grep -q "^.dtypelint.yaml:1:23: error: 'limits.max-tensors' is above its default" out
then ok config-cannot-raise; else bad config-cannot-raise "exit $st: $(head -c 300 err)"; fi
printf 'limits: {max-tensors: 1M}\n' > "$tmp/limits/.dtypelint.yaml"
expect config-can-lower "$tmp/limits" 1 no
printf 'limits: {max-tensors: 5}\n' > "$tmp/limits/.dtypelint.yaml"
(cd "$tmp/limits" && "$dtypelint" m.yaml) >out 2>err
st=$?
if [ $st = 2 ] && grep -q "limits.max_tensors\|max-tensors" out; then ok config-lower-applies
else bad config-lower-applies "exit $st: $(head -c 300 err)"; fi
(cd "$tmp/limits" && "$dtypelint" --max-tensors 20M m.yaml) >out 2>err
st=$?
if [ $st = 1 ]; then ok option-can-raise; else bad option-can-raise "exit $st: $(head -c 300 err)"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
