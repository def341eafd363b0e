/* SPDX-License-Identifier: MIT */
/* Unit tests of src/core: dtypes, globs, versions, arena and string map. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dtl-test.h"
#include "dtypelint/core/arena.h"
#include "dtypelint/core/atomic-file.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/core/dtype.h"
#include "dtypelint/core/glob.h"
#include "dtypelint/core/version.h"
#include "glob-cursor.h"

#define PARSE(s)   dtl_dtype_parse((s), strlen(s))
#define GLOB(p, s) dtl_glob_match((p), strlen(p), (s), strlen(s))

/* Writes path with text, then sets its modification time back to *mtime when given. */
static void put_file(const char *path, const char *text, const struct timespec *mtime)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	if (mtime) {
		struct timespec times[2] = {*mtime, *mtime};
		ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
	}
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* A file saved between the open and the commit of a write that expects its old text is left
 * as saved (issue 35, item 6): caught by its bytes even when size and mtime are the same (a
 * save within one tick of a coarse clock), and by its identity when replaced by a rename. */
START_TEST(atomic_commit_refuses_a_changed_target)
{
	const char *old = "stage: 3\n", *saved = "stage: 2\n";
	char dir[PATH_MAX], path[PATH_MAX + 16], other[PATH_MAX + 16], buf[64] = {0};
	struct dtl_atomic_file f;
	struct dtl_error error = {0};
	struct stat st;

	dtl_test_mkdtemp(dir, sizeof(dir), "dtl-atomic");
	snprintf(path, sizeof(path), "%s/c.yaml", dir);
	snprintf(other, sizeof(other), "%s/d.yaml", dir);
	for (int how = 0; how < 3; how++) {
		put_file(path, old, NULL);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_int_eq(dtl_atomic_open(&f, path, &error), 0);
		dtl_atomic_expect(&f, old, strlen(old));
		fputs("stage: 1\n", f.out);
		if (how == 1) /* the same size and mtime, other bytes */
			put_file(path, saved, &st.st_mtim);
		if (how == 2) { /* an editor's save: a new file renamed over it */
			put_file(other, old, &st.st_mtim);
			ck_assert_int_eq(rename(other, path), 0);
		}
		int r = dtl_atomic_commit(&f, &error);
		FILE *in = fopen(path, "r");
		ck_assert_ptr_nonnull(in);
		memset(buf, 0, sizeof(buf));
		ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, in), 0);
		fclose(in);
		if (how == 0) {
			ck_assert_int_eq(r, 0);
			ck_assert_str_eq(buf, "stage: 1\n");
		} else {
			ck_assert_int_eq(r, -EAGAIN);
			ck_assert_str_eq(buf, how == 1 ? saved : old);
			ck_assert_ptr_nonnull(strstr(error.message, "changed"));
		}
		ck_assert_uint_eq(count_entries(dir), 1); /* no temporary file left */
	}
	dtl_test_rmtree(dir);
}
END_TEST

START_TEST(dtype_names_and_aliases)
{
	ck_assert_int_eq(PARSE("bfloat16"), DTL_DTYPE_BF16);
	ck_assert_int_eq(PARSE("torch.bfloat16"), DTL_DTYPE_BF16);
	ck_assert_int_eq(PARSE("bf16"), DTL_DTYPE_BF16);
	ck_assert_int_eq(PARSE("BF16"), DTL_DTYPE_BF16);
	ck_assert_int_eq(PARSE("half"), DTL_DTYPE_F16);
	ck_assert_int_eq(PARSE("double"), DTL_DTYPE_F64);
	ck_assert_int_eq(PARSE("F8_E4M3"), DTL_DTYPE_F8_E4M3FN);
	ck_assert_int_eq(PARSE("U8"), DTL_DTYPE_U8);
	ck_assert_int_eq(PARSE("Bfloat16"), DTL_DTYPE_NONE);
	ck_assert_int_eq(PARSE("torch."), DTL_DTYPE_NONE);
	ck_assert_int_eq(PARSE(""), DTL_DTYPE_NONE);
}
END_TEST

START_TEST(dtype_names_sizes_and_kinds)
{
	ck_assert_str_eq(dtl_dtype_torch_name(DTL_DTYPE_F32), "torch.float32");
	ck_assert_str_eq(dtl_dtype_scalar_type_name(DTL_DTYPE_BF16), "BFloat16");
	ck_assert_uint_eq(dtl_dtype_itemsize(DTL_DTYPE_BF16), 2);
	ck_assert(dtl_dtype_is_floating(DTL_DTYPE_F8_E5M2));
	ck_assert(!dtl_dtype_is_floating(DTL_DTYPE_U8));
}
END_TEST

START_TEST(dtype_promotion)
{
	ck_assert_int_eq(dtl_dtype_promote(DTL_DTYPE_BF16, DTL_DTYPE_F32), DTL_DTYPE_F32);
	ck_assert_int_eq(dtl_dtype_promote(DTL_DTYPE_BF16, DTL_DTYPE_F16), DTL_DTYPE_F32);
	ck_assert_int_eq(dtl_dtype_promote(DTL_DTYPE_BF16, DTL_DTYPE_I64), DTL_DTYPE_BF16);
	ck_assert_int_eq(dtl_dtype_promote(DTL_DTYPE_U8, DTL_DTYPE_I8), DTL_DTYPE_I16);
	ck_assert_int_eq(dtl_dtype_promote(DTL_DTYPE_BOOL, DTL_DTYPE_I32), DTL_DTYPE_I32);
}
END_TEST

START_TEST(glob_matching)
{
	ck_assert(GLOB("model.layers.*", "model.layers.0"));
	ck_assert(!GLOB("model.layers.*", "model.layers.0.mlp"));
	ck_assert(GLOB("model.**", "model.layers.0.mlp"));
	ck_assert(GLOB("model.**", "model"));
	ck_assert(GLOB("**.weight", "weight"));
	ck_assert(GLOB("a.**.b", "a.b"));
	ck_assert(GLOB("a.**.b", "a.x.y.b"));
	ck_assert(!GLOB("a.**.b", "a.x.y.c"));
	ck_assert(GLOB("layer*", "layers"));
	ck_assert(!GLOB("layer*", "layers.0"));
	ck_assert(GLOB("*.mlp*", "h.mlp1"));
	ck_assert(GLOB("**", ""));
	ck_assert(!GLOB("*", ""));
	ck_assert(GLOB("a.b", "a.b"));
	ck_assert(!GLOB("a.b", "a.bc"));
}
END_TEST

START_TEST(glob_check_rejects_empty_segments)
{
	ck_assert_ptr_null(dtl_glob_check("model.**.w", 10));
	ck_assert_ptr_nonnull(dtl_glob_check("a..b", 4));
	ck_assert_ptr_nonnull(dtl_glob_check("a.b**", 5));
	ck_assert_ptr_nonnull(dtl_glob_check(".a", 2));
	ck_assert_ptr_nonnull(dtl_glob_check("", 0));
}
END_TEST

static int cmp(const char *a, const char *b)
{
	struct dtl_version va, vb;
	ck_assert_int_eq(dtl_version_parse(a, strlen(a), &va), 0);
	ck_assert_int_eq(dtl_version_parse(b, strlen(b), &vb), 0);
	return dtl_version_compare(&va, &vb);
}

/* issue 21, item 6: an error never cuts a path open() takes, and a cut message says so */
START_TEST(error_never_truncates_silently)
{
	struct dtl_error error;
	char path[4000], long_text[3000];
	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	struct dtl_loc loc = {.file = path, .line = 1, .column = 2};
	dtl_error_set(&error, loc, -EINVAL, "%s", long_text);
	ck_assert_str_eq(error.loc.file, path);
	ck_assert_uint_eq(strlen(error.message), DTL_ERROR_MESSAGE_MAX - 1);
	ck_assert_str_eq(error.message + DTL_ERROR_MESSAGE_MAX - 4, "...");
	/* a cut never splits a UTF-8 sequence */
	char utf8[2100] = "";
	for (int i = 0; i < 700; i++)
		strcat(utf8, "\xc3\xa9");
	dtl_error_set(&error, loc, -EINVAL, "%s", utf8);
	size_t n = strlen(error.message);
	ck_assert_str_eq(error.message + n - 3, "...");
	ck_assert_int_eq((unsigned char)error.message[n - 4], 0xa9);
	dtl_error_set(&error, loc, -EINVAL, "short %d", 7);
	ck_assert_str_eq(error.message, "short 7");
}
END_TEST

START_TEST(version_ordering)
{
	ck_assert_int_lt(cmp("0.19.2", "0.19.3"), 0);
	ck_assert_int_eq(cmp("2.1", "2.1.0"), 0);
	ck_assert_int_lt(cmp("2.8.0.dev20250501", "2.8.0"), 0);
	ck_assert_int_lt(cmp("2.8.0rc1", "2.8.0"), 0);
	ck_assert_int_lt(cmp("2.8.0a1", "2.8.0b1"), 0);
	ck_assert_int_eq(cmp("2.1.0+cu121", "2.1.0"), 0);
	ck_assert_int_gt(cmp("1.10.0", "1.9.0"), 0);
}
END_TEST

START_TEST(version_parse_rejects_non_versions)
{
	struct dtl_version v;

	ck_assert_int_lt(dtl_version_parse("latest", 6, &v), 0);
	ck_assert_int_lt(dtl_version_parse("", 0, &v), 0);
	ck_assert_int_lt(dtl_version_parse("2.x", 3, &v), 0);
}
END_TEST

START_TEST(version_format_drops_trailing_zero)
{
	struct dtl_version v;
	char buf[32];

	ck_assert_int_eq(dtl_version_parse("4.57.0.dev0", 11, &v), 0);
	ck_assert_str_eq(dtl_version_format(&v, buf, sizeof(buf)), "4.57.dev0");
}
END_TEST

START_TEST(strmap_keeps_first_index_of_a_key)
{
	struct dtl_arena arena;
	struct dtl_strmap map;
	char keys[3000][8];

	dtl_arena_init(&arena);
	dtl_strmap_init(&map, &arena);
	for (int i = 0; i < 3000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		ck_assert_int_eq(dtl_strmap_put(&map, keys[i], strlen(keys[i]), i), i);
	}
	ck_assert_int_eq(dtl_strmap_put(&map, "k7", 2, 99), 7);
	ck_assert_int_eq(dtl_strmap_get(&map, "k2999", 5), 2999);
	ck_assert_int_eq(dtl_strmap_get(&map, "k3000", 5), -1);
	ck_assert_uint_eq(map.count, 3000);
	dtl_arena_fini(&arena);
}
END_TEST

START_TEST(arena_sprintf_formats)
{
	struct dtl_arena arena;

	dtl_arena_init(&arena);
	ck_assert_str_eq(dtl_arena_sprintf(&arena, "%s-%d", "x", 42), "x-42");
	dtl_arena_fini(&arena);
}
END_TEST

START_TEST(arena_calloc_refuses_overflow)
{
	struct dtl_arena arena;

	dtl_arena_init(&arena);
	ck_assert_ptr_null(dtl_arena_calloc(&arena, SIZE_MAX / 2, 4));
	dtl_arena_fini(&arena);
}
END_TEST

START_TEST(arena_large_alloc_is_zeroed)
{
	struct dtl_arena arena;

	dtl_arena_init(&arena);
	unsigned char *big = dtl_arena_alloc(&arena, 1 << 20);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(big[(1 << 20) - 1], 0);
	dtl_arena_fini(&arena);
}
END_TEST

/* A tiny deterministic generator: the same cases on every run. */
static uint32_t next_random(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 16;
}

static size_t random_path(uint32_t *state, char *out, bool pattern)
{
	static const char *const words[] = {"model",  "layers", "0",       "1", "mlp", "gate",
	                                    "weight", "lora_A", "experts", "a", ""};
	static const char *const wild[] = {"*",    "**",  "*_proj", "lay*", "*s",
	                                   "l*r*", "l*s", "ex*ts",  "a*a",  "lo*A"};
	size_t n = 1 + next_random(state) % 5, o = 0;
	/* one pattern in four is '**' and literal segments, which the set looks up by the
	 * path's last segments */
	bool suffix = pattern && next_random(state) % 4 == 0;

	for (size_t k = 0; k < n; k++) {
		const char *w;
		if (suffix)
			w = k ? words[next_random(state) % 10] : "**";
		else if (pattern && next_random(state) % 3 == 0)
			w = wild[next_random(state) % (sizeof(wild) / sizeof(wild[0]))];
		else
			w = words[next_random(state) % (pattern ? 10 : 11)];
		if (k)
			out[o++] = '.';
		memcpy(out + o, w, strlen(w));
		o += strlen(w);
	}
	out[o] = '\0';
	return o;
}

/* The matcher as it was before it was made linear (recursive, backtracking at '**'):
 * the reference the new one must agree with, on inputs small enough for it. */
static size_t ref_segment_end(const char *s, size_t start, size_t len)
{
	while (start < len && s[start] != '.')
		start++;
	return start;
}

static bool ref_segment_match(const char *pat, size_t plen, const char *text, size_t tlen)
{
	if (plen == 0)
		return tlen == 0;
	if (pat[0] == '*') {
		for (size_t k = 0; k <= tlen; k++)
			if (ref_segment_match(pat + 1, plen - 1, text + k, tlen - k))
				return true;
		return false;
	}
	return tlen > 0 && pat[0] == text[0] &&
	       ref_segment_match(pat + 1, plen - 1, text + 1, tlen - 1);
}

static bool ref_match_from(const char *pat, size_t plen, size_t pi, const char *path, size_t tlen,
                           size_t ti)
{
	while (pi <= plen) {
		size_t pe = ref_segment_end(pat, pi, plen);
		if (pe - pi == 2 && pat[pi] == '*' && pat[pi + 1] == '*') {
			size_t next_pi = pe + 1;
			if (next_pi > plen)
				return true;
			for (size_t t = ti;; t = ref_segment_end(path, t, tlen) + 1) {
				if (ref_match_from(pat, plen, next_pi, path, tlen, t))
					return true;
				if (t > tlen)
					return false;
			}
		}
		if (ti > tlen)
			return false;
		size_t te = ref_segment_end(path, ti, tlen);
		if (!ref_segment_match(pat + pi, pe - pi, path + ti, te - ti))
			return false;
		pi = pe + 1;
		ti = te + 1;
		if (pi > plen)
			return ti > tlen;
	}
	return ti > tlen;
}

static bool ref_glob_match(const char *pat, size_t plen, const char *path, size_t tlen)
{
	if (!memchr(pat, '*', plen))
		return plen == tlen && memcmp(pat, path, tlen) == 0;
	if (tlen == 0)
		return plen == 2 && pat[0] == '*' && pat[1] == '*';
	return ref_match_from(pat, plen, 0, path, tlen, 0);
}

/* Random strings over a small alphabet with dots, stars and '**' segments (valid globs or
 * not: empty segments, "a**b"): dtl_glob_match() answers what the reference answers. */
START_TEST(glob_match_agrees_with_reference)
{
	static const char *const pieces[] = {"a", "b", "ab", "*", "**", ".", "a*", "*b", ""};
	uint32_t state = 21;
	char pattern[64], path[64];

	for (int round = 0; round < 200000; round++) {
		size_t pl = 0, tl = 0;
		size_t np = next_random(&state) % 7, nt = next_random(&state) % 7;
		for (size_t k = 0; k < np; k++) {
			const char *w = pieces[next_random(&state) % 9];
			if (k && next_random(&state) % 2)
				pattern[pl++] = '.';
			memcpy(pattern + pl, w, strlen(w));
			pl += strlen(w);
		}
		for (size_t k = 0; k < nt; k++) {
			const char *w =
			    next_random(&state) % 3 ? pieces[next_random(&state) % 3] : "";
			if (k)
				path[tl++] = '.';
			memcpy(path + tl, w, strlen(w));
			tl += strlen(w);
		}
		pattern[pl] = path[tl] = '\0';
		ck_assert_msg(dtl_glob_match(pattern, pl, path, tl) ==
		                  ref_glob_match(pattern, pl, path, tl),
		              "pattern '%s', path '%s'", pattern, path);
	}
}
END_TEST

/* Issue 21: '**' does not backtrack exponentially. 40 '**' and a literal no path has, against
 * 80 segments, took the recursive matcher longer than any test timeout; and 1 KiB of pattern
 * against 1 KiB of path (the fuzz target's bound) is O(product), not more. */
START_TEST(glob_match_hostile_is_fast)
{
	char pattern[1100], path[1100];
	size_t pl = 0, tl = 0;
	struct timespec a, b;

	for (int k = 0; k < 40; k++)
		pl += (size_t)sprintf(pattern + pl, "**.");
	pl += (size_t)sprintf(pattern + pl, "nomatch");
	for (int k = 0; k < 80; k++)
		tl += (size_t)sprintf(path + tl, k ? ".x" : "x");
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert(!dtl_glob_match(pattern, pl, path, tl));
	/* '*a*a*a...' against 'aaaa...b' in one segment, and '**.a.a.a...' across segments */
	memset(path, 'a', 1023);
	path[1023] = 'b';
	for (pl = 0; pl + 2 <= 1024; pl += 2)
		memcpy(pattern + pl, "*a", 2);
	ck_assert(!dtl_glob_match(pattern, pl, path, 1024));
	ck_assert(dtl_glob_match(pattern, pl - 1, path, 1024));
	for (tl = 0; tl + 2 <= 1024; tl += 2)
		memcpy(path + tl, "a.", 2);
	path[tl - 1] = '\0';
	pl = (size_t)sprintf(pattern, "**");
	while (pl + 4 < 1024)
		pl += (size_t)sprintf(pattern + pl, ".a");
	pl += (size_t)sprintf(pattern + pl, ".b");
	ck_assert(!dtl_glob_match(pattern, pl, path, tl - 1));
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	ck_assert_msg(ms < 1000, "%.1f ms", ms);
}
END_TEST

/* The compiled set answers exactly what dtl_glob_match() answers, pattern by pattern. */
START_TEST(globset_agrees_with_glob_match)
{
	uint32_t state = 7;
	for (int round = 0; round < 200; round++) {
		struct dtl_arena arena;
		struct dtl_globset set;
		char patterns[40][64], path[64];
		size_t n = 1 + next_random(&state) % 40;
		dtl_arena_init(&arena);
		dtl_globset_init(&set, &arena);
		for (size_t i = 0; i < n; i++) {
			random_path(&state, patterns[i], true);
			if (next_random(&state) % 17 == 0)
				strcpy(patterns[i], "a..b*"); /* invalid globs are answered too */
			ck_assert_int_eq(dtl_globset_add(&set, patterns[i], strlen(patterns[i])),
			                 0);
		}
		for (int q = 0; q < 50; q++) {
			size_t len = random_path(&state, path, false);
			if (q == 0)
				len = path[0] = 0;
			int64_t first = -1;
			uint32_t all[40], got[40];
			size_t count = 0;
			for (size_t i = 0; i < n; i++)
				if (dtl_glob_match(patterns[i], strlen(patterns[i]), path, len)) {
					if (first < 0)
						first = (int64_t)i;
					all[count++] = (uint32_t)i;
				}
			ck_assert_msg(dtl_globset_first(&set, path, len) == first, "path '%s'",
			              path);
			ck_assert_uint_eq(dtl_globset_matches(&set, path, len, got, 40), count);
			for (size_t k = 0; k < count; k++)
				ck_assert_uint_eq(got[k], all[k]);
			if (count > 1) /* a short out keeps the lowest indices */
				ck_assert_uint_eq(dtl_globset_matches(&set, path, len, got, 1),
				                  count);
			if (count > 1)
				ck_assert_uint_eq(got[0], all[0]);
		}
		dtl_arena_fini(&arena);
	}
}
END_TEST

/* Paths in tensor order (a prefix, a varying segment, one of a few endings): a cursor that
 * reuses the walks of the path before answers what a fresh cursor answers, dead walk
 * included. */
START_TEST(globset_cursor_tensor_order_agrees)
{
	static const char *const prefixes[] = {"model.layers.0", "model.layers.1.mlp", "a", ""};
	static const char *const middles[] = {"0",    "1",      "2", "experts",
	                                      "gate", "lora_A", "x", "17"};
	static const char *const endings[] = {"weight", "gate.weight", "lora_A.weight", "a.b.c",
	                                      "1"};
	uint32_t state = 5;
	for (int round = 0; round < 60; round++) {
		struct dtl_arena arena;
		struct dtl_globset set;
		char patterns[30][256];
		size_t n = 1 + next_random(&state) % 30;
		dtl_arena_init(&arena);
		dtl_globset_init(&set, &arena);
		for (size_t i = 0; i < n; i++) {
			size_t len = random_path(&state, patterns[i], true);
			ck_assert_int_eq(dtl_globset_add(&set, patterns[i], len), 0);
		}
		struct dtl_globset_cursor *c = dtl_globset_cursor_new(&set, &arena);
		/* told the segments (dtl_globset_cursor_*_known): their ends, or all but the
		 * last one or two, and as many shared segments as there are or fewer */
		struct dtl_globset_cursor *kc = dtl_globset_cursor_new(&set, &arena);
		ck_assert_ptr_nonnull(c);
		ck_assert_ptr_nonnull(kc);
		char paths[2][128];
		uint32_t ends[2][16];
		size_t segments[2] = {0, 0};
		for (size_t q = 0; q < 4 * 8 * 5; q++) {
			char *path = paths[q % 2]; /* the previous path stays valid */
			const char *pre = prefixes[q / 40], *mid = middles[q / 5 % 8];
			int len = snprintf(path, 128, "%s%s%s.%s", pre, *pre ? "." : "", mid,
			                   endings[q % 5]);
			uint32_t want[30], got[30];
			size_t nw = dtl_globset_matches(&set, path, (size_t)len, want, 30);
			uint32_t *end = ends[q % 2], *prev_end = ends[(q + 1) % 2];
			const char *prev = paths[(q + 1) % 2];
			size_t count = 0, shared = 0;
			for (int i = 0; i <= len; i++)
				if (i == len || path[i] == '.')
					end[count++] = (uint32_t)i;
			while (q && shared < count && shared < segments[(q + 1) % 2] &&
			       end[shared] == prev_end[shared] &&
			       memcmp(path, prev, end[shared]) == 0)
				shared++;
			segments[q % 2] = count;
			struct dtl_path_known known = {.shared = shared - (shared && q % 4 == 1),
			                               .ends = end,
			                               .count =
			                                   count - (q % 7 < count ? q % 7 % 3 : 0)};
			if (q % 2) {
				ck_assert_uint_eq(dtl_globset_cursor_matches_known(
				                      kc, path, (size_t)len, &known, got, 30),
				                  nw);
				for (size_t k = 0; k < nw; k++)
					ck_assert_uint_eq(got[k], want[k]);
			} else {
				ck_assert_int_eq(
				    dtl_globset_cursor_first_known(kc, path, (size_t)len, &known),
				    nw ? (int64_t)want[0] : -1);
			}
			struct dtl_globset_cursor *fresh = dtl_globset_cursor_new(&set, &arena);
			ck_assert_ptr_nonnull(fresh);
			dtl_globset_cursor_first(fresh, path, (size_t)len);
			if (q % 3) {
				ck_assert_uint_eq(
				    dtl_globset_cursor_matches(c, path, (size_t)len, got, 30), nw);
				for (size_t k = 0; k < nw; k++)
					ck_assert_uint_eq(got[k], want[k]);
			} else {
				ck_assert_int_eq(dtl_globset_cursor_first(c, path, (size_t)len),
				                 nw ? (int64_t)want[0] : -1);
			}
			ck_assert_msg(dtl_globset_cursor_exhausted(c) ==
			                  dtl_globset_cursor_exhausted(fresh),
			              "round %d, path '%s'", round, path);
			ck_assert(dtl_globset_cursor_exhausted(kc) ==
			          dtl_globset_cursor_exhausted(fresh));
		}
		dtl_arena_fini(&arena);
	}
}
END_TEST

/* dtl_common_prefix against a byte loop: every length, a difference at every place (first and
 * last byte of a word included). */
START_TEST(common_prefix_agrees_with_bytes)
{
	uint32_t state = 7;
	for (int round = 0; round < 2000; round++) {
		char a[40], b[40];
		size_t n = next_random(&state) % 40, want = 0;
		for (size_t i = 0; i < n; i++)
			a[i] = b[i] = "ab."[next_random(&state) % 3];
		if (n && round % 4)
			b[next_random(&state) % n] ^= 0x40;
		while (want < n && a[want] == b[want])
			want++;
		ck_assert_uint_eq(dtl_common_prefix(a, b, n), want);
	}
}
END_TEST

/* A cursor answers what the set answers, path after path: shallow and deep paths (past the
 * walks it keeps), in random order and sorted (long shared prefixes). */
START_TEST(globset_cursor_agrees_with_set)
{
	uint32_t state = 11;
	size_t exhausted = 0;
	for (int round = 0; round < 100; round++) {
		struct dtl_arena arena;
		struct dtl_globset set;
		char patterns[40][256], paths[60][256];
		size_t n = 1 + next_random(&state) % 40;
		dtl_arena_init(&arena);
		dtl_globset_init(&set, &arena);
		for (size_t i = 0; i < n; i++) {
			size_t len = random_path(&state, patterns[i], true);
			if (round % 2) { /* deep patterns: four shallow ones joined */
				for (int j = 0; j < 3; j++) {
					patterns[i][len++] = '.';
					len += random_path(&state, patterns[i] + len, true);
				}
			}
			ck_assert_int_eq(dtl_globset_add(&set, patterns[i], len), 0);
		}
		size_t count = 60;
		for (size_t q = 0; q < count; q++) {
			size_t len = random_path(&state, paths[q], false);
			int joins = (int)(next_random(&state) % 6);
			for (int j = 0; j < joins; j++) {
				paths[q][len++] = '.';
				len += random_path(&state, paths[q] + len, false);
			}
		}
		if (round % 3 == 0)
			qsort(paths, count, sizeof(paths[0]),
			      (int (*)(const void *, const void *))strcmp);
		struct dtl_globset_cursor *c = dtl_globset_cursor_new(&set, &arena);
		ck_assert_ptr_nonnull(c);
		for (size_t q = 0; q < count; q++) {
			uint32_t want[40], got[40];
			size_t len = strlen(paths[q]);
			size_t nw = dtl_globset_matches(&set, paths[q], len, want, 40);
			if (q % 2) {
				ck_assert_int_eq(dtl_globset_cursor_first(c, paths[q], len),
				                 dtl_globset_first(&set, paths[q], len));
			} else {
				ck_assert_uint_eq(
				    dtl_globset_cursor_matches(c, paths[q], len, got, 40), nw);
				for (size_t k = 0; k < nw && k < 40; k++)
					ck_assert_uint_eq(got[k], want[k]);
			}
			/* exhausted: no pattern matches the path with segments added */
			if (!dtl_globset_cursor_exhausted(c))
				continue;
			exhausted++;
			ck_assert_uint_eq(nw, 0);
			for (int e = 0; e < 4; e++) {
				char longer[600];
				size_t n2 = len;
				memcpy(longer, paths[q], len);
				for (int j = 0; j <= e % 3; j++) {
					longer[n2++] = '.';
					n2 += random_path(&state, longer + n2, false);
				}
				ck_assert_int_eq(dtl_globset_first(&set, longer, n2), -1);
			}
		}
		dtl_arena_fini(&arena);
	}
	ck_assert_uint_gt(exhausted, 100); /* the check above ran */

	/* an invalid glob is matched one by one: it may match below any path */
	struct dtl_arena arena;
	struct dtl_globset set;
	dtl_arena_init(&arena);
	dtl_globset_init(&set, &arena);
	ck_assert_int_eq(dtl_globset_add(&set, "model.layers", 12), 0);
	ck_assert_int_eq(dtl_globset_add(&set, "ga**.x", 6), 0); /* '**' not a whole segment */
	ck_assert_int_eq(dtl_globset_first(&set, "gate.x", 6), 1);
	struct dtl_globset_cursor *c = dtl_globset_cursor_new(&set, &arena);
	ck_assert_int_eq(dtl_globset_cursor_first(c, "gate", 4), -1);
	ck_assert(!dtl_globset_cursor_exhausted(c));
	dtl_globset_init(&set, &arena);
	ck_assert_int_eq(dtl_globset_add(&set, "model.layers", 12), 0);
	c = dtl_globset_cursor_new(&set, &arena);
	ck_assert_int_eq(dtl_globset_cursor_first(c, "gate", 4), -1);
	ck_assert(dtl_globset_cursor_exhausted(c));
	dtl_arena_fini(&arena);
}
END_TEST

START_TEST(globset_many_patterns)
{
	struct dtl_arena arena;
	struct dtl_globset set;
	char text[1000][32];

	dtl_arena_init(&arena);
	dtl_globset_init(&set, &arena);
	for (int i = 0; i < 1000; i++) {
		snprintf(text[i], sizeof(text[i]), "model.layers.%d.**", i);
		ck_assert_int_eq(dtl_globset_add(&set, text[i], strlen(text[i])), 0);
	}
	ck_assert_int_eq(dtl_globset_first(&set, "model.layers.417.mlp.w", 22), 417);
	ck_assert_int_eq(dtl_globset_first(&set, "model.layers.417", 16), 417);
	ck_assert_int_eq(dtl_globset_first(&set, "model.layers", 12), -1);
	ck_assert_int_eq(dtl_globset_first(&set, "", 0), -1);
	ck_assert_int_eq(dtl_globset_add(&set, "**", 2), 0);
	ck_assert_int_eq(dtl_globset_first(&set, "", 0), 1000);
	ck_assert_int_eq(dtl_globset_first(&set, "model.layers.3", 14), 3);
	dtl_arena_fini(&arena);
}
END_TEST

START_TEST(arena_blocks_and_growth)
{
	struct dtl_arena arena;
	struct dtl_vec vec = {0};

	dtl_arena_init(&arena);
	/* large allocations are zeroed blocks; small ones packed strings */
	unsigned char *big = dtl_arena_alloc(&arena, 3 * DTL_ARENA_BLOCK_MIN);
	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < 3 * DTL_ARENA_BLOCK_MIN; i += 4096)
		ck_assert_uint_eq(big[i], 0);
	char *a = dtl_arena_strndup(&arena, "abc", 3), *b = dtl_arena_strndup(&arena, "de", 2);
	ck_assert_str_eq(a, "abc");
	ck_assert_str_eq(b, "de");
	ck_assert_ptr_eq(b, a + 4);
	/* a vector grows through block sizes without losing items */
	for (uint32_t i = 0; i < 300000; i++) {
		uint32_t *slot = dtl_vec_push(&vec, &arena, sizeof(*slot));
		ck_assert_ptr_nonnull(slot);
		*slot = i;
	}
	for (uint32_t i = 0; i < 300000; i += 997)
		ck_assert_uint_eq(((uint32_t *)vec.items)[i], i);
	/* realloc keeps contents and zeroes the rest, for blocks and small storage alike */
	uint64_t *small = dtl_arena_calloc(&arena, 4, sizeof(*small));
	small[3] = 42;
	small = dtl_arena_realloc(&arena, small, 4 * sizeof(*small), 100000 * sizeof(*small));
	ck_assert_uint_eq(small[3], 42);
	small[99999] = 1;
	small = dtl_arena_realloc(&arena, small, 100000 * sizeof(*small), 300000 * sizeof(*small));
	ck_assert_uint_eq(small[3], 42);
	ck_assert_uint_eq(small[99999], 1);
	ck_assert_uint_eq(small[299999], 0);
	ck_assert_ptr_null(dtl_arena_alloc(&arena, SIZE_MAX - 8));
	ck_assert_ptr_null(dtl_arena_calloc(&arena, SIZE_MAX / 2, 4));
	dtl_arena_fini(&arena);
}
END_TEST

START_TEST(strmap_many_keys)
{
	struct dtl_arena arena;
	struct dtl_strmap map;
	static char keys[200000][12];

	dtl_arena_init(&arena);
	dtl_strmap_init(&map, &arena);
	ck_assert_int_eq(dtl_strmap_reserve(&map, 1000), 0);
	for (int i = 0; i < 200000; i++) {
		int len = snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		ck_assert_int_eq(dtl_strmap_put(&map, keys[i], (size_t)len, i), i);
	}
	for (int i = 0; i < 200000; i += 7)
		ck_assert_int_eq(dtl_strmap_get(&map, keys[i], strlen(keys[i])), i);
	ck_assert_int_eq(dtl_strmap_put(&map, "k5", 2, 99), 5);
	ck_assert_int_eq(dtl_strmap_get(&map, "k200000", 7), -1);
	ck_assert_int_eq(dtl_strmap_get(&map, "", 0), -1);
	ck_assert_int_eq(dtl_strmap_put(&map, "", 0, 7), 7);
	ck_assert_int_eq(dtl_strmap_get(&map, "", 0), 7);
	ck_assert_uint_ne(dtl_hash_bytes("abcdefghijklmnopq", 17),
	                  dtl_hash_bytes("abcdefghijklmnopr", 17));
	/* the hashed forms store what the others find, across the rehashes of a growing map,
	 * and find what the others stored */
	struct dtl_strmap other;
	dtl_strmap_init(&other, &arena);
	for (int i = 0; i < 200000; i++) {
		size_t len = strlen(keys[i]);
		dtl_strmap_prefetch_hash(&other, dtl_strmap_hash(&other, keys[i], len));
		ck_assert_int_eq(dtl_strmap_put_hash(&other, keys[i], len,
		                                     dtl_strmap_hash(&other, keys[i], len), i),
		                 i);
	}
	for (int i = 0; i < 200000; i += 3)
		ck_assert_int_eq(dtl_strmap_get(&other, keys[i], strlen(keys[i])), i);
	ck_assert_int_eq(dtl_strmap_put_hash(&other, "k5", 2, dtl_strmap_hash(&other, "k5", 2), 9),
	                 5);
	dtl_arena_fini(&arena);
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-core-registered.h"

static void add_tests(TCase *tc)
{
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("core")
