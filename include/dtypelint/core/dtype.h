/* SPDX-License-Identifier: MIT */
/* The dtype algebra: names as torch prints them, aliases, sizes, promotion. */
#ifndef DTYPELINT_DTYPE_H
#define DTYPELINT_DTYPE_H
#ifndef DTL_SEES_CORE
#error "dtypelint/core/dtype.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>

enum dtl_dtype {
	DTL_DTYPE_NONE = 0, /* not stated: inherit (e.g. model.checkpoint_dtype) */
	DTL_DTYPE_F32,
	DTL_DTYPE_BF16,
	DTL_DTYPE_F16,
	DTL_DTYPE_F64,
	DTL_DTYPE_F8_E4M3FN,
	DTL_DTYPE_F8_E5M2,
	DTL_DTYPE_U8,
	DTL_DTYPE_I8,
	DTL_DTYPE_I16,
	DTL_DTYPE_I32,
	DTL_DTYPE_I64,
	DTL_DTYPE_BOOL,
	DTL_DTYPE_COUNT
};

/* Parses a canonical name or an alias (torch. prefix, fp32/bf16/fp16/fp64, float/half/double,
 * safetensors' F32 BF16 F16 F64 F8_E4M3 F8_E5M2 U8 I8 I16 I32 I64 BOOL). Exact case, except
 * the safetensors upper-case forms. Returns DTL_DTYPE_NONE when unknown. */
enum dtl_dtype dtl_dtype_parse(const char *text, size_t len);
/* "bfloat16" */
const char *dtl_dtype_name(enum dtl_dtype dtype);
/* "torch.bfloat16", as torch prints a dtype in error messages */
const char *dtl_dtype_torch_name(enum dtl_dtype dtype);
/* "BFloat16", as c10 prints a ScalarType ("not implemented for 'BFloat16'") */
const char *dtl_dtype_scalar_type_name(enum dtl_dtype dtype);
/* bytes per element; 0 for DTL_DTYPE_NONE */
size_t dtl_dtype_itemsize(enum dtl_dtype dtype);
bool dtl_dtype_is_floating(enum dtl_dtype dtype);
/* true for float16 and bfloat16 */
bool dtl_dtype_is_half(enum dtl_dtype dtype);
/* torch.result_type of two dimensioned tensors (same category rules as torch) */
enum dtl_dtype dtl_dtype_promote(enum dtl_dtype a, enum dtl_dtype b);
/* The list of accepted spellings, for error messages: "float32 (fp32, float, F32), ..." */
const char *dtl_dtype_valid_names(void);

#endif
