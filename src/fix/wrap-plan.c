/* SPDX-License-Identifier: MIT */
/*
 * --wrap-plan: an FSDP2 fully_shard plan in which every group holds one trainable dtype
 * (FSDPParamGroup's one-dtype check: rules/versions.yaml fsdp2-trainable-only-check). Bottom-up
 * like fully_shard calls: a module is sharded on its own when its subtree's parameters do not all
 * share the dtype of its parent's group, so float32 modules (routers, adapters kept in fp32) get
 * groups of their own — the "fp32 layer" pattern NeMo's fully_shard_by_dtype automates.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/fix/fix.h"
#include "dtypelint/core/json-writer.h"
#include "dtypelint/report/report.h"
#include "dtypelint/sim/sim.h"

/* A group key: a parameter's dtype and whether it is trainable (FSDP1 also wants one
 * requires_grad per unit). 0: no parameter; MIXED: more than one key. */
#define MIXED 0xff
static uint8_t key_of(const struct dtl_sim *sim, uint32_t t)
{
	return (uint8_t)(sim->t.dtype[t] + 1) | ((sim->t.flags[t] & DTL_TF_TRAINABLE) ? 0x40 : 0);
}

static enum dtl_dtype key_dtype(uint8_t key)
{
	return key == 0 || key == MIXED ? DTL_DTYPE_NONE : (enum dtl_dtype)((key & 0x3f) - 1);
}

static uint8_t own_key(const struct dtl_sim *sim, uint32_t mod)
{
	uint8_t k = 0;
	for (uint32_t t = sim->modules[mod].first_tensor; t != DTL_NONE_INDEX;
	     t = sim->t.next_in_module[t]) {
		if (sim->t.kind[t] != DTL_KIND_PARAM || (sim->t.flags[t] & DTL_TF_ALIAS))
			continue;
		if (k == 0)
			k = key_of(sim, t);
		else if (k != key_of(sim, t))
			return MIXED;
	}
	return k;
}

struct plan_state {
	const struct dtl_sim *sim;
	uint8_t *subtree; /* per module: the key its group would have, 0 or MIXED */
	uint8_t *sharded; /* per module: gets its own fully_shard */
};

/* Post-order: after its children, a module keeps in its group the children whose subtree has
 * its own key (or, without own parameters, the most common key); every other child with
 * parameters becomes a fully_shard group of its own. A module whose own parameters mix keys
 * cannot be fixed by grouping (MIXED). */
static void plan_module(struct plan_state *s, uint32_t mod, const struct dtl_patterns *wrap)
{
	const struct dtl_module *md = &s->sim->modules[mod];
	size_t count[256] = {0};
	uint32_t c;

	uint8_t g = own_key(s->sim, mod);
	if (g == 0) {
		for (c = md->first_child; c != DTL_NONE_INDEX; c = s->sim->modules[c].next_sibling)
			if (!s->sharded[c] && s->subtree[c] != 0 && s->subtree[c] != MIXED)
				count[s->subtree[c]]++;
		for (int k = 1; k < MIXED; k++)
			if (count[k] > (g == 0 ? 0 : count[g]))
				g = (uint8_t)k;
	}
	for (c = md->first_child; c != DTL_NONE_INDEX; c = s->sim->modules[c].next_sibling)
		if (!s->sharded[c] && s->subtree[c] != 0 && s->subtree[c] != g)
			s->sharded[c] = 1;
	s->subtree[mod] = g;
	/* the plan's wrap classes stay groups of their own when they are uniform */
	for (size_t i = 0; mod && i < wrap->count && !s->sharded[mod]; i++)
		if (md->class_name && strlen(md->class_name) == wrap->items[i].len &&
		    memcmp(md->class_name, wrap->items[i].text, wrap->items[i].len) == 0 &&
		    g != MIXED && g != 0)
			s->sharded[mod] = 1;
}

/* The modules in post-order (children in order, then their parent), as fully_shard is called;
 * an explicit stack, since a module tree is as deep as its longest name has segments. */
static uint32_t *post_order(const struct dtl_sim *sim)
{
	size_t n = sim->module_count, top = 0, done = 0;
	uint32_t *stack = dtl_arena_calloc(sim->arena, n + 1, sizeof(uint32_t));
	uint32_t *order = dtl_arena_calloc(sim->arena, n + 1, sizeof(uint32_t));
	uint8_t *expanded = dtl_arena_calloc(sim->arena, n + 1, 1);

	if (!stack || !order || !expanded)
		return NULL;
	stack[top++] = 0;
	while (top) {
		uint32_t mod = stack[top - 1];
		if (expanded[mod]) {
			order[done++] = mod;
			top--;
			continue;
		}
		expanded[mod] = 1;
		/* push the children, then reverse them so that the first is on top */
		size_t first = top;
		for (uint32_t c = sim->modules[mod].first_child; c != DTL_NONE_INDEX;
		     c = sim->modules[c].next_sibling)
			stack[top++] = c;
		for (size_t a = first, b = top; a + 1 < b; a++, b--) {
			uint32_t t = stack[a];
			stack[a] = stack[b - 1];
			stack[b - 1] = t;
		}
	}
	return order;
}

/* torch's get_submodule() takes a dotted path of attribute names and ModuleList indices; any
 * other name is refused rather than pasted into Python */
static bool is_dotted_identifier(const char *p, size_t len)
{
	size_t seg = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || p[i] == '.') {
			if (i == seg)
				return false;
			seg = i + 1;
			continue;
		}
		char c = p[i];
		bool digit = c >= '0' && c <= '9';
		if (!digit && c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z'))
			return false;
		/* a segment starting with a digit is an index: digits only */
		if ((p[seg] >= '0' && p[seg] <= '9') && !digit)
			return false;
	}
	return true;
}

/* a Python string literal: printable ASCII as is, every other byte as an escape */
static void put_python_string(FILE *out, const char *p, size_t len)
{
	fputc('"', out);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

int dtl_wrap_plan_write(FILE *out, const struct dtl_sim *sim, bool json, struct dtl_error *error)
{
	struct plan_state s = {.sim = sim};
	size_t n = sim->module_count;

	s.subtree = dtl_arena_calloc(sim->arena, n, 1);
	s.sharded = dtl_arena_calloc(sim->arena, n, 1);
	uint32_t *order = post_order(sim);
	if (!s.subtree || !s.sharded || !order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		plan_module(&s, order[i], &sim->rp.wrap);
	for (size_t i = 0; !json && i < n; i++) {
		const struct dtl_module *md = &sim->modules[order[i]];
		if (order[i] && s.sharded[order[i]] &&
		    !is_dotted_identifier(md->path, md->path_len)) {
			struct dtl_loc loc = {.file = sim->manifest->file};
			char *path = dtl_arena_strndup(sim->arena, md->path, md->path_len);
			return dtl_error_set(
			    error, loc, -EINVAL,
			    "--wrap-plan: module '%s' is not a dotted path of Python "
			    "identifiers and indices; no fully_shard call is written "
			    "for it (use -f json)",
			    path ? path : "");
		}
	}
	if (json) {
		struct dtl_json w;
		dtl_json_init(&w, out);
		dtl_json_begin_object(&w);
		dtl_json_key_uint(&w, "version", 1);
		dtl_json_key_array(&w, "fully_shard");
		for (size_t i = 1; i < n; i++) {
			if (!s.sharded[i])
				continue;
			dtl_json_break(&w, 2);
			dtl_json_begin_object(&w);
			dtl_json_key(&w, "module");
			dtl_json_put_string_len(&w, sim->modules[i].path, sim->modules[i].path_len);
			dtl_json_key_string(&w, "dtype", dtl_dtype_name(key_dtype(s.subtree[i])));
			dtl_json_key_bool(&w, "trainable",
			                  (s.subtree[i] & 0x40) && s.subtree[i] != MIXED);
			dtl_json_end_object(&w);
		}
		dtl_json_break(&w, 2);
		dtl_json_end_array(&w);
		dtl_json_break(&w, 1);
		dtl_json_key_object(&w, "root");
		dtl_json_key_string(&w, "module", "");
		dtl_json_key_string(&w, "dtype", dtl_dtype_name(key_dtype(s.subtree[0])));
		dtl_json_end_object(&w);
		dtl_json_end_object(&w);
		return dtl_json_finish(&w);
	} else {
		fputs(
		    "# fully_shard calls, bottom-up (paste after building the model); every group\n"
		    "# holds one parameter dtype\n"
		    "from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy\n\n"
		    "def shard(model, mp_policy=None, fp32_policy=None):\n"
		    "    fp32_policy = fp32_policy or MixedPrecisionPolicy(param_dtype=None)\n",
		    out);
		for (size_t k = 0; k < n; k++) {
			uint32_t mod = order[k];
			if (!mod || !s.sharded[mod])
				continue;
			bool fp32 = key_dtype(s.subtree[mod]) == DTL_DTYPE_F32;
			fputs("    fully_shard(model.get_submodule(", out);
			put_python_string(out, sim->modules[mod].path, sim->modules[mod].path_len);
			fprintf(out, "), mp_policy=%s)\n", fp32 ? "fp32_policy" : "mp_policy");
		}
		fputs("    fully_shard(model, mp_policy=mp_policy)\n", out);
	}
	return ferror(out) ? -EIO : 0;
}
