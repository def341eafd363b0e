/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: glob and keep-in-fp32 matching against a time oracle (issue 21, requirement 5).
 * The bytes are a pattern and a name, split at the first NUL (else in halves), each cut to
 * 1 KiB. Every match must take less than a millisecond of CPU time: dtl_glob_match(), a glob
 * set of the pattern (cursor and not), and dtl_keep_match() in the three eras. A set must also
 * answer what dtl_glob_match() answers (a differential), with and without other patterns in it.
 *
 * The limit is CPU time of this thread (CLOCK_THREAD_CPUTIME_ID), so a busy machine does not
 * trip it, and the least of three runs, so one preemption does not either. Under valgrind or
 * an unusual build, DTL_FUZZ_TIME_SCALE multiplies it (the replay test of `meson test` runs
 * the seeds with the plain limit in a debugoptimized or ASan build).
 */
#include <string.h>
#include <time.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#include "dtypelint/core/glob.h"
#include "dtypelint/model/keep-fp32.h"
#include "fuzz.h"
#include "glob-cursor.h"

#define MAX_INPUT 1024

static double limit_ns(void)
{
	static double limit;

	if (limit == 0) {
		const char *scale = getenv("DTL_FUZZ_TIME_SCALE");
		limit = 1e6 * (scale && atof(scale) > 0 ? atof(scale) : 1);
		if (RUNNING_ON_VALGRIND)
			limit *= 100;
	}
	return limit;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

struct job {
	const char *pattern, *name;
	size_t pattern_len, name_len;
	struct dtl_globset *set, *crowd;
	struct dtl_arena *arena;
	bool answer;
};

/* One kind of match, timed: 0 dtl_glob_match, 1 the set, 2 a cursor over the crowded set,
 * 3-5 dtl_keep_match in each era. */
static bool run(struct job *j, int kind)
{
	uint32_t out[4];

	switch (kind) {
	case 0:
		return dtl_glob_match(j->pattern, j->pattern_len, j->name, j->name_len);
	case 1:
		return dtl_globset_first(j->set, j->name, j->name_len) == 0;
	case 2: {
		struct dtl_globset_cursor *c = dtl_globset_cursor_new(j->crowd, j->arena);
		if (!c)
			return j->answer; /* out of memory: nothing to compare */
		size_t n = dtl_globset_cursor_matches(c, j->name, j->name_len, out, 4);
		for (size_t k = 0; k < n && k < 4; k++)
			if (out[k] == 2)
				return true;
		return false;
	}
	default:
		return dtl_keep_match((enum dtl_keep_matcher)(kind - 3), j->pattern, j->pattern_len,
		                      j->name, j->name_len);
	}
}

static bool timed(struct job *j, int kind)
{
	double best = 0;
	bool answer = false;

	for (int attempt = 0; attempt < 3; attempt++) {
		double start = now_ns();
		answer = run(j, kind);
		double spent = now_ns() - start;
		if (attempt == 0 || spent < best)
			best = spent;
		if (best < limit_ns())
			return answer;
	}
	fprintf(stderr,
	        "matcher %d took %.3f ms (limit %.3f) for a %zu-byte pattern and a "
	        "%zu-byte name\n",
	        kind, best / 1e6, limit_ns() / 1e6, j->pattern_len, j->name_len);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *bytes = (const char *)data;
	const char *nul = memchr(bytes, '\0', size);
	size_t split = nul ? (size_t)(nul - bytes) : size / 2;
	size_t rest = nul ? split + 1 : split;
	struct dtl_arena arena;
	struct dtl_globset set, crowd;
	struct job j = {.pattern = bytes, .name = bytes + rest, .arena = &arena};

	j.pattern_len = split < MAX_INPUT ? split : MAX_INPUT;
	j.name_len = size - rest < MAX_INPUT ? size - rest : MAX_INPUT;
	dtl_arena_init(&arena);
	dtl_globset_init(&set, &arena);
	dtl_globset_init(&crowd, &arena);
	j.set = &set;
	j.crowd = &crowd;
	/* the pattern alone, and third among others of each kind the set indexes */
	if (dtl_globset_add(&set, j.pattern, j.pattern_len) < 0 ||
	    dtl_globset_add(&crowd, "**.weight", 9) < 0 ||
	    dtl_globset_add(&crowd, "a.*.b", 5) < 0 ||
	    dtl_globset_add(&crowd, j.pattern, j.pattern_len) < 0 ||
	    dtl_globset_add(&crowd, "**", 2) < 0) {
		dtl_arena_fini(&arena);
		return 0;
	}
	j.answer = timed(&j, 0);
	for (int kind = 1; kind <= 2; kind++)
		if (timed(&j, kind) != j.answer) {
			fprintf(stderr,
			        "glob set (%d) and dtl_glob_match differ: '%.*s' on '%.*s'\n", kind,
			        (int)j.pattern_len, j.pattern, (int)j.name_len, j.name);
			abort();
		}
	for (int kind = 3; kind <= 5; kind++)
		timed(&j, kind);
	dtl_arena_fini(&arena);
	return 0;
}
