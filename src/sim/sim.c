/* SPDX-License-Identifier: MIT */
/* Resolving the plan's defaults and running the stages in the order the real software runs. */
#include <errno.h>
#include <string.h>

#include "sim-private.h"
#include "keep-set.h"

bool dtl_sim_behavior(const struct dtl_sim *sim, enum dtl_behavior behavior)
{
	return dtl_behavior_active(sim->behaviors, behavior, sim->rp.plan.versions);
}

struct dtl_loc dtl_sim_plan_loc(const struct dtl_sim *sim, struct dtl_loc a, struct dtl_loc b)
{
	if (a.line)
		return a;
	if (b.line)
		return b;
	if (sim->rp.plan.strategy_loc.line)
		return sim->rp.plan.strategy_loc;
	if (sim->rp.plan.loc.line)
		return sim->rp.plan.loc;
	struct dtl_loc top = {.file = sim->manifest->file, .line = 1, .column = 1};
	return top;
}

/* The profile's _no_split_modules as the plan's transformers has it: the classes whose
 * entry names no behaviour, or one in force (`{name: CLASS, behaviour: KEY}`, LLaVA's list,
 * gathered from its children from 5.1.0: rules/versions.yaml
 * transformers-no-split-gathers-children); findings point at the manifest's architecture
 * line, not into the compiled-in profile */
static void profile_wrap(struct dtl_sim *sim, struct dtl_patterns *wrap)
{
	const struct dtl_profile *p = sim->model.profile;
	struct dtl_pattern *items = dtl_arena_calloc(sim->arena, wrap->count + 1, sizeof(*items));
	size_t n = 0;

	if (!items)
		return;
	for (size_t i = 0; i < wrap->count; i++) {
		uint16_t gate = p->no_split_gates ? p->no_split_gates[i] : 0;
		if (gate && !dtl_sim_behavior(sim, (enum dtl_behavior)(gate - 1)))
			continue;
		items[n] = wrap->items[i];
		items[n++].loc = sim->manifest->model.architecture_loc;
	}
	wrap->items = items;
	wrap->count = n;
}

/* NeMo Automodel's FSDP2 (an Automodel recipe, no fsdp.wrap of dtypelint's own plan): its
 * DefaultParallelizationStrategy does not read _no_split_modules, it calls fully_shard on every
 * child of a ModuleList, then on the root (rules/versions.yaml recipes:
 * automodel-fsdp2-module-list-units). The wrap list becomes that rule's one description, located
 * at the recipe's strategy; the shard stage finds the ModuleList children itself. */
static bool automodel_wrap(struct dtl_sim *sim, struct dtl_resolved_plan *rp)
{
	const char *kind = sim->manifest->recipe.kind;
	static const char rule[] = "every child of a ModuleList, then the root (NeMo Automodel's "
	                           "apply_fsdp2_sharding_recursively)";

	if (!kind || strcmp(kind, "nemo-automodel") != 0 ||
	    rp->plan.strategy != DTL_STRATEGY_FSDP2 || rp->plan.fsdp.wrap.present)
		return false;
	rp->wrap_module_lists = true;
	rp->wrap = (struct dtl_patterns){0};
	struct dtl_pattern *p = dtl_arena_calloc(sim->arena, 1, sizeof(*p));
	if (!p) /* the rule holds without its description */
		return true;
	p->text = rule;
	p->len = (uint32_t)(sizeof(rule) - 1);
	p->loc = dtl_sim_plan_loc(sim, rp->plan.strategy_loc, rp->plan.loc);
	rp->wrap = (struct dtl_patterns){.items = p, .count = 1, .loc = p->loc};
	return true;
}

/* docs/design.md §3: absent plan fields take the framework's own default; missing versions default
 * to the newest in the version table (and findings say so). */
static void resolve_plan(struct dtl_sim *sim, const struct dtl_plan *plan)
{
	struct dtl_resolved_plan *rp = &sim->rp;
	const struct dtl_manifest *m = sim->manifest;

	rp->plan = *plan;
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		if (!rp->plan.versions[fw].set) {
			rp->plan.versions[fw] = sim->behaviors->newest[fw];
			rp->version_assumed[fw] = true;
		}
	}
	/* NeMo Automodel's default FSDP2 policy reduced in bfloat16 up to 0.4.0
	 * (rules/versions.yaml automodel-fsdp2-default-reduce-fp32) */
	if (rp->plan.fsdp.reduce_by_automodel &&
	    !dtl_sim_behavior(sim, DTL_B_AUTOMODEL_FSDP2_DEFAULT_REDUCE_FP32))
		rp->plan.fsdp.reduce_dtype = DTL_DTYPE_BF16;
	if (rp->plan.world_size == 0) {
		/* a sharding plan is for more than one rank; a world size of 1 must be said */
		rp->plan.world_size = rp->plan.strategy == DTL_STRATEGY_SINGLE ||
		                              rp->plan.strategy == DTL_STRATEGY_UNSET
		                          ? 1
		                          : 2;
		rp->world_size_assumed = true;
	}
	if (rp->plan.fsdp.wrap.present) {
		rp->wrap = rp->plan.fsdp.wrap;
	} else if (!automodel_wrap(sim, rp)) {
		/* _no_split_modules is the de facto default wrap class list (accelerate's FSDP
		 * plugin,
		 * https://github.com/huggingface/accelerate/blob/16cb6eb80dd9aa8b4df1a63ef57863e455d53b83/src/accelerate/utils/dataclasses.py)
		 */
		rp->wrap = sim->model.no_split_modules;
		rp->wrap_from_model = true;
		if (sim->model.no_split_from_profile)
			profile_wrap(sim, &rp->wrap);
	}
	/* default 1e5, model threshold default sys.maxsize
	 * (https://github.com/deepspeedai/DeepSpeed/blob/v0.19.5/deepspeed/runtime/zero/config.py);
	 * "auto" = 10 * hidden (transformers' HfTrainerDeepSpeedConfig,
	 * https://github.com/huggingface/transformers/blob/v4.57.0/src/transformers/integrations/deepspeed.py)
	 */
	if (rp->plan.zero3.persistence_auto && m->model.hidden_size > 0)
		rp->persistence_threshold = 10 * m->model.hidden_size;
	else if (rp->plan.zero3.persistence_threshold >= 0)
		rp->persistence_threshold = rp->plan.zero3.persistence_threshold;
	else
		rp->persistence_threshold = 100000;
	rp->model_persistence_threshold = rp->plan.zero3.model_persistence_threshold >= 0
	                                      ? rp->plan.zero3.model_persistence_threshold
	                                      : INT64_MAX;
	rp->zero_init = rp->plan.strategy == DTL_STRATEGY_ZERO3 && rp->plan.zero3.init != DTL_FALSE;
	rp->mode_dtype = rp->plan.precision == DTL_PRECISION_BF16   ? DTL_DTYPE_BF16
	                 : rp->plan.precision == DTL_PRECISION_FP16 ? DTL_DTYPE_F16
	                                                            : DTL_DTYPE_NONE;
	/* the HF Trainer's fsdp option with no version: FSDP2 from transformers 5.10.1 */
	if (rp->plan.fsdp_version_from_trainer && rp->plan.strategy == DTL_STRATEGY_FSDP1 &&
	    dtl_behavior_active(sim->behaviors, DTL_B_HF_TRAINER_FSDP2_DEFAULT, rp->plan.versions))
		rp->plan.strategy = DTL_STRATEGY_FSDP2;
	/* zero.Init: bf16, else fp16, else torch.float (rules/versions.yaml
	 * deepspeed-init-tensor-overrides, partition_parameters.py at its commit) */
	rp->zero_init_dtype = rp->mode_dtype != DTL_DTYPE_NONE           ? rp->mode_dtype
	                      : rp->plan.precision == DTL_PRECISION_FP32 ? DTL_DTYPE_F32
	                                                                 : DTL_DTYPE_NONE;
}

/* The keep-in-fp32 lists compiled for the era's matcher (src/model/keep-fp32.c, which needs
 * the plan's versions) and keyed on the tensors' names. */
static int compile_keep_lists(struct dtl_sim *sim)
{
	struct dtl_model_view *v = &sim->model;
	const struct dtl_patterns *lists[] = {&v->keep_in_fp32, &v->keep_in_fp32_strict};
	struct dtl_keep_set **sets[] = {&v->keep_set, &v->strict_set};
	int r;

	for (size_t l = 0; l < 2; l++)
		if (!(*sets[l] = dtl_arena_calloc(sim->arena, 1, sizeof(**sets[l]))))
			return -ENOMEM;
	for (size_t l = 0; l < 2; l++)
		if ((r = dtl_keep_set_build(*sets[l], dtl_sim_keep_matcher(sim), lists[l]->items,
		                            lists[l]->count, sim->arena)) < 0 ||
		    (r = dtl_keep_set_tune(*sets[l], (const char *const *)sim->t.name,
		                           sim->t.name_len, sim->t.count)) < 0)
			return r;
	return 0;
}

/* A tied alias the checkpoint leaves out is the same Parameter as the tensor it is tied to:
 * after each stage it takes that tensor's dtype (the stages cast the stored one only). */
static int sync_aliases(struct dtl_sim *sim, enum dtl_stage stage)
{
	for (uint32_t t = 0; t < sim->t.count; t++) {
		uint32_t of = sim->t.alias_of[t];
		if (!(sim->t.flags[t] & DTL_TF_ALIAS) || of == DTL_NONE_INDEX ||
		    sim->t.dtype[t] == sim->t.dtype[of])
			continue;
		const char *reason = dtl_arena_sprintf(
		    sim->arena, "tied to '%s', the same Parameter", sim->t.name[of]);
		if (!reason)
			return -ENOMEM;
		int r =
		    dtl_sim_set_dtype(sim, t, stage, sim->t.dtype[of], reason,
		                      "https://github.com/huggingface/transformers/blob/"
		                      "040ba146759afc625c77f49d04982bb54873995f/src/transformers/"
		                      "modeling_utils.py (tied weights)",
		                      dtl_sim_tensor_loc(sim, t));
		if (r < 0)
			return r;
	}
	return 0;
}

/* The stages in order, each followed by the tied aliases' catch-up */
static int run_stages(struct dtl_sim *sim, struct dtl_error *error)
{
	static int (*const stages[])(struct dtl_sim *, struct dtl_error *) = {
	    dtl_stage_load,         dtl_stage_zero_init, dtl_stage_quantize,
	    dtl_stage_kbit_prepare, dtl_stage_peft,      dtl_stage_trainer,
	    dtl_stage_engine,       dtl_stage_shard,     dtl_stage_compute};
	static const enum dtl_stage ids[] = {
	    DTL_STAGE_LOAD,         DTL_STAGE_ZERO_INIT, DTL_STAGE_QUANTIZE,
	    DTL_STAGE_KBIT_PREPARE, DTL_STAGE_PEFT,      DTL_STAGE_TRAINER,
	    DTL_STAGE_ENGINE,       DTL_STAGE_SHARD,     DTL_STAGE_COMPUTE};
	int r;

	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++)
		if ((r = stages[i](sim, error)) < 0 ||
		    (ids[i] != DTL_STAGE_COMPUTE && (r = sync_aliases(sim, ids[i])) < 0))
			return r;
	return 0;
}

int dtl_sim_run(struct dtl_sim *sim, const struct dtl_manifest *manifest,
                const struct dtl_plan *plan, const struct dtl_behavior_table *behaviors,
                struct dtl_arena *arena, struct dtl_error *error)
{
	int r;

	memset(sim, 0, sizeof(*sim));
	sim->arena = arena;
	sim->manifest = manifest;
	sim->behaviors = behaviors;
	r = dtl_sim_resolve_model(sim, error);
	if (r < 0)
		return r;
	resolve_plan(sim, plan);
	if (sim->rp.persistence_threshold < 0 ||
	    (sim->rp.plan.zero3.persistence_auto && manifest->model.hidden_size <= 0 &&
	     sim->rp.plan.strategy == DTL_STRATEGY_ZERO3))
		return dtl_error_set(error, sim->rp.plan.zero3.persistence_threshold_loc, -EINVAL,
		                     "'persistence_threshold: auto' needs model.hidden_size "
		                     "(accelerate uses 10 * hidden_size)");
	if ((r = dtl_sim_build_table(sim, error)) < 0 || (r = compile_keep_lists(sim)) < 0 ||
	    (r = dtl_sim_assign_classes(sim, error)) < 0 ||
	    (r = dtl_sim_find_routers(sim, error)) < 0 || (r = run_stages(sim, error)) < 0)
		return r;
	return 0;
}
