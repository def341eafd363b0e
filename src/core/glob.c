/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "dtypelint/glob.h"

const char *dtl_glob_check(const char *pattern, size_t len)
{
	size_t seg_start = 0;

	if (len == 0)
		return "a glob must not be empty";
	for (size_t i = 0; i <= len; i++) {
		if (i < len && pattern[i] != '.')
			continue;
		size_t seg_len = i - seg_start;
		const char *seg = pattern + seg_start;
		if (seg_len == 0)
			return "a glob must not have an empty segment (leading, trailing or double "
			       "'.')";
		if (memchr(seg, '*', seg_len)) {
			const char *dbl = NULL;
			for (size_t k = 0; k + 1 < seg_len; k++)
				if (seg[k] == '*' && seg[k + 1] == '*')
					dbl = seg + k;
			if (dbl && !(seg_len == 2))
				return "'**' must be a whole segment (as in 'model.**.weight')";
		}
		seg_start = i + 1;
	}
	return NULL;
}

bool dtl_glob_is_literal(const char *pattern, size_t len)
{
	return memchr(pattern, '*', len) == NULL;
}

/* '*' within one segment: classic wildcard match of seg against text (no dots in either). */
static bool segment_match(const char *pat, size_t plen, const char *text, size_t tlen)
{
	size_t p = 0, t = 0, star_p = (size_t)-1, star_t = 0;

	while (t < tlen) {
		if (p < plen && pat[p] == '*') {
			star_p = p++;
			star_t = t;
		} else if (p < plen && pat[p] == text[t]) {
			p++;
			t++;
		} else if (star_p != (size_t)-1) {
			p = star_p + 1;
			t = ++star_t;
		} else {
			return false;
		}
	}
	while (p < plen && pat[p] == '*')
		p++;
	return p == plen;
}

static size_t segment_end(const char *s, size_t start, size_t len)
{
	const char *dot = memchr(s + start, '.', len - start);
	return dot ? (size_t)(dot - s) : len;
}

/* Matches pattern segments [pi..) against path segments [ti..); positions are offsets of a
 * segment start, or len+1 for "past the end". Backtracking only at '**'. */
static bool match_from(const char *pat, size_t plen, size_t pi, const char *path, size_t tlen,
                       size_t ti)
{
	while (pi <= plen) {
		if (pi == plen + 1)
			break;
		size_t pe = segment_end(pat, pi, plen);
		if (pe - pi == 2 && pat[pi] == '*' && pat[pi + 1] == '*') {
			size_t next_pi = pe + 1;
			if (next_pi > plen)
				return true; /* trailing '**' matches the rest, even nothing */
			/* try every split point: zero or more whole segments */
			size_t t = ti;
			for (;;) {
				if (match_from(pat, plen, next_pi, path, tlen, t))
					return true;
				if (t > tlen)
					return false;
				t = segment_end(path, t, tlen) + 1;
			}
		}
		if (ti > tlen)
			return false;
		size_t te = segment_end(path, ti, tlen);
		if (!segment_match(pat + pi, pe - pi, path + ti, te - ti))
			return false;
		pi = pe + 1;
		ti = te + 1;
		if (pi > plen)
			return ti > tlen;
	}
	return ti > tlen;
}

bool dtl_glob_match(const char *pattern, size_t pattern_len, const char *path, size_t path_len)
{
	if (dtl_glob_is_literal(pattern, pattern_len))
		return pattern_len == path_len && memcmp(pattern, path, path_len) == 0;
	if (path_len == 0) /* the root path "" matches only a lone '**' */
		return pattern_len == 2 && pattern[0] == '*' && pattern[1] == '*';
	return match_from(pattern, pattern_len, 0, path, path_len, 0);
}
