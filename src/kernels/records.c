/* SPDX-License-Identifier: MIT */
/*
 * What the token walk (extract.c) records, shared with the fact rules (fact-rules.c), the
 * expression readers (expr.c) and the registrations (register.c): the error, interned tokens,
 * the open function contexts, when-masks, facts, and the functions with their parameters. It
 * sits below all four, so that none of them calls back into extract.c (tests/kernels/
 * call-graph.sh).
 */
#include <errno.h>
#include <string.h>

#include "extract.h"

void dtl_kernels_rec_oom(struct kx *x)
{
	if (!x->err)
		x->err = -ENOMEM;
}

struct kfctx *dtl_kernels_rec_ctx(struct kx *x)
{
	return x->n_ctx ? &x->ctx[x->n_ctx - 1] : NULL;
}

const char *dtl_kernels_rec_intern_tok(struct kx *x, const char *text, size_t len)
{
	const char *s = dtl_kernels_intern(x->k, text, len);

	if (!s)
		dtl_kernels_rec_oom(x);
	return s;
}

uint64_t dtl_kernels_rec_when_at(const struct krange *r, size_t i)
{
	uint64_t mask = r->base_when;
	const struct kwhen *w = r->whens.items;

	for (size_t j = 0; j < r->whens.count; j++) {
		if (w[j].start <= i && i <= w[j].end)
			mask &= w[j].mask;
	}
	return mask;
}

int dtl_kernels_rec_add_when(struct kx *x, struct krange *r, size_t start, size_t end,
                             uint64_t mask)
{
	struct kwhen *w = dtl_vec_push(&r->whens, x->scratch, sizeof(*w));

	if (!w) {
		dtl_kernels_rec_oom(x);
		return -ENOMEM;
	}
	w->start = start;
	w->end = end;
	w->mask = mask;
	return 0;
}

struct kfact *dtl_kernels_rec_fact(struct kx *x, struct krange *r, size_t i,
                                   enum dtl_kernels_fact_kind kind)
{
	struct dtl_kernels_scanner *s = x->k->scanner;
	const struct ktok *t = &r->toks[i];
	const struct kguard *g = t->guard < x->kf->n_guards ? &x->kf->guards[t->guard] : NULL;
	struct kfctx *c = dtl_kernels_rec_ctx(x);
	struct kfact *f;

	/* #if 0 is dead code, not a build option */
	for (size_t j = 0; g && j < g->n; j++) {
		if (strcmp(g->names[j], "0") == 0)
			return NULL;
	}
	f = dtl_vec_push(&s->facts, x->k->arena, sizeof(*f));
	if (!f) {
		dtl_kernels_rec_oom(x);
		return NULL;
	}
	f->func = c ? c->func : KNONE;
	f->ev.kind = kind;
	f->ev.file = x->kf->path;
	f->ev.backend = x->kf->backend;
	f->ev.line = t->line;
	if (c) {
		struct kfunc *fn = (struct kfunc *)s->funcs.items + c->func;
		f->ev.function = fn->name;
		if (kind == DTL_KERNELS_FACT_DISPATCH || kind == DTL_KERNELS_FACT_SWITCH ||
		    kind == DTL_KERNELS_FACT_BRANCH)
			fn->has_dispatch = true;
	}
	if (g) {
		f->ev.guards = g->names;
		f->ev.n_guards = g->n;
	}
	f->ev.skipped = (t->flags & KTF_SKIPPED) != 0;
	f->ev.when = dtl_kernels_rec_when_at(r, i);
	f->ev.throws = true;
	if (r->wrapper) {
		f->ev.macro = dtl_kernels_rec_intern_tok(x, r->wrapper->name, r->wrapper->name_len);
		f->ev.macro_file = r->wrapper->file;
		f->ev.macro_line = r->wrapper->line;
	}
	return f;
}

/* ---- functions ---- */

static bool is_tensor_type(const struct ktok *t)
{
	return ktok_is(t, "Tensor") || ktok_is(t, "TensorList") || ktok_is(t, "Variable") ||
	       ktok_is(t, "variable_list") || ktok_is(t, "ITensorListRef");
}

static int params_of(struct kx *x, const struct ktok *toks, size_t open, size_t close,
                     struct kparam **ret, uint32_t *ret_n)
{
	size_t starts[2 * KMAX_CALL_ARGS], ends[2 * KMAX_CALL_ARGS];
	size_t n = dtl_kernels_split_args(toks, open + 1, close, starts, ends, 2 * KMAX_CALL_ARGS);
	struct kparam *params;

	*ret = NULL;
	*ret_n = 0;
	if (!n || (n == 1 && ends[0] == starts[0] + 1 && ktok_is(&toks[starts[0]], "void")))
		return 0;
	params = dtl_arena_calloc(x->k->arena, n, sizeof(*params));
	if (!params)
		return -ENOMEM;
	for (size_t p = 0; p < n; p++) {
		size_t lo = starts[p], hi = ends[p], depth = 0;
		/* cut the default argument and an array suffix */
		for (size_t j = lo; j < hi; j++) {
			const struct ktok *t = &toks[j];
			if (ktok_punct(t, "(") || ktok_punct(t, "{") || ktok_punct(t, "<"))
				depth++;
			else if ((ktok_punct(t, ")") || ktok_punct(t, "}") || ktok_punct(t, ">")) &&
			         depth)
				depth--;
			else if (depth == 0 && (ktok_punct(t, "=") || ktok_punct(t, "["))) {
				hi = j;
				break;
			}
		}
		for (size_t j = lo; j < hi; j++)
			params[p].tensor |= is_tensor_type(&toks[j]);
		params[p].name = "";
		if (hi > lo && toks[hi - 1].kind == KT_IDENT) {
			bool named = hi - lo >= 2 ? !ktok_punct(&toks[hi - 2], "::")
			                          : !is_tensor_type(&toks[hi - 1]);
			if (named) {
				params[p].name = dtl_kernels_rec_intern_tok(x, toks[hi - 1].text,
				                                            toks[hi - 1].len);
				if (!params[p].name)
					return -ENOMEM;
			}
		}
	}
	*ret = params;
	*ret_n = (uint32_t)n;
	return 0;
}

static int tparams_of(struct kx *x, const struct ktok *toks, size_t lo, size_t hi,
                      const char ***ret, uint32_t *ret_n)
{
	size_t starts[KMAX_CALL_ARGS], ends[KMAX_CALL_ARGS];
	size_t n = 0, depth = 0, start = lo;

	*ret = NULL;
	*ret_n = 0;
	for (size_t i = lo; i <= hi && n < KMAX_CALL_ARGS; i++) {
		if (i < hi) {
			if (ktok_punct(&toks[i], "<") || ktok_punct(&toks[i], "("))
				depth++;
			else if ((ktok_punct(&toks[i], ">") || ktok_punct(&toks[i], ")")) && depth)
				depth--;
			if (depth || !ktok_punct(&toks[i], ","))
				continue;
		}
		starts[n] = start;
		ends[n] = i;
		n++;
		start = i + 1;
	}
	if (!n)
		return 0;
	const char **names = dtl_arena_calloc(x->k->arena, n, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t p = 0; p < n; p++) {
		size_t e = ends[p];
		for (size_t j = starts[p]; j < e; j++) {
			if (ktok_punct(&toks[j], "=")) {
				e = j;
				break;
			}
		}
		names[p] = "";
		for (size_t j = e; j-- > starts[p];) {
			if (toks[j].kind == KT_IDENT) {
				names[p] = dtl_kernels_rec_intern_tok(x, toks[j].text, toks[j].len);
				break;
			}
			if (!ktok_punct(&toks[j], "..."))
				break;
		}
		if (!names[p])
			return -ENOMEM;
	}
	*ret = names;
	*ret_n = (uint32_t)n;
	return 0;
}

int dtl_kernels_rec_open_ctx(struct kx *x, uint32_t func, size_t scope)
{
	struct kfctx *c;

	if (x->n_ctx >= KMAX_FUNC_CONTEXTS)
		return -E2BIG;
	c = &x->ctx[x->n_ctx++];
	memset(c, 0, sizeof(*c));
	c->func = func;
	c->scope = scope;
	dtl_strmap_init(&c->refs, x->scratch);
	return 0;
}

void dtl_kernels_rec_close_ctx(struct kx *x)
{
	struct kfctx *c = dtl_kernels_rec_ctx(x);
	struct kfunc *f;

	if (!c)
		return;
	f = (struct kfunc *)x->k->scanner->funcs.items + c->func;
	if (c->reflist.count) {
		const char **refs = dtl_arena_calloc(x->k->arena, c->reflist.count, sizeof(*refs));
		const struct kslice *s = c->reflist.items;
		if (!refs) {
			dtl_kernels_rec_oom(x);
		} else {
			for (size_t i = 0; i < c->reflist.count; i++)
				refs[i] = dtl_kernels_rec_intern_tok(x, s[i].text, s[i].len);
			f = (struct kfunc *)x->k->scanner->funcs.items + c->func;
			f->refs = refs;
			f->n_refs = (uint32_t)c->reflist.count;
		}
	}
	if (c->calls.count) {
		struct kcall *calls = dtl_arena_calloc(x->k->arena, c->calls.count, sizeof(*calls));
		if (!calls) {
			dtl_kernels_rec_oom(x);
		} else {
			memcpy(calls, c->calls.items, c->calls.count * sizeof(*calls));
			f = (struct kfunc *)x->k->scanner->funcs.items + c->func;
			f->calls = calls;
			f->n_calls = (uint32_t)c->calls.count;
		}
	}
	x->n_ctx--;
}

uint32_t dtl_kernels_rec_new_function(struct kx *x, const struct ktok *toks, size_t name,
                                      size_t open, size_t close, const struct ktok *cls, size_t tlo,
                                      size_t thi)
{
	struct dtl_kernels_scanner *s = x->k->scanner;
	struct kfunc *f = dtl_vec_push(&s->funcs, x->k->arena, sizeof(*f));
	struct kparam *params;
	uint32_t n_params;
	const char **tparams = NULL;
	uint32_t n_tparams = 0;

	if (!f) {
		dtl_kernels_rec_oom(x);
		return KNONE;
	}
	uint32_t index = (uint32_t)(s->funcs.count - 1);
	f->name = dtl_kernels_rec_intern_tok(x, toks[name].text, toks[name].len);
	f->file = x->kf->path;
	f->line = toks[name].line;
	if (name >= 2 && ktok_punct(&toks[name - 1], "::") && toks[name - 2].kind == KT_IDENT)
		cls = &toks[name - 2];
	if (cls)
		f->cls = dtl_kernels_rec_intern_tok(x, cls->text, cls->len);
	if (params_of(x, toks, open, close, &params, &n_params) < 0 ||
	    (thi > tlo && tparams_of(x, toks, tlo, thi, &tparams, &n_tparams) < 0)) {
		dtl_kernels_rec_oom(x);
		return KNONE;
	}
	f = (struct kfunc *)s->funcs.items + index;
	f->params = params;
	f->n_params = n_params;
	f->tparams = tparams;
	f->n_tparams = n_tparams;
	x->k->stats.functions++;
	return index;
}

/* A lambda bound by a registration: a function of its own, named "<lambda>". */
uint32_t dtl_kernels_rec_new_lambda(struct kx *x, const struct ktok *toks, size_t at, size_t open,
                                    size_t close)
{
	struct dtl_kernels_scanner *s = x->k->scanner;
	struct kfunc *f = dtl_vec_push(&s->funcs, x->k->arena, sizeof(*f));
	struct kparam *params = NULL;
	uint32_t n_params = 0;

	if (!f) {
		dtl_kernels_rec_oom(x);
		return KNONE;
	}
	uint32_t index = (uint32_t)(s->funcs.count - 1);
	f->name = dtl_kernels_intern_z(x->k, "<lambda>");
	f->file = x->kf->path;
	f->line = toks[at].line;
	if (open < close && params_of(x, toks, open, close, &params, &n_params) < 0) {
		dtl_kernels_rec_oom(x);
		return KNONE;
	}
	f = (struct kfunc *)s->funcs.items + index;
	f->params = params;
	f->n_params = n_params;
	x->k->stats.functions++;
	return index;
}
