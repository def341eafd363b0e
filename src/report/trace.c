/* SPDX-License-Identifier: MIT */
/* --trace GLOB: the full dtype history of the matching tensors, stage by stage. */
#include <errno.h>
#include <string.h>

#include "dtypelint/glob.h"
#include "dtypelint/report.h"

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

int dtl_report_trace(FILE *out, const struct dtl_report_input *inputs, size_t n,
                     const char *const *globs, size_t glob_count)
{
	for (size_t i = 0; i < n; i++) {
		const struct dtl_sim *sim = inputs[i].sim;
		for (size_t k = 0; sim && k < sim->t.count; k++) {
			uint32_t t = sim->t.order[k];
			bool match = false;
			for (size_t g = 0; g < glob_count && !match; g++)
				match = dtl_glob_match(globs[g], strlen(globs[g]), sim->t.name[t],
				                       sim->t.name_len[t]);
			if (!match)
				continue;
			struct dtl_event history[64];
			size_t h = dtl_sim_history(sim, t, history, 64);
			struct dtl_loc loc = dtl_sim_tensor_loc(sim, t);
			dtl_report_put_path(out, loc.file);
			fprintf(out, ":%u:%u: trace: '", loc.line, loc.column);
			dtl_report_put_escaped(out, sim->t.name[t]);
			fprintf(out, "' %s, stored %s, computes in %s\n",
			        sim->t.kind[t] == DTL_KIND_BUFFER        ? "(buffer)"
			        : sim->t.kind[t] == DTL_KIND_QUANT_STATE ? "(quantization state)"
			        : (sim->t.flags[t] & DTL_TF_TRAINABLE)   ? "(trainable)"
			                                                 : "(frozen)",
			        dtl_dtype_name(sim->t.dtype[t]),
			        dtl_dtype_name(sim->t.compute_dtype[t]));
			for (size_t e = 0; e < h; e++) {
				const struct dtl_event *ev = &history[e];
				fprintf(out, "  %-12s %s -> %s: ", dtl_stage_name(ev->stage),
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
