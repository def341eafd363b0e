/* SPDX-License-Identifier: MIT */
/* Unit tests of src/input: positions of JSON and YAML nodes, scalars, limits. */
#include <string.h>

#include "dtl-test.h"
#include "dtypelint/doc.h"

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

START_TEST(errors_have_positions)
{
	struct parsed p;
	parse(&p, "m.json", "{\"a\": [1,\n 2,,]}");
	ck_assert_int_lt(p.r, 0);
	ck_assert_uint_eq(p.error.loc.line, 2);
	ck_assert_str_eq(p.error.loc.file, "m.json");
	done(&p);
	parse(&p, "m.yaml", "a: 1\na: 2\n");
	ck_assert_int_lt(p.r, 0);
	ck_assert_str_eq(p.error.message, "duplicate key 'a' (first at line 1, column 1)");
	done(&p);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, json_positions);
	tcase_add_test(tc, json_big_integers_keep_their_spelling);
	tcase_add_test(tc, json_unicode_columns);
	tcase_add_test(tc, yaml_positions_and_scalars);
	tcase_add_test(tc, yaml_aliases_are_capped);
	tcase_add_test(tc, yaml_alias_shares_value);
	tcase_add_test(tc, errors_have_positions);
}

DTL_TEST_MAIN("doc")
