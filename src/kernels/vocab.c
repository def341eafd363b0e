/* SPDX-License-Identifier: MIT */
/* The dtype vocabulary of extension sources: ScalarType constants, C++ element types, the
 * AT_DISPATCH name grammar and AT_DISPATCH_V2 type groups, and how c10 prints each dtype. */
#include <stdio.h>
#include <string.h>

#include "kernels-private.h"

_Static_assert(DTL_DTYPE_COUNT <= DTL_KERNELS_DT_FIRST_EXTRA,
               "enum dtl_dtype must fit below the extra dtype bits");

#define F32  DTL_KERNELS_DT(DTL_DTYPE_F32)
#define BF16 DTL_KERNELS_DT(DTL_DTYPE_BF16)
#define F16  DTL_KERNELS_DT(DTL_DTYPE_F16)
#define F64  DTL_KERNELS_DT(DTL_DTYPE_F64)
#define E4M3 DTL_KERNELS_DT(DTL_DTYPE_F8_E4M3FN)
#define E5M2 DTL_KERNELS_DT(DTL_DTYPE_F8_E5M2)
#define U8   DTL_KERNELS_DT(DTL_DTYPE_U8)
#define I8   DTL_KERNELS_DT(DTL_DTYPE_I8)
#define I16  DTL_KERNELS_DT(DTL_DTYPE_I16)
#define I32  DTL_KERNELS_DT(DTL_DTYPE_I32)
#define I64  DTL_KERNELS_DT(DTL_DTYPE_I64)
#define BOOL DTL_KERNELS_DT(DTL_DTYPE_BOOL)
#define C32  DTL_KERNELS_DT_COMPLEX32
#define C64  DTL_KERNELS_DT_COMPLEX64
#define C128 DTL_KERNELS_DT_COMPLEX128

#define FLOATING (F64 | F32)
#define INTEGRAL (U8 | I8 | I32 | I64 | I16)
#define COMPLEX  (C128 | C64)
#define QINT     (DTL_KERNELS_DT_QINT8 | DTL_KERNELS_DT_QUINT8 | DTL_KERNELS_DT_QINT32)
#define FLOAT8_ALL                                                                                 \
	(E5M2 | E4M3 | DTL_KERNELS_DT_F8_E5M2FNUZ | DTL_KERNELS_DT_F8_E4M3FNUZ |                   \
	 DTL_KERNELS_DT_F8_E8M0FNU)
#define UNSIGNED_V2 (DTL_KERNELS_DT_UINT16 | DTL_KERNELS_DT_UINT32 | DTL_KERNELS_DT_UINT64)

struct entry {
	const char *name;
	uint64_t types;
};

static uint64_t lookup(const struct entry *table, size_t n, const char *text, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		if (strlen(table[i].name) == len && memcmp(table[i].name, text, len) == 0)
			return table[i].types;
	}
	return 0;
}

#define LOOKUP(table, text, len) lookup(table, sizeof(table) / sizeof(table[0]), text, len)

/* c10/core/ScalarType.h (AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS, DEFINE_CONSTANT) and the
 * torch::kFloat32-style aliases of torch/types.h, as installed by Debian's libtorch-dev 1.13;
 * newer names (float8, uint16..64) from later ScalarType.h. */
static const struct entry constants[] = {
    {"kByte", U8},
    {"kChar", I8},
    {"kShort", I16},
    {"kInt", I32},
    {"kLong", I64},
    {"kHalf", F16},
    {"kFloat", F32},
    {"kDouble", F64},
    {"kComplexHalf", C32},
    {"kComplexFloat", C64},
    {"kComplexDouble", C128},
    {"kBool", BOOL},
    {"kQInt8", DTL_KERNELS_DT_QINT8},
    {"kQUInt8", DTL_KERNELS_DT_QUINT8},
    {"kQInt32", DTL_KERNELS_DT_QINT32},
    {"kBFloat16", BF16},
    {"kQUInt4x2", DTL_KERNELS_DT_QUINT4X2},
    {"kQUInt2x4", DTL_KERNELS_DT_QUINT2X4},
    {"kFloat8_e5m2", E5M2},
    {"kFloat8_e4m3fn", E4M3},
    {"kFloat8_e5m2fnuz", DTL_KERNELS_DT_F8_E5M2FNUZ},
    {"kFloat8_e4m3fnuz", DTL_KERNELS_DT_F8_E4M3FNUZ},
    {"kFloat8_e8m0fnu", DTL_KERNELS_DT_F8_E8M0FNU},
    {"kUInt16", DTL_KERNELS_DT_UINT16},
    {"kUInt32", DTL_KERNELS_DT_UINT32},
    {"kUInt64", DTL_KERNELS_DT_UINT64},
    {"kUInt8", U8},
    {"kInt8", I8},
    {"kInt16", I16},
    {"kInt32", I32},
    {"kInt64", I64},
    {"kFloat16", F16},
    {"kFloat32", F32},
    {"kFloat64", F64},
    {"kU8", U8},
    {"kI8", I8},
    {"kI16", I16},
    {"kI32", I32},
    {"kI64", I64},
    {"kF16", F16},
    {"kF32", F32},
    {"kF64", F64},
    /* ScalarType::Name */
    {"Byte", U8},
    {"Char", I8},
    {"Short", I16},
    {"Int", I32},
    {"Long", I64},
    {"Half", F16},
    {"Float", F32},
    {"Double", F64},
    {"ComplexHalf", C32},
    {"ComplexFloat", C64},
    {"ComplexDouble", C128},
    {"Bool", BOOL},
    {"QInt8", DTL_KERNELS_DT_QINT8},
    {"QUInt8", DTL_KERNELS_DT_QUINT8},
    {"QInt32", DTL_KERNELS_DT_QINT32},
    {"BFloat16", BF16},
    {"QUInt4x2", DTL_KERNELS_DT_QUINT4X2},
    {"QUInt2x4", DTL_KERNELS_DT_QUINT2X4},
    {"Float8_e5m2", E5M2},
    {"Float8_e4m3fn", E4M3},
    {"Float8_e5m2fnuz", DTL_KERNELS_DT_F8_E5M2FNUZ},
    {"Float8_e4m3fnuz", DTL_KERNELS_DT_F8_E4M3FNUZ},
    {"Float8_e8m0fnu", DTL_KERNELS_DT_F8_E8M0FNU},
    {"UInt16", DTL_KERNELS_DT_UINT16},
    {"UInt32", DTL_KERNELS_DT_UINT32},
    {"UInt64", DTL_KERNELS_DT_UINT64},
};

uint64_t dtl_kernels_vocab_constant(const char *text, size_t len)
{
	if (len > 5 && memcmp(text, "kBits", 5) == 0)
		return DTL_KERNELS_DT_BITS;
	if (len > 4 && memcmp(text, "Bits", 4) == 0)
		return DTL_KERNELS_DT_BITS;
	return LOOKUP(constants, text, len);
}

/* docs/kernels.md §9 "Dtype names": the element types of
 * data_ptr<T>, template arguments and typed pointers. The last name of a qualified type is
 * looked up ("at::Half" -> "Half"). scalar_t and template parameters are not dtypes. */
static const struct entry cpp_types[] = {
    {"float", F32},
    {"double", F64},
    {"Half", F16},
    {"half", F16},
    {"__half", F16},
    {"BFloat16", BF16},
    {"__nv_bfloat16", BF16},
    {"nv_bfloat16", BF16},
    {"__hip_bfloat16", BF16},
    {"bfloat16", BF16},
    {"int", I32},
    {"int32_t", I32},
    {"int64_t", I64},
    {"long", I64},
    {"uint8_t", U8},
    {"int8_t", I8},
    {"int16_t", I16},
    {"short", I16},
    {"bool", BOOL},
    {"Float8_e4m3fn", E4M3},
    {"Float8_e5m2", E5M2},
    {"__nv_fp8_e4m3", E4M3},
    {"__nv_fp8_e5m2", E5M2},
    {"qint8", DTL_KERNELS_DT_QINT8},
    {"quint8", DTL_KERNELS_DT_QUINT8},
    {"qint32", DTL_KERNELS_DT_QINT32},
    {"uint16_t", DTL_KERNELS_DT_UINT16},
    {"uint32_t", DTL_KERNELS_DT_UINT32},
    {"uint64_t", DTL_KERNELS_DT_UINT64},
};

uint64_t dtl_kernels_vocab_cpp_type(const char *text, size_t len)
{
	return LOOKUP(cpp_types, text, len);
}

/*
 * docs/kernels.md §9, the AT_DISPATCH name grammar, checked against
 * ATen/Dispatch.h of torch 1.13 (/usr/include/ATen/Dispatch.h: INTEGRAL includes Short) and of
 * newer torch (REDUCED_FLOATING_TYPES). AT_DISPATCH_<BASE>[_AND|_AND<N>].
 */
static const struct entry bases[] = {
    {"FLOATING_TYPES", FLOATING},
    {"FLOATING_TYPES_AND_HALF", FLOATING | F16},
    {"REDUCED_FLOATING_TYPES", F16 | BF16},
    {"COMPLEX_TYPES", COMPLEX},
    {"FLOATING_AND_COMPLEX_TYPES", FLOATING | COMPLEX},
    {"INTEGRAL_TYPES", INTEGRAL},
    {"INDEX_TYPES", I32 | I64},
    {"ALL_TYPES", INTEGRAL | FLOATING},
    {"ALL_TYPES_AND_COMPLEX", INTEGRAL | FLOATING | COMPLEX},
    {"ALL_TYPES_AND_HALF", INTEGRAL | FLOATING | F16},
    {"QINT_TYPES", QINT},
    {"QINT_BYTE_TYPES", DTL_KERNELS_DT_QINT8 | DTL_KERNELS_DT_QUINT8},
    {"QINT_AND_SUB_BYTE_TYPES", QINT | DTL_KERNELS_DT_QUINT4X2 | DTL_KERNELS_DT_QUINT2X4},
    {"BIT_TYPES", DTL_KERNELS_DT_BITS},
    {"FLOAT8_TYPES", FLOAT8_ALL},
};

uint64_t dtl_kernels_vocab_dispatch_base(const char *text, size_t len)
{
	return LOOKUP(bases, text, len);
}

/* torch/headeronly/core/Dispatch_v2.h (pytorch main): the AT_EXPAND(AT_<GROUP>) groups. */
static const struct entry v2_groups[] = {
    {"AT_FLOATING_TYPES", FLOATING},
    {"AT_INTEGRAL_TYPES", INTEGRAL},
    {"AT_BAREBONES_UNSIGNED_TYPES", UNSIGNED_V2},
    {"AT_INTEGRAL_TYPES_V2", INTEGRAL | UNSIGNED_V2},
    {"AT_COMPLEX_TYPES", COMPLEX},
    {"AT_QINT_TYPES", QINT},
    {"AT_ALL_TYPES", INTEGRAL | FLOATING},
    {"AT_ALL_TYPES_AND_COMPLEX", INTEGRAL | FLOATING | COMPLEX},
    {"AT_FLOAT8_TYPES", FLOAT8_ALL},
};

uint64_t dtl_kernels_vocab_v2_group(const char *text, size_t len)
{
	return LOOKUP(v2_groups, text, len);
}

uint64_t dtl_kernels_vocab_floating(void)
{
	return FLOATING | F16 | BF16 | FLOAT8_ALL;
}

uint64_t dtl_kernels_vocab_complex(void)
{
	return COMPLEX | C32;
}

struct extra_info {
	const char *name;
	const char *scalar_type;
	const char *typemeta;
};

static const struct extra_info extras[DTL_KERNELS_DT_LAST_EXTRA - DTL_KERNELS_DT_FIRST_EXTRA + 1] =
    {
        {"complex32", "ComplexHalf", "c10::complex<c10::Half>"},
        {"complex64", "ComplexFloat", "c10::complex<float>"},
        {"complex128", "ComplexDouble", "c10::complex<double>"},
        {"qint8", "QInt8", "c10::qint8"},
        {"quint8", "QUInt8", "c10::quint8"},
        {"qint32", "QInt32", "c10::qint32"},
        {"quint4x2", "QUInt4x2", "c10::quint4x2"},
        {"quint2x4", "QUInt2x4", "c10::quint2x4"},
        {"float8_e5m2fnuz", "Float8_e5m2fnuz", "c10::Float8_e5m2fnuz"},
        {"float8_e4m3fnuz", "Float8_e4m3fnuz", "c10::Float8_e4m3fnuz"},
        {"float8_e8m0fnu", "Float8_e8m0fnu", "c10::Float8_e8m0fnu"},
        {"uint16", "UInt16", "uint16_t"},
        {"uint32", "UInt32", "uint32_t"},
        {"uint64", "UInt64", "uint64_t"},
        {"bits", "Bits8", "c10::bits8"},
};

/* caffe2::TypeMeta::name() as torch 1.13 prints a dtype streamed into an error
 * (c10::util::get_fully_qualified_type_name: the compiler's pretty name). Verified for all ten
 * non-float8 dtypes against Debian's python3-torch 1.13 by tests/kernels/real-ext.py. */
static const char *const core_typemeta[DTL_DTYPE_COUNT] = {
    [DTL_DTYPE_F32] = "float",
    [DTL_DTYPE_BF16] = "c10::BFloat16",
    [DTL_DTYPE_F16] = "c10::Half",
    [DTL_DTYPE_F64] = "double",
    [DTL_DTYPE_F8_E4M3FN] = "c10::Float8_e4m3fn",
    [DTL_DTYPE_F8_E5M2] = "c10::Float8_e5m2",
    [DTL_DTYPE_U8] = "unsigned char",
    [DTL_DTYPE_I8] = "signed char",
    [DTL_DTYPE_I16] = "short int",
    [DTL_DTYPE_I32] = "int",
    [DTL_DTYPE_I64] = "long int",
    [DTL_DTYPE_BOOL] = "bool",
};

static const struct extra_info *extra(unsigned bit)
{
	if (bit < DTL_KERNELS_DT_FIRST_EXTRA || bit > DTL_KERNELS_DT_LAST_EXTRA)
		return NULL;
	return &extras[bit - DTL_KERNELS_DT_FIRST_EXTRA];
}

const char *dtl_kernels_vocab_typemeta_name(unsigned bit)
{
	if (bit > 0 && bit < DTL_DTYPE_COUNT)
		return core_typemeta[bit] ? core_typemeta[bit] : "?";
	const struct extra_info *e = extra(bit);
	return e ? e->typemeta : "?";
}

uint64_t dtl_kernels_all_dtypes(void)
{
	uint64_t all = 0;

	for (unsigned d = 1; d < DTL_DTYPE_COUNT; d++)
		all |= DTL_KERNELS_DT(d);
	for (unsigned b = DTL_KERNELS_DT_FIRST_EXTRA; b <= DTL_KERNELS_DT_LAST_EXTRA; b++)
		all |= UINT64_C(1) << b;
	return all;
}

const char *dtl_kernels_dtype_name(unsigned bit)
{
	if (bit > 0 && bit < DTL_DTYPE_COUNT)
		return dtl_dtype_name((enum dtl_dtype)bit);
	const struct extra_info *e = extra(bit);
	return e ? e->name : NULL;
}

const char *dtl_kernels_scalar_type_name(unsigned bit)
{
	if (bit > 0 && bit < DTL_DTYPE_COUNT)
		return dtl_dtype_scalar_type_name((enum dtl_dtype)bit);
	const struct extra_info *e = extra(bit);
	return e ? e->scalar_type : NULL;
}

size_t dtl_kernels_format_dtypes(uint64_t set, char *buf, size_t size)
{
	size_t used = 0;

	if (size > 0)
		buf[0] = '\0';
	for (unsigned bit = 0; bit < 64; bit++) {
		const char *name;
		if (!(set & (UINT64_C(1) << bit)) || !(name = dtl_kernels_dtype_name(bit)))
			continue;
		const char *sep = used ? ", " : "";
		size_t need = strlen(sep) + strlen(name);
		if (used + need < size)
			snprintf(buf + used, size - used, "%s%s", sep, name);
		else if (size > 0 && used < size)
			buf[used] = '\0';
		used += need;
	}
	return used;
}
