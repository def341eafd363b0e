/* SPDX-License-Identifier: MIT */
/* Unit tests of src/input: positions of JSON, YAML and TOML nodes, scalars, limits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dtl-test.h"
#include "dtypelint/input/doc.h"

struct parsed {
	struct dtl_arena arena;
	struct dtl_source source;
	struct dtl_node *root;
	struct dtl_error error;
	int r;
};

static void parse(struct parsed *p, const char *name, const char *text)
{
	struct dtl_limits limits;

	dtl_limits_default(&limits);
	limits.max_alias_nodes = 100;
	dtl_arena_init(&p->arena);
	ck_assert_int_eq(dtl_source_init_mem(&p->source, name, text, strlen(text)), 0);
	p->root = NULL;
	p->r = dtl_doc_parse(&p->source, &p->arena, &limits, &p->root, &p->error);
}

static void done(struct parsed *p)
{
	dtl_source_fini(&p->source);
	dtl_arena_fini(&p->arena);
}

START_TEST(json_positions)
{
	struct parsed p;
	parse(&p, "m.json", "{\n  \"a\": [1, {\"b\": \"x\"}],\r\n  \"c\": -0.5e3, \"d\": true}");
	ck_assert_int_eq(p.r, 0);
	const struct dtl_node *a = dtl_node_get(p.root, "a");
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->type, DTL_NODE_SEQ);
	ck_assert_uint_eq(a->line, 2);
	ck_assert_uint_eq(a->column, 8);
	const struct dtl_node *b = dtl_node_get(&a->seq.items[1], "b");
	ck_assert_uint_eq(b->line, 2);
	ck_assert_uint_eq(b->column, 18);
	ck_assert_str_eq(b->string.text, "x");
	const struct dtl_node *c = dtl_node_get(p.root, "c");
	ck_assert_uint_eq(c->line, 3);
	ck_assert_uint_eq(c->column, 8);
	ck_assert_int_eq(c->type, DTL_NODE_FLOAT);
	ck_assert_double_eq(c->number, -500.0);
	ck_assert_ptr_null(dtl_node_get(p.root, "A")); /* case-sensitive */
	done(&p);
}
END_TEST

START_TEST(json_big_integers_keep_their_spelling)
{
	struct parsed p;
	parse(&p, "m.json", "[9223372036854775807, 9223372036854775808, -9223372036854775808]");
	ck_assert_int_eq(p.r, 0);
	ck_assert_int_eq(p.root->seq.items[0].type, DTL_NODE_INT);
	ck_assert_int_eq(p.root->seq.items[0].integer, INT64_MAX);
	ck_assert_int_eq(p.root->seq.items[1].type, DTL_NODE_FLOAT);
	ck_assert_int_eq(p.root->seq.items[2].integer, INT64_MIN);
	done(&p);
}
END_TEST

START_TEST(json_unicode_columns)
{
	struct parsed p;
	parse(&p, "m.json", "{\"é\": 1, \"x\": 2}");
	ck_assert_int_eq(p.r, 0);
	ck_assert_uint_eq(p.root->map.pairs[1].key.column, 10); /* 'é' is one column */
	done(&p);
}
END_TEST

START_TEST(yaml_positions_and_scalars)
{
	struct parsed p;
	parse(&p, "m.yaml",
	      "a: 1\nb:\n  - 0x10\n  - .inf\n  - \"2\"\n  - ~\n  - True\n  - 1.5e3\n  - 2.7.1\n");
	ck_assert_int_eq(p.r, 0);
	const struct dtl_node *b = dtl_node_get(p.root, "b");
	ck_assert_uint_eq(b->line, 3);
	ck_assert_uint_eq(b->column, 3);
	ck_assert_int_eq(b->seq.items[0].type, DTL_NODE_INT);
	ck_assert_int_eq(b->seq.items[0].integer, 16);
	ck_assert_int_eq(b->seq.items[1].type, DTL_NODE_FLOAT);
	ck_assert_int_eq(b->seq.items[2].type, DTL_NODE_STRING);
	ck_assert_int_eq(b->seq.items[3].type, DTL_NODE_NULL);
	ck_assert_int_eq(b->seq.items[4].type, DTL_NODE_BOOL);
	ck_assert_int_eq(b->seq.items[5].type, DTL_NODE_FLOAT);
	ck_assert_int_eq(b->seq.items[6].type, DTL_NODE_STRING);
	ck_assert_str_eq(b->seq.items[6].string.text, "2.7.1");
	ck_assert_uint_eq(b->seq.items[6].line, 9);
	ck_assert_uint_eq(b->seq.items[6].column, 5);
	done(&p);
}
END_TEST

START_TEST(yaml_aliases_are_capped)
{
	struct parsed p;
	parse(
	    &p, "m.yaml",
	    "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\nb: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n");
	ck_assert_int_lt(p.r, 0);
	ck_assert_str_eq(p.error.message,
	                 "YAML: aliases expand to more than 100 nodes (--max-alias-nodes)");
	ck_assert_uint_eq(p.error.loc.line, 2);
	done(&p);
}
END_TEST

START_TEST(yaml_alias_shares_value)
{
	struct parsed p;
	parse(&p, "m.yaml", "a: &x {k: v}\nb: *x\n");
	ck_assert_int_eq(p.r, 0);
	const struct dtl_node *b = dtl_node_get(p.root, "b");
	ck_assert_str_eq(dtl_node_get(b, "k")->string.text, "v");
	ck_assert_uint_eq(b->line, 2);
	done(&p);
}
END_TEST

START_TEST(json_error_has_file_and_line)
{
	struct parsed p;
	parse(&p, "m.json", "{\"a\": [1,\n 2,,]}");
	ck_assert_int_lt(p.r, 0);
	ck_assert_uint_eq(p.error.loc.line, 2);
	ck_assert_str_eq(p.error.loc.file, "m.json");
	done(&p);
}
END_TEST

START_TEST(yaml_duplicate_key_names_the_first)
{
	struct parsed p;
	parse(&p, "m.yaml", "a: 1\na: 2\n");
	ck_assert_int_lt(p.r, 0);
	ck_assert_str_eq(p.error.message, "duplicate key 'a' (first at line 1, column 1)");
	done(&p);
}
END_TEST

/* The error and its position, for one line of JSON. */
static void expect_json_error(const char *text, unsigned line, unsigned column, const char *message)
{
	struct parsed p;
	parse(&p, "m.json", text);
	ck_assert_int_lt(p.r, 0);
	ck_assert_msg(strcmp(p.error.message, message) == 0 && p.error.loc.line == line &&
	                  p.error.loc.column == column,
	              "%s: got %u:%u: %s", text, p.error.loc.line, p.error.loc.column,
	              p.error.message);
	done(&p);
}

START_TEST(json_errors)
{
	/* a missing value, ':' or ',' is reported at the byte found instead */
	expect_json_error("{\"a\": }", 1, 7, "JSON: syntax error");
	expect_json_error("{\"a\" 1}", 1, 6, "JSON: syntax error");
	expect_json_error("[1 2]", 1, 4, "JSON: syntax error");
	expect_json_error("{a: 1}", 1, 2, "JSON: syntax error");
	expect_json_error("[1,]", 1, 4, "JSON: syntax error");
	expect_json_error("[1]x", 1, 4, "JSON: syntax error");
	expect_json_error("[tru]", 1, 2, "JSON: syntax error");
	expect_json_error("[1, 2", 1, 6, "JSON: unexpected end of file");
	expect_json_error("  \n\n", 3, 1, "JSON: the file is empty");
	expect_json_error("[\"ab", 1, 2, "JSON: unterminated string");
	/* escapes: bad ones at their backslash; \u needs four hex digits and whole pairs */
	expect_json_error("[\"a\\x\"]", 1, 4, "JSON: syntax error");
	expect_json_error("[\"a\\u12G4\"]", 1, 4, "JSON: syntax error");
	expect_json_error("[\"\\ud83d\"]", 1, 3, "JSON: syntax error");
	expect_json_error("[\"\\ude00\"]", 1, 3, "JSON: syntax error");
	/* problems in text that is JSON, at the first one */
	expect_json_error("[01]", 1, 2, "JSON: invalid number (leading zero)");
	expect_json_error("[1., 2]", 1, 2, "JSON: invalid number");
	expect_json_error("[-.5]", 1, 2, "JSON: invalid number");
	expect_json_error("[\"a\tb\"]", 1, 4, "JSON: raw control character in a string");
	expect_json_error("[\"a\\u0000\"]", 1, 4, "JSON: NUL character (\\u0000) in a string");
	expect_json_error("[1,\x0b 2]", 1, 4, "JSON: syntax error (a control character)");
	/* ... but a syntax error anywhere in the file wins */
	expect_json_error("[01, \"x\" \"y\"]", 1, 10, "JSON: syntax error");
	/* a map's duplicate keys are judged after its values */
	expect_json_error("{\"a\": 1, \"a\": [01]}", 1, 16, "JSON: invalid number (leading zero)");
	expect_json_error("{\"a\": 1, \"a\": 2}", 1, 10,
	                  "duplicate key 'a' (first at line 1, column 2)");
}
END_TEST

/* Keys of 16 MiB and more are too long for a string map: a map with many keys still finds
 * their duplicates (they are compared with the other long keys). */
START_TEST(json_duplicate_huge_keys)
{
	size_t key = DTL_STRMAP_KEY_MAX + 5, n = 0;
	char *text = malloc(2 * key + 1024);
	ck_assert_ptr_nonnull(text);
	n += (size_t)sprintf(text + n, "{");
	for (int i = 0; i < 20; i++)
		n += (size_t)sprintf(text + n, "\"k%d\": %d, ", i, i);
	for (int dup = 0; dup < 2; dup++) {
		text[n++] = '"';
		memset(text + n, 'a', key);
		n += key;
		n += (size_t)sprintf(text + n, "\": %d%s", dup, dup ? "}" : ", ");
	}
	text[n] = '\0';
	struct parsed p;
	parse(&p, "m.json", text);
	ck_assert_int_lt(p.r, 0);
	ck_assert_ptr_nonnull(strstr(p.error.message, "duplicate key"));
	ck_assert_uint_eq(p.error.loc.line, 1);
	done(&p);
	free(text);
}
END_TEST

START_TEST(json_strings_and_lines)
{
	struct parsed p;
	/* CR LF and lone CR are one line break each; a BOM is no column */
	parse(&p, "m.json", "\xEF\xBB\xBF{\r\n\"a\":\r\"\\u00e9\\ud83d\\ude00\\n\\/\"}");
	ck_assert_int_eq(p.r, 0);
	ck_assert_uint_eq(p.root->line, 1);
	ck_assert_uint_eq(p.root->column, 1);
	const struct dtl_node *a = dtl_node_get(p.root, "a");
	ck_assert_uint_eq(a->line, 3);
	ck_assert_uint_eq(a->column, 1);
	ck_assert_str_eq(a->string.text, "\xC3\xA9\xF0\x9F\x98\x80\n/");
	ck_assert_uint_eq(a->string.len, 8);
	done(&p);
}
END_TEST

/* Issue 21: past the readers' own limit (1000 levels, whatever --max-depth allows) both say
 * "nested deeper than N"; YAML's is checked as libyaml's events arrive, so that its scanner,
 * which looks at every open flow level for each token, never goes 100,000 deep (43 s). */
START_TEST(depth_reader_limits)
{
	static const struct {
		const char *name, *head, open, *message;
	} cases[] = {
	    {"m.json", "", '[', "JSON: nested deeper than 1000 levels (the reader's limit)"},
	    {"m.yaml", "a: ", '[', "YAML: nested deeper than 1000 levels (the reader's limit)"},
	    {"n.yaml", "a: ", '{', "YAML: nested deeper than 1000 levels (the reader's limit)"},
	};
	static char text[100010];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct parsed p;
		struct dtl_limits limits;
		struct timespec a, b;
		size_t o = (size_t)sprintf(text, "%s", cases[i].head);
		memset(text + o, cases[i].open, 100000);
		text[o + 100000] = '\0';
		dtl_limits_default(&limits);
		limits.max_depth = 100000;
		dtl_arena_init(&p.arena);
		ck_assert_int_eq(dtl_source_init_mem(&p.source, cases[i].name, text, strlen(text)),
		                 0);
		p.root = NULL;
		clock_gettime(CLOCK_MONOTONIC, &a);
		p.r = dtl_doc_parse(&p.source, &p.arena, &limits, &p.root, &p.error);
		clock_gettime(CLOCK_MONOTONIC, &b);
		ck_assert_int_lt(p.r, 0);
		ck_assert_str_eq(p.error.message, cases[i].message);
		ck_assert_uint_eq(p.error.loc.line, 1);
		double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		ck_assert_msg(s < 2, "%s: %.2f s", cases[i].name, s);
		done(&p);
	}
}
END_TEST

/* under the default limit the message names --max-depth */
START_TEST(yaml_depth_names_max_depth)
{
	static char text[80];
	struct parsed p;
	memset(text, '[', 70);
	text[70] = '\0';
	parse(&p, "m.yaml", text);
	ck_assert_int_lt(p.r, 0);
	ck_assert_str_eq(p.error.message, "YAML: nested deeper than 64 levels (--max-depth)");
	done(&p);
}
END_TEST

START_TEST(json_depth_names_max_depth)
{
	struct parsed p;
	char text[6000];
	size_t o = 0;

	for (int i = 0; i < 70; i++)
		text[o++] = '[';
	for (int i = 0; i < 70; i++)
		text[o++] = ']';
	text[o] = '\0';
	parse(&p, "m.json", text);
	ck_assert_int_lt(p.r, 0);
	ck_assert_str_eq(p.error.message, "JSON: nested deeper than 64 levels (--max-depth)");
	ck_assert_uint_eq(p.error.loc.column, 65);
	done(&p);
}
END_TEST

/* far deeper than anything: no recursion without end, the same message */
START_TEST(json_deep_maps_do_not_recurse)
{
	struct parsed p;
	char text[6000];
	size_t o = 0;

	for (int i = 0; i < 1400; i++)
		text[o++] = '{', text[o++] = '"', text[o++] = '"', text[o++] = ':';
	text[o] = '\0';
	parse(&p, "m.json", text);
	ck_assert_int_lt(p.r, 0);
	ck_assert_str_eq(p.error.message, "JSON: nested deeper than 64 levels (--max-depth)");
	done(&p);
}
END_TEST

/* The tree of dtl_doc_parse_split() does not point into the source, nor its strings into the
 * node arena. */
START_TEST(split_tree_outlives_source)
{
	struct dtl_arena nodes, text;
	struct dtl_source source;
	struct dtl_limits limits;
	struct dtl_error error;
	struct dtl_node *root = NULL;
	const char *json = "{\"name\": \"a.w\", \"shape\": [1e3, 7], \"ok\": true}";

	dtl_limits_default(&limits);
	dtl_arena_init(&nodes);
	dtl_arena_init(&text);
	ck_assert_int_eq(dtl_source_init_mem(&source, "m.json", json, strlen(json)), 0);
	ck_assert_int_eq(dtl_doc_parse_split(&source, &nodes, &text, &limits, &root, &error), 0);
	dtl_source_fini(&source);
	const struct dtl_node *shape = dtl_node_get(root, "shape");
	ck_assert_int_eq(shape->seq.items[0].type, DTL_NODE_FLOAT);
	ck_assert_uint_eq(shape->seq.items[0].raw_len, 3);
	ck_assert(memcmp(shape->seq.items[0].raw, "1e3", 3) == 0);
	ck_assert_int_eq(shape->seq.items[1].integer, 7);
	const char *name = dtl_node_get(root, "name")->string.text;
	dtl_arena_fini(&nodes);
	ck_assert_str_eq(name, "a.w");
	dtl_arena_fini(&text);
}
END_TEST

START_TEST(yaml_nul_is_an_error)
{
	struct parsed p;
	parse(&p, "m.yaml", "a: \"x\\0y\"\n");
	ck_assert_int_lt(p.r, 0);
	ck_assert_str_eq(p.error.message, "YAML: NUL character (\\0) in a string");
	done(&p);
}
END_TEST

START_TEST(yaml_newest_anchor_wins)
{
	struct parsed p;
	parse(&p, "m.yaml", "a: &x 1\nb: &x [2]\nc: *x\n");
	ck_assert_int_eq(p.r, 0);
	ck_assert_int_eq(dtl_node_get(p.root, "c")->type, DTL_NODE_SEQ);
	done(&p);
}
END_TEST

START_TEST(yaml_empty_collections)
{
	struct parsed p;
	parse(&p, "m.yaml", "a: []\nb: {}\nc: [[], {}]\n");
	ck_assert_int_eq(p.r, 0);
	ck_assert_uint_eq(dtl_node_get(p.root, "c")->seq.count, 2);
	done(&p);
}
END_TEST

START_TEST(toml_positions_tables_and_scalars)
{
	struct parsed p;
	parse(&p, "job.toml",
	      "# torchtitan\n"
	      "[training]\n"
	      "mixed_precision_param = \"bfloat16\"  # comment\n"
	      "steps = 1_000\n"
	      "[parallelism]\n"
	      "data_parallel_shard_degree = -1\n"
	      "fp.x = 0.5e1\n"
	      "[[float8.filter]]\n"
	      "fqns = ['output', \"router\"]\n"
	      "[[float8.filter]]\n"
	      "on = true\n"
	      "t = {a = 1, b.c = \"\"\"\nx\"\"\"}\n"
	      "d = 1979-05-27T07:32:00Z\n");
	ck_assert_msg(p.r == 0, "%s", p.error.message);
	const struct dtl_node *tr = dtl_node_get(p.root, "training");
	const struct dtl_node *mp = dtl_node_get(tr, "mixed_precision_param");
	ck_assert_str_eq(mp->string.text, "bfloat16");
	ck_assert_uint_eq(mp->line, 3);
	ck_assert_uint_eq(mp->column, 25);
	ck_assert_int_eq(dtl_node_get(tr, "steps")->integer, 1000);
	const struct dtl_node *par = dtl_node_get(p.root, "parallelism");
	ck_assert_int_eq(dtl_node_get(par, "data_parallel_shard_degree")->integer, -1);
	ck_assert_double_eq(dtl_node_get(dtl_node_get(par, "fp"), "x")->number, 5.0);
	const struct dtl_node *f = dtl_node_get(dtl_node_get(p.root, "float8"), "filter");
	ck_assert_int_eq(f->type, DTL_NODE_SEQ);
	ck_assert_uint_eq(f->seq.count, 2);
	ck_assert_str_eq(dtl_node_get(&f->seq.items[0], "fqns")->seq.items[1].string.text,
	                 "router");
	const struct dtl_node *t = dtl_node_get(&f->seq.items[1], "t");
	ck_assert_str_eq(dtl_node_get(dtl_node_get(t, "b"), "c")->string.text, "x");
	ck_assert_str_eq(dtl_node_get(&f->seq.items[1], "d")->string.text, "1979-05-27T07:32:00Z");
	done(&p);
}
END_TEST

static void expect_toml_error(const char *text, unsigned line, unsigned column, const char *message)
{
	struct parsed p;
	parse(&p, "bad.toml", text);
	ck_assert_int_lt(p.r, 0);
	ck_assert_msg(strstr(p.error.message, message), "'%s' has no '%s'", p.error.message,
	              message);
	ck_assert_uint_eq(p.error.loc.line, line);
	ck_assert_uint_eq(p.error.loc.column, column);
	done(&p);
}

START_TEST(toml_errors_point_at_their_place)
{
	expect_toml_error("a = 1\nb = 2\na = 3\n", 3, 1, "duplicate key 'a' (first at 1:1)");
	expect_toml_error("[t]\nx = 1\n[t]\n", 3, 2, "duplicate key 't'");
	expect_toml_error("x = {a = 1}\n[x]\n", 2, 2, "duplicate key 'x'");
	expect_toml_error("x = 01\n", 1, 5, "leading zero");
	expect_toml_error("x = \"abc\n", 1, 9, "newline in a single-line string");
	expect_toml_error("x = 1 y = 2\n", 1, 7, "expected the end of the line");
	expect_toml_error("x = [1, 2\n", 2, 1, "expected ',' or ']'");
	expect_toml_error("# \x01\n", 1, 3, "expected a key");
	expect_toml_error("x = 1__0\n", 1, 5, "'_'");
}
END_TEST

START_TEST(toml_depth_names_max_depth)
{
	char text[4096] = "x = ";
	size_t n = strlen(text);
	for (int i = 0; i < 1000; i++)
		text[n++] = '[';
	text[n] = '\0';
	struct parsed p;
	parse(&p, "deep.toml", text);
	ck_assert_int_lt(p.r, 0);
	ck_assert_ptr_nonnull(strstr(p.error.message, "--max-depth"));
	done(&p);
}
END_TEST

START_TEST(toml_nesting_is_capped_whatever_max_depth)
{
	struct dtl_limits limits;
	struct dtl_arena arena;
	struct dtl_source source;
	struct dtl_node *root;
	struct dtl_error error;
	size_t n = 100000;
	char *text = malloc(n + 5);

	ck_assert_ptr_nonnull(text);
	memcpy(text, "x = ", 4);
	memset(text + 4, '[', n);
	text[n + 4] = '\0';
	dtl_limits_default(&limits);
	limits.max_depth = 100000;
	dtl_arena_init(&arena);
	ck_assert_int_eq(dtl_source_init_mem(&source, "deep.toml", text, n + 4), 0);
	ck_assert_int_lt(dtl_doc_parse(&source, &arena, &limits, &root, &error), 0);
	ck_assert_ptr_nonnull(strstr(error.message, "256 levels"));
	dtl_source_fini(&source);
	dtl_arena_fini(&arena);
	free(text);
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-doc-registered.h"

static void add_tests(TCase *tc)
{
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("doc")
