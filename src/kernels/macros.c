/* SPDX-License-Identifier: MIT */
/*
 * The project's function-like macros: harvested from the preprocessing record of every file the
 * hermetic parse reached, resolved per use site, expanded token by token.
 * docs/kernels.md §3 "Project macros": wrapper names
 * lie and the same name can be defined twice, so a use resolves to the definition libclang
 * actually reached.
 */
#include <errno.h>
#include <string.h>

#include "extract.h"

struct collect {
	struct kx *x;
	int err;
};

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data)
{
	struct collect *col = data;
	struct kx *x = col->x;
	const struct dtl_libclang *lc = x->kf->lc;
	struct kmacro *m;
	CXString spelling;
	const char *name;
	int64_t first;

	(void)parent;
	if (lc->getCursorKind(c) != CXCursor_MacroDefinition || lc->Cursor_isMacroBuiltin(c) ||
	    !lc->Cursor_isMacroFunctionLike(c))
		return CXChildVisit_Continue;
	spelling = lc->getCursorSpelling(c);
	name = lc->getCString(spelling);
	size_t len = name ? strlen(name) : 0;
	char *copy = len ? dtl_arena_strndup(x->scratch, name, len) : NULL;
	lc->disposeString(spelling);
	if (!len)
		return CXChildVisit_Continue;
	if (!copy || !(m = dtl_vec_push(&x->macros.defs, x->scratch, sizeof(*m)))) {
		col->err = -ENOMEM;
		return CXChildVisit_Break;
	}
	m->name = copy;
	m->name_len = (uint32_t)len;
	m->cursor = c;
	m->next = -1;
	int64_t index = (int64_t)x->macros.defs.count - 1;
	first = dtl_strmap_put(&x->macros.byname, copy, len, index);
	if (first < 0) {
		col->err = -ENOMEM;
		return CXChildVisit_Break;
	}
	if (first != index) {
		/* the map keeps the first definition; later ones chain behind it in order */
		struct kmacro *defs = x->macros.defs.items;
		int64_t tail = first;
		while (defs[tail].next >= 0)
			tail = defs[tail].next;
		defs[tail].next = index;
	}
	return CXChildVisit_Continue;
}

int dtl_kernels_macros_collect(struct kx *x)
{
	const struct dtl_libclang *lc = x->kf->lc;
	struct collect col = {.x = x};

	dtl_strmap_init(&x->macros.byname, x->scratch);
	lc->visitChildren(lc->getTranslationUnitCursor(x->kf->tu), visit, &col);
	return col.err;
}

static int load(struct kx *x, struct kmacro *m)
{
	const struct dtl_libclang *lc = x->kf->lc;
	CXTranslationUnit tu = x->kf->tu;
	CXSourceRange ext = lc->getCursorExtent(m->cursor);
	CXToken *ct = NULL;
	unsigned nct = 0, line = 0, prev_end = 0;
	CXFile file = NULL;
	const char *contents;
	size_t size = 0;
	struct ktok *toks;
	size_t n = 0;
	int r = 0;

	m->loaded = true;
	m->bad = true;
	lc->getSpellingLocation(lc->getRangeStart(ext), &file, &line, NULL, NULL);
	if (!file || !(contents = lc->getFileContents(tu, file, &size)))
		return 0;
	CXString fname = lc->getFileName(file);
	const char *fn = lc->getCString(fname);
	m->file = fn ? dtl_kernels_normalize(x->k, fn) : NULL;
	lc->disposeString(fname);
	if (!m->file)
		return -ENOMEM;
	m->line = line;
	lc->tokenize(tu, ext, &ct, &nct);
	toks = nct ? dtl_arena_calloc(x->scratch, nct, sizeof(*toks)) : NULL;
	if (nct && !toks) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < nct; i++) {
		CXTokenKind kind = lc->getTokenKind(ct[i]);
		CXSourceRange te = lc->getTokenExtent(tu, ct[i]);
		unsigned off = 0, eoff = 0;
		if (kind == CXToken_Comment)
			continue;
		lc->getSpellingLocation(lc->getRangeStart(te), NULL, NULL, NULL, &off);
		lc->getSpellingLocation(lc->getRangeEnd(te), NULL, NULL, NULL, &eoff);
		if (off > size || eoff > size || eoff < off)
			continue;
		struct ktok *t = &toks[n++];
		t->text = contents + off;
		t->len = eoff - off;
		t->kind = kind == CXToken_Identifier ? KT_IDENT
		          : kind == CXToken_Keyword  ? KT_KEYWORD
		          : kind == CXToken_Literal  ? KT_LITERAL
		                                     : KT_PUNCT;
		if (off > prev_end && i > 0)
			t->flags |= KTF_SPACE;
		prev_end = eoff;
	}
	/* NAME ( params ) body */
	if (n < 3 || !ktok_punct(&toks[1], "("))
		goto out;
	size_t close = dtl_kernels_match(toks, 1, n);
	if (close >= n)
		goto out;
	m->params = dtl_arena_calloc(x->scratch, close, sizeof(*m->params));
	if (!m->params) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 2; i < close; i++) {
		if (toks[i].kind == KT_IDENT) {
			m->params[m->n_params++] = toks[i];
		} else if (ktok_punct(&toks[i], "...")) {
			if (i > 2 && toks[i - 1].kind == KT_IDENT) {
				m->variadic = true; /* named: args... */
			} else {
				struct ktok va = {
				    .text = "__VA_ARGS__", .len = 11, .kind = KT_IDENT};
				m->params[m->n_params++] = va;
				m->variadic = true;
			}
		}
	}
	m->body = toks + close + 1;
	m->n_body = n - close - 1;
	m->bad = false;
out:
	if (ct)
		lc->disposeTokens(tu, ct, nct);
	return r;
}

static const struct kmacro *resolve(struct kx *x, const struct krange *r, size_t i, int64_t first)
{
	const struct dtl_libclang *lc = x->kf->lc;
	struct kmacro *defs = x->macros.defs.items;
	int64_t pick = first;

	/* Several definitions of one name: ask libclang which one this use expands. */
	if (defs[first].next >= 0 && r->main && x->kf->contents &&
	    r->toks[i].text >= x->kf->contents && r->toks[i].text < x->kf->contents + x->kf->size) {
		unsigned off = (unsigned)(r->toks[i].text - x->kf->contents);
		CXCursor use =
		    lc->getCursor(x->kf->tu, lc->getLocationForOffset(x->kf->tu, x->kf->file, off));
		bool found = false;
		if (lc->getCursorKind(use) == CXCursor_MacroExpansion) {
			CXCursor def = lc->getCursorReferenced(use);
			for (int64_t d = first; d >= 0; d = defs[d].next) {
				if (lc->equalCursors(def, defs[d].cursor)) {
					pick = d;
					found = true;
					break;
				}
			}
		}
		if (!found) {
			/* not expanded here (skipped region): the last definition */
			for (int64_t d = first; d >= 0; d = defs[d].next)
				pick = d;
		}
	} else {
		for (int64_t d = first; d >= 0; d = defs[d].next)
			pick = d;
	}
	return &defs[pick];
}

const struct kmacro *dtl_kernels_macros_find(struct kx *x, const struct krange *r, size_t i)
{
	const struct ktok *t = &r->toks[i];
	int64_t first;
	struct kmacro *m;

	if (t->kind != KT_IDENT || !x->macros.defs.count)
		return NULL;
	first = dtl_strmap_get(&x->macros.byname, t->text, t->len);
	if (first < 0)
		return NULL;
	m = (struct kmacro *)resolve(x, r, i, first);
	if (!m->loaded) {
		int err = load(x, m);
		if (err < 0) {
			x->err = err;
			return NULL;
		}
	}
	for (size_t a = 0; a < x->n_active; a++) {
		if (x->active[a] == m)
			return NULL; /* a macro is not expanded inside itself */
	}
	return m->bad ? NULL : m;
}

static int64_t param_index(const struct kmacro *m, const struct ktok *t)
{
	if (t->kind != KT_IDENT)
		return -1;
	for (size_t p = 0; p < m->n_params; p++) {
		if (m->params[p].len == t->len && memcmp(m->params[p].text, t->text, t->len) == 0)
			return (int64_t)p;
	}
	return -1;
}

static struct ktok *push(struct kx *x, struct dtl_vec *out)
{
	struct ktok *t;

	if (x->expand_budget == 0)
		return NULL;
	x->expand_budget--;
	t = dtl_vec_push(out, x->scratch, sizeof(*t));
	return t;
}

/* a ## b: the two spellings glued into one token */
static int paste(struct kx *x, struct dtl_vec *out, const struct ktok *next)
{
	struct ktok *last = (struct ktok *)out->items + out->count - 1;
	char *text = dtl_arena_alloc(x->scratch, (size_t)last->len + next->len + 1);

	if (!text)
		return -ENOMEM;
	memcpy(text, last->text, last->len);
	memcpy(text + last->len, next->text, next->len);
	last->text = text;
	last->len += next->len;
	return 0;
}

int dtl_kernels_macros_expand(struct kx *x, const struct kmacro *m, const struct krange *r,
                              size_t i, size_t close, struct ktok **ret, size_t *ret_n)
{
	const struct ktok *use = &r->toks[i];
	size_t max_args = m->n_params > 0 ? m->n_params : 1;
	size_t *starts, *ends, n_args;
	struct dtl_vec out = {0};
	bool pasting = false;

	/* arguments: the variadic parameter takes every argument from its position on */
	size_t all = 1;
	for (size_t j = i + 2; j < close; j++)
		all += ktok_punct(&r->toks[j], ",");
	if (all > max_args)
		max_args = all;
	starts = dtl_arena_calloc(x->scratch, max_args, sizeof(*starts));
	ends = dtl_arena_calloc(x->scratch, max_args, sizeof(*ends));
	if (!starts || !ends)
		return -ENOMEM;
	n_args = dtl_kernels_split_args(r->toks, i + 2, close, starts, ends, max_args);
	if (m->variadic && m->n_params > 0 && n_args > m->n_params) {
		ends[m->n_params - 1] = ends[n_args - 1];
		n_args = m->n_params;
	}

	for (size_t b = 0; b < m->n_body; b++) {
		const struct ktok *bt = &m->body[b];
		int64_t p;

		if (ktok_punct(bt, "#") && b + 1 < m->n_body &&
		    (p = param_index(m, &m->body[b + 1])) >= 0) {
			struct ktok *t = push(x, &out);
			if (!t)
				return x->expand_budget ? -ENOMEM : -E2BIG;
			char *s = (size_t)p < n_args
			              ? dtl_kernels_join(x->scratch, r->toks, starts[p], ends[p])
			              : dtl_arena_strndup(x->scratch, "", 0);
			if (!s)
				return -ENOMEM;
			*t = *use;
			t->text = s;
			t->len = (uint32_t)strlen(s);
			t->kind = KT_STRINGIZED;
			t->flags = KTF_BODY | (bt->flags & KTF_SPACE) | (use->flags & KTF_SKIPPED);
			b++;
			continue;
		}
		if (ktok_punct(bt, "##")) {
			pasting = out.count > 0;
			continue;
		}
		p = param_index(m, bt);
		if (p >= 0) {
			if ((size_t)p >= n_args)
				continue;
			for (size_t a = starts[p]; a < ends[p]; a++) {
				if (r->toks[a].flags & KTF_DIRECTIVE)
					continue;
				if (pasting) {
					if (paste(x, &out, &r->toks[a]) < 0)
						return -ENOMEM;
					pasting = false;
					continue;
				}
				struct ktok *t = push(x, &out);
				if (!t)
					return x->expand_budget ? -ENOMEM : -E2BIG;
				*t = r->toks[a];
				if (a == starts[p])
					t->flags = (uint16_t)((t->flags & ~KTF_SPACE) |
					                      (bt->flags & KTF_SPACE));
			}
			pasting = false;
			continue;
		}
		if (pasting) {
			if (paste(x, &out, bt) < 0)
				return -ENOMEM;
			pasting = false;
			continue;
		}
		struct ktok *t = push(x, &out);
		if (!t)
			return x->expand_budget ? -ENOMEM : -E2BIG;
		*t = *bt;
		t->line = use->line;
		t->guard = use->guard;
		t->flags = KTF_BODY | (bt->flags & KTF_SPACE) | (use->flags & KTF_SKIPPED);
	}
	*ret = out.items;
	*ret_n = out.count;
	return 0;
}
