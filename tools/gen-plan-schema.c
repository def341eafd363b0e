/* SPDX-License-Identifier: MIT */
/*
 * Build tool: writes the JSON Schema of the training plan (build/schemas/plan.schema.json,
 * installed in share/dtypelint/schemas/) from its template and the plan's key table
 * (include/dtypelint/model/plan-keys.h), so that a new key row is in the schema with no edit of it.
 * Usage: dtl-gen-plan-schema schema TEMPLATE OUTPUT
 *        dtl-gen-plan-schema keys          (a line a key: its path, type and words: the tests')
 * The template's text "@PROPERTIES@" becomes the plan's "properties" object; the rest of the
 * template (the definitions the rows' types refer to) is copied.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum type {
	T_MAP,
	T_SWITCH,
	T_STRATEGY,
	T_PRECISION,
	T_OPTIMIZER,
	T_TRAINER,
	T_RANKS,
	T_VERSIONS,
	T_GLOBS,
	T_DTYPE,
	T_FLOAT_DTYPE,
	T_TRISTATE,
	T_THRESHOLD,
	T_THRESHOLD_AUTO,
	T_OFFLOAD,
	T_TENSOR_OVERRIDES,
	T_BYTES,
};
static const char *const type_names[] = {
    "map",       "switch",         "strategy",    "precision",
    "optimizer", "trainer",        "ranks",       "versions",
    "globs",     "dtype",          "float-dtype", "tristate",
    "threshold", "threshold-auto", "offload",     "tensor-overrides",
    "bytes",
};

#define DTL_PLAN_KEY(PARENT, ID, NAME, TYPE, FIELD, LOC, DEFAULT, VALUES, DOC, DS, ACC, TR) ID_##ID,
enum id {
#include "dtypelint/model/plan-keys.h"
	COUNT,
	ID_ROOT = COUNT,
};
#undef DTL_PLAN_KEY

static const struct row {
	enum id parent;
	const char *name;
	enum type type;
	const char *fallback, *values, *doc;
} rows[] = {
#define DTL_PLAN_KEY(PARENT, ID, NAME, TYPE, FIELD, LOC, DEFAULT, VALUES, DOC, DS, ACC, TR)        \
	{ID_##PARENT, NAME, T_##TYPE, DEFAULT, VALUES, DOC},
#include "dtypelint/model/plan-keys.h"
#undef DTL_PLAN_KEY
};

/* A JSON writer that indents as Python's json.dumps(indent=2) */
struct out {
	FILE *f;
	int depth;
	bool first;
};

static void next(struct out *o, const char *name)
{
	fprintf(o->f, "%s\n%*s", o->first ? "" : ",", 2 * o->depth, "");
	if (name)
		fprintf(o->f, "\"%s\": ", name);
	o->first = false;
}

static void begin(struct out *o, const char *name, char bracket)
{
	next(o, name);
	fputc(bracket, o->f);
	o->depth++;
	o->first = true;
}

static void end(struct out *o, char bracket)
{
	o->depth--;
	fprintf(o->f, "\n%*s%c", 2 * o->depth, "", bracket);
	o->first = false;
}

static void member(struct out *o, const char *name, const char *json)
{
	next(o, name);
	fputs(json, o->f);
}

static void string(struct out *o, const char *name, const char *text, size_t len)
{
	next(o, name);
	fprintf(o->f, "\"%.*s\"", (int)len, text);
}

static void ref(struct out *o, const char *definition)
{
	next(o, "$ref");
	fprintf(o->f, "\"#/definitions/%s\"", definition);
}

/* "enum": the row's words */
static void words(struct out *o, const char *values)
{
	begin(o, "enum", '[');
	for (const char *v = values; v;) {
		const char *comma = strchr(v, ',');
		string(o, NULL, v, comma ? (size_t)(comma - v) : strlen(v));
		v = comma ? comma + 2 : NULL;
	}
	end(o, ']');
}

static void object(struct out *o, const char *schema_type, const char *extra)
{
	begin(o, NULL, '{');
	member(o, "type", schema_type);
	if (extra)
		fprintf(o->f, ",\n%*s%s", 2 * o->depth, "", extra);
	end(o, '}');
}

static void properties(struct out *o, enum id parent);

/* oneOf: an integer >= 0, "auto" (allow_auto), null */
static void threshold(struct out *o, bool allow_auto)
{
	begin(o, "oneOf", '[');
	begin(o, NULL, '{');
	member(o, "type", "\"integer\"");
	member(o, "minimum", "0");
	member(o, "maximum", "9223372036854775807");
	end(o, '}');
	if (allow_auto) {
		begin(o, NULL, '{');
		member(o, "const", "\"auto\"");
		end(o, '}');
	}
	object(o, "\"null\"", NULL);
	end(o, ']');
}

/* the keywords of a value of the row's type */
static void value(struct out *o, enum id id)
{
	const struct row *r = &rows[id];
	switch (r->type) {
	case T_MAP:
	case T_SWITCH:
		member(o, "type", "\"object\"");
		properties(o, id);
		return;
	case T_STRATEGY:
	case T_PRECISION:
	case T_OPTIMIZER:
	case T_TRAINER:
	case T_OFFLOAD:
		return words(o, r->values);
	case T_RANKS:
		member(o, "type", "\"integer\"");
		member(o, "minimum", "1");
		return member(o, "maximum", "16777216");
	case T_VERSIONS:
		return ref(o, "versions");
	case T_GLOBS:
		return ref(o, "globs");
	case T_DTYPE:
		return ref(o, "dtypeOrNull");
	case T_FLOAT_DTYPE:
		begin(o, "oneOf", '[');
		begin(o, NULL, '{');
		ref(o, "floatingDtype");
		end(o, '}');
		object(o, "\"null\"", NULL);
		return end(o, ']');
	case T_TRISTATE:
		return ref(o, "tristate");
	case T_THRESHOLD:
	case T_THRESHOLD_AUTO:
		return threshold(o, r->type == T_THRESHOLD_AUTO);
	case T_TENSOR_OVERRIDES:
		member(o, "type", "\"array\"");
		begin(o, "items", '{');
		words(o, r->values);
		return end(o, '}');
	case T_BYTES:
		begin(o, "oneOf", '[');
		object(o, "\"string\"",
		       "\"pattern\": \"^[0-9]+(\\\\.[0-9]+)?\\\\s*([KMGTP]i?B|B)?$\"");
		object(o, "\"integer\"", "\"minimum\": 1");
		return end(o, ']');
	}
}

/* "properties" of the keys under parent, and extension keys "x-..." */
static void properties(struct out *o, enum id parent)
{
	if (parent != ID_ROOT)
		begin(o, "properties", '{');
	for (size_t id = 0; id < COUNT; id++) {
		if (rows[id].parent != parent)
			continue;
		begin(o, rows[id].name, '{');
		string(o, "description", rows[id].doc, strlen(rows[id].doc));
		if (rows[id].fallback)
			member(o, "default", rows[id].fallback);
		value(o, (enum id)id);
		end(o, '}');
	}
	if (parent == ID_ROOT)
		return;
	end(o, '}');
	begin(o, "patternProperties", '{');
	begin(o, "^x-", '{');
	member(o, "description", "\"ignored by dtypelint (an extension key)\"");
	end(o, '}');
	end(o, '}');
	member(o, "additionalProperties", "false");
}

/* the template with @PROPERTIES@ replaced by the top level's properties, at depth 1 */
static int copy(FILE *in, FILE *out)
{
	char line[4096];
	while (fgets(line, sizeof(line), in)) {
		char *at = strstr(line, "@PROPERTIES@");
		if (!at) {
			fputs(line, out);
			continue;
		}
		struct out o = {.f = out, .depth = 2, .first = true};
		fwrite(line, 1, (size_t)(at - line), out);
		fputc('{', out);
		properties(&o, ID_ROOT);
		fprintf(out, "\n  }%s", at + strlen("@PROPERTIES@"));
	}
	return ferror(in) ? -1 : 0;
}

/* the rows' own consistency: a parent before its children, a map's children, no " in a doc */
static int check_rows(void)
{
	for (size_t id = 0; id < COUNT; id++) {
		const struct row *r = &rows[id];
		bool bad =
		    (r->parent != ID_ROOT &&
		     ((size_t)r->parent >= id ||
		      (rows[r->parent].type != T_MAP && rows[r->parent].type != T_SWITCH))) ||
		    strpbrk(r->doc, "\"\\") != NULL ||
		    ((r->type == T_STRATEGY || r->type == T_PRECISION || r->type == T_OPTIMIZER ||
		      r->type == T_TRAINER || r->type == T_OFFLOAD ||
		      r->type == T_TENSOR_OVERRIDES) != (r->values != NULL));
		if (bad) {
			fprintf(
			    stderr,
			    "dtl-gen-plan-schema: include/dtypelint/model/plan-keys.h: row '%s' is "
			    "inconsistent (parent, doc or values)\n",
			    r->name);
			return -1;
		}
	}
	return 0;
}

static void print_path(enum id id)
{
	if (rows[id].parent != ID_ROOT) {
		print_path(rows[id].parent);
		putchar('.');
	}
	fputs(rows[id].name, stdout);
}

int main(int argc, char **argv)
{
	if (check_rows() < 0)
		return 1;
	if (argc == 2 && strcmp(argv[1], "keys") == 0) {
		for (size_t id = 0; id < COUNT; id++) {
			print_path((enum id)id);
			printf(" %s", type_names[rows[id].type]);
			for (const char *v = rows[id].values; v;
			     v = strchr(v, ',') ? strchr(v, ',') + 2 : NULL)
				printf(" %.*s", (int)strcspn(v, ","), v);
			putchar('\n');
		}
		return 0;
	}
	if (argc != 4 || strcmp(argv[1], "schema") != 0) {
		fprintf(stderr, "usage: dtl-gen-plan-schema schema TEMPLATE OUTPUT | keys\n");
		return 2;
	}
	FILE *in = fopen(argv[2], "r"), *out = fopen(argv[3], "w");
	if (!in || !out) {
		perror(in ? argv[3] : argv[2]);
		return 1;
	}
	int r = copy(in, out);
	fclose(in);
	if (fclose(out) != 0 || r < 0) {
		perror(argv[3]);
		return 1;
	}
	return 0;
}
