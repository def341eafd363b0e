/* SPDX-License-Identifier: MIT */
/*
 * --fix-plan: candidates per finding (only fixes the facts support), applied to copies and
 * re-simulated. A candidate is kept only when it removes the finding it was proposed for;
 * candidates are ranked by the findings left, the findings created and their cost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtypelint/fix.h"
#include "dtypelint/memory.h"

/* A finding's identity across re-simulations: its rule and group (a unit that still fails
 * with another offender is the same finding), else its first tensor, else its message. */
const char *dtl_fix_finding_key(struct dtl_arena *arena, const struct dtl_sim *sim,
                                const struct dtl_finding *f)
{
	if (f->group)
		return dtl_arena_sprintf(arena, "%s|%s", f->rule->id, f->group->name);
	if (f->tensor_count)
		return dtl_arena_sprintf(arena, "%s||%s", f->rule->id, sim->t.name[f->tensors[0]]);
	/* no tensor: its position (DT801's figures change with every fix; where it points,
	 * device_memory, does not) */
	return dtl_arena_sprintf(arena, "%s|||%s:%u:%u", f->rule->id,
	                         f->loc.file ? f->loc.file : "", f->loc.line, f->loc.column);
}

static struct dtl_fix *add(struct dtl_vec *fixes, struct dtl_arena *arena, enum dtl_fix_kind kind,
                           const char *text, enum dtl_dtype dtype, int cost, const char *title)
{
	struct dtl_fix *fix = dtl_vec_push(fixes, arena, sizeof(*fix));
	if (!fix || !title)
		return NULL;
	fix->kind = kind;
	fix->text = text;
	fix->dtype = dtype;
	fix->cost = cost;
	fix->title = title;
	return fix;
}

static bool upcast_adapter(const struct dtl_sim *sim, uint32_t t)
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

static const char *module_of(struct dtl_arena *arena, const struct dtl_sim *sim, uint32_t t)
{
	const struct dtl_module *md = &sim->modules[sim->t.module[t]];
	return dtl_arena_strndup(arena, md->path, md->path_len);
}

/* One glob over the modules of all the finding's tensors (a finding that stands for several
 * alike, "and 1 more like it"): segments that differ become '*'. NULL when their depths
 * differ. */
static const char *modules_glob(struct dtl_arena *arena, const struct dtl_sim *sim,
                                const struct dtl_finding *f)
{
	const char *first = module_of(arena, sim, f->tensors[0]);
	char *glob = first ? dtl_arena_strndup(arena, first, strlen(first)) : NULL;
	if (!glob)
		return NULL;
	for (size_t k = 1; k < f->tensor_count; k++) {
		const char *other = module_of(arena, sim, f->tensors[k]);
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

/* The candidates the facts support for one finding. */
static int candidates(const struct dtl_sim *sim, const struct dtl_finding *f, struct dtl_arena *a,
                      struct dtl_vec *out)
{
	const char *id = f->rule->id;
	uint32_t t = f->tensor_count ? f->tensors[0] : DTL_NONE_INDEX;
	const char *mod = t != DTL_NONE_INDEX ? module_of(a, sim, t) : NULL;
	bool adapter = t != DTL_NONE_INDEX && upcast_adapter(sim, t);
	struct dtl_fix *fix = (struct dtl_fix *)1;

#define ADD(kind, text, dtype, cost, ...)                                                          \
	(fix = fix ? add(out, a, kind, text, dtype, cost, dtl_arena_sprintf(a, __VA_ARGS__)) : NULL)

	if (adapter && (!strcmp(id, "DT101") || !strcmp(id, "DT111") || !strcmp(id, "DT121") ||
	                !strcmp(id, "DT122") || !strcmp(id, "DT403")))
		/* with the adapters listed in the manifest (exported after get_peft_model), the fix
		 * means exporting again: it costs more than a plan key */
		ADD(DTL_FIX_AUTOCAST_OFF, NULL, 0, sim->manifest->adapter.present ? 1 : 3,
		    sim->manifest->adapter.present
		        ? "set adapter.autocast_adapter_dtype: false (get_peft_model(..., "
		          "autocast_adapter_dtype=False))"
		        : "create the adapters with get_peft_model(..., "
		          "autocast_adapter_dtype=False) "
		          "and export the model again");
	if ((!strcmp(id, "DT101") || !strcmp(id, "DT111")) && adapter)
		/* each LoRA module a unit or group of its own: every group then holds one dtype
		 * (fully_shard / FSDP1 wrap of the lora_A / lora_B modules) */
		ADD(DTL_FIX_WRAP_ADD, "**.lora_*.*", 0, 2,
		    "shard each adapter on its own: add '**.lora_*.*' to training.fsdp.wrap");
	if ((!strcmp(id, "DT101") || !strcmp(id, "DT111")) && mod && mod[0])
		ADD(DTL_FIX_WRAP_ADD, mod, 0, 2,
		    "shard '%s' on its own: add it to training.fsdp.wrap", mod);
	if (!strcmp(id, "DT101") && mod && mod[0])
		ADD(DTL_FIX_IGNORE_ADD, dtl_arena_sprintf(a, "%s.**", mod), 0, 3,
		    "leave '%s' out of FSDP: add '%s.**' to training.fsdp.ignored", mod, mod);
	if (!strcmp(id, "DT102")) {
		ADD(DTL_FIX_USE_ORIG_PARAMS, NULL, 0, 1, "set training.fsdp.use_orig_params: true");
		if (mod && mod[0])
			ADD(DTL_FIX_WRAP_ADD, mod, 0, 2,
			    "shard '%s' on its own: add it to training.fsdp.wrap", mod);
	}
	if (!strcmp(id, "DT501") && !strncmp(f->message, "the DPO reference model", 23)) {
		ADD(DTL_FIX_VERSION, "0.7.2", 0, 2,
		    "upgrade trl: training.versions.trl: \"0.7.2\" (PR #687)");
		if (fix)
			fix->framework = DTL_FW_TRL;
	}
	if (!strcmp(id, "DT103") && !strncmp(f->message, "QDoRA", 5)) {
		ADD(DTL_FIX_VERSION, "0.12.0", 0, 2,
		    "upgrade peft: training.versions.peft: \"0.12.0\" (PR #1806)");
		if (fix)
			fix->framework = DTL_FW_PEFT;
	} else if ((!strcmp(id, "DT103") || !strcmp(id, "DT401")) &&
	           sim->manifest->quantization.method) {
		enum dtl_dtype want =
		    sim->rp.mode_dtype != DTL_DTYPE_NONE ? sim->rp.mode_dtype : DTL_DTYPE_BF16;
		ADD(DTL_FIX_QUANT_STORAGE, NULL, want, 1,
		    "set quantization.quant_storage: %s (bnb_4bit_quant_storage)",
		    dtl_dtype_name(want));
	}
	if (!strcmp(id, "DT401") && sim->rp.plan.strategy == DTL_STRATEGY_FSDP2 &&
	    t != DTL_NONE_INDEX && !dtl_dtype_is_floating(sim->t.dtype[t]) &&
	    (sim->rp.version_assumed[DTL_FW_ACCELERATE] ||
	     !dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_IGNORE_PARAMS4BIT))) {
		/* accelerate >= 1.14 keeps frozen non-floating Params4bit out of FSDP2 sharding
		 * (PR #3987); the only cure for a checkpoint stored quantized in uint8 */
		ADD(DTL_FIX_VERSION, "1.14.0", 0, 2,
		    "launch with accelerate >= 1.14: training.versions.accelerate: \"1.14.0\" "
		    "(keeps non-floating Params4bit out of FSDP2 sharding, PR #3987; needs torch "
		    ">= 2.7)");
		if (fix)
			fix->framework = DTL_FW_ACCELERATE;
	}
	if (!strcmp(id, "DT501") && t != DTL_NONE_INDEX &&
	    strncmp(f->message, "the DPO reference model", 23) != 0)
		/* facts §4.3: GatheredParameters gathers the partitioned tensor for the read; a
		 * code change, proven by taking the read out of direct_access */
		ADD(DTL_FIX_GATHER_CONTEXT, sim->t.name[t], 0, 3,
		    "code change: read '%s' inside `with deepspeed.zero.GatheredParameters(%s):`",
		    sim->t.name[t], sim->t.name[t]);
	if (!strcmp(id, "DT404"))
		ADD(DTL_FIX_QUANT_STORAGE, NULL, sim->rp.mode_dtype, 1,
		    "set quantization.quant_storage: %s", dtl_dtype_name(sim->rp.mode_dtype));
	if (!strcmp(id, "DT124")) {
		/* PR #8215 is after 0.19.5; its first release is unread, so the newest known */
		ADD(DTL_FIX_VERSION, "0.19.8", 0, 2,
		    "upgrade DeepSpeed: training.versions.deepspeed: \"0.19.8\" (PR #8215, merged "
		    "2026-08-19; the first release with it is unverified)");
		if (fix)
			fix->framework = DTL_FW_DEEPSPEED;
	}
	if (!strcmp(id, "DT121")) {
		ADD(DTL_FIX_VERSION, "0.19.3", 0, 2,
		    "upgrade DeepSpeed: training.versions.deepspeed: "
		    "\"0.19.3\" (PR #8073)");
		if (fix)
			fix->framework = DTL_FW_DEEPSPEED;
		ADD(DTL_FIX_ALLGATHER_SEQUENTIAL, NULL, 0, 1,
		    "set training.zero3.allgather_sequential: true (stage3_allgather_sequential)");
		ADD(DTL_FIX_PERSISTENCE_ZERO, NULL, 0, 1,
		    "set training.zero3.persistence_threshold: 0 "
		    "(stage3_param_persistence_threshold)");
	}
	if (!strcmp(id, "DT131") && sim->rp.plan.strategy == DTL_STRATEGY_FSDP2 &&
	    !sim->rp.version_assumed[DTL_FW_ACCELERATE] &&
	    dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_CARVE_EMBED_TAIL) &&
	    !dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_TIED_TAIL)) {
		/* accelerate 1.15 keeps tied embeddings in one tail group (PR #4171) */
		ADD(DTL_FIX_VERSION, "1.15.0", 0, 2,
		    "upgrade accelerate: training.versions.accelerate: \"1.15.0\" (PR #4171 shards "
		    "tied embeddings in one group)");
		if (fix)
			fix->framework = DTL_FW_ACCELERATE;
	}
	if (!strcmp(id, "DT131") && f->group && f->group->module != DTL_NONE_INDEX) {
		const struct dtl_module *gm = &sim->modules[f->group->module];
		for (size_t i = 0; i < sim->rp.wrap.count; i++) {
			const struct dtl_pattern *p = &sim->rp.wrap.items[i];
			if (gm->wrap && p->loc.line == gm->wrap->loc.line &&
			    p->loc.column == gm->wrap->loc.column)
				ADD(DTL_FIX_WRAP_REMOVE, dtl_arena_strndup(a, p->text, p->len), 0,
				    1,
				    "remove '%.*s' from training.fsdp.wrap (keep the tied modules "
				    "together)",
				    (int)p->len, p->text);
		}
	}
	if (!strcmp(id, "DT201") && mod && mod[0] &&
	    (sim->rp.plan.strategy == DTL_STRATEGY_FSDP1 ||
	     sim->rp.plan.strategy == DTL_STRATEGY_FSDP2)) {
		/* the finding stands for all its tensors: one pattern for all their modules */
		const char *all = modules_glob(a, sim, f);
		if (all && all[0])
			mod = all;
		ADD(DTL_FIX_IGNORE_ADD, dtl_arena_sprintf(a, "%s.**", mod), 0, 3,
		    "keep '%s' out of FSDP's cast: add '%s.**' to training.fsdp.ignored", mod, mod);
	}
	if (!strcmp(id, "DT202") && mod) {
		const char *leaf = strrchr(mod, '.') ? strrchr(mod, '.') + 1 : mod;
		ADD(DTL_FIX_KEEP_STRICT_ADD, leaf, 0, 1,
		    "pin the router: add '%s' to "
		    "model.keep_in_fp32_strict",
		    leaf);
	}
	if (!strcmp(id, "DT301") && t != DTL_NONE_INDEX) {
		enum dtl_dtype want =
		    sim->rp.mode_dtype != DTL_DTYPE_NONE ? sim->rp.mode_dtype : DTL_DTYPE_BF16;
		if (sim->rp.plan.strategy == DTL_STRATEGY_FSDP1)
			ADD(DTL_FIX_FSDP_BUFFER_DTYPE, NULL, want, 1,
			    "set training.fsdp.buffer_dtype: %s", dtl_dtype_name(want));
		if (sim->rp.plan.strategy == DTL_STRATEGY_ZERO3)
			ADD(DTL_FIX_ZERO3_BUFFER_DTYPE, NULL, want, 1,
			    "set training.zero3.data_types.buffer_dtype: %s", dtl_dtype_name(want));
	}
	if (!strcmp(id, "DT302") && t != DTL_NONE_INDEX && sim->rp.zero_init &&
	    dtl_sim_behavior(sim, DTL_B_HF_ROPE_CACHE_FLOAT_ARANGE)) {
		ADD(DTL_FIX_VERSION, "4.38.0", 0, 2,
		    "upgrade transformers: training.versions.transformers: \"4.38.0\" (PR #28760)");
		if (fix)
			fix->framework = DTL_FW_TRANSFORMERS;
	}
	if (!strcmp(id, "DT302") && t != DTL_NONE_INDEX &&
	    sim->rp.plan.strategy == DTL_STRATEGY_ZERO3 &&
	    dtl_sim_behavior(sim, DTL_B_DS_BLANKET_MODULE_CAST)) {
		/* rules/versions.yaml deepspeed-blanket-module-cast: from 0.19.2 initialize casts
		 * per policy and leaves buffers alone without data_types.buffer_dtype (PR #8066) */
		ADD(DTL_FIX_VERSION, "0.19.2", 0, 2,
		    "upgrade DeepSpeed: training.versions.deepspeed: \"0.19.2\" (PR #8066 keeps "
		    "buffers out of initialize's cast)");
		if (fix)
			fix->framework = DTL_FW_DEEPSPEED;
	}
	if (!strcmp(id, "DT302") && t != DTL_NONE_INDEX &&
	    sim->rp.plan.strategy == DTL_STRATEGY_ZERO3 &&
	    sim->rp.plan.zero3.buffer_dtype != DTL_DTYPE_NONE &&
	    sim->rp.plan.zero3.buffer_dtype != DTL_DTYPE_F32)
		/* the buffers' policy itself casts them: keep them in float32 */
		ADD(DTL_FIX_ZERO3_BUFFER_DTYPE, NULL, DTL_DTYPE_F32, 1,
		    "keep buffers in float32: set training.zero3.data_types.buffer_dtype: float32");
	if (!strcmp(id, "DT801")) {
		/* each is kept only when the re-simulation no longer reports DT801 */
		/* the smallest doubling of the world size that the accounting says fits */
		int64_t n = sim->rp.plan.world_size ? sim->rp.plan.world_size : 1, w = 0;
		for (int k = 1; k <= 6 && !w; k++) {
			struct dtl_memory_what_if what = {.world_size = n << k,
			                                  .prefetch_bucket_size = -1};
			struct dtl_memory mem;
			dtl_memory_compute(sim, &what, &mem);
			if (mem.total <= (uint64_t)sim->rp.plan.device_memory)
				w = n << k;
		}
		if (w)
			ADD(DTL_FIX_WORLD_SIZE, dtl_arena_sprintf(a, "%lld", (long long)w), 0, 2,
			    "set training.world_size: %lld (more ranks to shard over)",
			    (long long)w);
		if (sim->rp.plan.strategy == DTL_STRATEGY_ZERO3)
			ADD(DTL_FIX_OFFLOAD_OPTIMIZER, NULL, 0, 2,
			    "set training.zero3.offload_optimizer: cpu (offload_optimizer.device: "
			    "cpu)");
		if (sim->rp.plan.strategy == DTL_STRATEGY_FSDP1 ||
		    sim->rp.plan.strategy == DTL_STRATEGY_FSDP2)
			ADD(DTL_FIX_FSDP_CPU_OFFLOAD, NULL, 0, 2,
			    "set training.fsdp.cpu_offload: true (parameters and optimizer states "
			    "on "
			    "the host)");
		if (sim->rp.plan.optimizer != DTL_OPTIMIZER_ADAMW_8BIT)
			ADD(DTL_FIX_OPTIMIZER_8BIT, NULL, 0, 1,
			    "set training.optimizer: adamw_8bit (bitsandbytes AdamW8bit states)");
	}
	if (!strcmp(id, "DT302") && sim->rp.plan.strategy == DTL_STRATEGY_FSDP1)
		ADD(DTL_FIX_FSDP_BUFFER_DTYPE, NULL, DTL_DTYPE_NONE, 1,
		    "set training.fsdp.buffer_dtype: null (FSDP1 leaves buffers uncast)");
#undef ADD
	return fix ? 0 : -ENOMEM;
}

static struct dtl_patterns append(struct dtl_arena *arena, const struct dtl_patterns *base,
                                  const char *text, bool *ok)
{
	struct dtl_patterns p = *base;
	p.items = dtl_arena_calloc(arena, base->count + 1, sizeof(*p.items));
	*ok = p.items != NULL;
	if (!p.items)
		return p;
	if (base->count)
		memcpy(p.items, base->items, base->count * sizeof(*p.items));
	p.items[base->count].text = text;
	p.items[base->count].len = (uint32_t)strlen(text);
	p.count = base->count + 1;
	p.present = true;
	return p;
}

int dtl_fix_apply(const struct dtl_fix *fix, struct dtl_manifest *m, struct dtl_plan *plan,
                  struct dtl_arena *arena)
{
	static const struct dtl_loc fixed = {.file = "--fix-plan", .line = 1, .column = 1};
	bool ok = true;

	switch (fix->kind) {
	case DTL_FIX_VERSION:
		if (dtl_version_parse(fix->text, strlen(fix->text),
		                      &plan->versions[fix->framework]) < 0)
			return -EINVAL;
		plan->version_locs[fix->framework] = fixed;
		break;
	case DTL_FIX_ALLGATHER_SEQUENTIAL:
		plan->zero3.allgather_sequential = DTL_TRUE;
		plan->zero3.allgather_sequential_loc = fixed;
		break;
	case DTL_FIX_PERSISTENCE_ZERO:
		plan->zero3.persistence_threshold = 0;
		plan->zero3.persistence_auto = false;
		plan->zero3.persistence_threshold_loc = fixed;
		break;
	case DTL_FIX_AUTOCAST_OFF:
		m->adapter.autocast_adapter_dtype = DTL_FALSE;
		m->adapter.autocast_adapter_dtype_loc = fixed;
		/* explicit adapters (exported after get_peft_model) take the base dtype */
		for (size_t i = 0; i < m->tensor_count && !m->adapter.present; i++) {
			const char *n = m->tensors[i].name;
			if (strstr(n, ".lora_") && m->tensors[i].dtype == DTL_DTYPE_F32) {
				struct dtl_tensor_decl *copy =
				    dtl_arena_calloc(arena, m->tensor_count, sizeof(*copy));
				if (!copy)
					return -ENOMEM;
				memcpy(copy, m->tensors, m->tensor_count * sizeof(*copy));
				m->tensors = copy;
				for (size_t k = 0; k < m->tensor_count; k++)
					if (strstr(copy[k].name, ".lora_") &&
					    copy[k].dtype == DTL_DTYPE_F32)
						copy[k].dtype =
						    DTL_DTYPE_NONE; /* the checkpoint dtype */
				break;
			}
		}
		break;
	case DTL_FIX_QUANT_STORAGE:
		m->quantization.quant_storage = fix->dtype;
		m->quantization.quant_storage_loc = fixed;
		break;
	case DTL_FIX_USE_ORIG_PARAMS:
		plan->fsdp.use_orig_params = DTL_TRUE;
		plan->fsdp.use_orig_params_loc = fixed;
		break;
	case DTL_FIX_WRAP_ADD: {
		const struct dtl_patterns *base =
		    plan->fsdp.wrap.present ? &plan->fsdp.wrap : &m->model.no_split_modules;
		plan->fsdp.wrap = append(arena, base, fix->text, &ok);
		break;
	}
	case DTL_FIX_WRAP_REMOVE: {
		struct dtl_patterns w =
		    plan->fsdp.wrap.present ? plan->fsdp.wrap : m->model.no_split_modules;
		struct dtl_pattern *items = dtl_arena_calloc(arena, w.count + 1, sizeof(*items));
		size_t n = 0;
		if (!items)
			return -ENOMEM;
		for (size_t i = 0; i < w.count; i++)
			if (strlen(fix->text) != w.items[i].len ||
			    memcmp(w.items[i].text, fix->text, w.items[i].len) != 0)
				items[n++] = w.items[i];
		w.items = items;
		w.count = n;
		w.present = true;
		plan->fsdp.wrap = w;
		break;
	}
	case DTL_FIX_IGNORE_ADD:
		plan->fsdp.ignored = append(arena, &plan->fsdp.ignored, fix->text, &ok);
		break;
	case DTL_FIX_FSDP_BUFFER_DTYPE:
		plan->fsdp.buffer_dtype = fix->dtype;
		plan->fsdp.buffer_dtype_loc = fixed;
		break;
	case DTL_FIX_ZERO3_BUFFER_DTYPE:
		plan->zero3.buffer_dtype = fix->dtype;
		plan->zero3.buffer_dtype_loc = fixed;
		break;
	case DTL_FIX_KEEP_STRICT_ADD:
		m->model.keep_in_fp32_strict =
		    append(arena, &m->model.keep_in_fp32_strict, fix->text, &ok);
		break;
	case DTL_FIX_WORLD_SIZE:
		plan->world_size = strtoll(fix->text, NULL, 10);
		plan->world_size_loc = fixed;
		break;
	case DTL_FIX_OFFLOAD_OPTIMIZER:
		plan->zero3.offload_optimizer = DTL_OFFLOAD_CPU;
		plan->zero3.offload_optimizer_loc = fixed;
		break;
	case DTL_FIX_FSDP_CPU_OFFLOAD:
		plan->fsdp.cpu_offload = DTL_TRUE;
		plan->fsdp.cpu_offload_loc = fixed;
		break;
	case DTL_FIX_OPTIMIZER_8BIT:
		plan->optimizer = DTL_OPTIMIZER_ADAMW_8BIT;
		plan->optimizer_loc = fixed;
		break;
	case DTL_FIX_GATHER_CONTEXT: {
		/* the read, gathered, is no longer one of a partitioned tensor: the patterns
		 * naming exactly it go (a glob naming others too stays: nothing is proven) */
		struct dtl_patterns d = plan->direct_access;
		struct dtl_pattern *items = dtl_arena_calloc(arena, d.count + 1, sizeof(*items));
		size_t n = 0;
		if (!items)
			return -ENOMEM;
		for (size_t i = 0; i < d.count; i++)
			if (strlen(fix->text) != d.items[i].len ||
			    memcmp(d.items[i].text, fix->text, d.items[i].len) != 0)
				items[n++] = d.items[i];
		d.items = items;
		d.count = n;
		plan->direct_access = d;
		break;
	}
	}
	return ok ? 0 : -ENOMEM;
}

static size_t serious(const struct dtl_findings *f)
{
	const struct dtl_finding *items = f->items.items;
	size_t n = 0;
	for (size_t i = 0; i < f->items.count; i++)
		n += items[i].severity >= DTL_SEVERITY_WARNING;
	return n;
}

static int evaluate(const struct dtl_fix_context *ctx, const struct dtl_sim *sim,
                    const struct dtl_findings *findings, const char *target,
                    enum dtl_severity target_severity, struct dtl_fix *fix, struct dtl_error *error)
{
	struct dtl_manifest m = *ctx->manifest;
	struct dtl_plan plan = *ctx->plan;
	struct dtl_sim *after = dtl_arena_alloc(ctx->arena, sizeof(*after));
	struct dtl_findings *found = dtl_arena_alloc(ctx->arena, sizeof(*found));
	struct dtl_strmap before;
	int r;

	if (!after || !found)
		return -ENOMEM;
	if ((r = dtl_fix_apply(fix, &m, &plan, ctx->arena)) < 0)
		return r;
	/* the plan is applied through the manifest: the simulation reads both */
	m.plan = plan;
	r = dtl_sim_run(after, &m, &plan, ctx->behaviors, ctx->arena, error);
	if (r < 0)
		return r;
	after->ops = ctx->ops;
	if ((r = dtl_rules_run(after, ctx->selection, found, error)) < 0)
		return r;
	dtl_strmap_init(&before, ctx->arena);
	const struct dtl_finding *old = findings->items.items, *now = found->items.items;
	for (size_t i = 0; i < findings->items.count; i++) {
		const char *k = dtl_fix_finding_key(ctx->arena, sim, &old[i]);
		if (!k || dtl_strmap_put(&before, k, strlen(k), (int64_t)i) < 0)
			return -ENOMEM;
	}
	fix->before = serious(findings);
	fix->after = serious(found);
	fix->total_after = found->items.count;
	fix->resolves = true;
	fix->appeared = dtl_arena_calloc(ctx->arena, found->items.count + 1, sizeof(char *));
	if (!fix->appeared)
		return -ENOMEM;
	for (size_t i = 0; i < found->items.count; i++) {
		const char *k = dtl_fix_finding_key(ctx->arena, after, &now[i]);
		if (!k)
			return -ENOMEM;
		/* still there at the same severity or worse (a DT102 error may become a warning) */
		if (strcmp(k, target) == 0 && now[i].severity >= target_severity)
			fix->resolves = false;
		if (dtl_strmap_get(&before, k, strlen(k)) < 0 &&
		    now[i].severity >= DTL_SEVERITY_WARNING)
			fix->appeared[fix->appeared_count++] =
			    dtl_arena_sprintf(ctx->arena, "%s %s: %s", now[i].rule->id,
			                      now[i].rule->name, now[i].message);
	}
	return 0;
}

static int rank(const void *pa, const void *pb)
{
	const struct dtl_fix *a = pa, *b = pb;
	if (a->resolves != b->resolves)
		return a->resolves ? -1 : 1;
	if (a->appeared_count != b->appeared_count)
		return a->appeared_count < b->appeared_count ? -1 : 1;
	if (a->after != b->after)
		return a->after < b->after ? -1 : 1;
	if (a->cost != b->cost)
		return a->cost - b->cost;
	if (a->total_after != b->total_after)
		return a->total_after < b->total_after ? -1 : 1;
	return strcmp(a->title, b->title);
}

int dtl_fix_plan_build(const struct dtl_fix_context *ctx, const struct dtl_sim *sim,
                       const struct dtl_findings *findings, struct dtl_fix_plan *ret_plan,
                       struct dtl_error *error)
{
	const struct dtl_finding *f = findings->items.items;
	struct dtl_fix_plan plan = {0};
	int r;

	plan.items = dtl_arena_calloc(ctx->arena, findings->items.count + 1, sizeof(*plan.items));
	if (!plan.items)
		return -ENOMEM;
	for (size_t i = 0; i < findings->items.count; i++) {
		struct dtl_vec fixes = {0};
		struct dtl_fix_item *item = &plan.items[plan.count++];
		item->finding = &f[i];
		if ((r = candidates(sim, &f[i], ctx->arena, &fixes)) < 0)
			return r;
		const char *target = dtl_fix_finding_key(ctx->arena, sim, &f[i]);
		if (!target)
			return -ENOMEM;
		for (size_t k = 0; k < fixes.count; k++)
			if ((r = evaluate(ctx, sim, findings, target, f[i].severity,
			                  &((struct dtl_fix *)fixes.items)[k], error)) < 0)
				return r;
		/* only candidates that remove the finding are proposed */
		size_t kept = 0;
		struct dtl_fix *all = fixes.items;
		for (size_t k = 0; k < fixes.count; k++)
			if (all[k].resolves)
				all[kept++] = all[k];
		if (kept > 1)
			qsort(all, kept, sizeof(*all), rank);
		item->fixes = all;
		item->count = kept;
	}
	*ret_plan = plan;
	return 0;
}
