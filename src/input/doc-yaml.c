/* SPDX-License-Identifier: MIT */
/*
 * YAML into the positioned document tree, from libyaml's event stream. libyaml marks are
 * 0-based; nodes get 1-based lines and columns. Aliases share the anchored node's storage;
 * the total number of nodes reached through aliases is capped (billion laughs).
 *
 * The root's list named by the stream (a manifest's tensors; doc.h) is handed over element by
 * element, and each element's nodes are dropped once it is converted, as the JSON reader does.
 * An anchored container may be aliased later in the document, so from the first one on
 * nothing is dropped: it and everything after it are built in the kept arena. (An anchored
 * scalar needs nothing kept: the anchor holds a copy of its node, whose text is in text.)
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "doc-private.h"

struct frame {
	struct dtl_node node; /* the container being built */
	size_t base;          /* its children start at children[base] (maps: key, value, ...) */
	size_t subtree_nodes;
	const char *anchor;
};

struct anchor {
	struct dtl_node node;
	size_t subtree_nodes;
};

/*
 * The open containers and their children live on two scratch stacks shared by the whole
 * document: a finished container's children are copied once into an array of the exact size
 * in the node arena, and the stack shrinks back. Anchors are found by name through a map
 * (the newest definition of a name wins, as YAML says).
 */
struct builder {
	const struct dtl_source *source;
	struct dtl_arena *nodes, *text; /* nodes: where nodes are built now (kept or element) */
	struct dtl_arena *kept;         /* the caller's node arena */
	/* the streamed list (NULL: none): it is frames[stream_frame - 1] while it is open
	 * (stream_frame 0: not open); its elements are built in element unless anchored */
	struct dtl_doc_stream *stream;
	size_t stream_frame;
	struct dtl_arena element;
	bool anchored; /* an anchored container was seen: no node is dropped any more */
	size_t mark;   /* the end of the event being handled (libyaml's index) */
	const struct dtl_limits *limits;
	struct dtl_error *error;
	struct frame *frames;
	size_t frame_count, frame_capacity;
	struct dtl_node *children;
	size_t child_count, child_capacity;
	struct dtl_strmap anchor_names; /* name -> index in anchors */
	struct dtl_vec anchors;         /* struct anchor */
	size_t alias_nodes;
	struct dtl_node root;
	bool have_root;
};

static int grow(void **items, size_t *capacity, size_t item_size)
{
	size_t bigger = *capacity ? *capacity * 2 : 64;
	void *p = realloc(*items, bigger * item_size);

	if (!p)
		return -ENOMEM;
	*items = p;
	*capacity = bigger;
	return 0;
}

static struct dtl_loc mark_loc(const struct builder *b, yaml_mark_t mark)
{
	/* libyaml's column counts characters; a 0-based mark becomes 1-based */
	struct dtl_loc loc = {.file = b->source->path,
	                      .line = (uint32_t)mark.line + 1,
	                      .column = (uint32_t)mark.column + 1};
	return loc;
}

struct word {
	const char *text;
	size_t len;
};
#define WORD(s)                                                                                    \
	{                                                                                          \
		s, sizeof(s) - 1                                                                   \
	}

static bool is_one_of(const char *text, size_t len, const struct word *words)
{
	for (; words->text; words++)
		if (words->len == len && memcmp(words->text, text, len) == 0)
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
	static const struct word nulls[] = {WORD(""),     WORD("~"),    WORD("null"),
	                                    WORD("Null"), WORD("NULL"), {NULL, 0}};
	static const struct word trues[] = {WORD("true"), WORD("True"), WORD("TRUE"), {NULL, 0}};
	static const struct word falses[] = {
	    WORD("false"), WORD("False"), WORD("FALSE"), {NULL, 0}};
	static const struct word infs[] = {WORD(".inf"),  WORD(".Inf"),  WORD(".INF"),
	                                   WORD("+.inf"), WORD("+.Inf"), WORD("+.INF"),
	                                   {NULL, 0}};
	static const struct word ninfs[] = {WORD("-.inf"), WORD("-.Inf"), WORD("-.INF"), {NULL, 0}};
	static const struct word nans[] = {WORD(".nan"), WORD(".NaN"), WORD(".NAN"), {NULL, 0}};

	/* most scalars are names or plain integers: digits alone are an integer, and only a few
	 * first characters can make anything but a string */
	bool digits = n > 0;
	for (size_t i = 0; i < n && digits; i++)
		digits = s[i] >= '0' && s[i] <= '9';
	if (digits)
		return dtl_doc_set_number(node, s, n);
	if (n > 0 && !strchr("~nNtTfF.+-0123456789", s[0])) {
		node->type = DTL_NODE_STRING;
		return 0;
	}
	/* the words of the core schema are at most 5 characters long (and "name", "shape" and
	 * "dtype", the keys of every tensor, are no word) */
	if (n <= 5 && (n == 0 || strchr("~nNtTfF.+-", s[0]))) {
		if (is_one_of(s, n, nulls)) {
			node->type = DTL_NODE_NULL;
			return 0;
		}
		if (is_one_of(s, n, trues) || is_one_of(s, n, falses)) {
			node->type = DTL_NODE_BOOL;
			node->boolean = is_one_of(s, n, trues);
			return 0;
		}
		if (is_one_of(s, n, infs) || is_one_of(s, n, ninfs)) {
			node->type = DTL_NODE_FLOAT;
			node->number = is_one_of(s, n, infs) ? HUGE_VAL : -HUGE_VAL;
			return 0;
		}
		if (is_one_of(s, n, nans)) {
			node->type = DTL_NODE_FLOAT;
			node->number = NAN;
			return 0;
		}
	}
	if (((s[0] == '-' || s[0] == '+') && all_in(s + 1, n - 1, "0123456789")) ||
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
	/* a "\0" escape (only a double-quoted scalar has escapes; the text has no NUL byte:
	 * dtl_doc_check_text): a name with a NUL inside would be cut short wherever it is used */
	if (event->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE && memchr(value, '\0', len))
		return dtl_error_set(b->error, loc, -EINVAL,
		                     "YAML: NUL character (\\0) in a string");
	text = dtl_arena_strndup(b->text, value, len);
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
	size_t index = b->anchors.count;

	if (!name)
		return 0;
	a = dtl_vec_push(&b->anchors, b->kept, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->node = *node;
	a->subtree_nodes = nodes;
	size_t len = strlen(name);
	char *copy = dtl_arena_strndup(b->kept, name, len);
	if (!copy)
		return -ENOMEM;
	int64_t first = dtl_strmap_put(&b->anchor_names, copy, len, (int64_t)index);
	if (first < 0)
		return -ENOMEM;
	if ((size_t)first != index) {
		/* a redefinition: the name now means this node */
		struct anchor *anchors = b->anchors.items;
		anchors[first] = anchors[index];
	}
	return 0;
}

/* Hands a finished node to the container on top of the stack, or makes it the root. */
static int emit(struct builder *b, const struct dtl_node *node, size_t nodes)
{
	if (b->frame_count == 0) {
		b->root = *node;
		b->have_root = true;
		return 0;
	}
	struct frame *top = &b->frames[b->frame_count - 1];
	if (b->stream_frame && b->frame_count == b->stream_frame) {
		/* an element of the streamed list: converted, then dropped */
		struct dtl_doc_stream *stream = b->stream;
		stream->end = b->mark;
		top->subtree_nodes += nodes;
		int r = stream->element(stream->ctx, node);
		stream->count++;
		if (!b->anchored)
			dtl_arena_reset(&b->element);
		return r;
	}
	if (b->child_count == b->child_capacity &&
	    grow((void **)&b->children, &b->child_capacity, sizeof(*b->children)) < 0)
		return -ENOMEM;
	b->children[b->child_count++] = *node;
	top->subtree_nodes += nodes;
	if (top->node.type == DTL_NODE_MAP && (b->child_count - top->base) % 2 == 1) {
		if (node->type == DTL_NODE_MAP || node->type == DTL_NODE_SEQ) {
			struct dtl_loc loc = {
			    .file = b->source->path, .line = node->line, .column = node->column};
			return dtl_error_set(b->error, loc, -EINVAL,
			                     "YAML: a mapping key must be a scalar");
		}
	}
	return 0;
}

/* The deepest a YAML document may nest whatever --max-depth says (as JSON's reader): libyaml's
 * scanner takes time quadratic in the depth of flow collections. */
#define YAML_DEPTH_LIMIT 1000u

static int push(struct builder *b, const yaml_event_t *event, enum dtl_node_type type,
                const char *anchor, const char *tag)
{
	struct dtl_loc loc = mark_loc(b, event->start_mark);
	struct frame *f;

	if (tag && strcmp(tag, "!") != 0 && strcmp(tag, "tag:yaml.org,2002:seq") != 0 &&
	    strcmp(tag, "tag:yaml.org,2002:map") != 0)
		return dtl_error_set(b->error, loc, -EINVAL, "YAML: unsupported tag '%s'", tag);

	/* checked as libyaml's events arrive, so its scanner never runs far deeper: it looks
	 * at every open flow level for each token, and '[' 100,000 deep took 43 s */
	if (b->frame_count + 1 >= b->limits->max_depth)
		return dtl_error_set(b->error, loc, -EINVAL,
		                     "YAML: nested deeper than %u levels (--max-depth)",
		                     b->limits->max_depth);
	if (b->frame_count + 1 >= YAML_DEPTH_LIMIT)
		return dtl_error_set(b->error, loc, -EINVAL,
		                     "YAML: nested deeper than %u levels (the reader's limit)",
		                     YAML_DEPTH_LIMIT);
	if (b->frame_count == b->frame_capacity &&
	    grow((void **)&b->frames, &b->frame_capacity, sizeof(*b->frames)) < 0)
		return -ENOMEM;
	if (anchor) {
		/* it may be aliased after its list element is dropped: keep everything */
		b->anchored = true;
		b->nodes = b->kept;
	}
	/* the root's list to stream: its first occurrence, as a value of the root mapping
	 * (a list that has an anchor is kept whole) */
	bool streamed = false;
	if (b->stream && !b->stream->used && type == DTL_NODE_SEQ && !anchor &&
	    b->frame_count == 1 && b->frames[0].node.type == DTL_NODE_MAP &&
	    (b->child_count - b->frames[0].base) % 2 == 1) {
		const struct dtl_node *key = &b->children[b->child_count - 1];
		streamed =
		    key->type == DTL_NODE_STRING && strcmp(key->string.text, b->stream->key) == 0;
	}
	f = &b->frames[b->frame_count++];
	memset(f, 0, sizeof(*f));
	f->node.type = type;
	f->node.line = loc.line;
	f->node.column = loc.column;
	f->base = b->child_count;
	f->subtree_nodes = 1;
	f->anchor = anchor ? dtl_arena_strndup(b->kept, anchor, strlen(anchor)) : NULL;
	if (anchor && !f->anchor)
		return -ENOMEM;
	if (streamed) {
		b->stream->used = true;
		b->stream->first = (size_t)event->start_mark.index;
		b->stream->size = b->source->size;
		b->stream_frame = b->frame_count;
		if (!b->anchored)
			b->nodes = &b->element;
	}
	return 0;
}

static int pop(struct builder *b)
{
	if (b->stream_frame && b->frame_count == b->stream_frame) {
		/* the streamed list ends: it stays in the tree without its elements */
		b->stream_frame = 0;
		b->nodes = b->kept;
	}
	struct frame f = b->frames[--b->frame_count];
	size_t n = b->child_count - f.base;
	/* no children yet: the stack may not exist (NULL + 0 is undefined) */
	const struct dtl_node *items = n ? b->children + f.base : NULL;
	int r;

	if (f.node.type == DTL_NODE_SEQ) {
		f.node.seq.items = dtl_arena_calloc(b->nodes, n ? n : 1, sizeof(struct dtl_node));
		if (!f.node.seq.items)
			return -ENOMEM;
		if (n)
			memcpy(f.node.seq.items, items, n * sizeof(*items));
		f.node.seq.count = n;
	} else {
		f.node.map.pairs =
		    dtl_arena_calloc(b->nodes, n / 2 ? n / 2 : 1, sizeof(struct dtl_pair));
		if (!f.node.map.pairs)
			return -ENOMEM;
		for (size_t i = 0; i + 1 < n; i += 2) {
			f.node.map.pairs[i / 2].key = items[i];
			f.node.map.pairs[i / 2].value = items[i + 1];
		}
		f.node.map.count = n / 2;
	}
	b->child_count = f.base;
	if (f.node.type == DTL_NODE_MAP) {
		r = dtl_doc_check_duplicate_keys(&f.node, b->source->path, b->nodes, b->error);
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
	int64_t i = dtl_strmap_get(&b->anchor_names, name, strlen(name));

	if (i < 0)
		return dtl_error_set(b->error, loc, -EINVAL, "YAML: unknown alias '*%s'", name);
	const struct anchor *a = &((const struct anchor *)b->anchors.items)[i];
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

int dtl_doc_yaml(const struct dtl_source *source, struct dtl_arena *nodes, struct dtl_arena *text,
                 const struct dtl_limits *limits, struct dtl_doc_stream *stream,
                 struct dtl_node **ret_root, struct dtl_error *error)
{
	struct builder b = {.source = source,
	                    .nodes = nodes,
	                    .kept = nodes,
	                    .text = text,
	                    .stream = stream,
	                    .limits = limits,
	                    .error = error};
	yaml_parser_t parser;
	yaml_event_t event;
	int documents = 0, r = 0;
	bool done = false;

	r = dtl_doc_check_text(source, error);
	if (r < 0)
		return r;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	dtl_strmap_init(&b.anchor_names, nodes);
	dtl_arena_init(&b.element);
	yaml_parser_set_input_string(&parser, (const unsigned char *)source->data, source->size);
	while (!done) {
		if (!yaml_parser_parse(&parser, &event)) {
			r = parser_error(&b, &parser);
			break;
		}
		const char *anchor = NULL;
		b.mark = (size_t)event.end_mark.index;
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
	dtl_arena_fini(&b.element);
	free(b.frames);
	free(b.children);
	if (r < 0)
		return r;
	if (!b.have_root || b.root.type == DTL_NODE_NULL) {
		struct dtl_loc loc = {.file = source->path, .line = 1, .column = 1};
		return dtl_error_set(error, loc, -EINVAL, "YAML: the file is empty");
	}
	struct dtl_node *root = dtl_arena_alloc(nodes, sizeof(*root));
	if (!root)
		return -ENOMEM;
	*root = b.root;
	*ret_root = root;
	return 0;
}
