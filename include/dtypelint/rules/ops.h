/* SPDX-License-Identifier: MIT */
/*
 * What a custom op accepts: the rules ask this interface, the kernel scanner (src/kernels/,
 * libclang) answers it. Keeping it abstract keeps libclang out of the core library.
 */
#ifndef DTYPELINT_OPS_H
#define DTYPELINT_OPS_H
#ifndef DTL_SEES_RULES
#error "dtypelint/rules/ops.h is in the rules layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/core/diag.h"
#include "dtypelint/core/dtype.h"

enum dtl_op_verdict {
	DTL_OP_UNKNOWN, /* no contract, or no dtype fact in it */
	DTL_OP_ACCEPTS,
	DTL_OP_REJECTS,    /* an unconditional check or dispatch raises */
	DTL_OP_MAY_REJECT, /* only guarded or conditional checks raise */
	DTL_OP_UNCHECKED,  /* not handled, nothing raises: silent */
};

struct dtl_op_answer {
	enum dtl_op_verdict verdict;
	char message[1024];      /* the error torch would raise, or why nothing raises */
	struct dtl_loc evidence; /* file:line of the deciding dispatch or check */
	char evidence_file[512];
	const char *evidence_kind; /* "dispatch", "check", ... */
	const char *function;      /* the C++ function the op is registered as */
};

struct dtl_op_oracle {
	/* 0, or -ENOENT when no contract names op */
	int (*query)(void *data, const char *op, enum dtl_dtype dtype,
	             struct dtl_op_answer *ret_answer);
	void *data;
	const char *source; /* "scanned from DIR..." for messages */
};

#endif
