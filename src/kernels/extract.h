/* SPDX-License-Identifier: MIT */
/* The fact extractor's state, shared by extract.c, records.c, fact-rules.c, expr.c, macros.c and
 * register.c.
 */
#ifndef DTL_KERNELS_EXTRACT_H
#define DTL_KERNELS_EXTRACT_H

#include "kernels-private.h"

struct kmacro {
	const char *name;
	uint32_t name_len;
	CXCursor cursor;
	int64_t next; /* a later definition of the same name, or -1 */
	bool loaded, bad;
	struct ktok *body;
	size_t n_body;
	struct ktok *params;
	size_t n_params;
	bool variadic; /* the last parameter takes the rest */
	const char *file;
	uint32_t line;
};

struct kmacros {
	struct dtl_strmap byname; /* name -> index of the last definition */
	struct dtl_vec defs;      /* struct kmacro */
};

enum kalias_kind {
	KA_TENSOR,      /* auto y = x.contiguous(); */
	KA_SCALAR_TYPE, /* auto st = x.scalar_type(); */
	KA_TYPEMETA,    /* auto dt = x.dtype(); */
	KA_OPAQUE,      /* auto out = at::empty(...): a new tensor, maps to no input */
};

struct kalias {
	const char *name;
	uint32_t len;
	const char *base;
	uint32_t base_len;
	uint8_t kind;
};

struct kslice {
	const char *text;
	uint32_t len;
};

/* An open function body (a registration lambda opens one inside PYBIND11_MODULE). */
struct kfctx {
	uint32_t func;
	size_t scope;           /* scope depth of its body */
	struct dtl_vec aliases; /* struct kalias */
	struct dtl_strmap refs;
	struct dtl_vec reflist; /* struct kslice */
	struct dtl_vec calls;   /* struct kcall */
};

/* toks[start..end] runs only for dtypes in mask (an if or case on a dtype). */
struct kwhen {
	size_t start, end;
	uint64_t mask;
};

/* A token array being scanned: the main file or one macro expansion. */
struct krange {
	struct ktok *toks;
	size_t n;
	bool main;
	uint64_t base_when; /* when-mask at the use site of an expansion */
	struct dtl_vec whens;
	const struct kmacro *wrapper; /* the outermost project macro of an expansion */
	uint32_t use_line;
	uint32_t use_guard;
	uint16_t use_flags;
	bool produced_dispatch;
};

struct kx {
	struct dtl_kernels *k;
	struct dtl_arena *scratch;
	struct kfile *kf;
	struct kmacros macros;
	struct kfctx ctx[KMAX_FUNC_CONTEXTS];
	size_t n_ctx;
	const struct kmacro *active[KMAX_EXPAND_DEPTH];
	size_t n_active;
	size_t expand_budget;
	struct dtl_vec decls; /* struct kslice: functions declared at file scope */
	uint32_t lambda_func; /* a registration lambda whose body opens at lambda_brace */
	size_t lambda_brace;
	int err; /* the first out-of-memory, reported when the file is done */
};

/* A dtype expression: x.scalar_type(), q.options().dtype(), an alias variable. */
struct kdexpr {
	bool ok;
	size_t subject_lo, subject_hi; /* the tensor expression's tokens (may be empty) */
	const char *base;              /* its base variable after aliases (token text) */
	uint32_t base_len;
	uint8_t kind; /* KA_SCALAR_TYPE, KA_TYPEMETA, or KA_TENSOR when unknown */
};

#define KPRED_MAX 8

struct kpred_item {
	struct kdexpr subject;
	uint64_t mask; /* dtypes for which the term is true */
	bool same;     /* subject.dtype() == other.dtype() */
	struct kdexpr other;
	bool negated;
};

struct kpred {
	struct kpred_item items[KPRED_MAX];
	size_t n;
	bool opaque;      /* holds non-dtype terms */
	bool conditional; /* the dtype terms can be bypassed */
};

/* records.c: what the walk records. Out of memory is noted in x->err (dtl_kernels_rec_oom(),
 * the first error stays) and the walk goes on to its end. */
/* The innermost open function body, NULL at file scope. */
struct kfctx *dtl_kernels_rec_ctx(struct kx *x);
/* A new fact of kind at r->toks[i], in the current function, with its site's #if guards,
 * when-mask and wrapper macro filled; NULL under #if 0 or when out of memory. */
struct kfact *dtl_kernels_rec_fact(struct kx *x, struct krange *r, size_t i,
                                   enum dtl_kernels_fact_kind kind);
/* The dtypes for which r->toks[i] runs (the when-masks around it). */
uint64_t dtl_kernels_rec_when_at(const struct krange *r, size_t i);
/* r->toks[start..end] runs only for the dtypes in mask; -ENOMEM or 0. */
int dtl_kernels_rec_add_when(struct kx *x, struct krange *r, size_t start, size_t end,
                             uint64_t mask);
/* text interned in the scanner (lives in the result arena); NULL when out of memory. */
const char *dtl_kernels_rec_intern_tok(struct kx *x, const char *text, size_t len);
void dtl_kernels_rec_oom(struct kx *x);
/* A lambda bound by a registration, as a function "<lambda>" with the parameters in
 * (open, close); its index in scanner->funcs, KNONE when out of memory. */
uint32_t dtl_kernels_rec_new_lambda(struct kx *x, const struct ktok *toks, size_t at, size_t open,
                                    size_t close);
/* A function found at toks[name] with parameters (open, close) and template parameters
 * [tlo, thi); its index in scanner->funcs, KNONE when out of memory. */
uint32_t dtl_kernels_rec_new_function(struct kx *x, const struct ktok *toks, size_t name,
                                      size_t open, size_t close, const struct ktok *cls, size_t tlo,
                                      size_t thi);
/* Opens the body of funcs[func] at scope depth scope (-E2BIG past KMAX_FUNC_CONTEXTS); closing
 * it stores its references and calls in the function. */
int dtl_kernels_rec_open_ctx(struct kx *x, uint32_t func, size_t scope);
void dtl_kernels_rec_close_ctx(struct kx *x);

/* extract.c */
int dtl_kernels_extract(struct kx *x);
void dtl_kernels_extract_expansion(struct kx *x, struct krange *r);

/* macros.c */
int dtl_kernels_macros_collect(struct kx *x);
const struct kmacro *dtl_kernels_macros_find(struct kx *x, const struct krange *r, size_t i);
int dtl_kernels_macros_expand(struct kx *x, const struct kmacro *m, const struct krange *r,
                              size_t i, size_t close, struct ktok **ret, size_t *ret_n);

/* expr.c */
uint64_t dtl_kernels_expr_constant(const struct ktok *toks, size_t lo, size_t hi);
uint64_t dtl_kernels_expr_cpp_type(const struct ktok *toks, size_t lo, size_t hi);
bool dtl_kernels_expr_dtype(struct kx *x, const struct ktok *toks, size_t lo, size_t hi,
                            bool bare_ok, struct kdexpr *ret);
void dtl_kernels_expr_base(struct kx *x, const struct ktok *toks, size_t lo, size_t hi,
                           const char **base, uint32_t *base_len);
void dtl_kernels_expr_condition(struct kx *x, const struct ktok *toks, size_t lo, size_t hi,
                                struct kpred *ret);
const char *dtl_kernels_expr_message(struct kx *x, const struct ktok *toks, const size_t *starts,
                                     const size_t *ends, size_t n);
const struct kalias *dtl_kernels_expr_alias(struct kx *x, const char *text, size_t len);

/* fact-rules.c */
void dtl_kernels_rule_at_dispatch(struct kx *x, struct krange *r, size_t i);
void dtl_kernels_rule_assert(struct kx *x, struct krange *r, size_t i);
void dtl_kernels_rule_branch(struct kx *x, struct krange *r, size_t i);
void dtl_kernels_rule_switch(struct kx *x, struct krange *r, size_t i);
void dtl_kernels_rule_accessor(struct kx *x, struct krange *r, size_t i);
bool dtl_kernels_rule_is_assert(const struct ktok *t);
bool dtl_kernels_rule_throw_at(struct kx *x, const struct ktok *toks, size_t i, size_t end,
                               const char **ret_message);

/* register.c */
void dtl_kernels_register(struct kx *x, struct krange *r, size_t i);

#endif
