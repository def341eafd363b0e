/* SPDX-License-Identifier: MIT */
/* The JSON writer: separators, layouts, escaping and misuse, each checked on exact bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtl-test.h"
#include "dtypelint/core/json-writer.h"

struct capture {
	char *text;
	size_t size;
	FILE *out;
	struct dtl_json w;
};

static struct dtl_json *capture_start(struct capture *c)
{
	c->text = NULL;
	c->size = 0;
	c->out = open_memstream(&c->text, &c->size);
	ck_assert_ptr_nonnull(c->out);
	dtl_json_init(&c->w, c->out);
	return &c->w;
}

/* Ends the capture: the writer's verdict is expected; the text must be want */
static void capture_check(struct capture *c, int verdict, const char *want)
{
	int r = dtl_json_finish(&c->w);
	ck_assert_int_eq(fclose(c->out), 0);
	ck_assert_int_eq(r, verdict);
	ck_assert_str_eq(c->text, want);
	free(c->text);
}

static void put_string_len(const char *s, size_t len, const char *want)
{
	struct capture c;
	dtl_json_put_string_len(capture_start(&c), s, len);
	capture_check(&c, 0, want);
}

static void put_string(const char *s, const char *want)
{
	put_string_len(s, strlen(s), want);
}

START_TEST(json_escapes_controls)
{
	put_string("a\"b\\c", "\"a\\\"b\\\\c\"\n");
	put_string("\n\r\t\b\f\x01\x1f", "\"\\n\\r\\t\\u0008\\u000c\\u0001\\u001f\"\n");
	put_string("\x7f", "\"\\u007f\"\n");
	put_string("\xc2\x85", "\"\\u0085\"\n"); /* C1 NEL */
	put_string_len("a\0b", 3, "\"a\\u0000b\"\n");
	put_string("/ plain \xc3\xa9 \xe2\x82\xac", "\"/ plain \xc3\xa9 \xe2\x82\xac\"\n");
}
END_TEST

START_TEST(json_invalid_utf8_is_replacement)
{
	put_string("a\xff"
	           "b",
	           "\"a\\ufffdb\"\n");
	put_string("\xc0\xaf", "\"\\ufffd\\ufffd\"\n");                       /* overlong '/' */
	put_string("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"\n");            /* a surrogate */
	put_string("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"\n"); /* past U+10FFFF */
	put_string("\xe2\x82", "\"\\ufffd\\ufffd\"\n");                       /* cut short */
}
END_TEST

START_TEST(json_escapes_separators_and_bidi)
{
	put_string("a\xe2\x80\xa8"
	           "b\xe2\x80\xa9"
	           "c",
	           "\"a\\u2028b\\u2029c\"\n");
	put_string("\xe2\x80\xae\xef\xbb\xbf", "\"\\u202e\\ufeff\"\n");
}
END_TEST

START_TEST(json_keys_are_escaped)
{
	struct capture c;
	struct dtl_json *w = capture_start(&c);

	dtl_json_begin_object(w);
	dtl_json_key_string(w, "k\"\n", "v");
	dtl_json_end_object(w);
	capture_check(&c, 0, "{\"k\\\"\\n\": \"v\"}\n");
}
END_TEST

START_TEST(json_scalars)
{
	struct capture c;
	struct dtl_json *w = capture_start(&c);

	dtl_json_begin_array(w);
	dtl_json_put_int(w, INT64_MIN);
	dtl_json_put_int(w, 0);
	dtl_json_put_int(w, -7);
	dtl_json_put_uint(w, 10);
	dtl_json_put_uint(w, UINT64_MAX);
	dtl_json_put_number(w, 0.5);
	dtl_json_put_number(w, 1.0 / 0.0);
	dtl_json_put_bool(w, true);
	dtl_json_put_bool(w, false);
	dtl_json_put_null(w);
	dtl_json_put_string(w, NULL);
	dtl_json_end_array(w);
	capture_check(
	    &c, 0,
	    "[-9223372036854775808, 0, -7, 10, 18446744073709551615, 0.5, null, true, false, null, "
	    "null]\n");
}
END_TEST

START_TEST(json_compact_nesting)
{
	struct capture c;
	struct dtl_json *w = capture_start(&c);

	dtl_json_begin_object(w);
	dtl_json_key_uint(w, "a", 1);
	dtl_json_key(w, "b");
	dtl_json_begin_array(w);
	dtl_json_begin_object(w);
	dtl_json_end_object(w);
	dtl_json_begin_array(w);
	dtl_json_end_array(w);
	dtl_json_put_string(w, "x");
	dtl_json_end_array(w);
	dtl_json_key_bool(w, "c", true);
	dtl_json_key_null(w, "d");
	dtl_json_key_object(w, "e");
	dtl_json_key_array(w, "f");
	dtl_json_end_array(w);
	dtl_json_end_object(w);
	dtl_json_end_object(w);
	capture_check(&c, 0,
	              "{\"a\": 1, \"b\": [{}, [], \"x\"], \"c\": true, \"d\": null, "
	              "\"e\": {\"f\": []}}\n");
}
END_TEST

START_TEST(json_pretty_blocks)
{
	struct capture c;
	struct dtl_json *w = capture_start(&c);

	dtl_json_begin_object_block(w);
	dtl_json_key_int(w, "version", 1);
	dtl_json_key(w, "items");
	dtl_json_begin_array_block(w);
	dtl_json_begin_object(w);
	dtl_json_key_string(w, "name", "a");
	dtl_json_key(w, "inner");
	dtl_json_begin_array_block(w);
	dtl_json_put_uint(w, 7);
	dtl_json_end_array(w);
	dtl_json_end_object(w);
	dtl_json_end_array(w);
	dtl_json_key(w, "empty");
	dtl_json_begin_array_block(w);
	dtl_json_end_array(w);
	dtl_json_end_object(w);
	capture_check(&c, 0,
	              "{\n"
	              "  \"version\": 1,\n"
	              "  \"items\": [\n"
	              "    {\"name\": \"a\", \"inner\": [\n"
	              "      7\n"
	              "    ]}\n"
	              "  ],\n"
	              "  \"empty\": []\n"
	              "}\n");
}
END_TEST

START_TEST(json_breaks_by_hand)
{
	struct capture c;
	struct dtl_json *w = capture_start(&c);

	dtl_json_begin_object(w);
	dtl_json_key_uint(w, "a", 1);
	dtl_json_break(w, 1);
	dtl_json_key(w, "b");
	dtl_json_begin_array(w);
	dtl_json_break(w, 3);
	dtl_json_put_uint(w, 2);
	dtl_json_break(w, -1); /* no break */
	dtl_json_put_uint(w, 3);
	dtl_json_break(w, 0); /* before the close */
	dtl_json_end_array(w);
	dtl_json_end_object(w);
	capture_check(&c, 0, "{\"a\": 1,\n \"b\": [\n   2, 3\n]}\n");
}
END_TEST

START_TEST(json_top_level_values_are_lines)
{
	struct capture c;
	struct dtl_json *w = capture_start(&c);

	dtl_json_begin_object(w);
	dtl_json_key_uint(w, "n", 1);
	dtl_json_end_object(w);
	dtl_json_begin_object(w);
	dtl_json_key_uint(w, "n", 2);
	dtl_json_end_object(w);
	capture_check(&c, 0, "{\"n\": 1}\n{\"n\": 2}\n");
}
END_TEST

START_TEST(json_misuse_stops_the_writer)
{
	struct capture c;
	struct dtl_json *w = capture_start(&c);

	/* a value where an object wants a key: nothing more written */
	dtl_json_begin_object(w);
	dtl_json_put_uint(w, 1);
	dtl_json_end_object(w);
	capture_check(&c, -EINVAL, "{");

	w = capture_start(&c);
	dtl_json_begin_array(w);
	dtl_json_key(w, "k");
	capture_check(&c, -EINVAL, "[");

	w = capture_start(&c); /* unclosed */
	dtl_json_begin_array(w);
	capture_check(&c, -EINVAL, "[");

	w = capture_start(&c); /* a key without its value */
	dtl_json_begin_object(w);
	dtl_json_key(w, "k");
	dtl_json_end_object(w);
	capture_check(&c, -EINVAL, "{\"k\": ");

	w = capture_start(&c); /* a close that does not match */
	dtl_json_begin_array(w);
	dtl_json_end_object(w);
	capture_check(&c, -EINVAL, "[");
}
END_TEST

START_TEST(json_depth_is_bounded)
{
	struct capture c;
	struct dtl_json *w = capture_start(&c);
	char want[DTL_JSON_DEPTH_MAX + 1];

	for (int i = 0; i < DTL_JSON_DEPTH_MAX + 5; i++)
		dtl_json_begin_array(w);
	for (int i = 0; i < DTL_JSON_DEPTH_MAX + 5; i++)
		dtl_json_end_array(w);
	memset(want, '[', DTL_JSON_DEPTH_MAX);
	want[DTL_JSON_DEPTH_MAX] = '\0';
	capture_check(&c, -EINVAL, want);
}
END_TEST

START_TEST(json_write_error_is_eio)
{
	FILE *full = fopen("/dev/full", "w");
	struct dtl_json w;

	if (!full)
		return; /* no /dev/full on this system */
	setvbuf(full, NULL, _IONBF, 0);
	dtl_json_init(&w, full);
	dtl_json_put_string(&w, "x");
	ck_assert_int_eq(dtl_json_finish(&w), -EIO);
	fclose(full);
}
END_TEST

/* Strings longer than the writer's buffer, and escaped ones between plain ones, come out whole
 * and in order */
START_TEST(json_long_and_mixed_strings)
{
	struct capture c;
	struct dtl_json *w = capture_start(&c);
	char s[1400], *want = malloc(64 * 1024), *p = want;

	ck_assert_ptr_nonnull(want);
	dtl_json_begin_array(w);
	*p++ = '[';
	for (size_t n = 0; n < sizeof(s); n += 97) {
		memset(s, 'a' + n % 26, n);
		s[n] = '\0';
		if (n % 2) /* a newline at the end: escaped */
			s[n - 1] = '\n';
		dtl_json_put_string(w, s);
		p += sprintf(p, "%s\"", n ? ", " : "");
		if (n % 2) {
			memcpy(p, s, n - 1);
			p += n - 1;
			p += sprintf(p, "\\n");
		} else {
			memcpy(p, s, n);
			p += n;
		}
		*p++ = '"';
	}
	dtl_json_end_array(w);
	strcpy(p, "]\n");
	capture_check(&c, 0, want);
	free(want);
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-json-writer-registered.h"

static void add_tests(TCase *tc)
{
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("json-writer")
