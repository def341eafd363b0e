/* SPDX-License-Identifier: MIT */
/*
 * JSON output, written as a stream (no tree is built). The schema is versioned ("version": 1);
 * fields may be added, never renamed. Documented in dtypelint(1), section JSON OUTPUT.
 */
#include <errno.h>
#include <string.h>

#include "dtl-config.h"
#include "dtypelint/quoted.h"
#include "dtypelint/report.h"

void dtl_json_string(FILE *out, const char *s)
{
	if (!s)
		s = "";
	dtl_put_quoted(out, s, strlen(s));
}

static void loc_object(FILE *out, const struct dtl_loc *loc)
{
	fputs("{\"file\": ", out);
	dtl_json_string(out, loc->file);
	fprintf(out, ", \"line\": %u, \"column\": %u}", loc->line ? loc->line : 1,
	        loc->column ? loc->column : 1);
}

static void string_or_null(FILE *out, const char *s)
{
	if (s)
		dtl_json_string(out, s);
	else
		fputs("null", out);
}

static const char *group_kind(enum dtl_view_group_kind kind)
{
	switch (kind) {
	case DTL_VIEW_FSDP1_UNIT:
		return "fsdp1-unit";
	case DTL_VIEW_FSDP2_GROUP:
		return "fsdp2-group";
	case DTL_VIEW_ZERO3_PERSISTENT:
		return "zero3-persistent";
	case DTL_VIEW_ZERO3_TRAINABLE:
		return "zero3-trainable";
	}
	return "group";
}

static void trace(FILE *out, const struct dtl_finding_tensor *t)
{
	fputs("{\"tensor\": ", out);
	dtl_json_string(out, t->name);
	fputs(", \"dtype\": ", out);
	dtl_json_string(out, dtl_dtype_name(t->dtype));
	fprintf(out, ", \"trainable\": %s, \"location\": ",
	        (t->flags & DTL_VIEW_TF_TRAINABLE) ? "true" : "false");
	loc_object(out, &t->loc);
	fputs(", \"steps\": [", out);
	for (size_t i = 0; i < t->step_count; i++) {
		const struct dtl_trace_step *e = &t->steps[i];
		fputs(i ? ", {\"stage\": " : "{\"stage\": ", out);
		dtl_json_string(out, e->name);
		fputs(", \"from\": ", out);
		dtl_json_string(out, dtl_dtype_name(e->from));
		fputs(", \"to\": ", out);
		dtl_json_string(out, dtl_dtype_name(e->to));
		fputs(", \"reason\": ", out);
		dtl_json_string(out, e->reason);
		fputs(", \"fact\": ", out);
		string_or_null(out, e->fact);
		fputs(", \"location\": ", out);
		if (e->loc.file)
			loc_object(out, &e->loc);
		else
			fputs("null", out);
		fputc('}', out);
	}
	fputs("]}", out);
}

/* Separators of the pretty (json) and compact (json-lines) layouts. */
struct layout {
	const char *open;  /* before a finding */
	const char *field; /* before a finding's second-level fields */
	const char *trace; /* before each trace entry */
};

static const struct layout pretty = {"    {", ",\n     ", "\n       "};
static const struct layout compact = {"{", ", ", ""};

static void finding(FILE *out, const struct dtl_finding *f, const struct layout *l)
{
	fprintf(out, "%s\"rule\": ", l->open);
	dtl_json_string(out, f->rule->id);
	fputs(", \"name\": ", out);
	dtl_json_string(out, f->rule->name);
	fputs(", \"severity\": ", out);
	dtl_json_string(out, dtl_severity_name(f->severity));
	fputs(", \"message\": ", out);
	dtl_json_string(out, f->message);
	fprintf(out, "%s\"location\": ", l->field);
	loc_object(out, &f->loc);
	fprintf(out, "%s\"tensors\": [", l->field);
	for (size_t i = 0; i < f->tensor_count; i++) {
		if (i)
			fputs(", ", out);
		dtl_json_string(out, f->view.tensors[i].name);
	}
	fprintf(out, "]%s\"group\": ", l->field);
	if (f->view.group) {
		fputs("{\"name\": ", out);
		dtl_json_string(out, f->view.group->name);
		fputs(", \"kind\": ", out);
		dtl_json_string(out, group_kind(f->view.group->kind));
		fprintf(out, ", \"index\": %u, \"offset\": %u, \"size\": %zu}",
		        f->view.group->index, f->group_offset, f->view.group->size);
	} else {
		fputs("null", out);
	}
	fprintf(out, "%s\"framework_error\": ", l->field);
	if (f->error_text) {
		fputs("{\"text\": ", out);
		dtl_json_string(out, f->error_text);
		fputs(", \"when\": ", out);
		string_or_null(out, f->error_when);
		fputs(", \"versions\": ", out);
		string_or_null(out, f->error_versions);
		fputc('}', out);
	} else {
		fputs("null", out);
	}
	fprintf(out, "%s\"effect\": ", l->field);
	string_or_null(out, f->effect);
	fprintf(out, "%s\"trace\": [", l->field);
	for (size_t i = 0; i < f->tensor_count; i++) {
		fprintf(out, "%s%s", i ? "," : "", l->trace);
		if (i && !*l->trace)
			fputc(' ', out);
		trace(out, &f->view.tensors[i]);
	}
	fprintf(out, "]%s\"fix\": ", l->field);
	string_or_null(out, f->fix);
	fputc('}', out);
}

static void plan_object(FILE *out, const struct dtl_input_view *view)
{
	const struct dtl_view_plan *rp = &view->rp;
	char v[32];

	fputs("{\"strategy\": ", out);
	dtl_json_string(out, dtl_strategy_name(rp->plan->strategy));
	fputs(", \"precision\": ", out);
	dtl_json_string(out, dtl_precision_name(rp->plan->precision));
	fprintf(out, ", \"world_size\": %lld, \"groups\": %zu, \"versions\": {",
	        (long long)rp->plan->world_size, view->group_count);
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		fputs(fw ? ", " : "", out);
		dtl_json_string(out, dtl_framework_name(fw));
		fputs(": {\"version\": ", out);
		dtl_json_string(out, dtl_version_format(&rp->plan->versions[fw], v, sizeof(v)));
		char from[600];
		fprintf(out, ", \"assumed\": %s, \"from\": ",
		        rp->version_assumed[fw] ? "true" : "false");
		dtl_json_string(out, dtl_report_version_source(view, fw, from, sizeof(from)));
		fputc('}', out);
	}
	fputs("}}", out);
}

int dtl_report_json(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	struct dtl_report_counts c;
	bool first = true;

	dtl_report_count(inputs, n, &c);
	fputs("{\"version\": 1,\n \"tool\": {\"name\": \"dtypelint\", \"version\": ", out);
	dtl_json_string(out, DTL_VERSION);
	fprintf(out,
	        "},\n \"summary\": {\"inputs\": %zu, \"findings\": %zu, \"errors\": %zu, "
	        "\"warnings\": %zu, \"infos\": %zu},\n \"inputs\": [",
	        n, c.findings, c.errors, c.warnings, c.infos);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n  {\"file\": " : "\n  {\"file\": ", out);
		const struct dtl_input_view *view = inputs[i].view;
		if (!view) { /* not read: its finding is DT001 */
			dtl_json_string(out, inputs[i].file);
			fputs(", \"tensors\": null, \"plan\": null}", out);
			continue;
		}
		dtl_json_string(out, view->manifest->file);
		fprintf(out, ", \"tensors\": %zu, \"plan\": ", view->tensor_count);
		plan_object(out, view);
		if (inputs[i].memory) {
			fputs(", \"memory\": ", out);
			dtl_report_memory_json(out, view, inputs[i].memory);
		}
		fputc('}', out);
	}
	fputs("],\n \"findings\": [", out);
	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *f = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++) {
			fputs(first ? "\n" : ",\n", out);
			first = false;
			finding(out, &f[k], &pretty);
		}
	}
	fputs(first ? "]}\n" : "\n ]}\n", out);
	return ferror(out) ? -EIO : 0;
}

int dtl_report_json_lines(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *f = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++) {
			finding(out, &f[k], &compact);
			fputc('\n', out);
		}
	}
	return ferror(out) ? -EIO : 0;
}
