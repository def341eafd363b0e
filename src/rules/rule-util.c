/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by several rules (rule-util.h): questions about the simulated state (is a
 * tensor quantized, trainable, a LoRA factor, sharded), grouping one finding over many
 * tensors, the FSDP1 flat-parameter error, and the fix candidates several rules propose.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rule-util.h"

bool dtl_rules_quantized(const struct dtl_sim *sim, uint32_t t)
{
	return sim->t.flags[t] & DTL_TF_QUANTIZED;
}

bool dtl_rules_trainable(const struct dtl_sim *sim, uint32_t t)
{
	return sim->t.flags[t] & DTL_TF_TRAINABLE;
}

void dtl_rules_grouper_init(struct dtl_rules_grouper *g, struct dtl_check *c)
{
	g->c = c;
	dtl_strmap_init(&g->keys, c->arena);
	g->counts = NULL;
	g->first_finding = c->findings->items.count;
}

struct dtl_finding *dtl_rules_grouper_get(struct dtl_rules_grouper *g, const char *key)
{
	int64_t idx = dtl_strmap_get(&g->keys, key, strlen(key));
	if (idx < 0)
		return NULL;
	return &((struct dtl_finding *)g->c->findings->items.items)[idx];
}

int dtl_rules_grouper_add(struct dtl_rules_grouper *g, const char *key, struct dtl_finding *f,
                          uint32_t tensor, const char *role)
{
	size_t idx = (size_t)(f - (struct dtl_finding *)g->c->findings->items.items);
	const char *stored = dtl_arena_strndup(g->c->arena, key, strlen(key));
	if (!stored || dtl_strmap_put(&g->keys, stored, strlen(stored), (int64_t)idx) < 0)
		return -ENOMEM;
	return dtl_check_add_tensor(g->c, f, tensor, role);
}

int dtl_rules_grouper_more(struct dtl_rules_grouper *g, struct dtl_finding *f, uint32_t tensor)
{
	f->group_offset++; /* counts the tensors beyond the first */
	if (f->tensor_count < 3)
		return dtl_check_add_tensor(g->c, f, tensor, NULL);
	return 0;
}

int dtl_rules_grouper_finish(struct dtl_rules_grouper *g)
{
	struct dtl_finding *f = g->c->findings->items.items;
	for (size_t i = g->first_finding; i < g->c->findings->items.count; i++) {
		if (f[i].group_offset == 0)
			continue;
		f[i].message = dtl_arena_sprintf(
		    g->c->arena, "%s (and %u more like it%s)", f[i].message, f[i].group_offset,
		    f[i].group_offset + 1 > f[i].tensor_count ? "; notes name the first three"
		                                              : "");
		f[i].group_offset = 0;
		if (!f[i].message)
			return -ENOMEM;
	}
	return 0;
}

const char *dtl_rules_leaf(const struct dtl_sim *sim, uint32_t t)
{
	const char *dot = strrchr(sim->t.name[t], '.');
	return dot ? dot + 1 : sim->t.name[t];
}

const struct dtl_event *dtl_rules_cause(const struct dtl_sim *sim, uint32_t t)
{
	const struct dtl_event *events = sim->events.items;
	for (uint32_t e = sim->t.last_event[t]; e != DTL_NONE_INDEX; e = events[e].prev)
		if (events[e].from != events[e].to && dtl_dtype_is_half(events[e].to))
			return &events[e];
	return NULL;
}

bool dtl_rules_sharded(const struct dtl_sim *sim)
{
	enum dtl_strategy s = sim->rp.plan.strategy;
	return s == DTL_STRATEGY_FSDP1 || s == DTL_STRATEGY_FSDP2 || s == DTL_STRATEGY_ZERO3;
}

const char *dtl_rules_strategy_label(const struct dtl_sim *sim)
{
	switch (sim->rp.plan.strategy) {
	case DTL_STRATEGY_FSDP1:
		return "FSDP1";
	case DTL_STRATEGY_FSDP2:
		return "FSDP2";
	default:
		return "ZeRO-3";
	}
}

int dtl_rules_fsdp1_error(struct dtl_check *c, struct dtl_finding *f)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_group *groups = sim->groups.items;
	bool v2 = dtl_sim_behavior(sim, DTL_B_FSDP1_VALIDATE_V2);

	for (size_t gi = 0; gi < sim->groups.count; gi++) {
		const struct dtl_group *g = &groups[gi];
		if (g->kind != DTL_GROUP_FSDP1_UNIT || g->count == 0)
			continue;
		uint32_t first = g->members[0];
		enum dtl_dtype d0 = sim->t.dtype[first];
		const char *text = NULL;
		if (!dtl_dtype_is_floating(d0)) {
			if (!(sim->t.flags[first] & DTL_TF_QUANTIZED))
				continue;
			text = v2 ? "ValueError: Cannot flatten integer dtype tensors"
			          : "ValueError: Integer parameters are unsupported";
		} else {
			for (size_t k = 1; k < g->count && !text; k++) {
				uint32_t t = g->members[k];
				if (sim->t.dtype[t] == d0)
					continue;
				/* DT101 leaves a unit to DT401/DT402 when its first member or
				 * the one that differs is quantized: the error is ours then */
				if (!(sim->t.flags[t] & DTL_TF_QUANTIZED) &&
				    !(sim->t.flags[first] & DTL_TF_QUANTIZED))
					break;
				text = dtl_arena_sprintf(
				    c->arena,
				    v2 ? "ValueError: Must flatten tensors with uniform dtype but "
				         "got %s and %s"
				       : "ValueError: `FlatParameter` requires uniform dtype but "
				         "got %s and %s",
				    dtl_dtype_torch_name(d0),
				    dtl_dtype_torch_name(sim->t.dtype[t]));
				if (!text)
					return -ENOMEM;
			}
		}
		if (!text)
			continue;
		f->effect = NULL;
		f->error_text = text;
		f->error_when = dtl_arena_sprintf(
		    c->arena,
		    "at wrap time, in the FullyShardedDataParallel constructor (unit '%s')",
		    g->name);
		f->error_versions = dtl_check_version(c, DTL_FW_TORCH);
		return f->error_when ? 0 : -ENOMEM;
	}
	return 0;
}

bool dtl_rules_is_lora(const struct dtl_sim *sim, uint32_t t)
{
	return (sim->t.flags[t] & DTL_TF_ADAPTER) && !strstr(sim->t.name[t], ".modules_to_save.");
}

uint32_t dtl_rules_base_of(const struct dtl_sim *sim, uint32_t t)
{
	const char *name = sim->t.name[t];
	const char *cut = strstr(name, ".lora_");
	char buf[4096];

	if (!cut || (size_t)(cut - name) + 20 >= sizeof(buf))
		return DTL_NONE_INDEX;
	int n = snprintf(buf, sizeof(buf), "%.*s.weight", (int)(cut - name), name);
	uint32_t b = dtl_sim_find(sim, buf, (size_t)n);
	if (b != DTL_NONE_INDEX)
		return b;
	n = snprintf(buf, sizeof(buf), "%.*s.base_layer.weight", (int)(cut - name), name);
	return dtl_sim_find(sim, buf, (size_t)n);
}

int dtl_rules_merge_check(struct dtl_check *c, bool quantized)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_finding *f = NULL;
	size_t n = 0;

	if (sim->rp.plan.merge != DTL_TRUE)
		return 0;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!dtl_rules_is_lora(sim, t) || !strstr(sim->t.name[t], ".lora_A."))
			continue;
		uint32_t b = dtl_rules_base_of(sim, t);
		if (b == DTL_NONE_INDEX)
			continue;
		bool q = sim->t.flags[b] & DTL_TF_QUANTIZED;
		if (quantized != q)
			continue;
		if (!quantized &&
		    (sim->t.dtype[b] == sim->t.dtype[t] || !dtl_dtype_is_half(sim->t.dtype[b])))
			continue;
		if (!f) {
			bool eight = sim->t.flags[b] & DTL_TF_INT8;
			f = quantized
			        ? dtl_check_report(
			              c, c->rule->severity, sim->rp.plan.merge_loc,
			              "merging LoRA into %s-bit weights requantizes them",
			              eight ? "8" : "4")
			        : dtl_check_report(c, c->rule->severity, sim->rp.plan.merge_loc,
			                           "merging %s adapters into %s weights rounds the "
			                           "update to %s",
			                           dtl_dtype_name(sim->t.dtype[t]),
			                           dtl_dtype_name(sim->t.dtype[b]),
			                           dtl_dtype_name(sim->t.dtype[b]));
			if (!f)
				return -ENOMEM;
			f->effect =
			    quantized
			        ? (eight ? "peft warns: 'Merge lora module to 8-bit linear may get "
			                   "different generations due to rounding errors.'"
			                 : "peft warns: 'Merge lora module to 4-bit linear may get "
			                   "different generations due to rounding errors.'")
			        : "merge_and_unload adds delta.to(orig_dtype): the merged weight "
			          "keeps "
			          "the base dtype";
			f->fix = quantized
			             ? "merge into a 16-bit copy of the base model instead"
			             : "keep the adapter separate, or merge into a float32 copy";
		}
		if (++n <= 3 && dtl_check_add_tensor(c, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

const struct dtl_group *dtl_rules_find_group(const struct dtl_sim *sim, enum dtl_group_kind kind)
{
	const struct dtl_group *groups = sim->groups.items;
	for (size_t i = 0; i < sim->groups.count; i++)
		if (groups[i].kind == kind)
			return &groups[i];
	return NULL;
}

uint32_t dtl_rules_first_other_dtype(const struct dtl_sim *sim, const struct dtl_group *g,
                                     size_t *ret_offset)
{
	for (size_t k = 1; k < g->count; k++)
		if (sim->t.dtype[g->members[k]] != sim->t.dtype[g->members[0]]) {
			*ret_offset = k;
			return g->members[k];
		}
	return DTL_NONE_INDEX;
}

bool dtl_rules_upcast_adapter(const struct dtl_sim *sim, uint32_t t)
{
	const struct dtl_event *events = sim->events.items;
	if (!(sim->t.flags[t] & DTL_TF_ADAPTER))
		return false;
	for (uint32_t e = sim->t.last_event[t]; e != DTL_NONE_INDEX; e = events[e].prev)
		if (events[e].stage == DTL_STAGE_PEFT && strstr(events[e].reason, "autocast"))
			return true;
	/* explicit fp32 adapters beside a 16-bit model: what autocast makes */
	return sim->t.dtype[t] == DTL_DTYPE_F32;
}

const char *dtl_rules_module_of(struct dtl_arena *arena, const struct dtl_sim *sim, uint32_t t)
{
	const struct dtl_module *md = &sim->modules[sim->t.module[t]];
	return dtl_arena_strndup(arena, md->path, md->path_len);
}

const char *dtl_rules_modules_glob(struct dtl_arena *arena, const struct dtl_sim *sim,
                                   const struct dtl_finding *f)
{
	const char *first = dtl_rules_module_of(arena, sim, f->tensors[0]);
	char *glob = first ? dtl_arena_strndup(arena, first, strlen(first)) : NULL;
	if (!glob)
		return NULL;
	for (size_t k = 1; k < f->tensor_count; k++) {
		const char *other = dtl_rules_module_of(arena, sim, f->tensors[k]);
		char *out = other ? dtl_arena_alloc(arena, strlen(glob) + 1) : NULL;
		const char *a = glob, *b = other;
		size_t n = 0;
		if (!out)
			return NULL;
		while (*a && *b) {
			size_t la = strcspn(a, "."), lb = strcspn(b, ".");
			if (la == lb && !memcmp(a, b, la)) {
				memcpy(out + n, a, la);
				n += la;
			} else {
				out[n++] = '*';
			}
			a += la;
			b += lb;
			if ((*a == '.') != (*b == '.'))
				return NULL;
			if (*a == '.') {
				out[n++] = '.';
				a++;
				b++;
			}
		}
		if (*a || *b)
			return NULL;
		out[n] = '\0';
		glob = out;
	}
	return glob;
}

const char *dtl_rules_fix_module(const struct dtl_fix_request *req)
{
	const struct dtl_finding *f = req->finding;
	return f->tensor_count ? dtl_rules_module_of(req->arena, req->sim, f->tensors[0]) : NULL;
}

struct dtl_fix_candidate *dtl_rules_propose(const struct dtl_fix_request *req,
                                            enum dtl_fix_kind kind, const char *text,
                                            enum dtl_dtype dtype, int cost, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *title = len >= 0 ? dtl_arena_alloc(req->arena, (size_t)len + 1) : NULL;
	if (!title)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(title, (size_t)len + 1, fmt, ap);
	va_end(ap);
	struct dtl_fix_candidate *fix = dtl_vec_push(req->candidates, req->arena, sizeof(*fix));
	if (!fix)
		return NULL;
	fix->kind = kind;
	fix->text = text;
	fix->dtype = dtype;
	fix->cost = cost;
	fix->title = title;
	return fix;
}

int dtl_rules_propose_version(const struct dtl_fix_request *req, enum dtl_framework framework,
                              const char *version, const char *title)
{
	struct dtl_fix_candidate *fix =
	    dtl_rules_propose(req, DTL_FIX_VERSION, version, 0, 2, "%s", title);
	if (!fix)
		return -ENOMEM;
	fix->framework = framework;
	return 0;
}

int dtl_rules_propose_autocast_off(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;
	const struct dtl_finding *f = req->finding;
	if (!f->tensor_count || !dtl_rules_upcast_adapter(sim, f->tensors[0]))
		return 0;
	/* with the adapters listed in the manifest (exported after get_peft_model), the fix
	 * means exporting again: it costs more than a plan key */
	return dtl_rules_propose(
	           req, DTL_FIX_AUTOCAST_OFF, NULL, 0, sim->manifest->adapter.present ? 1 : 3,
	           sim->manifest->adapter.present
	               ? "set adapter.autocast_adapter_dtype: false (get_peft_model(..., "
	                 "autocast_adapter_dtype=False))"
	               : "create the adapters with get_peft_model(..., "
	                 "autocast_adapter_dtype=False) "
	                 "and export the model again")
	           ? 0
	           : -ENOMEM;
}

int dtl_rules_propose_wrap_module(const struct dtl_fix_request *req)
{
	const char *mod = dtl_rules_fix_module(req);

	if (!mod || !mod[0])
		return 0;
	return dtl_rules_propose(req, DTL_FIX_WRAP_ADD, mod, 0, 2,
	                         "shard '%s' on its own: add it to training.fsdp.wrap", mod)
	           ? 0
	           : -ENOMEM;
}

int dtl_rules_propose_wrap_apart(const struct dtl_fix_request *req)
{
	const struct dtl_finding *f = req->finding;

	/* each LoRA module a unit or group of its own: every one then holds one dtype (FSDP1 wrap
	 * or fully_shard of the lora_A / lora_B modules) */
	if (f->tensor_count && dtl_rules_upcast_adapter(req->sim, f->tensors[0]) &&
	    !dtl_rules_propose(req, DTL_FIX_WRAP_ADD, "**.lora_*.*", 0, 2,
	                       "shard each adapter on its own: add '**.lora_*.*' to "
	                       "training.fsdp.wrap"))
		return -ENOMEM;
	return dtl_rules_propose_wrap_module(req);
}

bool dtl_rules_adapter_targets_nothing(const struct dtl_sim *sim)
{
	const struct dtl_adapter *a = &sim->manifest->adapter;

	return a->present && a->target_modules.present && !a->target_parameters.count &&
	       !sim->peft_targeted && sim->module_count >= 2 &&
	       !(a->target_modules_string && strcmp(a->target_modules_string, "all-linear") == 0) &&
	       (sim->peft_target_regex || a->target_modules.count != 0);
}

bool dtl_rules_target_parameters_partitioned(const struct dtl_sim *sim)
{
	const struct dtl_adapter *a = &sim->manifest->adapter;

	return a->present && a->target_parameters.count &&
	       sim->rp.plan.strategy == DTL_STRATEGY_ZERO3 && sim->rp.zero_init &&
	       sim->manifest->quantization.method == DTL_QUANT_NONE;
}
