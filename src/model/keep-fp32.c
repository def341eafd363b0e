/* SPDX-License-Identifier: MIT */
/*
 * facts/torch-and-transformers.md §3.5: how transformers matches keep-in-fp32 entries.
 * - <= ~4.50: `any(m in name.split(".") for m in keep)`: one whole component.
 * - ~4.51-4.5x: `re.compile("|".join(rf"((^|\.){m}($|\.))" ...)).search(name)`: dot-bounded,
 *   unescaped, so '.' in an entry matches any character and an entry may span components.
 * - v5: `build_glob_alternation(...)` then `.search(key)`: no boundaries, '*' -> '.*', nothing
 *   escaped: "norm" hits "q_norm" and "input_layernorm".
 */
#include <string.h>

#include "dtypelint/keep-fp32.h"

/* Does pattern (with '.' any character and, when star, '*' any run) match name[start..] up to
 * an end position accepted by end_ok? Patterns are short: plain backtracking is fine. */
static bool match_here(const char *p, size_t pl, const char *s, size_t sl, size_t si, bool star,
		       bool need_boundary)
{
	if (pl == 0)
		return !need_boundary || si == sl || s[si] == '.';
	if (star && p[0] == '*') {
		for (size_t k = si; k <= sl; k++)
			if (match_here(p + 1, pl - 1, s, sl, k, star, need_boundary))
				return true;
		return false;
	}
	if (si >= sl)
		return false;
	if (p[0] != '.' && p[0] != s[si])
		return false;
	return match_here(p + 1, pl - 1, s, sl, si + 1, star, need_boundary);
}

bool dtl_keep_match(enum dtl_keep_matcher matcher, const char *pattern, size_t pattern_len,
		    const char *name, size_t name_len)
{
	switch (matcher) {
	case DTL_KEEP_COMPONENT: {
		size_t start = 0;
		for (size_t i = 0; i <= name_len; i++) {
			if (i < name_len && name[i] != '.')
				continue;
			if (i - start == pattern_len && memcmp(name + start, pattern, pattern_len) == 0)
				return true;
			start = i + 1;
		}
		return false;
	}
	case DTL_KEEP_DOT_REGEX:
		for (size_t s = 0; s <= name_len; s++)
			if ((s == 0 || name[s - 1] == '.') &&
			    match_here(pattern, pattern_len, name, name_len, s, false, true))
				return true;
		return false;
	case DTL_KEEP_SUBSTRING:
		for (size_t s = 0; s <= name_len; s++)
			if (match_here(pattern, pattern_len, name, name_len, s, true, false))
				return true;
		return false;
	}
	return false;
}

const char *dtl_keep_matcher_description(enum dtl_keep_matcher matcher)
{
	switch (matcher) {
	case DTL_KEEP_COMPONENT:
		return "one whole dot-separated component";
	case DTL_KEEP_DOT_REGEX:
		return "a dot-bounded, unescaped regular expression";
	case DTL_KEEP_SUBSTRING:
		return "an unanchored substring";
	}
	return "?";
}
