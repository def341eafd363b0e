/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of src/model/tensor-text.c: a plain tensor entry read straight from the JSON text
 * is the tensor the document's nodes and parse_tensor() make, with the same positions; an entry
 * that is not plain is left to them, with their errors; and on thousands of mutations of
 * manifests both ways agree (tests/manifest-twins.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtl-test.h"
#include "manifest-twins.h"

/* The manifest's first line; entries follow, then "]}" */
#define HEAD "{\"dtypelint\": 1, \"tensors\": [\n"

struct counted {
	struct dtl_tensor_stream ts; /* first: element() and text() both get the struct */
	size_t taken;
};

static int counting_text(void *ctx, struct dtl_doc_text *element)
{
	struct counted *c = ctx;
	int r = dtl_tensor_stream_text(&c->ts, element);
	if (r > 0)
		c->taken++;
	return r;
}

/* How many of text's tensor entries the text reader took, as load.c wires it. */
static size_t taken_from_text(const char *text)
{
	struct dtl_source source;
	struct dtl_limits limits;
	struct dtl_arena arena, nodes;
	struct dtl_error error = {0};
	struct dtl_node *root = NULL;
	struct counted c;
	struct dtl_doc_stream stream = {.key = "tensors",
	                                .element = dtl_tensor_stream_element,
	                                .text = counting_text,
	                                .ctx = &c};

	dtl_limits_default(&limits);
	dtl_arena_init(&arena);
	dtl_arena_init(&nodes);
	ck_assert_int_eq(dtl_source_init_mem(&source, "m.json", text, strlen(text)), 0);
	dtl_tensor_stream_init(&c.ts, "m.json", &arena, &limits);
	c.ts.doc = &stream;
	c.taken = 0;
	(void)dtl_doc_parse_stream(&source, &nodes, &arena, &limits, &stream, &root, &error);
	dtl_source_fini(&source);
	dtl_arena_fini(&nodes);
	dtl_arena_fini(&arena);
	return c.taken;
}

/* Both ways agree on text; returns their result. */
static int agree(const char *text, size_t len, const struct dtl_limits *limits)
{
	struct dtl_source source;
	char why[1024] = "";
	int r = 0;

	ck_assert_int_eq(dtl_source_init_mem(&source, "m.json", text, len), 0);
	int same = dtl_twins_compare(&source, limits, &r, why, sizeof(why));
	dtl_source_fini(&source);
	if (same != 1)
		ck_abort_msg("%s\n--- on ---\n%.*s", why, (int)len, text);
	return r;
}

static int agree_default(const char *text)
{
	struct dtl_limits limits;

	dtl_limits_default(&limits);
	return agree(text, strlen(text), &limits);
}

/* One entry in a manifest, with a second plain one after it (so that the reader goes on). */
static char *manifest_with(const char *entry)
{
	static const char tail[] = ",\n {\"name\": \"after.weight\", \"shape\": [2]}]}";
	size_t len = strlen(HEAD) + strlen(entry) + sizeof(tail);
	char *text = malloc(len);
	ck_assert_ptr_nonnull(text);
	snprintf(text, len, "%s%s%s", HEAD, entry, tail);
	return text;
}

START_TEST(plain_entries_are_taken)
{
	static const char *const entries[] = {
	    "{\"name\": \"model.embed_tokens.weight\", \"shape\": [129280, 7168]}",
	    "{\"name\":\"a.b\",\"shape\":[2,3],\"dtype\":\"bf16\"}",
	    "{\n   \"name\": \"model.layers.0.mlp.gate.weight\",\n   \"shape\": [\n    256,\n    "
	    "7168\n   ],\n   \"dtype\": \"float32\"\n  }",
	    "{\"name\": \"b.running_mean\", \"kind\": \"buffer\", \"persistent\": false, "
	    "\"trainable\": false, \"shape\": [64], \"dtype\": \"torch.float32\"}",
	    "{\"name\": \"c.weight\", \"trainable\": null, \"kind\": \"param\"}",
	    "{\"name\": \"d.weight\", \"trainable\": true, \"shape\": []}",
	    "{\"name\": \"e.weight\", \"shape\": [0, 123456789012345678]}",
	    "{\"name\": \"layers.10.mlp.experts.255.down_proj.weight\", \"shape\": [1073741823, "
	    "1073741824]}", /* just under 2^60 elements: DTL_NUMEL_MAX */
	    "{\"name\": \"a.b.c.d.e.f.g.h.i.j.k\"}",
	    "{\t\"name\"\t:\t\"f.weight\" ,\"shape\" :[ 1 , 2 ] }",
	    "{\"shape\": [4], \"dtype\": \"uint8\", \"name\": \"g\"}",
	    "{\"name\": \"h.w~ei ght\\u0041\"}", /* an escape: left to the nodes (below) */
	};
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		char *text = manifest_with(entries[i]);
		size_t want = i + 1 == sizeof(entries) / sizeof(entries[0]) ? 1 : 2;
		ck_assert_msg(taken_from_text(text) == want, "entry %zu: taken %zu, want %zu", i,
		              taken_from_text(text), want);
		ck_assert_int_eq(agree_default(text), 0);
		free(text);
	}
}
END_TEST

START_TEST(entries_left_to_the_nodes)
{
	/* each is not plain (or refused): the text reader gives it back, the second entry
	 * is still taken, and both ways agree on the result or the error */
	static const char *const entries[] = {
	    "{\"name\": \"a\\\"b\"}",                           /* escape */
	    "{\"name\": \"caf\xc3\xa9.weight\"}",               /* non-ASCII */
	    "{\"name\": \"a.weight\",\r\n \"shape\": [1]}",     /* carriage return */
	    "{\"name\": \"a.weight\", \"x-note\": 1}",          /* x- key */
	    "{\"name\": \"a.weight\", \"colour\": 1}",          /* unknown key */
	    "{\"name\": \"a.weight\", \"name\": \"b.weight\"}", /* duplicate key */
	    "{}",
	    "{\"shape\": [1]}",
	    "[]",
	    "\"a.weight\"",
	    "{\"name\": \"\"}",
	    "{\"name\": \".a\"}",
	    "{\"name\": \"a.\"}",
	    "{\"name\": \"a..b\"}",
	    "{\"name\": \"a.*\"}",
	    "{\"name\": \"abcdefg..hijklmnopq\"}", /* ".." across two words */
	    "{\"name\": \"abcdefgh..ijklmnopq\"}",
	    "{\"name\": \"abcdefghijklmno*pq\"}",
	    "{\"name\": \"abcdefghijklmnop*\"}",
	    "{\"name\": \"abcdefghijklmnop.\"}",
	    "{\"name\": \"abcdefghijklmno..\"}",
	    "{\"name\": 7}",
	    "{\"name\": \"a\", \"shape\": [1.0]}",
	    "{\"name\": \"a\", \"shape\": [1e3]}",
	    "{\"name\": \"a\", \"shape\": [-1]}",
	    "{\"name\": \"a\", \"shape\": [01]}",
	    "{\"name\": \"a\", \"shape\": [1234567890123456789]}",
	    "{\"name\": \"a\", \"shape\": [4294967296, 4294967296]}", /* 2^64 elements */
	    "{\"name\": \"a\", \"shape\": [3037000500, 3037000500]}", /* just over 2^63 */
	    "{\"name\": \"a\", \"shape\": [1073741824, 1073741824]}", /* 2^60: over DTL_NUMEL_MAX */
	    "{\"name\": \"a\", \"shape\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}",
	    "{\"name\": \"a\", \"shape\": [1,]}",
	    "{\"name\": \"a\", \"shape\": [,1]}",
	    "{\"name\": \"a\", \"shape\": 3}",
	    "{\"name\": \"a\", \"shape\": [[1]]}",
	    "{\"name\": \"a\", \"dtype\": \"float33\"}",
	    "{\"name\": \"a\", \"dtype\": null}",
	    "{\"name\": \"a\", \"kind\": \"weight\"}",
	    "{\"name\": \"a\", \"kind\": \"buffer\", \"trainable\": true}",
	    "{\"name\": \"a\", \"persistent\": false}",
	    "{\"name\": \"a\", \"kind\": \"buffer\", \"persistent\": null}",
	    "{\"name\": \"a\", \"trainable\": 1}",
	    "{\"name\": \"a\", \"trainable\": tru}",
	    "{\"name\": \"a\", \"trainable\": truex}",
	    "{\"name\": \"a\" \"shape\": [1]}",
	    "{\"name\": \"a\", }",
	    "{\"name\": \"a\"\x01}",
	    "{\"name\": \"a\"",
	};
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		char alone[256];
		snprintf(alone, sizeof(alone), "%s%s]}", HEAD, entries[i]);
		ck_assert_msg(taken_from_text(alone) == 0, "entry %zu was taken: %s", i,
		              entries[i]);
		(void)agree_default(alone);
		char *text = manifest_with(entries[i]);
		ck_assert_uint_le(taken_from_text(text), 1);
		(void)agree_default(text);
		free(text);
	}
}
END_TEST

START_TEST(positions_and_duplicates_agree)
{
	/* a duplicate name among taken entries: the same error at the second one's name */
	const char *text = HEAD " {\"name\": \"a.weight\"},\n    {\"shape\": [1], \"name\": "
	                        "\"a.weight\"}]}";
	ck_assert_uint_eq(taken_from_text(text), 2);
	ck_assert_int_lt(agree_default(text), 0);
	/* an entry after a non-ASCII byte on its line is left to the nodes (columns count
	 * code points there) */
	text = "{\"dtypelint\": 1, \"x-\xc3\xa9\": 1, \"tensors\": [{\"name\": \"a\"}]}";
	ck_assert_uint_eq(taken_from_text(text), 0);
	ck_assert_int_eq(agree_default(text), 0);
	/* the same entry on the next line is taken */
	text = "{\"dtypelint\": 1, \"x-\xc3\xa9\": 1, \"tensors\": [\n{\"name\": \"a\"}]}";
	ck_assert_uint_eq(taken_from_text(text), 1);
	ck_assert_int_eq(agree_default(text), 0);
}
END_TEST

START_TEST(limits_agree)
{
	/* --max-rank, --max-name-length, --max-tensors, --max-depth as the nodes apply them */
	const char *text = HEAD " {\"name\": \"abcdef.weight\", \"shape\": [1, 2, 3]},\n"
	                        " {\"name\": \"b\", \"shape\": [1]},\n {\"name\": \"c\"}]}";
	struct dtl_limits limits;
	for (int which = 0; which < 5; which++) {
		dtl_limits_default(&limits);
		if (which == 1)
			limits.max_rank = 2;
		else if (which == 2)
			limits.max_name_length = 5;
		else if (which == 3)
			limits.max_tensors = 2;
		else if (which == 4)
			limits.max_depth = 4; /* a shape's numbers are at depth 5 */
		int r = agree(text, strlen(text), &limits);
		ck_assert_msg(which == 0 ? r == 0 : r < 0, "limit %d: %d", which, r);
	}
}
END_TEST

/* xorshift64*: the same mutations on every run */
static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(2685821657736338717);
}

START_TEST(mutations_agree)
{
	static const char *const bases[] = {
	    HEAD " {\"name\": \"model.layers.0.mlp.gate.weight\", \"shape\": [256, 7168], "
	         "\"dtype\": \"float32\"},\n {\"name\": \"model.layers.0.mlp.gate.bias\", "
	         "\"kind\": \"buffer\", \"persistent\": false, \"shape\": [256]},\n"
	         " {\"name\": \"lm_head.weight\", \"trainable\": true, \"shape\": [10, 20]}]}",
	    "{\"dtypelint\":1,\"tensors\":[{\"name\":\"a.b\",\"shape\":[2,3]},{\"name\":\"a.c\","
	    "\"dtype\":\"bf16\",\"trainable\":null},{\"name\":\"d\",\"shape\":[]}]}",
	    "{\n \"dtypelint\": 1,\n \"tensors\": [\n  {\n   \"name\": \"x.weight\",\n   "
	    "\"shape\": [\n    4,\n    8\n   ]\n  },\n  {\n   \"name\": \"y.weight\",\n   "
	    "\"kind\": \"param\"\n  }\n ]\n}",
	};
	/* bytes that matter to either reader */
	static const char alphabet[] =
	    "\"\\{}[],: \t\r\n0123456789.-+eE*axnulltrfs\x7f\xc3\xa9\x01";
	uint64_t state = UINT64_C(0x9E3779B97F4A7C15);
	size_t ok = 0, refused = 0;
	char text[512];

	for (int round = 0; round < 30000; round++) {
		const char *base = bases[round % 3];
		size_t len = strlen(base);
		memcpy(text, base, len);
		int edits = 1 + (int)(next_random(&state) % 3);
		for (int e = 0; e < edits; e++) {
			size_t at = (size_t)(next_random(&state) % len);
			char ch = alphabet[next_random(&state) % (sizeof(alphabet) - 1)];
			switch (next_random(&state) % 3) {
			case 0: /* replace */
				text[at] = ch;
				break;
			case 1: /* insert */
				if (len + 1 < sizeof(text)) {
					memmove(text + at + 1, text + at, len - at);
					text[at] = ch;
					len++;
				}
				break;
			default: /* delete */
				if (len > 1) {
					memmove(text + at, text + at + 1, len - at - 1);
					len--;
				}
			}
		}
		struct dtl_limits limits;
		dtl_limits_default(&limits);
		if (agree(text, len, &limits) == 0)
			ok++;
		else
			refused++;
	}
	/* both kinds of outcome were met many times */
	ck_assert_uint_gt(ok, 2000);
	ck_assert_uint_gt(refused, 3000);
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-tensor-text-registered.h"

static void add_tests(TCase *tc)
{
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("tensor-text")
