/* SPDX-License-Identifier: MIT */
/*
 * The PEFT importer: a LoRA adapter's adapter_config.json becomes the manifest's adapter
 * (targets, rank, modules_to_save, task type), which the peft stage of the simulation then
 * adds to the tensor table. Also the task-type and added-with checks that the manifest's own
 * adapter section (manifest-parse.c) shares.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/model/import.h"
#include "import-util.h"

/* peft/utils/peft_types.py TaskType (v0.20.0); PeftConfig.__post_init__ raises "Invalid task
 * type" for anything else */
static const char *const task_types[] = {"SEQ_CLS",   "SEQ_2_SEQ_LM", "CAUSAL_LM",
                                         "TOKEN_CLS", "QUESTION_ANS", "FEATURE_EXTRACTION",
                                         NULL};

int dtl_adapter_task_type(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                          struct dtl_adapter *a)
{
	const char *text;
	int r;

	if (v->type == DTL_NODE_NULL) {
		a->task_type = NULL;
		return 0;
	}
	if ((r = dtl_schema_string(s, v, what, &text)) < 0)
		return r;
	for (const char *const *t = task_types; *t; t++)
		if (strcmp(*t, text) == 0) {
			a->task_type = *t;
			a->task_type_loc = dtl_schema_loc(s, v);
			return 0;
		}
	return dtl_schema_fail(s, v,
	                       "'%s' must be one of SEQ_CLS, SEQ_2_SEQ_LM, CAUSAL_LM, TOKEN_CLS, "
	                       "QUESTION_ANS, FEATURE_EXTRACTION or null, got %s",
	                       what, dtl_schema_describe(s, v));
}

int dtl_adapter_added_with(const struct dtl_schema *s, const struct dtl_node *v,
                           struct dtl_adapter *a)
{
	const char *text;
	int r = dtl_schema_string(s, v, "adapter.added_with", &text);

	if (r < 0)
		return r;
	if (strcmp(text, "get_peft_model") == 0)
		a->added_with = DTL_ADDED_GET_PEFT_MODEL;
	else if (strcmp(text, "add_adapter") == 0)
		a->added_with = DTL_ADDED_ADD_ADAPTER;
	else if (strcmp(text, "load_adapter") == 0)
		a->added_with = DTL_ADDED_LOAD_ADAPTER;
	else
		return dtl_schema_fail(
		    s, v,
		    "'adapter.added_with' must be get_peft_model, add_adapter or "
		    "load_adapter, got %s",
		    dtl_schema_describe(s, v));
	a->added_with_loc = dtl_schema_loc(s, v);
	return 0;
}

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
	if ((r = dtl_schema_root_map(s, root, "a PEFT adapter_config.json")) < 0)
		goto out;
	dtl_adapter_init(a, dtl_schema_loc(s, root));
	a->from_config_file = true;
	if ((v = dtl_node_get(root, "peft_type"))) {
		if ((r = dtl_schema_string(s, v, "peft_type", &text)) < 0)
			goto out;
		if (strcmp(text, "LORA") != 0) {
			r = dtl_schema_fail(
			    s, v,
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
	if ((v = dtl_node_get(root, "target_parameters")) && v->type != DTL_NODE_NULL &&
	    (r = dtl_schema_patterns(s, v, "target_parameters", DTL_PATTERN_PLAIN,
	                             &a->target_parameters)) < 0)
		goto out;
	if ((v = dtl_node_get(root, "task_type")) &&
	    (r = dtl_adapter_task_type(s, v, "task_type", a)) < 0)
		goto out;
	if ((v = dtl_node_get(root, "use_dora")) &&
	    (a->use_dora_loc = dtl_schema_loc(s, v),
	     (r = dtl_schema_tristate(s, v, "use_dora", &a->use_dora)) < 0))
		goto out;
	if ((v = dtl_node_get(root, "lora_dropout")) && v->type != DTL_NODE_NULL &&
	    (a->lora_dropout_loc = dtl_schema_loc(s, v),
	     (r = dtl_schema_float(s, v, "lora_dropout", 0, 1, &a->lora_dropout)) < 0))
		goto out;
	if (ret_base_model) {
		*ret_base_model = NULL;
		if ((v = dtl_node_get(root, "base_model_name_or_path")) &&
		    v->type == DTL_NODE_STRING)
			*ret_base_model = v->string.text;
	}
	if ((v = dtl_node_get(root, "layers_to_transform")) && v->type != DTL_NODE_NULL) {
		r = dtl_schema_fail(
		    s, v,
		    "layers_to_transform is not simulated: list the targeted modules "
		    "by name in target_modules (a regular expression) instead");
		goto out;
	}
	r = 0;
out:
	dtl_loaded_close(&l);
	return r;
}
