#!/bin/sh
# SPDX-License-Identifier: MIT
# Every C file is formatted as .clang-format says (clang-format 14, docs/design.md §8).
#   format.sh SOURCE_ROOT CLANG_FORMAT
set -u
root=$1
clang_format=$2
cd "$root" || exit 2
if [ -d .git ] && command -v git >/dev/null; then
	files=$(git ls-files '*.c' '*.h' | grep -v '^tests/kernels/data/')
else
	files=$(find src include tests tools -name '*.[ch]' | grep -v '^tests/kernels/data/' | sort)
fi
# shellcheck disable=SC2086
if ! "$clang_format" --dry-run --Werror $files; then
	echo "FAIL: run: clang-format -i \$(git ls-files '*.c' '*.h')"
	exit 1
fi
echo "format: $(echo "$files" | wc -l) C files match .clang-format"
