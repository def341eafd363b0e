/* SPDX-License-Identifier: MIT */
/*
 * --fix-plan --write: puts one fix into the user's manifest (YAML or JSON) as a text edit, so
 * comments, order and layout stay as they were. The edit replaces the value of the key when it
 * exists (a scalar, or a list written back in flow style) or inserts the key into the nearest
 * existing mapping. The result must parse as a manifest, or nothing is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtypelint/atomic-file.h"
#include "dtypelint/fix.h"
#include "dtypelint/manifest.h"

struct edit {
	const char *path[5];
	size_t depth;
	const char *scalar;      /* new value text, or NULL for a list */
	const char *const *list; /* new list items (written quoted) */
	size_t list_count;
};

static size_t offset_of(const struct dtl_source *src, uint32_t line, uint32_t column)
{
	size_t i = 0;
	uint32_t l = 1, c = 1;
	while (i < src->size && (l < line || (l == line && c < column))) {
		unsigned char ch = (unsigned char)src->data[i];
		if (ch == '\n') {
			l++;
			c = 1;
		} else if ((ch & 0xC0) != 0x80) {
			c++;
		}
		i++;
		if (l == line && c == column) {
			/* skip continuation bytes of the character just passed */
			while (i < src->size && ((unsigned char)src->data[i] & 0xC0) == 0x80)
				i++;
		}
	}
	return i;
}

static const struct dtl_node *child(const struct dtl_node *map, const char *key)
{
	return map && map->type == DTL_NODE_MAP ? dtl_node_get(map, key) : NULL;
}

/* End of a flow collection starting at data[start] ('[' or '{'), quote-aware. */
static size_t flow_end(const char *s, size_t n, size_t start)
{
	int depth = 0;
	char quote = 0;
	for (size_t i = start; i < n; i++) {
		char ch = s[i];
		if (quote) {
			if (ch == '\\' && quote == '"')
				i++;
			else if (ch == quote)
				quote = 0;
			continue;
		}
		if (ch == '"' || ch == '\'')
			quote = ch;
		else if (ch == '[' || ch == '{')
			depth++;
		else if (ch == ']' || ch == '}') {
			if (--depth == 0)
				return i + 1;
		}
	}
	return n;
}

static size_t scalar_end(const struct dtl_source *src, size_t start, const struct dtl_node *v)
{
	const char *s = src->data;
	if (s[start] == '"' || s[start] == '\'') {
		char q = s[start];
		for (size_t i = start + 1; i < src->size; i++) {
			if (q == '"' && s[i] == '\\')
				i++;
			else if (s[i] == q)
				return i + 1;
		}
		return src->size;
	}
	return start + v->raw_len;
}

static char *value_text(struct dtl_arena *a, const struct edit *e, bool json)
{
	if (e->scalar)
		return dtl_arena_strndup(a, e->scalar, strlen(e->scalar));
	size_t cap = 3;
	for (size_t i = 0; i < e->list_count; i++)
		cap += strlen(e->list[i]) + 4;
	char *out = dtl_arena_alloc(a, cap);
	if (!out)
		return NULL;
	strcpy(out, "[");
	for (size_t i = 0; i < e->list_count; i++) {
		strcat(out, i ? ", \"" : "\"");
		strcat(out, e->list[i]);
		strcat(out, "\"");
	}
	strcat(out, "]");
	(void)json;
	return out;
}

/* key: {key2: value} for the keys missing below the deepest existing mapping */
static char *nested(struct dtl_arena *a, const struct edit *e, size_t from, const char *value,
                    bool json)
{
	char *text = (char *)value;
	for (size_t k = e->depth; k-- > from;) {
		text = json
		           ? dtl_arena_sprintf(a, k + 1 == e->depth ? "\"%s\": %s" : "\"%s\": {%s}",
		                               e->path[k], text)
		           : dtl_arena_sprintf(a, k + 1 == e->depth ? "%s: %s" : "%s: {%s}",
		                               e->path[k], text);
		if (!text)
			return NULL;
	}
	return text;
}

static int plan_edit(const struct dtl_fix *fix, const struct dtl_node *root, struct dtl_arena *a,
                     struct edit *e, struct dtl_error *error, const char *file)
{
	struct dtl_loc loc = {.file = file};
	memset(e, 0, sizeof(*e));
#define PATH(...)                                                                                  \
	do {                                                                                       \
		const char *p[] = {__VA_ARGS__};                                                   \
		e->depth = sizeof(p) / sizeof(p[0]);                                               \
		memcpy(e->path, p, sizeof(p));                                                     \
	} while (0)
	switch (fix->kind) {
	case DTL_FIX_VERSION:
		PATH("training", "versions", dtl_framework_name(fix->framework));
		e->scalar = dtl_arena_sprintf(a, "\"%s\"", fix->text);
		break;
	case DTL_FIX_ALLGATHER_SEQUENTIAL:
		PATH("training", "zero3", "allgather_sequential");
		e->scalar = "true";
		break;
	case DTL_FIX_PERSISTENCE_ZERO:
		PATH("training", "zero3", "persistence_threshold");
		e->scalar = "0";
		break;
	case DTL_FIX_AUTOCAST_OFF:
		if (!child(root, "adapter"))
			return dtl_error_set(
			    error, loc, -ENOTSUP,
			    "this manifest lists the adapters itself: pass "
			    "autocast_adapter_dtype=False to get_peft_model and export "
			    "the model again");
		PATH("adapter", "autocast_adapter_dtype");
		e->scalar = "false";
		break;
	case DTL_FIX_QUANT_STORAGE:
		PATH("quantization", "quant_storage");
		e->scalar = dtl_dtype_name(fix->dtype);
		break;
	case DTL_FIX_USE_ORIG_PARAMS:
		PATH("training", "fsdp", "use_orig_params");
		e->scalar = "true";
		break;
	case DTL_FIX_FSDP_BUFFER_DTYPE:
		PATH("training", "fsdp", "buffer_dtype");
		e->scalar = fix->dtype ? dtl_dtype_name(fix->dtype) : "null";
		break;
	case DTL_FIX_ZERO3_BUFFER_DTYPE:
		PATH("training", "zero3", "data_types", "buffer_dtype");
		e->scalar = dtl_dtype_name(fix->dtype);
		break;
	case DTL_FIX_WRAP_ADD:
	case DTL_FIX_WRAP_REMOVE:
	case DTL_FIX_IGNORE_ADD:
	case DTL_FIX_KEEP_STRICT_ADD: {
		const struct dtl_node *old;
		if (fix->kind == DTL_FIX_KEEP_STRICT_ADD) {
			PATH("model", "keep_in_fp32_strict");
			old = child(child(root, "model"), "keep_in_fp32_strict");
		} else if (fix->kind == DTL_FIX_IGNORE_ADD) {
			PATH("training", "fsdp", "ignored");
			old = child(child(child(root, "training"), "fsdp"), "ignored");
		} else {
			PATH("training", "fsdp", "wrap");
			old = child(child(child(root, "training"), "fsdp"), "wrap");
			/* no wrap key: the model's no_split_modules are the list to extend */
			if (!old)
				old = child(child(root, "model"), "no_split_modules");
		}
		size_t n = old && old->type == DTL_NODE_SEQ ? old->seq.count : 0;
		const char **items = dtl_arena_calloc(a, n + 1, sizeof(*items));
		size_t k = 0;
		if (!items)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			const struct dtl_node *it = &old->seq.items[i];
			if (it->type != DTL_NODE_STRING)
				return dtl_error_set(error, loc, -EINVAL,
				                     "cannot edit a list of non-strings");
			if (fix->kind == DTL_FIX_WRAP_REMOVE &&
			    strcmp(it->string.text, fix->text) == 0)
				continue;
			items[k++] = it->string.text;
		}
		if (fix->kind != DTL_FIX_WRAP_REMOVE)
			items[k++] = fix->text;
		e->list = items;
		e->list_count = k;
		break;
	}
	}
#undef PATH
	return 0;
}

/* Writes the changed lines of old -> new as one unified diff hunk. */
static void diff(FILE *out, const char *path, const char *a, size_t an, const char *b, size_t bn)
{
	size_t pre = 0, suf = 0, line = 1;
	while (pre < an && pre < bn && a[pre] == b[pre])
		pre++;
	while (pre && a[pre - 1] != '\n')
		pre--;
	while (suf < an - pre && suf < bn - pre && a[an - 1 - suf] == b[bn - 1 - suf])
		suf++;
	while (suf && a[an - suf] != '\n' && an - suf < an)
		suf--;
	for (size_t i = 0; i < pre; i++)
		line += a[i] == '\n';
	fprintf(out, "--- %s\n+++ %s\n@@ -%zu +%zu @@\n", path, path, line, line);
	for (int side = 0; side < 2; side++) {
		const char *s = side ? b : a;
		size_t end = (side ? bn : an) - suf, i = pre;
		while (i < end) {
			size_t j = i;
			while (j < end && s[j] != '\n')
				j++;
			fprintf(out, "%c%.*s\n", side ? '+' : '-', (int)(j - i), s + i);
			i = j + 1;
		}
	}
}

int dtl_fix_write(const char *path, const struct dtl_fix *fix, FILE *diff_out,
                  struct dtl_arena *arena, struct dtl_error *error)
{
	struct dtl_limits limits;
	struct dtl_source src, out_src;
	struct dtl_node *root, *check;
	struct dtl_manifest m;
	struct edit e;
	int r;

	dtl_limits_default(&limits);
	if ((r = dtl_source_read(&src, path, &limits, error)) < 0)
		return r;
	if ((r = dtl_doc_parse(&src, arena, &limits, &root, error)) < 0 ||
	    (r = plan_edit(fix, root, arena, &e, error, path)) < 0) {
		dtl_source_fini(&src);
		return r;
	}
	bool json = src.size && (src.data[0] == '{' || strstr(path, ".json"));
	const char *value = value_text(arena, &e, json);
	/* the deepest existing mapping along the path */
	const struct dtl_node *deepest = root, *node = NULL;
	size_t found = 0;
	while (found < e.depth && (node = child(deepest, e.path[found]))) {
		found++;
		if (found < e.depth) {
			if (node->type != DTL_NODE_MAP)
				break;
			deepest = node;
		}
	}
	if (found < e.depth && found && node && node->type != DTL_NODE_MAP) {
		dtl_source_fini(&src);
		struct dtl_loc loc = {.file = path};
		return dtl_error_set(error, loc, -EINVAL, "'%s' is not a mapping",
		                     e.path[found - 1]);
	}
	size_t at, end;
	const char *insert;
	if (found == e.depth) {
		/* replace the value */
		at = offset_of(&src, node->line, node->column);
		if (node->type == DTL_NODE_SEQ || node->type == DTL_NODE_MAP) {
			if (src.data[at] == '[' || src.data[at] == '{') {
				end = flow_end(src.data, src.size, at);
			} else {
				/* a block list: rewrite it in flow style after its key */
				const struct dtl_node *last = &node->seq.items[node->seq.count - 1];
				size_t last_at = offset_of(&src, last->line, last->column);
				end = last_at;
				while (end < src.size && src.data[end] != '\n')
					end++;
				while (at > 0 && src.data[at - 1] != '\n')
					at--; /* from the start of the first item's line */
				if (at > 0)
					at--; /* and the newline before it: "key:" gets the value */
				value = dtl_arena_sprintf(arena, " %s", value);
			}
		} else {
			end = scalar_end(&src, at, node);
		}
		insert = value;
	} else {
		insert = nested(arena, &e, found, value, json);
		if (!insert) {
			dtl_source_fini(&src);
			return -ENOMEM;
		}
		const struct dtl_node *target = deepest;
		at = offset_of(&src, target->line, target->column);
		if (src.data[at] == '{') {
			/* a flow mapping: a last entry before its '}' */
			bool empty = target->map.count == 0;
			end = flow_end(src.data, src.size, at) - 1;
			while (end > at + 1 &&
			       (src.data[end - 1] == ' ' || src.data[end - 1] == '\n'))
				end--;
			at = end;
			insert = dtl_arena_sprintf(arena, "%s%s", empty ? "" : ", ", insert);
		} else if (target->map.count) {
			/* a block mapping: a line before its first key, at its indentation */
			const struct dtl_node *k0 = &target->map.pairs[0].key;
			at = offset_of(&src, k0->line, 1);
			end = at;
			insert =
			    dtl_arena_sprintf(arena, "%*s%s\n", (int)k0->column - 1, "", insert);
		} else {
			dtl_source_fini(&src);
			struct dtl_loc loc = {.file = path};
			return dtl_error_set(error, loc, -ENOTSUP,
			                     "cannot place the key: empty mapping");
		}
	}
	size_t new_size = src.size - (end - at) + strlen(insert);
	char *text = dtl_arena_alloc(arena, new_size + 1);
	if (!text || !insert) {
		dtl_source_fini(&src);
		return -ENOMEM;
	}
	memcpy(text, src.data, at);
	memcpy(text + at, insert, strlen(insert));
	memcpy(text + at + strlen(insert), src.data + end, src.size - end);
	text[new_size] = '\0';
	/* never write a file that would no longer parse as a manifest */
	r = dtl_source_init_mem(&out_src, path, text, new_size);
	if (r >= 0) {
		struct dtl_error parse_error;
		r = dtl_doc_parse(&out_src, arena, &limits, &check, &parse_error);
		if (r >= 0)
			r = dtl_manifest_parse(check, path, arena, &limits, &m, &parse_error);
		if (r < 0) {
			struct dtl_loc loc = {.file = path};
			dtl_error_set(
			    error, loc, -EINVAL,
			    "refusing to write: the edited file would not parse (%u:%u: %s)",
			    parse_error.loc.line, parse_error.loc.column, parse_error.message);
		}
		dtl_source_fini(&out_src);
	}
	if (r >= 0) {
		/* a temporary file beside it, renamed over it (the link's target for a symlink;
		 * a hard-linked file is refused): include/dtypelint/atomic-file.h */
		struct dtl_atomic_file file;
		r = dtl_atomic_open(&file, path, error);
		if (r >= 0 && fwrite(text, 1, new_size, file.out) != new_size) {
			dtl_atomic_abort(&file);
			struct dtl_loc loc = {.file = path};
			r = dtl_error_set(error, loc, -EIO, "cannot write the edited file");
		} else if (r >= 0 && (r = dtl_atomic_commit(&file, error)) >= 0) {
			diff(diff_out, path, src.data, src.size, text, new_size);
		}
	}
	dtl_source_fini(&src);
	return r;
}
