/* SPDX-License-Identifier: MIT */
/*
 * --fix-plan --diff / --write: puts one fix into the file that holds the setting -- the
 * manifest, the --plan file, the DeepSpeed JSON, the accelerate YAML, the trainer arguments --
 * spelled as that file spells it, as a text edit, so comments, quoting, order and indentation
 * stay as they were. The file is the one the setting's value came from (its location), else
 * the file of highest precedence that holds its section; only the input's own files are ever
 * edited. The edit replaces the value when the key exists (one list item added or removed),
 * or inserts the key into the nearest existing mapping. The result must parse and hold the
 * value, or nothing is written. A setting no file of the input can hold is a code change,
 * reported as such.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtypelint/core/atomic-file.h"
#include "dtypelint/fix/fix.h"
#include "dtypelint/model/manifest.h"
#include "dtypelint/core/quoted.h"

enum value_kind {
	V_BARE,   /* true, 0, null: written as is */
	V_STRING, /* a dtype, version or name: quoted as the file needs */
	V_LIST,   /* a list of strings, edited by one item */
};

struct edit {
	const char *path[6];
	size_t depth;
	enum value_kind kind;
	const char *scalar;      /* V_BARE, V_STRING */
	const char *const *list; /* V_LIST: the whole new list, for a key that is not there */
	size_t list_count;
	const char *added, *removed; /* V_LIST: the one item the fix adds or removes */
	bool comma;                  /* V_LIST kept as one "A,B" string (accelerate's class list) */
};

/* The kinds of file a setting can live in, each with its own spelling of the keys. */
enum dialect {
	D_MANIFEST,     /* the manifest: training.*, quantization.*, adapter.*, model.* */
	D_PLAN,         /* a --plan file: the training mapping at the top */
	D_DEEPSPEED,    /* a DeepSpeed JSON */
	D_ACCELERATE,   /* an accelerate config YAML */
	D_PEFT,         /* adapter_config.json */
	D_TRAINER_ARGS, /* trainer arguments (TRL, LLaMA-Factory, axolotl) */
	D_HF_CONFIG,    /* config.json of a model folder */
};

static const char *const dialect_names[] = {
    [D_MANIFEST] = "manifest",
    [D_PLAN] = "plan file",
    [D_DEEPSPEED] = "DeepSpeed config",
    [D_ACCELERATE] = "accelerate config",
    [D_PEFT] = "PEFT adapter_config.json",
    [D_TRAINER_ARGS] = "trainer-arguments file",
    [D_HF_CONFIG] = "model config.json",
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

/* A string item or value that YAML reads back as the same string without quotes. */
static bool plain_safe(const char *text)
{
	if (!text[0] || !(text[0] == '_' || (text[0] >= 'A' && text[0] <= 'Z') ||
	                  (text[0] >= 'a' && text[0] <= 'z')))
		return false;
	if (!strcmp(text, "true") || !strcmp(text, "false") || !strcmp(text, "null") ||
	    !strcmp(text, "yes") || !strcmp(text, "no") || !strcmp(text, "on") ||
	    !strcmp(text, "off") || !strcmp(text, "y") || !strcmp(text, "n"))
		return false;
	for (const char *p = text; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'))
			return false;
	return true;
}

/* text between double quotes, valid JSON and YAML whatever bytes it holds
 * (dtypelint/core/quoted.h): a module name from the model cannot end the string early and write
 * keys of its own */
static char *quoted_text(struct dtl_arena *a, const char *text)
{
	char *buf = NULL, *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	if (!mem)
		return NULL;
	dtl_put_quoted(mem, text, strlen(text));
	if (fclose(mem) == 0)
		out = dtl_arena_strndup(a, buf, len);
	free(buf);
	return out;
}

/* Printable ASCII without a single quote: YAML reads it back between single quotes. */
static bool single_quote_safe(const char *text)
{
	for (const char *p = text; *p; p++)
		if (*p < 0x20 || *p > 0x7e || *p == '\'')
			return false;
	return true;
}

/* A string as the file spells it: quote is the quote the old value used (0: none). Single
 * quotes only for text that needs no escape in them; anything else goes between double quotes,
 * escaped. */
static char *string_text(struct dtl_arena *a, const char *text, bool json, char quote)
{
	if (quote == '\'' && !json && single_quote_safe(text))
		return dtl_arena_sprintf(a, "'%s'", text);
	if (!json && !quote && plain_safe(text))
		return dtl_arena_strndup(a, text, strlen(text));
	return quoted_text(a, text);
}

static char *scalar_text(struct dtl_arena *a, const struct edit *e, bool json, char quote)
{
	if (e->kind == V_STRING)
		return string_text(a, e->scalar, json, quote);
	return dtl_arena_strndup(a, e->scalar, strlen(e->scalar));
}

/* Joins n pieces with sep between them and open/close around them, in one allocation: a list
 * of any length costs its length. */
static char *join(struct dtl_arena *a, const char *open, const char *const *items, size_t n,
                  const char *sep, const char *close)
{
	size_t len = strlen(open) + strlen(close) + 1;
	for (size_t i = 0; i < n; i++) {
		if (!items[i])
			return NULL;
		len += strlen(items[i]) + (i ? strlen(sep) : 0);
	}
	char *out = dtl_arena_alloc(a, len), *p = out;
	if (!out)
		return NULL;
	p = stpcpy(p, open);
	for (size_t i = 0; i < n; i++)
		p = stpcpy(i ? stpcpy(p, sep) : p, items[i]);
	stpcpy(p, close);
	return out;
}

static char *list_text(struct dtl_arena *a, const struct edit *e, bool json)
{
	const char **items = dtl_arena_calloc(a, e->list_count + 1, sizeof(*items));
	if (!items)
		return NULL;
	for (size_t i = 0; i < e->list_count; i++)
		items[i] = string_text(a, e->list[i], json, 0);
	return join(a, "[", items, e->list_count, ", ", "]");
}

/* key: {key2: value} for the keys missing below the deepest existing mapping */
static char *nested(struct dtl_arena *a, const struct edit *e, size_t from, const char *value,
                    bool json)
{
	const char *text = value;
	for (size_t k = e->depth; text && k-- > from;)
		text = json
		           ? dtl_arena_sprintf(a, k + 1 == e->depth ? "\"%s\": %s" : "\"%s\": {%s}",
		                               e->path[k], text)
		           : dtl_arena_sprintf(a, k + 1 == e->depth ? "%s: %s" : "%s: {%s}",
		                               e->path[k], text);
	return (char *)text;
}

static void set_path(struct edit *e, const char *dotted, struct dtl_arena *a)
{
	char *copy = dtl_arena_strndup(a, dotted, strlen(dotted));
	e->depth = 0;
	for (char *p = copy; p && e->depth < 6;) {
		char *dot = strchr(p, '.');
		if (dot)
			*dot = '\0';
		e->path[e->depth++] = p;
		p = dot ? dot + 1 : NULL;
	}
}

static int list_edit(struct edit *e, struct dtl_arena *a, const struct dtl_patterns *base,
                     const char *added, const char *removed)
{
	const char **items = dtl_arena_calloc(a, base->count + 2, sizeof(*items));
	size_t k = 0;
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < base->count; i++) {
		const char *t = dtl_arena_strndup(a, base->items[i].text, base->items[i].len);
		if (!t)
			return -ENOMEM;
		if (!removed || strcmp(t, removed) != 0)
			items[k++] = t;
	}
	if (added)
		items[k++] = added;
	e->kind = V_LIST;
	e->list = items;
	e->list_count = k;
	e->added = added;
	e->removed = removed;
	return 0;
}

/* The next item of a comma-separated list ("A, B") at *p, trimmed of spaces, its length in
 * *ret_len; *p moves past it and its comma. */
static const char *comma_next(const char **p, size_t *ret_len)
{
	size_t len = strcspn(*p, ",");
	const char *q = *p;
	size_t l = len;
	while (l && *q == ' ')
		q++, l--;
	while (l && q[l - 1] == ' ')
		l--;
	*p += len + ((*p)[len] == ',');
	*ret_len = l;
	return q;
}

/* The items of a comma-separated list, trimmed: does it hold item? */
static bool comma_has(const char *text, const char *item)
{
	size_t n = strlen(item), l;
	for (const char *p = text; *p;) {
		const char *q = comma_next(&p, &l);
		if (l == n && !memcmp(q, item, n))
			return true;
	}
	return false;
}

/* The list with e's item added or removed, separated as the old one was. */
static char *comma_edit(struct dtl_arena *a, const char *text, const struct edit *e)
{
	size_t n = 2;
	for (const char *p = text; *p; p++)
		n += *p == ',';
	const char **items = dtl_arena_calloc(a, n, sizeof(*items));
	size_t k = 0;
	if (!items)
		return NULL;
	for (const char *p = text; *p;) {
		size_t l;
		const char *q = comma_next(&p, &l);
		if (l && !(e->removed && strlen(e->removed) == l && !memcmp(q, e->removed, l)))
			items[k++] = dtl_arena_strndup(a, q, l);
	}
	if (e->added)
		items[k++] = e->added;
	return join(a, "", items, k, strstr(text, ", ") ? ", " : ",", "");
}

/* The whole new list as one quoted "A,B" string, for a key that is not there yet. */
static char *comma_text(struct dtl_arena *a, const struct edit *e)
{
	return join(a, "\"", (const char *const *)e->list, e->list_count, ",", "\"");
}

/* A class name, as accelerate's wrap list takes: no module path, no glob. */
static bool class_name(const char *text)
{
	if (!text[0])
		return false;
	for (const char *p = text; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* The fix as a key of the manifest (dotted) and its value; the setting's current location. */
static int manifest_edit(const struct dtl_fix *fix, const struct dtl_manifest *m,
                         const struct dtl_plan *plan, struct dtl_arena *a, struct edit *e,
                         const char **ret_key, struct dtl_loc *ret_loc)
{
	const char *key = NULL;
	struct dtl_loc loc = {0};
	int r = 0;

	memset(e, 0, sizeof(*e));
	e->kind = V_BARE;
	switch (fix->proposed.kind) {
	case DTL_FIX_VERSION:
		key = dtl_arena_sprintf(a, "training.versions.%s",
		                        dtl_framework_name(fix->proposed.framework));
		e->kind = V_STRING;
		e->scalar = fix->proposed.text;
		loc = plan->version_locs[fix->proposed.framework];
		break;
	case DTL_FIX_ALLGATHER_SEQUENTIAL:
		key = "training.zero3.allgather_sequential";
		e->scalar = "true";
		/* unset: the file that holds the ZeRO-3 section (a DeepSpeed JSON, perhaps one an
		 * accelerate config names) */
		loc = plan->zero3.allgather_sequential_loc.line
		          ? plan->zero3.allgather_sequential_loc
		          : plan->zero3.loc;
		break;
	case DTL_FIX_PERSISTENCE_ZERO:
		key = "training.zero3.persistence_threshold";
		e->scalar = "0";
		loc = plan->zero3.persistence_threshold_loc.line
		          ? plan->zero3.persistence_threshold_loc
		          : plan->zero3.loc;
		break;
	case DTL_FIX_AUTOCAST_OFF:
		key = "adapter.autocast_adapter_dtype";
		e->scalar = "false";
		loc = m->adapter.autocast_adapter_dtype_loc.line
		          ? m->adapter.autocast_adapter_dtype_loc
		          : m->adapter.loc;
		break;
	case DTL_FIX_QUANT_STORAGE:
		key = "quantization.quant_storage";
		e->kind = V_STRING;
		e->scalar = dtl_dtype_name(fix->proposed.dtype);
		loc = m->quantization.quant_storage_loc.line ? m->quantization.quant_storage_loc
		                                             : m->quantization.loc;
		break;
	case DTL_FIX_USE_ORIG_PARAMS:
		key = "training.fsdp.use_orig_params";
		e->scalar = "true";
		loc = plan->fsdp.use_orig_params_loc.line ? plan->fsdp.use_orig_params_loc
		                                          : plan->fsdp.loc;
		break;
	case DTL_FIX_FSDP_BUFFER_DTYPE:
		key = "training.fsdp.buffer_dtype";
		e->kind = fix->proposed.dtype ? V_STRING : V_BARE;
		e->scalar = fix->proposed.dtype ? dtl_dtype_name(fix->proposed.dtype) : "null";
		loc =
		    plan->fsdp.buffer_dtype_loc.line ? plan->fsdp.buffer_dtype_loc : plan->fsdp.loc;
		break;
	case DTL_FIX_ZERO3_BUFFER_DTYPE:
		key = "training.zero3.data_types.buffer_dtype";
		e->kind = V_STRING;
		e->scalar = dtl_dtype_name(fix->proposed.dtype);
		loc = plan->zero3.buffer_dtype_loc.line ? plan->zero3.buffer_dtype_loc
		                                        : plan->zero3.loc;
		break;
	case DTL_FIX_WRAP_ADD:
	case DTL_FIX_WRAP_REMOVE: {
		/* no wrap key: the model's no_split_modules are the list to extend */
		const struct dtl_patterns *base =
		    plan->fsdp.wrap.present ? &plan->fsdp.wrap : &m->model.no_split_modules;
		key = "training.fsdp.wrap";
		r = list_edit(
		    e, a, base, fix->proposed.kind == DTL_FIX_WRAP_ADD ? fix->proposed.text : NULL,
		    fix->proposed.kind == DTL_FIX_WRAP_REMOVE ? fix->proposed.text : NULL);
		loc = plan->fsdp.wrap.present ? plan->fsdp.wrap.loc : plan->fsdp.loc;
		break;
	}
	case DTL_FIX_IGNORE_ADD:
		key = "training.fsdp.ignored";
		r = list_edit(e, a, &plan->fsdp.ignored, fix->proposed.text, NULL);
		loc = plan->fsdp.ignored.present ? plan->fsdp.ignored.loc : plan->fsdp.loc;
		break;
	case DTL_FIX_WORLD_SIZE:
		key = "training.world_size";
		e->scalar = fix->proposed.text;
		loc = plan->world_size_loc.line ? plan->world_size_loc : plan->loc;
		break;
	case DTL_FIX_OFFLOAD_OPTIMIZER:
		key = "training.zero3.offload_optimizer";
		e->kind = V_STRING;
		e->scalar = "cpu";
		loc = plan->zero3.offload_optimizer_loc.line ? plan->zero3.offload_optimizer_loc
		                                             : plan->zero3.loc;
		break;
	case DTL_FIX_FSDP_CPU_OFFLOAD:
		key = "training.fsdp.cpu_offload";
		e->scalar = "true";
		loc = plan->fsdp.cpu_offload_loc.line ? plan->fsdp.cpu_offload_loc : plan->fsdp.loc;
		break;
	case DTL_FIX_OPTIMIZER_8BIT:
		key = "training.optimizer";
		e->kind = V_STRING;
		e->scalar = "adamw_8bit";
		loc = plan->optimizer_loc.line ? plan->optimizer_loc : plan->loc;
		break;
	case DTL_FIX_GATHER_CONTEXT:
		return -ENOTSUP;
	case DTL_FIX_KEEP_STRICT_ADD:
		key = "model.keep_in_fp32_strict";
		r = list_edit(e, a, &m->model.keep_in_fp32_strict, fix->proposed.text, NULL);
		loc = m->model.keep_in_fp32_strict.loc;
		break;
	}
	if (r < 0 || !key)
		return r < 0 ? r : -ENOMEM;
	*ret_key = key;
	*ret_loc = loc;
	return 0;
}

/* The manifest's key as another kind of file spells it (NULL: that file has no such key). */
static const char *dialect_key(enum dialect d, const char *key)
{
	static const struct {
		enum dialect d;
		const char *from, *to;
	} map[] = {
	    /* the DeepSpeed config's names (https://www.deepspeed.ai/docs/config-json/) */
	    {D_DEEPSPEED, "training.zero3.allgather_sequential",
	     "zero_optimization.stage3_allgather_sequential"},
	    {D_DEEPSPEED, "training.zero3.persistence_threshold",
	     "zero_optimization.stage3_param_persistence_threshold"},
	    {D_DEEPSPEED, "training.zero3.data_types.buffer_dtype", "data_types.buffer_dtype"},
	    {D_DEEPSPEED, "training.zero3.offload_optimizer",
	     "zero_optimization.offload_optimizer.device"},
	    /* accelerate's launcher and fsdp_config keys */
	    {D_ACCELERATE, "training.world_size", "num_processes"},
	    {D_ACCELERATE, "training.fsdp.cpu_offload", "fsdp_config.fsdp_offload_params"},
	    /* accelerate's fsdp_config keys (src/model/import-accelerate.c) */
	    {D_ACCELERATE, "training.fsdp.use_orig_params", "fsdp_config.fsdp_use_orig_params"},
	    {D_ACCELERATE, "training.fsdp.wrap", "fsdp_config.fsdp_transformer_layer_cls_to_wrap"},
	    /* TrlParser / LLaMA-Factory: BitsAndBytesConfig(bnb_4bit_quant_storage=...) */
	    {D_TRAINER_ARGS, "quantization.quant_storage", "bnb_4bit_quant_storage"},
	};
	if (d == D_MANIFEST)
		return key;
	if (d == D_PLAN)
		return strncmp(key, "training.", 9) == 0 ? key + 9 : NULL;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].d == d && strcmp(map[i].from, key) == 0)
			return map[i].to;
	return NULL;
}

static bool same_file(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Which of the input's own files loc.file is, and in which dialect; -1 when none. */
static int dialect_of(const struct dtl_fix_files *f, const char *file)
{
	if (same_file(file, f->plan_file))
		return D_PLAN;
	if (same_file(file, f->deepspeed_file))
		return D_DEEPSPEED;
	if (same_file(file, f->accelerate_file))
		return D_ACCELERATE;
	if (same_file(file, f->peft_file))
		return D_PEFT;
	if (same_file(file, f->trainer_args_file))
		return D_TRAINER_ARGS;
	if (!file || !f->input)
		return -1;
	if (!is_dir(f->input))
		return same_file(file, f->input) ? D_MANIFEST : -1;
	/* a model folder: its own config.json and adapter_config.json, not a file elsewhere */
	size_t n = strlen(f->input);
	while (n > 1 && f->input[n - 1] == '/')
		n--;
	if (strncmp(file, f->input, n) != 0 || file[n] != '/')
		return -1;
	if (strcmp(file + n + 1, "config.json") == 0)
		return D_HF_CONFIG;
	if (strcmp(file + n + 1, "adapter_config.json") == 0)
		return D_PEFT;
	return -1;
}

/* The file that holds the setting: where its value came from, else the file of highest
 * precedence (include/dtypelint/model/compose.h) that holds its section. */
static int target_of(const struct dtl_fix_files *f, const char *key, struct dtl_loc loc,
                     const char **ret_file, enum dialect *ret_dialect)
{
	const char *file = NULL;
	int d = -1;

	if (loc.file && loc.line) {
		file = loc.file;
		d = dialect_of(f, file);
	} else if (loc.file && loc.file[0] == '-') {
		file = loc.file; /* an option: --with, --strategy */
	} else {
		const char *order[4] = {0};
		if (strncmp(key, "training.zero3.", 15) == 0) {
			order[0] = f->deepspeed_file;
			order[1] = f->accelerate_file;
			order[2] = f->plan_file;
		} else if (strncmp(key, "training.fsdp.", 14) == 0) {
			order[0] = f->accelerate_file;
			order[1] = f->plan_file;
		} else if (strncmp(key, "training.", 9) == 0) {
			order[0] = f->plan_file;
		} else if (strncmp(key, "quantization.", 13) == 0) {
			order[0] = f->trainer_args_file;
		} else if (strncmp(key, "adapter.", 8) == 0) {
			order[0] = f->peft_file;
		}
		for (size_t i = 0; i < 4 && !file; i++)
			file = order[i];
		if (!file && f->input && !is_dir(f->input))
			file = f->input;
		d = file ? dialect_of(f, file) : -1;
	}
	*ret_file = file;
	*ret_dialect = (enum dialect)d;
	return d;
}

/* Where a line starts, and the whitespace it starts with. */
static size_t line_start(const char *s, size_t at)
{
	while (at > 0 && s[at - 1] != '\n')
		at--;
	return at;
}

static size_t indent_len(const char *s, size_t n, size_t start)
{
	size_t i = start;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i - start;
}

static size_t node_end(const struct dtl_source *src, size_t at, const struct dtl_node *n)
{
	if (src->data[at] == '[' || src->data[at] == '{')
		return flow_end(src->data, src->size, at);
	return scalar_end(src, at, n);
}

struct span {
	size_t at, end;
	const char *text;
};

/* The file's line ending: CRLF when its first line ends so. */
static const char *newline_of(const struct dtl_source *src)
{
	const char *nl = memchr(src->data, '\n', src->size);
	return nl && nl > src->data && nl[-1] == '\r' ? "\r\n" : "\n";
}

/* A node written where the tree says, not an alias of one written elsewhere nor an anchored
 * one other keys may share (nor a tagged one): editing it edits exactly this setting. */
static bool own_text(const struct dtl_source *src, size_t after, const struct dtl_node *n)
{
	size_t at = offset_of(src, n->line, n->column);
	/* an empty value at the end of the file sits at its end */
	return at > after && (at >= src->size || (src->data[at] != '&' && src->data[at] != '*' &&
	                                          src->data[at] != '!'));
}

static const struct dtl_node *key_node(const struct dtl_node *map, const char *key)
{
	for (size_t i = 0; i < map->map.count; i++) {
		const struct dtl_node *k = &map->map.pairs[i].key;
		if (k->type == DTL_NODE_STRING && strcmp(k->string.text, key) == 0)
			return k;
	}
	return NULL;
}

/* An item added to or removed from an existing list, keeping the rest of it as written. */
static int edit_list(const struct dtl_source *src, const struct dtl_node *node,
                     const struct edit *e, bool json, struct dtl_arena *a, struct span *sp)
{
	size_t at = offset_of(src, node->line, node->column);
	const char *s = src->data, *nl = newline_of(src);
	bool flow = s[at] == '[';

	if (node->type != DTL_NODE_SEQ)
		return -EINVAL;
	/* items written in order after the list's start: an alias resolves to its anchor,
	 * written before (compared by line and column: linear in the items) */
	for (size_t i = 0; i < node->seq.count; i++) {
		const struct dtl_node *it = &node->seq.items[i];
		const struct dtl_node *prev = i ? &node->seq.items[i - 1] : node;
		if (it->type != DTL_NODE_STRING)
			return -EINVAL;
		if (it->line < prev->line ||
		    (it->line == prev->line && it->column <= prev->column && (i || flow)))
			return -EPERM;
	}
	if (e->added) {
		const char *item = string_text(a, e->added, json, 0);
		if (!item)
			return -ENOMEM;
		if (flow) {
			size_t end = flow_end(s, src->size, at) - 1;
			size_t i = end;
			while (i > at + 1 &&
			       (s[i - 1] == ' ' || s[i - 1] == '\n' || s[i - 1] == '\r'))
				i--;
			sp->at = sp->end = i;
			sp->text = dtl_arena_sprintf(a, "%s%s", node->seq.count ? ", " : "", item);
		} else {
			/* a block list: one more line like its last item's */
			const struct dtl_node *last = &node->seq.items[node->seq.count - 1];
			size_t last_at = offset_of(src, last->line, last->column);
			size_t ls = line_start(s, last_at), eol = last_at;
			while (eol < src->size && s[eol] != '\n')
				eol++;
			sp->at = sp->end = eol < src->size ? eol + 1 : eol;
			sp->text = dtl_arena_sprintf(a, "%s%.*s%s%s", eol < src->size ? "" : nl,
			                             (int)(last_at - ls), s + ls, item, nl);
		}
		return sp->text ? 0 : -ENOMEM;
	}
	for (size_t i = 0; i < node->seq.count; i++) {
		const struct dtl_node *it = &node->seq.items[i];
		if (strcmp(it->string.text, e->removed) != 0)
			continue;
		size_t it_at = offset_of(src, it->line, it->column);
		if (s[it_at] == '&' || s[it_at] == '*' || s[it_at] == '!')
			return -EPERM;
		size_t it_end = scalar_end(src, it_at, it);
		sp->text = "";
		if (!flow) {
			/* its whole line */
			sp->at = line_start(s, it_at);
			sp->end = it_end;
			while (sp->end < src->size && s[sp->end] != '\n')
				sp->end++;
			if (sp->end < src->size)
				sp->end++;
		} else if (i + 1 < node->seq.count) {
			const struct dtl_node *next = &node->seq.items[i + 1];
			sp->at = it_at;
			sp->end = offset_of(src, next->line, next->column);
		} else if (i > 0) {
			const struct dtl_node *prev = &node->seq.items[i - 1];
			size_t p_at = offset_of(src, prev->line, prev->column);
			sp->at = scalar_end(src, p_at, prev);
			sp->end = it_end;
		} else {
			sp->at = it_at;
			sp->end = it_end;
		}
		return 0;
	}
	return -ENOENT;
}

/* The text change that puts e into the file src (parsed as root). */
/*
 * Walk e's path down from root: ret_deepest is the last mapping reached, ret_node the
 * node at *ret_found keys (all of them when the setting is present).
 */
static int find_setting(const struct dtl_source *src, const struct dtl_node *root,
                        const struct edit *e, const struct dtl_node **ret_deepest,
                        const struct dtl_node **ret_node, size_t *ret_found,
                        struct dtl_error *error)
{
	struct dtl_loc loc = {.file = src->path, .line = 1, .column = 1};
	const struct dtl_node *deepest = root, *node = NULL;
	size_t found = 0;

	if (!root || root->type != DTL_NODE_MAP)
		return dtl_error_set(error, loc, -EINVAL, "the file is not a mapping");
	while (found < e->depth && (node = child(deepest, e->path[found]))) {
		const struct dtl_node *k = key_node(deepest, e->path[found]);
		if (!k || !own_text(src, offset_of(src, k->line, k->column), node))
			return dtl_error_set(
			    error, loc, -ENOTSUP,
			    "'%s' is written through a YAML anchor, alias or tag: edit "
			    "it by hand",
			    e->path[found]);
		found++;
		if (found < e->depth) {
			if (node->type != DTL_NODE_MAP)
				break;
			deepest = node;
		}
	}
	if (found < e->depth && found && node && node->type != DTL_NODE_MAP)
		return dtl_error_set(error, loc, -EINVAL, "'%s' is not a mapping",
		                     e->path[found - 1]);
	*ret_deepest = deepest;
	*ret_node = node;
	*ret_found = found;
	return 0;
}

/* A list setting that is a YAML/JSON list: edit_list, its failures explained. */
static int list_span(const struct dtl_source *src, const struct dtl_node *node,
                     const struct edit *e, bool json, struct dtl_arena *a, struct span *sp,
                     struct dtl_error *error)
{
	struct dtl_loc loc = {.file = src->path, .line = 1, .column = 1};
	int r = edit_list(src, node, e, json, a, sp);

	if (r == -EPERM)
		return dtl_error_set(error, loc, -ENOTSUP,
		                     "'%s' holds a YAML anchor, alias or tag: edit it "
		                     "by hand",
		                     e->path[e->depth - 1]);
	if (r == -EINVAL)
		return dtl_error_set(error, loc, r, "cannot edit a list of non-strings");
	return r == -ENOENT ? dtl_error_set(error, loc, r, "'%s' is not in the list", e->removed)
	                    : r;
}

/* "A,B": one string, its quotes kept; quoted when in a flow mapping. */
static int comma_span(const struct dtl_source *src, const struct dtl_node *deepest,
                      const struct dtl_node *node, const struct edit *e, struct dtl_arena *a,
                      struct span *sp)
{
	size_t at = offset_of(src, node->line, node->column);
	char quote = src->data[at] == '"' || src->data[at] == '\'' ? src->data[at] : 0;
	size_t key_at = offset_of(src, deepest->line, deepest->column);
	const char *list = comma_edit(a, node->string.text, e);

	if (!list)
		return -ENOMEM;
	if (!quote && src->data[key_at] == '{')
		quote = '"';
	sp->at = at;
	sp->end = node_end(src, at, node);
	sp->text = quote ? dtl_arena_sprintf(a, "%c%s%c", quote, list, quote) : list;
	return sp->text ? 0 : -ENOMEM;
}

/* "key:" with nothing after it: the value goes after the colon. */
static int after_colon_span(const struct dtl_source *src, const struct dtl_node *deepest,
                            const struct edit *e, bool json, struct dtl_arena *a, struct span *sp,
                            struct dtl_error *error)
{
	struct dtl_loc loc = {.file = src->path, .line = 1, .column = 1};
	const struct dtl_node *k = key_node(deepest, e->path[e->depth - 1]);
	size_t c = k ? offset_of(src, k->line, k->column) + k->string.len : src->size;

	while (c < src->size && src->data[c] != ':')
		c++;
	if (c >= src->size)
		return dtl_error_set(error, loc, -EINVAL, "cannot find the ':' of '%s'",
		                     e->path[e->depth - 1]);
	sp->at = sp->end = c + 1;
	const char *v = scalar_text(a, e, json, 0);
	sp->text = v ? dtl_arena_sprintf(a, " %s", v) : NULL;
	return sp->text ? 0 : -ENOMEM;
}

/* The setting is present as node (in the mapping deepest): replace or edit its value. */
static int replace_span(const struct dtl_source *src, const struct dtl_node *deepest,
                        const struct dtl_node *node, const struct edit *e, bool json,
                        struct dtl_arena *a, struct span *sp, struct dtl_error *error)
{
	struct dtl_loc loc = {.file = src->path, .line = 1, .column = 1};
	size_t at = offset_of(src, node->line, node->column);

	if (e->kind == V_LIST && node->type == DTL_NODE_SEQ)
		return list_span(src, node, e, json, a, sp, error);
	if (e->kind == V_LIST && e->comma && node->type == DTL_NODE_STRING)
		return comma_span(src, deepest, node, e, a, sp);
	if (e->kind == V_LIST || node->type == DTL_NODE_SEQ || node->type == DTL_NODE_MAP)
		return dtl_error_set(error, loc, -ENOTSUP,
		                     "'%s' holds another kind of value than the fix sets",
		                     e->path[e->depth - 1]);
	char quote = src->data[at] == '"' || src->data[at] == '\'' ? src->data[at] : 0;
	if (node->type == DTL_NODE_NULL && node->raw_len == 0)
		return after_colon_span(src, deepest, e, json, a, sp, error);
	sp->at = at;
	sp->end = node_end(src, at, node);
	sp->text = scalar_text(a, e, json, quote);
	return sp->text ? 0 : -ENOMEM;
}

/* The setting is absent below the mapping deepest (found keys deep): insert it. */
static int insert_span(const struct dtl_source *src, const struct dtl_node *deepest, size_t found,
                       const struct edit *e, bool json, struct dtl_arena *a, struct span *sp,
                       struct dtl_error *error)
{
	struct dtl_loc loc = {.file = src->path, .line = 1, .column = 1};
	const char *value = e->kind == V_LIST && e->comma ? comma_text(a, e)
	                    : e->kind == V_LIST           ? list_text(a, e, json)
	                                                  : scalar_text(a, e, json, 0);
	const char *insert = value ? nested(a, e, found, value, json) : NULL;
	if (!insert)
		return -ENOMEM;
	size_t at = offset_of(src, deepest->line, deepest->column);
	const char *s = src->data;
	if (s[at] == '{') {
		size_t close = flow_end(s, src->size, at) - 1;
		const struct dtl_node *k0 = deepest->map.count ? &deepest->map.pairs[0].key : NULL;
		if (k0 && k0->line != deepest->line) {
			/* an object over several lines (JSON as DeepSpeed's are written): a last
			 * member on its own line, at the indentation of the first */
			const struct dtl_pair *last = &deepest->map.pairs[deepest->map.count - 1];
			size_t k0_at = offset_of(src, k0->line, k0->column);
			size_t ls = line_start(s, k0_at);
			size_t v_at = offset_of(src, last->value.line, last->value.column);
			sp->at = sp->end = node_end(src, v_at, &last->value);
			sp->text =
			    dtl_arena_sprintf(a, ",%s%.*s%s", newline_of(src),
			                      (int)indent_len(s, src->size, ls), s + ls, insert);
		} else {
			size_t i = close;
			while (i > at + 1 && (s[i - 1] == ' ' || s[i - 1] == '\n'))
				i--;
			sp->at = sp->end = i;
			sp->text = dtl_arena_sprintf(a, "%s%s", k0 ? ", " : "", insert);
		}
	} else if (deepest->map.count) {
		/* a block mapping: a line before its first key, at its indentation */
		const struct dtl_node *k0 = &deepest->map.pairs[0].key;
		size_t k0_at = offset_of(src, k0->line, k0->column);
		size_t ls = line_start(s, k0_at);
		sp->at = sp->end = ls;
		sp->text = dtl_arena_sprintf(a, "%.*s%s%s", (int)(k0_at - ls), s + ls, insert,
		                             newline_of(src));
	} else {
		return dtl_error_set(error, loc, -ENOTSUP, "cannot place the key: empty mapping");
	}
	return sp->text ? 0 : -ENOMEM;
}

/* The text change that puts e into the file src (parsed as root). */
static int plan_span(const struct dtl_source *src, const struct dtl_node *root,
                     const struct edit *e, bool json, struct dtl_arena *a, struct span *sp,
                     struct dtl_error *error)
{
	const struct dtl_node *deepest = NULL, *node = NULL;
	size_t found = 0;
	int r;

	if ((r = find_setting(src, root, e, &deepest, &node, &found, error)) < 0)
		return r;
	if (found == e->depth)
		return replace_span(src, deepest, node, e, json, a, sp, error);
	return insert_span(src, deepest, found, e, json, a, sp, error);
}

/* The edited file must read back with the new value where the fix put it. */
static bool holds(const struct dtl_node *root, const struct edit *e)
{
	const struct dtl_node *n = root;
	for (size_t i = 0; i < e->depth && n; i++)
		n = child(n, e->path[i]);
	if (!n)
		return false;
	if (e->kind == V_LIST && e->comma && n->type == DTL_NODE_STRING)
		return (!e->removed || !comma_has(n->string.text, e->removed)) &&
		       (!e->added || comma_has(n->string.text, e->added));
	if (e->kind == V_LIST) {
		bool seen = false;
		if (n->type != DTL_NODE_SEQ)
			return false;
		for (size_t i = 0; i < n->seq.count; i++) {
			const struct dtl_node *it = &n->seq.items[i];
			if (it->type != DTL_NODE_STRING)
				continue;
			if (e->removed && !strcmp(it->string.text, e->removed))
				return false;
			if (e->added && !strcmp(it->string.text, e->added))
				seen = true;
		}
		return e->added ? seen : true;
	}
	if (e->kind == V_STRING)
		return n->type == DTL_NODE_STRING && !strcmp(n->string.text, e->scalar);
	if (!strcmp(e->scalar, "null"))
		return n->type == DTL_NODE_NULL;
	if (!strcmp(e->scalar, "true") || !strcmp(e->scalar, "false"))
		return n->type == DTL_NODE_BOOL && n->boolean == (e->scalar[0] == 't');
	return n->type == DTL_NODE_INT && n->integer == strtoll(e->scalar, NULL, 10);
}

/* Why no file named on the command line can take key (file: where it comes from, or NULL). */
static int no_target(const struct dtl_fix *fix, const char *key, const char *file,
                     struct dtl_error *error)
{
	struct dtl_loc loc = {.file = "--fix-plan"};

	if (file && file[0] == '-')
		return dtl_error_set(error, loc, -ENOTSUP,
		                     "'%s' is set by %s on the command line: change the "
		                     "option (%s)",
		                     key, file, fix->proposed.title);
	if (file)
		return dtl_error_set(error, loc, -ENOTSUP,
		                     "'%s' comes from %s, which is none of the files named "
		                     "on the command line: pass it with its option to have it "
		                     "edited, or change it by hand (%s)",
		                     key, file, fix->proposed.title);
	return dtl_error_set(error, loc, -ENOTSUP,
	                     "no file of this input can hold '%s': pass the training "
	                     "set-up with --plan, or make the change by hand (%s)",
	                     key, fix->proposed.title);
}

/* Spell the manifest's key and value e as file (of dialect d) writes them. */
static int spell_edit(const struct dtl_fix *fix, const struct dtl_manifest *m, enum dialect d,
                      const char *key, const char *file, struct dtl_arena *arena, struct edit *e,
                      const char **ret_spelled, struct dtl_error *error)
{
	struct dtl_loc loc = {.file = "--fix-plan"};
	const char *spelled;

	if (fix->proposed.kind == DTL_FIX_AUTOCAST_OFF && (d != D_MANIFEST || !m->adapter.present))
		return dtl_error_set(error, loc, -ENOTSUP,
		                     "a code change, not a file edit: pass "
		                     "autocast_adapter_dtype=False to get_peft_model%s",
		                     m->adapter.present ? "" : " and export the model again");
	if (!(spelled = dialect_key(d, key)))
		return dtl_error_set(error, loc, -ENOTSUP,
		                     "'%s' comes from %s (%s), which has no key for it: a code "
		                     "change (%s)",
		                     key, file, dialect_names[d], fix->proposed.title);
	set_path(e, spelled, arena);
	if (d == D_ACCELERATE && e->kind == V_LIST) {
		/* accelerate wraps by class name only (fsdp_transformer_layer_cls_to_wrap) */
		bool classes = true;
		for (size_t i = 0; i < e->list_count; i++)
			classes = classes && class_name(e->list[i]);
		if (!classes)
			return dtl_error_set(
			    error, loc, -ENOTSUP,
			    "'%s' comes from %s, and accelerate wraps by class name "
			    "only: a code change (%s)",
			    key, file, fix->proposed.title);
		e->comma = true;
	}
	if (d == D_DEEPSPEED && e->kind == V_STRING)
		/* DeepSpeed spells dtypes fp32/fp16/bf16 */
		e->scalar = !strcmp(e->scalar, "bfloat16")  ? "bf16"
		            : !strcmp(e->scalar, "float16") ? "fp16"
		            : !strcmp(e->scalar, "float32") ? "fp32"
		                                            : e->scalar;
	*ret_spelled = spelled;
	return 0;
}

/* Read file and apply e to it: ed's old and new text, in the arena. */
static int edited_text(const char *file, const struct edit *e, const struct dtl_limits *limits,
                       struct dtl_arena *arena, struct dtl_fix_edit *ed, struct dtl_error *error)
{
	struct dtl_loc loc = {.file = file};
	struct dtl_source src;
	struct dtl_node *root;
	struct span sp = {0};
	struct stat st;
	size_t insert_len, new_size;
	char *text, *old;
	bool json;
	int r;

	/* a regular file only: a device or a pipe would be read twice and written in place */
	if (stat(file, &st) != 0 || !S_ISREG(st.st_mode))
		return dtl_error_set(error, loc, -EPERM, "refusing to edit: not a regular file");
	if ((r = dtl_source_read(&src, file, limits, error)) < 0)
		return r;
	json = (src.size && src.data[0] == '{') || strstr(file, ".json");
	if ((r = dtl_doc_parse(&src, arena, limits, &root, error)) < 0 ||
	    (r = plan_span(&src, root, e, json, arena, &sp, error)) < 0)
		goto out;
	insert_len = strlen(sp.text);
	new_size = src.size - (sp.end - sp.at) + insert_len;
	text = dtl_arena_alloc(arena, new_size + 1);
	old = dtl_arena_strndup(arena, src.data, src.size);
	if (!text || !old) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(text, src.data, sp.at);
	memcpy(text + sp.at, sp.text, insert_len);
	memcpy(text + sp.at + insert_len, src.data + sp.end, src.size - sp.end);
	text[new_size] = '\0';
	ed->old_text = old;
	ed->old_size = src.size;
	ed->new_text = text;
	ed->new_size = new_size;
	r = 0;
out:
	dtl_source_fini(&src);
	return r;
}

/* Never write a file that would no longer parse (as its dialect d) or not hold e's value. */
static int verify_edit(const struct dtl_fix_edit *ed, enum dialect d, const struct edit *e,
                       const char *spelled, const struct dtl_limits *limits,
                       struct dtl_arena *arena, struct dtl_error *error)
{
	struct dtl_loc loc = {.file = ed->path};
	struct dtl_error parse_error = {0};
	struct dtl_source out_src;
	struct dtl_node *check;
	int r;

	r = dtl_source_init_mem(&out_src, ed->path, ed->new_text, ed->new_size);
	if (r < 0)
		return r;
	r = dtl_doc_parse(&out_src, arena, limits, &check, &parse_error);
	if (r >= 0 && d == D_MANIFEST) {
		struct dtl_manifest parsed;
		r = dtl_manifest_parse(check, ed->path, arena, limits, &parsed, &parse_error);
	} else if (r >= 0 && d == D_PLAN) {
		struct dtl_plan parsed;
		dtl_plan_init(&parsed);
		r = dtl_plan_parse(check, ed->path, arena, &parsed, &parse_error);
	}
	dtl_source_fini(&out_src);
	if (r < 0)
		return dtl_error_set(
		    error, loc, -EINVAL,
		    "refusing to write: the edited file would not parse (%u:%u: %s)",
		    parse_error.loc.line, parse_error.loc.column, parse_error.message);
	if (!holds(check, e))
		return dtl_error_set(error, loc, -EINVAL,
		                     "refusing to write: the edited file would not hold '%s'",
		                     spelled);
	return 0;
}

int dtl_fix_edit_build(const struct dtl_fix *fix, const struct dtl_fix_files *files,
                       const struct dtl_manifest *m, const struct dtl_plan *plan,
                       struct dtl_arena *arena, struct dtl_fix_edit *ret_edit,
                       struct dtl_error *error)
{
	struct dtl_limits limits;
	struct dtl_loc setting_loc, loc = {.file = "--fix-plan"};
	struct dtl_fix_edit ed = {0};
	struct edit e;
	const char *key, *file, *spelled = NULL;
	enum dialect d;
	int r;

	if ((r = manifest_edit(fix, m, plan, arena, &e, &key, &setting_loc)) == -ENOTSUP)
		return dtl_error_set(error, loc, r, "%s", fix->proposed.title);
	if (r < 0)
		return r;
	if (target_of(files, key, setting_loc, &file, &d) < 0)
		return no_target(fix, key, file, error);
	if ((r = spell_edit(fix, m, d, key, file, arena, &e, &spelled, error)) < 0)
		return r;
	dtl_limits_default(&limits);
	if ((r = edited_text(file, &e, &limits, arena, &ed, error)) < 0)
		return r;
	ed.path = file;
	ed.setting = spelled;
	if ((r = verify_edit(&ed, d, &e, spelled, &limits, arena, error)) < 0)
		return r;
	*ret_edit = ed;
	return 0;
}

int dtl_fix_edit_commit(const struct dtl_fix_edit *edit, struct dtl_error *error)
{
	struct dtl_loc loc = {.file = edit->path};
	struct dtl_limits limits;
	struct dtl_source now;
	struct dtl_atomic_file file;
	int r;

	/* the file must still be what the edit was made from */
	dtl_limits_default(&limits);
	if ((r = dtl_source_read(&now, edit->path, &limits, error)) < 0)
		return r;
	bool same = now.size == edit->old_size && !memcmp(now.data, edit->old_text, now.size);
	dtl_source_fini(&now);
	if (!same)
		return dtl_error_set(error, loc, -EAGAIN,
		                     "the file changed while dtypelint read it: run again");
	/* a temporary file beside it, renamed over it (the link's target for a symlink; a
	 * hard-linked file is refused): include/dtypelint/core/atomic-file.h */
	if ((r = dtl_atomic_open(&file, edit->path, error)) < 0)
		return r;
	/* and still be, just before the rename: a save by the user meanwhile is kept */
	dtl_atomic_expect(&file, edit->old_text, edit->old_size);
	if (fwrite(edit->new_text, 1, edit->new_size, file.out) != edit->new_size) {
		dtl_atomic_abort(&file);
		return dtl_error_set(error, loc, -EIO, "cannot write the edited file");
	}
	if ((r = dtl_atomic_commit(&file, error)) == -EAGAIN) /* named as given, not resolved */
		return dtl_error_set(error, loc, r,
		                     "the file changed while dtypelint wrote it: it is left as it "
		                     "is now; run again");
	return r;
}

/* Lines of a text: starts[i] is where line i starts; starts[count] == size. */
static size_t *line_starts(const char *s, size_t n, size_t *ret_count)
{
	size_t count = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		count += s[i] == '\n';
	if (n && s[n - 1] != '\n')
		count++;
	size_t *starts = malloc((count + 1) * sizeof(*starts));
	if (!starts)
		return NULL;
	starts[k++] = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n' && i + 1 < n)
			starts[k++] = i + 1;
	starts[count] = n;
	*ret_count = count;
	return starts;
}

static bool same_line(const char *a, const size_t *as, size_t i, const char *b, const size_t *bs,
                      size_t j)
{
	size_t al = as[i + 1] - as[i], bl = bs[j + 1] - bs[j];
	return al == bl && memcmp(a + as[i], b + bs[j], al) == 0;
}

static void put_line(FILE *out, char mark, const char *s, const size_t *starts, size_t i)
{
	size_t len = starts[i + 1] - starts[i];
	fputc(mark, out);
	fwrite(s + starts[i], 1, len, out);
	if (!len || s[starts[i] + len - 1] != '\n')
		fputs("\n\\ No newline at end of file\n", out);
}

/* The path relative to the working directory (with ../ when it lies outside), as `git apply`
 * and `patch -p1` find it from there; the path as given when either cannot be resolved. */
static const char *diff_path(const char *path, char *buf, size_t size)
{
	char cwd[PATH_MAX], *real = realpath(path, NULL);
	const char *out = path;

	if (real && getcwd(cwd, sizeof(cwd))) {
		size_t common = 0, n = strlen(cwd), used = 0;
		if (n == 1)
			n = 0; /* the root: every path is below it */
		/* the longest common prefix that ends at a component boundary of both */
		for (size_t i = 0; i <= n; i++) {
			if ((i == n || cwd[i] == '/') && real[i] == '/')
				common = i;
			if (i == n || real[i] != cwd[i])
				break;
		}
		buf[0] = '\0';
		for (size_t i = common; i < n && used < size; i++)
			if (cwd[i] == '/')
				used += (size_t)snprintf(buf + used, size - used, "../");
		if (used < size) {
			snprintf(buf + used, size - used, "%s", real + common + 1);
			out = buf;
		}
	}
	free(real);
	while (out == path && out[0] == '.' && out[1] == '/')
		out += 2;
	return out;
}

/* A name in a diff header as git writes it: C-quoted when it holds a control character, a
 * quote or a backslash; followed by a tab when it holds a space, so that patch reads it whole. */
static void put_name(FILE *out, const char *prefix, const char *name)
{
	bool quote = false;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		quote = quote || *p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\';
	if (!quote) {
		fprintf(out, "%s%s%s\n", prefix, name, strchr(name, ' ') ? "\t" : "");
		return;
	}
	fprintf(out, "\"%s", prefix);
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p == '\t')
			fputs("\\t", out);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\%03o", *p);
		else
			fputc(*p, out);
	}
	fputs("\"\n", out);
}

int dtl_fix_edit_diff(FILE *out, const struct dtl_fix_edit *edit)
{
	const char *a = edit->old_text, *b = edit->new_text;
	size_t an, bn, pre = 0, suf = 0;
	size_t *as = line_starts(a, edit->old_size, &an), *bs = line_starts(b, edit->new_size, &bn);
	char buf[4096];
	enum { CONTEXT = 3 }; /* as diff -u */

	if (!as || !bs) {
		free(as);
		free(bs);
		return -ENOMEM;
	}
	while (pre < an && pre < bn && same_line(a, as, pre, b, bs, pre))
		pre++;
	while (suf < an - pre && suf < bn - pre &&
	       same_line(a, as, an - 1 - suf, b, bs, bn - 1 - suf))
		suf++;
	if (pre == an && pre == bn) {
		free(as);
		free(bs);
		return 0;
	}
	size_t from = pre > CONTEXT ? pre - CONTEXT : 0;
	size_t a_to = an - suf + (suf > CONTEXT ? CONTEXT : suf);
	size_t b_to = bn - suf + (suf > CONTEXT ? CONTEXT : suf);
	const char *p = diff_path(edit->path, buf, sizeof(buf));
	fputs("--- ", out);
	put_name(out, "a/", p);
	fputs("+++ ", out);
	put_name(out, "b/", p);
	/* an empty range is named by the line before it (0 at the top), as diff -u does */
	fprintf(out, "@@ -%zu,%zu +%zu,%zu @@\n", a_to > from ? from + 1 : from, a_to - from,
	        b_to > from ? from + 1 : from, b_to - from);
	for (size_t i = from; i < pre; i++)
		put_line(out, ' ', a, as, i);
	for (size_t i = pre; i < an - suf; i++)
		put_line(out, '-', a, as, i);
	for (size_t j = pre; j < bn - suf; j++)
		put_line(out, '+', b, bs, j);
	for (size_t i = an - suf; i < a_to; i++)
		put_line(out, ' ', a, as, i);
	free(as);
	free(bs);
	return ferror(out) ? -EIO : 0;
}
