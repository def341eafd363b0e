/* SPDX-License-Identifier: MIT */
/*
 * Lexing one file with libclang: a hermetic parse (so that project #includes and macro
 * definitions are followed but nothing on the machine is), the main file's token stream,
 * preprocessor directive lines masked, #if guards attached, skipped ranges tagged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernels-private.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool has_suffix(const char *path, const char *suffix)
{
	size_t n = strlen(path), m = strlen(suffix);
	return n >= m && strcmp(path + n - m, suffix) == 0;
}

static size_t k_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

static char *dir_of(struct dtl_arena *arena, const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return dtl_arena_strndup(arena, ".", 1);
	if (slash == path)
		return dtl_arena_strndup(arena, "/", 1);
	return dtl_arena_strndup(arena, path, (size_t)(slash - path));
}

static int build_args(struct dtl_arena *scratch, const char *path, const char *const *include_dirs,
                      size_t n_include_dirs, const char ***ret_args, int *ret_n)
{
	/* docs/kernels.md §2: -nostdinc -nostdinc++ keeps the result machine independent
	 * (Debian's libtorch-dev puts ATen in /usr/include); .cu/.cuh parse as CUDA host code
	 * without a toolkit. Warnings are noise here. */
	static const char *const base[] = {"-std=c++17", "-nostdinc", "-nostdinc++", "-w",
	                                   "-Wno-everything"};
	static const char *const cuda[] = {"-x", "cuda", "--cuda-host-only", "-nocudainc",
	                                   "-nocudalib"};
	static const char *const cxx[] = {"-x", "c++"};
	bool is_cuda = has_suffix(path, ".cu") || has_suffix(path, ".cuh");
	size_t max = 16 + n_include_dirs;
	const char **args = dtl_arena_calloc(scratch, max, sizeof(*args));
	size_t n = 0;

	if (!args)
		return -ENOMEM;
	if (is_cuda) {
		for (size_t i = 0; i < sizeof(cuda) / sizeof(cuda[0]); i++)
			args[n++] = cuda[i];
	} else {
		for (size_t i = 0; i < sizeof(cxx) / sizeof(cxx[0]); i++)
			args[n++] = cxx[i];
	}
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		args[n++] = base[i];
	char *dir = dir_of(scratch, path);
	if (!dir || !(args[n++] = dtl_arena_sprintf(scratch, "-I%s", dir)))
		return -ENOMEM;
	for (size_t i = 0; i < n_include_dirs; i++) {
		if (!(args[n++] = dtl_arena_sprintf(scratch, "-I%s", include_dirs[i])))
			return -ENOMEM;
	}
	*ret_args = args;
	*ret_n = (int)n;
	return 0;
}

static int lex(struct kfile *kf, struct dtl_arena *scratch)
{
	const struct dtl_libclang *lc = kf->lc;
	CXSourceLocation start = lc->getLocationForOffset(kf->tu, kf->file, 0);
	CXSourceLocation end = lc->getLocationForOffset(kf->tu, kf->file, (unsigned)kf->size);
	CXToken *ct = NULL;
	unsigned nct = 0, prev_end = 0, prev_line = 0;
	int r = 0;

	lc->tokenize(kf->tu, lc->getRange(start, end), &ct, &nct);
	if (nct > KMAX_TOKENS) {
		r = -EFBIG;
		goto out;
	}
	kf->toks = nct ? dtl_arena_calloc(scratch, nct, sizeof(*kf->toks)) : NULL;
	if (nct && !kf->toks) {
		r = -ENOMEM;
		goto out;
	}
	kf->n = 0;
	for (unsigned i = 0; i < nct; i++) {
		CXTokenKind kind = lc->getTokenKind(ct[i]);
		CXSourceRange ext;
		unsigned line = 0, off = 0, eoff = 0;
		struct ktok *t;

		if (kind == CXToken_Comment)
			continue;
		/* Offsets into the file buffer instead of clang_getTokenSpelling: no allocation
		 * per token. */
		ext = lc->getTokenExtent(kf->tu, ct[i]);
		lc->getSpellingLocation(lc->getRangeStart(ext), NULL, &line, NULL, &off);
		lc->getSpellingLocation(lc->getRangeEnd(ext), NULL, NULL, NULL, &eoff);
		if (off > kf->size || eoff > kf->size || eoff < off)
			continue;
		t = &kf->toks[kf->n++];
		t->text = kf->contents + off;
		t->len = eoff - off;
		t->line = line;
		switch (kind) {
		case CXToken_Identifier:
			t->kind = KT_IDENT;
			break;
		case CXToken_Keyword:
			t->kind = KT_KEYWORD;
			break;
		case CXToken_Literal:
			t->kind = KT_LITERAL;
			break;
		default:
			t->kind = KT_PUNCT;
			break;
		}
		if (off > prev_end)
			t->flags |= KTF_SPACE;
		if (line != prev_line)
			t->flags |= KTF_LINE_START;
		prev_end = eoff;
		prev_line = line;
	}
out:
	if (ct)
		lc->disposeTokens(kf->tu, ct, nct);
	return r;
}

/* End offset of the logical line starting at off (backslash continuations joined). */
static size_t logical_line_end(const char *s, size_t size, size_t off)
{
	for (size_t p = off; p < size; p++) {
		if (s[p] != '\n')
			continue;
		size_t q = p;
		if (q > off && s[q - 1] == '\r')
			q--;
		if (q > off && s[q - 1] == '\\')
			continue;
		return p;
	}
	return size;
}

struct guard_entry {
	const char *text; /* persistent */
	bool hidden;      /* include guard */
};

struct guard_state {
	struct guard_entry stack[KMAX_GUARD_STACK];
	size_t depth;        /* may exceed KMAX_GUARD_STACK; entries beyond are dropped */
	struct dtl_vec sets; /* struct kguard */
};

static int snapshot(struct dtl_kernels *k, struct dtl_arena *scratch, struct guard_state *g,
                    uint32_t *ret_index)
{
	size_t visible = 0, depth = g->depth < KMAX_GUARD_STACK ? g->depth : KMAX_GUARD_STACK;
	struct kguard *set;
	const char **names = NULL;

	for (size_t i = 0; i < depth; i++)
		visible += !g->stack[i].hidden;
	if (visible) {
		names = dtl_arena_calloc(k->arena, visible, sizeof(*names));
		if (!names)
			return -ENOMEM;
		visible = 0;
		for (size_t i = 0; i < depth; i++) {
			if (!g->stack[i].hidden)
				names[visible++] = g->stack[i].text;
		}
	}
	set = dtl_vec_push(&g->sets, scratch, sizeof(*set));
	if (!set)
		return -ENOMEM;
	set->names = names;
	set->n = visible;
	*ret_index = (uint32_t)(g->sets.count - 1);
	return 0;
}

/* "defined(X)" / "defined X" -> "X", "!defined(X)" -> "!X"; anything else as written. */
static const char *condition_text(struct dtl_kernels *k, struct dtl_arena *scratch,
                                  const struct ktok *toks, size_t lo, size_t hi)
{
	bool neg = false;
	size_t i = lo;

	if (i < hi && ktok_punct(&toks[i], "!")) {
		neg = true;
		i++;
	}
	if (i < hi && ktok_is(&toks[i], "defined")) {
		size_t j = i + 1;
		bool paren = j < hi && ktok_punct(&toks[j], "(");
		if (paren)
			j++;
		if (j < hi && toks[j].kind == KT_IDENT && j + 1 + (paren ? 1u : 0u) == hi &&
		    (!paren || ktok_punct(&toks[j + 1], ")"))) {
			char *t = dtl_arena_sprintf(scratch, "%s%.*s", neg ? "!" : "",
			                            (int)toks[j].len, toks[j].text);
			return t ? dtl_kernels_intern_z(k, t) : NULL;
		}
	}
	char *t = dtl_kernels_join(scratch, toks, lo, hi);
	return t ? dtl_kernels_intern_z(k, t) : NULL;
}

static const char *negate(struct dtl_kernels *k, struct dtl_arena *scratch, const char *text)
{
	bool simple = true;
	const char *p = text[0] == '!' ? text + 1 : text;

	for (; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			simple = false;
	}
	if (simple && text[0] == '!')
		return dtl_kernels_intern_z(k, text + 1);
	char *t = dtl_arena_sprintf(scratch, simple ? "!%s" : "!(%s)", text);
	return t ? dtl_kernels_intern_z(k, t) : NULL;
}

/* Masks directive lines and gives every token the #if conditions around it. */
static int directives(struct dtl_kernels *k, struct dtl_arena *scratch, struct kfile *kf)
{
	struct guard_state *g = dtl_arena_alloc(scratch, sizeof(*g));
	uint32_t current = 0;
	bool seen_code = false, seen_conditional = false;
	int r;

	if (!g)
		return -ENOMEM;
	if ((r = snapshot(k, scratch, g, &current)) < 0)
		return r;
	for (size_t i = 0; i < kf->n;) {
		struct ktok *t = &kf->toks[i];
		if (!(ktok_punct(t, "#") && (t->flags & KTF_LINE_START))) {
			t->guard = current;
			seen_code = true;
			i++;
			continue;
		}
		size_t off = (size_t)(t->text - kf->contents);
		size_t end_off = logical_line_end(kf->contents, kf->size, off);
		size_t j = i;
		while (j < kf->n && (size_t)(kf->toks[j].text - kf->contents) < end_off) {
			kf->toks[j].flags |= KTF_DIRECTIVE;
			kf->toks[j].guard = current;
			j++;
		}
		if (i + 1 >= j) {
			i = j;
			continue;
		}
		const struct ktok *d = &kf->toks[i + 1];
		bool changed = true;
		if (ktok_is(d, "if") || ktok_is(d, "ifdef") || ktok_is(d, "ifndef")) {
			struct guard_entry e = {0};
			if (ktok_is(d, "if")) {
				e.text = condition_text(k, scratch, kf->toks, i + 2, j);
			} else {
				bool ndef = ktok_is(d, "ifndef");
				char *txt = i + 2 < j ? dtl_arena_sprintf(scratch, "%s%.*s",
				                                          ndef ? "!" : "",
				                                          (int)kf->toks[i + 2].len,
				                                          kf->toks[i + 2].text)
				                      : NULL;
				e.text = txt ? dtl_kernels_intern_z(k, txt)
				             : dtl_kernels_intern_z(k, "?");
				/* An include guard (#ifndef X / #define X before any code) is
				 * not a build option. */
				if (ndef && !seen_code && !seen_conditional && i + 2 < j &&
				    j + 2 < kf->n && ktok_punct(&kf->toks[j], "#") &&
				    ktok_is(&kf->toks[j + 1], "define") &&
				    kf->toks[j + 2].len == kf->toks[i + 2].len &&
				    memcmp(kf->toks[j + 2].text, kf->toks[i + 2].text,
				           kf->toks[i + 2].len) == 0)
					e.hidden = true;
			}
			if (!e.text)
				return -ENOMEM;
			seen_conditional = true;
			if (g->depth < KMAX_GUARD_STACK)
				g->stack[g->depth] = e;
			g->depth++;
		} else if (ktok_is(d, "elif") || ktok_is(d, "elifdef") || ktok_is(d, "elifndef")) {
			if (g->depth > 0 && g->depth <= KMAX_GUARD_STACK) {
				const char *txt = condition_text(k, scratch, kf->toks, i + 2, j);
				if (!txt)
					return -ENOMEM;
				g->stack[g->depth - 1].text = txt;
				g->stack[g->depth - 1].hidden = false;
			}
		} else if (ktok_is(d, "else")) {
			if (g->depth > 0 && g->depth <= KMAX_GUARD_STACK) {
				const char *txt = negate(k, scratch, g->stack[g->depth - 1].text);
				if (!txt)
					return -ENOMEM;
				g->stack[g->depth - 1].text = txt;
			}
		} else if (ktok_is(d, "endif")) {
			if (g->depth > 0)
				g->depth--;
		} else {
			changed = false;
		}
		if (changed && (r = snapshot(k, scratch, g, &current)) < 0)
			return r;
		i = j;
	}
	kf->guards = g->sets.items;
	kf->n_guards = g->sets.count;
	return 0;
}

static void mark_skipped(struct kfile *kf)
{
	const struct dtl_libclang *lc = kf->lc;
	CXSourceRangeList *list = lc->getSkippedRanges(kf->tu, kf->file);

	if (!list)
		return;
	for (unsigned r = 0; r < list->count; r++) {
		unsigned s = 0, e = 0;
		lc->getSpellingLocation(lc->getRangeStart(list->ranges[r]), NULL, NULL, NULL, &s);
		lc->getSpellingLocation(lc->getRangeEnd(list->ranges[r]), NULL, NULL, NULL, &e);
		/* binary search for the first token at or after s */
		size_t lo = 0, hi = kf->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if ((size_t)(kf->toks[mid].text - kf->contents) < s)
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t end = lo;
		long depth = 0;
		bool balanced = true;
		for (; end < kf->n && (size_t)(kf->toks[end].text - kf->contents) < e; end++) {
			struct ktok *t = &kf->toks[end];
			t->flags |= KTF_SKIPPED;
			if (t->flags & KTF_DIRECTIVE)
				continue;
			if (ktok_punct(t, "{"))
				depth++;
			else if (ktok_punct(t, "}") && --depth < 0)
				balanced = false;
		}
		/* #if A / void f(int a) { / #else / void f(int a, int b) { / #endif: the skipped
		 * branch must not shift the braces of the active one */
		if (!balanced || depth != 0) {
			for (size_t i = lo; i < end; i++)
				kf->toks[i].flags |= KTF_UNBALANCED;
		}
	}
	lc->disposeSourceRangeList(list);
}

struct inclusions {
	struct dtl_kernels *k;
	struct dtl_arena *scratch;
	struct dtl_vec list; /* const char * */
	int err;
	const struct CXUnsavedFile *unsaved;
	unsigned n_unsaved;
	const char *refused, *why; /* the first include the policy refuses (roots.c) */
	unsigned line, column;     /* of the #include in the main file that reached it */
};

static void visit_inclusion(CXFile file, CXSourceLocation *stack, unsigned depth, CXClientData data)
{
	struct inclusions *inc = data;
	const struct dtl_libclang *lc = inc->k->scanner->lc;
	const char *norm, **slot;

	if (depth == 0 || inc->err)
		return; /* the main file itself */
	CXString name = lc->getFileName(file);
	const char *s = lc->getCString(name);
	norm = s ? dtl_kernels_normalize(inc->k, s) : NULL;
	if (s && !inc->refused) {
		const char *why =
		    dtl_kernels_include_refused(inc->k, s, inc->unsaved, inc->n_unsaved);
		if (why) {
			inc->refused = norm;
			inc->why = why;
			lc->getSpellingLocation(stack[depth - 1], NULL, &inc->line, &inc->column,
			                        NULL);
		}
	}
	lc->disposeString(name);
	if (!norm) {
		inc->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < inc->list.count; i++) {
		if (((const char **)inc->list.items)[i] == norm)
			return;
	}
	slot = dtl_vec_push(&inc->list, inc->scratch, sizeof(*slot));
	if (!slot) {
		inc->err = -ENOMEM;
		return;
	}
	*slot = norm;
}

static int inclusions(struct dtl_kernels *k, struct dtl_arena *scratch, struct kfile *kf,
                      const struct CXUnsavedFile *unsaved, unsigned n_unsaved,
                      struct dtl_error *error)
{
	struct inclusions inc = {
	    .k = k, .scratch = scratch, .unsaved = unsaved, .n_unsaved = n_unsaved};

	kf->lc->getInclusions(kf->tu, visit_inclusion, &inc);
	if (inc.err)
		return dtl_error_set(error, (struct dtl_loc){.file = kf->path}, inc.err,
		                     "out of memory");
	if (inc.refused) {
		struct dtl_loc loc = {.file = kf->path, .line = inc.line, .column = inc.column};
		return dtl_error_set(error, loc, -EACCES, "#include of '%s' refused: %s",
		                     inc.refused ? inc.refused : "?", inc.why);
	}
	if (inc.list.count) {
		kf->includes = dtl_arena_calloc(k->arena, inc.list.count, sizeof(*kf->includes));
		if (!kf->includes)
			return -ENOMEM;
		memcpy(kf->includes, inc.list.items, inc.list.count * sizeof(*kf->includes));
	}
	kf->n_includes = inc.list.count;
	return 0;
}

/*
 * The include policy before libclang opens anything: libclang would read '#include
 * "/dev/zero"' until the memory limit stops it, and the refusal would be lost in the crash.
 * A lexical look at the #include lines of the main file and of the headers they reach (as the
 * preprocessor searches: the including file's directory for "", then the -I dirs, the main
 * file's directory first), without macros or #if; what it cannot see, inclusions() checks
 * after the parse and the sandbox's limits bound. It stops quietly after KPRE_MAX_FILES files
 * or KPRE_MAX_BYTES bytes: it is a first line, not the only one.
 */
#define KPRE_MAX_FILES 4096u
#define KPRE_MAX_BYTES (64u << 20)

struct pre_file {
	const char *path; /* normalised, interned */
	uint32_t line,
	    column; /* of the main file's #include that reached it (0 for the main file) */
};

struct precheck {
	struct dtl_kernels *k;
	struct dtl_arena *scratch;
	const char *main;
	const char *const *dirs; /* -I order */
	size_t n_dirs;
	const struct CXUnsavedFile *unsaved;
	unsigned n_unsaved;
	struct dtl_strmap seen;
	struct dtl_vec queue; /* struct pre_file */
	size_t bytes;
	struct dtl_error *error;
};

static const struct CXUnsavedFile *pre_unsaved(struct precheck *pc, const char *norm)
{
	for (unsigned u = 0; u < pc->n_unsaved; u++) {
		if (dtl_kernels_normalize(pc->k, pc->unsaved[u].Filename) == norm)
			return &pc->unsaved[u];
	}
	return NULL;
}

/* The contents of a file (malloc()ed in *ret_owned when read from disk); NULL when not read. */
static const char *pre_read(struct precheck *pc, const char *path, size_t *ret_size,
                            char **ret_owned)
{
	const struct CXUnsavedFile *u = pc->n_unsaved ? pre_unsaved(pc, path) : NULL;
	struct stat st;
	size_t size = 0;
	char *buf;
	int fd;

	*ret_owned = NULL;
	if (u) {
		*ret_size = u->Length;
		return u->Contents;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size >
	        k_min(pc->k->options.max_file_size, KPRE_MAX_BYTES - pc->bytes) ||
	    !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return NULL;
	}
	while (size < (size_t)st.st_size) {
		ssize_t m = read(fd, buf + size, (size_t)st.st_size - size);
		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0)
			break;
		size += (size_t)m;
	}
	close(fd);
	pc->bytes += size;
	*ret_size = size;
	*ret_owned = buf;
	return buf;
}

/* The first of dir/name for dir in dirs that exists (or is an in-memory source), malloc()ed. */
static char *pre_resolve(struct precheck *pc, const char *name, const char *own_dir, bool quoted)
{
	for (size_t d = 0; d <= pc->n_dirs; d++) {
		const char *dir = d == 0 ? own_dir : pc->dirs[d - 1];
		char *cand;
		struct stat st;
		if (name[0] == '/' && d > 0)
			break;
		if (d == 0 && !quoted && name[0] != '/')
			continue;
		if (name[0] == '/')
			cand = strdup(name);
		else if (asprintf(&cand, "%s/%s", dir, name) < 0)
			cand = NULL;
		if (!cand)
			return NULL;
		if (stat(cand, &st) == 0 ||
		    (pc->n_unsaved && pre_unsaved(pc, dtl_kernels_normalize(pc->k, cand))))
			return cand;
		free(cand);
	}
	return NULL;
}

/* One line: 0, or -EACCES with pc->error filled, or -ENOMEM. */
static int pre_line(struct precheck *pc, const struct pre_file *from, const char *own_dir,
                    const char *line, size_t len, uint32_t lineno)
{
	size_t i = 0, hash, start;
	const char *why;
	char close;
	int r = 0;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len || line[i] != '#')
		return 0;
	hash = i++;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (len - i >= 12 && memcmp(line + i, "include_next", 12) == 0)
		i += 12;
	else if (len - i >= 7 && memcmp(line + i, "include", 7) == 0)
		i += 7;
	else if (len - i >= 6 && memcmp(line + i, "import", 6) == 0)
		i += 6;
	else
		return 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len || (line[i] != '"' && line[i] != '<'))
		return 0; /* a macro: inclusions() sees what it named */
	close = line[i] == '"' ? '"' : '>';
	start = ++i;
	while (i < len && line[i] != close)
		i++;
	if (i == len || i == start || i - start > 4096 || memchr(line + start, '\0', i - start))
		return 0;
	char *name = strndup(line + start, i - start);
	if (!name)
		return -ENOMEM;
	char *cand = pre_resolve(pc, name, own_dir, close == '"');
	free(name);
	if (!cand)
		return 0; /* not found: nothing is read */
	struct pre_file next = {.line = from->line, .column = from->column};
	if (!from->line) {
		next.line = lineno;
		next.column = (uint32_t)hash + 1;
	}
	if ((why = dtl_kernels_include_refused(pc->k, cand, pc->unsaved, pc->n_unsaved))) {
		struct dtl_loc loc = {.file = pc->main, .line = next.line, .column = next.column};
		if (from->line)
			r = dtl_error_set(pc->error, loc, -EACCES,
			                  "#include of '%s' (in '%s') refused: %s", cand,
			                  from->path, why);
		else
			r = dtl_error_set(pc->error, loc, -EACCES, "#include of '%s' refused: %s",
			                  cand, why);
	} else if (!(next.path = dtl_kernels_normalize(pc->k, cand))) {
		r = -ENOMEM;
	} else if (pc->queue.count < KPRE_MAX_FILES &&
	           dtl_strmap_get(&pc->seen, next.path, strlen(next.path)) < 0) {
		struct pre_file *slot = dtl_vec_push(&pc->queue, pc->scratch, sizeof(*slot));
		if (!slot || dtl_strmap_put(&pc->seen, next.path, strlen(next.path), 0) < 0)
			r = -ENOMEM;
		else
			*slot = next;
	}
	free(cand);
	return r;
}

static int precheck(struct dtl_kernels *k, struct dtl_arena *scratch, const char *path,
                    const struct CXUnsavedFile *unsaved, unsigned n_unsaved,
                    const char *const *include_dirs, size_t n_include_dirs, struct dtl_error *error)
{
	struct precheck pc = {.k = k,
	                      .scratch = scratch,
	                      .main = path,
	                      .unsaved = unsaved,
	                      .n_unsaved = n_unsaved,
	                      .error = error};
	const char **dirs = dtl_arena_calloc(scratch, n_include_dirs + 1, sizeof(*dirs));
	const char *norm = dtl_kernels_normalize(k, path), *why;
	struct pre_file *first;
	int r = 0;

	if (!dirs || !norm || !(dirs[0] = dir_of(scratch, path)))
		return -ENOMEM;
	for (size_t i = 0; i < n_include_dirs; i++)
		dirs[i + 1] = include_dirs[i];
	pc.dirs = dirs;
	pc.n_dirs = n_include_dirs + 1;
	/* the file itself: a symlink out of the tree is not in it */
	if ((why = dtl_kernels_include_refused(k, path, unsaved, n_unsaved)))
		return dtl_error_set(error, (struct dtl_loc){.file = path, .line = 1, .column = 1},
		                     -EACCES, "refused: %s", why);
	dtl_strmap_init(&pc.seen, scratch);
	if (!(first = dtl_vec_push(&pc.queue, scratch, sizeof(*first))) ||
	    dtl_strmap_put(&pc.seen, norm, strlen(norm), 0) < 0)
		return -ENOMEM;
	first->path = norm;
	for (size_t q = 0; q < pc.queue.count && r == 0; q++) {
		struct pre_file f = ((struct pre_file *)pc.queue.items)[q];
		char *owned, *own_dir = dir_of(scratch, f.path);
		size_t size = 0;
		const char *text = own_dir ? pre_read(&pc, f.path, &size, &owned) : NULL;
		if (!own_dir)
			return -ENOMEM;
		uint32_t lineno = 1;
		for (size_t off = 0; text && off < size && r == 0; lineno++) {
			const char *nl = memchr(text + off, '\n', size - off);
			size_t end = nl ? (size_t)(nl - text) : size;
			r = pre_line(&pc, &f, own_dir, text + off, end - off, lineno);
			off = end + 1;
		}
		free(owned);
	}
	return r;
}

int dtl_kernels_file_parse(struct dtl_kernels *k, struct dtl_arena *scratch, const char *path,
                           struct CXUnsavedFile *unsaved, unsigned n_unsaved,
                           const char *const *include_dirs, size_t n_include_dirs, struct kfile *kf,
                           uint64_t *ret_parse_ns, struct dtl_error *error)
{
	const struct dtl_libclang *lc = k->scanner->lc;
	struct dtl_loc loc = {.file = path};
	const char **args = NULL;
	int nargs = 0, r;
	/* docs/kernels.md §2: KeepGoing and Incomplete because a hermetic parse misses every system
	 * header. */
	unsigned opts = CXTranslationUnit_DetailedPreprocessingRecord |
	                CXTranslationUnit_KeepGoing | CXTranslationUnit_Incomplete;
	enum CXErrorCode ec;
	uint64_t t0;

	memset(kf, 0, sizeof(*kf));
	kf->lc = lc;
	kf->path = dtl_kernels_normalize(k, path);
	kf->backend = kf->path ? dtl_kernels_backend_of_path(k, kf->path) : NULL;
	if (!kf->path ||
	    (r = build_args(scratch, path, include_dirs, n_include_dirs, &args, &nargs)) < 0)
		return dtl_error_set(error, loc, -ENOMEM, "out of memory");
	if ((r = precheck(k, scratch, path, unsaved, n_unsaved, include_dirs, n_include_dirs,
	                  error)) < 0)
		return r == -ENOMEM ? dtl_error_set(error, loc, r, "out of memory") : r;
	t0 = now_ns();
	ec = lc->parseTranslationUnit2(k->scanner->index, path, args, nargs, unsaved, n_unsaved,
	                               opts, &kf->tu);
	*ret_parse_ns = now_ns() - t0;
	if (ec == CXError_Crashed)
		return dtl_error_set(
		    error, loc, -EIO,
		    "libclang crashed on this file (or hit a limit of its sandbox)");
	if (ec != CXError_Success || !kf->tu)
		return dtl_error_set(error, loc, -EIO,
		                     "libclang could not parse the file (error %d)", (int)ec);
	kf->file = lc->getFile(kf->tu, path);
	kf->contents = kf->file ? lc->getFileContents(kf->tu, kf->file, &kf->size) : NULL;
	if (!kf->contents) {
		dtl_kernels_file_dispose(kf);
		return dtl_error_set(error, loc, -EIO, "libclang did not load the file");
	}
	kf->diagnostics = lc->getNumDiagnostics(kf->tu);
	if ((r = inclusions(k, scratch, kf, unsaved, n_unsaved, error)) < 0) {
		dtl_kernels_file_dispose(kf);
		return r;
	}
	if ((r = lex(kf, scratch)) < 0 || (r = directives(k, scratch, kf)) < 0) {
		dtl_kernels_file_dispose(kf);
		if (r == -EFBIG)
			return dtl_error_set(error, loc, r, "more than %u tokens", KMAX_TOKENS);
		return dtl_error_set(error, loc, r, "out of memory");
	}
	mark_skipped(kf);
	return 0;
}

void dtl_kernels_file_dispose(struct kfile *kf)
{
	if (kf->tu)
		kf->lc->disposeTranslationUnit(kf->tu);
	kf->tu = NULL;
}
