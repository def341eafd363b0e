/* SPDX-License-Identifier: MIT */
/* DT701 kernel-dtype-not-dispatched: a custom op is fed a dtype its dispatch or checks do not
 * accept. */

#include <errno.h>
#include <string.h>

#include "rule-check.h"
#include "dtypelint/core/glob.h"

/* The dtype a module computes in: its own floating parameters' compute dtype, else the first
 * floating parameter below it. */
static enum dtl_dtype module_dtype(const struct dtl_sim *sim, uint32_t mod, uint32_t *ret_tensor)
{
	const struct dtl_module *md = &sim->modules[mod];
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (sim->t.kind[t] != DTL_KIND_PARAM ||
		    !dtl_dtype_is_floating(sim->t.compute_dtype[t]))
			continue;
		const char *name = sim->t.name[t];
		if (sim->t.name_len[t] > md->path_len && name[md->path_len] == '.' &&
		    memcmp(name, md->path, md->path_len) == 0) {
			*ret_tensor = t;
			return sim->t.compute_dtype[t];
		}
	}
	return DTL_DTYPE_NONE;
}

static int dt701_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_model_info *m = &sim->manifest->model;

	if (!c->ops)
		return 0;
	for (size_t b = 0; b < m->kernel_count; b++) {
		const struct dtl_glob_map *binding = &m->kernels[b];
		bool reported[DTL_DTYPE_COUNT] = {false};
		for (uint32_t mod = 1; mod < sim->module_count; mod++) {
			const struct dtl_module *md = &sim->modules[mod];
			uint32_t tensor = DTL_NONE_INDEX;
			if (!dtl_glob_match(binding->glob.text, binding->glob.len, md->path,
			                    md->path_len))
				continue;
			enum dtl_dtype d = module_dtype(sim, mod, &tensor);
			if (d == DTL_DTYPE_NONE || reported[d])
				continue;
			reported[d] = true;
			struct dtl_op_answer answer;
			memset(&answer, 0, sizeof(answer));
			int r = c->ops->query(c->ops->data, binding->value, d, &answer);
			if (r == -ENOENT) {
				struct dtl_finding *f = dtl_check_report(
				    c, DTL_SEVERITY_INFO, binding->glob.loc,
				    "no contract for op '%s' in the scanned sources",
				    binding->value);
				if (!f)
					return -ENOMEM;
				f->effect =
				    "the op is not registered in the sources given to --kernels, "
				    "so its dtypes cannot be checked";
				f->fix =
				    "pass the directory that registers the op to --kernels, or fix "
				    "the op name in model.kernels";
				break;
			}
			if (r < 0)
				return r;
			if (answer.verdict != DTL_OP_REJECTS &&
			    answer.verdict != DTL_OP_MAY_REJECT &&
			    answer.verdict != DTL_OP_UNCHECKED)
				continue;
			enum dtl_severity sev =
			    answer.verdict == DTL_OP_REJECTS      ? DTL_SEVERITY_ERROR
			    : answer.verdict == DTL_OP_MAY_REJECT ? DTL_SEVERITY_WARNING
			                                          : DTL_SEVERITY_WARNING;
			struct dtl_finding *f = dtl_check_report(
			    c, sev, binding->glob.loc,
			    answer.verdict == DTL_OP_UNCHECKED
			        ? "'%.*s' feeds %s to op '%s', which does not handle it"
			        : "'%.*s' feeds %s to op '%s', which %s it",
			    (int)md->path_len, md->path, dtl_dtype_name(d), binding->value,
			    answer.verdict == DTL_OP_REJECTS ? "rejects" : "may reject");
			if (!f)
				return -ENOMEM;
			if (answer.verdict == DTL_OP_UNCHECKED) {
				f->effect = dtl_arena_sprintf(c->arena, "%s", answer.message);
			} else {
				f->error_text =
				    dtl_arena_sprintf(c->arena, "RuntimeError: %s", answer.message);
				f->error_when = "in forward, when the op first runs";
			}
			f->error_versions =
			    dtl_arena_sprintf(c->arena, "op '%s' (%s)", binding->value,
			                      answer.function ? answer.function : "?");
			f->fix = dtl_arena_sprintf(
			    c->arena,
			    "feed the op a dtype it dispatches (cast around the call, or keep "
			    "'%.*s' "
			    "in a dtype the op accepts), or add %s to the op's dispatch",
			    (int)md->path_len, md->path, dtl_dtype_scalar_type_name(d));
			if (tensor != DTL_NONE_INDEX &&
			    dtl_check_add_tensor(c, f, tensor, NULL) < 0)
				return -ENOMEM;
			if (answer.evidence.file) {
				struct dtl_note *notes =
				    dtl_arena_calloc(c->arena, f->note_count + 1, sizeof(*notes));
				if (!notes)
					return -ENOMEM;
				if (f->note_count)
					memcpy(notes, f->notes, f->note_count * sizeof(*notes));
				notes[f->note_count].loc = answer.evidence;
				notes[f->note_count].loc.file = dtl_arena_strndup(
				    c->arena, answer.evidence_file, strlen(answer.evidence_file));
				notes[f->note_count].tensor = DTL_NONE_INDEX;
				notes[f->note_count].text = dtl_arena_sprintf(
				    c->arena, "the %s that decides it (%s)",
				    answer.evidence_kind ? answer.evidence_kind : "fact",
				    answer.function ? answer.function : binding->value);
				f->notes = notes;
				f->note_count++;
			}
		}
	}
	return 0;
}

DTL_RULE(dt701) = {
    .id = "DT701",
    .name = "kernel-dtype-not-dispatched",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "a custom op is fed a dtype its dispatch or checks do not accept",
    .explanation =
        "Custom ops (fused optimizers, quantizers, attention, MoE GEMMs) accept only the "
        "dtypes their AT_DISPATCH_* macros and TORCH_CHECKs allow. Fed another dtype, they "
        "raise in forward — after the model has loaded on the GPUs: '\"foo_cuda\" not "
        "implemented for 'BFloat16'' or 'expected scalar type Float but found Half'. "
        "dtypelint scans the op's C++/CUDA sources (--kernels DIR) and checks the dtype the "
        "simulation gives each module bound to the op in model.kernels.",
    .example = "model: {kernels: {\"model.layers.*.mlp.experts\": moe_gemm}}\n"
               "dtypelint --kernels csrc/ manifest.yaml",
    .fix = "Cast around the op, keep the module in a dtype the op dispatches, or extend the "
           "op's dispatch.",
    .facts = "https://github.com/pytorch/pytorch/blob/v1.13.1/aten/src/ATen/Dispatch.h#L236-L253 "
             "https://github.com/pytorch/pytorch/blob/v1.13.1/aten/src/ATen/Dispatch.h#L236-L536",
    .check = dt701_check,
};
