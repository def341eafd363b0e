/* SPDX-License-Identifier: MIT */
/* --memory: the per-rank model states (include/dtypelint/memory.h) as text and as JSON. */
#include <errno.h>

#include "dtypelint/report.h"

static void put_dtypes(FILE *out, const struct dtl_memory_view_line *l)
{
	char buf[32];
	bool first = true;

	for (int d = 0; d < DTL_DTYPE_COUNT; d++) {
		if (!l->by_dtype[d])
			continue;
		fprintf(out, "%s%s %s", first ? "" : ", ", dtl_dtype_name((enum dtl_dtype)d),
		        dtl_view_format_bytes(l->by_dtype[d], buf, sizeof(buf)));
		first = false;
	}
	if (first)
		fputs("-", out);
}

int dtl_report_memory_text(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	char a[32], b[32];

	for (size_t i = 0; i < n; i++) {
		const struct dtl_memory_view *m = inputs[i].memory;
		if (!m || !inputs[i].view)
			continue;
		const struct dtl_plan *plan = inputs[i].view->rp.plan;
		fputs("\n", out);
		dtl_report_put_path(out, inputs[i].view->manifest->file);
		fprintf(out,
		        ": model states per rank (%s, world size %lld, %s, optimizer %s; "
		        "activations are not counted)\n",
		        m->strategy, (long long)m->world_size, dtl_precision_name(plan->precision),
		        m->optimizer);
		for (size_t p = 0; p < m->line_count; p++) {
			const struct dtl_memory_view_line *l = &m->line[p];
			fprintf(out, "  %-12s %10s", l->name,
			        dtl_view_format_bytes(l->device, a, sizeof(a)));
			if (l->host)
				fprintf(out, "  (host %s)",
				        dtl_view_format_bytes(l->host, b, sizeof(b)));
			fputs("  [", out);
			put_dtypes(out, l);
			fputs("]\n      ", out);
			fputs(l->rule, out);
			if (l->largest) {
				fputs(" (largest: '", out);
				dtl_report_put_escaped(out, l->largest);
				fputs("')", out);
			}
			fprintf(out, "\n      source: %s\n", l->source);
		}
		fprintf(out, "  %-12s %10s", "total",
		        dtl_view_format_bytes(m->total, a, sizeof(a)));
		if (plan->device_memory > 0)
			fprintf(out, "  of device_memory %s: %s",
			        dtl_view_format_bytes((uint64_t)plan->device_memory, b, sizeof(b)),
			        m->total > (uint64_t)plan->device_memory ? "does not fit" : "fits");
		fprintf(out, "\n  %-12s %10s\n", "host",
		        dtl_view_format_bytes(m->host, a, sizeof(a)));
		if (m->unknown_numel)
			fprintf(out, "  %zu tensor%s without a shape counted as 0 bytes\n",
			        m->unknown_numel, m->unknown_numel == 1 ? "" : "s");
	}
	return ferror(out) ? -EIO : 0;
}

void dtl_report_memory_json(FILE *out, const struct dtl_input_view *view,
                            const struct dtl_memory_view *m)
{
	const struct dtl_plan *plan = view->rp.plan;

	fputs("{\"strategy\": ", out);
	dtl_json_string(out, m->strategy);
	fprintf(out, ", \"world_size\": %lld, \"optimizer\": ", (long long)m->world_size);
	dtl_json_string(out, m->optimizer);
	if (plan->device_memory > 0)
		fprintf(out, ", \"device_memory\": %lld", (long long)plan->device_memory);
	else
		fputs(", \"device_memory\": null", out);
	fputs(", \"activations_counted\": false, \"per_rank\": {", out);
	for (size_t p = 0; p < m->line_count; p++)
		fprintf(out, "%s\"%s\": %llu", p ? ", " : "", m->line[p].name,
		        (unsigned long long)m->line[p].device);
	fprintf(out, ", \"total\": %llu, \"host\": %llu}, \"parts\": [",
	        (unsigned long long)m->total, (unsigned long long)m->host);
	for (size_t p = 0; p < m->line_count; p++) {
		const struct dtl_memory_view_line *l = &m->line[p];
		fprintf(out, "%s{\"name\": \"%s\", \"device\": %llu, \"host\": %llu, \"dtypes\": [",
		        p ? ", " : "", l->name, (unsigned long long)l->device,
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
