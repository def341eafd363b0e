/* SPDX-License-Identifier: MIT */
/* DT604 not-modelled: the set-up uses something dtypelint does not model. */
#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* tensors named as a listed part are shown; past this many, only counted */
enum { SHOWN_TENSORS = 4 };

static bool ends_with(const char *name, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);
	return len >= n && memcmp(name + len - n, suffix, n) == 0;
}

static bool touched(const struct dtl_unmodelled *u, const struct dtl_sim *sim, uint32_t t)
{
	for (size_t k = 0; k < 3 && u->suffixes[k]; k++)
		if (ends_with(sim->t.name[t], sim->t.name_len[t], u->suffixes[k]))
			return true;
	return false;
}

/* One finding per part the importers recorded (struct dtl_unmodelled in plan.h), with the
 * tensors it touches where their names say so. */
static int report(struct dtl_check *c, const struct dtl_unmodelled *u)
{
	const struct dtl_sim *sim = c->sim;
	size_t count = 0;

	for (uint32_t t = 0; u->suffixes[0] && t < sim->t.count; t++)
		count += touched(u, sim, t);
	struct dtl_finding *f =
	    count ? dtl_check_report(c, c->rule->severity, u->loc,
	                             "%s is not modelled: %zu tensor%s it touches are traced "
	                             "as declared, not as it stores and computes them",
	                             u->what, count, count == 1 ? "" : "s")
	          : dtl_check_report(c, c->rule->severity, u->loc,
	                             "%s is not modelled: this run cannot judge it", u->what);
	if (!f)
		return -ENOMEM;
	f->effect = u->touches;
	f->fix = "check this part of the set-up by other means; --fail-on info makes the run "
	         "fail while something is not modelled";
	size_t shown = 0;
	for (uint32_t t = 0; count && t < sim->t.count && shown < SHOWN_TENSORS; t++)
		if (touched(u, sim, t)) {
			if (dtl_check_add_tensor(c, f, t, "not modelled") < 0)
				return -ENOMEM;
			shown++;
		}
	return 0;
}

static int dt604_check(struct dtl_check *c)
{
	const struct dtl_unmodelled *u = c->sim->rp.plan.unmodelled.items;
	int r;

	for (size_t i = 0; i < c->sim->rp.plan.unmodelled.count; i++)
		if ((r = report(c, &u[i])) < 0)
			return r;
	return 0;
}

DTL_RULE(dt604) = {
    .id = "DT604",
    .name = "not-modelled",
    .severity = DTL_SEVERITY_INFO,
    .summary = "the set-up uses a format or engine dtypelint does not model",
    .explanation =
        "dtypelint simulates bitsandbytes quantization, FSDP1, FSDP2, DeepSpeed ZeRO-3, "
        "PEFT and the trainers that drive them. A set-up that also uses another "
        "quantization format (MXFP4, FP8, GPTQ, AWQ, torchao, ...), FP8 training, ZeRO++ "
        "quantized gradients or hierarchical partitioning, a rollout engine (vLLM, SGLang), "
        "tensor or pipeline parallelism, Megatron, or a reward model's value head (OpenRLHF's "
        "reward model) is traced without that part: the "
        "tensors it touches keep the dtypes the files declare. Each such part is reported "
        "with the key that asks for it and the tensors it touches, so that a run that "
        "cannot judge a set-up is never read as a clean one.",
    .example = "quantization_config: {quant_method: mxfp4}   # config.json of gpt-oss-20b",
    .fix = "Check the part by other means. `--fail-on info` fails the run while something "
           "is not modelled.",
    .facts = "https://huggingface.co/EchoCog/gpt-oss-20b/blob/"
             "5dfb7652794772d1b366e8b949a4663bd52af9eb/config.json (MXFP4 quantization_config; "
             "*_blocks and *_scales in its weight_map)",
    .check = dt604_check,
};
