/* SPDX-License-Identifier: MIT */
/* --memory: the per-rank model states (include/dtypelint/memory.h) as text and as JSON. */
#include <errno.h>

#include "dtypelint/report.h"

static void put_dtypes(FILE *out, const struct dtl_memory_line *l)
{
	char buf[32];
	bool first = true;

	for (int d = 0; d < DTL_DTYPE_COUNT; d++) {
		if (!l->by_dtype[d])
			continue;
		fprintf(out, "%s%s %s", first ? "" : ", ", dtl_dtype_name((enum dtl_dtype)d),
		        dtl_memory_format(l->by_dtype[d], buf, sizeof(buf)));
		first = false;
	}
	if (first)
		fputs("-", out);
}

int dtl_report_memory_text(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	char a[32], b[32];

	for (size_t i = 0; i < n; i++) {
		const struct dtl_memory *m = inputs[i].memory;
		if (!m || !inputs[i].sim)
			continue;
		const struct dtl_plan *plan = &inputs[i].sim->rp.plan;
		fputs("\n", out);
		dtl_report_put_path(out, inputs[i].sim->manifest->file);
		fprintf(out,
		        ": model states per rank (%s, world size %lld, %s, optimizer %s; "
		        "activations are not counted)\n",
		        dtl_strategy_name(m->strategy), (long long)m->world_size,
		        dtl_precision_name(plan->precision), dtl_optimizer_name(m->optimizer));
		for (int p = 0; p < DTL_MEM_PART_COUNT; p++) {
			const struct dtl_memory_line *l = &m->line[p];
			fprintf(out, "  %-12s %10s", dtl_memory_part_name(p),
			        dtl_memory_format(l->device, a, sizeof(a)));
			if (l->host)
				fprintf(out, "  (host %s)",
				        dtl_memory_format(l->host, b, sizeof(b)));
			fputs("  [", out);
			put_dtypes(out, l);
			fputs("]\n      ", out);
			fputs(l->rule, out);
			if (p == DTL_MEM_GATHERED && m->gathered_name) {
				fputs(" (largest: '", out);
				dtl_report_put_escaped(out, m->gathered_name);
				fputs("')", out);
			}
			fprintf(out, "\n      source: %s\n", l->source);
		}
		fprintf(out, "  %-12s %10s", "total", dtl_memory_format(m->total, a, sizeof(a)));
		if (plan->device_memory > 0)
			fprintf(out, "  of device_memory %s: %s",
			        dtl_memory_format((uint64_t)plan->device_memory, b, sizeof(b)),
			        m->total > (uint64_t)plan->device_memory ? "does not fit" : "fits");
		fprintf(out, "\n  %-12s %10s\n", "host", dtl_memory_format(m->host, a, sizeof(a)));
		if (m->unknown_numel)
			fprintf(out, "  %zu tensor%s without a shape counted as 0 bytes\n",
			        m->unknown_numel, m->unknown_numel == 1 ? "" : "s");
	}
	return ferror(out) ? -EIO : 0;
}

void dtl_report_memory_json(FILE *out, const struct dtl_sim *sim, const struct dtl_memory *m)
{
	const struct dtl_plan *plan = &sim->rp.plan;

	fputs("{\"strategy\": ", out);
	dtl_json_string(out, dtl_strategy_name(m->strategy));
	fprintf(out, ", \"world_size\": %lld, \"optimizer\": ", (long long)m->world_size);
	dtl_json_string(out, dtl_optimizer_name(m->optimizer));
	if (plan->device_memory > 0)
		fprintf(out, ", \"device_memory\": %lld", (long long)plan->device_memory);
	else
		fputs(", \"device_memory\": null", out);
	fputs(", \"activations_counted\": false, \"per_rank\": {", out);
	for (int p = 0; p < DTL_MEM_PART_COUNT; p++)
		fprintf(out, "%s\"%s\": %llu", p ? ", " : "", dtl_memory_part_name(p),
		        (unsigned long long)m->line[p].device);
	fprintf(out, ", \"total\": %llu, \"host\": %llu}, \"parts\": [",
	        (unsigned long long)m->total, (unsigned long long)m->host);
	for (int p = 0; p < DTL_MEM_PART_COUNT; p++) {
		const struct dtl_memory_line *l = &m->line[p];
		fprintf(out, "%s{\"name\": \"%s\", \"device\": %llu, \"host\": %llu, \"dtypes\": [",
		        p ? ", " : "", dtl_memory_part_name(p), (unsigned long long)l->device,
		        (unsigned long long)l->host);
		bool first = true;
		for (int d = 0; d < DTL_DTYPE_COUNT; d++) {
			if (!l->by_dtype[d])
				continue;
			fputs(first ? "{\"dtype\": " : ", {\"dtype\": ", out);
			dtl_json_string(out, dtl_dtype_name((enum dtl_dtype)d));
			fprintf(out, ", \"bytes\": %llu}", (unsigned long long)l->by_dtype[d]);
			first = false;
		}
		fputs("], \"rule\": ", out);
		dtl_json_string(out, l->rule);
		fputs(", \"source\": ", out);
		dtl_json_string(out, l->source);
		fputc('}', out);
	}
	fputs("], \"gathered_from\": ", out);
	if (m->gathered_name)
		dtl_json_string(out, m->gathered_name);
	else
		fputs("null", out);
	fprintf(out, ", \"unknown_numel\": %zu}", m->unknown_numel);
}
