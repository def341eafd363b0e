/* SPDX-License-Identifier: MIT */
/*
 * The fact rules: AT_DISPATCH_* sites from the macro-name grammar, dtype asserts, if-chains on
 * a dtype, switches on a dtype (hand-written or inside a project wrapper macro) and typed
 * accessors. docs/kernels.md §3, §5 and §9.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "extract.h"

#define MAX_ARGS 128

/* torch 1.13 c10/util/Exception.h, TORCH_CHECK_MSG without a user message */
#define CHECK_SUFFIX                                                                               \
	" to be true, but got false.  (Could this error message be improved?  If so, please "      \
	"report an enhancement request to PyTorch.)"

static const char *subject_text(struct kx *x, const struct ktok *toks, const struct kdexpr *d)
{
	if (!d->ok || d->subject_hi <= d->subject_lo)
		return NULL;
	char *s = dtl_kernels_join(x->scratch, toks, d->subject_lo, d->subject_hi);
	if (!s) {
		dtl_kernels_rec_oom(x);
		return NULL;
	}
	return dtl_kernels_rec_intern_tok(x, s, strlen(s));
}

static const char *base_text(struct kx *x, const struct kdexpr *d)
{
	return d->ok && d->base ? dtl_kernels_rec_intern_tok(x, d->base, d->base_len) : NULL;
}

static uint32_t lowest_bit(uint64_t set)
{
	for (uint32_t b = 0; b < 64; b++) {
		if (set & (UINT64_C(1) << b))
			return b;
	}
	return 0;
}

bool dtl_kernels_rule_is_assert(const struct ktok *t)
{
	static const char *const names[] = {
	    "TORCH_CHECK",
	    "TORCH_CHECK_TYPE",
	    "TORCH_CHECK_VALUE",
	    "TORCH_CHECK_INDEX",
	    "TORCH_CHECK_NOT_IMPLEMENTED",
	    "TORCH_INTERNAL_ASSERT",
	    "AT_ASSERTM",
	    "AT_ASSERT",
	    "AT_CHECK",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (ktok_is(t, names[i]))
			return true;
	}
	return false;
}

static bool is_internal_assert(const struct ktok *t)
{
	return ktok_is(t, "TORCH_INTERNAL_ASSERT") || ktok_is(t, "AT_ASSERTM") ||
	       ktok_is(t, "AT_ASSERT");
}

/* The text a failing check raises: torch 1.13 c10/util/Exception.h. */
static const char *check_message(struct kx *x, const struct ktok *toks, size_t i,
                                 const size_t *starts, const size_t *ends, size_t n)
{
	const char *user = dtl_kernels_expr_message(x, toks, starts + 1, ends + 1, n - 1);
	char *cond = dtl_kernels_join(x->scratch, toks, starts[0], ends[0]);
	char *text;

	if (!user || !cond) {
		dtl_kernels_rec_oom(x);
		return NULL;
	}
	if (is_internal_assert(&toks[i]))
		text = dtl_arena_sprintf(x->scratch,
		                         "%s INTERNAL ASSERT FAILED at \"%s\":%u, please report a "
		                         "bug to PyTorch. %s",
		                         cond, x->kf->path, toks[i].line, user);
	else if (n <= 1)
		text = dtl_arena_sprintf(x->scratch, "Expected %s" CHECK_SUFFIX, cond);
	else
		return user;
	if (!text) {
		dtl_kernels_rec_oom(x);
		return NULL;
	}
	return dtl_kernels_rec_intern_tok(x, text, strlen(text));
}

/* ---- AT_DISPATCH ---- */

/* AT_DISPATCH_<BASE>[_AND|_AND<N>]: the base's dtypes and how many extra ScalarType
 * arguments come first (docs/kernels.md §9). */
static uint64_t grammar(const char *name, size_t len, size_t *ret_extra)
{
	uint64_t types = dtl_kernels_vocab_dispatch_base(name, len);
	size_t digits = 0;

	*ret_extra = 0;
	if (types)
		return types;
	while (digits < len && name[len - 1 - digits] >= '0' && name[len - 1 - digits] <= '9')
		digits++;
	size_t stem = len - digits;
	if (stem < 4 || memcmp(name + stem - 4, "_AND", 4) != 0)
		return 0;
	size_t extra = 1;
	if (digits) {
		extra = 0;
		for (size_t d = stem; d < len; d++)
			extra = extra * 10 + (size_t)(name[d] - '0');
		if (extra > 16)
			return 0;
	}
	*ret_extra = extra;
	return dtl_kernels_vocab_dispatch_base(name, stem - 4);
}

static uint64_t collect_cases(struct kx *x, struct krange *r, size_t lo, size_t hi);

static uint64_t case_macro(struct kx *x, struct krange *r, size_t i, size_t close)
{
	const struct ktok *t = &r->toks[i];
	size_t starts[MAX_ARGS], ends[MAX_ARGS];
	size_t n = dtl_kernels_split_args(r->toks, i + 2, close, starts, ends, MAX_ARGS);

	if (ktok_is(t, "AT_DISPATCH_CASE") || ktok_is(t, "AT_PRIVATE_CASE_TYPE_USING_HINT") ||
	    ktok_is(t, "AT_PRIVATE_CASE_TYPE") || ktok_is(t, "AT_DISPATCH_CASE_QINT") ||
	    ktok_is(t, "AT_QINT_PRIVATE_CASE_TYPE") ||
	    ktok_is(t, "AT_QINT_SUB_BYTE_PRIVATE_CASE_TYPE") || ktok_is(t, "THO_DISPATCH_CASE"))
		return n ? dtl_kernels_expr_constant(r->toks, starts[0], ends[0]) : 0;
	if (ktok_prefix(t, "AT_DISPATCH_CASE_")) {
		size_t extra;
		uint64_t types = grammar(t->text + 17, t->len - 17, &extra);
		for (size_t e = 0; e < extra && e < n; e++)
			types |= dtl_kernels_expr_constant(r->toks, starts[e], ends[e]);
		return types;
	}
	const struct kmacro *m = dtl_kernels_macros_find(x, r, i);
	if (!m || x->n_active >= KMAX_EXPAND_DEPTH)
		return 0;
	struct ktok *et;
	size_t en;
	int err = dtl_kernels_macros_expand(x, m, r, i, close, &et, &en);
	if (err < 0) {
		if (err != -E2BIG)
			dtl_kernels_rec_oom(x);
		return 0;
	}
	struct krange sub = {.toks = et, .n = en, .base_when = r->base_when, .wrapper = r->wrapper};
	x->active[x->n_active++] = m;
	uint64_t types = collect_cases(x, &sub, 0, en);
	x->n_active--;
	return types;
}

/* The dtypes of AT_DISPATCH_CASE(...) / AT_DISPATCH_CASE_<BASE>(...) / project case macros. */
static uint64_t collect_cases(struct kx *x, struct krange *r, size_t lo, size_t hi)
{
	uint64_t types = 0;

	for (size_t j = lo; j + 1 < hi; j++) {
		if (r->toks[j].kind != KT_IDENT || !ktok_punct(&r->toks[j + 1], "("))
			continue;
		size_t close = dtl_kernels_match(r->toks, j + 1, hi);
		if (close >= hi)
			break;
		types |= case_macro(x, r, j, close);
		j = close;
	}
	return types;
}

static uint64_t v2_types(struct kx *x, const struct ktok *toks, const size_t *starts,
                         const size_t *ends, size_t from, size_t n)
{
	uint64_t types = 0;

	(void)x;
	for (size_t a = from; a < n; a++) {
		size_t lo = starts[a], hi = ends[a];
		uint64_t c = dtl_kernels_expr_constant(toks, lo, hi);
		if (!c && hi - lo == 4 && ktok_is(&toks[lo], "AT_EXPAND") &&
		    ktok_punct(&toks[lo + 1], "("))
			c = dtl_kernels_vocab_v2_group(toks[lo + 2].text, toks[lo + 2].len);
		if (!c && hi - lo == 1)
			c = dtl_kernels_vocab_v2_group(toks[lo].text, toks[lo].len);
		types |= c;
	}
	return types;
}

void dtl_kernels_rule_at_dispatch(struct kx *x, struct krange *r, size_t i)
{
	const struct ktok *toks = r->toks, *t = &toks[i];
	const char *name = t->text + 12;
	size_t len = t->len - 12, close = dtl_kernels_match(toks, i + 1, r->n);
	size_t starts[MAX_ARGS], ends[MAX_ARGS], n, type_arg, name_arg, extra = 0;
	uint64_t types = 0;

	if (close >= r->n || (len >= 4 && memcmp(name, "CASE", 4) == 0))
		return;
	n = dtl_kernels_split_args(toks, i + 2, close, starts, ends, MAX_ARGS);
	if (len == 2 && memcmp(name, "V2", 2) == 0) {
		/* AT_DISPATCH_V2(TYPE, NAME, AT_WRAP(body), kHalf, AT_EXPAND(AT_ALL_TYPES), ...)
		 * torch/headeronly/core/Dispatch_v2.h */
		if (n < 4)
			return;
		type_arg = 0;
		name_arg = 1;
		types = v2_types(x, toks, starts, ends, 3, n);
	} else if (len == 6 && memcmp(name, "SWITCH", 6) == 0) {
		if (n < 3)
			return;
		type_arg = 0;
		name_arg = 1;
		types = collect_cases(x, r, starts[2], ends[n - 1]);
	} else {
		types = grammar(name, len, &extra);
		if (!types || n < extra + 2) {
			if (r->main)
				x->k->stats.at_dispatch_unresolved++;
			return;
		}
		for (size_t e = 0; e < extra; e++)
			types |= dtl_kernels_expr_constant(toks, starts[e], ends[e]);
		type_arg = extra;
		name_arg = extra + 1;
	}
	if (!types) {
		if (r->main)
			x->k->stats.at_dispatch_unresolved++;
		return;
	}
	struct kfact *f = dtl_kernels_rec_fact(x, r, i, DTL_KERNELS_FACT_DISPATCH);
	if (!f)
		return;
	struct kdexpr d;
	dtl_kernels_expr_dtype(x, toks, starts[type_arg], ends[type_arg], true, &d);
	f->ev.types = types;
	f->ev.subject = subject_text(x, toks, &d);
	f->ev.subject_base = base_text(x, &d);
	f->ev.name = dtl_kernels_expr_message(x, toks, &starts[name_arg], &ends[name_arg], 1);
	if (!f->ev.macro)
		f->ev.macro = dtl_kernels_rec_intern_tok(x, t->text, t->len);
	/* ATen/Dispatch.h AT_DISPATCH_SWITCH default case (torch 1.13) */
	char *msg = dtl_arena_sprintf(x->scratch, "\"%s\" not implemented for '{ScalarType}'",
	                              f->ev.name ? f->ev.name : "");
	f->ev.message = msg ? dtl_kernels_rec_intern_tok(x, msg, strlen(msg)) : NULL;
	if (!msg)
		dtl_kernels_rec_oom(x);
	r->produced_dispatch = true;
}

/* ---- asserts ---- */

void dtl_kernels_rule_assert(struct kx *x, struct krange *r, size_t i)
{
	const struct ktok *toks = r->toks;
	size_t close = dtl_kernels_match(toks, i + 1, r->n), starts[MAX_ARGS], ends[MAX_ARGS], n;
	struct kpred p;

	if (close >= r->n)
		return;
	n = dtl_kernels_split_args(toks, i + 2, close, starts, ends, MAX_ARGS);
	if (!n)
		return;
	dtl_kernels_expr_condition(x, toks, starts[0], ends[0], &p);
	if (!p.n)
		return;
	const char *message = check_message(x, toks, i, starts, ends, n);
	for (size_t k = 0; k < p.n; k++) {
		const struct kpred_item *it = &p.items[k];
		struct kfact *f = dtl_kernels_rec_fact(x, r, i, DTL_KERNELS_FACT_ASSERT);
		if (!f)
			return;
		f->ev.subject = subject_text(x, toks, &it->subject);
		f->ev.subject_base = base_text(x, &it->subject);
		if (it->same) {
			f->ev.same_as = base_text(x, &it->other);
			f->ev.types = 0;
		} else {
			f->ev.types = it->mask;
			f->ev.negated = it->negated;
		}
		f->ev.conditional = p.conditional;
		f->ev.message = message;
	}
	if (r->main)
		x->k->stats.asserts++;
}

/* ---- statements that raise ---- */

static bool is_false(const struct ktok *toks, size_t lo, size_t hi)
{
	return hi == lo + 1 && (ktok_is(&toks[lo], "false") || ktok_is(&toks[lo], "0"));
}

/* A statement at toks[i] that raises unconditionally; its message in *ret_message. */
static bool throw_statement(struct kx *x, const struct ktok *toks, size_t i, size_t end,
                            const char **ret_message)
{
	const struct ktok *t = &toks[i];
	size_t starts[MAX_ARGS], ends[MAX_ARGS], n;

	*ret_message = NULL;
	if (t->kind == KT_KEYWORD && ktok_is(t, "throw")) {
		for (size_t j = i + 1; j < end && !ktok_punct(&toks[j], ";"); j++) {
			if (!ktok_punct(&toks[j], "("))
				continue;
			size_t close = dtl_kernels_match(toks, j, end);
			if (close >= end)
				break;
			n = dtl_kernels_split_args(toks, j + 1, close, starts, ends, MAX_ARGS);
			*ret_message = dtl_kernels_expr_message(x, toks, starts, ends, n);
			break;
		}
		if (!*ret_message)
			*ret_message = dtl_kernels_intern_z(x->k, "");
		return true;
	}
	if (t->kind != KT_IDENT || i + 1 >= end || !ktok_punct(&toks[i + 1], "("))
		return false;
	size_t close = dtl_kernels_match(toks, i + 1, end);
	if (close >= end)
		return false;
	n = dtl_kernels_split_args(toks, i + 2, close, starts, ends, MAX_ARGS);
	if (ktok_is(t, "AT_ERROR")) {
		*ret_message = dtl_kernels_expr_message(x, toks, starts, ends, n);
		return true;
	}
	if (dtl_kernels_rule_is_assert(t) && n >= 1 && is_false(toks, starts[0], ends[0])) {
		*ret_message = check_message(x, toks, i, starts, ends, n);
		return true;
	}
	if (ktok_is(t, "abort") || ktok_is(t, "exit") || ktok_is(t, "__trap")) {
		*ret_message = dtl_kernels_intern_z(x->k, "(the process aborts)");
		return true;
	}
	return false;
}

bool dtl_kernels_rule_throw_at(struct kx *x, const struct ktok *toks, size_t lo, size_t hi,
                               const char **ret_message)
{
	size_t depth = 0, top = 0;

	*ret_message = NULL;
	if (lo < hi && ktok_punct(&toks[lo], "{"))
		top = 1;
	for (size_t i = lo; i < hi; i++) {
		const struct ktok *t = &toks[i];
		if (t->flags & KTF_DIRECTIVE)
			continue;
		if (ktok_punct(t, "{") || ktok_punct(t, "(") || ktok_punct(t, "[")) {
			depth++;
			continue;
		}
		if (ktok_punct(t, "}") || ktok_punct(t, ")") || ktok_punct(t, "]")) {
			if (depth)
				depth--;
			continue;
		}
		if (depth != top)
			continue;
		if (t->kind == KT_KEYWORD && (ktok_is(t, "return") || ktok_is(t, "break") ||
		                              ktok_is(t, "continue") || ktok_is(t, "goto")))
			return false;
		if (t->kind == KT_KEYWORD && (ktok_is(t, "if") || ktok_is(t, "for") ||
		                              ktok_is(t, "while") || ktok_is(t, "switch"))) {
			/* skip the controlled statement: a raise inside is conditional */
			if (i + 1 < hi && ktok_punct(&toks[i + 1], "(")) {
				size_t c = dtl_kernels_match(toks, i + 1, hi);
				if (c >= hi)
					return false;
				i = c;
				if (i + 1 < hi && ktok_punct(&toks[i + 1], "{")) {
					size_t b = dtl_kernels_match(toks, i + 1, hi);
					i = b < hi ? b : hi;
				}
			}
			continue;
		}
		if (throw_statement(x, toks, i, hi, ret_message))
			return true;
	}
	return false;
}

/* ---- if chains ---- */

/* Index of the last token of the statement starting at toks[i] ("}" or ";"). */
static size_t statement_end(const struct ktok *toks, size_t i, size_t n, int budget)
{
	if (i >= n || budget <= 0)
		return n;
	if (ktok_punct(&toks[i], "{"))
		return dtl_kernels_match(toks, i, n);
	if (toks[i].kind == KT_KEYWORD &&
	    (ktok_is(&toks[i], "if") || ktok_is(&toks[i], "for") || ktok_is(&toks[i], "while") ||
	     ktok_is(&toks[i], "switch"))) {
		size_t j = i + 1;
		if (j < n && ktok_is(&toks[j], "constexpr"))
			j++;
		if (j >= n || !ktok_punct(&toks[j], "("))
			return n;
		size_t c = dtl_kernels_match(toks, j, n);
		if (c >= n)
			return n;
		size_t e = statement_end(toks, c + 1, n, budget - 1);
		if (ktok_is(&toks[i], "if") && e + 1 < n && ktok_is(&toks[e + 1], "else"))
			e = statement_end(toks, e + 2, n, budget - 1);
		return e;
	}
	for (size_t j = i; j < n; j++) {
		if (ktok_punct(&toks[j], "(") || ktok_punct(&toks[j], "[") ||
		    ktok_punct(&toks[j], "{")) {
			size_t m = dtl_kernels_match(toks, j, n);
			if (m >= n)
				return n;
			j = m;
			continue;
		}
		if (ktok_punct(&toks[j], ";"))
			return j;
		if (ktok_punct(&toks[j], "}"))
			return j - 1;
	}
	return n;
}

struct segment {
	struct kpred pred;
	size_t start, end; /* body tokens */
	bool skipped;
};

#define MAX_SEGMENTS 32

static bool single_dtype(const struct kpred *p)
{
	return p->n == 1 && !p->items[0].same && p->items[0].subject.base;
}

static bool same_subject(const struct kpred *a, const struct kpred *b)
{
	const struct kdexpr *x = &a->items[0].subject, *y = &b->items[0].subject;
	return x->base_len == y->base_len && memcmp(x->base, y->base, x->base_len) == 0;
}

void dtl_kernels_rule_branch(struct kx *x, struct krange *r, size_t i)
{
	struct ktok *toks = r->toks;
	struct segment *segs;
	size_t n_segs = 0, else_start = 0, else_end = 0, j = i;
	bool has_else = false;

	if (toks[i].flags & KTF_CHAINED)
		return;
	segs = dtl_arena_calloc(x->scratch, MAX_SEGMENTS, sizeof(*segs));
	if (!segs) {
		dtl_kernels_rec_oom(x);
		return;
	}
	for (;;) {
		size_t k = j + 1;
		if (k < r->n && ktok_is(&toks[k], "constexpr"))
			k++;
		if (k >= r->n || !ktok_punct(&toks[k], "("))
			break;
		size_t close = dtl_kernels_match(toks, k, r->n);
		if (close >= r->n)
			break;
		size_t bend = statement_end(toks, close + 1, r->n, 16);
		if (bend >= r->n)
			break;
		struct segment *s = &segs[n_segs++];
		dtl_kernels_expr_condition(x, toks, k + 1, close, &s->pred);
		s->start = close + 1;
		s->end = bend;
		s->skipped = (toks[j].flags & KTF_SKIPPED) != 0;
		size_t next = bend + 1;
		if (next >= r->n || !ktok_is(&toks[next], "else") || n_segs == MAX_SEGMENTS)
			break;
		if (next + 1 < r->n && ktok_is(&toks[next + 1], "if")) {
			toks[next + 1].flags |= KTF_CHAINED;
			j = next + 1;
			continue;
		}
		else_start = next + 1;
		else_end = statement_end(toks, else_start, r->n, 16);
		has_else = else_end < r->n;
		break;
	}
	if (!n_segs || !single_dtype(&segs[0].pred))
		return;

	/* if (x.dtype() != kHalf) { TORCH_CHECK(false, ...) }: an assert */
	const char *message = NULL;
	if (n_segs == 1 &&
	    dtl_kernels_rule_throw_at(x, toks, segs[0].start, segs[0].end + 1, &message)) {
		const struct kpred_item *it = &segs[0].pred.items[0];
		struct kfact *f = dtl_kernels_rec_fact(x, r, i, DTL_KERNELS_FACT_ASSERT);
		if (!f)
			return;
		f->ev.types = dtl_kernels_all_dtypes() & ~it->mask;
		f->ev.negated = !it->negated;
		f->ev.subject = subject_text(x, toks, &it->subject);
		f->ev.subject_base = base_text(x, &it->subject);
		f->ev.conditional = segs[0].pred.conditional || segs[0].pred.opaque;
		f->ev.message = message;
		dtl_kernels_rec_add_when(x, r, segs[0].start, segs[0].end, it->mask);
		if (r->main)
			x->k->stats.asserts++;
		return;
	}

	/* a chain on one subject: if (x == kHalf) ... else if (x == kFloat) ... else ... */
	size_t n_chain = 1;
	while (n_chain < n_segs && single_dtype(&segs[n_chain].pred) &&
	       same_subject(&segs[0].pred, &segs[n_chain].pred))
		n_chain++;
	uint64_t handled = 0, guarded = 0;
	bool conditional = false;
	for (size_t s = 0; s < n_chain; s++) {
		uint64_t mask = segs[s].pred.items[0].mask;
		dtl_kernels_rec_add_when(x, r, segs[s].start, segs[s].end, mask & ~handled);
		if (segs[s].skipped)
			guarded |= mask;
		else
			handled |= mask;
		conditional |= segs[s].pred.conditional || segs[s].pred.opaque;
	}
	bool throws = false;
	if (n_chain == n_segs && has_else) {
		dtl_kernels_rec_add_when(x, r, else_start, else_end, ~handled);
		throws = dtl_kernels_rule_throw_at(x, toks, else_start, else_end + 1, &message);
	}
	struct kfact *f = dtl_kernels_rec_fact(x, r, i, DTL_KERNELS_FACT_BRANCH);
	if (!f)
		return;
	const struct kpred_item *it = &segs[0].pred.items[0];
	f->ev.types = handled;
	f->ev.guarded_types = guarded & ~handled;
	f->ev.subject = subject_text(x, toks, &it->subject);
	f->ev.subject_base = base_text(x, &it->subject);
	f->ev.conditional = conditional;
	f->ev.throws = throws;
	f->ev.message = throws ? message : NULL;
	if (r->main)
		x->k->stats.branches++;
	else
		r->produced_dispatch = true;
}

/* ---- switches ---- */

struct label {
	size_t at, colon;
	uint64_t mask;
	bool is_default, skipped;
};

#define MAX_LABELS 64

void dtl_kernels_rule_switch(struct kx *x, struct krange *r, size_t i)
{
	const struct ktok *toks = r->toks;
	struct label *labels;
	size_t n_labels = 0;

	if (i + 1 >= r->n || !ktok_punct(&toks[i + 1], "("))
		return;
	size_t close = dtl_kernels_match(toks, i + 1, r->n);
	if (close + 1 >= r->n || !ktok_punct(&toks[close + 1], "{"))
		return;
	size_t body = close + 1, body_end = dtl_kernels_match(toks, body, r->n);
	if (body_end >= r->n)
		return;
	labels = dtl_arena_calloc(x->scratch, MAX_LABELS, sizeof(*labels));
	if (!labels) {
		dtl_kernels_rec_oom(x);
		return;
	}
	size_t depth = 0;
	for (size_t j = body + 1; j < body_end && n_labels < MAX_LABELS; j++) {
		const struct ktok *t = &toks[j];
		if (ktok_punct(t, "{") || ktok_punct(t, "(") || ktok_punct(t, "[")) {
			depth++;
			continue;
		}
		if (ktok_punct(t, "}") || ktok_punct(t, ")") || ktok_punct(t, "]")) {
			if (depth)
				depth--;
			continue;
		}
		if (depth || t->kind != KT_KEYWORD)
			continue;
		bool is_case = ktok_is(t, "case"), is_default = ktok_is(t, "default");
		if (!is_case && !is_default)
			continue;
		size_t colon = j + 1;
		while (colon < body_end && !ktok_punct(&toks[colon], ":"))
			colon++;
		if (colon >= body_end)
			break;
		struct label *l = &labels[n_labels++];
		l->at = j;
		l->colon = colon;
		l->is_default = is_default;
		l->skipped = (t->flags & KTF_SKIPPED) != 0;
		l->mask = is_case ? dtl_kernels_expr_constant(toks, j + 1, colon) : 0;
		j = colon;
	}
	uint64_t types = 0, guarded = 0;
	bool any = false;
	for (size_t l = 0; l < n_labels; l++) {
		if (!labels[l].mask)
			continue;
		any = true;
		if (labels[l].skipped)
			guarded |= labels[l].mask;
		else
			types |= labels[l].mask;
	}
	if (!any)
		return;
	/* each label's statements run for its dtypes (consecutive labels fall through) */
	const char *message = NULL;
	bool throws = false;
	uint64_t group = 0;
	for (size_t l = 0; l < n_labels; l++) {
		size_t seg_start = labels[l].colon + 1;
		size_t seg_end = l + 1 < n_labels ? labels[l + 1].at : body_end;
		group |= labels[l].is_default ? ~(types | guarded) : labels[l].mask;
		if (seg_end == seg_start)
			continue;
		if (seg_end > seg_start)
			dtl_kernels_rec_add_when(x, r, seg_start, seg_end - 1, group);
		if (labels[l].is_default)
			throws = dtl_kernels_rule_throw_at(x, toks, seg_start, seg_end, &message);
		group = 0;
	}
	struct kfact *f = dtl_kernels_rec_fact(
	    x, r, i, r->main ? DTL_KERNELS_FACT_SWITCH : DTL_KERNELS_FACT_DISPATCH);
	if (!f)
		return;
	struct kdexpr d;
	dtl_kernels_expr_dtype(x, toks, i + 2, close, true, &d);
	f->ev.types = types;
	f->ev.guarded_types = guarded & ~types;
	f->ev.subject = subject_text(x, toks, &d);
	f->ev.subject_base = base_text(x, &d);
	f->ev.throws = throws;
	f->ev.message = throws ? message : NULL;
	if (r->main)
		x->k->stats.switches++;
	else
		r->produced_dispatch = true;
}

/* ---- accessors ---- */

static bool is_accessor(const struct ktok *t)
{
	static const char *const names[] = {"data_ptr",          "data",
	                                    "mutable_data_ptr",  "const_data_ptr",
	                                    "packed_accessor",   "packed_accessor32",
	                                    "packed_accessor64", "generic_packed_accessor",
	                                    "accessor"};

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		if (ktok_is(t, names[k]))
			return true;
	}
	return false;
}

/* Start of the postfix expression ending before toks[end] (x, x.foo(), a[0][1]). */
static size_t subject_start(const struct ktok *toks, size_t end)
{
	size_t j = end;

	while (j > 0) {
		const struct ktok *t = &toks[j - 1];
		if (ktok_punct(t, ")") || ktok_punct(t, "]")) {
			int depth = 0;
			size_t k = j;
			while (k > 0) {
				k--;
				if (ktok_punct(&toks[k], ")") || ktok_punct(&toks[k], "]"))
					depth++;
				else if (ktok_punct(&toks[k], "(") || ktok_punct(&toks[k], "["))
					depth--;
				if (depth == 0)
					break;
			}
			if (depth != 0)
				return end;
			j = k;
			continue;
		}
		if (t->kind == KT_IDENT || ktok_is(t, "this")) {
			j--;
			if (j > 0 &&
			    (ktok_punct(&toks[j - 1], ".") || ktok_punct(&toks[j - 1], "->") ||
			     ktok_punct(&toks[j - 1], "::")))
				j--;
			else
				break;
			continue;
		}
		break;
	}
	return j;
}

void dtl_kernels_rule_accessor(struct kx *x, struct krange *r, size_t i)
{
	const struct ktok *toks = r->toks;
	size_t lo = i + 2, hi = lo, close;
	int depth = 1;

	if (!is_accessor(&toks[i]))
		return;
	for (close = i + 1; close < r->n && close < i + 48; close++) {
		if (close > i + 1 && ktok_punct(&toks[close], "<"))
			depth++;
		else if (ktok_punct(&toks[close], ">"))
			depth--;
		else if (ktok_punct(&toks[close], ">>"))
			depth -= 2;
		else if (depth == 1 && ktok_punct(&toks[close], ",") && hi == lo)
			hi = close;
		if (depth <= 0)
			break;
	}
	if (close >= r->n || depth > 0 || close + 1 >= r->n || !ktok_punct(&toks[close + 1], "("))
		return;
	if (hi == lo)
		hi = close;
	uint64_t mask = dtl_kernels_expr_cpp_type(toks, lo, hi);
	const char *tparam = NULL;
	struct kfctx *c = dtl_kernels_rec_ctx(x);
	if (!mask && hi == lo + 1 && toks[lo].kind == KT_IDENT && c) {
		const struct kfunc *fn = (const struct kfunc *)x->k->scanner->funcs.items + c->func;
		for (uint32_t p = 0; p < fn->n_tparams; p++) {
			if (strlen(fn->tparams[p]) == toks[lo].len &&
			    memcmp(fn->tparams[p], toks[lo].text, toks[lo].len) == 0)
				tparam = fn->tparams[p];
		}
	}
	if (!mask && !tparam)
		return; /* scalar_t and friends: dispatched, not a constraint */
	struct kfact *f = dtl_kernels_rec_fact(x, r, i, DTL_KERNELS_FACT_ACCESSOR);
	if (!f)
		return;
	struct kdexpr d = {.ok = true};
	d.subject_hi = i - 1;
	d.subject_lo = subject_start(toks, i - 1);
	dtl_kernels_expr_base(x, toks, d.subject_lo, d.subject_hi, &d.base, &d.base_len);
	f->ev.subject = subject_text(x, toks, &d);
	f->ev.subject_base = base_text(x, &d);
	f->ev.types = mask;
	f->ev.template_param = tparam;
	if (mask) {
		/* ATen TensorBody data_ptr<T>(): "expected scalar type Float but found Half" */
		char *msg =
		    dtl_arena_sprintf(x->scratch, "expected scalar type %s but found {ScalarType}",
		                      dtl_kernels_scalar_type_name(lowest_bit(mask)));
		f->ev.message = msg ? dtl_kernels_rec_intern_tok(x, msg, strlen(msg)) : NULL;
	}
	if (r->main)
		x->k->stats.accessors++;
}
