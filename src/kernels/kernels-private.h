/* SPDX-License-Identifier: MIT */
/*
 * Shared internals of the kernel scanner. The pipeline (docs/kernels.md §1-§7): parse.c lexes one
 * file hermetically into struct ktok, macros.c harvests and expands the project's function-like
 * macros, extract.c (with fact-rules.c and register.c) turns tokens into facts, functions and
 * registrations, link.c builds per-op contracts over the call graph.
 */
#ifndef DTL_KERNELS_PRIVATE_H
#define DTL_KERNELS_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/kernels/kernels.h"
#include "libclang.h"

#define KNONE UINT32_MAX

/* Limits on what one file may cost (docs/design.md §7 "Robustness"). */
#define KMAX_TOKENS        (8u * 1024u * 1024u)
#define KMAX_EXPAND_DEPTH  8u
#define KMAX_EXPAND_TOKENS (1u << 20)
#define KMAX_FUNC_CONTEXTS 8u
#define KMAX_DEPTH_LIMIT   32u
#define KMAX_GUARD_STACK   64u
#define KMAX_INCLUDE_DIRS  256u
#define KMAX_CALL_ARGS     32u
#define KMAX_WALK_DEPTH    64u

enum ktok_kind {
	KT_IDENT,
	KT_KEYWORD,
	KT_PUNCT,
	KT_LITERAL,
	KT_STRINGIZED, /* '#param' in a macro body: text is the string's contents */
};

enum ktok_flag {
	KTF_DIRECTIVE = 1 << 0,  /* part of a preprocessor directive line */
	KTF_SKIPPED = 1 << 1,    /* in a range the preprocessor skipped */
	KTF_BODY = 1 << 2,       /* comes from a project macro body (not from the use site) */
	KTF_SPACE = 1 << 3,      /* whitespace before it */
	KTF_LINE_START = 1 << 4, /* first token on its line */
	KTF_CHAINED = 1 << 5,    /* the "if" of an "else if" already read with its chain */
	KTF_UNBALANCED = 1 << 6, /* skipped, in a range whose braces do not balance */
};

struct ktok {
	const char *text; /* into the TU's file buffer or the scratch arena; not NUL-terminated */
	uint32_t len;
	uint32_t line;
	uint32_t guard; /* index into struct kfile.guards */
	uint16_t flags;
	uint8_t kind;
};

struct kguard {
	const char *const *names; /* persistent (result arena) */
	size_t n;
};

/* One lexed main file; everything but guards[].names lives in the per-file scratch arena. */
struct kfile {
	const struct dtl_libclang *lc; /* k->scanner->lc */
	const char *path;              /* interned, normalised */
	const char *backend;           /* dtl_kernels_backend_of_path() */
	const char **includes; /* project files the parse reached (persistent, normalised) */
	size_t n_includes;
	CXTranslationUnit tu;
	CXFile file;
	const char *contents;
	size_t size;
	struct ktok *toks;
	size_t n;
	struct kguard *guards; /* guards[0] is the empty set */
	size_t n_guards;
	unsigned diagnostics;
};

struct kparam {
	const char *name;
	bool tensor;
};

struct kcall {
	const char *callee;
	const char **args; /* base variable per argument, NULL when it is not a plain variable */
	uint32_t n_args;
};

struct kfunc {
	const char *name;
	const char *cls; /* class of a method (Cls::name or defined inside class Cls) */
	const char *file;
	uint32_t line;
	struct kparam *params;
	uint32_t n_params;
	const char **tparams; /* template parameter names */
	uint32_t n_tparams;
	const char **refs; /* identifiers referenced in the body (deduplicated) */
	uint32_t n_refs;
	struct kcall *calls;
	uint32_t n_calls;
	bool has_dispatch; /* holds a dispatch, switch or branch fact */
};

struct kfact {
	struct dtl_kernels_evidence ev; /* call_depth 0, param NULL */
	uint32_t func;                  /* index into funcs, KNONE at file scope */
};

struct kreg {
	const char *op, *ns, *dispatch_key, *schema, *file;
	const char *function; /* as written */
	const char *fname;    /* last component */
	const char *cls;      /* Cls of &Cls::fn */
	uint32_t line;
	enum dtl_kernels_binding binding;
	uint64_t *targs; /* dtype set per template argument (0 when not a dtype) */
	uint32_t n_targs;
	uint32_t lambda_func; /* a lambda bound in place, else KNONE */
};

/* What a scanned file includes and declares: a name resolves across files only along these
 * (link.c). */
struct kfinfo {
	const char *path;
	const char **includes;
	uint32_t n_includes;
	const char **decls; /* declared function names, sorted by address (interned) */
	uint32_t n_decls;
};

/* A file-scope macro invocation REGISTER_X(a_impl, CUDA, a_cuda): a_impl reaches a_cuda
 * (docs/kernels.md §7). */
struct klink {
	const char *from, *to, *file;
};

struct dtl_kernels_scanner {
	/* every clang_* call goes through it (libclang.h): loaded by dtl_kernels_init(), closed by
	 * dtl_kernels_fini() */
	struct dtl_libclang *lc;
	CXIndex index;
	struct dtl_strmap strings; /* interned strings: key and value both in the arena */
	struct dtl_vec strings_list;
	struct dtl_vec funcs;  /* struct kfunc */
	struct dtl_vec facts;  /* struct kfact */
	struct dtl_vec regs;   /* struct kreg */
	struct dtl_vec links;  /* struct klink */
	struct dtl_vec files;  /* struct dtl_kernels_file */
	struct dtl_vec finfos; /* struct kfinfo */
	struct dtl_vec errors; /* struct dtl_error: files that failed (sandbox.c) */
	/* realpath()s a parse may include from (roots.c); set by each scan */
	const char **roots;
	size_t n_roots;
	/* options.progress during dtl_kernels_scan_dirs() (walk.c); total 0: not reported */
	size_t progress_done, progress_total;
	/* CLOCK_MONOTONIC ms when options.budget_s runs out during dtl_kernels_scan_dirs();
	 * 0: no budget (sandbox.c) */
	uint64_t budget_end_ms;
	bool linked;
};

/* set.c */
const char *dtl_kernels_intern(struct dtl_kernels *k, const char *text, size_t len);
/* "cuda", "cpu", "npu", ... from a path's extension, directories or file name; NULL */
const char *dtl_kernels_backend_of_path(struct dtl_kernels *k, const char *path);
/* "a/./b/../c" -> "a/c", interned */
const char *dtl_kernels_normalize(struct dtl_kernels *k, const char *path);

/* dtl_kernels_intern() of a NUL-terminated text: the same string in k's arena. */
static inline const char *dtl_kernels_intern_z(struct dtl_kernels *k, const char *text)
{
	return dtl_kernels_intern(k, text, strlen(text));
}

/* parse.c: lex path (in-memory files in unsaved) hermetically. On success kf->tu must be
 * released with dtl_kernels_file_dispose(). */
int dtl_kernels_file_parse(struct dtl_kernels *k, struct dtl_arena *scratch, const char *path,
                           struct CXUnsavedFile *unsaved, unsigned n_unsaved,
                           const char *const *include_dirs, size_t n_include_dirs, struct kfile *kf,
                           uint64_t *ret_parse_ns, struct dtl_error *error);
void dtl_kernels_file_dispose(struct kfile *kf);
/* scan-local.c: scans one file end to end (parse, extract, record stats) in this process */
int dtl_kernels_scan_local(struct dtl_kernels *k, const char *path, struct CXUnsavedFile *unsaved,
                           unsigned n_unsaved, const char *const *include_dirs,
                           size_t n_include_dirs, struct dtl_error *error);
/* One file to scan, with its include path. */
struct kjob {
	const char *path;
	const char *const *include_dirs;
	size_t n_include_dirs;
};

/* Files per child process (sandbox.c): a fork per file made a scan 4 times slower. */
#define KSANDBOX_BATCH 32u

/* sandbox.c: dtl_kernels_scan_local() on each job in child processes with limits, KSANDBOX_BATCH
 * files per child; a file that fails is counted and recorded in scanner->errors. Returns -ENOMEM,
 * or the last failure (error filled), or 0. */
/* sandbox.c: starts options.budget_s for the scan that follows (on true) or ends it. */
void dtl_kernels_scan_budget(struct dtl_kernels *k, bool on);
int dtl_kernels_scan_batch(struct dtl_kernels *k, const struct kjob *jobs, size_t n,
                           struct CXUnsavedFile *unsaved, unsigned n_unsaved,
                           struct dtl_error *error);
/* dtl_kernels_scan_batch() on one file */
int dtl_kernels_scan_one(struct dtl_kernels *k, const char *path, struct CXUnsavedFile *unsaved,
                         unsigned n_unsaved, const char *const *include_dirs, size_t n_include_dirs,
                         struct dtl_error *error);

/* roots.c: why the file name may not be included (NULL when it may): a device or kernel
 * file, or outside scanner->roots and the in-memory sources */
const char *dtl_kernels_include_refused(struct dtl_kernels *k, const char *name,
                                        const struct CXUnsavedFile *unsaved, unsigned n_unsaved);
/* roots.c: realpath()s of dirs (those that resolve) become scanner->roots */
int dtl_kernels_set_roots(struct dtl_kernels *k, const char *const *dirs, size_t n_dirs,
                          const char *const *more, size_t n_more);

/* walk.c: the include path of one file, project dirs nearest first, then extra */
int dtl_kernels_include_order(struct dtl_arena *scratch, const char *path, const char *const *dirs,
                              size_t n_dirs, const char *const *extra, size_t n_extra,
                              const char ***ret, size_t *ret_n);

/* scan-local.c: .cpp .cc .cxx .cu .cuh .h .hpp */
bool dtl_kernels_scan_wanted(const char *path);

/* vocab.c: the dtype vocabulary */
uint64_t dtl_kernels_vocab_constant(const char *text, size_t len); /* kHalf, Half, kFloat32 ... */
uint64_t dtl_kernels_vocab_cpp_type(const char *text,
                                    size_t len); /* float, at::Half's "Half" ... */
uint64_t dtl_kernels_vocab_dispatch_base(const char *text,
                                         size_t len);              /* FLOATING_TYPES_AND_HALF */
uint64_t dtl_kernels_vocab_v2_group(const char *text, size_t len); /* AT_FLOATING_TYPES */
const char *dtl_kernels_vocab_typemeta_name(unsigned bit);         /* "c10::Half" */
uint64_t dtl_kernels_vocab_floating(void);
uint64_t dtl_kernels_vocab_complex(void);

/* token helpers */
static inline bool ktok_is(const struct ktok *t, const char *s)
{
	size_t n = strlen(s);
	return t->len == n && memcmp(t->text, s, n) == 0;
}

/* t is the punctuator s ("::", "(") */
static inline bool ktok_punct(const struct ktok *t, const char *s)
{
	return t->kind == KT_PUNCT && ktok_is(t, s);
}

/* t is an identifier */
static inline bool ktok_name(const struct ktok *t)
{
	return t->kind == KT_IDENT;
}

/* t's text starts with s ("AT_DISPATCH_") */
static inline bool ktok_prefix(const struct ktok *t, const char *s)
{
	size_t n = strlen(s);
	return t->len >= n && memcmp(t->text, s, n) == 0;
}

/* Index of the bracket closing toks[open] ("(" "[" "{"), or end when unbalanced. */
size_t dtl_kernels_match(const struct ktok *toks, size_t open, size_t end);
/* Splits (lo, hi) at top-level commas into at most max ranges [starts[i], ends[i]). */
size_t dtl_kernels_split_args(const struct ktok *toks, size_t lo, size_t hi, size_t *starts,
                              size_t *ends, size_t max);
/* Joins toks[lo, hi) with single spaces where the source had whitespace. */
char *dtl_kernels_join(struct dtl_arena *arena, const struct ktok *toks, size_t lo, size_t hi);

#endif
