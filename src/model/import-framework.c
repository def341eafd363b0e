/* SPDX-License-Identifier: MIT */
/*
 * --framework-config: a training framework's own config file, handed to the importer whose
 * framework claims it by its keys, with the framework's command-line overrides
 * (--framework-override key=value, as `tune run ... key=value` takes them). The table below
 * is the registration seam: one line per framework, the importer in its own file.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/model/import.h"
#include "import-framework.h"

static const struct dtl_framework_importer *const importers[] = {
    &dtl_importer_torchtune, &dtl_importer_torchtitan, &dtl_importer_verl,   &dtl_importer_nemo,
    &dtl_importer_openrlhf,  &dtl_importer_automodel,  &dtl_importer_dschat,
};
#define IMPORTER_COUNT (sizeof(importers) / sizeof(importers[0]))

static const char override_file[] = "--framework-override";

const char *dtl_framework_config_kind(const struct dtl_node *root)
{
	for (size_t i = 0; root && i < IMPORTER_COUNT; i++)
		if (importers[i]->detect(root))
			return importers[i]->kind;
	return NULL;
}

/* The file's node at a dotted key, or NULL. */
static const struct dtl_node *tree_get(const struct dtl_node *root, const char *dotted)
{
	const struct dtl_node *n = root;
	const char *p = dotted;

	while (n && *p) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		const struct dtl_node *next = NULL;
		if (n->type != DTL_NODE_MAP)
			return NULL;
		for (size_t i = 0; i < n->map.count && !next; i++) {
			const struct dtl_node *k = &n->map.pairs[i].key;
			if (k->type == DTL_NODE_STRING && k->string.len == len &&
			    memcmp(k->string.text, p, len) == 0)
				next = &n->map.pairs[i].value;
		}
		n = next;
		p = dot ? dot + 1 : p + len;
	}
	return n;
}

/* whether key is dotted itself or a mapping above it ("model" for "model.lora_rank") */
static bool covers(const char *key, const char *dotted)
{
	size_t n = strlen(key);
	return strncmp(key, dotted, n) == 0 && (dotted[n] == '\0' || dotted[n] == '.');
}

static struct dtl_fw_value merged(const struct dtl_fw_config *c, const char *dotted)
{
	for (size_t i = c->override_count; i-- > 0;) {
		const struct dtl_fw_override *o = &c->overrides[i];
		if (o->ignored)
			continue;
		if (o->removed && covers(o->key, dotted))
			return (struct dtl_fw_value){NULL, &c->l->s};
		if (!o->removed && strcmp(o->key, dotted) == 0)
			return (struct dtl_fw_value){o->value, &o->s};
	}
	return (struct dtl_fw_value){tree_get(c->l->root, dotted), &c->l->s};
}

/* every read of a key goes through here, so that --show-plan lists it */
struct dtl_fw_value dtl_fw_get(const struct dtl_fw_config *c, const char *dotted)
{
	struct dtl_fw_value v = merged(c, dotted);
	dtl_fw_keys_record(c, dotted, v);
	return v;
}

struct dtl_loc dtl_fw_loc(const struct dtl_fw_config *c, struct dtl_fw_value v)
{
	return dtl_schema_loc(v.s, v.node ? v.node : c->l->root);
}

void dtl_fw_warn(struct dtl_fw_config *c, struct dtl_loc loc, const char *message)
{
	struct dtl_input_warning *w = dtl_vec_push(&c->m->warnings, c->arena, sizeof(*w));
	if (!w || !message)
		return;
	w->loc = loc;
	w->message = message;
}

int dtl_fw_bool(const struct dtl_fw_config *c, const char *key, bool dflt, bool *ret)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);

	*ret = dflt;
	if (!v.node || v.node->type == DTL_NODE_NULL)
		return 0;
	return dtl_schema_bool(v.s, v.node, key, ret);
}

int dtl_fw_int(const struct dtl_fw_config *c, const char *key, int64_t lo, int64_t hi, int64_t dflt,
               int64_t *ret)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);

	*ret = dflt;
	if (!v.node || v.node->type == DTL_NODE_NULL)
		return 0;
	return dtl_schema_int(v.s, v.node, key, lo, hi, ret);
}

int dtl_fw_unmodelled(struct dtl_fw_config *c, struct dtl_loc loc, const char *what,
                      const char *touches)
{
	if (!what || !touches)
		return -ENOMEM;
	return dtl_plan_unmodelled(
	    &c->m->plan, c->arena,
	    &(struct dtl_unmodelled){.what = what, .touches = touches, .loc = loc});
}

int dtl_fw_unmodelled_key(struct dtl_fw_config *c, const char *key, const char *what,
                          const char *touches)
{
	return dtl_fw_unmodelled(c, dtl_fw_key_loc(c, key), what, touches);
}

struct dtl_loc dtl_fw_key_loc(const struct dtl_fw_config *c, const char *key)
{
	return dtl_fw_loc(c, dtl_fw_get(c, key));
}

bool dtl_fw_given(const struct dtl_fw_config *c, const char *key)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);
	return v.node && v.node->type != DTL_NODE_NULL;
}

int dtl_fw_text(const struct dtl_fw_config *c, const char *key, const char *dflt, const char **ret)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);

	*ret = dflt;
	if (!v.node || v.node->type == DTL_NODE_NULL)
		return 0;
	if (v.node->type != DTL_NODE_STRING) {
		*ret = v.node->raw ? v.node->raw : "";
		return 0;
	}
	return dtl_schema_string(v.s, v.node, key, ret);
}

/* torchtune's _merge_yaml_and_cli_args: arg.split("=") must give key and value */
static int override_fail(struct dtl_fw_config *c, const struct dtl_framework_override *ov)
{
	struct dtl_loc at = ov->loc.file ? ov->loc : (struct dtl_loc){override_file, 1, 1};
	if (c->importer != &dtl_importer_torchtune)
		return dtl_error_set(c->error, at, -EINVAL,
		                     "an override is KEY=VALUE or ~KEY, got %s", ov->text);
	return dtl_error_set(c->error, at, -EINVAL,
	                     "torchtune refuses this override: 'ValueError: Command-line overrides "
	                     "must be in the form of key=value, got %s'",
	                     ov->text);
}

/* a value parsed on line 1 moved to where a launch script has it (line, and column on the
 * first line), so that findings point into the script */
static void move_node(struct dtl_node *n, struct dtl_loc to)
{
	if (n->line == 1)
		n->column += to.column - 1;
	n->line += to.line - 1;
	if (n->type == DTL_NODE_SEQ)
		for (size_t i = 0; i < n->seq.count; i++)
			move_node(&n->seq.items[i], to);
	else if (n->type == DTL_NODE_MAP)
		for (size_t i = 0; i < n->map.count; i++) {
			move_node(&n->map.pairs[i].key, to);
			move_node(&n->map.pairs[i].value, to);
		}
}

/* the value of "key=value" as a YAML scalar, "None"/"null"/"~"/"" being null */
static int parse_value(struct dtl_fw_config *c, struct dtl_fw_override *o, const char *value,
                       size_t pad)
{
	size_t vlen = strlen(value);
	int r;

	if (strcmp(value, "None") == 0 || strcmp(value, "null") == 0 || strcmp(value, "~") == 0 ||
	    !vlen) {
		/* null; the YAML reader takes a document of a lone null as an empty file */
		struct dtl_node *null = dtl_arena_calloc(c->arena, 1, sizeof(*null));
		if (!null)
			return -ENOMEM;
		*null = (struct dtl_node){.type = DTL_NODE_NULL,
		                          .line = 1,
		                          .column = (uint32_t)pad + 1,
		                          .raw = "null",
		                          .raw_len = 4};
		o->value = null;
		return 0;
	}
	char *buf = dtl_arena_alloc(c->arena, pad + vlen + 1);
	if (!buf)
		return -ENOMEM;
	memset(buf, ' ', pad);
	memcpy(buf + pad, value, vlen + 1);
	struct dtl_source src;
	struct dtl_node *root;
	if ((r = dtl_source_init_mem(&src, o->s.file, buf, pad + vlen)) < 0)
		return r;
	r = dtl_doc_parse_yaml(&src, c->arena, c->limits, &root, c->error);
	dtl_source_fini(&src);
	if (r < 0)
		return r;
	o->value = root;
	return 0;
}

/*
 * "key=value" as torchtune's _merge_yaml_and_cli_args reads it: exactly one '=', "None" is
 * null, a key naming a component mapping sets its _component_; "~key" removes the key. Hydra
 * (verl) also takes "+key=value" and "++key=value" and ends the key at the first '='. The
 * value is parsed as YAML after as many spaces as "key=" has bytes, so its column in a
 * message is its column in the option's text (or the script's).
 */
static int parse_override(struct dtl_fw_config *c, const struct dtl_framework_override *ov,
                          struct dtl_fw_override *o)
{
	const char *text = ov->text;
	const char *eq = strchr(text, '=');
	size_t plus = 0;
	int r;

	memset(o, 0, sizeof(*o));
	o->s = (struct dtl_schema){ov->loc.file ? ov->loc.file : override_file, c->arena, c->limits,
	                           c->error};
	if (ov->not_read) { /* the key alone, listed as not read */
		o->ignored = true;
		o->key = text;
		return 0;
	}
	if (text[0] == '~') {
		size_t n = eq ? (size_t)(eq - text - 1) : strlen(text + 1);
		o->removed = true;
		o->key = dtl_arena_strndup(c->arena, text + 1, n);
		return o->key ? 0 : -ENOMEM;
	}
	if (c->importer != &dtl_importer_torchtune) {
		while (text[plus] == '+')
			plus++;
		text += plus;
		eq = strchr(text, '=');
	} else if (eq && strchr(eq + 1, '=')) {
		return override_fail(c, ov);
	}
	if (!eq || eq == text)
		return override_fail(c, ov);
	size_t klen = (size_t)(eq - text);
	if (!(o->key = dtl_arena_strndup(c->arena, text, klen)))
		return -ENOMEM;
	const struct dtl_node *at = tree_get(c->l->root, o->key);
	if (at && at->type == DTL_NODE_MAP && dtl_node_get(at, "_component_") &&
	    !(o->key = dtl_arena_sprintf(c->arena, "%s._component_", o->key)))
		return -ENOMEM;
	if ((r = parse_value(c, o, eq + 1, plus + klen + 1)) < 0) {
		/* the reader counts from the value's own text (and may point past its end): in
		 * a script, the error is at the word */
		if (ov->loc.file && c->error && c->error->loc.line) {
			c->error->loc.line = ov->loc.line;
			c->error->loc.column = ov->loc.column;
		}
		return r;
	}
	if (ov->value_loc.line) {
		struct dtl_node *v = (struct dtl_node *)o->value;
		v->line = ov->value_loc.line;
		v->column = ov->value_loc.column;
	} else if (ov->loc.file) {
		move_node((struct dtl_node *)o->value, ov->loc);
	}
	return 0;
}

static const struct dtl_framework_importer *claim(const struct dtl_node *root,
                                                  const char *framework)
{
	for (size_t i = 0; i < IMPORTER_COUNT; i++)
		if (framework && !root
		        ? importers[i]->id && strcmp(importers[i]->id, framework) == 0
		        : importers[i]->detect(root))
			return importers[i];
	return NULL;
}

static int run(struct dtl_fw_config *c, const char *framework,
               const struct dtl_framework_override *overrides, size_t n)
{
	const struct dtl_framework_importer *imp;
	int r;

	if (c->path && (r = dtl_schema_map(&c->l->s, c->l->root, "a framework config")) < 0)
		return r;
	imp = claim(c->path ? c->l->root : NULL, framework);
	c->importer = imp;
	if (!imp)
		return dtl_schema_fail(
		    &c->l->s, c->l->root,
		    "no framework dtypelint reads claims this file (--framework-"
		    "config reads: a torchtune recipe, whose model has a "
		    "'_component_: torchtune.models...'; a torchtitan job config, "
		    "with [job] and a [model] flavor; a verl trainer config, with "
		    "actor_rollout_ref; a NeMo Megatron config, with trainer.precision "
		    "and model.megatron_amp_O2; a NeMo Automodel recipe, whose model "
		    "has a '_target_: nemo_automodel....')");
	c->overrides = n ? dtl_arena_calloc(c->arena, n, sizeof(*c->overrides)) : NULL;
	if (n && !c->overrides)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++, c->override_count++)
		if ((r = parse_override(c, &overrides[i], &c->overrides[i])) < 0)
			return r;
	if (!c->m->plan.file) {
		c->m->plan.file = c->l->s.file;
		c->m->plan.loc = dtl_schema_loc(&c->l->s, c->l->root);
	}
	if ((r = imp->import(c)) < 0)
		return r;
	return dtl_fw_keys_finish(c);
}

int dtl_import_framework(const char *path, const char *framework, struct dtl_loc defaults_at,
                         const struct dtl_framework_override *overrides, size_t n,
                         struct dtl_arena *arena, const struct dtl_limits *limits,
                         struct dtl_manifest *manifest, struct dtl_error *error)
{
	struct dtl_loaded l;
	struct dtl_node *empty = NULL;
	int r;

	if (path && (r = dtl_loaded_open(&l, path, arena, limits, error)) < 0)
		return r;
	if (!path) {
		/* no file: the framework's packaged defaults, placed at the launch command */
		memset(&l, 0, sizeof(l));
		if (!(empty = dtl_arena_calloc(arena, 1, sizeof(*empty))))
			return -ENOMEM;
		*empty = (struct dtl_node){
		    .type = DTL_NODE_MAP, .line = defaults_at.line, .column = defaults_at.column};
		l.root = empty;
		l.s = (struct dtl_schema){defaults_at.file, arena, limits, error};
	}
	struct dtl_fw_keys keys = {0};
	dtl_strmap_init(&keys.seen, arena);
	struct dtl_fw_config c = {.l = &l,
	                          .path = path,
	                          .arena = arena,
	                          .limits = limits,
	                          .m = manifest,
	                          .error = error,
	                          .keys = &keys};
	r = run(&c, framework, overrides, n);
	if (path)
		dtl_loaded_close(&l);
	return r < 0 ? r : 0;
}

int dtl_import_framework_config(const char *path, const char *const *overrides, size_t n,
                                struct dtl_arena *arena, const struct dtl_limits *limits,
                                struct dtl_manifest *manifest, struct dtl_error *error)
{
	struct dtl_framework_override *ov = n ? dtl_arena_calloc(arena, n, sizeof(*ov)) : NULL;

	if (n && !ov)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ov[i].text = overrides[i];
	return dtl_import_framework(path, NULL, (struct dtl_loc){0}, ov, n, arena, limits, manifest,
	                            error);
}

bool dtl_framework_reads(const char *framework, const char *key)
{
	const struct dtl_framework_importer *imp = claim(NULL, framework);
	return imp && imp->reads && imp->reads(key);
}
