/* SPDX-License-Identifier: MIT */
/*
 * --export: the composed manifest written back (JSON for .json, YAML otherwise) so users can
 * commit and review what dtypelint linted. Every key is written in the manifest schema, so
 * re-linting the export gives the same findings (at the export's lines).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtypelint/core/atomic-file.h"
#include "dtypelint/model/import.h"
#include "dtypelint/core/quoted.h"
#include "dtypelint/model/plan-key.h"

struct writer {
	FILE *out;
	bool yaml;
};

/* quoted the same for JSON and YAML; any bytes read back (quoted.h) */
static void str(struct writer *w, const char *s, size_t len)
{
	dtl_put_quoted(w->out, s, len);
}

static void cstr(struct writer *w, const char *s)
{
	str(w, s, strlen(s));
}

/* "key": in JSON, key: in YAML, at an indent; first says whether a comma is due */
static void key(struct writer *w, int indent, const char *k, bool *first)
{
	if (!w->yaml)
		fputs(*first ? "" : ",", w->out);
	fprintf(w->out, "\n%*s", indent, "");
	if (w->yaml)
		fprintf(w->out, "%s: ", k);
	else
		fprintf(w->out, "\"%s\": ", k);
	*first = false;
}

static void patterns(struct writer *w, const struct dtl_patterns *p)
{
	fputc('[', w->out);
	for (size_t i = 0; i < p->count; i++) {
		fputs(i ? ", " : "", w->out);
		str(w, p->items[i].text, p->items[i].len);
	}
	fputc(']', w->out);
}

static void glob_map(struct writer *w, const struct dtl_glob_map *items, size_t n)
{
	fputc('{', w->out);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", w->out);
		str(w, items[i].glob.text, items[i].glob.len);
		fputs(": ", w->out);
		cstr(w, items[i].value);
	}
	fputc('}', w->out);
}

static void open_map(struct writer *w)
{
	if (!w->yaml)
		fputc('{', w->out);
}

static void close_map(struct writer *w, int indent)
{
	if (!w->yaml)
		fprintf(w->out, "\n%*s}", indent, "");
}

static void model(struct writer *w, const struct dtl_model_info *m)
{
	bool first = true;
	open_map(w);
	if (m->name)
		key(w, 2, "name", &first), cstr(w, m->name);
	if (m->architecture)
		key(w, 2, "architecture", &first), cstr(w, m->architecture);
	if (m->checkpoint_dtype)
		key(w, 2, "checkpoint_dtype", &first), cstr(w, dtl_dtype_name(m->checkpoint_dtype));
	key(w, 2, "load_dtype", &first);
	cstr(w, m->load_mode == DTL_LOAD_AS_IS  ? "as-is"
	        : m->load_mode == DTL_LOAD_AUTO ? "auto"
	        : m->load_mode == DTL_LOAD_NONE ? "none"
	                                        : dtl_dtype_name(m->load_dtype));
	if (m->hidden_size)
		key(w, 2, "hidden_size", &first),
		    fprintf(w->out, "%lld", (long long)m->hidden_size);
	if (m->max_position_embeddings)
		key(w, 2, "max_position_embeddings", &first),
		    fprintf(w->out, "%lld", (long long)m->max_position_embeddings);
	if (m->keep_in_fp32.present)
		key(w, 2, "keep_in_fp32", &first), patterns(w, &m->keep_in_fp32);
	if (m->keep_in_fp32_strict.present)
		key(w, 2, "keep_in_fp32_strict", &first), patterns(w, &m->keep_in_fp32_strict);
	if (m->no_split_modules.present)
		key(w, 2, "no_split_modules", &first), patterns(w, &m->no_split_modules);
	if (m->module_count)
		key(w, 2, "modules", &first), glob_map(w, m->modules, m->module_count);
	if (m->routers.present)
		key(w, 2, "routers", &first), patterns(w, &m->routers);
	if (m->tied_count) {
		key(w, 2, "tied", &first);
		fputc('[', w->out);
		for (size_t g = 0; g < m->tied_count; g++) {
			struct dtl_patterns p = {.items = m->tied[g].names,
			                         .count = m->tied[g].count};
			fputs(g ? ", " : "", w->out);
			patterns(w, &p);
		}
		fputc(']', w->out);
	}
	if (m->kernel_count)
		key(w, 2, "kernels", &first), glob_map(w, m->kernels, m->kernel_count);
	close_map(w, 0);
}

static void tensor(struct writer *w, const struct dtl_tensor_decl *t)
{
	fputs("{", w->out);
	fputs(w->yaml ? "name: " : "\"name\": ", w->out);
	str(w, t->name, t->name_len);
	if (t->shape) {
		fputs(w->yaml ? ", shape: [" : ", \"shape\": [", w->out);
		for (uint32_t d = 0; d < t->rank; d++)
			fprintf(w->out, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
		fputc(']', w->out);
	}
	if (t->dtype) {
		fputs(w->yaml ? ", dtype: " : ", \"dtype\": ", w->out);
		cstr(w, dtl_dtype_name(t->dtype));
	}
	if (t->kind == DTL_KIND_BUFFER) {
		fputs(w->yaml ? ", kind: buffer" : ", \"kind\": \"buffer\"", w->out);
		if (!t->persistent)
			fputs(w->yaml ? ", persistent: false" : ", \"persistent\": false", w->out);
	}
	if (t->trainable != DTL_UNSET)
		fprintf(w->out, w->yaml ? ", trainable: %s" : ", \"trainable\": %s",
		        t->trainable == DTL_TRUE ? "true" : "false");
	fputc('}', w->out);
}

static void tri(struct writer *w, int indent, const char *k, enum dtl_tristate v, bool *first)
{
	if (v != DTL_UNSET)
		key(w, indent, k, first), fputs(v == DTL_TRUE ? "true" : "false", w->out);
}

/* Whether --export writes a key: it is set (a dtype given as null, by its location) */
static bool key_present(const struct dtl_plan *p, enum dtl_plan_key_id id)
{
	const struct dtl_plan_key *k = &dtl_plan_keys[id];
	const void *f = dtl_plan_key_field((struct dtl_plan *)p, id);
	const struct dtl_loc *loc = dtl_plan_key_loc((struct dtl_plan *)p, id);
	bool any = false;

	switch (k->type) {
	case DTL_PLAN_MAP: /* the top level's sections are always written */
		for (int c = 0; c < DTL_PLAN_KEY_COUNT; c++)
			any |= dtl_plan_keys[c].parent == id && key_present(p, c);
		return any || k->parent == DTL_PLAN_KEY_ROOT;
	case DTL_PLAN_VERSIONS:
		for (int fw = 0; fw < DTL_FW_COUNT; fw++)
			any |= p->versions[fw].set;
		return any;
	case DTL_PLAN_SWITCH:
	case DTL_PLAN_TRISTATE:
	case DTL_PLAN_TENSOR_OVERRIDES:
		return *(const enum dtl_tristate *)f != DTL_UNSET;
	case DTL_PLAN_DTYPE:
		return *(const enum dtl_dtype *)f != DTL_DTYPE_NONE || (loc && loc->line);
	case DTL_PLAN_TRAINER:
		return *(const char *const *)f != NULL;
	case DTL_PLAN_GLOBS:
		return ((const struct dtl_patterns *)f)->present;
	case DTL_PLAN_THRESHOLD_AUTO:
		return p->zero3.persistence_auto || *(const int64_t *)f >= 0;
	case DTL_PLAN_THRESHOLD:
		return *(const int64_t *)f >= 0;
	case DTL_PLAN_RANKS:
	case DTL_PLAN_BYTES:
		return *(const int64_t *)f > 0;
	default: /* the enumerations and a floating dtype: 0 is unset */
		return *(const int *)f != 0;
	}
}

static void versions(struct writer *w, const struct dtl_plan *p)
{
	char v[32];
	bool first = true;
	fputc('{', w->out);
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		if (!p->versions[fw].set)
			continue;
		fprintf(w->out, w->yaml ? "%s%s: " : "%s\"%s\": ", first ? "" : ", ",
		        dtl_framework_name(fw));
		cstr(w, dtl_version_format(&p->versions[fw], v, sizeof(v)));
		first = false;
	}
	fputc('}', w->out);
}

static const char *offload_name(enum dtl_offload o)
{
	return o == DTL_OFFLOAD_CPU ? "cpu" : o == DTL_OFFLOAD_NVME ? "nvme" : "none";
}

static void plan_map(struct writer *w, const struct dtl_plan *p, enum dtl_plan_key_id parent,
                     int indent);

/* A key's value, as plan-parse.c reads it back */
static void plan_value(struct writer *w, const struct dtl_plan *p, enum dtl_plan_key_id id,
                       int indent)
{
	const struct dtl_plan_key *k = &dtl_plan_keys[id];
	const void *f = dtl_plan_key_field((struct dtl_plan *)p, id);

	switch (k->type) {
	case DTL_PLAN_MAP:
	case DTL_PLAN_SWITCH:
		return plan_map(w, p, id, indent);
	case DTL_PLAN_STRATEGY:
		return cstr(w, dtl_strategy_name(*(const enum dtl_strategy *)f));
	case DTL_PLAN_PRECISION:
		return cstr(w, dtl_precision_name(*(const enum dtl_precision *)f));
	case DTL_PLAN_OPTIMIZER:
		return cstr(w, dtl_optimizer_name(*(const enum dtl_optimizer *)f));
	case DTL_PLAN_TRAINER:
		return cstr(w, *(const char *const *)f);
	case DTL_PLAN_VERSIONS:
		return versions(w, p);
	case DTL_PLAN_GLOBS:
		return patterns(w, f);
	case DTL_PLAN_DTYPE:
	case DTL_PLAN_FLOAT_DTYPE:
		if (*(const enum dtl_dtype *)f == DTL_DTYPE_NONE)
			return (void)fputs("null", w->out);
		return cstr(w, dtl_dtype_name(*(const enum dtl_dtype *)f));
	case DTL_PLAN_TRISTATE:
		return (void)fputs(*(const enum dtl_tristate *)f == DTL_TRUE ? "true" : "false",
		                   w->out);
	case DTL_PLAN_THRESHOLD_AUTO:
		if (p->zero3.persistence_auto)
			return cstr(w, "auto");
		/* fall through */
	case DTL_PLAN_THRESHOLD:
	case DTL_PLAN_RANKS:
	case DTL_PLAN_BYTES:
		return (void)fprintf(w->out, "%lld", (long long)*(const int64_t *)f);
	case DTL_PLAN_OFFLOAD:
		return cstr(w, offload_name(*(const enum dtl_offload *)f));
	case DTL_PLAN_TENSOR_OVERRIDES:
		return (void)fputs(*(const enum dtl_tristate *)f == DTL_TRUE
		                       ? "[\"dtype\", \"device\"]"
		                       : "[\"device\"]",
		                   w->out);
	}
}

/* The keys under parent (the plan's rows of plan-keys.h, in its order) that are set, each on
 * a line at indent; an empty mapping is {} */
static void plan_map(struct writer *w, const struct dtl_plan *p, enum dtl_plan_key_id parent,
                     int indent)
{
	bool first = true;
	open_map(w);
	for (int id = 0; id < DTL_PLAN_KEY_COUNT; id++) {
		if (dtl_plan_keys[id].parent != parent || !key_present(p, id))
			continue;
		key(w, indent, dtl_plan_keys[id].name, &first);
		plan_value(w, p, id, indent + 2);
	}
	if (first && w->yaml)
		fputs("{}", w->out);
	close_map(w, indent - 2);
}

static void adapter(struct writer *w, const struct dtl_adapter *a)
{
	bool first = true;
	open_map(w);
	key(w, 2, "type", &first), cstr(w, a->type);
	key(w, 2, "name", &first), cstr(w, a->name);
	if (a->target_modules_string)
		key(w, 2, "target_modules", &first), cstr(w, a->target_modules_string);
	else if (a->target_modules.present)
		key(w, 2, "target_modules", &first), patterns(w, &a->target_modules);
	key(w, 2, "r", &first), fprintf(w->out, "%lld", (long long)a->r);
	tri(w, 2, "autocast_adapter_dtype", a->autocast_adapter_dtype, &first);
	if (a->modules_to_save.present)
		key(w, 2, "modules_to_save", &first), patterns(w, &a->modules_to_save);
	if (a->target_parameters.count)
		key(w, 2, "target_parameters", &first), patterns(w, &a->target_parameters);
	tri(w, 2, "prepare_kbit_training", a->prepare_kbit_training, &first);
	tri(w, 2, "use_dora", a->use_dora, &first);
	if (a->lora_dropout >= 0)
		key(w, 2, "lora_dropout", &first), fprintf(w->out, "%g", a->lora_dropout);
	if (a->task_type)
		key(w, 2, "task_type", &first), cstr(w, a->task_type);
	if (a->added_with != DTL_ADDED_GET_PEFT_MODEL)
		key(w, 2, "added_with", &first),
		    cstr(w,
		         a->added_with == DTL_ADDED_ADD_ADAPTER ? "add_adapter" : "load_adapter");
	close_map(w, 0);
}

static void quantization(struct writer *w, const struct dtl_quantization *q)
{
	bool first = true;
	open_map(w);
	key(w, 2, "method", &first),
	    cstr(w, q->method == DTL_QUANT_BNB_4BIT ? "bnb-4bit" : "bnb-8bit");
	if (q->compute_dtype)
		key(w, 2, "compute_dtype", &first), cstr(w, dtl_dtype_name(q->compute_dtype));
	if (q->quant_storage)
		key(w, 2, "quant_storage", &first), cstr(w, dtl_dtype_name(q->quant_storage));
	if (q->quant_type)
		key(w, 2, "quant_type", &first), cstr(w, q->quant_type);
	if (q->skip_modules.present)
		key(w, 2, "skip_modules", &first), patterns(w, &q->skip_modules);
	close_map(w, 0);
}

int dtl_export_manifest(const char *path, const struct dtl_manifest *m, struct dtl_error *error)
{
	size_t n = strlen(path);
	struct writer w = {.yaml = !(n >= 5 && strcmp(path + n - 5, ".json") == 0)};
	bool first = true;

	struct dtl_atomic_file file;
	char *text = NULL;
	size_t size = 0;
	int r = dtl_atomic_open(&file, path, error);
	if (r < 0)
		return r;
	w.out = file.out;
	/* YAML is written to memory first, and copied without the space a "key: " leaves at the
	 * end of a line when a block follows (yamllint's trailing-spaces); no string can end a
	 * line, since every string is quoted with its newlines escaped */
	if (w.yaml && !(w.out = open_memstream(&text, &size))) {
		dtl_atomic_abort(&file);
		return -ENOMEM;
	}
	if (w.yaml)
		fputs("# written by dtypelint --export; one tensor per line, so lines may be long\n"
		      "# yamllint disable rule:line-length\n"
		      "---",
		      w.out);
	open_map(&w);
	key(&w, 0, "dtypelint", &first), fputs("1", w.out);
	key(&w, 0, "model", &first), model(&w, &m->model);
	if (m->frozen.present)
		key(&w, 0, "frozen", &first), patterns(&w, &m->frozen);
	if (m->quantization.method)
		key(&w, 0, "quantization", &first), quantization(&w, &m->quantization);
	if (m->adapter.present)
		key(&w, 0, "adapter", &first), adapter(&w, &m->adapter);
	key(&w, 0, "training", &first), plan_map(&w, &m->plan, DTL_PLAN_KEY_ROOT, 2);
	key(&w, 0, "tensors", &first);
	fputs(w.yaml ? "" : "[", w.out);
	for (size_t i = 0; i < m->tensor_count; i++) {
		fputs(w.yaml ? "\n  - " : (i ? ",\n  " : "\n  "), w.out);
		tensor(&w, &m->tensors[i]);
	}
	fputs(w.yaml ? (m->tensor_count ? "\n" : "[]\n") : "\n]\n}\n", w.out);
	if (w.yaml) {
		if (fclose(w.out) != 0 || !text) {
			free(text);
			dtl_atomic_abort(&file);
			return -ENOMEM;
		}
		size_t start = 0;
		for (size_t i = 0; i <= size; i++) {
			if (i < size && text[i] != '\n')
				continue;
			size_t end = i;
			while (end > start && text[end - 1] == ' ')
				end--;
			fwrite(text + start, 1, end - start, file.out);
			if (i < size)
				fputc('\n', file.out);
			start = i + 1;
		}
		free(text);
	}
	return dtl_atomic_commit(&file, error);
}
