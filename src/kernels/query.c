/* SPDX-License-Identifier: MIT */
/*
 * "Does op X accept dtype D for its tensor inputs?": the first fact on the op's call path that
 * D fails, the runtime error it raises, and how sure that is.
 * docs/kernels.md §8: a mapped, unguarded fact errors;
 * the same facts under #if guards, skipped by the preprocessor, conditional or not mapped to a
 * parameter only warn; an op without facts is unknown.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernels-private.h"

static int rank(enum dtl_kernels_verdict v)
{
	switch (v) {
	case DTL_KERNELS_REJECTS:
		return 4;
	case DTL_KERNELS_UNCHECKED:
		return 3;
	case DTL_KERNELS_MAY_REJECT:
		return 2;
	case DTL_KERNELS_ACCEPTS:
		return 1;
	case DTL_KERNELS_UNKNOWN:
		return 0;
	}
	return 0;
}

static const struct dtl_kernels_input *input_named(const struct dtl_kernels_contract *c,
                                                   const char *name)
{
	for (size_t i = 0; name && i < c->n_inputs; i++) {
		if (strcmp(c->inputs[i].name, name) == 0)
			return &c->inputs[i];
	}
	return NULL;
}

static bool relevant(const struct dtl_kernels_contract *c, const struct dtl_kernels_evidence *e,
                     uint64_t bit, const char *param, const char *backend)
{
	if (e->same_as || !(e->types | e->guarded_types) || !(e->when & bit))
		return false;
	if (backend && e->backend && strcmp(e->backend, backend) != 0)
		return false;
	if (param)
		return !e->param || strcmp(e->param, param) == 0;
	const struct dtl_kernels_input *in = input_named(c, e->param);
	return !in || in->tensor;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* A typed accessor next to a dispatch or branch in the same function may sit in a path the
 * fed dtype never takes. */
static bool beside_dispatch(const struct dtl_kernels_contract *c,
                            const struct dtl_kernels_evidence *e)
{
	for (size_t i = 0; i < c->n_evidence; i++) {
		const struct dtl_kernels_evidence *o = &c->evidence[i];
		if (o->kind != DTL_KERNELS_FACT_ACCESSOR && o->kind != DTL_KERNELS_FACT_ASSERT &&
		    o->call_depth == e->call_depth && same_str(o->function, e->function) &&
		    same_str(o->file, e->file))
			return true;
	}
	return false;
}

static bool definite(const struct dtl_kernels_contract *c, const struct dtl_kernels_evidence *e)
{
	if (!e->param || e->skipped || e->n_guards || e->conditional)
		return false;
	if (e->kind == DTL_KERNELS_FACT_ACCESSOR && beside_dispatch(c, e))
		return false;
	return true;
}

/* Replaces {ScalarType} and {dtype} with how c10 prints the fed dtype. */
static void render(char *out, size_t size, const char *template, unsigned bit)
{
	const char *scalar = dtl_kernels_scalar_type_name(bit),
	           *meta = dtl_kernels_vocab_typemeta_name(bit);
	size_t used = 0;

	out[0] = '\0';
	for (const char *p = template; *p && used + 1 < size;) {
		const char *sub = NULL;
		size_t skip = 0;
		if (strncmp(p, "{ScalarType}", 12) == 0) {
			sub = scalar;
			skip = 12;
		} else if (strncmp(p, "{dtype}", 7) == 0) {
			sub = meta;
			skip = 7;
		}
		if (sub) {
			int n = snprintf(out + used, size - used, "%s", sub);
			if (n < 0)
				break;
			used += (size_t)n < size - used ? (size_t)n : size - used - 1;
			p += skip;
			continue;
		}
		out[used++] = *p++;
		out[used] = '\0';
	}
}

struct group {
	const char *function, *file, *base;
	unsigned depth;
	uint64_t handled, guarded;
	const struct dtl_kernels_evidence *first, *guard_fact;
};

#define MAX_GROUPS 64

static void unchecked_message(char *out, size_t size, const struct group *g, unsigned bit)
{
	uint64_t mask = UINT64_C(1) << bit;
	char types[256];
	const struct dtl_kernels_evidence *e = g->first;
	size_t n;

	dtl_kernels_format_dtypes(g->handled, types, sizeof(types));
	n = (size_t)snprintf(
	    out, size,
	    "nothing is raised: the %s in %s (%s:%u) handles only [%s], '%s' falls "
	    "through",
	    dtl_kernels_fact_kind_name(e->kind), e->function ? e->function : "?", e->file, e->line,
	    types, dtl_kernels_scalar_type_name(bit));
	if ((g->guarded & mask) && g->guard_fact && n < size && g->guard_fact->n_guards) {
		size_t m = (size_t)snprintf(out + n, size - n, " (handled when built with");
		n += m < size - n ? m : size - n;
		for (size_t i = 0; i < g->guard_fact->n_guards && n < size; i++) {
			m = (size_t)snprintf(out + n, size - n, "%s %s", i ? " &&" : "",
			                     g->guard_fact->guards[i]);
			n += m < size - n ? m : size - n;
		}
		if (n < size)
			snprintf(out + n, size - n, ")");
	}
}

static enum dtl_kernels_verdict evaluate(const struct dtl_kernels_contract *c, unsigned bit_index,
                                         const char *param, const char *backend,
                                         const struct dtl_kernels_evidence **ret_evidence,
                                         char *message, size_t size)
{
	uint64_t bit = UINT64_C(1) << bit_index;
	const struct dtl_kernels_evidence *may = NULL;
	struct group groups[MAX_GROUPS];
	size_t n_groups = 0;
	bool any = false;

	*ret_evidence = NULL;
	message[0] = '\0';
	for (size_t i = 0; i < c->n_evidence; i++) {
		const struct dtl_kernels_evidence *e = &c->evidence[i];
		if (!relevant(c, e, bit, param, backend))
			continue;
		if (!any && (e->types & bit))
			*ret_evidence = e; /* for ACCEPTS: the first fact that lets it pass */
		any = true;
		if (!e->throws) {
			/* a branch or switch that falls through: the union of its group counts */
			struct group *g = NULL;
			for (size_t j = 0; j < n_groups; j++) {
				if (groups[j].depth == e->call_depth &&
				    same_str(groups[j].function, e->function) &&
				    same_str(groups[j].file, e->file) &&
				    same_str(groups[j].base, e->subject_base))
					g = &groups[j];
			}
			if (!g && n_groups < MAX_GROUPS) {
				g = &groups[n_groups++];
				memset(g, 0, sizeof(*g));
				g->function = e->function;
				g->file = e->file;
				g->base = e->subject_base;
				g->depth = e->call_depth;
			}
			if (!g)
				continue;
			if (e->skipped) {
				g->guarded |= e->types | e->guarded_types;
				if (!g->guard_fact)
					g->guard_fact = e;
			} else {
				g->handled |= e->types;
				g->guarded |= e->guarded_types;
				if (!g->first)
					g->first = e;
			}
			continue;
		}
		if (e->types & bit)
			continue;
		if (definite(c, e)) {
			*ret_evidence = e;
			if (e->message)
				render(message, size, e->message, bit_index);
			return DTL_KERNELS_REJECTS;
		}
		if (!may)
			may = e;
	}
	if (may) {
		*ret_evidence = may;
		if (may->message)
			render(message, size, may->message, bit_index);
		return DTL_KERNELS_MAY_REJECT;
	}
	for (size_t j = 0; j < n_groups; j++) {
		const struct group *g = &groups[j];
		if (!g->first || (g->handled & bit))
			continue;
		*ret_evidence = g->first;
		unchecked_message(message, size, g, bit_index);
		return DTL_KERNELS_UNCHECKED;
	}
	if (c->template_types && !(c->template_types & bit)) {
		char types[256];
		dtl_kernels_format_dtypes(c->template_types, types, sizeof(types));
		snprintf(message, size,
		         "nothing is raised: %s is bound for [%s] only, a '%s' tensor is "
		         "reinterpreted",
		         c->function, types, dtl_kernels_scalar_type_name(bit_index));
		return DTL_KERNELS_UNCHECKED;
	}
	return any || c->template_types ? DTL_KERNELS_ACCEPTS : DTL_KERNELS_UNKNOWN;
}

int dtl_kernels_query(const struct dtl_kernels *k, const struct dtl_kernels_query *query,
                      struct dtl_kernels_answer *ret, struct dtl_error *error)
{
	struct dtl_loc nowhere = {0};
	const struct dtl_kernels_contract *first;
	size_t n, matching = 0;
	int best = -1;

	if (!query || !query->op || !ret)
		return dtl_error_set(error, nowhere, -EINVAL, "kernel query without an op");
	if (query->dtype <= DTL_DTYPE_NONE || query->dtype >= DTL_DTYPE_COUNT)
		return dtl_error_set(error, nowhere, -EINVAL, "kernel query without a dtype");
	if (k->scanner && !k->scanner->linked)
		return dtl_error_set(error, nowhere, -EINVAL,
		                     "kernel contracts are not linked (dtl_kernels_link)");
	n = dtl_kernels_find(k, query->op, &first);
	if (!n)
		return dtl_error_set(error, nowhere, -ENOENT,
		                     "no scanned source registers an op named '%s'", query->op);
	for (size_t i = 0; i < n; i++)
		matching += !query->backend || same_str(first[i].backend, query->backend);
	for (size_t i = 0; i < n; i++) {
		const struct dtl_kernels_contract *c = &first[i];
		struct dtl_kernels_answer a = {0};
		if (matching && query->backend && !same_str(c->backend, query->backend))
			continue;
		a.contract = c;
		a.verdict = evaluate(c, (unsigned)query->dtype, query->param, query->backend,
		                     &a.evidence, a.message, sizeof(a.message));
		if (rank(a.verdict) > best) {
			best = rank(a.verdict);
			*ret = a;
		}
	}
	return 0;
}
