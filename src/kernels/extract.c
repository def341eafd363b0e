/* SPDX-License-Identifier: MIT */
/*
 * The token walk over one main file: function extents by the token heuristic, each function's
 * parameters, referenced identifiers, calls and local aliases, and the dispatch to the fact
 * rules (fact-rules.c), project macro expansion (macros.c) and registrations (register.c).
 * docs/kernels.md §4: at brace depth 0, IDENT( ... ) then { opens a
 * function; namespace/class/struct/extern "C" scopes are transparent. The AST loses whole
 * functions without the torch headers, the tokens never do.
 */
#include <errno.h>
#include <string.h>

#include "extract.h"

enum scope_kind {
	SC_TRANSPARENT,
	SC_CLASS,
	SC_FUNCTION,
	SC_BLOCK,
};

struct scope {
	uint8_t kind;
	const struct ktok *cls;
};

/* ---- expansion ---- */

static void try_rules(struct kx *x, struct krange *r, size_t i);

static void expand(struct kx *x, struct krange *r, size_t i, const struct kmacro *m)
{
	size_t close = dtl_kernels_match(r->toks, i + 1, r->n);
	struct ktok *toks = NULL;
	size_t n = 0;
	int err;

	if (close >= r->n || x->n_active >= KMAX_EXPAND_DEPTH)
		return;
	err = dtl_kernels_macros_expand(x, m, r, i, close, &toks, &n);
	if (err == -ENOMEM)
		dtl_kernels_rec_oom(x);
	if (err < 0)
		return;
	struct krange sub = {
	    .toks = toks,
	    .n = n,
	    .main = false,
	    .base_when = dtl_kernels_rec_when_at(r, i),
	    .wrapper = r->wrapper ? r->wrapper : m,
	    .use_line = r->toks[i].line,
	    .use_guard = r->toks[i].guard,
	    .use_flags = r->toks[i].flags,
	};
	x->active[x->n_active++] = m;
	dtl_kernels_extract_expansion(x, &sub);
	x->n_active--;
	if (sub.produced_dispatch) {
		if (r->main)
			x->k->stats.wrapper_sites++;
		else
			r->produced_dispatch = true;
	}
}

void dtl_kernels_extract_expansion(struct kx *x, struct krange *r)
{
	for (size_t i = 0; i < r->n && !x->err; i++)
		try_rules(x, r, i);
}

static bool is_member(const struct ktok *toks, size_t i)
{
	return i > 0 && (ktok_punct(&toks[i - 1], ".") || ktok_punct(&toks[i - 1], "->"));
}

static void try_rules(struct kx *x, struct krange *r, size_t i)
{
	const struct ktok *t = &r->toks[i];

	/* In an expansion only the macro body's own tokens start a fact; the use site's
	 * arguments are scanned where they are written. */
	if (!r->main && !(t->flags & KTF_BODY))
		return;
	if (t->flags & KTF_DIRECTIVE)
		return;
	if (t->kind == KT_KEYWORD) {
		if (ktok_is(t, "if"))
			dtl_kernels_rule_branch(x, r, i);
		else if (ktok_is(t, "switch"))
			dtl_kernels_rule_switch(x, r, i);
		return;
	}
	if (t->kind != KT_IDENT || i + 1 >= r->n)
		return;
	const struct ktok *next = &r->toks[i + 1];
	if (is_member(r->toks, i)) {
		if (ktok_punct(next, "<"))
			dtl_kernels_rule_accessor(x, r, i);
		else if (r->main && ktok_punct(next, "(") &&
		         (ktok_is(t, "def") || ktok_is(t, "impl") || ktok_is(t, "op")))
			dtl_kernels_register(x, r, i);
		return;
	}
	if (!ktok_punct(next, "("))
		return;
	const struct kmacro *m = dtl_kernels_macros_find(x, r, i);
	if (r->main && ktok_prefix(t, "AT_DISPATCH_") && !ktok_prefix(t, "AT_DISPATCH_CASE")) {
		x->k->stats.at_dispatch_sites++;
		if (m)
			x->k->stats.at_dispatch_unresolved++;
	}
	if (m) {
		expand(x, r, i, m);
		return;
	}
	if (ktok_prefix(t, "AT_DISPATCH_")) {
		dtl_kernels_rule_at_dispatch(x, r, i);
		return;
	}
	if (dtl_kernels_rule_is_assert(t))
		dtl_kernels_rule_assert(x, r, i);
}

/* ---- function bodies ---- */

static void add_ref(struct kx *x, struct kfctx *c, const struct ktok *t)
{
	int64_t v = dtl_strmap_put(&c->refs, t->text, t->len, (int64_t)c->reflist.count);

	if (v < 0) {
		dtl_kernels_rec_oom(x);
		return;
	}
	if ((size_t)v != c->reflist.count)
		return;
	struct kslice *s = dtl_vec_push(&c->reflist, x->scratch, sizeof(*s));
	if (!s) {
		dtl_kernels_rec_oom(x);
		return;
	}
	s->text = t->text;
	s->len = t->len;
}

static bool dtype_changing(const struct ktok *t)
{
	static const char *const names[] = {
	    "to",           "toType",          "half", "float", "double", "bfloat16", "type_as",
	    "view_as_real", "view_as_complex", "int",  "long",  "bool",   "byte"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (ktok_is(t, names[i]))
			return true;
	}
	return false;
}

/* The variable an argument passes on unchanged in dtype (x, *x, x.contiguous(), x[0]), or
 * NULL. Resolves local aliases. */
static const char *arg_base(struct kx *x, const struct ktok *toks, size_t lo, size_t hi)
{
	const char *base;
	uint32_t len;

	while (lo < hi && (ktok_punct(&toks[lo], "*") || ktok_punct(&toks[lo], "&")))
		lo++;
	if (lo >= hi || toks[lo].kind != KT_IDENT)
		return NULL;
	for (size_t i = lo + 1; i < hi; i++) {
		const struct ktok *t = &toks[i];
		if (ktok_punct(t, "(") || ktok_punct(t, "[")) {
			size_t m = dtl_kernels_match(toks, i, hi);
			if (m >= hi)
				return NULL;
			i = m;
			continue;
		}
		if (ktok_punct(t, ".") || ktok_punct(t, "->")) {
			if (i + 1 >= hi || toks[i + 1].kind != KT_IDENT ||
			    dtype_changing(&toks[i + 1]))
				return NULL;
			i++;
			continue;
		}
		return NULL;
	}
	const struct kalias *a = dtl_kernels_expr_alias(x, toks[lo].text, toks[lo].len);
	if (a && (a->kind == KA_SCALAR_TYPE || a->kind == KA_TYPEMETA)) {
		base = a->base;
		len = a->base_len;
	} else {
		dtl_kernels_expr_base(x, toks, lo, lo + 1, &base, &len);
	}
	return base ? dtl_kernels_rec_intern_tok(x, base, len) : NULL;
}

static bool foreign_qualified(const struct ktok *toks, size_t i)
{
	static const char *const ns[] = {"std", "at",       "torch", "c10",     "thrust", "cub",
	                                 "py",  "pybind11", "cuda",  "cutlass", "cute"};

	if (i < 2 || !ktok_punct(&toks[i - 1], "::"))
		return false;
	for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
		if (ktok_is(&toks[i - 2], ns[j]))
			return true;
	}
	return false;
}

/* f(args), f<T>(args), f<<<grid, block>>>(args): index of the "(" of the arguments. */
static size_t call_open(const struct ktok *toks, size_t i, size_t n)
{
	size_t j = i + 1;

	if (j >= n)
		return n;
	if (ktok_punct(&toks[j], "("))
		return j;
	if (ktok_punct(&toks[j], "<<<")) {
		for (size_t k = j + 1; k < n && k < j + 128; k++) {
			if (ktok_punct(&toks[k], ">>>"))
				return k + 1 < n && ktok_punct(&toks[k + 1], "(") ? k + 1 : n;
		}
		return n;
	}
	if (!ktok_punct(&toks[j], "<"))
		return n;
	int depth = 0;
	for (size_t k = j; k < n && k < j + 64; k++) {
		const struct ktok *t = &toks[k];
		if (ktok_punct(t, "<"))
			depth++;
		else if (ktok_punct(t, ">"))
			depth--;
		else if (ktok_punct(t, ">>"))
			depth -= 2;
		else if (!(t->kind == KT_IDENT || t->kind == KT_KEYWORD || t->kind == KT_LITERAL ||
		           ktok_punct(t, "::") || ktok_punct(t, ",") || ktok_punct(t, "*") ||
		           ktok_punct(t, "&")))
			return n;
		if (depth <= 0)
			return k + 1 < n && ktok_punct(&toks[k + 1], "(") ? k + 1 : n;
	}
	return n;
}

static void record_call(struct kx *x, struct kfctx *c, const struct ktok *toks, size_t i,
                        size_t open, size_t n)
{
	size_t close = dtl_kernels_match(toks, open, n);
	size_t starts[KMAX_CALL_ARGS], ends[KMAX_CALL_ARGS];
	size_t n_args;
	struct kcall *call;

	if (close >= n)
		return;
	n_args = dtl_kernels_split_args(toks, open + 1, close, starts, ends, KMAX_CALL_ARGS);
	call = dtl_vec_push(&c->calls, x->scratch, sizeof(*call));
	if (!call || !(call->callee = dtl_kernels_rec_intern_tok(x, toks[i].text, toks[i].len))) {
		dtl_kernels_rec_oom(x);
		return;
	}
	if (n_args) {
		call->args = dtl_arena_calloc(x->k->arena, n_args, sizeof(*call->args));
		if (!call->args) {
			dtl_kernels_rec_oom(x);
			return;
		}
	}
	call->n_args = (uint32_t)n_args;
	for (size_t a = 0; a < n_args; a++)
		call->args[a] = arg_base(x, toks, starts[a], ends[a]);
}

static bool is_like_factory(const struct ktok *t)
{
	return ktok_is(t, "empty_like") || ktok_is(t, "zeros_like") || ktok_is(t, "ones_like") ||
	       ktok_is(t, "rand_like") || ktok_is(t, "randn_like") || ktok_is(t, "full_like");
}

/* NAME = RHS;  records what NAME stands for (docs/kernels.md §5: local aliases). */
static void record_alias(struct kx *x, struct kfctx *c, const struct ktok *toks, size_t i, size_t n)
{
	size_t lo = i + 2, hi = lo, depth = 0;
	struct kalias *a;
	struct kdexpr d;

	while (hi < n) {
		const struct ktok *t = &toks[hi];
		if (ktok_punct(t, "(") || ktok_punct(t, "[") || ktok_punct(t, "{"))
			depth++;
		else if (ktok_punct(t, ")") || ktok_punct(t, "]") || ktok_punct(t, "}")) {
			if (depth == 0)
				break;
			depth--;
		} else if (depth == 0 && (ktok_punct(t, ";") || ktok_punct(t, ",")))
			break;
		hi++;
	}
	if (hi <= lo)
		return;
	a = dtl_vec_push(&c->aliases, x->scratch, sizeof(*a));
	if (!a) {
		dtl_kernels_rec_oom(x);
		return;
	}
	a->name = toks[i].text;
	a->len = toks[i].len;
	a->kind = KA_OPAQUE;
	/* a->kind stays KA_OPAQUE while the RHS is classified, so that "x = x.to(...)" does
	 * not resolve through itself */
	if (dtl_kernels_expr_dtype(x, toks, lo, hi, false, &d)) {
		if (d.base) {
			a->kind = d.kind == KA_TYPEMETA ? KA_TYPEMETA : KA_SCALAR_TYPE;
			a->base = d.base;
			a->base_len = d.base_len;
		}
		return;
	}
	/* at::empty_like(x) */
	for (size_t j = lo; j + 3 < hi; j++) {
		if (is_like_factory(&toks[j]) && ktok_punct(&toks[j + 1], "(") &&
		    dtl_kernels_match(toks, j + 1, hi) == hi - 1) {
			size_t s[2], e[2];
			if (dtl_kernels_split_args(toks, j + 2, hi - 1, s, e, 2) == 1 &&
			    e[0] == s[0] + 1 && toks[s[0]].kind == KT_IDENT) {
				a->kind = KA_TENSOR;
				a->base = toks[s[0]].text;
				a->base_len = toks[s[0]].len;
			}
			return;
		}
	}
	/* torch::empty(sizes, x.options()): x's dtype unless options change it */
	for (size_t j = lo; j + 4 < hi; j++) {
		if (toks[j].kind == KT_IDENT && ktok_punct(&toks[j + 1], ".") &&
		    ktok_is(&toks[j + 2], "options") && ktok_punct(&toks[j + 3], "(") &&
		    ktok_punct(&toks[j + 4], ")")) {
			if (j + 6 < hi && ktok_punct(&toks[j + 5], ".") &&
			    ktok_is(&toks[j + 6], "dtype"))
				return;
			a->kind = KA_TENSOR;
			a->base = toks[j].text;
			a->base_len = toks[j].len;
			return;
		}
	}
	const char *base = arg_base(x, toks, lo, hi);
	if (base) {
		a->kind = KA_TENSOR;
		a->base = base;
		a->base_len = (uint32_t)strlen(base);
	}
}

static void body_token(struct kx *x, struct krange *r, size_t i)
{
	struct kfctx *c = dtl_kernels_rec_ctx(x);
	const struct ktok *t = &r->toks[i];

	if (!c || t->kind != KT_IDENT || is_member(r->toks, i))
		return;
	add_ref(x, c, t);
	if (i + 1 >= r->n)
		return;
	if (ktok_punct(&r->toks[i + 1], "=") && i > 0 && !ktok_punct(&r->toks[i - 1], "::")) {
		record_alias(x, c, r->toks, i, r->n);
		return;
	}
	size_t open = call_open(r->toks, i, r->n);
	if (open < r->n && !foreign_qualified(r->toks, i))
		record_call(x, c, r->toks, i, open, r->n);
}

static bool excluded_name(const struct ktok *t)
{
	static const char *const names[] = {"__attribute__",       "__declspec",
	                                    "__align__",           "__launch_bounds__",
	                                    "C10_LAUNCH_BOUNDS_0", "C10_LAUNCH_BOUNDS_1",
	                                    "C10_LAUNCH_BOUNDS_2", "__noinline__",
	                                    "TORCH_API",           "C10_API"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (ktok_is(t, names[i]))
			return true;
	}
	return false;
}

/* A file-scope invocation REGISTER_X(a_impl, CUDA, a_cuda);: a_impl reaches the others. */
static void record_links(struct kx *x, const struct ktok *toks, size_t open, size_t close)
{
	size_t starts[KMAX_CALL_ARGS], ends[KMAX_CALL_ARGS];
	size_t n = dtl_kernels_split_args(toks, open + 1, close, starts, ends, KMAX_CALL_ARGS);
	const char *from;

	if (n < 2 || ends[0] != starts[0] + 1 || toks[starts[0]].kind != KT_IDENT)
		return;
	from = dtl_kernels_rec_intern_tok(x, toks[starts[0]].text, toks[starts[0]].len);
	for (size_t a = 1; a < n && from; a++) {
		if (ends[a] != starts[a] + 1 || toks[starts[a]].kind != KT_IDENT)
			continue;
		struct klink *l = dtl_vec_push(&x->k->scanner->links, x->k->arena, sizeof(*l));
		if (!l) {
			dtl_kernels_rec_oom(x);
			return;
		}
		l->from = from;
		l->to = dtl_kernels_rec_intern_tok(x, toks[starts[a]].text, toks[starts[a]].len);
		l->file = x->kf->path;
	}
}

/* Index of the ">" closing the "<" at open (">>" closes two), or n. */
static size_t angle_close(const struct ktok *toks, size_t open, size_t n)
{
	int depth = 0;

	for (size_t i = open; i < n && i < open + 512; i++) {
		if (ktok_punct(&toks[i], "<"))
			depth++;
		else if (ktok_punct(&toks[i], ">"))
			depth--;
		else if (ktok_punct(&toks[i], ">>"))
			depth -= 2;
		else if (ktok_punct(&toks[i], "{") || ktok_punct(&toks[i], ";"))
			return n;
		if (depth <= 0)
			return i;
	}
	return n;
}

/* What dtl_kernels_extract knows about the declaration being read at the current scope. */
struct kdecl {
	size_t cand, cand_open, cand_close, stmt_start;
	size_t tlo, thi;
	bool locked, assign, cls_done, ctor_init;
	int pending;
	const struct ktok *pcls;
};

#define KDECL_NONE SIZE_MAX

/* A statement ended: forget its candidate (cand_open and stmt_start survive). */
static void kdecl_reset(struct kdecl *d)
{
	d->cand = KDECL_NONE;
	d->cand_close = KDECL_NONE;
	d->locked = d->assign = d->cls_done = d->ctor_init = false;
	d->pending = -1;
	d->pcls = NULL;
	d->tlo = d->thi = 0;
}

/* The innermost enclosing class, or NULL. */
static const struct ktok *enclosing_class(const struct dtl_vec *scopes)
{
	for (size_t s = scopes->count; s-- > 0;) {
		const struct scope *o = (const struct scope *)scopes->items + s;
		if (o->kind == SC_CLASS)
			return o->cls;
	}
	return NULL;
}

/* "{" at i: push the scope it opens, a function body when a candidate precedes it. */
static int open_scope(struct kx *x, const struct krange *r, struct dtl_vec *scopes, struct kdecl *d,
                      bool decl, size_t i)
{
	struct scope sc = {.kind = SC_BLOCK};

	if (x->lambda_func != KNONE && i == x->lambda_brace) {
		sc.kind = SC_FUNCTION;
		if (dtl_kernels_rec_open_ctx(x, x->lambda_func, scopes->count + 1) < 0)
			sc.kind = SC_BLOCK;
		x->lambda_func = KNONE;
	} else if (decl && d->cand != KDECL_NONE && d->cand_close != KDECL_NONE && !d->assign) {
		uint32_t f =
		    dtl_kernels_rec_new_function(x, r->toks, d->cand, d->cand_open, d->cand_close,
		                                 enclosing_class(scopes), d->tlo, d->thi);
		if (f != KNONE && dtl_kernels_rec_open_ctx(x, f, scopes->count + 1) == 0)
			sc.kind = SC_FUNCTION;
	} else if (decl && d->pending >= 0 && !d->assign) {
		sc.kind = (uint8_t)d->pending;
		sc.cls = d->pcls;
	}
	struct scope *slot = dtl_vec_push(scopes, x->scratch, sizeof(*slot));
	if (!slot) {
		dtl_kernels_rec_oom(x);
		return -1;
	}
	*slot = sc;
	return 0;
}

/* "}": pop a scope, closing the function context it may hold. */
static void close_scope(struct kx *x, struct dtl_vec *scopes)
{
	if (scopes->count) {
		struct scope *o = (struct scope *)scopes->items + --scopes->count;
		if (o->kind == SC_FUNCTION)
			dtl_kernels_rec_close_ctx(x);
	}
}

/* ";" at declaration level: a candidate was a declaration (or a REGISTER_X link). */
static int end_declaration(struct kx *x, const struct krange *r, const struct kdecl *d)
{
	if (d->cand != KDECL_NONE && d->cand == d->stmt_start && d->cand_close != KDECL_NONE)
		record_links(x, r->toks, d->cand_open, d->cand_close);
	if (d->cand != KDECL_NONE && d->cand_close != KDECL_NONE) {
		struct kslice *s = dtl_vec_push(&x->decls, x->scratch, sizeof(*s));
		if (!s) {
			dtl_kernels_rec_oom(x);
			return -1;
		}
		s->text = r->toks[d->cand].text;
		s->len = r->toks[d->cand].len;
	}
	return 0;
}

/* A keyword at declaration level; returns the index to continue from. */
static size_t decl_keyword(const struct krange *r, struct kdecl *d, size_t i)
{
	const struct ktok *t = &r->toks[i];

	if (ktok_is(t, "namespace")) {
		d->pending = SC_TRANSPARENT;
	} else if (ktok_is(t, "extern") && i + 1 < r->n && r->toks[i + 1].kind == KT_LITERAL) {
		d->pending = SC_TRANSPARENT;
	} else if (ktok_is(t, "class") || ktok_is(t, "struct") || ktok_is(t, "union")) {
		if (d->pending != SC_BLOCK) {
			d->pending = SC_CLASS;
			d->pcls = NULL;
			d->cls_done = false;
		}
	} else if (ktok_is(t, "enum")) {
		d->pending = SC_BLOCK;
		d->cls_done = true;
	} else if (ktok_is(t, "template") && i + 1 < r->n && ktok_punct(&r->toks[i + 1], "<")) {
		size_t close = angle_close(r->toks, i + 1, r->n);
		if (close < r->n) {
			d->tlo = i + 2;
			d->thi = close;
			i = close;
		}
	}
	return i;
}

/* Any other token at declaration level; returns the index to continue from. */
static size_t decl_token(struct kx *x, struct krange *r, struct kdecl *d, size_t i)
{
	const struct ktok *t = &r->toks[i];

	if (d->pending == SC_CLASS && !d->cls_done) {
		if (t->kind == KT_IDENT && !(i + 1 < r->n && ktok_punct(&r->toks[i + 1], "(")))
			d->pcls = t;
		else if (ktok_punct(t, ":") || ktok_punct(t, "<"))
			d->cls_done = true;
	}
	if ((ktok_punct(t, ":") || ktok_punct(t, "->")) && d->cand_close != KDECL_NONE) {
		d->locked = true;
		d->ctor_init |= ktok_punct(t, ":");
	}
	if (ktok_punct(t, "=") && d->cand_close == KDECL_NONE)
		d->assign = true;
	if (t->kind == KT_IDENT && i + 1 < r->n && ktok_punct(&r->toks[i + 1], "(")) {
		if (is_member(r->toks, i) || d->assign) {
			try_rules(x, r, i);
			return i;
		}
		size_t close = dtl_kernels_match(r->toks, i + 1, r->n);
		if (close >= r->n)
			return i;
		if (!excluded_name(t) && (!d->locked || d->cand == KDECL_NONE)) {
			d->cand = i;
			d->cand_open = i + 1;
			d->cand_close = close;
		}
		return close;
	}
	if (is_member(r->toks, i))
		try_rules(x, r, i);
	return i;
}

int dtl_kernels_extract(struct kx *x)
{
	struct krange r = {
	    .toks = x->kf->toks, .n = x->kf->n, .main = true, .base_when = UINT64_MAX};
	struct dtl_vec scopes = {0};
	struct kdecl d = {.cand_open = 0, .stmt_start = 0};

	kdecl_reset(&d);
	x->lambda_func = KNONE;
	for (size_t i = 0; i < r.n && !x->err; i++) {
		struct ktok *t = &r.toks[i];
		struct scope *top;
		bool decl;

		if (t->flags & KTF_DIRECTIVE)
			continue;
		top = scopes.count ? (struct scope *)scopes.items + scopes.count - 1 : NULL;
		decl = !top || top->kind == SC_TRANSPARENT || top->kind == SC_CLASS;
		if (t->flags & KTF_UNBALANCED) {
			/* read for facts, but the structure comes from the active branch */
			if (!decl && !ktok_punct(t, "{") && !ktok_punct(t, "}")) {
				body_token(x, &r, i);
				try_rules(x, &r, i);
			}
			continue;
		}

		if (ktok_punct(t, "{") && decl && d.ctor_init && i > 0 &&
		    (r.toks[i - 1].kind == KT_IDENT || ktok_punct(&r.toks[i - 1], ">"))) {
			/* Foo(int a) : b_{a} {: a member's brace initializer, not the body */
			size_t close = dtl_kernels_match(r.toks, i, r.n);
			if (close < r.n) {
				i = close;
				continue;
			}
		}
		if (ktok_punct(t, "{")) {
			if (open_scope(x, &r, &scopes, &d, decl, i) < 0)
				break;
			kdecl_reset(&d);
			d.stmt_start = i + 1;
			continue;
		}
		if (ktok_punct(t, "}")) {
			close_scope(x, &scopes);
			kdecl_reset(&d);
			d.stmt_start = i + 1;
			continue;
		}
		if (!decl) {
			body_token(x, &r, i);
			try_rules(x, &r, i);
			continue;
		}
		if (ktok_punct(t, ";")) {
			if (end_declaration(x, &r, &d) < 0)
				break;
			kdecl_reset(&d);
			d.stmt_start = i + 1;
			continue;
		}
		if (t->kind == KT_KEYWORD)
			i = decl_keyword(&r, &d, i);
		else
			i = decl_token(x, &r, &d, i);
	}
	while (x->n_ctx)
		dtl_kernels_rec_close_ctx(x);
	return x->err;
}
