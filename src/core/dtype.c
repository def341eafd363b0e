/* SPDX-License-Identifier: MIT */
/*
 * The dtype table of dtype.h, the one place that knows each torch dtype: its manifest names and
 * aliases, its torch and c10::ScalarType names, item size, whether it is floating, and its rank
 * in torch's type promotion. Every layer after core (importers, simulation, rules, reports)
 * names and compares dtypes through it.
 */
#include <string.h>

#include "dtypelint/core/dtype.h"

struct dtype_info {
	const char *name;
	const char *torch_name;
	const char *scalar_type; /* c10::ScalarType name */
	size_t itemsize;
	bool floating;
	int rank; /* promotion order within a category (higher wins) */
};

static const struct dtype_info infos[DTL_DTYPE_COUNT] = {
    [DTL_DTYPE_NONE] = {"none", "None", "Undefined", 0, false, 0},
    [DTL_DTYPE_F32] = {"float32", "torch.float32", "Float", 4, true, 30},
    [DTL_DTYPE_BF16] = {"bfloat16", "torch.bfloat16", "BFloat16", 2, true, 20},
    [DTL_DTYPE_F16] = {"float16", "torch.float16", "Half", 2, true, 20},
    [DTL_DTYPE_F64] = {"float64", "torch.float64", "Double", 8, true, 40},
    [DTL_DTYPE_F8_E4M3FN] = {"float8_e4m3fn", "torch.float8_e4m3fn", "Float8_e4m3fn", 1, true, 10},
    [DTL_DTYPE_F8_E5M2] = {"float8_e5m2", "torch.float8_e5m2", "Float8_e5m2", 1, true, 10},
    [DTL_DTYPE_U8] = {"uint8", "torch.uint8", "Byte", 1, false, 2},
    [DTL_DTYPE_I8] = {"int8", "torch.int8", "Char", 1, false, 1},
    [DTL_DTYPE_I16] = {"int16", "torch.int16", "Short", 2, false, 3},
    [DTL_DTYPE_I32] = {"int32", "torch.int32", "Int", 4, false, 4},
    [DTL_DTYPE_I64] = {"int64", "torch.int64", "Long", 8, false, 5},
    [DTL_DTYPE_BOOL] = {"bool", "torch.bool", "Bool", 1, false, 0},
};

struct dtype_alias {
	const char *spelling;
	enum dtl_dtype dtype;
};

/* docs/design.md §3 "dtypes": canonical names, fp/float/half/double aliases, safetensors' names. */
static const struct dtype_alias aliases[] = {
    {"float32", DTL_DTYPE_F32},
    {"fp32", DTL_DTYPE_F32},
    {"float", DTL_DTYPE_F32},
    {"F32", DTL_DTYPE_F32},
    {"bfloat16", DTL_DTYPE_BF16},
    {"bf16", DTL_DTYPE_BF16},
    {"BF16", DTL_DTYPE_BF16},
    {"float16", DTL_DTYPE_F16},
    {"fp16", DTL_DTYPE_F16},
    {"half", DTL_DTYPE_F16},
    {"F16", DTL_DTYPE_F16},
    {"float64", DTL_DTYPE_F64},
    {"fp64", DTL_DTYPE_F64},
    {"double", DTL_DTYPE_F64},
    {"F64", DTL_DTYPE_F64},
    {"float8_e4m3fn", DTL_DTYPE_F8_E4M3FN},
    {"F8_E4M3", DTL_DTYPE_F8_E4M3FN},
    {"float8_e5m2", DTL_DTYPE_F8_E5M2},
    {"F8_E5M2", DTL_DTYPE_F8_E5M2},
    {"uint8", DTL_DTYPE_U8},
    {"U8", DTL_DTYPE_U8},
    {"int8", DTL_DTYPE_I8},
    {"I8", DTL_DTYPE_I8},
    {"int16", DTL_DTYPE_I16},
    {"I16", DTL_DTYPE_I16},
    {"int32", DTL_DTYPE_I32},
    {"I32", DTL_DTYPE_I32},
    {"int64", DTL_DTYPE_I64},
    {"I64", DTL_DTYPE_I64},
    {"bool", DTL_DTYPE_BOOL},
    {"BOOL", DTL_DTYPE_BOOL},
};

enum dtl_dtype dtl_dtype_parse(const char *text, size_t len)
{
	if (len > 6 && memcmp(text, "torch.", 6) == 0) {
		text += 6;
		len -= 6;
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (strlen(aliases[i].spelling) == len &&
		    memcmp(aliases[i].spelling, text, len) == 0)
			return aliases[i].dtype;
	}
	return DTL_DTYPE_NONE;
}

static const struct dtype_info *info(enum dtl_dtype dtype)
{
	if ((unsigned)dtype >= DTL_DTYPE_COUNT)
		dtype = DTL_DTYPE_NONE;
	return &infos[dtype];
}

const char *dtl_dtype_name(enum dtl_dtype dtype)
{
	return info(dtype)->name;
}

const char *dtl_dtype_torch_name(enum dtl_dtype dtype)
{
	return info(dtype)->torch_name;
}

const char *dtl_dtype_scalar_type_name(enum dtl_dtype dtype)
{
	return info(dtype)->scalar_type;
}

size_t dtl_dtype_itemsize(enum dtl_dtype dtype)
{
	return info(dtype)->itemsize;
}

bool dtl_dtype_is_floating(enum dtl_dtype dtype)
{
	return info(dtype)->floating;
}

bool dtl_dtype_is_half(enum dtl_dtype dtype)
{
	return dtype == DTL_DTYPE_F16 || dtype == DTL_DTYPE_BF16;
}

/*
 * torch's type promotion (https://pytorch.org/docs/2.7/tensor_attributes.html#type-promotion-doc):
 * for two dimensioned tensors, torch.result_type picks the
 * higher category (bool < integer < floating), and within floating the wider type;
 * bfloat16 with float16 promotes to float32; float8 with anything wider takes the wider type.
 */
enum dtl_dtype dtl_dtype_promote(enum dtl_dtype a, enum dtl_dtype b)
{
	const struct dtype_info *ia = info(a), *ib = info(b);

	if (a == b || b == DTL_DTYPE_NONE)
		return a;
	if (a == DTL_DTYPE_NONE)
		return b;
	if (ia->floating != ib->floating)
		return ia->floating ? a : b;
	if (ia->floating) {
		if (ia->rank == ib->rank)
			return ia->rank == 20 ? DTL_DTYPE_F32
			                      : DTL_DTYPE_NONE; /* f8 pairs: torch refuses */
		return ia->rank > ib->rank ? a : b;
	}
	if (a == DTL_DTYPE_BOOL)
		return b;
	if (b == DTL_DTYPE_BOOL)
		return a;
	/* uint8 with int8 gives int16 */
	if ((a == DTL_DTYPE_U8 && b == DTL_DTYPE_I8) || (a == DTL_DTYPE_I8 && b == DTL_DTYPE_U8))
		return DTL_DTYPE_I16;
	return ia->rank > ib->rank ? a : b;
}

const char *dtl_dtype_valid_names(void)
{
	return "float32 (fp32, float, F32), bfloat16 (bf16, BF16), float16 (fp16, half, F16), "
	       "float64 (fp64, double, F64), float8_e4m3fn (F8_E4M3), float8_e5m2 (F8_E5M2), "
	       "uint8 (U8), int8 (I8), int16 (I16), int32 (I32), int64 (I64), bool (BOOL); "
	       "each may carry a 'torch.' prefix";
}
