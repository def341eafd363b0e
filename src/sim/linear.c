/* SPDX-License-Identifier: MIT */
/*
 * Which modules are nn.Linear: what bitsandbytes replaces and what PEFT's all-linear targets.
 * The architecture profile's linear_modules say it when there is a profile; otherwise a module
 * whose class is Linear, or whose own parameters are one 2-D weight (and maybe a bias) and
 * whose name is not an embedding, a norm or the output layer.
 */
#include <string.h>

#include "dtypelint/core/glob.h"
#include "sim-private.h"

static bool name_has(const char *path, uint32_t len, const char *word)
{
	size_t n = strlen(word);
	for (uint32_t i = 0; i + n <= len; i++)
		if (memcmp(path + i, word, n) == 0)
			return true;
	return false;
}

static bool is_output_layer(const struct dtl_module *md)
{
	static const char lm[] = "lm_head";
	return (md->path_len == sizeof(lm) - 1 && memcmp(md->path, lm, sizeof(lm) - 1) == 0) ||
	       (md->path_len > sizeof(lm) &&
	        memcmp(md->path + md->path_len - (sizeof(lm) - 1), lm, sizeof(lm) - 1) == 0 &&
	        md->path[md->path_len - sizeof(lm)] == '.');
}

/* An entry of linear_modules for some versions only (transformers 5's MoE routers are
 * modules of their own, not nn.Linear: rules/versions.yaml transformers-v4-moe-gate-linear) */
static bool linear_in_versions(const struct dtl_sim *sim, const struct dtl_profile *p, size_t i)
{
	uint16_t gate = p->linear_gates ? p->linear_gates[i] : 0;
	return !gate || dtl_sim_behavior(sim, (enum dtl_behavior)(gate - 1));
}

bool dtl_sim_linear(const struct dtl_sim *sim, uint32_t mod, uint32_t *ret_weight, int64_t *ret_out,
                    int64_t *ret_in)
{
	const struct dtl_module *md = &sim->modules[mod];
	const struct dtl_profile *p = sim->model.profile;
	uint32_t weight = DTL_NONE_INDEX;
	size_t others = 0;

	for (uint32_t t = md->first_tensor; t != DTL_NONE_INDEX; t = sim->t.next_in_module[t]) {
		const char *leaf = sim->t.name[t] + md->path_len + (md->path_len ? 1 : 0);
		if (sim->t.kind[t] != DTL_KIND_PARAM || (sim->t.flags[t] & DTL_TF_ALIAS))
			continue;
		if (strcmp(leaf, "weight") == 0)
			weight = t;
		else if (strcmp(leaf, "bias") != 0)
			others++;
	}
	if (weight == DTL_NONE_INDEX || others || md->path_len == 0)
		return false;
	uint32_t decl = sim->t.decl[weight];
	const struct dtl_tensor_decl *d =
	    decl != DTL_NONE_INDEX ? &sim->manifest->tensors[decl] : NULL;
	bool linear;
	if (p) {
		linear = false;
		for (size_t i = 0; i < p->linear_modules.count && !linear; i++)
			linear =
			    linear_in_versions(sim, p, i) &&
			    dtl_glob_match(p->linear_modules.items[i].text,
			                   p->linear_modules.items[i].len, md->path, md->path_len);
	} else if (md->class_name) {
		linear = strcmp(md->class_name, "Linear") == 0;
	} else {
		linear = d && d->shape && d->rank == 2 && !is_output_layer(md) &&
		         !name_has(md->path, md->path_len, "embed") &&
		         !name_has(md->path, md->path_len, "norm") &&
		         !name_has(md->path, md->path_len, "wte") &&
		         !name_has(md->path, md->path_len, "wpe");
	}
	if (!linear)
		return false;
	if (ret_weight)
		*ret_weight = weight;
	if (ret_out)
		*ret_out = d && d->shape && d->rank == 2 ? d->shape[0] : -1;
	if (ret_in)
		*ret_in = d && d->shape && d->rank == 2 ? d->shape[1] : -1;
	return true;
}

bool dtl_sim_is_output_layer(const struct dtl_sim *sim, uint32_t mod)
{
	return is_output_layer(&sim->modules[mod]);
}
