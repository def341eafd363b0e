/* SPDX-License-Identifier: MIT */
/* Bracket matching, argument splitting and text joining over struct ktok arrays. */
#include <string.h>

#include "kernels-private.h"

static int bracket(const struct ktok *t)
{
	if (t->kind != KT_PUNCT || t->len != 1 || (t->flags & KTF_DIRECTIVE))
		return 0;
	/* parse.c: a skipped branch whose braces do not balance must not shift the others */
	if ((t->flags & KTF_UNBALANCED) && (t->text[0] == '{' || t->text[0] == '}'))
		return 0;
	switch (t->text[0]) {
	case '(':
	case '[':
	case '{':
		return 1;
	case ')':
	case ']':
	case '}':
		return -1;
	}
	return 0;
}

size_t dtl_kernels_match(const struct ktok *toks, size_t open, size_t end)
{
	size_t depth = 0;

	for (size_t i = open; i < end; i++) {
		int b = bracket(&toks[i]);
		if (b > 0) {
			depth++;
		} else if (b < 0) {
			if (depth == 0)
				return end;
			if (--depth == 0)
				return i;
		}
	}
	return end;
}

size_t dtl_kernels_split_args(const struct ktok *toks, size_t lo, size_t hi, size_t *starts,
                              size_t *ends, size_t max)
{
	size_t n = 0, depth = 0, start = lo;

	if (lo >= hi)
		return 0;
	for (size_t i = lo; i <= hi; i++) {
		if (i < hi) {
			int b = bracket(&toks[i]);
			if (b > 0)
				depth++;
			else if (b < 0 && depth > 0)
				depth--;
			if (depth > 0 || !ktok_punct(&toks[i], ","))
				continue;
		}
		if (n < max) {
			starts[n] = start;
			ends[n] = i;
		}
		n++;
		start = i + 1;
	}
	return n < max ? n : max;
}

char *dtl_kernels_join(struct dtl_arena *arena, const struct ktok *toks, size_t lo, size_t hi)
{
	size_t len = 0, pos = 0;
	/* inside a directive (an #if condition) its own tokens are the text */
	uint16_t skip = lo < hi && (toks[lo].flags & KTF_DIRECTIVE) ? 0 : KTF_DIRECTIVE;
	char *out;

	for (size_t i = lo; i < hi; i++) {
		if (toks[i].flags & skip)
			continue;
		len += toks[i].len + 3;
	}
	out = dtl_arena_alloc(arena, len + 1);
	if (!out)
		return NULL;
	for (size_t i = lo; i < hi; i++) {
		const struct ktok *t = &toks[i];
		if (t->flags & skip)
			continue;
		if (pos > 0 && (t->flags & KTF_SPACE))
			out[pos++] = ' ';
		if (t->kind == KT_STRINGIZED)
			out[pos++] = '"';
		memcpy(out + pos, t->text, t->len);
		pos += t->len;
		if (t->kind == KT_STRINGIZED)
			out[pos++] = '"';
	}
	out[pos] = '\0';
	return out;
}
