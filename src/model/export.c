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

#include "dtypelint/atomic-file.h"
#include "dtypelint/import.h"
#include "dtypelint/quoted.h"

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

static void dtype_key(struct writer *w, int indent, const char *k, enum dtl_dtype d,
                      struct dtl_loc loc, bool *first)
{
	if (!loc.line && d == DTL_DTYPE_NONE)
		return;
	key(w, indent, k, first);
	if (d == DTL_DTYPE_NONE)
		fputs("null", w->out);
	else
		cstr(w, dtl_dtype_name(d));
}

static void plan(struct writer *w, const struct dtl_plan *p)
{
	bool first = true, sub;
	char v[32];
	open_map(w);
	if (p->strategy)
		key(w, 2, "strategy", &first), cstr(w, dtl_strategy_name(p->strategy));
	if (p->precision)
		key(w, 2, "precision", &first), cstr(w, dtl_precision_name(p->precision));
	if (p->world_size)
		key(w, 2, "world_size", &first), fprintf(w->out, "%lld", (long long)p->world_size);
	bool any = false;
	for (int fw = 0; fw < DTL_FW_COUNT; fw++)
		any |= p->versions[fw].set;
	if (any) {
		key(w, 2, "versions", &first);
		fputc('{', w->out);
		bool f2 = true;
		for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
			if (!p->versions[fw].set)
				continue;
			fprintf(w->out, w->yaml ? "%s%s: " : "%s\"%s\": ", f2 ? "" : ", ",
			        dtl_framework_name(fw));
			cstr(w, dtl_version_format(&p->versions[fw], v, sizeof(v)));
			f2 = false;
		}
		fputc('}', w->out);
	}
	if (p->trainer)
		key(w, 2, "trainer", &first), cstr(w, p->trainer);
	key(w, 2, "fsdp", &first);
	open_map(w);
	sub = true;
	if (p->fsdp.wrap.present)
		key(w, 4, "wrap", &sub), patterns(w, &p->fsdp.wrap);
	dtype_key(w, 4, "param_dtype", p->fsdp.param_dtype, p->fsdp.param_dtype_loc, &sub);
	dtype_key(w, 4, "reduce_dtype", p->fsdp.reduce_dtype, p->fsdp.reduce_dtype_loc, &sub);
	dtype_key(w, 4, "buffer_dtype", p->fsdp.buffer_dtype, p->fsdp.buffer_dtype_loc, &sub);
	tri(w, 4, "use_orig_params", p->fsdp.use_orig_params, &sub);
	if (p->fsdp.ignored.present)
		key(w, 4, "ignored", &sub), patterns(w, &p->fsdp.ignored);
	tri(w, 4, "cpu_offload", p->fsdp.cpu_offload, &sub);
	if (sub && w->yaml)
		fputs("{}", w->out);
	close_map(w, 2);
	key(w, 2, "zero3", &first);
	open_map(w);
	sub = true;
	tri(w, 4, "init", p->zero3.init, &sub);
	if (p->zero3.persistence_auto)
		key(w, 4, "persistence_threshold", &sub), cstr(w, "auto");
	else if (p->zero3.persistence_threshold >= 0)
		key(w, 4, "persistence_threshold", &sub),
		    fprintf(w->out, "%lld", (long long)p->zero3.persistence_threshold);
	if (p->zero3.model_persistence_threshold >= 0)
		key(w, 4, "model_persistence_threshold", &sub),
		    fprintf(w->out, "%lld", (long long)p->zero3.model_persistence_threshold);
	tri(w, 4, "allgather_sequential", p->zero3.allgather_sequential, &sub);
	if (p->zero3.offload_param)
		key(w, 4, "offload_param", &sub),
		    cstr(w, p->zero3.offload_param == DTL_OFFLOAD_CPU    ? "cpu"
		            : p->zero3.offload_param == DTL_OFFLOAD_NVME ? "nvme"
		                                                         : "none");
	if (p->zero3.offload_optimizer)
		key(w, 4, "offload_optimizer", &sub),
		    cstr(w, p->zero3.offload_optimizer == DTL_OFFLOAD_CPU    ? "cpu"
		            : p->zero3.offload_optimizer == DTL_OFFLOAD_NVME ? "nvme"
		                                                             : "none");
	if (p->zero3.prefetch_bucket_size >= 0)
		key(w, 4, "prefetch_bucket_size", &sub),
		    fprintf(w->out, "%lld", (long long)p->zero3.prefetch_bucket_size);
	if (p->zero3.max_live_parameters >= 0)
		key(w, 4, "max_live_parameters", &sub),
		    fprintf(w->out, "%lld", (long long)p->zero3.max_live_parameters);
	tri(w, 4, "quantized_weights", p->zero3.quantized_weights, &sub);
	tri(w, 4, "quantized_nontrainable_weights", p->zero3.quantized_nontrainable, &sub);
	if (p->zero3.init_dtype_override != DTL_UNSET)
		key(w, 4, "tensor_overrides", &sub),
		    fputs(p->zero3.init_dtype_override == DTL_TRUE ? "[\"dtype\", \"device\"]"
		                                                   : "[\"device\"]",
		          w->out);
	if (p->zero3.autocast != DTL_UNSET) {
		key(w, 4, "torch_autocast", &sub);
		fprintf(w->out, w->yaml ? "{enabled: %s" : "{\"enabled\": %s",
		        p->zero3.autocast == DTL_TRUE ? "true" : "false");
		if (p->zero3.autocast_dtype)
			fprintf(w->out, w->yaml ? ", dtype: \"%s\"" : ", \"dtype\": \"%s\"",
			        dtl_dtype_name(p->zero3.autocast_dtype));
		fputc('}', w->out);
	}
	if (p->zero3.buffer_dtype || p->zero3.param_dtype) {
		bool dt = true;
		key(w, 4, "data_types", &sub);
		fputc('{', w->out);
		if (p->zero3.buffer_dtype)
			fprintf(w->out,
			        w->yaml ? "buffer_dtype: \"%s\"" : "\"buffer_dtype\": \"%s\"",
			        dtl_dtype_name(p->zero3.buffer_dtype)),
			    dt = false;
		if (p->zero3.param_dtype)
			fprintf(w->out,
			        w->yaml ? "%sparam_dtype: \"%s\"" : "%s\"param_dtype\": \"%s\"",
			        dt ? "" : ", ", dtl_dtype_name(p->zero3.param_dtype));
		fputc('}', w->out);
	}
	if (sub && w->yaml)
		fputs("{}", w->out);
	close_map(w, 2);
	if (p->direct_access.present)
		key(w, 2, "direct_access", &first), patterns(w, &p->direct_access);
	tri(w, 2, "merge", p->merge, &first);
	if (p->model_cast != DTL_DTYPE_NONE)
		key(w, 2, "model_cast", &first), cstr(w, dtl_dtype_name(p->model_cast));
	if (p->optimizer != DTL_OPTIMIZER_UNSET)
		key(w, 2, "optimizer", &first), cstr(w, dtl_optimizer_name(p->optimizer));
	if (p->device_memory > 0)
		key(w, 2, "device_memory", &first),
		    fprintf(w->out, "%lld", (long long)p->device_memory);
	close_map(w, 0);
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
	tri(w, 2, "prepare_kbit_training", a->prepare_kbit_training, &first);
	tri(w, 2, "use_dora", a->use_dora, &first);
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
	key(&w, 0, "training", &first), plan(&w, &m->plan);
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
