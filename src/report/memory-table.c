/* SPDX-License-Identifier: MIT */
/* --memory: the per-rank model states (include/dtypelint/sim/memory.h) as text and as JSON. */
#include <errno.h>

#include "dtypelint/core/json-writer.h"
#include "dtypelint/report/report.h"
#include "report-private.h"

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

void dtl_report_memory_json(struct dtl_json *w, const struct dtl_input_view *view,
                            const struct dtl_memory_view *m)
{
	const struct dtl_plan *plan = view->rp.plan;

	dtl_json_begin_object(w);
	dtl_json_key_string(w, "strategy", m->strategy);
	dtl_json_key_int(w, "world_size", m->world_size);
	dtl_json_key_string(w, "optimizer", m->optimizer);
	if (plan->device_memory > 0) {
		dtl_json_key_int(w, "device_memory", plan->device_memory);
	} else {
		dtl_json_key_null(w, "device_memory");
	}
	dtl_json_key_bool(w, "activations_counted", false);
	dtl_json_key_object(w, "per_rank");
	for (size_t p = 0; p < m->line_count; p++)
		dtl_json_key_uint(w, m->line[p].name, m->line[p].device);
	dtl_json_key_uint(w, "total", m->total);
	dtl_json_key_uint(w, "host", m->host);
	dtl_json_end_object(w);
	dtl_json_key_array(w, "parts");
	for (size_t p = 0; p < m->line_count; p++) {
		const struct dtl_memory_view_line *l = &m->line[p];
		dtl_json_begin_object(w);
		dtl_json_key_string(w, "name", l->name);
		dtl_json_key_uint(w, "device", l->device);
		dtl_json_key_uint(w, "host", l->host);
		dtl_json_key_array(w, "dtypes");
		for (int d = 0; d < DTL_DTYPE_COUNT; d++) {
			if (!l->by_dtype[d])
				continue;
			dtl_json_begin_object(w);
			dtl_json_key_string(w, "dtype", dtl_dtype_name((enum dtl_dtype)d));
			dtl_json_key_uint(w, "bytes", l->by_dtype[d]);
			dtl_json_end_object(w);
		}
		dtl_json_end_array(w);
		dtl_json_key_string(w, "rule", l->rule ? l->rule : "");
		dtl_json_key_string(w, "source", l->source ? l->source : "");
		dtl_json_end_object(w);
	}
	dtl_json_end_array(w);
	dtl_json_key_string(w, "gathered_from", m->gathered_name);
	dtl_json_key_uint(w, "unknown_numel", m->unknown_numel);
	dtl_json_end_object(w);
}
