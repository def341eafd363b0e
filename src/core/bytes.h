/* SPDX-License-Identifier: MIT */
/*
 * Eight bytes at a time: masks over a word loaded with memcpy (little- or big-endian alike;
 * callers that turn a mask into an offset with __builtin_ctzll assume little-endian, as the
 * build does). The JSON readers (src/input/doc-json.c, src/model/tensor-text.c) and the glob
 * paths (src/core/glob.c) scan with them.
 */
#ifndef DTL_CORE_BYTES_H
#define DTL_CORE_BYTES_H
#ifndef DTL_SEES_CORE
#error "bytes.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DTL_BYTES_ONES  UINT64_C(0x0101010101010101)
#define DTL_BYTES_HIGHS UINT64_C(0x8080808080808080)

/* The high bit of every byte of word that is byte, and of no other. */
static inline uint64_t dtl_bytes_equal(uint64_t word, unsigned char byte)
{
	const uint64_t lows = UINT64_C(0x7F7F7F7F7F7F7F7F);
	uint64_t x = word ^ (DTL_BYTES_ONES * byte);
	return ~(((x & lows) + lows) | x | lows);
}

/* A string of at most eight bytes as one word, read inside it only: from 4 to 8 bytes the first
 * four, and above them the last four (overlapping); from 1 to 3 the first, middle and last
 * byte. With n, the word says which bytes they are: equal words, equal strings. */
static inline uint64_t dtl_bytes_short(const char *s, size_t n)
{
	uint32_t first, last;

	if (n >= 4) {
		memcpy(&first, s, 4);
		memcpy(&last, s + n - 4, 4);
		return (uint64_t)last << 32 | first;
	}
	if (n == 0)
		return 0;
	return (uint64_t)(unsigned char)s[0] << 16 | (uint64_t)(unsigned char)s[n / 2] << 8 |
	       (unsigned char)s[n - 1];
}

/* The high bits of the bytes a JSON string scan must stop at: '"', '\\', a control byte or a
 * non-ASCII byte. Zero when the word has none; else its lowest set bit is the first such byte
 * (the bits above it may be false positives, from borrows). */
static inline uint64_t dtl_bytes_string_special(uint64_t word)
{
	uint64_t quote = word ^ (DTL_BYTES_ONES * '"');
	uint64_t slash = word ^ (DTL_BYTES_ONES * '\\');
	return (((quote - DTL_BYTES_ONES) & ~quote) | ((slash - DTL_BYTES_ONES) & ~slash) |
	        (word - DTL_BYTES_ONES * 0x20) | word) &
	       DTL_BYTES_HIGHS;
}

#endif
