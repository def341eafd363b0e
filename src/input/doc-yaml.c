/* SPDX-License-Identifier: MIT */
/*
 * YAML into the positioned document tree, from libyaml's event stream. libyaml marks are
 * 0-based; nodes get 1-based lines and columns. Aliases share the anchored node's storage;
 * the total number of nodes reached through aliases is capped (billion laughs).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <yaml.h>

#include "doc-private.h"

struct frame {
	struct dtl_node node;    /* the container being built */
	struct dtl_vec children; /* struct dtl_node items (for maps: key, value, key, ...) */
	size_t subtree_nodes;
	char *anchor;
};

struct anchor {
	const char *name;
	struct dtl_node node;
	size_t subtree_nodes;
};

struct builder {
	const struct dtl_source *source;
	struct dtl_arena *arena;
	const struct dtl_limits *limits;
	struct dtl_error *error;
	struct dtl_vec stack;   /* struct frame */
	struct dtl_vec anchors; /* struct anchor */
	size_t alias_nodes;
	struct dtl_node root;
	bool have_root;
};

static struct dtl_loc mark_loc(const struct builder *b, yaml_mark_t mark)
{
	/* libyaml's column counts characters; a 0-based mark becomes 1-based */
	struct dtl_loc loc = {.file = b->source->path,
	                      .line = (uint32_t)mark.line + 1,
	                      .column = (uint32_t)mark.column + 1};
	return loc;
}

static bool is_one_of(const char *text, size_t len, const char *const *words)
{
	for (; *words; words++)
		if (strlen(*words) == len && memcmp(*words, text, len) == 0)
			return true;
	return false;
}

static bool all_in(const char *s, size_t n, const char *set)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr(set, s[i]))
			return false;
	return true;
}

static bool looks_like_float(const char *s, size_t n)
{
	size_t i = 0, digits = 0;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, digits++;
	}
	if (digits == 0)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		if (i >= n || s[i] < '0' || s[i] > '9')
			return false;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return i == n;
}

/* YAML 1.2 core schema resolution of a plain scalar. */
static int resolve_plain(struct dtl_node *node, const char *s, size_t n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const trues[] = {"true", "True", "TRUE", NULL};
	static const char *const falses[] = {"false", "False", "FALSE", NULL};
	static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
	static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
	static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};

	if (is_one_of(s, n, nulls)) {
		node->type = DTL_NODE_NULL;
	} else if (is_one_of(s, n, trues) || is_one_of(s, n, falses)) {
		node->type = DTL_NODE_BOOL;
		node->boolean = is_one_of(s, n, trues);
	} else if (is_one_of(s, n, infs) || is_one_of(s, n, ninfs)) {
		node->type = DTL_NODE_FLOAT;
		node->number = is_one_of(s, n, infs) ? HUGE_VAL : -HUGE_VAL;
	} else if (is_one_of(s, n, nans)) {
		node->type = DTL_NODE_FLOAT;
		node->number = NAN;
	} else if (((s[0] == '-' || s[0] == '+') && all_in(s + 1, n - 1, "0123456789")) ||
	           all_in(s, n, "0123456789")) {
		return dtl_doc_set_number(node, s, n);
	} else if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o') &&
	           all_in(s + 2, n - 2, s[1] == 'x' ? "0123456789abcdefABCDEF" : "01234567")) {
		uint64_t v = 0;
		unsigned base = s[1] == 'x' ? 16 : 8;
		for (size_t i = 2; i < n; i++) {
			unsigned d = s[i] <= '9' ? (unsigned)(s[i] - '0')
			                         : (unsigned)((s[i] | 0x20) - 'a' + 10);
			if (v > (UINT64_MAX - d) / base) {
				node->type = DTL_NODE_FLOAT;
				node->number = HUGE_VAL;
				return 0;
			}
			v = v * base + d;
		}
		if (v > INT64_MAX) {
			node->type = DTL_NODE_FLOAT;
			node->number = (double)v;
		} else {
			node->type = DTL_NODE_INT;
			node->integer = (int64_t)v;
		}
	} else if (looks_like_float(s, n)) {
		return dtl_doc_set_number(node, s, n);
	} else {
		node->type = DTL_NODE_STRING;
	}
	return 0;
}

static int make_scalar(struct builder *b, const yaml_event_t *event, struct dtl_node *out)
{
	const char *value = (const char *)event->data.scalar.value;
	size_t len = event->data.scalar.length;
	const char *tag = (const char *)event->data.scalar.tag;
	struct dtl_loc loc = mark_loc(b, event->start_mark);
	char *text;

	memset(out, 0, sizeof(*out));
	out->line = loc.line;
	out->column = loc.column;
	text = dtl_arena_strndup(b->arena, value, len);
	if (!text)
		return -ENOMEM;
	out->raw = text;
	out->raw_len = (uint32_t)(len > UINT32_MAX ? UINT32_MAX : len);
	out->string.text = text;
	out->string.len = len;

	if (tag && strcmp(tag, "!") != 0) {
		static const char prefix[] = "tag:yaml.org,2002:";
		if (strncmp(tag, prefix, sizeof(prefix) - 1) != 0)
			return dtl_error_set(b->error, loc, -EINVAL, "YAML: unsupported tag '%s'",
			                     tag);
		const char *kind = tag + sizeof(prefix) - 1;
		if (strcmp(kind, "str") == 0) {
			out->type = DTL_NODE_STRING;
			return 0;
		}
		int r = resolve_plain(out, value, len);
		if (r < 0)
			return dtl_error_set(b->error, loc, -EINVAL, "YAML: '%s' is no !!%s", text,
			                     kind);
		bool ok = (strcmp(kind, "int") == 0 && out->type == DTL_NODE_INT) ||
		          (strcmp(kind, "float") == 0 &&
		           (out->type == DTL_NODE_FLOAT || out->type == DTL_NODE_INT)) ||
		          (strcmp(kind, "bool") == 0 && out->type == DTL_NODE_BOOL) ||
		          (strcmp(kind, "null") == 0 && out->type == DTL_NODE_NULL);
		if (!ok)
			return dtl_error_set(b->error, loc, -EINVAL,
			                     "YAML: tag !!%s does not fit the value '%s'", kind,
			                     text);
		if (strcmp(kind, "float") == 0 && out->type == DTL_NODE_INT) {
			out->type = DTL_NODE_FLOAT;
			out->number = (double)out->integer;
		}
		return 0;
	}
	if (event->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
		out->type = DTL_NODE_STRING;
		return 0;
	}
	int r = resolve_plain(out, value, len);
	if (r < 0) { /* looked like a number but is none: a string */
		out->type = DTL_NODE_STRING;
		out->string.text = text;
		out->string.len = len;
		r = 0;
	}
	/* for non-strings the union now holds the value; the spelling stays in raw */
	return r;
}

static int register_anchor(struct builder *b, const char *name, const struct dtl_node *node,
                           size_t nodes)
{
	struct anchor *a;

	if (!name)
		return 0;
	a = dtl_vec_push(&b->anchors, b->arena, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->name = dtl_arena_strndup(b->arena, name, strlen(name));
	if (!a->name)
		return -ENOMEM;
	a->node = *node;
	a->subtree_nodes = nodes;
	return 0;
}

/* Hands a finished node to the container on top of the stack, or makes it the root. */
static int emit(struct builder *b, const struct dtl_node *node, size_t nodes)
{
	if (b->stack.count == 0) {
		b->root = *node;
		b->have_root = true;
		return 0;
	}
	struct frame *top = &((struct frame *)b->stack.items)[b->stack.count - 1];
	struct dtl_node *slot = dtl_vec_push(&top->children, b->arena, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = *node;
	top->subtree_nodes += nodes;
	if (top->node.type == DTL_NODE_MAP && top->children.count % 2 == 1) {
		if (node->type == DTL_NODE_MAP || node->type == DTL_NODE_SEQ) {
			struct dtl_loc loc = {
			    .file = b->source->path, .line = node->line, .column = node->column};
			return dtl_error_set(b->error, loc, -EINVAL,
			                     "YAML: a mapping key must be a scalar");
		}
	}
	return 0;
}

static int push(struct builder *b, const yaml_event_t *event, enum dtl_node_type type,
                const char *anchor, const char *tag)
{
	struct dtl_loc loc = mark_loc(b, event->start_mark);
	struct frame *f;

	if (tag && strcmp(tag, "!") != 0 && strcmp(tag, "tag:yaml.org,2002:seq") != 0 &&
	    strcmp(tag, "tag:yaml.org,2002:map") != 0)
		return dtl_error_set(b->error, loc, -EINVAL, "YAML: unsupported tag '%s'", tag);

	if (b->stack.count + 1 >= b->limits->max_depth)
		return dtl_error_set(b->error, loc, -EINVAL,
		                     "YAML: nesting deeper than %u levels (--max-depth)",
		                     b->limits->max_depth);
	f = dtl_vec_push(&b->stack, b->arena, sizeof(*f));
	if (!f)
		return -ENOMEM;
	memset(f, 0, sizeof(*f)); /* the slot may hold a popped frame */
	f->node.type = type;
	f->node.line = loc.line;
	f->node.column = loc.column;
	f->subtree_nodes = 1;
	f->anchor = anchor ? dtl_arena_strndup(b->arena, anchor, strlen(anchor)) : NULL;
	if (anchor && !f->anchor)
		return -ENOMEM;
	return 0;
}

static int pop(struct builder *b)
{
	struct frame f = ((struct frame *)b->stack.items)[--b->stack.count];
	struct dtl_node *items = f.children.items;
	size_t n = f.children.count;
	int r;

	if (f.node.type == DTL_NODE_SEQ) {
		f.node.seq.items = dtl_arena_calloc(b->arena, n ? n : 1, sizeof(struct dtl_node));
		if (!f.node.seq.items)
			return -ENOMEM;
		if (n)
			memcpy(f.node.seq.items, items, n * sizeof(*items));
		f.node.seq.count = n;
	} else {
		f.node.map.pairs =
		    dtl_arena_calloc(b->arena, n / 2 ? n / 2 : 1, sizeof(struct dtl_pair));
		if (!f.node.map.pairs)
			return -ENOMEM;
		for (size_t i = 0; i + 1 < n; i += 2) {
			f.node.map.pairs[i / 2].key = items[i];
			f.node.map.pairs[i / 2].value = items[i + 1];
		}
		f.node.map.count = n / 2;
		r = dtl_doc_check_duplicate_keys(&f.node, b->source->path, b->arena, b->error);
		if (r < 0)
			return r;
	}
	r = register_anchor(b, f.anchor, &f.node, f.subtree_nodes);
	if (r < 0)
		return r;
	return emit(b, &f.node, f.subtree_nodes);
}

static int alias(struct builder *b, const yaml_event_t *event)
{
	const char *name = (const char *)event->data.alias.anchor;
	struct dtl_loc loc = mark_loc(b, event->start_mark);

	for (size_t i = b->anchors.count; i-- > 0;) {
		struct anchor *a = &((struct anchor *)b->anchors.items)[i];
		if (strcmp(a->name, name) != 0)
			continue;
		b->alias_nodes += a->subtree_nodes;
		if (b->alias_nodes > b->limits->max_alias_nodes)
			return dtl_error_set(b->error, loc, -EINVAL,
			                     "YAML: aliases expand to more than %zu nodes "
			                     "(--max-alias-nodes)",
			                     b->limits->max_alias_nodes);
		struct dtl_node copy = a->node;
		copy.line = loc.line;
		copy.column = loc.column;
		return emit(b, &copy, a->subtree_nodes);
	}
	return dtl_error_set(b->error, loc, -EINVAL, "YAML: unknown alias '*%s'", name);
}

static int parser_error(struct builder *b, yaml_parser_t *parser)
{
	struct dtl_loc loc = mark_loc(b, parser->problem_mark);
	const char *problem = parser->problem ? parser->problem : "syntax error";

	if (parser->error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	if (parser->context)
		return dtl_error_set(b->error, loc, -EINVAL, "YAML: %s %s", problem,
		                     parser->context);
	return dtl_error_set(b->error, loc, -EINVAL, "YAML: %s", problem);
}

int dtl_doc_parse_yaml(const struct dtl_source *source, struct dtl_arena *arena,
                       const struct dtl_limits *limits, struct dtl_node **ret_root,
                       struct dtl_error *error)
{
	struct builder b = {.source = source, .arena = arena, .limits = limits, .error = error};
	yaml_parser_t parser;
	yaml_event_t event;
	int documents = 0, r = 0;
	bool done = false;

	r = dtl_doc_check_text(source, error);
	if (r < 0)
		return r;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)source->data, source->size);
	while (!done) {
		if (!yaml_parser_parse(&parser, &event)) {
			r = parser_error(&b, &parser);
			break;
		}
		const char *anchor = NULL;
		switch (event.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++documents > 1)
				r = dtl_error_set(error, mark_loc(&b, event.start_mark), -EINVAL,
				                  "YAML: more than one document in the file");
			break;
		case YAML_SEQUENCE_START_EVENT:
			anchor = (const char *)event.data.sequence_start.anchor;
			r = push(&b, &event, DTL_NODE_SEQ, anchor,
			         (const char *)event.data.sequence_start.tag);
			break;
		case YAML_MAPPING_START_EVENT:
			anchor = (const char *)event.data.mapping_start.anchor;
			r = push(&b, &event, DTL_NODE_MAP, anchor,
			         (const char *)event.data.mapping_start.tag);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			r = pop(&b);
			break;
		case YAML_SCALAR_EVENT: {
			struct dtl_node node;
			r = make_scalar(&b, &event, &node);
			if (r >= 0)
				r = register_anchor(&b, (const char *)event.data.scalar.anchor,
				                    &node, 1);
			if (r >= 0)
				r = emit(&b, &node, 1);
			break;
		}
		case YAML_ALIAS_EVENT:
			r = alias(&b, &event);
			break;
		default:
			break;
		}
		yaml_event_delete(&event);
		if (r < 0)
			break;
	}
	yaml_parser_delete(&parser);
	if (r < 0)
		return r;
	if (!b.have_root || b.root.type == DTL_NODE_NULL) {
		struct dtl_loc loc = {.file = source->path, .line = 1, .column = 1};
		return dtl_error_set(error, loc, -EINVAL, "YAML: the file is empty");
	}
	struct dtl_node *root = dtl_arena_alloc(arena, sizeof(*root));
	if (!root)
		return -ENOMEM;
	*root = b.root;
	*ret_root = root;
	return 0;
}
