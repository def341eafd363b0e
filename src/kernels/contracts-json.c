/* SPDX-License-Identifier: MIT */
/* The versioned JSON form of the kernel contracts: byte-identical for the same sources. */
#include <errno.h>
#include <stdio.h>

#include "dtypelint/core/json-writer.h"
#include "kernels-private.h"

static void put_types(struct dtl_json *w, const char *key, uint64_t set)
{
	dtl_json_key_array(w, key);
	for (unsigned bit = 0; bit < 64; bit++) {
		const char *name;
		if ((set & (UINT64_C(1) << bit)) && (name = dtl_kernels_dtype_name(bit)))
			dtl_json_put_string(w, name);
	}
	dtl_json_end_array(w);
}

static void put_evidence(struct dtl_json *w, const struct dtl_kernels_evidence *e)
{
	uint64_t all = dtl_kernels_all_dtypes();

	dtl_json_begin_object(w);
	dtl_json_key_string(w, "file", e->file);
	dtl_json_key_uint(w, "line", e->line);
	dtl_json_key_string(w, "kind", dtl_kernels_fact_kind_name(e->kind));
	dtl_json_key_uint(w, "call_depth", e->call_depth);
	dtl_json_key_string(w, "function", e->function);
	dtl_json_key_string(w, "backend", e->backend);
	dtl_json_key_string(w, "param", e->param);
	dtl_json_key_string(w, "subject", e->subject);
	if (e->same_as) {
		dtl_json_key_string(w, "same_dtype_as", e->same_as);
		dtl_json_key_string(w, "same_dtype_as_param", e->same_as_param);
	} else {
		put_types(w, "types", e->types);
	}
	if (e->guarded_types)
		put_types(w, "guarded_types", e->guarded_types);
	if ((e->when & all) != all)
		put_types(w, "only_for", e->when & all);
	if (e->name)
		dtl_json_key_string(w, "name", e->name);
	if (e->macro) {
		dtl_json_key_string(w, "macro", e->macro);
		if (e->macro_file) {
			dtl_json_key_string(w, "macro_file", e->macro_file);
			dtl_json_key_uint(w, "macro_line", e->macro_line);
		}
	}
	if (e->template_param)
		dtl_json_key_string(w, "template_param", e->template_param);
	dtl_json_key_bool(w, "throws", e->throws);
	dtl_json_key_string(w, "message", e->message);
	dtl_json_key_bool(w, "negated", e->negated);
	dtl_json_key_bool(w, "conditional", e->conditional);
	dtl_json_key_bool(w, "skipped", e->skipped);
	dtl_json_key_array(w, "ifdef_guards");
	for (size_t g = 0; g < e->n_guards; g++)
		dtl_json_put_string(w, e->guards[g]);
	dtl_json_end_array(w);
	dtl_json_end_object(w);
}

static void put_input(struct dtl_json *w, const struct dtl_kernels_input *in)
{
	dtl_json_begin_object(w);
	dtl_json_key_string(w, "name", in->name);
	dtl_json_key_bool(w, "tensor", in->tensor);
	if (in->known) {
		put_types(w, "accepts", in->accepts);
		dtl_json_key_string(w, "basis", dtl_kernels_fact_kind_name(in->basis));
		dtl_json_key_uint(w, "call_depth", in->call_depth);
	} else {
		dtl_json_key_null(w, "accepts");
		dtl_json_key_null(w, "basis");
		dtl_json_key_null(w, "call_depth");
	}
	dtl_json_key_string(w, "same_dtype_as", in->same_dtype_as);
	dtl_json_end_object(w);
}

static void put_contract(struct dtl_json *w, const struct dtl_kernels_contract *c)
{
	dtl_json_begin_object_block(w);
	dtl_json_key_string(w, "op", c->op);
	dtl_json_key_string(w, "namespace", c->ns);
	dtl_json_key_string(w, "binding", dtl_kernels_binding_name(c->binding));
	dtl_json_key_string(w, "dispatch_key", c->dispatch_key);
	dtl_json_key_string(w, "backend", c->backend);
	dtl_json_key_string(w, "function", c->function);
	dtl_json_key_string(w, "file", c->file);
	dtl_json_key_uint(w, "line", c->line);
	dtl_json_key(w, "definition");
	if (c->definition_file) {
		dtl_json_begin_object(w);
		dtl_json_key_string(w, "file", c->definition_file);
		dtl_json_key_uint(w, "line", c->definition_line);
		dtl_json_end_object(w);
	} else {
		dtl_json_put_null(w);
	}
	dtl_json_key_string(w, "schema", c->schema);
	put_types(w, "template_types", c->template_types);
	put_types(w, "dispatch_types", c->dispatch_types);
	put_types(w, "asserted_types", c->asserted_types);
	put_types(w, "accessor_types", c->accessor_types);
	put_types(w, "branch_types", c->branch_types);
	dtl_json_key(w, "inputs");
	dtl_json_begin_array_block(w);
	for (size_t i = 0; i < c->n_inputs; i++)
		put_input(w, &c->inputs[i]);
	dtl_json_end_array(w);
	dtl_json_key(w, "evidence");
	dtl_json_begin_array_block(w);
	for (size_t i = 0; i < c->n_evidence; i++)
		put_evidence(w, &c->evidence[i]);
	dtl_json_end_array(w);
	dtl_json_end_object(w);
}

static void put_scanner(struct dtl_json *w, const struct dtl_kernels_stats *s)
{
	dtl_json_key_object(w, "scanner");
	dtl_json_key_string(w, "mode", "hermetic");
	dtl_json_key_uint(w, "files", s->files);
	dtl_json_key_uint(w, "files_failed", s->files_failed);
	dtl_json_key_uint(w, "files_skipped", s->files_skipped);
	dtl_json_key_uint(w, "functions", s->functions);
	dtl_json_key_uint(w, "at_dispatch_sites", s->at_dispatch_sites);
	dtl_json_key_uint(w, "at_dispatch_unresolved", s->at_dispatch_unresolved);
	dtl_json_key_uint(w, "wrapper_sites", s->wrapper_sites);
	dtl_json_key_uint(w, "asserts", s->asserts);
	dtl_json_key_uint(w, "branches", s->branches);
	dtl_json_key_uint(w, "switches", s->switches);
	dtl_json_key_uint(w, "accessors", s->accessors);
	dtl_json_key_uint(w, "registrations", s->registrations);
	dtl_json_end_object(w);
}

int dtl_kernels_write_json(FILE *out, const struct dtl_kernels *k, struct dtl_error *error)
{
	struct dtl_loc nowhere = {0};
	struct dtl_json w;

	if (k->scanner && !k->scanner->linked)
		return dtl_error_set(error, nowhere, -EINVAL,
		                     "kernel contracts are not linked (dtl_kernels_link)");
	dtl_json_init(&w, out);
	dtl_json_begin_object_block(&w);
	dtl_json_key_uint(&w, "version", 1);
	dtl_json_key_string(&w, "tool", "dtypelint");
	put_scanner(&w, &k->stats);
	dtl_json_key(&w, "contracts");
	dtl_json_begin_array_block(&w);
	for (size_t i = 0; i < k->n_contracts; i++)
		put_contract(&w, &k->contracts[i]);
	dtl_json_end_array(&w);
	dtl_json_end_object(&w);
	if (dtl_json_finish(&w) < 0 || fflush(out) != 0)
		return dtl_error_set(error, nowhere, -EIO, "cannot write the kernel contracts");
	return 0;
}
