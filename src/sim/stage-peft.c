/* SPDX-License-Identifier: MIT */
/*
 * The peft stage: get_peft_model injects LoRA matrices (and DoRA magnitudes, modules_to_save
 * copies) and freezes everything else (rules/versions.yaml: peft-autocast-adapter-dtype,
 * peft-4bit-compute-dtype, peft-qdora-fsdp-copy). An adapter is created at torch's default dtype
 * (float32), moved to its base layer's dtype when that is floating (a 4-bit base: its compute dtype
 * from peft 0.19, its storage dtype before), then — autocast_adapter_dtype, default true from peft
 * 0.12 — float16/bfloat16 (and float8 from 0.19) go to float32. An adapter added later
 * (add_adapter, load_adapter) follows the same path with that call's flag, with the exceptions of
 * versions.yaml peft-add-adapter-autocast and peft-task-add-adapter-drops-autocast.
 */
#include <errno.h>
#include <regex.h>
#include <string.h>

#include "sim-private.h"

static const char *fact_autocast = "https://github.com/huggingface/peft/pull/1706";
static const char *fact_quant = "https://github.com/huggingface/peft/pull/2893";
static const char *fact_save =
    "https://github.com/huggingface/peft/blob/5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40/src/peft/"
    "tuners/lora/layer.py#L915-L980";

struct target_matcher {
	const struct dtl_adapter *adapter;
	bool all_linear;
	bool regex_compiled;
	regex_t regex;
};

static bool suffix_match(const char *path, uint32_t len, const char *target, size_t tlen)
{
	/* PEFT: key == target or key.endswith("." + target) */
	if (len == tlen)
		return memcmp(path, target, tlen) == 0;
	return len > tlen && path[len - tlen - 1] == '.' &&
	       memcmp(path + len - tlen, target, tlen) == 0;
}

static bool targeted(const struct target_matcher *m, const struct dtl_sim *sim, uint32_t mod)
{
	const struct dtl_module *md = &sim->modules[mod];
	const struct dtl_adapter *a = m->adapter;

	if (dtl_sim_lf_lora_excluded(sim, md->path, md->path_len, m->all_linear))
		return false;
	if (m->all_linear)
		return !dtl_sim_is_output_layer(sim, mod);
	if (m->regex_compiled) {
		char buf[4096];
		regmatch_t match;
		if (md->path_len >= sizeof(buf))
			return false;
		memcpy(buf, md->path, md->path_len);
		buf[md->path_len] = '\0';
		/* re.fullmatch */
		return regexec(&m->regex, buf, 1, &match, 0) == 0 && match.rm_so == 0 &&
		       (size_t)match.rm_eo == md->path_len;
	}
	for (size_t i = 0; i < a->target_modules.count; i++)
		if (suffix_match(md->path, md->path_len, a->target_modules.items[i].text,
		                 a->target_modules.items[i].len))
			return true;
	return false;
}

/* The task types whose PeftModel subclass overrides add_adapter (peft_model.py). */
static bool task_overrides_add_adapter(const char *task_type)
{
	return task_type &&
	       (strcmp(task_type, "SEQ_CLS") == 0 || strcmp(task_type, "TOKEN_CLS") == 0 ||
	        strcmp(task_type, "QUESTION_ANS") == 0);
}

static bool autocast(const struct dtl_sim *sim, const char **ret_why, struct dtl_loc *ret_loc)
{
	const struct dtl_adapter *a = &sim->manifest->adapter;
	const struct dtl_plan *plan = &sim->rp.plan;

	*ret_loc = a->autocast_adapter_dtype_loc.line ? a->autocast_adapter_dtype_loc : a->loc;
	if (!dtl_sim_behavior(sim, DTL_B_PEFT_AUTOCAST_ADAPTER_DTYPE)) {
		*ret_why = "this peft has no autocast_adapter_dtype";
		return false;
	}
	/* peft < 0.19: add_adapter casts nothing; load_adapter casts after it with its own flag */
	if (a->added_with == DTL_ADDED_ADD_ADAPTER &&
	    !dtl_sim_behavior(sim, DTL_B_PEFT_ADD_ADAPTER_AUTOCAST)) {
		*ret_why = "this peft's add_adapter does not autocast";
		return false;
	}
	/* peft 0.19 - 0.20: the task-type subclasses' add_adapter drops the flag, and
	 * load_adapter's own cast afterwards returns early when it is False (PR #3668) */
	if (a->added_with != DTL_ADDED_GET_PEFT_MODEL && a->autocast_adapter_dtype == DTL_FALSE &&
	    task_overrides_add_adapter(a->task_type) &&
	    dtl_sim_behavior(sim, DTL_B_PEFT_TASK_ADD_ADAPTER_DROPS_AUTOCAST)) {
		*ret_why = dtl_arena_sprintf(
		    sim->arena, "task_type %s: this peft's %s drops autocast_adapter_dtype=False",
		    a->task_type,
		    a->added_with == DTL_ADDED_ADD_ADAPTER ? "add_adapter" : "load_adapter");
		if (!*ret_why)
			*ret_why = "this peft's task-type add_adapter drops autocast_adapter_dtype";
		*ret_loc = a->added_with_loc.line ? a->added_with_loc : a->loc;
		return true;
	}
	if (a->autocast_adapter_dtype != DTL_UNSET) {
		*ret_why = "adapter.autocast_adapter_dtype";
		return a->autocast_adapter_dtype == DTL_TRUE;
	}
	/* rules/versions.yaml trl-zero3-no-autocast: TRL >= 1.7 passes autocast_adapter_dtype=False
	 * under ZeRO-3 for models that are not quantized, in its core trainers (more trainers
	 * from 1.8) */
	if (plan->strategy == DTL_STRATEGY_ZERO3 && a->added_with == DTL_ADDED_GET_PEFT_MODEL &&
	    sim->manifest->quantization.method == DTL_QUANT_NONE && plan->trainer) {
		static const char *const core[] = {"trl-sft",    "trl-dpo", "trl-grpo", "trl-rloo",
		                                   "trl-reward", "trl-kto", NULL};
		static const char *const more[] = {"trl-cpo", "trl-orpo", "trl-bco", NULL};
		for (const char *const *t = core; *t; t++)
			if (strcmp(*t, plan->trainer) == 0 &&
			    dtl_sim_behavior(sim, DTL_B_TRL_ZERO3_NO_AUTOCAST)) {
				*ret_why = "TRL passes autocast_adapter_dtype=False under ZeRO-3";
				return false;
			}
		for (const char *const *t = more; *t; t++)
			if (strcmp(*t, plan->trainer) == 0 &&
			    dtl_sim_behavior(sim, DTL_B_TRL_ZERO3_NO_AUTOCAST_MORE)) {
				*ret_why = "TRL passes autocast_adapter_dtype=False under ZeRO-3";
				return false;
			}
	}
	*ret_why = "autocast_adapter_dtype defaults to true";
	return true;
}

/* The dtype PEFT moves a new adapter to: the base layer's, per quantization and version. */
static enum dtl_dtype base_dtype(const struct dtl_sim *sim, uint32_t weight, const char **ret_how,
                                 const char **ret_fact)
{
	const struct dtl_quantization *q = &sim->manifest->quantization;
	uint32_t f = sim->t.flags[weight];
	enum dtl_dtype d = sim->t.dtype[weight];

	*ret_fact = fact_quant;
	if (f & DTL_TF_INT8) {
		*ret_how = "an 8-bit base has no compute dtype: the adapter stays float32";
		return DTL_DTYPE_NONE;
	}
	if (f & DTL_TF_QUANTIZED) {
		if (dtl_sim_behavior(sim, DTL_B_PEFT_4BIT_COMPUTE_DTYPE)) {
			/* transformers passes bnb_4bit_compute_dtype, float32 by default */
			enum dtl_dtype c =
			    q->compute_dtype != DTL_DTYPE_NONE ? q->compute_dtype : DTL_DTYPE_F32;
			*ret_how = "moved to the 4-bit base's compute dtype";
			return c;
		}
		if (!dtl_dtype_is_floating(d)) {
			*ret_how = "this peft reads the 4-bit base's storage dtype, which is not "
			           "floating: the adapter stays float32";
			return DTL_DTYPE_NONE;
		}
		*ret_how = "moved to the 4-bit base's (floating) storage dtype";
		return d;
	}
	*ret_fact = fact_autocast;
	*ret_how = "moved to the base layer's dtype";
	return dtl_dtype_is_floating(d) ? d : DTL_DTYPE_NONE;
}

static int fail(struct dtl_error *error, struct dtl_loc loc, const char *name)
{
	return dtl_error_set(
	    error, loc, -EINVAL,
	    "adapter: '%s' is already in 'tensors' (exported after get_peft_model), "
	    "and the adapter section would inject it again; keep one of the two",
	    name);
}

/* One new adapter tensor with its dtype history. */
static int inject(struct dtl_sim *sim, const char *name, int64_t numel, enum dtl_dtype base,
                  const char *base_how, const char *base_fact, bool upcast, const char *upcast_why,
                  struct dtl_loc upcast_loc, struct dtl_error *error)
{
	const struct dtl_adapter *a = &sim->manifest->adapter;
	uint32_t t;
	char v[32];
	int r;

	if (dtl_sim_find(sim, name, strlen(name)) != DTL_NONE_INDEX)
		return fail(error, a->loc, name);
	r = dtl_sim_add_tensor(sim, name, (uint32_t)strlen(name), DTL_KIND_PARAM, DTL_DTYPE_F32,
	                       numel, DTL_TF_ADAPTER | DTL_TF_TRAINABLE, &t);
	if (r == -EEXIST)
		return fail(error, a->loc, name);
	if (r < 0)
		return r;
	if (a->created_as) {
		/* another framework's LoRA: created in the base dtype, never upcast */
		if (base != DTL_DTYPE_NONE && base != DTL_DTYPE_F32)
			return dtl_sim_set_dtype(sim, t, DTL_STAGE_PEFT, base, a->created_as,
			                         a->created_as_fact, a->loc);
		return dtl_sim_note(sim, t, DTL_STAGE_PEFT, a->created_as, a->created_as_fact,
		                    a->loc);
	}
	dtl_version_format(&sim->rp.plan.versions[DTL_FW_PEFT], v, sizeof(v));
	const char *created = dtl_arena_sprintf(
	    sim->arena, "peft %s creates it at torch's default dtype, float32", v);
	if ((r = dtl_sim_note(sim, t, DTL_STAGE_PEFT, created, fact_autocast, a->loc)) < 0)
		return r;
	if (base != DTL_DTYPE_NONE && base != DTL_DTYPE_F32) {
		const char *how =
		    dtl_arena_sprintf(sim->arena, "%s (%s)", base_how, dtl_dtype_name(base));
		if ((r = dtl_sim_set_dtype(sim, t, DTL_STAGE_PEFT, base, how, base_fact, a->loc)) <
		    0)
			return r;
	} else if (base == DTL_DTYPE_NONE) {
		if ((r = dtl_sim_note(sim, t, DTL_STAGE_PEFT, base_how, base_fact, a->loc)) < 0)
			return r;
	}
	enum dtl_dtype d = sim->t.dtype[t];
	bool fp8 = d == DTL_DTYPE_F8_E4M3FN || d == DTL_DTYPE_F8_E5M2;
	if (upcast &&
	    (dtl_dtype_is_half(d) || (fp8 && dtl_sim_behavior(sim, DTL_B_PEFT_AUTOCAST_FP8)))) {
		const char *why = dtl_arena_sprintf(sim->arena, "%s: upcast to float32 (%s)",
		                                    "autocast_adapter_dtype", upcast_why);
		if ((r = dtl_sim_set_dtype(sim, t, DTL_STAGE_PEFT, DTL_DTYPE_F32, why,
		                           fact_autocast, upcast_loc)) < 0)
			return r;
	}
	return 0;
}

/* PeftModelForSequenceClassification / TokenClassification add "classifier" and "score",
 * PeftModelForQuestionAnswering "qa_outputs", to modules_to_save: __init__ in every release
 * (peft 0.2.0 on), add_adapter / load_adapter only from 0.11.0 (rules/versions.yaml
 * peft-task-heads-modules-to-save; tests/oracle/DISAGREEMENTS.md D47) */
static bool task_head(const struct dtl_sim *sim, const struct dtl_module *md)
{
	static const char *const cls[] = {"classifier", "score", NULL};
	static const char *const qa[] = {"qa_outputs", NULL};
	const struct dtl_adapter *a = &sim->manifest->adapter;
	const char *task = a->task_type;
	const char *const *names = NULL;

	if (!task || (a->added_with != DTL_ADDED_GET_PEFT_MODEL &&
	              !dtl_sim_behavior(sim, DTL_B_PEFT_TASK_HEADS_SAVED)))
		return false;
	if (strcmp(task, "SEQ_CLS") == 0 || strcmp(task, "TOKEN_CLS") == 0)
		names = cls;
	else if (strcmp(task, "QUESTION_ANS") == 0)
		names = qa;
	for (; names && *names; names++)
		if (suffix_match(md->path, md->path_len, *names, strlen(*names)))
			return true;
	return false;
}

static int copy_module(struct dtl_sim *sim, uint32_t mod, bool head, struct dtl_error *error)
{
	const struct dtl_adapter *a = &sim->manifest->adapter;
	const struct dtl_module *md = &sim->modules[mod];
	/* adding tensors may move the module array: keep what we need */
	const char *path = md->path;
	uint32_t path_len = md->path_len;
	uint32_t own[64];
	size_t n = 0;
	int r;

	for (uint32_t t = md->first_tensor; t != DTL_NONE_INDEX && n < 64;
	     t = sim->t.next_in_module[t])
		if (sim->t.kind[t] == DTL_KIND_PARAM && !(sim->t.flags[t] & DTL_TF_ALIAS))
			own[n++] = t;
	for (size_t i = 0; i < n; i++) {
		uint32_t src = own[i], t;
		const char *leaf = sim->t.name[src] + path_len + (path_len ? 1 : 0);
		char *name = dtl_arena_sprintf(sim->arena, "%.*s.modules_to_save.%s.%s",
		                               (int)path_len, path, a->name, leaf);
		if (!name)
			return -ENOMEM;
		if (dtl_sim_find(sim, name, strlen(name)) != DTL_NONE_INDEX)
			return fail(error, a->loc, name);
		r = dtl_sim_add_tensor(sim, name, (uint32_t)strlen(name), DTL_KIND_PARAM,
		                       sim->t.dtype[src], sim->t.numel[src],
		                       DTL_TF_ADAPTER | DTL_TF_TRAINABLE, &t);
		if (r == -EEXIST)
			return fail(error, a->loc, name);
		if (r < 0)
			return r;
		/* ModulesToSaveWrapper deep-copies the module: the original dtype, and
		 * autocast_adapter_dtype does not touch it */
		const char *why = dtl_arena_sprintf(
		    sim->arena,
		    "modules_to_save%s: a trainable deep copy of '%s' in its dtype "
		    "(autocast_adapter_dtype does not touch it)",
		    head ? dtl_arena_sprintf(sim->arena, " (the %s head)", a->task_type) : "",
		    sim->t.name[src]);
		if ((r = dtl_sim_note(sim, t, DTL_STAGE_PEFT, why, fact_save, a->loc)) < 0)
			return r;
	}
	return 0;
}

/* A parameter's key ("<module>.<leaf>") PEFT's _inject_parameters matches against
 * target_parameters: equal, or ending in "." + the entry. */
static bool parameter_targeted(const struct dtl_adapter *a, const char *name, uint32_t len)
{
	for (size_t i = 0; i < a->target_parameters.count; i++)
		if (suffix_match(name, len, a->target_parameters.items[i].text,
		                 a->target_parameters.items[i].len))
			return true;
	return false;
}

/* Does the experts module have is_transposed = True (rules/versions.yaml
 * transformers-experts-is-transposed: @use_experts_implementation(is_transposed=True), the
 * only one of them in a profiled model gpt-oss's)? */
static bool experts_transposed(const struct dtl_sim *sim, const struct dtl_module *md)
{
	return md->class_name && strcmp(md->class_name, "GptOssExperts") == 0 &&
	       dtl_sim_behavior(sim, DTL_B_TRANSFORMERS_EXPERTS_IS_TRANSPOSED);
}

/* a * b * c as a tensor's numel, or -1 (unknown) when one is negative or it passes
 * DTL_NUMEL_MAX: a hostile shape must not overflow */
static int64_t numel3(int64_t a, int64_t b, int64_t c)
{
	int64_t ab, abc;
	if (a < 0 || b < 0 || c < 0 || __builtin_mul_overflow(a, b, &ab) ||
	    __builtin_mul_overflow(ab, c, &abc) || abc > DTL_NUMEL_MAX)
		return -1;
	return abc;
}

/* ParamWrapper's lora_A [r * E, in] and lora_B [out, r * E] numels for the parameter t of
 * module md (-1 when its shape is unknown): [E, d1, d2] gives in d1, out d2, [out, in] E 1,
 * then update_layer swaps them per release (rules/versions.yaml peft-param-wrapper-swap-*). */
static void wrapper_numels(const struct dtl_sim *sim, const struct dtl_module *md, uint32_t t,
                           int64_t r, int64_t *ret_a, int64_t *ret_b)
{
	uint32_t decl = sim->t.decl[t];
	const struct dtl_tensor_decl *d =
	    decl != DTL_NONE_INDEX ? &sim->manifest->tensors[decl] : NULL;
	*ret_a = *ret_b = -1;
	if (!d || !d->shape || (d->rank != 2 && d->rank != 3))
		return;
	bool three = d->rank == 3, transposed = experts_transposed(sim, md), swap = false;
	int64_t e = three ? d->shape[0] : 1;
	int64_t in = d->shape[1], out = three ? d->shape[2] : d->shape[0];
	if (dtl_sim_behavior(sim, DTL_B_PEFT_PARAM_WRAPPER_SWAP_3D))
		swap = three && !transposed;
	else if (dtl_sim_behavior(sim, DTL_B_PEFT_PARAM_WRAPPER_SWAP_TRANSPOSED))
		swap = transposed;
	if (swap) {
		int64_t x = in;
		in = out, out = x;
	}
	*ret_a = numel3(r, e, in);
	*ret_b = numel3(out, r, e);
}

/* Is the parameter one a fused experts module registers after the others? The manifest's
 * order is its names' (a safetensors header is sorted), not the module's: every experts
 * class dtypelint profiles registers gate_up_proj (and its bias) before down_proj (and its
 * bias), e.g. https://github.com/huggingface/transformers/blob/v5.0.0/src/transformers/
 * models/mixtral/modeling_mixtral.py and models/gpt_oss/modeling_gpt_oss.py (MixtralExperts,
 * GptOssExperts __init__; Qwen2/Qwen3-MoE's and DeepSeek V2/V3's alike in 5.24.0), so
 * down_proj* goes after the others, which keep the manifest's order
 * (tests/oracle/DISAGREEMENTS.md D74). */
static int registered_late(const char *name)
{
	const char *leaf = strrchr(name, '.');
	leaf = leaf ? leaf + 1 : name;
	return strncmp(leaf, "down_proj", 9) == 0;
}

/* LoRA target_parameters (rules/versions.yaml peft-lora-target-parameters): one ParamWrapper
 * per matched parameter of the module, each wrapping the one before, in the parameters'
 * registration order (the manifest's, down_proj* last: registered_late), so the k-th of n
 * wraps is reached through n - 1 - k base_layers: its
 * "<module>{.base_layer}.lora_A.<adapter>.weight" and lora_B. The wrapped parameter keeps its
 * name here (".base_layer" * n in torch), as a wrapped Linear's weight does. At most 64
 * parameters of one module are wrapped (an experts module has 2 to 4). */
static int wrap_parameters(struct dtl_sim *sim, uint32_t mod, bool upcast, const char *upcast_why,
                           struct dtl_loc upcast_loc, struct dtl_error *error)
{
	const struct dtl_adapter *a = &sim->manifest->adapter;
	const struct dtl_module *md = &sim->modules[mod];
	const char *path = md->path;
	int plen = (int)md->path_len;
	uint32_t own[64];
	int64_t na[64], nb[64];
	size_t n = 0;
	int r = 0;

	/* two passes: down_proj last (registered_late) */
	for (int late = 0; late < 2; late++)
		for (uint32_t t = md->first_tensor; t != DTL_NONE_INDEX;
		     t = sim->t.next_in_module[t]) {
			if (sim->t.kind[t] != DTL_KIND_PARAM || (sim->t.flags[t] & DTL_TF_ALIAS) ||
			    registered_late(sim->t.name[t]) != late ||
			    !parameter_targeted(a, sim->t.name[t], sim->t.name_len[t]))
				continue;
			if (n == sizeof(own) / sizeof(own[0]))
				/* no silent truncation: a real experts module has 2 to 4 */
				return dtl_error_set(error, a->target_parameters.loc, -EINVAL,
				                     "adapter.target_parameters: more than %zu "
				                     "parameters of module '%.*s' match; dtypelint "
				                     "nests at most that many ParamWrappers",
				                     sizeof(own) / sizeof(own[0]), plen, path);
			own[n++] = t;
		}
	for (size_t i = 0; i < n; i++)
		wrapper_numels(sim, md, own[i], a->r, &na[i], &nb[i]);
	/* adding tensors may move the module array: md is not read below */
	for (size_t i = 0; i < n && r >= 0; i++) {
		const char *how, *fact;
		enum dtl_dtype base = base_dtype(sim, own[i], &how, &fact);
		char nest[64 * 11 + 1] = "";
		for (size_t k = i + 1; k < n; k++)
			strcat(nest, ".base_layer");
		char *lora_a = dtl_arena_sprintf(sim->arena, "%.*s%s.lora_A.%s.weight", plen, path,
		                                 nest, a->name);
		char *lora_b = dtl_arena_sprintf(sim->arena, "%.*s%s.lora_B.%s.weight", plen, path,
		                                 nest, a->name);
		if (!lora_a || !lora_b)
			return -ENOMEM;
		r = inject(sim, lora_a, na[i], base, how, fact, upcast, upcast_why, upcast_loc,
		           error);
		if (r >= 0)
			r = inject(sim, lora_b, nb[i], base, how, fact, upcast, upcast_why,
			           upcast_loc, error);
	}
	return r;
}

/* target_modules as one string (all-linear or a regular expression), or NULL for a list.
 * TRL's ModelConfig makes a list of one name that name (rules/versions.yaml
 * trl-one-target-is-regex), a regular expression, unless it is "all-linear": when a TRL
 * trainer's script parses the recipe (a plan with no trainer builds its LoraConfig itself). */
static const char *target_string(const struct dtl_sim *sim)
{
	const struct dtl_adapter *a = &sim->manifest->adapter;
	const char *trainer = sim->rp.plan.trainer;

	if (a->target_modules_string || !a->target_one_item_regex || !trainer ||
	    strncmp(trainer, "trl-", 4) != 0 || a->target_modules.count != 1 ||
	    !dtl_sim_behavior(sim, DTL_B_TRL_ONE_TARGET_IS_REGEX))
		return a->target_modules_string;
	return a->target_modules.items[0].text;
}

int dtl_stage_peft(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_adapter *a = &sim->manifest->adapter;
	struct target_matcher m = {.adapter = a};
	const char *upcast_why;
	int r = 0;

	if (!a->present)
		return 0;
	const char *string = target_string(sim);
	if (string) {
		if (strcmp(string, "all-linear") == 0) {
			m.all_linear = true;
		} else {
			/* a string is a regular expression PEFT full-matches against module
			 * names; POSIX extended syntax covers the usual "(q|v)_proj" forms */
			if (regcomp(&m.regex, string, REG_EXTENDED) != 0)
				return dtl_error_set(
				    error, a->target_modules.loc, -EINVAL,
				    "adapter.target_modules: '%s' is not a regular "
				    "expression this dtypelint understands",
				    string);
			m.regex_compiled = true;
			sim->peft_target_regex = string;
		}
	}
	struct dtl_loc upcast_loc;
	bool upcast = autocast(sim, &upcast_why, &upcast_loc);
	size_t nmod = sim->module_count; /* injected modules are not targets */
	/* PEFT leaves only adapters trainable */
	for (uint32_t t = 0; t < sim->t.count; t++)
		if (!(sim->t.flags[t] & DTL_TF_ADAPTER))
			sim->t.flags[t] &= ~DTL_TF_TRAINABLE;
	for (uint32_t mod = 1; mod < nmod && r >= 0; mod++) {
		uint32_t weight;
		int64_t out, in;
		bool save = false;
		const struct dtl_module *md = &sim->modules[mod];
		for (size_t i = 0; i < a->modules_to_save.count && !save; i++)
			save =
			    suffix_match(md->path, md->path_len, a->modules_to_save.items[i].text,
			                 a->modules_to_save.items[i].len);
		bool head = !save && task_head(sim, md);
		if (save || head) {
			r = copy_module(sim, mod, head, error);
			continue;
		}
		if (a->target_parameters.count && sim->modules[mod].path_len &&
		    (r = wrap_parameters(sim, mod, upcast, upcast_why, upcast_loc, error)) < 0)
			break;
		md = &sim->modules[mod];
		if (!targeted(&m, sim, mod))
			continue;
		sim->peft_targeted++;
		if (!dtl_sim_linear(sim, mod, &weight, &out, &in))
			continue;
		const char *how, *fact;
		enum dtl_dtype base = base_dtype(sim, weight, &how, &fact);
		int plen = (int)md->path_len;
		const char *path = md->path;
		char *lora_a =
		    dtl_arena_sprintf(sim->arena, "%.*s.lora_A.%s.weight", plen, path, a->name);
		char *lora_b =
		    dtl_arena_sprintf(sim->arena, "%.*s.lora_B.%s.weight", plen, path, a->name);
		if (!lora_a || !lora_b)
			r = -ENOMEM;
		if (r >= 0)
			r = inject(sim, lora_a, in >= 0 ? a->r * in : -1, base, how, fact, upcast,
			           upcast_why, upcast_loc, error);
		if (r >= 0)
			r = inject(sim, lora_b, out >= 0 ? out * a->r : -1, base, how, fact, upcast,
			           upcast_why, upcast_loc, error);
		if (r >= 0 && a->use_dora == DTL_TRUE) {
			char *mag =
			    dtl_arena_sprintf(sim->arena, "%.*s.lora_magnitude_vector.%s.weight",
			                      plen, path, a->name);
			r = mag ? inject(sim, mag, out, base, how, fact, upcast, upcast_why,
			                 upcast_loc, error)
			        : -ENOMEM;
		}
	}
	if (m.regex_compiled)
		regfree(&m.regex);
	if (r < 0)
		return r;
	return dtl_sim_rebuild_order(sim);
}
