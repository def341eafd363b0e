/* SPDX-License-Identifier: MIT */
/* --scan-kernels and --kernels: the libclang scanner behind the rules' op oracle. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli-kernels.h"

#ifdef DTL_HAVE_KERNELS
#include "dtypelint/kernels.h"

static const enum dtl_op_verdict verdicts[] = {
	[DTL_KERNEL_UNKNOWN] = DTL_OP_UNKNOWN,	   [DTL_KERNEL_ACCEPTS] = DTL_OP_ACCEPTS,
	[DTL_KERNEL_REJECTS] = DTL_OP_REJECTS,	   [DTL_KERNEL_MAY_REJECT] = DTL_OP_MAY_REJECT,
	[DTL_KERNEL_UNCHECKED] = DTL_OP_UNCHECKED,
};

static int query(void *data, const char *op, enum dtl_dtype dtype, struct dtl_op_answer *ret)
{
	const struct dtl_kernels *k = data;
	struct dtl_kernel_query q = {.op = op, .dtype = dtype, .backend = "cuda"};
	struct dtl_kernel_answer a;
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

int dtl_cli_kernels_scan(const char *const *dirs, size_t n, struct dtl_arena *arena,
			 struct dtl_op_oracle *ret_oracle, void **ret_kernels, struct dtl_error *error)
{
	struct dtl_kernels *k = dtl_arena_alloc(arena, sizeof(*k));
	struct dtl_kernels_options options;
	int r;

	if (!k)
		return -ENOMEM;
	dtl_kernels_options_default(&options);
	if ((r = dtl_kernels_init(k, arena, &options, error)) < 0)
		return r;
	r = dtl_kernels_scan_dirs(k, dirs, n, error);
	if (r < 0) {
		dtl_kernels_fini(k);
		return r;
	}
	ret_oracle->query = query;
	ret_oracle->data = k;
	ret_oracle->source = "--kernels";
	*ret_kernels = k;
	return 0;
}

void dtl_cli_kernels_fini(void *kernels)
{
	if (kernels)
		dtl_kernels_fini(kernels);
}

int dtl_cli_kernels_print(FILE *out, void *kernels, bool json, struct dtl_error *error)
{
	return json ? dtl_kernels_write_json(out, kernels, error)
		    : dtl_kernels_write_text(out, kernels, error);
}

#else

int dtl_cli_kernels_scan(const char *const *dirs, size_t n, struct dtl_arena *arena,
			 struct dtl_op_oracle *ret_oracle, void **ret_kernels, struct dtl_error *error)
{
	struct dtl_loc loc = {.file = "dtypelint"};
	(void)dirs, (void)n, (void)arena, (void)ret_oracle, (void)ret_kernels;
	return dtl_error_set(error, loc, -ENOTSUP,
			     "this dtypelint was built without libclang (meson -Dkernels=enabled)");
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
