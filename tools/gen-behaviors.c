/* SPDX-License-Identifier: MIT */
/*
 * Build tool: reads rules/versions.yaml, the one list of framework behaviours, and writes the
 * behaviour enum and the table of the YAML key behind each value, so the code cannot name a
 * behaviour the table lacks (it does not compile) and the table cannot hold one the code does
 * not know. Usage: dtl-gen-behaviors VERSIONS.yaml ENUM.h NAMES.h
 *
 * The enum name is the key in capitals: fsdp1-validate-v2 is DTL_B_FSDP1_VALIDATE_V2. An entry
 * whose code name is shorter says so with `enum: DTL_B_...`. A malformed file, a duplicate key
 * in any mapping, an unknown or missing field, or two behaviours with one enum name stop the
 * build with FILE:LINE:COL: error: ...
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct behaviour {
	const char *key;
	char *enum_name;
	yaml_mark_t mark;      /* the key */
	yaml_mark_t enum_mark; /* the enum: value, else the key */
};

/* A key, or an enum name, with where it stands and its order in the file */
struct named {
	const char *name;
	yaml_mark_t mark;
	size_t order;
};

static const char *input_path;

static void fail(yaml_mark_t mark, const char *format, ...)
{
	va_list args;

	fprintf(stderr, "%s:%lu:%lu: error: ", input_path, (unsigned long)mark.line + 1,
	        (unsigned long)mark.column + 1);
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
	exit(1);
}

static void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size);
	if (!p) {
		perror("calloc");
		exit(1);
	}
	return p;
}

static const char *scalar(const yaml_node_t *node)
{
	return node && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value
	                                              : NULL;
}

static const char *node_kind(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_SCALAR_NODE:
		return "a string";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "empty";
	}
}

static int by_name(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* Sorts the names and stops at the second of two equal ones, citing the first */
static void refuse_duplicates(struct named *names, size_t count, const char *what)
{
	qsort(names, count, sizeof(*names), by_name);
	for (size_t i = 1; i < count; i++)
		if (strcmp(names[i - 1].name, names[i].name) == 0)
			fail(names[i].mark, "duplicate %s '%s' (first at line %lu)", what,
			     names[i].name, (unsigned long)names[i - 1].mark.line + 1);
}

/* Every mapping in the file, not only behaviours: libyaml keeps the last of two equal keys,
 * and a second `until:` in one entry would silently change a range. */
static void check_mapping_keys(yaml_document_t *doc)
{
	for (yaml_node_t *node = doc->nodes.start; node < doc->nodes.top; node++) {
		size_t count = 0;
		struct named *keys;

		if (node->type != YAML_MAPPING_NODE)
			continue;
		keys =
		    xcalloc((size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start),
		            sizeof(*keys));
		for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
		     pair < node->data.mapping.pairs.top; pair++) {
			yaml_node_t *key = yaml_document_get_node(doc, pair->key);
			if (!scalar(key))
				fail(key->start_mark, "a key must be a plain string");
			keys[count] = (struct named){scalar(key), key->start_mark, count};
			count++;
		}
		refuse_duplicates(keys, count, "key");
		free(keys);
	}
}

static bool is_key(const char *s)
{
	/* lower-case words joined by single hyphens: a C identifier once capitalised */
	bool word = false;
	for (; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))
			word = true;
		else if (*s == '-' && word)
			word = false;
		else
			return false;
	}
	return word;
}

static bool is_enum_name(const char *s)
{
	if (strncmp(s, "DTL_B_", 6) != 0 || !s[6])
		return false;
	for (s += 6; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static char *derive_enum_name(const char *key)
{
	size_t len = strlen(key);
	char *name = xcalloc(len + 7, 1);

	memcpy(name, "DTL_B_", 6);
	for (size_t i = 0; i < len; i++)
		name[6 + i] = key[i] == '-'                      ? '_'
		              : (key[i] >= 'a' && key[i] <= 'z') ? (char)(key[i] - 'a' + 'A')
		                                                 : key[i];
	return name;
}

static const char *const fields[] = {"framework", "since",   "until", "fact",
                                     "status",    "summary", "enum",  "oracle"};
static const char *const required[] = {"framework", "fact", "status", "summary"};

/* One clause of an oracle: field, "EDGE shown: ...", "EDGE cannot: ..." or "EDGE todo: ...":
 * its edge (0 since, 1 until), or -1 when it is none of them */
static int oracle_clause(const char *clause, size_t len)
{
	static const char *const forms[] = {"since shown: ", "since cannot: ", "since todo: ",
	                                    "until shown: ", "until cannot: ", "until todo: "};

	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		size_t n = strlen(forms[f]);
		if (len > n && strncmp(clause, forms[f], n) == 0)
			return f < 3 ? 0 : 1;
	}
	return -1;
}

/* oracle: what tests/oracle/boundaries.py shows of each edge (since, until) of a behaviour:
 * "cannot: REASON" for all of them, or one clause per edge the entry has, joined by "; ":
 * "EDGE shown: PKG A / B" (a probe runs both releases), "EDGE cannot: REASON" (this machine
 * cannot show it) or "EDGE todo: WHAT IT TAKES" (it could; no probe does yet) */
static void check_oracle(const char *name, const yaml_node_t *v, bool since, bool until)
{
	const char *text = scalar(v);
	bool seen[2] = {false, false};

	if (!since && !until)
		fail(v->start_mark,
		     "behaviour '%s': oracle is for a behaviour with a since or until", name);
	if (strncmp(text, "cannot: ", 8) == 0 && text[8])
		return;
	for (const char *c = text; *c;) {
		const char *end = strstr(c, "; ");
		size_t len = end ? (size_t)(end - c) : strlen(c);
		int edge = oracle_clause(c, len);
		if (edge < 0)
			fail(v->start_mark,
			     "behaviour '%s': oracle is 'cannot: REASON' or clauses 'since|until "
			     "shown|cannot|todo: ...' joined by '; '",
			     name);
		if (seen[edge] || !(edge ? until : since))
			fail(v->start_mark, "behaviour '%s': oracle names its %s %s", name,
			     edge ? "until" : "since", seen[edge] ? "twice" : "but it has none");
		seen[edge] = true;
		c = end ? end + 2 : c + len;
	}
	if (seen[0] != since || seen[1] != until)
		fail(v->start_mark, "behaviour '%s': oracle says nothing of its %s", name,
		     since && !seen[0] ? "since" : "until");
}

static void read_entry(yaml_document_t *doc, yaml_node_t *key, yaml_node_t *value,
                       struct behaviour *out)
{
	const char *name = scalar(key);

	if (!is_key(name))
		fail(key->start_mark,
		     "behaviour '%s': a key is lower-case letters and digits joined by '-'", name);
	if (value->type != YAML_MAPPING_NODE)
		fail(value->start_mark, "behaviour '%s' must be a mapping, not %s", name,
		     node_kind(value));
	out->key = name;
	out->mark = key->start_mark;
	out->enum_mark = key->start_mark;
	out->enum_name = derive_enum_name(name);
	const yaml_node_t *oracle = NULL;
	bool since = false, until = false;
	for (size_t r = 0; r < sizeof(required) / sizeof(required[0]); r++) {
		bool found = false;
		for (yaml_node_pair_t *pair = value->data.mapping.pairs.start;
		     pair < value->data.mapping.pairs.top; pair++)
			found = found || strcmp(scalar(yaml_document_get_node(doc, pair->key)),
			                        required[r]) == 0;
		if (!found)
			fail(value->start_mark, "behaviour '%s' has no '%s'", name, required[r]);
	}
	for (yaml_node_pair_t *pair = value->data.mapping.pairs.start;
	     pair < value->data.mapping.pairs.top; pair++) {
		yaml_node_t *field = yaml_document_get_node(doc, pair->key);
		yaml_node_t *v = yaml_document_get_node(doc, pair->value);
		const char *f = scalar(field);
		size_t k = 0;

		while (k < sizeof(fields) / sizeof(fields[0]) && strcmp(fields[k], f) != 0)
			k++;
		if (k == sizeof(fields) / sizeof(fields[0]))
			fail(field->start_mark,
			     "behaviour '%s': unknown field '%s' (known: framework, since, until, "
			     "fact, status, summary, enum, oracle)",
			     name, f);
		if (!scalar(v))
			fail(v->start_mark, "behaviour '%s': '%s' must be a string, not %s", name,
			     f, node_kind(v));
		since = since || strcmp(f, "since") == 0;
		until = until || strcmp(f, "until") == 0;
		if (strcmp(f, "oracle") == 0)
			oracle = v;
		if (strcmp(f, "enum") != 0)
			continue;
		if (!is_enum_name(scalar(v)))
			fail(v->start_mark,
			     "behaviour '%s': enum '%s' must be DTL_B_ and capitals, digits or '_'",
			     name, scalar(v));
		if (strcmp(scalar(v), out->enum_name) == 0)
			fail(v->start_mark,
			     "behaviour '%s': enum '%s' is the name derived from the key; drop it",
			     name, scalar(v));
		free(out->enum_name);
		out->enum_name = xcalloc(strlen(scalar(v)) + 1, 1);
		memcpy(out->enum_name, scalar(v), strlen(scalar(v)));
		out->enum_mark = v->start_mark;
	}
	if (oracle)
		check_oracle(name, oracle, since, until);
	else if (since || until)
		/* a boundary says how the real releases show it, or why they cannot here */
		fail(value->start_mark,
		     "behaviour '%s' has a boundary but no 'oracle' (what "
		     "tests/oracle/boundaries.py "
		     "shows of each edge: 'since shown: ...', 'since todo: ...' or 'cannot: ...')",
		     name);
	if (strcmp(out->enum_name, "DTL_B_COUNT") == 0)
		fail(out->enum_mark, "behaviour '%s': DTL_B_COUNT is the number of behaviours",
		     name);
}

static void write_file(const char *path, const struct behaviour *list, size_t count, bool names)
{
	FILE *out = fopen(path, "w");

	if (!out) {
		perror(path);
		exit(1);
	}
	fprintf(out,
	        "/* generated by tools/gen-behaviors.c from rules/versions.yaml: do not edit */\n");
	if (names) {
		/* the body of an initializer, indexed by the enum */
		for (size_t i = 0; i < count; i++)
			fprintf(out, "[%s] = \"%s\",\n", list[i].enum_name, list[i].key);
	} else {
		fprintf(out, "#ifndef DTL_BEHAVIORS_H\n#define DTL_BEHAVIORS_H\n\n");
		fprintf(
		    out,
		    "/* One value per entry of rules/versions.yaml behaviours:, in its order */\n");
		fprintf(out, "enum dtl_behavior {\n");
		for (size_t i = 0; i < count; i++)
			fprintf(out, "\t%s, /* %s */\n", list[i].enum_name, list[i].key);
		fprintf(out, "\tDTL_B_COUNT\n};\n\n#endif\n");
	}
	if (fclose(out) != 0) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root, *behaviours = NULL;
	struct behaviour *list;
	struct named *enums;
	size_t count = 0;
	FILE *in;

	if (argc != 4) {
		fprintf(stderr, "usage: dtl-gen-behaviors VERSIONS.yaml ENUM.h NAMES.h\n");
		return 2;
	}
	input_path = argv[1];
	in = fopen(input_path, "rb");
	if (!in) {
		perror(input_path);
		return 1;
	}
	if (!yaml_parser_initialize(&parser)) {
		fprintf(stderr, "%s: error: cannot start the YAML parser\n", input_path);
		return 1;
	}
	yaml_parser_set_input_file(&parser, in);
	if (!yaml_parser_load(&parser, &doc))
		fail(parser.problem_mark, "malformed YAML: %s%s%s",
		     parser.problem ? parser.problem : "unknown error", parser.context ? " " : "",
		     parser.context ? parser.context : "");
	root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		fail(root ? root->start_mark : parser.mark, "the file must be a mapping");
	check_mapping_keys(&doc);
	for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++)
		if (strcmp(scalar(yaml_document_get_node(&doc, pair->key)), "behaviours") == 0)
			behaviours = yaml_document_get_node(&doc, pair->value);
	if (!behaviours || behaviours->type != YAML_MAPPING_NODE)
		fail(behaviours ? behaviours->start_mark : root->start_mark,
		     "'behaviours' must be a mapping of behaviour keys");
	list = xcalloc(
	    (size_t)(behaviours->data.mapping.pairs.top - behaviours->data.mapping.pairs.start),
	    sizeof(*list));
	for (yaml_node_pair_t *pair = behaviours->data.mapping.pairs.start;
	     pair < behaviours->data.mapping.pairs.top; pair++)
		read_entry(&doc, yaml_document_get_node(&doc, pair->key),
		           yaml_document_get_node(&doc, pair->value), &list[count++]);
	if (count == 0)
		fail(behaviours->start_mark, "'behaviours' is empty");
	enums = xcalloc(count, sizeof(*enums));
	for (size_t i = 0; i < count; i++)
		enums[i] = (struct named){list[i].enum_name, list[i].enum_mark, i};
	refuse_duplicates(enums, count, "enum name");
	write_file(argv[2], list, count, false);
	write_file(argv[3], list, count, true);
	free(enums);
	for (size_t i = 0; i < count; i++)
		free(list[i].enum_name);
	free(list);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(in);
	return 0;
}
