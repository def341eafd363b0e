/* SPDX-License-Identifier: MIT */
/*
 * Dtype expressions over tokens: ScalarType constants, element types, x.scalar_type() /
 * x.dtype() subjects with local aliases, boolean conditions on them, and the text of the error
 * a failing check raises (c10::str concatenation of its arguments).
 * docs/kernels.md §5: subjects are expressions, not just identifiers.
 */
#include <string.h>

#include "extract.h"

static bool is_qualifier(const struct ktok *t)
{
	static const char *const names[] = {"at", "torch", "c10", "headeronly", "caffe2", "std"};

	if (t->kind != KT_IDENT)
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (ktok_is(t, names[i]))
			return true;
	}
	return false;
}

static void trim_parens(const struct ktok *toks, size_t *lo, size_t *hi)
{
	while (*hi - *lo >= 2 && ktok_punct(&toks[*lo], "(") &&
	       dtl_kernels_match(toks, *lo, *hi) == *hi - 1) {
		(*lo)++;
		(*hi)--;
	}
}

uint64_t dtl_kernels_expr_cpp_type(const struct ktok *toks, size_t lo, size_t hi)
{
	size_t n_kw = 0;
	const struct ktok *last = NULL;
	bool is_unsigned = false, is_signed = false, is_long = false, is_short = false;

	for (size_t i = lo; i < hi; i++) {
		const struct ktok *t = &toks[i];
		if (t->kind == KT_IDENT && ktok_is(t, "complex") && i + 1 < hi &&
		    ktok_punct(&toks[i + 1], "<")) {
			uint64_t inner = dtl_kernels_expr_cpp_type(toks, i + 2, hi - 1);
			if (inner == DTL_KERNELS_DT(DTL_DTYPE_F32))
				return DTL_KERNELS_DT_COMPLEX64;
			if (inner == DTL_KERNELS_DT(DTL_DTYPE_F64))
				return DTL_KERNELS_DT_COMPLEX128;
			if (inner == DTL_KERNELS_DT(DTL_DTYPE_F16))
				return DTL_KERNELS_DT_COMPLEX32;
			return 0;
		}
		if (t->kind == KT_KEYWORD) {
			if (ktok_is(t, "const") || ktok_is(t, "volatile") || ktok_is(t, "typename"))
				continue;
			n_kw++;
			is_unsigned |= ktok_is(t, "unsigned");
			is_signed |= ktok_is(t, "signed");
			is_long |= ktok_is(t, "long");
			is_short |= ktok_is(t, "short");
			last = t;
		} else if (t->kind == KT_IDENT) {
			last = t;
		} else if (!ktok_punct(t, "::") && !ktok_punct(t, "*") && !ktok_punct(t, "&")) {
			return 0;
		}
	}
	if (!last)
		return 0;
	if (n_kw > 1 || is_unsigned || is_signed) {
		if (ktok_is(last, "char"))
			return is_unsigned ? DTL_KERNELS_DT(DTL_DTYPE_U8)
			                   : DTL_KERNELS_DT(DTL_DTYPE_I8);
		if (is_short)
			return is_unsigned ? 0 : DTL_KERNELS_DT(DTL_DTYPE_I16);
		if (is_long)
			return is_unsigned ? DTL_KERNELS_DT_UINT64 : DTL_KERNELS_DT(DTL_DTYPE_I64);
		if (ktok_is(last, "int"))
			return is_unsigned ? DTL_KERNELS_DT_UINT32 : DTL_KERNELS_DT(DTL_DTYPE_I32);
		return 0;
	}
	return dtl_kernels_vocab_cpp_type(last->text, last->len);
}

uint64_t dtl_kernels_expr_constant(const struct ktok *toks, size_t lo, size_t hi)
{
	trim_parens(toks, &lo, &hi);
	if (lo >= hi)
		return 0;
	/* caffe2::TypeMeta::Make<at::Half>() */
	for (size_t i = lo; i + 2 < hi; i++) {
		if (ktok_is(&toks[i], "Make") && ktok_punct(&toks[i + 1], "<")) {
			size_t j = i + 2;
			while (j < hi && !ktok_punct(&toks[j], ">"))
				j++;
			return j < hi ? dtl_kernels_expr_cpp_type(toks, i + 2, j) : 0;
		}
	}
	const struct ktok *name = &toks[hi - 1];
	if (name->kind != KT_IDENT)
		return 0;
	/* every token before the name is a known qualifier or "::" */
	for (size_t i = lo; i + 1 < hi; i++) {
		const struct ktok *t = &toks[i];
		if (ktok_punct(t, "::") || is_qualifier(t) || ktok_is(t, "ScalarType"))
			continue;
		return 0;
	}
	if (name->len > 1 && name->text[0] == 'k')
		return dtl_kernels_vocab_constant(name->text, name->len);
	/* ScalarType::Half, but not a bare Half (that would be the C++ type at::Half) */
	if (hi - lo >= 3 && ktok_is(&toks[hi - 3], "ScalarType"))
		return dtl_kernels_vocab_constant(name->text, name->len);
	return 0;
}

const struct kalias *dtl_kernels_expr_alias(struct kx *x, const char *text, size_t len)
{
	struct kfctx *c = dtl_kernels_rec_ctx(x);

	if (!c)
		return NULL;
	const struct kalias *a = c->aliases.items;
	for (size_t i = c->aliases.count; i-- > 0;) {
		if (a[i].len == len && memcmp(a[i].name, text, len) == 0)
			return &a[i];
	}
	return NULL;
}

void dtl_kernels_expr_base(struct kx *x, const struct ktok *toks, size_t lo, size_t hi,
                           const char **base, uint32_t *base_len)
{
	*base = NULL;
	*base_len = 0;
	for (size_t i = lo; i < hi; i++) {
		const struct ktok *t = &toks[i];
		if (ktok_punct(t, "(") || ktok_punct(t, "*") || ktok_punct(t, "&") ||
		    ktok_punct(t, "::") || ktok_punct(t, "->") || ktok_is(t, "this"))
			continue;
		if (t->kind == KT_IDENT && i + 1 < hi && ktok_punct(&toks[i + 1], "::"))
			continue;
		if (t->kind != KT_IDENT)
			return;
		*base = t->text;
		*base_len = t->len;
		break;
	}
	/* follow tensor aliases: auto y = x.contiguous(); */
	for (int hop = 0; *base && hop < 8; hop++) {
		const struct kalias *a = dtl_kernels_expr_alias(x, *base, *base_len);
		if (a && a->kind == KA_OPAQUE) {
			*base = NULL;
			*base_len = 0;
			break;
		}
		if (!a || a->kind != KA_TENSOR ||
		    (a->base_len == *base_len && memcmp(a->base, *base, *base_len) == 0))
			break;
		*base = a->base;
		*base_len = a->base_len;
	}
}

static bool is_dtype_method(const struct ktok *t)
{
	return t->kind == KT_IDENT && (ktok_is(t, "scalar_type") || ktok_is(t, "dtype") ||
	                               ktok_is(t, "type") || ktok_is(t, "scalarType"));
}

bool dtl_kernels_expr_dtype(struct kx *x, const struct ktok *toks, size_t lo, size_t hi,
                            bool bare_ok, struct kdexpr *ret)
{
	memset(ret, 0, sizeof(*ret));
	trim_parens(toks, &lo, &hi);
	if (lo >= hi)
		return false;
	/* at::typeMetaToScalarType(E), ::detail::scalar_type(E) */
	if (ktok_punct(&toks[hi - 1], ")")) {
		size_t name = lo;
		while (name + 1 < hi &&
		       (ktok_punct(&toks[name], "::") || is_qualifier(&toks[name]) ||
		        ktok_is(&toks[name], "detail")))
			name++;
		if (name + 1 < hi && ktok_punct(&toks[name + 1], "(") &&
		    dtl_kernels_match(toks, name + 1, hi) == hi - 1 &&
		    (ktok_is(&toks[name], "typeMetaToScalarType") ||
		     ktok_is(&toks[name], "scalar_type") ||
		     ktok_is(&toks[name], "scalarTypeToTypeMeta")))
			return dtl_kernels_expr_dtype(x, toks, name + 2, hi - 1, bare_ok, ret);
	}
	size_t depth = 0;
	for (size_t i = lo; i < hi; i++) {
		const struct ktok *t = &toks[i];
		if (ktok_punct(t, "(") || ktok_punct(t, "[") || ktok_punct(t, "{")) {
			depth++;
			continue;
		}
		if (ktok_punct(t, ")") || ktok_punct(t, "]") || ktok_punct(t, "}")) {
			if (depth)
				depth--;
			continue;
		}
		if (depth || !(ktok_punct(t, ".") || ktok_punct(t, "->")) || i + 2 >= hi ||
		    !is_dtype_method(&toks[i + 1]) || !ktok_punct(&toks[i + 2], "("))
			continue;
		size_t close = dtl_kernels_match(toks, i + 2, hi);
		if (close >= hi)
			return false;
		uint8_t kind = ktok_is(&toks[i + 1], "dtype")  ? KA_TYPEMETA
		               : ktok_is(&toks[i + 1], "type") ? KA_TENSOR
		                                               : KA_SCALAR_TYPE;
		size_t rest = close + 1;
		/* x.type().scalarType(), x.dtype().toScalarType() */
		if (rest + 2 < hi && ktok_punct(&toks[rest], ".") &&
		    (ktok_is(&toks[rest + 1], "scalarType") ||
		     ktok_is(&toks[rest + 1], "toScalarType")) &&
		    ktok_punct(&toks[rest + 2], "(")) {
			size_t c2 = dtl_kernels_match(toks, rest + 2, hi);
			if (c2 >= hi)
				return false;
			rest = c2 + 1;
			kind = KA_SCALAR_TYPE;
		}
		if (rest != hi || i == lo)
			return false;
		ret->ok = true;
		ret->subject_lo = lo;
		ret->subject_hi = i;
		ret->kind = kind;
		/* x.options().dtype(): the subject is x */
		if (i >= lo + 5 && ktok_punct(&toks[i - 4], ".") &&
		    ktok_is(&toks[i - 3], "options") && ktok_punct(&toks[i - 2], "(") &&
		    ktok_punct(&toks[i - 1], ")"))
			ret->subject_hi = i - 4;
		dtl_kernels_expr_base(x, toks, lo, i, &ret->base, &ret->base_len);
		return true;
	}
	/* a variable: an alias of x.dtype(), or (bare_ok) a ScalarType parameter */
	size_t v = lo;
	if (ktok_punct(&toks[v], "*"))
		v++;
	if (v + 1 != hi || toks[v].kind != KT_IDENT)
		return false;
	const struct kalias *a = dtl_kernels_expr_alias(x, toks[v].text, toks[v].len);
	if (a && a->kind != KA_TENSOR) {
		ret->ok = true;
		ret->subject_lo = v;
		ret->subject_hi = hi;
		ret->base = a->base;
		ret->base_len = a->base_len;
		ret->kind = a->kind;
		return true;
	}
	if (!bare_ok || a)
		return false;
	ret->ok = true;
	ret->subject_lo = v;
	ret->subject_hi = hi;
	ret->base = toks[v].text;
	ret->base_len = toks[v].len;
	ret->kind = KA_TENSOR;
	return true;
}

/* ---- conditions ---- */

struct parser {
	struct kx *x;
	const struct ktok *toks;
	size_t i, hi;
};

static bool is_stop(const struct ktok *t)
{
	return ktok_punct(t, "==") || ktok_punct(t, "!=") || ktok_punct(t, "&&") ||
	       ktok_punct(t, "||") || ktok_punct(t, "?") || ktok_punct(t, ":") ||
	       ktok_punct(t, ")") || ktok_punct(t, ",");
}

static size_t operand_end(struct parser *p)
{
	size_t j = p->i;

	while (j < p->hi) {
		const struct ktok *t = &p->toks[j];
		if (ktok_punct(t, "(") || ktok_punct(t, "[") || ktok_punct(t, "{")) {
			size_t m = dtl_kernels_match(p->toks, j, p->hi);
			j = m < p->hi ? m + 1 : p->hi;
			continue;
		}
		if (is_stop(t))
			break;
		j++;
	}
	return j;
}

static bool same_base(const struct kdexpr *a, const struct kdexpr *b)
{
	return a->base && b->base && a->base_len == b->base_len &&
	       memcmp(a->base, b->base, a->base_len) == 0;
}

static void pred_add(struct kpred *v, const struct kpred_item *item, bool intersect)
{
	for (size_t i = 0; i < v->n; i++) {
		struct kpred_item *it = &v->items[i];
		if (it->same || item->same || !same_base(&it->subject, &item->subject))
			continue;
		it->mask = intersect ? (it->mask & item->mask) : (it->mask | item->mask);
		it->negated = it->negated && item->negated;
		return;
	}
	if (v->n < KPRED_MAX)
		v->items[v->n++] = *item;
}

static void p_ternary(struct parser *p, struct kpred *out);

static void predicate(struct parser *p, size_t lo, size_t hi, struct kpred *out)
{
	const struct ktok *toks = p->toks;
	struct kpred_item item = {0};
	uint64_t mask = 0;

	/* x.is_floating_point(), x.is_complex() */
	if (hi - lo >= 5 && ktok_punct(&toks[hi - 1], ")") && ktok_punct(&toks[hi - 2], "(") &&
	    (ktok_punct(&toks[hi - 4], ".") || ktok_punct(&toks[hi - 4], "->"))) {
		if (ktok_is(&toks[hi - 3], "is_floating_point"))
			mask = dtl_kernels_vocab_floating();
		else if (ktok_is(&toks[hi - 3], "is_complex"))
			mask = dtl_kernels_vocab_complex();
		if (mask) {
			item.subject.ok = true;
			item.subject.subject_lo = lo;
			item.subject.subject_hi = hi - 4;
			item.subject.kind = KA_TENSOR;
			dtl_kernels_expr_base(p->x, toks, lo, hi - 4, &item.subject.base,
			                      &item.subject.base_len);
			if (item.subject.base) {
				item.mask = mask;
				pred_add(out, &item, true);
				return;
			}
		}
	}
	/* at::isFloatingType(E), isComplexType(E), isReducedFloatingType(E) */
	size_t name = lo;
	while (name + 1 < hi && (ktok_punct(&toks[name], "::") || is_qualifier(&toks[name])))
		name++;
	if (name + 1 < hi && ktok_punct(&toks[name + 1], "(") &&
	    dtl_kernels_match(toks, name + 1, hi) == hi - 1) {
		if (ktok_is(&toks[name], "isFloatingType"))
			mask = dtl_kernels_vocab_floating();
		else if (ktok_is(&toks[name], "isComplexType"))
			mask = dtl_kernels_vocab_complex();
		else if (ktok_is(&toks[name], "isReducedFloatingType"))
			mask = DTL_KERNELS_DT(DTL_DTYPE_F16) | DTL_KERNELS_DT(DTL_DTYPE_BF16);
		if (mask &&
		    dtl_kernels_expr_dtype(p->x, toks, name + 2, hi - 1, true, &item.subject)) {
			item.mask = mask;
			pred_add(out, &item, true);
			return;
		}
	}
	out->opaque = true;
}

static void compare(struct parser *p, size_t a0, size_t a1, bool ne, size_t b0, size_t b1,
                    struct kpred *out)
{
	struct kpred_item item = {0};
	uint64_t ca = dtl_kernels_expr_constant(p->toks, a0, a1),
	         cb = dtl_kernels_expr_constant(p->toks, b0, b1);
	uint64_t all = dtl_kernels_all_dtypes();

	if (cb && !ca && dtl_kernels_expr_dtype(p->x, p->toks, a0, a1, true, &item.subject)) {
		item.mask = ne ? (all & ~cb) : cb;
		item.negated = ne;
		pred_add(out, &item, true);
		return;
	}
	if (ca && !cb && dtl_kernels_expr_dtype(p->x, p->toks, b0, b1, true, &item.subject)) {
		item.mask = ne ? (all & ~ca) : ca;
		item.negated = ne;
		pred_add(out, &item, true);
		return;
	}
	if (!ca && !cb && dtl_kernels_expr_dtype(p->x, p->toks, a0, a1, false, &item.subject) &&
	    dtl_kernels_expr_dtype(p->x, p->toks, b0, b1, false, &item.other)) {
		if (ne) {
			out->opaque = true;
			out->conditional = true;
			return;
		}
		item.same = true;
		item.mask = all;
		if (out->n < KPRED_MAX)
			out->items[out->n++] = item;
		return;
	}
	out->opaque = true;
}

static void p_primary(struct parser *p, struct kpred *out)
{
	memset(out, 0, sizeof(*out));
	if (p->i >= p->hi) {
		out->opaque = true;
		return;
	}
	if (ktok_punct(&p->toks[p->i], "(")) {
		size_t m = dtl_kernels_match(p->toks, p->i, p->hi);
		if (m < p->hi && (m + 1 == p->hi ||
		                  (is_stop(&p->toks[m + 1]) && !ktok_punct(&p->toks[m + 1], "==") &&
		                   !ktok_punct(&p->toks[m + 1], "!=")))) {
			struct parser inner = {p->x, p->toks, p->i + 1, m};
			p_ternary(&inner, out);
			p->i = m + 1;
			return;
		}
	}
	size_t a0 = p->i, a1 = operand_end(p);
	p->i = a1;
	if (p->i < p->hi &&
	    (ktok_punct(&p->toks[p->i], "==") || ktok_punct(&p->toks[p->i], "!="))) {
		bool ne = ktok_punct(&p->toks[p->i], "!=");
		p->i++;
		size_t b0 = p->i, b1 = operand_end(p);
		p->i = b1;
		compare(p, a0, a1, ne, b0, b1, out);
		return;
	}
	if (a1 == a0 + 1 && (ktok_is(&p->toks[a0], "false") || ktok_is(&p->toks[a0], "0"))) {
		out->opaque = true;
		return;
	}
	predicate(p, a0, a1, out);
}

static void p_unary(struct parser *p, struct kpred *out)
{
	if (p->i < p->hi && ktok_punct(&p->toks[p->i], "!")) {
		p->i++;
		p_unary(p, out);
		if (out->n == 1 && !out->items[0].same && !out->opaque) {
			out->items[0].mask = dtl_kernels_all_dtypes() & ~out->items[0].mask;
			out->items[0].negated = !out->items[0].negated;
		} else if (out->n) {
			out->conditional = true;
			out->opaque = true;
		}
		return;
	}
	p_primary(p, out);
}

static void p_and(struct parser *p, struct kpred *out)
{
	p_unary(p, out);
	while (p->i < p->hi && ktok_punct(&p->toks[p->i], "&&")) {
		struct kpred rhs;
		p->i++;
		p_unary(p, &rhs);
		for (size_t i = 0; i < rhs.n; i++)
			pred_add(out, &rhs.items[i], true);
		out->opaque |= rhs.opaque;
		out->conditional |= rhs.conditional;
	}
}

static void p_or(struct parser *p, struct kpred *out)
{
	p_and(p, out);
	while (p->i < p->hi && ktok_punct(&p->toks[p->i], "||")) {
		struct kpred rhs;
		p->i++;
		p_and(p, &rhs);
		bool exact = out->n == 1 && rhs.n == 1 && !out->opaque && !rhs.opaque &&
		             !out->items[0].same && !rhs.items[0].same &&
		             same_base(&out->items[0].subject, &rhs.items[0].subject);
		for (size_t i = 0; i < rhs.n; i++)
			pred_add(out, &rhs.items[i], false);
		if (!exact && (out->n || rhs.n))
			out->conditional = true;
		out->opaque |= rhs.opaque;
		out->conditional |= rhs.conditional;
	}
}

static void p_ternary(struct parser *p, struct kpred *out)
{
	struct kpred cond;

	p_or(p, &cond);
	if (p->i >= p->hi || !ktok_punct(&p->toks[p->i], "?")) {
		*out = cond;
		return;
	}
	p->i++;
	struct kpred a, b;
	p_ternary(p, &a);
	if (p->i < p->hi && ktok_punct(&p->toks[p->i], ":"))
		p->i++;
	p_ternary(p, &b);
	/* docs/kernels.md §5: cond ? (a == b) : (a == kUInt8) is a
	 * conditional, low-confidence assert. */
	*out = a;
	for (size_t i = 0; i < b.n; i++)
		pred_add(out, &b.items[i], false);
	out->conditional = true;
	out->opaque |= b.opaque;
}

void dtl_kernels_expr_condition(struct kx *x, const struct ktok *toks, size_t lo, size_t hi,
                                struct kpred *ret)
{
	struct parser p = {x, toks, lo, hi};

	p_ternary(&p, ret);
	if (p.i < hi)
		ret->opaque = true;
}

/* ---- messages ---- */

struct sbuf {
	char *buf;
	size_t len, cap;
	struct dtl_arena *arena;
	bool oom;
};

static void sb_add(struct sbuf *s, const char *text, size_t len)
{
	if (s->oom)
		return;
	if (s->len + len + 1 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 128;
		while (cap < s->len + len + 1)
			cap *= 2;
		char *nb = dtl_arena_alloc(s->arena, cap);
		if (!nb) {
			s->oom = true;
			return;
		}
		if (s->len)
			memcpy(nb, s->buf, s->len);
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, text, len);
	s->len += len;
	s->buf[s->len] = '\0';
}

static void sb_str(struct sbuf *s, const char *text)
{
	sb_add(s, text, strlen(text));
}

/* Appends the value of a C string or character literal token. */
static bool unescape_literal(struct sbuf *s, const struct ktok *t)
{
	const char *p = t->text, *end = t->text + t->len;
	char quote;

	while (p < end && *p != '"' && *p != '\'')
		p++;
	if (p >= end)
		return false;
	quote = *p;
	if (quote == '"' && p > t->text && p[-1] == 'R') {
		/* R"delim( ... )delim" */
		const char *open = memchr(p, '(', (size_t)(end - p));
		if (!open)
			return false;
		size_t dlen = (size_t)(open - p - 1);
		const char *close = end - 1 - dlen - 1;
		if (close < open + 1)
			return false;
		sb_add(s, open + 1, (size_t)(close - open - 1));
		return true;
	}
	p++;
	for (; p < end && *p != quote; p++) {
		char c = *p;
		if (c == '\\' && p + 1 < end) {
			p++;
			switch (*p) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case '0':
				c = '\0';
				break;
			default:
				c = *p;
				break;
			}
			if (c == '\0')
				continue;
		}
		sb_add(s, &c, 1);
	}
	return true;
}

static bool is_string(const struct ktok *t)
{
	if (t->kind != KT_LITERAL)
		return false;
	for (uint32_t i = 0; i < t->len; i++) {
		if (t->text[i] == '"' || t->text[i] == '\'')
			return true;
		if (!(t->text[i] == 'u' || t->text[i] == 'U' || t->text[i] == 'L' ||
		      t->text[i] == '8' || t->text[i] == 'R'))
			return false;
	}
	return false;
}

static void render_arg(struct kx *x, struct sbuf *s, const struct ktok *toks, size_t lo, size_t hi)
{
	struct kdexpr d;
	bool all_strings = lo < hi;

	trim_parens(toks, &lo, &hi);
	for (size_t i = lo; i < hi; i++)
		all_strings &= is_string(&toks[i]) || toks[i].kind == KT_STRINGIZED;
	if (all_strings) {
		for (size_t i = lo; i < hi; i++) {
			if (toks[i].kind == KT_STRINGIZED)
				sb_add(s, toks[i].text, toks[i].len);
			else
				unescape_literal(s, &toks[i]);
		}
		return;
	}
	/* c10::toString(x.scalar_type()) */
	size_t name = lo;
	while (name + 1 < hi && (ktok_punct(&toks[name], "::") || is_qualifier(&toks[name])))
		name++;
	if (name + 1 < hi && ktok_is(&toks[name], "toString") && ktok_punct(&toks[name + 1], "(") &&
	    dtl_kernels_match(toks, name + 1, hi) == hi - 1 &&
	    dtl_kernels_expr_dtype(x, toks, name + 2, hi - 1, false, &d)) {
		sb_str(s, "{ScalarType}");
		return;
	}
	if (dtl_kernels_expr_dtype(x, toks, lo, hi, false, &d) && d.kind != KA_TENSOR) {
		sb_str(s, d.kind == KA_SCALAR_TYPE ? "{ScalarType}" : "{dtype}");
		return;
	}
	char *text = dtl_kernels_join(x->scratch, toks, lo, hi);
	sb_str(s, "{");
	sb_str(s, text ? text : "?");
	sb_str(s, "}");
}

const char *dtl_kernels_expr_message(struct kx *x, const struct ktok *toks, const size_t *starts,
                                     const size_t *ends, size_t n)
{
	struct sbuf s = {.arena = x->scratch};

	sb_add(&s, "", 0);
	for (size_t a = 0; a < n; a++) {
		/* "a" + x + "b" inside std::runtime_error(...) */
		size_t start = starts[a], depth = 0;
		for (size_t i = starts[a]; i <= ends[a]; i++) {
			if (i < ends[a]) {
				const struct ktok *t = &toks[i];
				if (ktok_punct(t, "(") || ktok_punct(t, "[") || ktok_punct(t, "{"))
					depth++;
				else if ((ktok_punct(t, ")") || ktok_punct(t, "]") ||
				          ktok_punct(t, "}")) &&
				         depth)
					depth--;
				if (depth || !ktok_punct(t, "+"))
					continue;
			}
			render_arg(x, &s, toks, start, i);
			start = i + 1;
		}
	}
	if (s.oom) {
		dtl_kernels_rec_oom(x);
		return NULL;
	}
	return dtl_kernels_intern(x->k, s.buf, s.len);
}
