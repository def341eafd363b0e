/* SPDX-License-Identifier: MIT */
/*
 * What a verdict assumed: the framework versions and where each came from (a plan file's line,
 * --with, or the newest release the version table knows), on standard error beside the
 * summary and in the JSON and SARIF reports; and --show-plan, the resolved plan: every default
 * and "auto" resolved, the stages that apply and the dtype rules in force at each.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dtypelint/core/json-writer.h"
#include "dtypelint/report/report.h"
#include "report-private.h"

const char *dtl_report_version_source(const struct dtl_input_view *view, enum dtl_framework fw,
                                      char *buf, size_t size)
{
	struct dtl_loc loc = view->rp.plan->version_locs[fw];

	if (view->rp.version_assumed[fw])
		return "newest known";
	if (!loc.file)
		snprintf(buf, size, "the plan");
	else if (!loc.line)
		snprintf(buf, size, "%s", loc.file); /* an option: "--with" */
	else if (view->rp.plan->version_range[fw])   /* ">=0.18, linted at 0.18, ..., 0.19.8" */
		snprintf(buf, size, "%s:%u:%u: %s", loc.file, loc.line, loc.column,
		         view->rp.plan->version_range[fw]);
	else
		snprintf(buf, size, "%s:%u:%u", loc.file, loc.line, loc.column);
	return buf;
}

bool dtl_report_version_shown(const struct dtl_input_view *view, enum dtl_framework fw)
{
	return dtl_framework_reported(fw, view->manifest->recipe.kind,
	                              view->rp.version_assumed[fw]);
}

int dtl_report_versions_line(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct dtl_input_view *view = inputs[i].view;
		if (!view)
			continue;
		fputs("Versions", out);
		if (inputs[i].setup) {
			fputs(" for set-up ", out);
			dtl_report_put_escaped(out, inputs[i].setup);
		} else if (n > 1) {
			fputs(" for ", out);
			dtl_report_put_escaped(out,
			                       view->manifest->file ? view->manifest->file : "-");
		}
		fputc(':', out);
		for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
			char v[32], from[600];
			if (!dtl_report_version_shown(view, fw))
				continue;
			fprintf(out, "%s %s %s (", fw ? "," : "", dtl_framework_name(fw),
			        dtl_version_format(&view->rp.plan->versions[fw], v, sizeof(v)));
			dtl_report_put_escaped(
			    out, dtl_report_version_source(view, fw, from, sizeof(from)));
			fputc(')', out);
		}
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

static const char *dtype_or(enum dtl_dtype d, const char *none)
{
	return d == DTL_DTYPE_NONE ? none : dtl_dtype_name(d);
}

struct stage_row {
	const char *stage;
	bool applies;
	const char *rule;
};

/* a row of the text table, or of the JSON "stages" array when w is set */
static void put_row(FILE *out, struct dtl_json *w, const struct stage_row *row)
{
	if (w) {
		dtl_json_begin_object(w);
		dtl_json_key_string(w, "stage", row->stage);
		dtl_json_key_bool(w, "applies", row->applies);
		dtl_json_key_string(w, "rule", row->rule);
		dtl_json_end_object(w);
	} else {
		fprintf(out, "    %-13s %s", row->stage, row->applies ? "" : "(does not apply) ");
		dtl_report_put_escaped(out, row->rule);
		fputc('\n', out);
	}
}

/* The stages of docs/design.md §4 that this plan runs, with the rule each applies. */
static void stages(FILE *out, struct dtl_json *w, const struct dtl_input_view *view)
{
	const struct dtl_view_plan *rp = &view->rp;
	const struct dtl_manifest *m = view->manifest;
	const struct dtl_plan *p = rp->plan;
	char load[128], zero_init[160];
	/* deepspeed.initialize casts at every ZeRO stage, 0-2 (a ddp plan) included */
	bool ds = p->strategy == DTL_STRATEGY_ZERO3 ||
	          (p->strategy == DTL_STRATEGY_DDP && p->deepspeed_engine);

	switch (m->model.load_mode) {
	case DTL_LOAD_AS_IS:
		snprintf(load, sizeof(load), "as-is: the declared dtypes are the dtypes in memory");
		break;
	case DTL_LOAD_AUTO:
		snprintf(load, sizeof(load), "from_pretrained(dtype=\"auto\")");
		break;
	case DTL_LOAD_NONE:
		/* transformers-v5-dtype-none-auto; bitsandbytes makes it float16 up to 4.57
		 * (transformers-bnb-default-fp16) */
		snprintf(load, sizeof(load),
		         "from_pretrained(dtype=None): float32 to transformers 4.57 (float16 "
		         "under bitsandbytes), \"auto\" from 5.0");
		break;
	default:
		snprintf(load, sizeof(load), "from_pretrained(dtype=%s)",
		         dtl_dtype_name(m->model.load_dtype));
	}
	snprintf(zero_init, sizeof(zero_init), "every floating tensor created under it becomes %s",
	         dtype_or(rp->zero_init_dtype, "(precision unset: no cast)"));
	const struct stage_row rows[] = {
	    {"load", true, load},
	    {"zero-init", rp->zero_init && m->quantization.method == DTL_QUANT_NONE, zero_init},
	    {"quantize", m->quantization.method != DTL_QUANT_NONE,
	     m->quantization.method == DTL_QUANT_BNB_8BIT ? "bitsandbytes LLM.int8: int8 weights"
	     : m->quantization.prequantized
	         ? "pre-quantized checkpoint: weights as stored"
	         : "bitsandbytes 4-bit: packed into bnb_4bit_quant_storage"},
	    {"kbit-prepare", m->adapter.prepare_kbit_training == DTL_TRUE,
	     "freeze all, fp16/bf16 non-Params4bit to float32"},
	    {"peft", m->adapter.present,
	     m->adapter.autocast_adapter_dtype == DTL_FALSE
	         ? "adapters in the base dtype (autocast_adapter_dtype=False)"
	         : "adapters upcast to float32 (autocast_adapter_dtype, by version)"},
	    {"trainer", p->trainer != NULL || m->recipe.kind != NULL,
	     m->recipe.kind ? m->recipe.kind
	     : p->trainer   ? p->trainer
	                    : "none"},
	    {"engine", ds || p->strategy == DTL_STRATEGY_FSDP2,
	     ds ? "deepspeed.initialize's module cast (by version)"
	        : "accelerate's fp32 upcast (by version)"},
	    {"shard",
	     p->strategy == DTL_STRATEGY_FSDP1 || p->strategy == DTL_STRATEGY_FSDP2 ||
	         p->strategy == DTL_STRATEGY_ZERO3,
	     p->strategy == DTL_STRATEGY_ZERO3 ? "ZeRO-3 persistent and trainable sets"
	                                       : "FSDP units or groups from the wrap list"},
	    {"compute", true, "param_dtype, buffer_dtype or the gathered dtype"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		put_row(out, w, &rows[i]);
}

/* Where a plan setting came from: "file:line:col", an option's name, or NULL (a default) */
static const char *setting_source(struct dtl_loc loc, char *buf, size_t size)
{
	if (!loc.file)
		return NULL;
	if (!loc.line)
		snprintf(buf, size, "%s", loc.file);
	else
		snprintf(buf, size, "%s:%u:%u", loc.file, loc.line, loc.column);
	return buf;
}

/* " (from FILE:L:C)" after a text row whose setting a file or option gave */
static void put_source(FILE *out, struct dtl_loc loc)
{
	char buf[600];
	const char *from = setting_source(loc, buf, sizeof(buf));
	if (!from)
		return;
	fputs(" (from ", out);
	dtl_report_put_escaped(out, from);
	fputc(')', out);
}

/* a recipe's keys read or not read (--trainer-args), on one row; none: no row */
static void key_list(FILE *out, const char *label, const char **keys, size_t count)
{
	if (!count)
		return;
	fputs(label, out);
	for (size_t i = 0; i < count; i++) {
		if (i)
			fputs(", ", out);
		dtl_report_put_escaped(out, keys[i]);
	}
	fputc('\n', out);
}

static void json_key_list(struct dtl_json *w, const char *key, const char **keys, size_t count)
{
	dtl_json_key_array(w, key);
	for (size_t i = 0; i < count; i++)
		dtl_json_put_string(w, keys[i]);
	dtl_json_end_array(w);
}

/* a framework config's keys read, one a row: "key: value (from FILE:L:C)"; those read but
 * absent on one row */
static void fw_read_text(FILE *out, const struct dtl_recipe *r)
{
	const char *label = "  keys read     ";
	size_t unset = 0;

	for (size_t i = 0; i < r->fw_keys_read_count; i++) {
		const struct dtl_key_read *k = &r->fw_keys_read[i];
		if (!k->value) {
			unset++;
			continue;
		}
		fputs(label, out);
		label = "                ";
		dtl_report_put_escaped(out, k->key);
		fputs(": ", out);
		dtl_report_put_escaped(out, k->value);
		put_source(out, k->loc);
		fputc('\n', out);
	}
	if (label[2] == 'k')
		fputs("  keys read     none that the file or an override sets\n", out);
	if (!unset)
		return;
	fputs("  keys unset    ", out);
	for (size_t i = 0, shown = 0; i < r->fw_keys_read_count; i++)
		if (!r->fw_keys_read[i].value) {
			fputs(shown++ ? ", " : "", out);
			dtl_report_put_escaped(out, r->fw_keys_read[i].key);
		}
	fputs(" (read, not set: the framework's defaults)\n", out);
}

/* keys not read shown by name in a section that has at most this many; sections shown */
#define GROUP_NAMES  4
#define GROUPS_SHOWN 40

/* the keys not read of one top-level section */
struct key_group {
	const char *name;
	size_t len, count;
	const char *keys[GROUP_NAMES];
};

/* the keys not read grouped by their top-level section, in the order first seen (NULL: out
 * of memory) */
static struct dtl_vec *group_keys(struct dtl_arena *arena, const struct dtl_recipe *r)
{
	struct dtl_vec *groups = dtl_arena_calloc(arena, 1, sizeof(*groups));
	struct dtl_strmap index;

	dtl_strmap_init(&index, arena);
	for (size_t i = 0; groups && i < r->fw_keys_not_read_count; i++) {
		const char *key = r->fw_keys_not_read[i];
		size_t len = strcspn(key, ".");
		int64_t at = dtl_strmap_put(&index, key, len, (int64_t)groups->count);
		if (at < 0)
			return NULL;
		struct key_group *g = (size_t)at == groups->count
		                          ? dtl_vec_push(groups, arena, sizeof(*g))
		                          : (struct key_group *)groups->items + at;
		if (!g)
			return NULL;
		g->name = key;
		g->len = len;
		if (g->count < GROUP_NAMES)
			g->keys[g->count] = key[len] ? key + len + 1 : key;
		g->count++;
	}
	return groups;
}

static void put_group(FILE *out, const struct key_group *g)
{
	char name[256];
	snprintf(name, sizeof(name), "%.*s%s", (int)(g->len < 200 ? g->len : 200), g->name,
	         g->len < 200 ? "" : "...");
	dtl_report_put_escaped(out, name);
	if (g->count == 1 && !g->name[g->len])
		return; /* a top-level key */
	fprintf(out, " (%zu key%s", g->count, g->count == 1 ? "" : "s");
	for (size_t i = 0; g->count <= GROUP_NAMES && i < g->count; i++) {
		fputs(i ? ", " : ": ", out);
		dtl_report_put_escaped(out, g->keys[i]);
	}
	fputc(')', out);
}

/* "not read      N keys: data (14 keys), trainer (2 keys: a, b), seed" */
static void fw_not_read_text(FILE *out, const struct dtl_recipe *r)
{
	struct dtl_arena arena;
	size_t n = r->fw_keys_not_read_count;

	fputs("  not read      ", out);
	if (!n) {
		fputs("none: every key the file and the overrides set was read\n", out);
		return;
	}
	dtl_arena_init(&arena);
	const struct dtl_vec *groups = group_keys(&arena, r);
	fprintf(out, "%zu key%s", n, n == 1 ? "" : "s");
	for (size_t i = 0; groups && i < groups->count && i < GROUPS_SHOWN; i++) {
		fputs(i ? ", " : ": ", out);
		put_group(out, (const struct key_group *)groups->items + i);
	}
	if (groups && groups->count > GROUPS_SHOWN)
		fprintf(out, ", and %zu sections more", groups->count - GROUPS_SHOWN);
	fputs(" (-f json lists each)\n", out);
	dtl_arena_fini(&arena);
}

static void plan_text(FILE *out, const struct dtl_input_view *view)
{
	const struct dtl_view_plan *rp = &view->rp;
	const struct dtl_plan *p = rp->plan;

	fputs("plan for ", out);
	dtl_report_put_escaped(out, view->manifest->file ? view->manifest->file : "-");
	fputs(":\n", out);
	fprintf(out, "  strategy      %s", dtl_strategy_name(p->strategy));
	put_source(out, p->strategy_loc);
	char precision[1024];
	fputs("\n  precision     ", out);
	dtl_report_put_escaped(out, dtl_report_precision(p, precision, sizeof(precision)));
	fprintf(out, " (mode dtype %s)", dtype_or(rp->mode_dtype, "none"));
	fprintf(out, "\n  world size    %lld%s", (long long)p->world_size,
	        rp->world_size_assumed ? " (assumed)" : "");
	if (!rp->world_size_assumed)
		put_source(out, p->world_size_loc);
	fputc('\n', out);
	if (p->model_cast != DTL_DTYPE_NONE)
		fprintf(out, "  model cast    model.to(torch.%s) before the trainer (model_cast)\n",
		        dtl_dtype_name(p->model_cast));
	fputs("  trainer       ", out);
	dtl_report_put_escaped(out, p->trainer ? p->trainer : "none");
	/* where it came from, or that it is assumed (issue 33, item 3) */
	if (p->trainer_range) {
		fputs(" (", out);
		dtl_report_put_escaped(out, p->trainer_range);
		fputc(')', out);
	} else if (p->trainer_loc.file) {
		fputs(" (", out);
		dtl_report_put_path(out, p->trainer_loc.file);
		if (p->trainer_loc.line)
			fprintf(out, ":%u:%u", p->trainer_loc.line, p->trainer_loc.column);
		fputc(')', out);
	}
	fputc('\n', out);
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		char v[32], from[600];
		if (!dtl_report_version_shown(view, fw))
			continue;
		fprintf(out, "  %-13s %s (", dtl_framework_name(fw),
		        dtl_version_format(&p->versions[fw], v, sizeof(v)));
		dtl_report_put_escaped(out,
		                       dtl_report_version_source(view, fw, from, sizeof(from)));
		fputs(")\n", out);
	}
	if (p->strategy == DTL_STRATEGY_FSDP1 || p->strategy == DTL_STRATEGY_FSDP2) {
		fputs("  fsdp.wrap     ", out);
		if (!rp->wrap->count) /* LLaVA's _no_split_modules up to transformers 5.0.x */
			fputs("none", out);
		for (size_t i = 0; i < rp->wrap->count; i++) {
			fputs(i ? ", " : "", out);
			dtl_report_put_escaped(out, rp->wrap->items[i].text);
		}
		fprintf(out, "%s\n", rp->wrap_from_model ? " (the model's _no_split_modules)" : "");
		if (rp->peft_wrap_policy && p->trainer && strcmp(p->trainer, "verl") == 0)
			fputs("  wrap policy   verl's get_fsdp_wrap_policy(is_lora=True): these "
			      "classes, and every leaf module whose weight requires grad\n",
			      out);
		else if (rp->peft_wrap_policy)
			fputs("  wrap policy   PEFT's fsdp_auto_wrap_policy (the HF Trainer's "
			      "_fsdp_qlora_plugin_updates): these classes, and every leaf module "
			      "whose "
			      "weight requires grad\n",
			      out);
		fprintf(out, "  fsdp dtypes   param %s, reduce %s, buffer %s\n",
		        dtype_or(p->fsdp.param_dtype, "None"),
		        dtype_or(p->fsdp.reduce_dtype, "None"),
		        dtype_or(p->fsdp.buffer_dtype, "None"));
		if (p->fsdp.cpu_offload == DTL_TRUE)
			fputs("  fsdp offload  parameters, gradients and optimizer states on the "
			      "CPU\n",
			      out);
	}
	if (p->strategy == DTL_STRATEGY_ZERO3)
		fprintf(out,
		        "  zero3         init %s, persistence threshold %lld%s, buffer_dtype %s\n",
		        rp->zero_init ? "true" : "false", (long long)rp->persistence_threshold,
		        p->zero3.persistence_auto ? " (auto: 10 * hidden_size)" : "",
		        dtype_or(p->zero3.buffer_dtype, "None"));
	key_list(out, "  keys read     ", view->manifest->recipe.keys_read,
	         view->manifest->recipe.keys_read_count);
	key_list(out, "  not read      ", view->manifest->recipe.keys_not_read,
	         view->manifest->recipe.keys_not_read_count);
	if (view->manifest->recipe.framework_keys) {
		fw_read_text(out, &view->manifest->recipe);
		fw_not_read_text(out, &view->manifest->recipe);
	}
	if (view->manifest->recipe.arguments_read) {
		fputs("  arguments     ", out);
		dtl_report_put_escaped(out, view->manifest->recipe.arguments_read);
		fputc('\n', out);
	}
	fputs("  stages:\n", out);
	stages(out, NULL, view);
}

static void key_source(struct dtl_json *w, const char *key, struct dtl_loc loc, bool given)
{
	char buf[600];
	const char *from = given ? setting_source(loc, buf, sizeof(buf)) : NULL;
	if (from)
		dtl_json_key_string(w, key, from);
	else
		dtl_json_key_null(w, key);
}

/* "framework_keys": {"read": [{"key", "value", "from"}], "not_read": [...]}: every key */
static void fw_keys_json(struct dtl_json *w, const struct dtl_recipe *r)
{
	dtl_json_key_object(w, "framework_keys");
	dtl_json_key_array(w, "read");
	for (size_t i = 0; i < r->fw_keys_read_count; i++) {
		const struct dtl_key_read *k = &r->fw_keys_read[i];
		dtl_json_begin_object(w);
		dtl_json_key_string(w, "key", k->key);
		if (k->value)
			dtl_json_key_string(w, "value", k->value);
		else
			dtl_json_key_null(w, "value");
		key_source(w, "from", k->loc, k->value != NULL);
		dtl_json_end_object(w);
	}
	dtl_json_end_array(w);
	json_key_list(w, "not_read", r->fw_keys_not_read, r->fw_keys_not_read_count);
	dtl_json_end_object(w);
}

static void plan_json(struct dtl_json *w, const struct dtl_input_view *view)
{
	const struct dtl_view_plan *rp = &view->rp;
	const struct dtl_plan *p = rp->plan;

	dtl_json_begin_object(w);
	dtl_json_key_string(w, "file", view->manifest->file ? view->manifest->file : "-");
	dtl_json_key_string(w, "strategy", dtl_strategy_name(p->strategy));
	char precision[1024];
	dtl_json_key_string(w, "precision",
	                    p->precision == DTL_PRECISION_UNSET ? "unset"
	                                                        : dtl_precision_name(p->precision));
	dtl_json_key_string(w, "precision_text",
	                    dtl_report_precision(p, precision, sizeof(precision)));
	dtl_json_key_string(w, "mode_dtype", dtype_or(rp->mode_dtype, "none"));
	dtl_json_key_int(w, "world_size", p->world_size);
	dtl_json_key_bool(w, "world_size_assumed", rp->world_size_assumed);
	/* where each came from (null: a default) */
	key_source(w, "strategy_from", p->strategy_loc, true);
	key_source(w, "precision_from", p->precision_loc, true);
	key_source(w, "world_size_from", p->world_size_loc, !rp->world_size_assumed);
	dtl_json_key_string(w, "trainer", p->trainer ? p->trainer : "none");
	dtl_json_key_string(w, "model_cast", dtype_or(p->model_cast, "none"));
	const struct dtl_recipe *recipe = &view->manifest->recipe;
	if (recipe->keys_read_count + recipe->keys_not_read_count) { /* --trainer-args only */
		json_key_list(w, "keys_read", recipe->keys_read, recipe->keys_read_count);
		json_key_list(w, "keys_not_read", recipe->keys_not_read,
		              recipe->keys_not_read_count);
	}
	if (recipe->framework_keys)
		fw_keys_json(w, recipe);
	dtl_json_key_object(w, "versions");
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		char v[32], from[600];
		if (!dtl_report_version_shown(view, fw))
			continue;
		dtl_json_key_object(w, dtl_framework_name(fw));
		dtl_json_key_string(w, "version",
		                    dtl_version_format(&p->versions[fw], v, sizeof(v)));
		dtl_json_key_string(w, "from",
		                    dtl_report_version_source(view, fw, from, sizeof(from)));
		dtl_json_end_object(w);
	}
	dtl_json_end_object(w);
	dtl_json_key_object(w, "fsdp");
	dtl_json_key_array(w, "wrap");
	for (size_t i = 0; i < rp->wrap->count; i++)
		dtl_json_put_string(w, rp->wrap->items[i].text);
	dtl_json_end_array(w);
	dtl_json_key_bool(w, "wrap_from_model", rp->wrap_from_model);
	dtl_json_key_bool(w, "peft_wrap_policy", rp->peft_wrap_policy);
	dtl_json_key_string(w, "param_dtype", dtype_or(p->fsdp.param_dtype, "none"));
	dtl_json_key_string(w, "reduce_dtype", dtype_or(p->fsdp.reduce_dtype, "none"));
	dtl_json_key_string(w, "buffer_dtype", dtype_or(p->fsdp.buffer_dtype, "none"));
	dtl_json_end_object(w);
	dtl_json_key_object(w, "zero3");
	dtl_json_key_bool(w, "init", rp->zero_init);
	dtl_json_key_string(w, "init_dtype", dtype_or(rp->zero_init_dtype, "none"));
	dtl_json_key_int(w, "persistence_threshold", rp->persistence_threshold);
	dtl_json_key_bool(w, "persistence_auto", p->zero3.persistence_auto);
	dtl_json_end_object(w);
	dtl_json_key_array(w, "stages");
	stages(NULL, w, view);
	dtl_json_end_array(w);
	dtl_json_end_object(w);
}

int dtl_report_plan(FILE *out, const struct dtl_report_input *inputs, size_t n, bool json)
{
	struct dtl_json w;

	if (!json) {
		for (size_t i = 0; i < n; i++)
			if (inputs[i].view)
				plan_text(out, inputs[i].view);
		return ferror(out) ? -EIO : 0;
	}
	dtl_json_init(&w, out);
	dtl_json_begin_object(&w);
	dtl_json_key_array(&w, "plans");
	for (size_t i = 0; i < n; i++) {
		if (!inputs[i].view)
			continue;
		dtl_json_break(&w, 2);
		plan_json(&w, inputs[i].view);
	}
	dtl_json_break(&w, 0);
	dtl_json_end_array(&w);
	dtl_report_json_warnings(&w, inputs, n);
	dtl_json_end_object(&w);
	return dtl_json_finish(&w);
}
