/* SPDX-License-Identifier: MIT */
/* PEFT adapter_config.json (LoRA) and trainer-argument YAMLs (LLaMA-Factory, TRL). */
#include <errno.h>
#include <string.h>

#include "dtypelint/import.h"
#include "import-util.h"

int dtl_import_peft(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
		    struct dtl_adapter *a, const char **ret_base_model, struct dtl_error *error)
{
	struct dtl_loaded l;
	const struct dtl_node *root, *v;
	const char *text;
	int r;

	if ((r = dtl_loaded_open(&l, path, arena, limits, error)) < 0)
		return r;
	root = l.root;
	const struct dtl_schema *s = &l.s;
	if ((r = dtl_schema_map(s, root, "adapter_config.json")) < 0)
		goto out;
	memset(a, 0, sizeof(*a));
	a->present = true;
	a->type = "lora";
	a->name = "default";
	a->r = 8;
	a->autocast_adapter_dtype = DTL_UNSET;
	a->prepare_kbit_training = DTL_UNSET;
	a->use_dora = DTL_UNSET;
	a->loc = dtl_schema_loc(s, root);
	if ((v = dtl_node_get(root, "peft_type"))) {
		if ((r = dtl_schema_string(s, v, "peft_type", &text)) < 0)
			goto out;
		if (strcmp(text, "LORA") != 0) {
			r = dtl_schema_fail(s, v,
					    "peft_type %s is not simulated (dtypelint models LoRA and "
					    "DoRA adapters)",
					    dtl_schema_describe(s, v));
			goto out;
		}
	}
	if ((v = dtl_node_get(root, "target_modules")) && v->type != DTL_NODE_NULL) {
		if (v->type == DTL_NODE_STRING) {
			a->target_modules_string = v->string.text;
			a->target_modules.present = true;
			a->target_modules.loc = dtl_schema_loc(s, v);
		} else if ((r = dtl_schema_patterns(s, v, "target_modules", DTL_PATTERN_PLAIN,
						    &a->target_modules)) < 0) {
			goto out;
		}
	}
	if ((v = dtl_node_get(root, "r")) && (r = dtl_schema_int(s, v, "r", 1, 1 << 20, &a->r)) < 0)
		goto out;
	if ((v = dtl_node_get(root, "modules_to_save")) && v->type != DTL_NODE_NULL &&
	    (r = dtl_schema_patterns(s, v, "modules_to_save", DTL_PATTERN_PLAIN,
				     &a->modules_to_save)) < 0)
		goto out;
	if ((v = dtl_node_get(root, "use_dora")) &&
	    (r = dtl_schema_tristate(s, v, "use_dora", &a->use_dora)) < 0)
		goto out;
	if (ret_base_model) {
		*ret_base_model = NULL;
		if ((v = dtl_node_get(root, "base_model_name_or_path")) && v->type == DTL_NODE_STRING)
			*ret_base_model = v->string.text;
	}
	if ((v = dtl_node_get(root, "layers_to_transform")) && v->type != DTL_NODE_NULL) {
		r = dtl_schema_fail(s, v,
				    "layers_to_transform is not simulated: list the targeted modules "
				    "by name in target_modules (a regular expression) instead");
		goto out;
	}
	r = 0;
out:
	dtl_loaded_close(&l);
	return r;
}

static bool yes(const struct dtl_node *v)
{
	return v && v->type == DTL_NODE_BOOL && v->boolean;
}

int dtl_import_trainer_args(const char *path, struct dtl_arena *arena,
			    const struct dtl_limits *limits, struct dtl_manifest *m,
			    struct dtl_error *error)
{
	struct dtl_loaded l;
	const struct dtl_node *root, *v;
	const char *text;
	int r;

	if ((r = dtl_loaded_open(&l, path, arena, limits, error)) < 0)
		return r;
	root = l.root;
	const struct dtl_schema *s = &l.s;
	struct dtl_plan *plan = &m->plan;
	if ((r = dtl_schema_map(s, root, "trainer arguments")) < 0)
		goto out;
	if (!plan->file) {
		plan->file = s->file;
		plan->loc = dtl_schema_loc(s, root);
	}
	if (yes(v = dtl_node_get(root, "bf16"))) {
		plan->precision = DTL_PRECISION_BF16;
		plan->precision_loc = dtl_schema_loc(s, v);
	} else if (yes(v = dtl_node_get(root, "fp16"))) {
		plan->precision = DTL_PRECISION_FP16;
		plan->precision_loc = dtl_schema_loc(s, v);
	}
	if ((v = dtl_node_get(root, "deepspeed")) && v->type == DTL_NODE_STRING) {
		r = dtl_import_deepspeed(dtl_path_relative_to(arena, path, v->string.text), arena,
					 limits, plan, error);
		if (r < 0)
			goto out;
	}
	if ((v = dtl_node_get(root, "fsdp")) && v->type == DTL_NODE_STRING && v->string.len &&
	    strstr(v->string.text, "shard")) {
		/* the HF Trainer's "full_shard auto_wrap": FSDP1 with the model's wrap classes */
		plan->strategy = DTL_STRATEGY_FSDP1;
		plan->strategy_loc = dtl_schema_loc(s, v);
	}
	if ((v = dtl_node_get(root, "quantization_bit"))) {
		int64_t bits;
		if ((r = dtl_schema_int(s, v, "quantization_bit", 2, 8, &bits)) < 0)
			goto out;
		if (bits != 4 && bits != 8) {
			r = dtl_schema_fail(s, v, "quantization_bit %lld is not bitsandbytes 4 or 8",
					    (long long)bits);
			goto out;
		}
		m->quantization.method = bits == 4 ? DTL_QUANT_BNB_4BIT : DTL_QUANT_BNB_8BIT;
		m->quantization.method_loc = m->quantization.loc = dtl_schema_loc(s, v);
	}
	const struct dtl_node *ft = dtl_node_get(root, "finetuning_type");
	if ((ft && ft->type == DTL_NODE_STRING && strcmp(ft->string.text, "lora") == 0) ||
	    dtl_node_get(root, "lora_target")) {
		struct dtl_adapter *a = &m->adapter;
		if (!a->present) {
			a->present = true;
			a->type = "lora";
			a->name = "default";
			a->r = 8;
			a->autocast_adapter_dtype = DTL_UNSET;
			a->prepare_kbit_training = DTL_UNSET;
			a->use_dora = DTL_UNSET;
			a->loc = dtl_schema_loc(s, ft ? ft : root);
		}
		if ((v = dtl_node_get(root, "lora_rank")) &&
		    (r = dtl_schema_int(s, v, "lora_rank", 1, 1 << 20, &a->r)) < 0)
			goto out;
		if ((v = dtl_node_get(root, "lora_target"))) {
			if ((r = dtl_schema_string(s, v, "lora_target", &text)) < 0)
				goto out;
			a->target_modules.present = true;
			a->target_modules.loc = dtl_schema_loc(s, v);
			if (strcmp(text, "all") == 0) {
				a->target_modules_string = "all-linear";
			} else {
				/* "q_proj,v_proj" */
				size_t n = 1;
				for (const char *p = text; *p; p++)
					n += *p == ',';
				a->target_modules.items = dtl_arena_calloc(arena, n, sizeof(struct dtl_pattern));
				if (!a->target_modules.items) {
					r = -ENOMEM;
					goto out;
				}
				for (const char *p = text; *p;) {
					const char *comma = strchr(p, ',');
					size_t len = comma ? (size_t)(comma - p) : strlen(p);
					if (len) {
						struct dtl_pattern *item =
							&a->target_modules.items[a->target_modules.count++];
						item->text = dtl_arena_strndup(arena, p, len);
						item->len = (uint32_t)len;
						item->loc = a->target_modules.loc;
					}
					p += len + (comma ? 1 : 0);
				}
			}
		}
	}
	r = 0;
out:
	dtl_loaded_close(&l);
	return r;
}
