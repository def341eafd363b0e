/* SPDX-License-Identifier: MIT */
/* --scan-kernels and --kernels: the libclang scanner behind the rules' op oracle. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli-scan-kernels.h"

#ifdef DTL_HAVE_KERNELS
#include "dtypelint/kernels/kernels.h"
#include "dtypelint/report/report.h"

/*
 * libclang is loaded (dlopen) by dtl_kernels_init() on the first kernel option, never for a plain
 * lint, and released by dtl_kernels_fini(); the scanner keeps no global state.
 * DTYPELINT_LIBCLANG, when set and not empty, replaces the path chosen at configure time.
 */
struct cli_progress {
	uint64_t last_ns;
	int width; /* of the widest line shown, to wipe it */
};

struct cli_kernels {
	struct dtl_kernels k;
	struct cli_progress progress;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Progress of a scan while standard error is a terminal (issue 22): "scanning kernels: N of M
 * files", rewritten in place with a carriage return at most every 100 ms (and for the last
 * file), then wiped with spaces so that nothing of it stays on the screen or in the output.
 */
static void show_progress(void *data, size_t done, size_t total)
{
	struct cli_progress *p = data;
	uint64_t t = now_ns();
	int n;

	if (done < total && p->last_ns && t - p->last_ns < 100000000u)
		return;
	p->last_ns = t;
	n = fprintf(stderr, "\rscanning kernels: %zu of %zu files", done, total);
	if (n - 1 > p->width)
		p->width = n - 1;
	fflush(stderr);
}

static void clear_progress(struct cli_progress *p)
{
	if (!p->width)
		return;
	fprintf(stderr, "\r%*s\r", p->width, "");
	fflush(stderr);
	p->width = 0;
}

/* dtl_kernels_init() with the libclang DTYPELINT_LIBCLANG names, saying where a path that
 * does not load came from */
static int init_scanner(struct dtl_kernels *k, struct dtl_arena *arena,
                        struct dtl_kernels_options *options, struct dtl_error *error)
{
	struct dtl_loc loc = {.file = "dtypelint"};
	const char *env = getenv("DTYPELINT_LIBCLANG");
	bool from_env = env && *env;
	char why[DTL_ERROR_MESSAGE_MAX];
	int r;

	options->libclang_path = from_env ? env : NULL;
	r = dtl_kernels_init(k, arena, options, error);
	if (r == -ENOENT || r == -ENOSYS) { /* libclang did not load (libclang.c) */
		snprintf(why, sizeof(why), "%s", error->message);
		return dtl_error_set(error, loc, r, "%s (%s)", why,
		                     from_env ? "from DTYPELINT_LIBCLANG"
		                              : "set DTYPELINT_LIBCLANG to libclang's path");
	}
	return r;
}

static const enum dtl_op_verdict verdicts[] = {
    [DTL_KERNELS_UNKNOWN] = DTL_OP_UNKNOWN,     [DTL_KERNELS_ACCEPTS] = DTL_OP_ACCEPTS,
    [DTL_KERNELS_REJECTS] = DTL_OP_REJECTS,     [DTL_KERNELS_MAY_REJECT] = DTL_OP_MAY_REJECT,
    [DTL_KERNELS_UNCHECKED] = DTL_OP_UNCHECKED,
};

static int query(void *data, const char *op, enum dtl_dtype dtype, struct dtl_op_answer *ret)
{
	const struct cli_kernels *ck = data;
	const struct dtl_kernels *k = &ck->k;
	struct dtl_kernels_query q = {.op = op, .dtype = dtype, .backend = "cuda"};
	struct dtl_kernels_answer a;
	struct dtl_error error;
	int r = dtl_kernels_query(k, &q, &a, &error);

	if (r < 0)
		return r;
	memset(ret, 0, sizeof(*ret));
	ret->verdict = verdicts[a.verdict];
	snprintf(ret->message, sizeof(ret->message), "%s", a.message);
	if (a.contract)
		ret->function = a.contract->function;
	if (a.evidence) {
		snprintf(ret->evidence_file, sizeof(ret->evidence_file), "%s", a.evidence->file);
		ret->evidence.file = ret->evidence_file;
		ret->evidence.line = a.evidence->line;
		ret->evidence.column = 1;
		ret->evidence_kind = dtl_kernels_fact_kind_name(a.evidence->kind);
	}
	return 0;
}

/*
 * A file the scanner could not scan (a refused include, a crash or a limit of its sandbox) is
 * an error, never dropped (issue 21): every one but the last is printed here as
 * dtl_cli_error() would, the last is returned for main.c to print with exit status 2.
 */
static int file_errors(const struct dtl_kernels *k, struct dtl_error *error)
{
	const struct dtl_error *errors;
	size_t n = dtl_kernels_file_errors(k, &errors);

	if (!n)
		return 0;
	for (size_t i = 0; i + 1 < n; i++) {
		dtl_report_put_path(stderr, errors[i].loc.file);
		if (errors[i].loc.line)
			fprintf(stderr, ":%u:%u", errors[i].loc.line, errors[i].loc.column);
		fputs(": error: ", stderr);
		dtl_report_put_escaped(stderr, errors[i].message);
		fputc('\n', stderr);
	}
	dtl_error_copy(error, &errors[n - 1]);
	return -EIO;
}

int dtl_cli_kernels_scan(const char *const *dirs, size_t n, bool progress, int budget_s,
                         struct dtl_arena *arena, struct dtl_op_oracle *ret_oracle,
                         void **ret_kernels, struct dtl_error *error)
{
	struct cli_kernels *ck = dtl_arena_alloc(arena, sizeof(*ck));
	struct dtl_kernels_options options;
	int r;

	if (!ck)
		return -ENOMEM;
	dtl_kernels_options_default(&options);
	if (budget_s >= 0)
		options.budget_s = (unsigned)budget_s;
	ck->progress = (struct cli_progress){0};
	if (progress) {
		options.progress = show_progress;
		options.progress_data = &ck->progress;
	}
	if ((r = init_scanner(&ck->k, arena, &options, error)) < 0)
		return r;
	r = dtl_kernels_scan_dirs(&ck->k, dirs, n, error);
	clear_progress(&ck->progress);
	if (r == 0)
		r = file_errors(&ck->k, error);
	if (r < 0) {
		dtl_cli_kernels_fini(ck);
		return r;
	}
	ret_oracle->query = query;
	ret_oracle->data = ck;
	ret_oracle->source = "--kernels";
	*ret_kernels = ck;
	return 0;
}

void dtl_cli_kernels_fini(void *kernels)
{
	struct cli_kernels *ck = kernels;

	if (!ck)
		return;
	dtl_kernels_fini(&ck->k);
}

int dtl_cli_kernels_print(FILE *out, void *kernels, bool json, struct dtl_error *error)
{
	const struct cli_kernels *ck = kernels;

	return json ? dtl_kernels_write_json(out, &ck->k, error)
	            : dtl_kernels_write_text(out, &ck->k, error);
}

#else

#include "dtl-config.h"

int dtl_cli_kernels_scan(const char *const *dirs, size_t n, bool progress, int budget_s,
                         struct dtl_arena *arena, struct dtl_op_oracle *ret_oracle,
                         void **ret_kernels, struct dtl_error *error)
{
	struct dtl_loc loc = {.file = "dtypelint"};
	(void)dirs, (void)n, (void)progress, (void)budget_s, (void)arena, (void)ret_oracle,
	    (void)ret_kernels;
	return dtl_error_set(error, loc, -ENOTSUP,
	                     "the kernel scanner is unavailable: this dtypelint was built without "
	                     "libclang (%s); install llvm-config and libclang (Debian: llvm-14, "
	                     "libclang-14-dev) and rebuild, or set -Dllvm_config",
	                     DTL_KERNELS_MISSING);
}

void dtl_cli_kernels_fini(void *kernels)
{
	(void)kernels;
}

int dtl_cli_kernels_print(FILE *out, void *kernels, bool json, struct dtl_error *error)
{
	(void)out, (void)kernels, (void)json, (void)error;
	return -ENOTSUP;
}

#endif
