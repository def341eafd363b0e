/* SPDX-License-Identifier: MIT */
/* --trace GLOB: the full dtype history of the matching tensors, stage by stage. */
#include <errno.h>
#include <string.h>

#include "dtypelint/core/glob.h"
#include "dtypelint/report/report.h"

static void print_loc(FILE *out, const struct dtl_loc *loc)
{
	if (!loc->file)
		return;
	fputs(" (", out);
	dtl_report_put_escaped(out, loc->file);
	if (loc->line)
		fprintf(out, ":%u:%u", loc->line, loc->column);
	fputc(')', out);
}

/* Whether glob matches a tensor of any input */
static bool matches_any(const struct dtl_report_input *inputs, size_t n, const char *glob)
{
	for (size_t i = 0; i < n; i++) {
		const struct dtl_input_view *v = inputs[i].view;
		for (size_t t = 0; v && t < v->tensor_count; t++)
			if (dtl_glob_match(glob, strlen(glob), v->name[t], v->name_len[t]))
				return true;
	}
	return false;
}

/* How a tensor takes part in training: a tied name is the Parameter of the name it is tied to
 * (its history says which), so it is neither frozen nor trainable on its own. */
static const char *role(const struct dtl_input_view *v, uint32_t t)
{
	if (v->kind[t] == DTL_KIND_BUFFER)
		return "(buffer)";
	if (v->kind[t] == DTL_KIND_QUANT_STATE)
		return "(quantization state)";
	if (v->flags[t] & DTL_TF_ALIAS)
		return "(tied)";
	return (v->flags[t] & DTL_TF_TRAINABLE) ? "(trainable)" : "(frozen)";
}

int dtl_report_trace(FILE *out, const struct dtl_report_input *inputs, size_t n,
                     const char *const *globs, size_t glob_count)
{
	/* a glob that matches nothing would print nothing: say so, with the rule users miss */
	for (size_t g = 0; g < glob_count; g++) {
		if (matches_any(inputs, n, globs[g]))
			continue;
		fputs("--trace '", out);
		dtl_report_put_escaped(out, globs[g]);
		fputs("': no tensor matches ('*' stays within one dotted segment, '**' spans "
		      "any number of them)\n",
		      out);
	}
	for (size_t i = 0; i < n; i++) {
		const struct dtl_input_view *v = inputs[i].view;
		for (size_t k = 0; v && k < v->tensor_count; k++) {
			uint32_t t = v->order[k];
			bool match = false;
			for (size_t g = 0; g < glob_count && !match; g++)
				match = dtl_glob_match(globs[g], strlen(globs[g]), v->name[t],
				                       v->name_len[t]);
			if (!match)
				continue;
			struct dtl_trace_step history[64];
			size_t h = dtl_input_view_history(v, t, history, 64);
			struct dtl_loc loc = dtl_input_view_tensor_loc(v, t);
			dtl_report_put_path(out, loc.file);
			fprintf(out, ":%u:%u: trace: '", loc.line, loc.column);
			dtl_report_put_escaped(out, v->name[t]);
			fprintf(out, "' %s, stored %s, computes in %s\n", role(v, t),
			        dtl_dtype_name(v->dtype[t]), dtl_dtype_name(v->compute_dtype[t]));
			for (size_t e = 0; e < h; e++) {
				const struct dtl_trace_step *ev = &history[e];
				fprintf(out, "  %-12s %s -> %s: ", ev->name,
				        dtl_dtype_name(ev->from), dtl_dtype_name(ev->to));
				dtl_report_put_escaped(out, ev->reason);
				print_loc(out, &ev->loc);
				if (ev->fact)
					fprintf(out, " [%s]", ev->fact);
				fputc('\n', out);
			}
		}
	}
	return ferror(out) ? -EIO : 0;
}
