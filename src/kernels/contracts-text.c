/* SPDX-License-Identifier: MIT */
/* One human line per op: where it is registered, what it is bound to, what it accepts. */
#include <errno.h>
#include <stdio.h>

#include "kernels-private.h"

static void put_set(FILE *out, const char *label, uint64_t set, bool *first)
{
	char buf[512];

	if (!set)
		return;
	dtl_kernels_format_dtypes(set, buf, sizeof(buf));
	fprintf(out, "%s%s [%s]", *first ? "" : "; ", label, buf);
	*first = false;
}

int dtl_kernels_write_text(FILE *out, const struct dtl_kernels *k, struct dtl_error *error)
{
	struct dtl_loc nowhere = {0};

	if (k->scanner && !k->scanner->linked)
		return dtl_error_set(error, nowhere, -EINVAL,
		                     "kernel contracts are not linked (dtl_kernels_link)");
	for (size_t i = 0; i < k->n_contracts; i++) {
		const struct dtl_kernel_contract *c = &k->contracts[i];
		bool first = true;

		fprintf(out, "%s:%u: op '%s%s%s' (%s%s%s) -> %s: ", c->file, c->line,
		        c->ns ? c->ns : "", c->ns ? "::" : "", c->op,
		        dtl_kernels_binding_name(c->binding), c->dispatch_key ? ", " : "",
		        c->dispatch_key ? c->dispatch_key : "", c->function);
		put_set(out, "dispatch", c->dispatch_types, &first);
		put_set(out, "asserted", c->asserted_types, &first);
		put_set(out, "accessor", c->accessor_types, &first);
		put_set(out, "branch", c->branch_types, &first);
		put_set(out, "template", c->template_types, &first);
		if (first) {
			fprintf(out, "no dtype facts within %u calls%s\n", k->options.max_depth,
			        c->definition_file ? "" : " (function not found)");
			continue;
		}
		const struct dtl_kernel_evidence *e = c->n_evidence ? &c->evidence[0] : NULL;
		if (e)
			fprintf(out, " (%zu fact%s, first %s at %s:%u, depth %u)", c->n_evidence,
			        c->n_evidence == 1 ? "" : "s", dtl_kernels_fact_kind_name(e->kind),
			        e->file, e->line, e->call_depth);
		fputc('\n', out);
	}
	if (fflush(out) != 0 || ferror(out))
		return dtl_error_set(error, nowhere, -EIO, "cannot write the kernel contracts");
	return 0;
}
