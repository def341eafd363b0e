/* SPDX-License-Identifier: MIT */
/* Unit tests of src/sim: torch's order, tied names, FSDP unit construction order, ZeRO-3
 * persistence selection, keep-in-fp32 matching eras, the growable table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtl-test.h"
#include "dtypelint/cli/dtypelint.h"
#include "dtypelint/model/embedded.h"
#include "dtypelint/model/profile.h"
#include "model/load.h"
#include "keep-set.h"

static struct dtl_arena arena;
static struct dtl_limits limits;
static struct dtl_error error;
static struct dtl_behavior_table behaviors;

static void setup(void)
{
	dtl_arena_init(&arena);
	dtl_limits_default(&limits);
	ck_assert_int_eq(dtl_behavior_table_load(&behaviors, &arena, &error), 0);
}

static void teardown(void)
{
	dtl_arena_fini(&arena);
}

static void run(const char *yaml, struct dtl_sim *sim)
{
	struct dtl_source src;
	struct dtl_node *root;
	struct dtl_manifest *m = dtl_arena_alloc(&arena, sizeof(*m));

	ck_assert_int_eq(dtl_source_init_mem(&src, "t.yaml", yaml, strlen(yaml)), 0);
	ck_assert_msg(dtl_doc_parse(&src, &arena, &limits, &root, &error) == 0, "%s",
	              error.message);
	ck_assert_msg(dtl_manifest_parse(root, "t.yaml", &arena, &limits, m, &error) == 0, "%s",
	              error.message);
	ck_assert_msg(dtl_sim_run(sim, m, &m->plan, &behaviors, &arena, &error) == 0, "%s",
	              error.message);
	dtl_source_fini(&src);
}

static const char *nth(const struct dtl_sim *sim, size_t k)
{
	return sim->t.name[sim->t.order[k]];
}

START_TEST(torch_order_own_tensors_first)
{
	struct dtl_sim sim;
	/* a.bias is listed after a child's tensor, but torch yields a module's own first */
	run("dtypelint: 1\ntensors:\n"
	    "  - {name: a.weight, shape: [1]}\n  - {name: a.b.weight, shape: [1]}\n"
	    "  - {name: a.bias, shape: [1]}\n  - {name: c.weight, shape: [1]}\n",
	    &sim);
	ck_assert_str_eq(nth(&sim, 0), "a.weight");
	ck_assert_str_eq(nth(&sim, 1), "a.bias");
	ck_assert_str_eq(nth(&sim, 2), "a.b.weight");
	ck_assert_str_eq(nth(&sim, 3), "c.weight");
}
END_TEST

START_TEST(tied_name_missing_is_an_alias)
{
	struct dtl_sim sim;
	run("dtypelint: 1\nmodel: {tied: [[lm_head.weight, embed.weight]], checkpoint_dtype: "
	    "bf16}\n"
	    "tensors:\n  - {name: embed.weight, shape: [8, 2]}\n",
	    &sim);
	ck_assert_uint_eq(sim.t.count, 2);
	uint32_t alias = dtl_sim_find(&sim, "lm_head.weight", 14);
	ck_assert_uint_ne(alias, DTL_NONE_INDEX);
	ck_assert(sim.t.flags[alias] & DTL_TF_ALIAS);
	ck_assert_uint_eq(sim.t.alias_of[alias], dtl_sim_find(&sim, "embed.weight", 12));
	ck_assert_int_eq(sim.t.dtype[alias], DTL_DTYPE_BF16);
}
END_TEST

START_TEST(fsdp1_units_post_order_root_last)
{
	struct dtl_sim sim;
	run("dtypelint: 1\nmodel: {modules: {\"l.*\": B, \"l.*.inner\": I}}\n"
	    "tensors:\n  - {name: l.0.inner.w, shape: [1]}\n  - {name: l.0.w, shape: [1]}\n"
	    "  - {name: l.1.w, shape: [1]}\n  - {name: head.w, shape: [1]}\n"
	    "training: {strategy: fsdp1, fsdp: {wrap: [B, I]}}\n",
	    &sim);
	const struct dtl_group *g = sim.groups.items;
	ck_assert_uint_eq(sim.groups.count, 4);
	ck_assert_str_eq(g[0].name, "l.0.inner");
	ck_assert_str_eq(g[1].name, "l.0");
	ck_assert_str_eq(g[2].name, "l.1");
	ck_assert_str_eq(g[3].name, "<root>");
	ck_assert_uint_eq(g[1].count, 1); /* the inner unit took its own parameter */
	ck_assert_str_eq(sim.t.name[g[3].members[0]], "head.w");
}
END_TEST

START_TEST(zero3_persistence_skips_but_does_not_stop)
{
	struct dtl_sim sim;
	/* DeepSpeed's mark_persistent_parameters: over the model threshold a parameter is skipped
	 * (continue, not break) */
	run("dtypelint: 1\ntensors:\n  - {name: a.w, shape: [60]}\n  - {name: b.w, shape: [50]}\n"
	    "  - {name: c.w, shape: [30]}\n  - {name: d.w, shape: [200]}\n"
	    "training: {strategy: zero3, zero3: {persistence_threshold: 100, "
	    "model_persistence_threshold: 100}}\n",
	    &sim);
	ck_assert(sim.t.flags[dtl_sim_find(&sim, "a.w", 3)] & DTL_TF_ZERO_PERSIST);
	ck_assert(!(sim.t.flags[dtl_sim_find(&sim, "b.w", 3)] & DTL_TF_ZERO_PERSIST));
	ck_assert(sim.t.flags[dtl_sim_find(&sim, "c.w", 3)] & DTL_TF_ZERO_PERSIST);
	ck_assert(!(sim.t.flags[dtl_sim_find(&sim, "d.w", 3)] & DTL_TF_ZERO_PERSIST));
}
END_TEST

/* The frozen globs' cursor is told each name's segments by the module lookup: a name with no
 * dot between dotted ones shares nothing with either, and has no module segments. */
START_TEST(frozen_globs_across_top_level_names)
{
	struct dtl_sim sim;
	run("dtypelint: 1\ntensors:\n  - {name: a.b.w, shape: [4]}\n  - {name: top, shape: [4]}\n"
	    "  - {name: a.b.x, shape: [4]}\n  - {name: topx, shape: [4]}\n"
	    "  - {name: a.c.w, shape: [4]}\n  - {name: t.b.w, shape: [4]}\n"
	    "frozen: ['a.b.*', 'top', 't.*.w']\n",
	    &sim);
	static const struct {
		const char *name;
		bool frozen;
	} want[] = {{"a.b.w", true}, {"top", true},    {"a.b.x", true},
	            {"topx", false}, {"a.c.w", false}, {"t.b.w", true}};
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		uint32_t t = dtl_sim_find(&sim, want[k].name, strlen(want[k].name));
		ck_assert_uint_ne(t, DTL_NONE_INDEX);
		ck_assert_msg(!(sim.t.flags[t] & DTL_TF_TRAINABLE) == want[k].frozen, "%s",
		              want[k].name);
	}
}
END_TEST

/* Every module gets the class of the first model.modules glob matching its path, whatever
 * order the tensors create the modules in (a branch left and come back to, paths deeper
 * than the module matcher's chain of ancestors): random trees against dtl_glob_match(). */
START_TEST(module_classes_agree_with_globs)
{
	static const char *const segments[] = {"a", "b", "0", "1", "ab"};
	static const char *const globs[] = {"a",     "a.*",  "*.b",      "a.**.b",  "**.0",
	                                    "b.*.*", "*b.1", "**.ab.**", "a.b.0.*", "**"};
	uint32_t seed = 99;
	for (int round = 0; round < 300; round++) {
		char yaml[16384], names[24][200];
		size_t used = 0, n = 0;
		used += (size_t)snprintf(yaml + used, sizeof(yaml) - used,
		                         "dtypelint: 1\nmodel: {modules: {");
		/* a few globs, in a random order (the first match wins) */
		size_t g_count = 1 + round % 5, g_pick[5];
		for (size_t g = 0; g < g_count; g++) {
			bool taken = true;
			while (taken) { /* a map: each glob once */
				seed = seed * 1103515245u + 12345u;
				g_pick[g] = (seed >> 16) % 10;
				taken = false;
				for (size_t k = 0; k < g; k++)
					taken = taken || g_pick[k] == g_pick[g];
			}
			used += (size_t)snprintf(yaml + used, sizeof(yaml) - used, "%s\"%s\": C%zu",
			                         g ? ", " : "", globs[g_pick[g]], g);
		}
		used += (size_t)snprintf(yaml + used, sizeof(yaml) - used, "}}\ntensors:\n");
		while (n < 24) {
			seed = seed * 1103515245u + 12345u;
			/* mostly shallow, now and then past 32 segments */
			size_t depth =
			    (seed >> 16) % 7 == 0 ? 30 + (seed >> 20) % 10 : 1 + (seed >> 16) % 5;
			size_t len = 0;
			for (size_t d = 0; d < depth; d++) {
				seed = seed * 1103515245u + 12345u;
				len += (size_t)snprintf(names[n] + len, sizeof(names[n]) - len,
				                        "%s.", segments[(seed >> 16) % 5]);
			}
			snprintf(names[n] + len, sizeof(names[n]) - len, "w");
			bool again = false;
			for (size_t k = 0; k < n; k++)
				again = again || strcmp(names[k], names[n]) == 0;
			if (again)
				continue;
			used += (size_t)snprintf(yaml + used, sizeof(yaml) - used,
			                         "  - {name: %s, shape: [2]}\n", names[n]);
			n++;
		}
		ck_assert_uint_lt(used, sizeof(yaml) - 1);
		struct dtl_sim sim;
		run(yaml, &sim);
		for (size_t mod = 1; mod < sim.module_count; mod++) {
			const struct dtl_module *md = &sim.modules[mod];
			char want[24] = "";
			for (size_t g = 0; g < g_count && !*want; g++)
				if (dtl_glob_match(globs[g_pick[g]], strlen(globs[g_pick[g]]),
				                   md->path, md->path_len))
					snprintf(want, sizeof(want), "C%zu", g);
			ck_assert_msg(strcmp(md->class_name ? md->class_name : "", want) == 0,
			              "round %d, '%.*s': %s, want %s", round, (int)md->path_len,
			              md->path, md->class_name ? md->class_name : "-", want);
		}
	}
}
END_TEST

START_TEST(keep_in_fp32_matching_eras)
{
	/* the three eras of src/model/keep-fp32.c */
	ck_assert(dtl_keep_match(DTL_KEEP_COMPONENT, "wo", 2, "enc.DenseReluDense.wo.weight", 28));
	ck_assert(
	    !dtl_keep_match(DTL_KEEP_COMPONENT, "router.proj", 11, "l.router.proj.weight", 20));
	ck_assert(
	    dtl_keep_match(DTL_KEEP_DOT_REGEX, "router.proj", 11, "l.router.proj.weight", 20));
	ck_assert(
	    dtl_keep_match(DTL_KEEP_DOT_REGEX, "router.proj", 11, "l.routerXproj.weight", 20));
	ck_assert(!dtl_keep_match(DTL_KEEP_DOT_REGEX, "norm", 4, "l.q_norm.weight", 15));
	ck_assert(dtl_keep_match(DTL_KEEP_SUBSTRING, "norm", 4, "l.q_norm.weight", 15));
	ck_assert(dtl_keep_match(DTL_KEEP_SUBSTRING, "e_score*bias", 12,
	                         "gate.e_score_correction_bias", 28));
}
END_TEST

/* The keep-in-fp32 matcher as it was (recursive, every split at every '*'): the reference
 * for small inputs. */
static bool ref_keep_here(const char *p, size_t pl, const char *s, size_t sl, size_t si, bool star,
                          bool need_boundary)
{
	if (pl == 0)
		return !need_boundary || si == sl || s[si] == '.';
	if (star && p[0] == '*') {
		for (size_t k = si; k <= sl; k++)
			if (ref_keep_here(p + 1, pl - 1, s, sl, k, star, need_boundary))
				return true;
		return false;
	}
	if (si >= sl || (p[0] != '.' && p[0] != s[si]))
		return false;
	return ref_keep_here(p + 1, pl - 1, s, sl, si + 1, star, need_boundary);
}

static bool ref_keep_match(enum dtl_keep_matcher m, const char *p, size_t pl, const char *s,
                           size_t sl)
{
	for (size_t k = 0; k <= sl; k++)
		if (m == DTL_KEEP_SUBSTRING ? ref_keep_here(p, pl, s, sl, k, true, false)
		                            : (k == 0 || s[k - 1] == '.') &&
		                                  ref_keep_here(p, pl, s, sl, k, false, true))
			return true;
	return false;
}

/* Issue 21: the regex-like eras agree with the reference on random short inputs, and a
 * pattern of many '*' against a long name takes no time (it did not finish before). */
START_TEST(keep_match_linear_and_unchanged)
{
	static const char alphabet[] = "ab.*";
	uint32_t state = 7;
	char p[12], s[12];

	for (int round = 0; round < 100000; round++) {
		state = state * 1103515245u + 12345u;
		size_t pl = (state >> 16) % 8;
		for (size_t i = 0; i < pl; i++) {
			state = state * 1103515245u + 12345u;
			p[i] = alphabet[(state >> 16) % 4];
		}
		state = state * 1103515245u + 12345u;
		size_t sl = (state >> 16) % 10;
		for (size_t i = 0; i < sl; i++) {
			state = state * 1103515245u + 12345u;
			s[i] = alphabet[(state >> 16) % 3];
		}
		for (int m = DTL_KEEP_DOT_REGEX; m <= DTL_KEEP_SUBSTRING; m++)
			ck_assert_msg(dtl_keep_match(m, p, pl, s, sl) ==
			                  ref_keep_match(m, p, pl, s, sl),
			              "matcher %d, '%.*s' in '%.*s'", m, (int)pl, p, (int)sl, s);
	}
	char name[1025], pattern[64];
	memset(name, 'a', 1024);
	name[0] = 'b';
	size_t n = 0;
	for (int k = 0; k < 20; k++)
		n += (size_t)sprintf(pattern + n, "*a");
	n += (size_t)sprintf(pattern + n, "*b");
	ck_assert(!dtl_keep_match(DTL_KEEP_SUBSTRING, pattern, n, name, 1024));
	name[1023] = 'b';
	ck_assert(dtl_keep_match(DTL_KEEP_SUBSTRING, pattern, n, name, 1024));
}
END_TEST

static int compare_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The compiled sets agree with dtl_keep_match() entry by entry, in every era, on random
 * entries and names over a small alphabet (so runs, wildcards and overlaps are frequent). */
START_TEST(keep_set_agrees_with_matcher)
{
	static const char alphabet[] = "ab.*_";
	enum { ENTRIES = 24, NAMES = 400 };
	struct dtl_pattern entries[ENTRIES];
	char entry_text[ENTRIES][8], names[NAMES][16];
	const char *name_ptr[NAMES];
	uint32_t name_len[NAMES], count[ENTRIES], first[ENTRIES], any[ENTRIES];
	uint32_t seed = 12345;

	for (int round = 0; round < 30; round++) {
		for (int e = 0; e < ENTRIES; e++) {
			seed = seed * 1103515245u + 12345u;
			size_t len = (seed >> 16) % 6; /* 0..5, empty entries included */
			for (size_t i = 0; i < len; i++) {
				seed = seed * 1103515245u + 12345u;
				entry_text[e][i] = alphabet[(seed >> 16) % 5];
			}
			entry_text[e][len] = 0;
			entries[e] =
			    (struct dtl_pattern){.text = entry_text[e], .len = (uint32_t)len};
		}
		for (int n = 0; n < NAMES; n++) {
			seed = seed * 1103515245u + 12345u;
			size_t len = (seed >> 16) % 15;
			for (size_t i = 0; i < len; i++) {
				seed = seed * 1103515245u + 12345u;
				names[n][i] = "ab._"[(seed >> 16) % 4];
			}
			names[n][len] = 0;
		}
		/* sorted, names in a row share prefixes: dtl_keep_set_any resumes there */
		if (round % 4 >= 2)
			qsort(names, NAMES, sizeof(names[0]), compare_names);
		for (int n = 0; n < NAMES; n++) {
			name_ptr[n] = names[n];
			name_len[n] = (uint32_t)strlen(names[n]);
		}
		for (int m = DTL_KEEP_COMPONENT; m <= DTL_KEEP_SUBSTRING; m++) {
			struct dtl_keep_set set;
			ck_assert_int_eq(dtl_keep_set_build(&set, m, entries, ENTRIES, &arena), 0);
			/* keyed on the longest run, or on the rarest (half of the names) */
			if (round % 2)
				ck_assert_int_eq(
				    dtl_keep_set_tune(&set, name_ptr, name_len, NAMES / 2), 0);
			ck_assert_int_eq(
			    dtl_keep_set_count(&set, name_ptr, name_len, NAMES, count, first), 0);
			for (int e = 0; e < ENTRIES; e++) {
				uint32_t want_count = 0, want_first = UINT32_MAX;
				for (int n = 0; n < NAMES; n++)
					if (dtl_keep_match(m, entries[e].text, entries[e].len,
					                   names[n], name_len[n]) &&
					    want_count++ == 0)
						want_first = (uint32_t)n;
				ck_assert_uint_eq(count[e], want_count);
				ck_assert_uint_eq(first[e], want_first);
			}
			ck_assert_int_eq(
			    dtl_keep_set_any(&set, name_ptr, name_len, NAMES, NULL, any), 0);
			for (int e = 0; e < ENTRIES; e++)
				ck_assert_uint_eq(any[e], first[e]);
			/* told every segment of every name (some twice), the entries left
			 * impossible match nothing, and the scan of the possible ones agrees */
			struct dtl_keep_possible possible;
			ck_assert_int_eq(dtl_keep_possible_init(&possible, &set, &arena), 0);
			ck_assert(set.dot_resets || possible.left == 0);
			for (int n = 0; n < NAMES; n++)
				for (size_t start = 0, i = 0; i <= name_len[n]; i++) {
					if (i < name_len[n] && names[n][i] != '.')
						continue;
					dtl_keep_possible_add(&possible, &set, names[n] + start,
					                      i - start);
					start = i + 1;
				}
			size_t unset = 0;
			for (int e = 0; e < ENTRIES; e++) {
				unset += !possible.possible[e];
				if (!possible.possible[e])
					ck_assert_uint_eq(first[e], UINT32_MAX);
			}
			ck_assert_uint_eq(possible.left, unset);
			ck_assert_int_eq(dtl_keep_set_any(&set, name_ptr, name_len, NAMES,
			                                  possible.possible, any),
			                 0);
			for (int e = 0; e < ENTRIES; e++)
				ck_assert_uint_eq(any[e], first[e]);
			for (int n = 0; n < NAMES; n++) {
				uint32_t want = UINT32_MAX;
				for (int e = 0; e < ENTRIES && want == UINT32_MAX; e++)
					if (dtl_keep_match(m, entries[e].text, entries[e].len,
					                   names[n], name_len[n]))
						want = (uint32_t)e;
				ck_assert_uint_eq(dtl_keep_set_first(&set, names[n], name_len[n]),
				                  want);
			}
		}
	}
}
END_TEST

/* Segments told before are passed over, and only those: ones that share their first bytes
 * or the bytes a short one is read by ("aa", "aaa"; a long one's first eight) are not taken
 * for one another. */
START_TEST(keep_possible_tells_segments_apart)
{
	static const struct {
		const char *told, *then;
	} pairs[] = {
	    {"aa", "aaa"},
	    {"aaa", "aa"},
	    {"ab", "abb"},
	    {"abcd", "abcdd"},
	    {"abcdxyz", "abcdyz"},
	    {"abcdefgh", "abcdefghi"},
	    {"abcdefghXY", "abcdefghZY"},
	    {"x_proj_9", "x_proj_99"},
	    {"abc", "axc"},
	    {"abcde", "abxde"},
	};
	for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
		struct dtl_pattern entry = {.text = pairs[k].then,
		                            .len = (uint32_t)strlen(pairs[k].then)};
		struct dtl_keep_set set;
		struct dtl_keep_possible possible;
		ck_assert_int_eq(dtl_keep_set_build(&set, DTL_KEEP_DOT_REGEX, &entry, 1, &arena),
		                 0);
		ck_assert_int_eq(dtl_keep_possible_init(&possible, &set, &arena), 0);
		ck_assert_uint_eq(possible.left, 1);
		/* the first does not hold the entry's key; told again, still not */
		for (int twice = 0; twice < 2; twice++)
			dtl_keep_possible_add(&possible, &set, pairs[k].told,
			                      strlen(pairs[k].told));
		ck_assert_msg(possible.left == (strstr(pairs[k].told, pairs[k].then) ? 0u : 1u),
		              "'%s' told", pairs[k].told);
		dtl_keep_possible_add(&possible, &set, pairs[k].then, strlen(pairs[k].then));
		ck_assert_msg(possible.left == 0 && possible.possible[0], "'%s' after '%s'",
		              pairs[k].then, pairs[k].told);
	}
	/* two lengths of one text that land in one slot (found by search): the first 166 bytes,
	 * then all 516, which alone hold the entry */
	static char text[517];
	memcpy(text, "abcdefgh", 8);
	memset(text + 8, 'y', 508);
	struct dtl_pattern entry = {.text = text, .len = 516};
	struct dtl_keep_set set;
	struct dtl_keep_possible possible;
	ck_assert_int_eq(dtl_keep_set_build(&set, DTL_KEEP_DOT_REGEX, &entry, 1, &arena), 0);
	ck_assert_int_eq(dtl_keep_possible_init(&possible, &set, &arena), 0);
	dtl_keep_possible_add(&possible, &set, text, 166);
	ck_assert_uint_eq(possible.left, 1);
	dtl_keep_possible_add(&possible, &set, text, 516);
	ck_assert_uint_eq(possible.left, 0);
}
END_TEST

/* Every embedded profile parses, and a run that parses only the profiles whose text mentions
 * its architecture finds the same profile for every architecture and alias. */
START_TEST(profiles_found_by_what_they_name)
{
	struct dtl_profiles all, some;
	size_t files = 0, names = 0;

	while (dtl_embedded_architectures[files].name)
		files++;
	ck_assert_int_eq(dtl_profiles_load(&all, NULL, &arena, &error), 0);
	ck_assert_uint_eq(all.count, files);
	for (size_t i = 0; i < all.count; i++) {
		const struct dtl_profile *p = &all.items[i];
		for (size_t a = 0; a <= p->alias_count; a++) {
			const char *name = a == 0 ? p->architecture : p->aliases[a - 1];
			ck_assert_int_eq(dtl_profiles_load(&some, name, &arena, &error), 0);
			ck_assert_uint_lt(some.count, all.count);
			const struct dtl_profile *found = dtl_profiles_find(&some, name);
			ck_assert_ptr_nonnull(found);
			ck_assert_str_eq(found->file, dtl_profiles_find(&all, name)->file);
			names++;
		}
	}
	ck_assert_uint_gt(names, files);
	ck_assert_int_eq(dtl_profiles_load(&some, "NoSuchForCausalLM", &arena, &error), 0);
	ck_assert_uint_eq(some.count, 0);
}
END_TEST

START_TEST(table_grows_for_injected_tensors)
{
	struct dtl_sim sim;
	char yaml[8192];
	size_t n = (size_t)snprintf(yaml, sizeof(yaml),
	                            "dtypelint: 1\nmodel: {checkpoint_dtype: bf16}\n"
	                            "adapter: {target_modules: [q], r: 2}\ntensors:\n");
	for (int l = 0; l < 40; l++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n,
		                      "  - {name: l.%d.q.weight, shape: [4, 4]}\n", l);
	run(yaml, &sim);
	ck_assert_uint_eq(sim.t.count, 120);
	uint32_t a = dtl_sim_find(&sim, "l.39.q.lora_B.default.weight", 28);
	ck_assert_uint_ne(a, DTL_NONE_INDEX);
	ck_assert_int_eq(sim.t.numel[a], 8);
	ck_assert_int_eq(sim.t.dtype[a], DTL_DTYPE_F32); /* autocast_adapter_dtype */
	/* the adapters sit after their base weight in torch's order */
	ck_assert_str_eq(nth(&sim, 1), "l.0.q.lora_A.default.weight");
	ck_assert_str_eq(nth(&sim, 2), "l.0.q.lora_B.default.weight");
}
END_TEST

/* A JSON manifest of n tensors "m.<i>.w" (the one at dup named as tensor 0 when dup < n),
 * read the way the CLI reads it (its tensors streamed: load.h). */
static int load_json(size_t n, size_t dup, struct dtl_manifest *m)
{
	size_t cap = 64 + n * 48, len = 0;
	char *text = malloc(cap);
	struct dtl_source src;

	ck_assert_ptr_nonnull(text);
	len += (size_t)snprintf(text + len, cap - len,
	                        "{\"dtypelint\": 1, \"model\": {\"checkpoint_dtype\": \"bf16\"},\n"
	                        "\"tensors\": [\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "{\"name\": \"m.%zu.w\"}%s\n",
		                        i == dup ? (size_t)0 : i, i + 1 < n ? "," : "");
	len += (size_t)snprintf(text + len, cap - len, "]}\n");
	ck_assert_int_eq(dtl_source_init_mem(&src, "t.json", text, len), 0);
	int r = dtl_manifest_load_source(&src, &arena, &limits, m, &error);
	dtl_source_fini(&src);
	free(text);
	return r;
}

/* The parser's name map (sized from the first 1,024 tensors) is the manifest's tensor_index,
 * and the simulation finds every declared tensor through it. */
START_TEST(streamed_names_index_the_simulation)
{
	struct dtl_manifest m;
	struct dtl_sim sim;
	char name[32];

	ck_assert_msg(load_json(5000, (size_t)-1, &m) == 0, "%s", error.message);
	ck_assert_uint_eq(m.tensor_count, 5000);
	ck_assert_uint_eq(m.tensor_index.count, 5000);
	ck_assert_msg(dtl_sim_run(&sim, &m, &m.plan, &behaviors, &arena, &error) == 0, "%s",
	              error.message);
	ck_assert_ptr_eq(sim.declared_names, &m.tensor_index);
	for (size_t i = 0; i < 5000; i++) {
		int len = snprintf(name, sizeof(name), "m.%zu.w", i);
		ck_assert_uint_eq(dtl_sim_find(&sim, name, (size_t)len), i);
	}
	ck_assert_uint_eq(dtl_sim_find(&sim, "m.5000.w", 8), DTL_NONE_INDEX);
	ck_assert_uint_eq(dtl_sim_find(&sim, "m.1", 3), DTL_NONE_INDEX);
	/* a manifest without the parser's map (an import) gets the simulation's own */
	struct dtl_manifest bare = m;
	memset(&bare.tensor_index, 0, sizeof(bare.tensor_index));
	ck_assert_msg(dtl_sim_run(&sim, &bare, &bare.plan, &behaviors, &arena, &error) == 0, "%s",
	              error.message);
	ck_assert_ptr_eq(sim.declared_names, &sim.own_declared);
	ck_assert_uint_eq(dtl_sim_find(&sim, "m.4999.w", 8), 4999);
}
END_TEST

/* A duplicate after the map was sized is still found, at the second name. */
START_TEST(streamed_duplicate_after_estimate)
{
	struct dtl_manifest m;

	ck_assert_int_lt(load_json(3000, 2500, &m), 0);
	ck_assert_str_eq(error.message, "duplicate tensor 'm.0.w' (first at line 3)");
	ck_assert_uint_eq(error.loc.line, 2503);
}
END_TEST

/* Tensor names: no empty segment, no '*' (the fast path and the loop that explains). */
START_TEST(tensor_name_segments)
{
	static const struct {
		const char *name;
		bool ok;
	} cases[] = {
	    {"a", true},        {"a.b", true},   {"a.b.c.d.e.f.g.h", true},
	    {".a", false},      {"a.", false},   {".", false},
	    {"..", false},      {"a..b", false}, {"a.b..c", false},
	    {"a.b.c..", false}, {"a*b", false},  {"a.b.*", false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[256];
		struct dtl_source src;
		struct dtl_node *root;
		struct dtl_manifest m;
		int len = snprintf(text, sizeof(text),
		                   "{\"dtypelint\": 1, \"tensors\": [{\"name\": \"%s\"}]}",
		                   cases[i].name);
		ck_assert_int_eq(dtl_source_init_mem(&src, "t.json", text, (size_t)len), 0);
		ck_assert_int_eq(dtl_doc_parse(&src, &arena, &limits, &root, &error), 0);
		int r = dtl_manifest_parse(root, "t.json", &arena, &limits, &m, &error);
		ck_assert_msg((r == 0) == cases[i].ok, "%s: %d %s", cases[i].name, r,
		              error.message);
		dtl_source_fini(&src);
	}
}
END_TEST

/* YAML tensors are streamed too: anchors inside the list, on the list, and the list as an
 * alias all read back whole (an element dropped while an alias still points into it would be
 * a use after free under ASan). */
START_TEST(streamed_yaml_anchors)
{
	static const char *const docs[] = {
	    /* an anchored shape and dtype, aliased elements later and at the root */
	    "dtypelint: 1\ntensors:\n"
	    "  - {name: a.w, shape: &s [4, 5], dtype: &d float32}\n"
	    "  - {name: b.w, shape: [1]}\n  - {name: c.w, shape: [2]}\n"
	    "  - {name: d.w, shape: *s, dtype: *d}\n"
	    "x-later: [*s, *d]\n",
	    /* the list itself anchored (kept whole), aliased after it */
	    "dtypelint: 1\ntensors: &t\n"
	    "  - {name: a.w, shape: [4, 5], dtype: float32}\n"
	    "  - {name: b.w, shape: [1]}\n  - {name: c.w, shape: [2]}\n"
	    "  - {name: d.w, shape: [4, 5], dtype: float32}\n"
	    "x-again: *t\n",
	    /* the list as an alias of one defined before */
	    "dtypelint: 1\nx-defs: {t: &t [{name: a.w, shape: [4, 5], dtype: float32},\n"
	    "  {name: b.w, shape: [1]}, {name: c.w, shape: [2]},\n"
	    "  {name: d.w, shape: [4, 5], dtype: float32}]}\ntensors: *t\n",
	};
	for (size_t k = 0; k < sizeof(docs) / sizeof(docs[0]); k++) {
		struct dtl_source src;
		struct dtl_manifest m;
		ck_assert_int_eq(dtl_source_init_mem(&src, "t.yaml", docs[k], strlen(docs[k])), 0);
		ck_assert_msg(dtl_manifest_load_source(&src, &arena, &limits, &m, &error) == 0,
		              "%zu: %s", k, error.message);
		dtl_source_fini(&src);
		ck_assert_uint_eq(m.tensor_count, 4);
		ck_assert_uint_eq(m.tensor_index.count, 4);
		ck_assert_str_eq(m.tensors[3].name, "d.w");
		ck_assert_uint_eq(m.tensors[3].rank, 2);
		ck_assert_int_eq(m.tensors[3].shape[0], 4);
		ck_assert_int_eq(m.tensors[3].shape[1], 5);
		ck_assert_int_eq(m.tensors[3].dtype, DTL_DTYPE_F32);
		ck_assert_int_eq(m.tensors[0].numel, 20);
	}
}
END_TEST

/* The quantize stage's skip list: an entry names a module when it is one of its dotted
 * component sequences; the first entry wins, skip_modules before keep_in_fp32 before the
 * strict list (the automaton that replaced the entry x module scan keeps this order). */
static const char *skip_reason(const struct dtl_sim *sim, const char *name)
{
	struct dtl_event ev[16];
	uint32_t t = dtl_sim_find(sim, name, strlen(name));

	ck_assert_msg(t != DTL_NONE_INDEX, "%s", name);
	size_t n = dtl_sim_history(sim, t, ev, 16);
	for (size_t k = 0; k < n && k < 16; k++)
		if (ev[k].stage == DTL_STAGE_QUANTIZE && strstr(ev[k].reason, "skip list"))
			return ev[k].reason;
	return "";
}

START_TEST(quantize_skip_list_first_entry_wins)
{
	struct dtl_sim sim;
	static const char *const want[][2] = {{"m.lm_head.proj.weight", "'lm_head'"},
	                                      {"model.lm_head_x.weight", ""},
	                                      {"a.b.c.weight", "'a.b'"},
	                                      {"x.a.b.weight", "'a.b'"},
	                                      {"xa.b.weight", "'b'"},
	                                      {"a.bc.weight", ""},
	                                      {"k.weight", "'k'"},
	                                      {"s.k.weight", "'k'"},
	                                      {"s.t.weight", "'s'"},
	                                      {"q.x.y.weight", "'x.y'"},
	                                      {"q.xx.y.weight", ""}};

	run("dtypelint: 1\nmodel: {checkpoint_dtype: bfloat16, keep_in_fp32: [b, lm_head, x.y],"
	    " keep_in_fp32_strict: [s]}\ntensors:\n"
	    "  - {name: m.lm_head.proj.weight, shape: [8, 8]}\n"
	    "  - {name: model.lm_head_x.weight, shape: [8, 8]}\n"
	    "  - {name: a.b.c.weight, shape: [8, 8]}\n  - {name: x.a.b.weight, shape: [8, 8]}\n"
	    "  - {name: xa.b.weight, shape: [8, 8]}\n  - {name: a.bc.weight, shape: [8, 8]}\n"
	    "  - {name: k.weight, shape: [8, 8]}\n  - {name: s.k.weight, shape: [8, 8]}\n"
	    "  - {name: s.t.weight, shape: [8, 8]}\n  - {name: q.x.y.weight, shape: [8, 8]}\n"
	    "  - {name: q.xx.y.weight, shape: [8, 8]}\n"
	    "quantization: {method: bnb-4bit, compute_dtype: bfloat16, skip_modules: [a.b, k]}\n"
	    "training: {strategy: fsdp2, precision: bf16}\n",
	    &sim);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *reason = skip_reason(&sim, want[i][0]);
		if (!*want[i][1])
			ck_assert_msg(!*reason, "%s: %s", want[i][0], reason);
		else
			ck_assert_msg(strstr(reason, want[i][1]) != NULL, "%s: '%s'", want[i][0],
			              reason);
	}
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-sim-registered.h"

static void add_tests(TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("sim")
