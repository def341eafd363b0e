/* SPDX-License-Identifier: MIT */
/* The versioned JSON form of the kernel contracts: byte-identical for the same sources. */
#include <errno.h>
#include <stdio.h>

#include "dtypelint/report.h"
#include "kernels-private.h"

/* a JSON string (escaped as the report's JSON output does), or null */
static void put_string(FILE *out, const char *s)
{
	if (!s)
		fputs("null", out);
	else
		dtl_json_string(out, s);
}

static void put_types(FILE *out, uint64_t set)
{
	bool first = true;

	fputc('[', out);
	for (unsigned bit = 0; bit < 64; bit++) {
		const char *name;
		if (!(set & (UINT64_C(1) << bit)) || !(name = dtl_kernels_dtype_name(bit)))
			continue;
		if (!first)
			fputs(", ", out);
		put_string(out, name);
		first = false;
	}
	fputc(']', out);
}

static void put_key(FILE *out, const char *key, bool *first)
{
	if (!*first)
		fputs(", ", out);
	*first = false;
	put_string(out, key);
	fputs(": ", out);
}

static void put_evidence(FILE *out, const struct dtl_kernel_evidence *e)
{
	uint64_t all = dtl_kernels_all_dtypes();
	bool first = true;

	fputc('{', out);
	put_key(out, "file", &first);
	put_string(out, e->file);
	put_key(out, "line", &first);
	fprintf(out, "%u", e->line);
	put_key(out, "kind", &first);
	put_string(out, dtl_kernels_fact_kind_name(e->kind));
	put_key(out, "call_depth", &first);
	fprintf(out, "%u", e->call_depth);
	put_key(out, "function", &first);
	put_string(out, e->function);
	put_key(out, "backend", &first);
	put_string(out, e->backend);
	put_key(out, "param", &first);
	put_string(out, e->param);
	put_key(out, "subject", &first);
	put_string(out, e->subject);
	if (e->same_as) {
		put_key(out, "same_dtype_as", &first);
		put_string(out, e->same_as);
		put_key(out, "same_dtype_as_param", &first);
		put_string(out, e->same_as_param);
	} else {
		put_key(out, "types", &first);
		put_types(out, e->types);
	}
	if (e->guarded_types) {
		put_key(out, "guarded_types", &first);
		put_types(out, e->guarded_types);
	}
	if ((e->when & all) != all) {
		put_key(out, "only_for", &first);
		put_types(out, e->when & all);
	}
	if (e->name) {
		put_key(out, "name", &first);
		put_string(out, e->name);
	}
	if (e->macro) {
		put_key(out, "macro", &first);
		put_string(out, e->macro);
		if (e->macro_file) {
			put_key(out, "macro_file", &first);
			put_string(out, e->macro_file);
			put_key(out, "macro_line", &first);
			fprintf(out, "%u", e->macro_line);
		}
	}
	if (e->template_param) {
		put_key(out, "template_param", &first);
		put_string(out, e->template_param);
	}
	put_key(out, "throws", &first);
	fputs(e->throws ? "true" : "false", out);
	put_key(out, "message", &first);
	put_string(out, e->message);
	put_key(out, "negated", &first);
	fputs(e->negated ? "true" : "false", out);
	put_key(out, "conditional", &first);
	fputs(e->conditional ? "true" : "false", out);
	put_key(out, "skipped", &first);
	fputs(e->skipped ? "true" : "false", out);
	put_key(out, "ifdef_guards", &first);
	fputc('[', out);
	for (size_t g = 0; g < e->n_guards; g++) {
		if (g)
			fputs(", ", out);
		put_string(out, e->guards[g]);
	}
	fputs("]}", out);
}

static void put_contract(FILE *out, const struct dtl_kernel_contract *c)
{
	fputs("    {\n      \"op\": ", out);
	put_string(out, c->op);
	fputs(",\n      \"namespace\": ", out);
	put_string(out, c->ns);
	fputs(",\n      \"binding\": ", out);
	put_string(out, dtl_kernels_binding_name(c->binding));
	fputs(",\n      \"dispatch_key\": ", out);
	put_string(out, c->dispatch_key);
	fputs(",\n      \"backend\": ", out);
	put_string(out, c->backend);
	fputs(",\n      \"function\": ", out);
	put_string(out, c->function);
	fputs(",\n      \"file\": ", out);
	put_string(out, c->file);
	fprintf(out, ",\n      \"line\": %u", c->line);
	fputs(",\n      \"definition\": ", out);
	if (c->definition_file) {
		fputs("{\"file\": ", out);
		put_string(out, c->definition_file);
		fprintf(out, ", \"line\": %u}", c->definition_line);
	} else {
		fputs("null", out);
	}
	fputs(",\n      \"schema\": ", out);
	put_string(out, c->schema);
	fputs(",\n      \"template_types\": ", out);
	put_types(out, c->template_types);
	fputs(",\n      \"dispatch_types\": ", out);
	put_types(out, c->dispatch_types);
	fputs(",\n      \"asserted_types\": ", out);
	put_types(out, c->asserted_types);
	fputs(",\n      \"accessor_types\": ", out);
	put_types(out, c->accessor_types);
	fputs(",\n      \"branch_types\": ", out);
	put_types(out, c->branch_types);
	fputs(",\n      \"inputs\": [", out);
	for (size_t i = 0; i < c->n_inputs; i++) {
		const struct dtl_kernel_input *in = &c->inputs[i];
		bool first = true;
		fputs(i ? ",\n        {" : "\n        {", out);
		put_key(out, "name", &first);
		put_string(out, in->name);
		put_key(out, "tensor", &first);
		fputs(in->tensor ? "true" : "false", out);
		put_key(out, "accepts", &first);
		if (in->known)
			put_types(out, in->accepts);
		else
			fputs("null", out);
		put_key(out, "basis", &first);
		put_string(out, in->known ? dtl_kernels_fact_kind_name(in->basis) : NULL);
		put_key(out, "call_depth", &first);
		if (in->known)
			fprintf(out, "%u", in->call_depth);
		else
			fputs("null", out);
		put_key(out, "same_dtype_as", &first);
		put_string(out, in->same_dtype_as);
		fputc('}', out);
	}
	fputs(c->n_inputs ? "\n      ],\n      \"evidence\": [" : "],\n      \"evidence\": [", out);
	for (size_t i = 0; i < c->n_evidence; i++) {
		fputs(i ? ",\n        " : "\n        ", out);
		put_evidence(out, &c->evidence[i]);
	}
	fputs(c->n_evidence ? "\n      ]\n    }" : "]\n    }", out);
}

int dtl_kernels_write_json(FILE *out, const struct dtl_kernels *k, struct dtl_error *error)
{
	struct dtl_loc nowhere = {0};
	const struct dtl_kernels_stats *s = &k->stats;

	if (k->scanner && !k->scanner->linked)
		return dtl_error_set(error, nowhere, -EINVAL,
		                     "kernel contracts are not linked (dtl_kernels_link)");
	fputs("{\n  \"version\": 1,\n  \"tool\": \"dtypelint\",\n", out);
	fprintf(out,
	        "  \"scanner\": {\"mode\": \"hermetic\", \"files\": %zu, \"files_failed\": %zu, "
	        "\"files_skipped\": %zu, \"functions\": %zu, \"at_dispatch_sites\": %zu, "
	        "\"at_dispatch_unresolved\": %zu, \"wrapper_sites\": %zu, \"asserts\": %zu, "
	        "\"branches\": %zu, \"switches\": %zu, \"accessors\": %zu, \"registrations\": "
	        "%zu},\n",
	        s->files, s->files_failed, s->files_skipped, s->functions, s->at_dispatch_sites,
	        s->at_dispatch_unresolved, s->wrapper_sites, s->asserts, s->branches, s->switches,
	        s->accessors, s->registrations);
	fputs("  \"contracts\": [", out);
	for (size_t i = 0; i < k->n_contracts; i++) {
		fputs(i ? ",\n" : "\n", out);
		put_contract(out, &k->contracts[i]);
	}
	fputs(k->n_contracts ? "\n  ]\n}\n" : "]\n}\n", out);
	if (fflush(out) != 0 || ferror(out))
		return dtl_error_set(error, nowhere, -EIO, "cannot write the kernel contracts");
	return 0;
}
