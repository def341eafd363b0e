/* SPDX-License-Identifier: MIT */
/*
 * Op registrations: pybind11 m.def("name", &fn), TORCH_LIBRARY / _IMPL / _FRAGMENT m.def and
 * m.impl, torch::RegisterOperators().op("ns::name", &fn), with template dtypes (&f<__half>),
 * TORCH_FN(fn), py::overload_cast and lambdas bound in place.
 * docs/kernels.md §6 "Registrations".
 */
#include <string.h>

#include "extract.h"

#define MAX_ARGS  16
#define MAX_TARGS 8

static bool all_strings(const struct ktok *toks, size_t lo, size_t hi)
{
	if (lo >= hi)
		return false;
	for (size_t i = lo; i < hi; i++) {
		if (toks[i].kind != KT_LITERAL || !memchr(toks[i].text, '"', toks[i].len))
			return false;
	}
	return true;
}

struct ref {
	size_t name;  /* last identifier of the qualified name */
	size_t first; /* first token of the qualified name */
	size_t qual;  /* the identifier before the last "::", or SIZE_MAX */
	size_t targs_lo, targs_hi;
	size_t key; /* torch::dispatch(c10::DispatchKey::CUDA, ...): CUDA, or SIZE_MAX */
	bool lambda;
	size_t lambda_open, lambda_close, lambda_brace;
};

static bool unwrap_call(const struct ktok *toks, size_t *lo, size_t *hi, const char *name)
{
	size_t j = *lo;

	while (j < *hi && (toks[j].kind == KT_IDENT || ktok_punct(&toks[j], "::")) &&
	       !ktok_is(&toks[j], name))
		j++;
	if (j >= *hi || !ktok_is(&toks[j], name))
		return false;
	j++;
	if (j < *hi && ktok_punct(&toks[j], "<")) {
		int depth = 0;
		for (; j < *hi; j++) {
			if (ktok_punct(&toks[j], "<"))
				depth++;
			else if (ktok_punct(&toks[j], ">"))
				depth--;
			else if (ktok_punct(&toks[j], ">>"))
				depth -= 2;
			if (depth <= 0)
				break;
		}
		j++;
	}
	if (j >= *hi || !ktok_punct(&toks[j], "(") || dtl_kernels_match(toks, j, *hi) != *hi - 1)
		return false;
	*lo = j + 1;
	*hi = *hi - 1;
	return true;
}

static bool parse_ref(const struct ktok *toks, size_t lo, size_t hi, struct ref *ref)
{
	memset(ref, 0, sizeof(*ref));
	ref->qual = SIZE_MAX;
	ref->key = SIZE_MAX;
	for (int round = 0; round < 4; round++) {
		while (lo < hi && ktok_punct(&toks[lo], "&"))
			lo++;
		if (lo >= hi)
			return false;
		if (unwrap_call(toks, &lo, &hi, "TORCH_FN") ||
		    unwrap_call(toks, &lo, &hi, "overload_cast") ||
		    unwrap_call(toks, &lo, &hi, "static_cast") ||
		    unwrap_call(toks, &lo, &hi, "reinterpret_cast"))
			continue;
		size_t save_lo = lo, save_hi = hi;
		if (unwrap_call(toks, &lo, &hi, "dispatch")) {
			size_t s[2], e[2];
			if (dtl_kernels_split_args(toks, lo, hi, s, e, 2) == 2) {
				if (toks[e[0] - 1].kind == KT_IDENT)
					ref->key = e[0] - 1;
				lo = s[1];
				hi = e[1];
				continue;
			}
			lo = save_lo;
			hi = save_hi;
		}
		break;
	}
	if (ktok_punct(&toks[lo], "[")) {
		size_t m = dtl_kernels_match(toks, lo, hi), j;
		if (m >= hi)
			return false;
		ref->lambda = true;
		j = m + 1;
		if (j < hi && ktok_punct(&toks[j], "(")) {
			ref->lambda_open = j;
			ref->lambda_close = dtl_kernels_match(toks, j, hi);
			if (ref->lambda_close >= hi)
				return false;
			j = ref->lambda_close + 1;
		}
		while (j < hi && !ktok_punct(&toks[j], "{"))
			j++;
		if (j >= hi)
			return false;
		ref->lambda_brace = j;
		return true;
	}
	size_t j = lo;
	if (j < hi && ktok_punct(&toks[j], "::"))
		j++;
	ref->first = j;
	if (j >= hi || toks[j].kind != KT_IDENT)
		return false;
	ref->name = j;
	while (j + 2 < hi && ktok_punct(&toks[j + 1], "::") && toks[j + 2].kind == KT_IDENT) {
		ref->qual = j;
		j += 2;
		ref->name = j;
	}
	j++;
	if (j < hi && ktok_punct(&toks[j], "<")) {
		int depth = 0;
		size_t open = j;
		for (; j < hi; j++) {
			if (ktok_punct(&toks[j], "<"))
				depth++;
			else if (ktok_punct(&toks[j], ">"))
				depth--;
			else if (ktok_punct(&toks[j], ">>"))
				depth -= 2;
			if (depth <= 0)
				break;
		}
		if (j >= hi)
			return false;
		ref->targs_lo = open + 1;
		ref->targs_hi = j;
		j++;
	}
	return j == hi;
}

/* The enclosing TORCH_LIBRARY(ns, m) / TORCH_LIBRARY_IMPL(ns, KEY, m) / PYBIND11_MODULE. */
static const struct kfunc *library_block(struct kx *x)
{
	const struct kfunc *funcs = x->k->scanner->funcs.items;

	for (size_t c = x->n_ctx; c-- > 0;) {
		const struct kfunc *f = &funcs[x->ctx[c].func];
		if (strcmp(f->name, "TORCH_LIBRARY") == 0 ||
		    strcmp(f->name, "TORCH_LIBRARY_IMPL") == 0 ||
		    strcmp(f->name, "TORCH_LIBRARY_FRAGMENT") == 0 ||
		    strcmp(f->name, "PYBIND11_MODULE") == 0)
			return f;
	}
	return NULL;
}

void dtl_kernels_register(struct kx *x, struct krange *r, size_t i)
{
	const struct ktok *toks = r->toks;
	size_t close = dtl_kernels_match(toks, i + 1, r->n), starts[MAX_ARGS], ends[MAX_ARGS], n;
	const struct kfunc *block;
	struct kreg *g;
	struct ref ref;

	if (close >= r->n)
		return;
	n = dtl_kernels_split_args(toks, i + 2, close, starts, ends, MAX_ARGS);
	if (!n || !all_strings(toks, starts[0], ends[0]))
		return; /* py::init<>(), or not a registration */
	bool schema_only = n == 1 || !parse_ref(toks, starts[1], ends[1], &ref);
	block = library_block(x);
	if (schema_only &&
	    !(block && ktok_is(&toks[i], "def") && strcmp(block->name, "PYBIND11_MODULE") != 0))
		return;
	const char *text = dtl_kernels_expr_message(x, toks, starts, ends, 1);
	if (!text)
		return;

	g = dtl_vec_push(&x->k->scanner->regs, x->k->arena, sizeof(*g));
	if (!g) {
		dtl_kernels_rec_oom(x);
		return;
	}
	g->file = x->kf->path;
	g->line = toks[i].line;
	g->lambda_func = KNONE;
	if (ktok_is(&toks[i], "op")) {
		g->binding = DTL_KERNELS_BINDING_REGISTER_OPERATORS;
	} else if (block && strcmp(block->name, "TORCH_LIBRARY_IMPL") == 0) {
		g->binding = DTL_KERNELS_BINDING_TORCH_LIBRARY_IMPL;
		if (block->n_params >= 2 && block->params[1].name[0])
			g->dispatch_key = block->params[1].name;
	} else if (block && strcmp(block->name, "TORCH_LIBRARY") == 0) {
		g->binding = DTL_KERNELS_BINDING_TORCH_LIBRARY;
	} else if (block && strcmp(block->name, "TORCH_LIBRARY_FRAGMENT") == 0) {
		g->binding = DTL_KERNELS_BINDING_TORCH_LIBRARY_FRAGMENT;
	} else if (ktok_is(&toks[i], "impl")) {
		g->binding = DTL_KERNELS_BINDING_TORCH_LIBRARY_IMPL;
	} else {
		g->binding = DTL_KERNELS_BINDING_PYBIND11;
	}
	if (block && g->binding != DTL_KERNELS_BINDING_PYBIND11 &&
	    g->binding != DTL_KERNELS_BINDING_REGISTER_OPERATORS && block->n_params >= 1 &&
	    block->params[0].name[0])
		g->ns = block->params[0].name;

	/* "ns::name.overload(Tensor x) -> Tensor": op, namespace and schema */
	size_t len = strlen(text), op_len = len;
	const char *op = text;
	if (g->binding != DTL_KERNELS_BINDING_PYBIND11) {
		const char *paren = strchr(text, '(');
		if (paren) {
			g->schema = text;
			op_len = (size_t)(paren - text);
			while (op_len && text[op_len - 1] == ' ')
				op_len--;
		}
		const char *colons = NULL;
		for (size_t c = 0; c + 1 < op_len; c++) {
			if (text[c] == ':' && text[c + 1] == ':')
				colons = text + c;
		}
		if (colons) {
			g->ns = dtl_kernels_rec_intern_tok(x, text, (size_t)(colons - text));
			op_len -= (size_t)(colons + 2 - text);
			op = colons + 2;
		}
	}
	g->op = dtl_kernels_rec_intern_tok(x, op, op_len);
	if (schema_only)
		return; /* m.def("foo(Tensor x) -> Tensor"): the schema for the impls */

	if (ref.key != SIZE_MAX)
		g->dispatch_key =
		    dtl_kernels_rec_intern_tok(x, toks[ref.key].text, toks[ref.key].len);
	if (ref.lambda) {
		g->function = dtl_kernels_intern_z(x->k, "<lambda>");
		g->fname = g->function;
		g->lambda_func = dtl_kernels_rec_new_lambda(x, toks, starts[1], ref.lambda_open,
		                                            ref.lambda_open ? ref.lambda_close : 0);
		if (g->lambda_func != KNONE && r->main) {
			x->lambda_func = g->lambda_func;
			x->lambda_brace = ref.lambda_brace;
		}
	} else {
		size_t end = ref.targs_hi ? ref.targs_hi + 1 : ref.name + 1;
		char *written = dtl_kernels_join(x->scratch, toks, ref.first, end);
		g->function =
		    written ? dtl_kernels_rec_intern_tok(x, written, strlen(written)) : NULL;
		g->fname = dtl_kernels_rec_intern_tok(x, toks[ref.name].text, toks[ref.name].len);
		if (ref.qual != SIZE_MAX)
			g->cls =
			    dtl_kernels_rec_intern_tok(x, toks[ref.qual].text, toks[ref.qual].len);
		if (ref.targs_hi > ref.targs_lo) {
			size_t ts[MAX_TARGS], te[MAX_TARGS];
			size_t nt = dtl_kernels_split_args(toks, ref.targs_lo, ref.targs_hi, ts, te,
			                                   MAX_TARGS);
			g->targs = dtl_arena_calloc(x->k->arena, nt ? nt : 1, sizeof(*g->targs));
			if (!g->targs) {
				dtl_kernels_rec_oom(x);
				return;
			}
			g->n_targs = (uint32_t)nt;
			for (size_t a = 0; a < nt; a++) {
				uint64_t m = dtl_kernels_expr_cpp_type(toks, ts[a], te[a]);
				g->targs[a] = m ? m : dtl_kernels_expr_constant(toks, ts[a], te[a]);
			}
		}
	}
	x->k->stats.registrations++;
}
