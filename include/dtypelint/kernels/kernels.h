/* SPDX-License-Identifier: MIT */
/*
 * Kernel dtype contracts: which dtypes the custom ops of a C++/CUDA torch extension accept, read
 * from its sources with libclang used as lexer and preprocessor (never as a semantic parser).
 *
 * Usage: dtl_kernels_init(), one or more dtl_kernels_scan_dirs() / dtl_kernels_scan_sources()
 * (each links the contracts when it returns), then dtl_kernels_find(), dtl_kernels_query() and
 * the writers; dtl_kernels_fini() at the end. Every result (contracts, strings, evidence) lives in
 * the caller's arena and stays valid after dtl_kernels_fini() until dtl_arena_fini().
 * Library code never prints: failures return a negative errno and fill a struct dtl_error.
 */
#ifndef DTYPELINT_KERNELS_H
#define DTYPELINT_KERNELS_H
#ifndef DTL_SEES_KERNELS
#error                                                                                             \
    "dtypelint/kernels/kernels.h is in the kernels layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/core/dtype.h"

/*
 * A set of dtypes is a uint64_t: bit d for each enum dtl_dtype d, plus the DTL_KERNELS_DT_* bits
 * for the scalar types that dtypelint's dtype algebra does not model (complex, quantized, ...).
 */
#define DTL_KERNELS_DT(dtype)      (UINT64_C(1) << (unsigned)(dtype))
#define DTL_KERNELS_DT_FIRST_EXTRA 32u
#define DTL_KERNELS_DT_COMPLEX32   (UINT64_C(1) << 32)
#define DTL_KERNELS_DT_COMPLEX64   (UINT64_C(1) << 33)
#define DTL_KERNELS_DT_COMPLEX128  (UINT64_C(1) << 34)
#define DTL_KERNELS_DT_QINT8       (UINT64_C(1) << 35)
#define DTL_KERNELS_DT_QUINT8      (UINT64_C(1) << 36)
#define DTL_KERNELS_DT_QINT32      (UINT64_C(1) << 37)
#define DTL_KERNELS_DT_QUINT4X2    (UINT64_C(1) << 38)
#define DTL_KERNELS_DT_QUINT2X4    (UINT64_C(1) << 39)
#define DTL_KERNELS_DT_F8_E5M2FNUZ (UINT64_C(1) << 40)
#define DTL_KERNELS_DT_F8_E4M3FNUZ (UINT64_C(1) << 41)
#define DTL_KERNELS_DT_F8_E8M0FNU  (UINT64_C(1) << 42)
#define DTL_KERNELS_DT_UINT16      (UINT64_C(1) << 43)
#define DTL_KERNELS_DT_UINT32      (UINT64_C(1) << 44)
#define DTL_KERNELS_DT_UINT64      (UINT64_C(1) << 45)
#define DTL_KERNELS_DT_BITS        (UINT64_C(1) << 46)
#define DTL_KERNELS_DT_LAST_EXTRA  46u

/* Every dtype the scanner knows (all enum dtl_dtype values but NONE, and the extras). */
uint64_t dtl_kernels_all_dtypes(void);
/* "float16", "complex64"; NULL for a bit that names no dtype */
const char *dtl_kernels_dtype_name(unsigned bit);
/* c10's ScalarType name as torch prints it in errors: "Half", "ComplexFloat" */
const char *dtl_kernels_scalar_type_name(unsigned bit);
/* Writes "float32, float16" (bit order) into buf, always NUL-terminated when size > 0; returns
 * the length the full text needs, like snprintf. */
size_t dtl_kernels_format_dtypes(uint64_t set, char *buf, size_t size);

enum dtl_kernels_fact_kind {
	DTL_KERNELS_FACT_DISPATCH, /* AT_DISPATCH_* or a project wrapper macro that switches */
	DTL_KERNELS_FACT_ASSERT,   /* TORCH_CHECK / AT_ASSERTM / if (...) throw on a dtype */
	DTL_KERNELS_FACT_BRANCH,   /* if (x.dtype() == ...) chain */
	DTL_KERNELS_FACT_SWITCH,   /* hand-written switch (x.scalar_type()) */
	DTL_KERNELS_FACT_ACCESSOR, /* data_ptr<T>, packed_accessor32<T, ...> */
};

enum dtl_kernels_binding {
	DTL_KERNELS_BINDING_PYBIND11,           /* m.def("name", &fn) */
	DTL_KERNELS_BINDING_TORCH_LIBRARY,      /* TORCH_LIBRARY(ns, m) { m.def / m.impl } */
	DTL_KERNELS_BINDING_TORCH_LIBRARY_IMPL, /* TORCH_LIBRARY_IMPL(ns, KEY, m) { m.impl } */
	DTL_KERNELS_BINDING_TORCH_LIBRARY_FRAGMENT,
	DTL_KERNELS_BINDING_REGISTER_OPERATORS, /* torch::RegisterOperators().op("ns::name", &fn) */
};

const char *dtl_kernels_fact_kind_name(enum dtl_kernels_fact_kind kind); /* "dispatch" */
const char *dtl_kernels_binding_name(enum dtl_kernels_binding binding);  /* "pybind11" */

/* One dtype fact found in the sources, as seen from an op (call_depth, param). */
struct dtl_kernels_evidence {
	enum dtl_kernels_fact_kind kind;
	const char *file;
	uint32_t line;
	const char *function; /* enclosing function, NULL at file scope */
	const char *backend;  /* "cuda", "cpu", "npu", ... from the file's name or directory */
	unsigned call_depth;  /* 0 in the registered function, n calls below it */
	const char *param;    /* the op parameter it constrains, NULL when not mapped */
	const char *subject; /* source text of the constrained tensor ("q", "tensor_lists[0][0]") */
	const char *subject_base; /* its base variable after local aliases ("q") */
	const char *same_as;      /* x.dtype() == y.dtype(): y's base variable; types is then 0 */
	const char *same_as_param;
	uint64_t types; /* dtypes that pass */
	uint64_t
	    guarded_types; /* dtypes that pass only when a preprocessor-skipped branch is built */
	uint64_t
	    when; /* the fact only runs for dtypes in this set (it sits in an if/case on dtype) */
	const char *name;       /* AT_DISPATCH's NAME argument (string contents) */
	const char *macro;      /* dispatch or wrapper macro the fact comes from */
	const char *macro_file; /* where that macro is defined (NULL for AT_DISPATCH_*) */
	uint32_t macro_line;
	const char *template_param; /* data_ptr<T> with T a template parameter of the function */
	/* The runtime error text, "{ScalarType}" and "{dtype}" standing for the fed dtype as
	 * c10::ScalarType and caffe2::TypeMeta print it; NULL when nothing is raised. */
	const char *message;
	const char *const *guards; /* enclosing #if conditions ("BF16_AVAILABLE", "!USE_ROCM") */
	size_t n_guards;
	bool skipped;     /* in a branch the preprocessor skipped in this hermetic parse */
	bool conditional; /* the condition mixes other terms (ternary, || with non-dtype tests) */
	bool negated;     /* written as != (types is then the complement of what was named) */
	bool throws;      /* a dtype outside types raises; false: it falls through silently */
};

struct dtl_kernels_input {
	const char *name;
	bool tensor;      /* declared as a tensor (Tensor, TensorList, optional<Tensor>, ...) */
	bool known;       /* accepts holds facts */
	uint64_t accepts; /* intersection of the mapped, unguarded facts on it */
	enum dtl_kernels_fact_kind basis; /* kind of the shallowest such fact */
	unsigned call_depth;              /* and its depth */
	const char *same_dtype_as;        /* another parameter it must match */
};

struct dtl_kernels_contract {
	const char *op; /* registered name without namespace ("fwd", "foo.out") */
	const char *ns; /* TORCH_LIBRARY namespace or the "ns" of "ns::op", or NULL */
	enum dtl_kernels_binding binding;
	const char *dispatch_key; /* TORCH_LIBRARY_IMPL key ("CUDA"), or NULL */
	const char *backend;      /* "cuda" or "cpu" when the key or file tells, else NULL */
	const char *function;     /* the bound function as written ("ns::fn", "<lambda>") */
	const char *file;         /* registration site */
	uint32_t line;
	const char *definition_file; /* the function's definition, NULL when not found */
	uint32_t definition_line;
	const char *schema;      /* TORCH_LIBRARY schema string when given */
	uint64_t template_types; /* &fn<__half>: the dtypes bound as template arguments */
	uint64_t dispatch_types; /* unions over the evidence of each kind */
	uint64_t asserted_types;
	uint64_t accessor_types;
	uint64_t branch_types;
	struct dtl_kernels_input *inputs;
	size_t n_inputs;
	struct dtl_kernels_evidence *evidence; /* sorted by call_depth, file, line */
	size_t n_evidence;
};

struct dtl_kernels_options {
	const char *const *include_dirs; /* extra project include dirs (-I) */
	size_t n_include_dirs;
	unsigned max_depth;   /* call-graph hops followed from the bound function (default 6) */
	size_t max_file_size; /* larger files are skipped (default 16 MiB) */
	size_t max_files;     /* per dtl_kernels_scan_dirs() call (default 100000) */
	/* Wall-clock seconds for the files of a dtl_kernels_scan_dirs() call, from the first
	 * parse (default 300; 0: none): the file being parsed when they run out is stopped, and
	 * each file not reached fails by name (dtl_kernels_file_errors()), never dropped. */
	unsigned budget_s;
	/* Called in this process after each file a dtl_kernels_scan_dirs() call scans, with the
	 * files done (1 to total) and the files it found; NULL: none. The library prints nothing:
	 * the caller shows it. */
	void (*progress)(void *data, size_t done, size_t total);
	void *progress_data;
	/* The libclang shared library dtl_kernels_init() loads (dlopen); NULL: the one found when
	 * dtypelint was configured. */
	const char *libclang_path;
};

struct dtl_kernels_stats {
	size_t files, files_failed, files_skipped;
	size_t tokens;
	size_t functions;
	size_t at_dispatch_sites;      /* AT_DISPATCH_* uses outside #define bodies */
	size_t at_dispatch_unresolved; /* of which the name grammar gave no dtype set */
	size_t wrapper_sites;          /* project macro uses that produced a dispatch */
	size_t asserts, branches, switches, accessors;
	size_t registrations;
};

/* One scanned file, for benchmarks and "parse health"; times are wall clock. */
struct dtl_kernels_file {
	const char *path;
	uint64_t parse_ns; /* clang_parseTranslationUnit2 */
	uint64_t total_ns; /* parse + tokens + facts */
	size_t tokens;
	unsigned diagnostics; /* expected to be many in hermetic mode; never an error */
	bool failed;
};

/* An in-memory file (unit tests): every source is visible to #include by its path. */
struct dtl_kernels_source {
	const char *path;
	const char *text;
	size_t length;
};

struct dtl_kernels_scanner;

struct dtl_kernels {
	struct dtl_arena *arena; /* borrowed: holds every result */
	struct dtl_kernels_options options;
	struct dtl_kernels_contract *contracts; /* sorted by op, file, line */
	size_t n_contracts;
	struct dtl_kernels_file *files;
	size_t n_files;
	struct dtl_kernels_stats stats;
	struct dtl_kernels_scanner *scanner; /* private */
};

/* Fills options with the defaults (docs/kernels.md: a walk of 6 hops, 16 MiB files, 100000
 * files, 300 s) and nothing else set: the caller then changes what it needs. */
void dtl_kernels_options_default(struct dtl_kernels_options *options);
/* options may be NULL (defaults); its include_dirs must outlive k. Clears CPATH,
 * C_INCLUDE_PATH, CPLUS_INCLUDE_PATH and OBJC_INCLUDE_PATH in this process: libclang reads
 * them even with -nostdinc (docs/kernels.md §2). */
int dtl_kernels_init(struct dtl_kernels *k, struct dtl_arena *arena,
                     const struct dtl_kernels_options *options, struct dtl_error *error);
/* Releases libclang; accepts NULL and a zeroed struct. Results stay in the arena. */
void dtl_kernels_fini(struct dtl_kernels *k);

/* The files the scans so far could not scan, one error each ("file:line:col: error"): a
 * refused include, a crash, a limit of the sandbox, a parse that failed (sandbox.c). The scans
 * count them in stats.files_failed and do not fail; the CLI reports them. */
size_t dtl_kernels_file_errors(const struct dtl_kernels *k, const struct dtl_error **ret);

/* Scans each directory recursively (.cpp .cc .cxx .cu .cuh .h .hpp), then links. A file that
 * libclang cannot parse counts in stats.files_failed and does not fail the scan. */
int dtl_kernels_scan_dirs(struct dtl_kernels *k, const char *const *dirs, size_t n_dirs,
                          struct dtl_error *error);
/* Scans in-memory sources (each one with a scannable extension is a main file), then links. */
int dtl_kernels_scan_sources(struct dtl_kernels *k, const struct dtl_kernels_source *sources,
                             size_t n_sources, struct dtl_error *error);
/* Scans one file on disk without linking; include dirs: its own dir and options.include_dirs. */
int dtl_kernels_scan_file(struct dtl_kernels *k, const char *path, struct dtl_error *error);
/* Builds the contracts from everything scanned so far (the scans above call it). */
int dtl_kernels_link(struct dtl_kernels *k, struct dtl_error *error);

/* Contracts registered under op: "name", "ns::name", "ns.name" or "torch.ops.ns.name". Returns
 * how many (adjacent in k->contracts) and sets *ret_first, or 0. */
size_t dtl_kernels_find(const struct dtl_kernels *k, const char *op,
                        const struct dtl_kernels_contract **ret_first);

enum dtl_kernels_verdict {
	DTL_KERNELS_UNKNOWN,    /* no dtype fact within max_depth */
	DTL_KERNELS_ACCEPTS,    /* every fact lets the dtype pass */
	DTL_KERNELS_REJECTS,    /* a mapped, unguarded, unconditional fact raises */
	DTL_KERNELS_MAY_REJECT, /* only guarded, skipped, conditional or unmapped facts raise */
	DTL_KERNELS_UNCHECKED,  /* the dtype is not handled but nothing raises (silent) */
};
/* The verdict's name in the outputs ("accepts", "may-reject"...): static storage. */
const char *dtl_kernels_verdict_name(enum dtl_kernels_verdict verdict);

struct dtl_kernels_query {
	const char *op;
	const char *param;    /* one parameter, or NULL for all tensor inputs */
	enum dtl_dtype dtype; /* the dtype fed to them */
	/* "cuda" / "cpu": only impls and facts of that backend (facts of files without one
	 * count for all); NULL: every impl and fact, the worst verdict wins */
	const char *backend;
};

#define DTL_KERNELS_MESSAGE_MAX 1024

struct dtl_kernels_answer {
	enum dtl_kernels_verdict verdict;
	const struct dtl_kernels_contract *contract;
	const struct dtl_kernels_evidence *evidence; /* the deciding fact, or NULL */
	/* The error torch raises ("\"foo_cuda\" not implemented for 'BFloat16'"), or for
	 * UNCHECKED a sentence saying why nothing is raised; "" otherwise. */
	char message[DTL_KERNELS_MESSAGE_MAX];
};

/* 0 and *ret filled; -ENOENT when no contract has that op; -EINVAL on a bad query. */
int dtl_kernels_query(const struct dtl_kernels *k, const struct dtl_kernels_query *query,
                      struct dtl_kernels_answer *ret, struct dtl_error *error);

/* {"version":1,"tool":"dtypelint","contracts":[...]}: deterministic, one object per contract. */
int dtl_kernels_write_json(FILE *out, const struct dtl_kernels *k, struct dtl_error *error);
/* One line per contract: "file:line: op 'name' -> function: dispatch [...] ..." */
int dtl_kernels_write_text(FILE *out, const struct dtl_kernels *k, struct dtl_error *error);

#endif
