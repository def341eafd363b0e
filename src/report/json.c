/* SPDX-License-Identifier: MIT */
/*
 * JSON output, written as a stream (no tree is built). The schema is versioned ("version": 1);
 * fields may be added, never renamed. Documented in dtypelint(1), section JSON OUTPUT.
 */
#include <errno.h>
#include <string.h>

#include "dtl-config.h"
#include "dtypelint/core/json-writer.h"
#include "report-private.h"

static void loc_object(struct dtl_json *w, const char *key, const struct dtl_loc *loc)
{
	dtl_json_key_object(w, key);
	dtl_json_key_string(w, "file", loc->file ? loc->file : "");
	dtl_json_key_uint(w, "line", loc->line ? loc->line : 1);
	dtl_json_key_uint(w, "column", loc->column ? loc->column : 1);
	dtl_json_end_object(w);
}

static const char *group_kind(enum dtl_group_kind kind)
{
	switch (kind) {
	case DTL_GROUP_FSDP1_UNIT:
		return "fsdp1-unit";
	case DTL_GROUP_FSDP2_GROUP:
		return "fsdp2-group";
	case DTL_GROUP_ZERO3_PERSISTENT:
		return "zero3-persistent";
	case DTL_GROUP_ZERO3_TRAINABLE:
		return "zero3-trainable";
	}
	return "group";
}

static void trace(struct dtl_json *w, const struct dtl_finding_tensor *t)
{
	dtl_json_begin_object(w);
	dtl_json_key_string(w, "tensor", t->name ? t->name : "");
	dtl_json_key_string(w, "dtype", dtl_dtype_name(t->dtype));
	dtl_json_key_bool(w, "trainable", t->flags & DTL_TF_TRAINABLE);
	loc_object(w, "location", &t->loc);
	dtl_json_key_array(w, "steps");
	for (size_t i = 0; i < t->step_count; i++) {
		const struct dtl_trace_step *e = &t->steps[i];
		dtl_json_begin_object(w);
		dtl_json_key_string(w, "stage", e->name ? e->name : "");
		dtl_json_key_string(w, "from", dtl_dtype_name(e->from));
		dtl_json_key_string(w, "to", dtl_dtype_name(e->to));
		dtl_json_key_string(w, "reason", e->reason ? e->reason : "");
		dtl_json_key_string(w, "fact", e->fact);
		if (e->loc.file) {
			loc_object(w, "location", &e->loc);
		} else {
			dtl_json_key_null(w, "location");
		}
		dtl_json_end_object(w);
	}
	dtl_json_end_array(w);
	dtl_json_end_object(w);
}

/* Where the pretty layout (json) breaks lines, and the compact one (json-lines) does not (-1) */
struct layout {
	int finding; /* each finding */
	int field;   /* a finding's fields after the first line */
	int trace;   /* each trace entry */
};

static const struct layout pretty = {4, 5, 7};
static const struct layout compact = {-1, -1, -1};

/* "folded": the units or groups that fail the same way as the finding's own, folded into it
 * (text names them as a range); only on a finding that folded some. */
static void folded(struct dtl_json *w, const struct dtl_finding *f, const struct layout *l)
{
	size_t n = 0;

	for (size_t i = 0; i < f->note_count; i++)
		n += f->notes[i].same_way != NULL;
	if (!n)
		return;
	dtl_json_break(w, l->field);
	dtl_json_key_array(w, "folded");
	for (size_t i = 0; i < f->note_count; i++) {
		const struct dtl_note *note = &f->notes[i];
		if (!note->same_way)
			continue;
		dtl_json_begin_object(w);
		dtl_json_key_string(w, "group", note->same_way);
		dtl_json_key_string(w, "file", note->loc.file);
		dtl_json_key_uint(w, "line", note->loc.line);
		dtl_json_key_uint(w, "column", note->loc.column);
		dtl_json_end_object(w);
	}
	dtl_json_end_array(w);
}

/* findings[].versions: where the finding fires among the versions the files allow */
void dtl_report_json_ranges(struct dtl_json *w, const struct dtl_finding *f)
{
	dtl_json_begin_array(w);
	for (size_t i = 0; i < f->range_count; i++) {
		const struct dtl_finding_range *r = &f->ranges[i];
		dtl_json_begin_object(w);
		dtl_json_key_string(w, "name", r->name);
		dtl_json_key_string(w, "fires", r->fires);
		dtl_json_key_string(w, "from", r->from);
		dtl_json_key_string(w, "to", r->to);
		dtl_json_key_string(w, "allowed", r->allowed);
		dtl_json_key_string(w, "allowed_at", r->allowed_at);
		dtl_json_key_string(w, "avoided_by", r->avoided_by);
		dtl_json_key_string(w, "not_with", r->not_with);
		dtl_json_end_object(w);
	}
	dtl_json_end_array(w);
}

static void finding(struct dtl_json *w, const struct dtl_finding *f, const struct layout *l)
{
	dtl_json_break(w, l->finding);
	dtl_json_begin_object(w);
	dtl_json_key_string(w, "rule", f->rule->id);
	dtl_json_key_string(w, "name", f->rule->name);
	dtl_json_key_string(w, "severity", dtl_severity_name(f->severity));
	dtl_json_key_string(w, "message", f->message);
	dtl_json_break(w, l->field);
	loc_object(w, "location", &f->loc);
	dtl_json_break(w, l->field);
	dtl_json_key_array(w, "tensors");
	for (size_t i = 0; i < f->tensor_count; i++)
		dtl_json_put_string(w, f->view.tensors[i].name ? f->view.tensors[i].name : "");
	dtl_json_end_array(w);
	dtl_json_break(w, l->field);
	dtl_json_key(w, "group");
	if (f->view.group) {
		dtl_json_begin_object(w);
		dtl_json_key_string(w, "name", f->view.group->name ? f->view.group->name : "");
		dtl_json_key_string(w, "kind", group_kind(f->view.group->kind));
		dtl_json_key_uint(w, "index", f->view.group->index);
		dtl_json_key_uint(w, "offset", f->group_offset);
		dtl_json_key_uint(w, "size", f->view.group->size);
		dtl_json_end_object(w);
	} else {
		dtl_json_put_null(w);
	}
	dtl_json_break(w, l->field);
	dtl_json_key(w, "framework_error");
	if (f->error_text) {
		dtl_json_begin_object(w);
		dtl_json_key_string(w, "text", f->error_text);
		dtl_json_key_string(w, "when", f->error_when);
		dtl_json_key_string(w, "versions", f->error_versions);
		dtl_json_end_object(w);
	} else {
		dtl_json_put_null(w);
	}
	if (f->range_count) {
		dtl_json_break(w, l->field);
		dtl_json_key(w, "versions");
		dtl_report_json_ranges(w, f);
	}
	dtl_json_break(w, l->field);
	dtl_json_key_string(w, "effect", f->effect);
	dtl_json_break(w, l->field);
	dtl_json_key_array(w, "trace");
	for (size_t i = 0; i < f->tensor_count; i++) {
		dtl_json_break(w, l->trace);
		trace(w, &f->view.tensors[i]);
	}
	dtl_json_end_array(w);
	dtl_json_break(w, l->field);
	dtl_json_key_string(w, "fix", f->fix);
	folded(w, f, l);
	dtl_json_end_object(w);
}

static void plan_object(struct dtl_json *w, const struct dtl_input_view *view)
{
	const struct dtl_view_plan *rp = &view->rp;
	char v[32];

	dtl_json_begin_object(w);
	dtl_json_key_string(w, "strategy", dtl_strategy_name(rp->plan->strategy));
	dtl_json_key_string(w, "precision", dtl_precision_name(rp->plan->precision));
	dtl_json_key_int(w, "world_size", rp->plan->world_size);
	dtl_json_key_uint(w, "groups", view->group_count);
	dtl_json_key_object(w, "versions");
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		char from[600];
		if (!dtl_report_version_shown(view, fw))
			continue;
		dtl_json_key_object(w, dtl_framework_name(fw));
		dtl_json_key_string(w, "version",
		                    dtl_version_format(&rp->plan->versions[fw], v, sizeof(v)));
		dtl_json_key_bool(w, "assumed", rp->version_assumed[fw]);
		dtl_json_key_string(w, "from",
		                    dtl_report_version_source(view, fw, from, sizeof(from)));
		dtl_json_end_object(w);
	}
	dtl_json_end_object(w);
	dtl_json_end_object(w);
}

static void input_object(struct dtl_json *w, const struct dtl_report_input *in)
{
	dtl_json_break(w, 2);
	dtl_json_begin_object(w);
	const struct dtl_input_view *view = in->view;
	if (!view) { /* not read: its finding is DT001 */
		dtl_json_key_string(w, "file", in->file ? in->file : "");
		dtl_json_key_null(w, "tensors");
		dtl_json_key_null(w, "plan");
		dtl_json_end_object(w);
		return;
	}
	dtl_json_key_string(w, "file", view->manifest->file ? view->manifest->file : "");
	dtl_json_key_uint(w, "tensors", view->tensor_count);
	dtl_json_key(w, "plan");
	plan_object(w, view);
	if (in->memory) {
		dtl_json_key(w, "memory");
		dtl_report_memory_json(w, view, in->memory);
	}
	dtl_json_end_object(w);
}

/* The importers' warnings, each an object of the findings' shape with rule DT003: the
 * "input_warnings" array (json) or one line each after the findings (json-lines). Not in
 * "findings", which hold what --fail-on counts. */
static void warning_objects(struct dtl_json *w, const struct dtl_report_input *inputs, size_t n,
                            const struct layout *l)
{
	for (size_t i = 0; i < n; i++) {
		const struct dtl_input_warning *iw =
		    inputs[i].warnings ? inputs[i].warnings->items : NULL;
		for (size_t k = 0; iw && k < inputs[i].warnings->count; k++) {
			struct dtl_finding f;
			dtl_report_warning_finding(&iw[k], &f);
			if (f.rule)
				finding(w, &f, l);
		}
	}
}

static void input_warnings(struct dtl_json *w, const struct dtl_report_input *inputs, size_t n,
                           const struct layout *l)
{
	dtl_json_break(w, 1);
	dtl_json_key_array(w, "input_warnings");
	warning_objects(w, inputs, n, l);
	if (dtl_report_warning_count(inputs, n))
		dtl_json_break(w, 1);
	dtl_json_end_array(w);
}

void dtl_report_json_warnings(struct dtl_json *w, const struct dtl_report_input *inputs, size_t n)
{
	input_warnings(w, inputs, n, &pretty);
}

int dtl_report_json(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	struct dtl_report_counts c;
	struct dtl_json w;
	bool first = true;

	dtl_report_count(inputs, n, &c);
	dtl_json_init(&w, out);
	dtl_json_begin_object(&w);
	dtl_json_key_uint(&w, "version", 1);
	dtl_json_break(&w, 1);
	dtl_json_key_object(&w, "tool");
	dtl_json_key_string(&w, "name", "dtypelint");
	dtl_json_key_string(&w, "version", DTL_VERSION);
	dtl_json_end_object(&w);
	dtl_json_break(&w, 1);
	dtl_json_key_object(&w, "summary");
	dtl_json_key_uint(&w, "inputs", n);
	dtl_json_key_uint(&w, "findings", c.findings);
	dtl_json_key_uint(&w, "errors", c.errors);
	dtl_json_key_uint(&w, "warnings", c.warnings);
	dtl_json_key_uint(&w, "infos", c.infos);
	dtl_json_key_uint(&w, "input_warnings", dtl_report_warning_count(inputs, n));
	dtl_json_end_object(&w);
	dtl_json_break(&w, 1);
	dtl_json_key_array(&w, "inputs");
	for (size_t i = 0; i < n; i++)
		input_object(&w, &inputs[i]);
	dtl_json_end_array(&w);
	dtl_json_break(&w, 1);
	dtl_json_key_array(&w, "findings");
	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *f = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++) {
			finding(&w, &f[k], &pretty);
			first = false;
		}
	}
	if (!first)
		dtl_json_break(&w, 1);
	dtl_json_end_array(&w);
	input_warnings(&w, inputs, n, &pretty);
	dtl_json_end_object(&w);
	return dtl_json_finish(&w);
}

int dtl_report_json_lines(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	struct dtl_json w;

	dtl_json_init(&w, out);
	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *f = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++)
			finding(&w, &f[k], &compact);
	}
	warning_objects(&w, inputs, n, &compact);
	return dtl_json_finish(&w);
}
