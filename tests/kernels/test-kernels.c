/* SPDX-License-Identifier: MIT */
/*
 * The libclang kernel-contract scanner (issue 9) on extension sources written for these tests:
 * in memory through CXUnsavedFile, and a small tree on disk (tests/kernels/data/tree). Each
 * test asserts the dtypes, lines, messages and mappings the scanner extracts.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dtl-test.h"
#include "dtypelint/kernels/kernels.h"
#include "kernels/libclang.h"

#define SRC(p, t)                                                                                  \
	{                                                                                          \
		.path = (p), .text = (t), .length = sizeof(t) - 1                                  \
	}

#define F32  DTL_KERNELS_DT(DTL_DTYPE_F32)
#define BF16 DTL_KERNELS_DT(DTL_DTYPE_BF16)
#define F16  DTL_KERNELS_DT(DTL_DTYPE_F16)
#define F64  DTL_KERNELS_DT(DTL_DTYPE_F64)
#define U8   DTL_KERNELS_DT(DTL_DTYPE_U8)
#define I8   DTL_KERNELS_DT(DTL_DTYPE_I8)
#define I16  DTL_KERNELS_DT(DTL_DTYPE_I16)
#define I32  DTL_KERNELS_DT(DTL_DTYPE_I32)
#define I64  DTL_KERNELS_DT(DTL_DTYPE_I64)
#define BOOL DTL_KERNELS_DT(DTL_DTYPE_BOOL)
#define INTS (U8 | I8 | I16 | I32 | I64)

static struct dtl_arena arena;
static struct dtl_kernels kernels;
static struct dtl_error error;

static void setup(void)
{
	dtl_arena_init(&arena);
	memset(&error, 0, sizeof(error));
	ck_assert_int_eq(dtl_kernels_init(&kernels, &arena, NULL, &error), 0);
}

static void teardown(void)
{
	dtl_kernels_fini(&kernels);
	dtl_arena_fini(&arena);
}

static void scan(const struct dtl_kernels_source *sources, size_t n)
{
	int r = dtl_kernels_scan_sources(&kernels, sources, n, &error);
	ck_assert_msg(r == 0, "scan failed: %s", error.message);
}

static const struct dtl_kernels_contract *contract(const char *op)
{
	const struct dtl_kernels_contract *c = NULL;
	size_t n = dtl_kernels_find(&kernels, op, &c);
	ck_assert_msg(n == 1, "op '%s': %zu contracts", op, n);
	return c;
}

static struct dtl_kernels_answer ask_on(const char *op, enum dtl_dtype dtype, const char *backend)
{
	struct dtl_kernels_query q = {.op = op, .dtype = dtype, .backend = backend};
	struct dtl_kernels_answer a;
	int r = dtl_kernels_query(&kernels, &q, &a, &error);
	ck_assert_msg(r == 0, "query %s: %s", op, error.message);
	return a;
}

static struct dtl_kernels_answer ask(const char *op, enum dtl_dtype dtype)
{
	return ask_on(op, dtype, NULL);
}

static const struct dtl_kernels_evidence *
evidence_at(const struct dtl_kernels_contract *c, enum dtl_kernels_fact_kind kind, uint32_t line)
{
	for (size_t i = 0; i < c->n_evidence; i++) {
		if (c->evidence[i].kind == kind && c->evidence[i].line == line)
			return &c->evidence[i];
	}
	ck_abort_msg("op %s: no %s fact at line %u", c->op, dtl_kernels_fact_kind_name(kind), line);
	return NULL;
}

/* ---- AT_DISPATCH forms ---- */

static const char dispatch_src[] =
    "#include <torch/extension.h>\n"                                   /* 1 */
    "// AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), \"c\", f)\n"       /* 2 */
    "#define NOT_A_SITE(x) AT_DISPATCH_ALL_TYPES(x, \"d\", f)\n"       /* 3 */
    "static const char *s = \"AT_DISPATCH_ALL_TYPES(\";\n"             /* 4 */
    "void f1(at::Tensor x) {\n"                                        /* 5 */
    "  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), \"f1\", [&] {});\n" /* 6 */
    "}\n"                                                              /* 7 */
    "void f2(at::Tensor x) {\n"                                        /* 8 */
    "  AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), \"f2\", [&] {\n"
    "    x.data_ptr<scalar_t>();\n" /* 10 */
    "  });\n"
    "}\n"
    "void f3(at::Tensor x) {\n" /* 13 */
    "  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::ScalarType::BFloat16,\n"
    "    x.scalar_type(), \"f3\", [&] {});\n"
    "}\n"
    "void f4(at::Tensor x) {\n" /* 17 */
    "  AT_DISPATCH_FLOATING_TYPES_AND(at::kBFloat16, x.scalar_type(), \"f4\", [&] {});\n"
    "}\n"
    "void f5(at::Tensor x) {\n" /* 20 */
    "  AT_DISPATCH_ALL_TYPES(x.scalar_type(), \"f5\", [&] {});\n"
    "}\n"
    "void f6(at::Tensor x) {\n" /* 23 */
    "  AT_DISPATCH_INTEGRAL_TYPES_AND(at::kBool, x.scalar_type(), \"f6\", [&] {});\n"
    "}\n"
    "void f7(at::Tensor x) {\n" /* 26 */
    "  AT_DISPATCH_REDUCED_FLOATING_TYPES(x.scalar_type(), \"f7\", [&] {});\n"
    "}\n"
    "void f8(at::Tensor x) {\n" /* 29 */
    "  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND1(at::kHalf, x.scalar_type(), \"f8\", [&] {});\n"
    "}\n"
    "void f9(at::Tensor x) {\n" /* 32 */
    "  AT_DISPATCH_V2(x.scalar_type(), \"f9\", AT_WRAP([&] { int a, b; }),\n"
    "                 AT_EXPAND(AT_FLOATING_TYPES), kHalf, at::kBFloat16);\n"
    "}\n"
    "void f10(at::Tensor x) {\n" /* 36 */
    "  AT_DISPATCH_SWITCH(x.scalar_type(), \"f10\",\n"
    "    AT_DISPATCH_CASE(at::ScalarType::BFloat16, [&] {})\n"
    "    AT_DISPATCH_CASE_FLOATING_TYPES([&] {}));\n"
    "}\n"
    "void f11(at::Tensor x) {\n" /* 41 */
    "  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(at::kHalf, at::kBool, x.scalar_type(), \"f11\", [&] "
    "{});\n"
    "}\n"
    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
    "  m.def(\"f1\", &f1); m.def(\"f2\", &f2); m.def(\"f3\", &f3);\n"
    "  m.def(\"f4\", &f4); m.def(\"f5\", &f5); m.def(\"f6\", &f6);\n"
    "  m.def(\"f7\", &f7); m.def(\"f8\", &f8); m.def(\"f9\", &f9);\n"
    "  m.def(\"f10\", &f10); m.def(\"f11\", &f11);\n"
    "}\n";

START_TEST(dispatch_forms)
{
	static const struct dtl_kernels_source src[] = {SRC("/v/dispatch.cpp", dispatch_src)};
	static const struct {
		const char *op;
		uint64_t types;
		uint32_t line;
	} want[] = {
	    {"f1", F64 | F32, 6},
	    {"f2", F64 | F32 | F16, 9},
	    {"f3", F64 | F32 | F16 | BF16, 14},
	    {"f4", F64 | F32 | BF16, 18},
	    {"f5", INTS | F64 | F32, 21},
	    {"f6", INTS | BOOL, 24},
	    {"f7", F16 | BF16, 27},
	    {"f8", F64 | F32 | F16 | DTL_KERNELS_DT_COMPLEX64 | DTL_KERNELS_DT_COMPLEX128, 30},
	    {"f9", F64 | F32 | F16 | BF16, 33},
	    {"f10", F64 | F32 | BF16, 37},
	    {"f11",
	     INTS | F64 | F32 | F16 | BOOL | DTL_KERNELS_DT_COMPLEX64 | DTL_KERNELS_DT_COMPLEX128,
	     42},
	};

	scan(src, 1);
	ck_assert_uint_eq(kernels.n_contracts, 11);
	/* the comment, the #define body and the string literal are not sites */
	ck_assert_uint_eq(kernels.stats.at_dispatch_sites, 11);
	ck_assert_uint_eq(kernels.stats.at_dispatch_unresolved, 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct dtl_kernels_contract *c = contract(want[i].op);
		ck_assert_msg(c->dispatch_types == want[i].types, "%s: %#llx", want[i].op,
		              (unsigned long long)c->dispatch_types);
		ck_assert_uint_eq(c->n_evidence, 1);
		ck_assert_uint_eq(c->evidence[0].line, want[i].line);
		ck_assert_str_eq(c->evidence[0].name, want[i].op);
		ck_assert_str_eq(c->evidence[0].param, "x");
		ck_assert_uint_eq(c->evidence[0].call_depth, 0);
	}
	/* the runtime error text of ATen/Dispatch.h */
	struct dtl_kernels_answer a = ask("f2", DTL_DTYPE_BF16);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "\"f2\" not implemented for 'BFloat16'");
	ck_assert_str_eq(a.evidence->file, "/v/dispatch.cpp");
	ck_assert_uint_eq(a.evidence->line, 9);
	ck_assert_str_eq(a.evidence->macro, "AT_DISPATCH_FLOATING_TYPES_AND_HALF");
	ck_assert_int_eq(ask("f2", DTL_DTYPE_F16).verdict, DTL_KERNELS_ACCEPTS);
	ck_assert_int_eq(ask("f3", DTL_DTYPE_BF16).verdict, DTL_KERNELS_ACCEPTS);
	a = ask("f9", DTL_DTYPE_I32);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "\"f9\" not implemented for 'Int'");
	/* the accessor on scalar_t is dispatched, not a constraint */
	ck_assert_uint_eq(contract("f2")->accessor_types, 0);
}
END_TEST

/* ---- a project wrapper macro in an included header ---- */

static const char shim_h[] =
    "#pragma once\n"
    "/* DISPATCH_DOUBLE_FLOAT_AND_HALF also covers BFloat16: the name lies */\n"
    "#define DISPATCH_DOUBLE_FLOAT_AND_HALF(TYPE, LEVEL, NAME, ...)              \\\n"
    "  switch (TYPE) {                                                         \\\n"
    "  case at::ScalarType::Double: { using scalar_t_##LEVEL = double; __VA_ARGS__; break; } \\\n"
    "  case at::ScalarType::Float: { using scalar_t_##LEVEL = float; __VA_ARGS__; break; } \\\n"
    "  case at::ScalarType::Half: { using scalar_t_##LEVEL = at::Half; __VA_ARGS__; break; } \\\n"
    "  case at::ScalarType::BFloat16: { using scalar_t_##LEVEL = at::BFloat16; __VA_ARGS__; break; "
    "} \\\n"
    "  default: AT_ERROR(#NAME, \" not implemented for '\", toString(TYPE), \"'\"); \\\n"
    "  }\n";

static const char adam_cu[] =
    "#include <torch/extension.h>\n"
    "#include \"type_shim.h\"\n"
    "void multi_tensor_adam(std::vector<std::vector<at::Tensor>> tensor_lists, float lr)\n"
    "{\n"
    "  DISPATCH_DOUBLE_FLOAT_AND_HALF(tensor_lists[0][0].scalar_type(), 0, \"adam\",\n"
    "    multi_tensor_apply<4>(tensor_lists, AdamFunctor<scalar_t_0>(), lr);)\n"
    "}\n"
    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"multi_tensor_adam\", &multi_tensor_adam); "
    "}\n";

START_TEST(wrapper_in_header)
{
	static const struct dtl_kernels_source src[] = {
	    SRC("/v/csrc/includes/type_shim.h", shim_h),
	    SRC("/v/csrc/adam/multi_tensor_adam.cu", adam_cu),
	};

	scan(src, 2);
	const struct dtl_kernels_contract *c = contract("multi_tensor_adam");
	ck_assert_uint_eq(c->dispatch_types, F64 | F32 | F16 | BF16);
	ck_assert_str_eq(c->backend, "cuda");
	const struct dtl_kernels_evidence *e = evidence_at(c, DTL_KERNELS_FACT_DISPATCH, 5);
	ck_assert_str_eq(e->macro, "DISPATCH_DOUBLE_FLOAT_AND_HALF");
	ck_assert_str_eq(e->macro_file, "/v/csrc/includes/type_shim.h");
	ck_assert_uint_eq(e->macro_line, 3);
	ck_assert_str_eq(e->subject, "tensor_lists[0][0]");
	ck_assert_str_eq(e->param, "tensor_lists");
	ck_assert_uint_eq(kernels.stats.wrapper_sites, 1);

	ck_assert_int_eq(ask("multi_tensor_adam", DTL_DTYPE_BF16).verdict, DTL_KERNELS_ACCEPTS);
	struct dtl_kernels_answer a = ask("multi_tensor_adam", DTL_DTYPE_I32);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	/* #NAME stringizes the literal "adam", quotes included */
	ck_assert_str_eq(a.message, "\"adam\" not implemented for 'Int'");
}
END_TEST

/* Two headers define the same macro differently; each use gets the one its include reaches. */
START_TEST(wrapper_resolved_by_include)
{
	static const char cuda_h[] = "#define PICK(T, ...) switch (T) { \\\n"
	                             "  case at::kFloat: { __VA_ARGS__(); break; } \\\n"
	                             "  default: AT_ERROR(\"cuda pick: \", toString(T)); }\n";
	static const char xpu_h[] =
	    "#define PICK(T, ...) switch (T) { \\\n"
	    "  case at::kFloat: case at::kHalf: { __VA_ARGS__(); break; } \\\n"
	    "  default: AT_ERROR(\"xpu pick: \", toString(T)); }\n";
	static const char cuda_cpp[] =
	    "#include \"pick.h\"\n"
	    "void op_a(at::Tensor x) { PICK(x.scalar_type(), [&] {}); }\n"
	    "PYBIND11_MODULE(a, m) { m.def(\"op_a\", &op_a); }\n";
	static const char xpu_cpp[] = "#include \"pick.h\"\n"
	                              "void op_b(at::Tensor x) { PICK(x.scalar_type(), [&] {}); }\n"
	                              "PYBIND11_MODULE(b, m) { m.def(\"op_b\", &op_b); }\n";
	static const struct dtl_kernels_source src[] = {
	    SRC("/w/csrc/includes/pick.h", cuda_h),
	    SRC("/w/csrc/xpu/includes/pick.h", xpu_h),
	    SRC("/w/csrc/ops/a.cpp", cuda_cpp),
	    SRC("/w/csrc/xpu/ops/b.cpp", xpu_cpp),
	};

	scan(src, 4);
	ck_assert_uint_eq(contract("op_a")->dispatch_types, F32);
	ck_assert_uint_eq(contract("op_b")->dispatch_types, F32 | F16);
	ck_assert_str_eq(contract("op_b")->evidence[0].macro_file, "/w/csrc/xpu/includes/pick.h");
	struct dtl_kernels_answer a = ask("op_a", DTL_DTYPE_F16);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "cuda pick: Half");
	ck_assert_int_eq(ask("op_b", DTL_DTYPE_F16).verdict, DTL_KERNELS_ACCEPTS);
}
END_TEST

/* DeepSpeed fp_quantizer style: dtypes given at the use site, one of them behind #ifdef. */
START_TEST(use_site_types_and_ifdef)
{
	static const char q_cpp[] =
	    "#include <torch/extension.h>\n"
	    "#define DISPATCH_Q(T_TYPE, C_TYPE)                        \\\n"
	    "  if (val.options().dtype() == torch::T_TYPE) {          \\\n"
	    "    launch_q<C_TYPE>((C_TYPE *)val.data_ptr(), n);       \\\n"
	    "  }\n"
	    "at::Tensor quantize(torch::Tensor &out, torch::Tensor &val, int n)\n" /* 6 */
	    "{\n"
	    "  DISPATCH_Q(kHalf, __half);\n" /* 8 */
	    "#ifdef BF16_AVAILABLE\n"
	    "  DISPATCH_Q(kBFloat16, __nv_bfloat16);\n" /* 10 */
	    "#endif\n"
	    "#if 0\n"
	    "  DISPATCH_Q(kFloat, float);\n"
	    "#endif\n"
	    "  return out;\n"
	    "}\n"
	    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"quantize\", &quantize); }\n";
	static const struct dtl_kernels_source src[] = {SRC("/q/fp_quantize.cpp", q_cpp)};

	scan(src, 1);
	const struct dtl_kernels_contract *c = contract("quantize");
	ck_assert_uint_eq(c->n_evidence, 2); /* #if 0 is dead code */
	const struct dtl_kernels_evidence *half = evidence_at(c, DTL_KERNELS_FACT_BRANCH, 8);
	ck_assert_uint_eq(half->types, F16);
	ck_assert(!half->skipped);
	ck_assert(!half->throws);
	ck_assert_str_eq(half->param, "val");
	ck_assert_str_eq(half->subject, "val");
	ck_assert_str_eq(half->macro, "DISPATCH_Q");
	const struct dtl_kernels_evidence *bf16 = evidence_at(c, DTL_KERNELS_FACT_BRANCH, 10);
	ck_assert(bf16->skipped);
	ck_assert_uint_eq(bf16->n_guards, 1);
	ck_assert_str_eq(bf16->guards[0], "BF16_AVAILABLE");
	ck_assert_uint_eq(bf16->types | bf16->guarded_types, BF16);

	ck_assert_int_eq(ask("quantize", DTL_DTYPE_F16).verdict, DTL_KERNELS_ACCEPTS);
	struct dtl_kernels_answer a = ask("quantize", DTL_DTYPE_BF16);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_UNCHECKED);
	ck_assert_ptr_nonnull(strstr(a.message, "'BFloat16' falls through"));
	ck_assert_ptr_nonnull(strstr(a.message, "BF16_AVAILABLE"));
	a = ask("quantize", DTL_DTYPE_F32);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_UNCHECKED);
	ck_assert_ptr_null(strstr(a.message, "BF16_AVAILABLE"));
}
END_TEST

START_TEST(ifdef_alternatives)
{
	static const char cpp[] =
	    "void op(at::Tensor x) {\n"
	    "#ifdef BF16_AVAILABLE\n"
	    "  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), \"op\", "
	    "[&] {});\n"
	    "#else\n"
	    "  AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), \"op\", [&] {});\n"
	    "#endif\n"
	    "}\n"
	    "PYBIND11_MODULE(e, m) { m.def(\"op\", &op); }\n";
	static const struct dtl_kernels_source src[] = {SRC("/g/op.cpp", cpp)};

	scan(src, 1);
	const struct dtl_kernels_contract *c = contract("op");
	const struct dtl_kernels_evidence *on = evidence_at(c, DTL_KERNELS_FACT_DISPATCH, 3);
	const struct dtl_kernels_evidence *off = evidence_at(c, DTL_KERNELS_FACT_DISPATCH, 5);
	ck_assert(on->skipped);
	ck_assert_str_eq(on->guards[0], "BF16_AVAILABLE");
	ck_assert(!off->skipped);
	ck_assert_uint_eq(off->n_guards, 1);
	ck_assert_str_eq(off->guards[0], "!BF16_AVAILABLE");
	/* a build flag decides: a warning, not an error */
	struct dtl_kernels_answer a = ask("op", DTL_DTYPE_BF16);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_MAY_REJECT);
	ck_assert_str_eq(a.message, "\"op\" not implemented for 'BFloat16'");
	ck_assert_int_eq(ask("op", DTL_DTYPE_I64).verdict, DTL_KERNELS_MAY_REJECT);
	ck_assert_int_eq(ask("op", DTL_DTYPE_F16).verdict, DTL_KERNELS_ACCEPTS);
}
END_TEST

/* ---- asserts and aliases ---- */

static const char checks_src[] =
    "at::Tensor attn(at::Tensor q, at::Tensor k, at::Tensor v) {\n"
    "  auto q_dtype = q.dtype();\n"
    "  TORCH_CHECK(q_dtype == torch::kFloat16 || q_dtype == torch::kBFloat16,\n" /* 3 */
    "              \"FlashAttention only supports fp16 and bf16\");\n"
    "  TORCH_CHECK(k.dtype() == q_dtype, \"query and key must have the same dtype\");\n" /* 5 */
    "  TORCH_CHECK(v.scalar_type() == k.scalar_type());\n"                               /* 6 */
    "  return q;\n"
    "}\n"
    "at::Tensor plain(at::Tensor x) {\n" /* 9 */
    "  TORCH_CHECK(x.scalar_type() == at::kFloat);\n"
    "  return x;\n"
    "}\n"
    "at::Tensor streamed(at::Tensor x) {\n" /* 13 */
    "  TORCH_CHECK(x.scalar_type() == at::kFloat, \"x must be float32, got \", x.scalar_type());\n"
    "  return x;\n"
    "}\n"
    "at::Tensor meta(at::Tensor x) {\n" /* 17 */
    "  auto dt = x.dtype();\n"
    "  TORCH_CHECK(dt == torch::kFloat32, \"meta: got \", dt, \" for \", x.dim(), \"-d x\");\n"
    "  return x;\n"
    "}\n"
    "at::Tensor not_double(at::Tensor x) {\n" /* 22 */
    "  TORCH_CHECK(x.dtype() != torch::kFloat64, \"no doubles\");\n"
    "  return x;\n"
    "}\n"
    "at::Tensor ternary(at::Tensor x, bool fp8) {\n" /* 26 */
    "  TORCH_CHECK(fp8 ? x.dtype() == torch::kUInt8 : x.dtype() == torch::kHalf, \"bad\");\n"
    "  return x;\n"
    "}\n"
    "at::Tensor floating(at::Tensor x) {\n" /* 30 */
    "  TORCH_CHECK(x.is_floating_point(), \"x must be floating point\");\n"
    "  return x;\n"
    "}\n"
    "at::Tensor aliased(at::Tensor input) {\n" /* 34 */
    "  auto st = input.scalar_type();\n"
    "  at::Tensor y = input.contiguous();\n"
    "  AT_DISPATCH_FLOATING_TYPES(st, \"aliased\", [&] {});\n" /* 37 */
    "  auto out = at::empty({3}, y.options().dtype(at::kFloat));\n"
    "  TORCH_CHECK(out.scalar_type() == at::kFloat, \"out\");\n" /* 39 */
    "  return y;\n"
    "}\n"
    "at::Tensor internal(at::Tensor x) {\n" /* 42 */
    "  AT_ASSERTM(x.scalar_type() == at::kHalf, \"need half\");\n"
    "  return x;\n"
    "}\n"
    "TORCH_LIBRARY(chk, m) {\n"
    "  m.def(\"attn\", &attn); m.def(\"plain\", &plain); m.def(\"streamed\", &streamed);\n"
    "  m.def(\"meta\", &meta); m.def(\"not_double\", &not_double);\n"
    "  m.def(\"ternary\", &ternary); m.def(\"floating\", &floating);\n"
    "  m.def(\"aliased\", &aliased); m.def(\"internal\", &internal);\n"
    "}\n";

START_TEST(asserts_and_aliases)
{
	static const struct dtl_kernels_source src[] = {SRC("/c/checks.cpp", checks_src)};

	scan(src, 1);
	const struct dtl_kernels_contract *c = contract("chk::attn");
	ck_assert_str_eq(c->ns, "chk");
	ck_assert_int_eq(c->binding, DTL_KERNELS_BINDING_TORCH_LIBRARY);
	ck_assert_uint_eq(c->asserted_types, F16 | BF16);
	const struct dtl_kernels_evidence *e = evidence_at(c, DTL_KERNELS_FACT_ASSERT, 3);
	ck_assert_str_eq(e->param, "q");
	ck_assert_str_eq(e->subject, "q_dtype");
	ck_assert(!e->conditional);
	ck_assert_uint_eq(c->n_inputs, 3);
	ck_assert_str_eq(c->inputs[0].name, "q");
	ck_assert(c->inputs[0].known && c->inputs[0].tensor);
	ck_assert_uint_eq(c->inputs[0].accepts, F16 | BF16);
	ck_assert_str_eq(c->inputs[1].same_dtype_as, "q");
	ck_assert_str_eq(c->inputs[2].same_dtype_as, "k");
	struct dtl_kernels_answer a = ask("attn", DTL_DTYPE_F32);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "FlashAttention only supports fp16 and bf16");
	ck_assert_uint_eq(a.evidence->line, 3);
	ck_assert_int_eq(ask("attn", DTL_DTYPE_BF16).verdict, DTL_KERNELS_ACCEPTS);

	/* c10/util/Exception.h (torch 1.13) when no message is given */
	a = ask("plain", DTL_DTYPE_F16);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(
	    a.message, "Expected x.scalar_type() == at::kFloat to be true, but got false.  (Could "
	               "this error message be improved?  If so, please report an enhancement "
	               "request to PyTorch.)");
	ck_assert_str_eq(ask("streamed", DTL_DTYPE_F16).message, "x must be float32, got Half");
	ck_assert_str_eq(ask("meta", DTL_DTYPE_BF16).message,
	                 "meta: got c10::BFloat16 for {x.dim()}-d x");

	ck_assert_int_eq(ask("not_double", DTL_DTYPE_F64).verdict, DTL_KERNELS_REJECTS);
	ck_assert_int_eq(ask("not_double", DTL_DTYPE_F32).verdict, DTL_KERNELS_ACCEPTS);
	ck_assert(evidence_at(contract("not_double"), DTL_KERNELS_FACT_ASSERT, 23)->negated);

	e = evidence_at(contract("ternary"), DTL_KERNELS_FACT_ASSERT, 27);
	ck_assert(e->conditional);
	ck_assert_uint_eq(e->types, U8 | F16);
	ck_assert_int_eq(ask("ternary", DTL_DTYPE_F32).verdict, DTL_KERNELS_MAY_REJECT);

	ck_assert_int_eq(ask("floating", DTL_DTYPE_I32).verdict, DTL_KERNELS_REJECTS);
	ck_assert_int_eq(ask("floating", DTL_DTYPE_BF16).verdict, DTL_KERNELS_ACCEPTS);

	/* the alias st resolves to input; out is a new tensor, not an input */
	c = contract("aliased");
	e = evidence_at(c, DTL_KERNELS_FACT_DISPATCH, 37);
	ck_assert_str_eq(e->param, "input");
	ck_assert_str_eq(e->subject, "st");
	ck_assert_ptr_null(evidence_at(c, DTL_KERNELS_FACT_ASSERT, 39)->param);
	ck_assert_int_eq(ask("aliased", DTL_DTYPE_F16).verdict, DTL_KERNELS_REJECTS);

	a = ask("internal", DTL_DTYPE_F32);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(
	    a.message,
	    "x.scalar_type() == at::kHalf INTERNAL ASSERT FAILED at \"/c/checks.cpp\":43, "
	    "please report a bug to PyTorch. need half");
}
END_TEST

/* ---- branches, switches, accessors ---- */

static const char branches_src[] =
    "void run(at::Tensor x) {\n"
    "  if (x.scalar_type() == at::kHalf) {\n" /* 2 */
    "    launch_half(x);\n"
    "  } else if (x.scalar_type() == at::kFloat) {\n"
    "    float *p = x.data_ptr<float>();\n" /* 5 */
    "  } else {\n"
    "    TORCH_CHECK(false, \"run: unsupported dtype \", x.scalar_type());\n"
    "  }\n"
    "}\n"
    "void need_half(at::Tensor x) {\n" /* 10 */
    "  if (x.scalar_type() != at::kHalf) {\n"
    "    AT_ERROR(\"need_half wants Half, got \", x.scalar_type());\n"
    "  }\n"
    "}\n"
    "void sw(at::Tensor x) {\n" /* 15 */
    "  switch (x.scalar_type()) {\n"
    "  case at::ScalarType::Float:\n"
    "  case at::ScalarType::Double: {\n"
    "    x.data_ptr<double>();\n" /* 19: only for float/double */
    "    break;\n"
    "  }\n"
    "#ifdef WITH_BF16\n"
    "  case at::kBFloat16: break;\n"
    "#endif\n"
    "  default:\n"
    "    AT_ERROR(\"sw: \", c10::toString(x.scalar_type()), \" unsupported\");\n"
    "  }\n"
    "}\n"
    "void acc(at::Tensor x, at::Tensor idx) {\n" /* 29 */
    "  auto a = x.packed_accessor32<at::Half, 2, at::RestrictPtrTraits>();\n"
    "  int64_t *i = idx.data_ptr<int64_t>();\n"
    "}\n"
    "PYBIND11_MODULE(b, m) {\n"
    "  m.def(\"run\", &run); m.def(\"need_half\", &need_half); m.def(\"sw\", &sw);\n"
    "  m.def(\"acc\", &acc);\n"
    "}\n";

START_TEST(branches_switches_accessors)
{
	static const struct dtl_kernels_source src[] = {SRC("/b/run.cpp", branches_src)};

	scan(src, 1);
	const struct dtl_kernels_contract *c = contract("run");
	const struct dtl_kernels_evidence *e = evidence_at(c, DTL_KERNELS_FACT_BRANCH, 2);
	ck_assert_uint_eq(e->types, F16 | F32);
	ck_assert(e->throws);
	/* the float accessor only runs when x is float */
	e = evidence_at(c, DTL_KERNELS_FACT_ACCESSOR, 5);
	ck_assert_uint_eq(e->when & dtl_kernels_all_dtypes(), F32);
	ck_assert_int_eq(ask("run", DTL_DTYPE_F16).verdict, DTL_KERNELS_ACCEPTS);
	struct dtl_kernels_answer a = ask("run", DTL_DTYPE_BF16);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "run: unsupported dtype BFloat16");

	c = contract("need_half");
	e = evidence_at(c, DTL_KERNELS_FACT_ASSERT, 11);
	ck_assert_uint_eq(e->types, F16);
	a = ask("need_half", DTL_DTYPE_F32);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "need_half wants Half, got Float");

	c = contract("sw");
	e = evidence_at(c, DTL_KERNELS_FACT_SWITCH, 16);
	ck_assert_uint_eq(e->types, F32 | F64);
	ck_assert_uint_eq(e->guarded_types, BF16);
	ck_assert(e->throws);
	ck_assert_uint_eq(evidence_at(c, DTL_KERNELS_FACT_ACCESSOR, 19)->when &
	                      dtl_kernels_all_dtypes(),
	                  F32 | F64);
	a = ask("sw", DTL_DTYPE_I32);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "sw: Int unsupported");
	/* the float32 path reaches data_ptr<double>: next to a switch it is only a warning */
	a = ask("sw", DTL_DTYPE_F32);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_MAY_REJECT);
	ck_assert_str_eq(a.message, "expected scalar type Double but found Float");

	c = contract("acc");
	ck_assert_uint_eq(c->accessor_types, F16 | I64);
	ck_assert_str_eq(evidence_at(c, DTL_KERNELS_FACT_ACCESSOR, 31)->param, "idx");
	a = ask("acc", DTL_DTYPE_F32);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "expected scalar type Half but found Float");
	struct dtl_kernels_query q = {.op = "acc", .param = "idx", .dtype = DTL_DTYPE_I64};
	ck_assert_int_eq(dtl_kernels_query(&kernels, &q, &a, &error), 0);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_ACCEPTS);
}
END_TEST

/* ---- registrations ---- */

static const char reg_src[] =
    "namespace ops { at::Tensor scoped(at::Tensor x) {\n"
    "  TORCH_CHECK(x.scalar_type() == at::kFloat, \"scoped\"); return x; } }\n"
    "at::Tensor bare(at::Tensor x) { TORCH_CHECK(x.scalar_type() == at::kDouble, \"bare\"); return "
    "x; }\n"
    "template <typename T>\n"
    "at::Tensor ds_quantize(at::Tensor vals, int groups) {\n" /* 5 */
    "  T *p = vals.data_ptr<T>();\n"                          /* 6 */
    "  return vals;\n"
    "}\n"
    "at::Tensor foo_cpu(const at::Tensor &self) {\n" /* 9 */
    "  AT_DISPATCH_ALL_TYPES(self.scalar_type(), \"foo_cpu\", [&] {}); return self; }\n"
    "at::Tensor foo_cuda(const at::Tensor &self) {\n" /* 11 */
    "  AT_DISPATCH_REDUCED_FLOATING_TYPES(self.scalar_type(), \"foo_cuda\", [&] {}); return self; "
    "}\n"
    "at::Tensor baz(at::Tensor a) { AT_DISPATCH_INTEGRAL_TYPES(a.scalar_type(), \"baz\", [&] {}); "
    "return a; }\n"
    "at::Tensor frag(at::Tensor a) { TORCH_CHECK(a.scalar_type() == at::kInt, \"frag\"); return a; "
    "}\n"
    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
    "  m.def(\"scoped\", &ops::scoped, \"doc\", py::arg(\"x\"));\n"
    "  m.def(\"bare\", bare);\n"
    "  m.def(\"ds_quantize_fp16\", &ds_quantize<__half>);\n"
    "  m.def(\"ds_quantize_fp32\", &ds_quantize<float>);\n"
    "  m.def(\"lam\", [](at::Tensor t) {\n"                                    /* 20 */
    "    TORCH_CHECK(t.scalar_type() == at::kBFloat16, \"lam wants bf16\");\n" /* 21 */
    "    return t;\n"
    "  });\n"
    "  py::class_<Foo>(m, \"Foo\").def(py::init<>());\n"
    "}\n"
    "TORCH_LIBRARY(myops, m) {\n"
    "  m.def(\"foo(Tensor self) -> Tensor\");\n"
    "  m.impl(\"foo\", TORCH_FN(foo_cpu));\n"
    "}\n"
    "TORCH_LIBRARY_IMPL(myops, CUDA, m) {\n"
    "  m.impl(\"foo\", &foo_cuda);\n" /* 31 */
    "}\n"
    "TORCH_LIBRARY_FRAGMENT(myops, m) { m.def(\"frag\", frag); }\n"
    "static auto registry = torch::RegisterOperators()\n"
    "  .op(\"myops::baz(Tensor a) -> Tensor\", &baz);\n" /* 35 */;

START_TEST(registrations)
{
	static const struct dtl_kernels_source src[] = {SRC("/r/reg.cpp", reg_src)};
	const struct dtl_kernels_contract *c;

	scan(src, 1);
	ck_assert_uint_eq(kernels.n_contracts, 9);
	c = contract("scoped");
	ck_assert_str_eq(c->function, "ops::scoped");
	ck_assert_uint_eq(c->asserted_types, F32);
	ck_assert_uint_eq(c->definition_line, 1);
	ck_assert_uint_eq(contract("bare")->asserted_types, F64);

	/* &ds_quantize<__half>: T is float16 in this binding */
	c = contract("ds_quantize_fp16");
	ck_assert_str_eq(c->function, "ds_quantize<__half>");
	ck_assert_uint_eq(c->template_types, F16);
	ck_assert_uint_eq(c->accessor_types, F16);
	ck_assert_str_eq(evidence_at(c, DTL_KERNELS_FACT_ACCESSOR, 6)->template_param, "T");
	struct dtl_kernels_answer a = ask("ds_quantize_fp16", DTL_DTYPE_BF16);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "expected scalar type Half but found BFloat16");
	ck_assert_uint_eq(contract("ds_quantize_fp32")->accessor_types, F32);

	c = contract("lam");
	ck_assert_str_eq(c->function, "<lambda>");
	ck_assert_uint_eq(c->n_inputs, 1);
	ck_assert_str_eq(c->inputs[0].name, "t");
	a = ask("lam", DTL_DTYPE_F16);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "lam wants bf16");
	ck_assert_uint_eq(a.evidence->line, 21);

	/* TORCH_LIBRARY schema-only def + impl, TORCH_LIBRARY_IMPL for CUDA */
	const struct dtl_kernels_contract *foo;
	ck_assert_uint_eq(dtl_kernels_find(&kernels, "myops::foo", &foo), 2);
	ck_assert_uint_eq(dtl_kernels_find(&kernels, "torch.ops.myops.foo", &foo), 2);
	ck_assert_uint_eq(dtl_kernels_find(&kernels, "myops.foo", &foo), 2);
	ck_assert_uint_eq(dtl_kernels_find(&kernels, "myops::foo", &foo), 2);
	ck_assert_int_eq(foo[0].binding, DTL_KERNELS_BINDING_TORCH_LIBRARY);
	ck_assert_str_eq(foo[0].function, "foo_cpu");
	ck_assert_str_eq(foo[0].schema, "foo(Tensor self) -> Tensor");
	ck_assert_int_eq(foo[1].binding, DTL_KERNELS_BINDING_TORCH_LIBRARY_IMPL);
	ck_assert_str_eq(foo[1].dispatch_key, "CUDA");
	ck_assert_str_eq(foo[1].backend, "cuda");
	ck_assert_uint_eq(foo[1].line, 31);
	ck_assert_uint_eq(foo[1].dispatch_types, F16 | BF16);
	/* the CUDA impl decides on cuda, the worst impl otherwise */
	ck_assert_int_eq(ask_on("foo", DTL_DTYPE_F16, "cuda").verdict, DTL_KERNELS_ACCEPTS);
	a = ask("foo", DTL_DTYPE_F16);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "\"foo_cpu\" not implemented for 'Half'");

	const struct dtl_kernels_contract *none = (const void *)1;
	ck_assert_uint_eq(dtl_kernels_find(&kernels, "other::foo", &none), 0);
	ck_assert_ptr_null(none);

	c = contract("frag");
	ck_assert_int_eq(c->binding, DTL_KERNELS_BINDING_TORCH_LIBRARY_FRAGMENT);
	ck_assert_str_eq(c->ns, "myops");
	c = contract("baz");
	ck_assert_int_eq(c->binding, DTL_KERNELS_BINDING_REGISTER_OPERATORS);
	ck_assert_str_eq(c->ns, "myops");
	ck_assert_str_eq(c->schema, "myops::baz(Tensor a) -> Tensor");
	ck_assert_uint_eq(c->line, 35);
	ck_assert_uint_eq(c->dispatch_types, INTS);
}
END_TEST

/* ---- the call graph ---- */

static const char graph_src[] =
    "void launcher(at::Tensor t, int n) {\n"
    "  AT_DISPATCH_FLOATING_TYPES(t.scalar_type(), \"launcher\", [&] {});\n" /* 2 */
    "}\n"
    "void helper(int n, at::Tensor a) { launcher(a.contiguous(), n); }\n"
    "at::Tensor entry(at::Tensor input) { helper(3, input); return input; }\n"
    "at::Tensor op_impl(at::Tensor src);\n"
    "at::Tensor op_cuda(at::Tensor source) {\n" /* 7 */
    "  TORCH_CHECK(source.scalar_type() == at::kHalf, \"op_cuda: half only\");\n"
    "  return source;\n"
    "}\n"
    "REGISTER_DEVICE_IMPL(op_impl, CUDA, op_cuda);\n"
    "at::Tensor op_impl(at::Tensor src) { return DISPATCH_DEVICE_IMPL(op_impl, src); }\n"
    "at::Tensor via_registry(at::Tensor src) { return op_impl(src); }\n"
    "class ScatterSum : public torch::autograd::Function<ScatterSum> {\n"
    " public:\n"
    "  static variable_list forward(AutogradContext *ctx, Variable src) {\n"
    "    TORCH_CHECK(src.scalar_type() == at::kFloat, \"sum: float only\");\n" /* 17 */
    "    return {src};\n"
    "  }\n"
    "};\n"
    "at::Tensor scatter_sum(at::Tensor src) { return ScatterSum::apply(src)[0]; }\n"
    "PYBIND11_MODULE(g, m) {\n"
    "  m.def(\"entry\", &entry); m.def(\"via_registry\", &via_registry);\n"
    "  m.def(\"scatter_sum\", &scatter_sum);\n"
    "}\n";

START_TEST(call_graph)
{
	static const struct dtl_kernels_source src[] = {SRC("/g/graph.cpp", graph_src)};

	scan(src, 1);
	/* entry(input) -> helper(3, input) -> launcher(a.contiguous(), n): t is input */
	const struct dtl_kernels_contract *c = contract("entry");
	const struct dtl_kernels_evidence *e = evidence_at(c, DTL_KERNELS_FACT_DISPATCH, 2);
	ck_assert_uint_eq(e->call_depth, 2);
	ck_assert_str_eq(e->function, "launcher");
	ck_assert_str_eq(e->subject, "t");
	ck_assert_str_eq(e->param, "input");
	ck_assert_uint_eq(c->inputs[0].accepts, F32 | F64);
	ck_assert_uint_eq(c->inputs[0].call_depth, 2);
	struct dtl_kernels_answer a = ask("entry", DTL_DTYPE_BF16);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "\"launcher\" not implemented for 'BFloat16'");

	/* via_registry -> op_impl -(REGISTER_DEVICE_IMPL)-> op_cuda: no argument mapping, and
	 * the names differ, so the fact is not mapped to a parameter: only a warning */
	c = contract("via_registry");
	e = evidence_at(c, DTL_KERNELS_FACT_ASSERT, 8);
	ck_assert_uint_eq(e->call_depth, 2);
	ck_assert_ptr_null(e->param);
	ck_assert_int_eq(ask("via_registry", DTL_DTYPE_F32).verdict, DTL_KERNELS_MAY_REJECT);

	/* ScatterSum::apply reaches ScatterSum::forward; src matches by name */
	c = contract("scatter_sum");
	e = evidence_at(c, DTL_KERNELS_FACT_ASSERT, 17);
	ck_assert_str_eq(e->function, "forward");
	ck_assert_uint_eq(e->call_depth, 1);
	ck_assert_str_eq(e->param, "src");
	ck_assert_int_eq(ask("scatter_sum", DTL_DTYPE_F16).verdict, DTL_KERNELS_REJECTS);
}
END_TEST

START_TEST(depth_limit)
{
	static const struct dtl_kernels_source src[] = {SRC("/g/graph.cpp", graph_src)};
	struct dtl_kernels_options options;

	dtl_kernels_fini(&kernels);
	dtl_kernels_options_default(&options);
	ck_assert_uint_eq(options.max_depth, 6);
	options.max_depth = 1;
	ck_assert_int_eq(dtl_kernels_init(&kernels, &arena, &options, &error), 0);
	scan(src, 1);
	ck_assert_uint_eq(contract("entry")->n_evidence, 0);
	ck_assert_int_eq(ask("entry", DTL_DTYPE_BF16).verdict, DTL_KERNELS_UNKNOWN);
	ck_assert_uint_eq(contract("scatter_sum")->n_evidence, 1);

	options.max_depth = 1000;
	dtl_kernels_fini(&kernels);
	ck_assert_int_eq(dtl_kernels_init(&kernels, &arena, &options, &error), -EINVAL);
	ck_assert_ptr_nonnull(strstr(error.message, "depth"));
}
END_TEST

/* ---- robustness ---- */

START_TEST(missing_headers)
{
	static const char cpp[] =
	    "#include <torch/extension.h>\n"
	    "#include <ATen/cuda/CUDAContext.h>\n"
	    "#include <vector>\n"
	    "#include \"does_not_exist.h\"\n"
	    "std::vector<at::Tensor> op(const std::vector<at::Tensor> &xs,\n"
	    "                           c10::optional<at::Tensor> bias) {\n"
	    "  TORCH_CHECK(xs[0].scalar_type() == at::kHalf, \"half\");\n"
	    "  undefined_macro(xs) <<< garbage;\n"
	    "  return xs;\n"
	    "}\n"
	    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"op\", &op); }\n";
	static const struct dtl_kernels_source src[] = {SRC("/m/op.cpp", cpp)};

	scan(src, 1);
	ck_assert_uint_eq(kernels.stats.files, 1);
	ck_assert_uint_eq(kernels.stats.files_failed, 0);
	ck_assert_uint_eq(kernels.n_files, 1);
	ck_assert_uint_gt(kernels.files[0].diagnostics, 0);
	const struct dtl_kernels_contract *c = contract("op");
	ck_assert_uint_eq(c->asserted_types, F16);
	ck_assert_uint_eq(c->n_inputs, 2);
	ck_assert_str_eq(c->inputs[0].name, "xs");
	ck_assert(c->inputs[0].tensor);
	ck_assert_str_eq(c->inputs[1].name, "bias");
	ck_assert(c->inputs[1].tensor);
	ck_assert_str_eq(c->evidence[0].param, "xs");
}
END_TEST

START_TEST(errors)
{
	static const char *const missing[] = {"/nonexistent/dtypelint-kernels"};
	static const char cpp[] =
	    "void f(at::Tensor x) {}\nPYBIND11_MODULE(e, m) { m.def(\"f\", &f); }\n";
	static const struct dtl_kernels_source src[] = {SRC("/e/f.cpp", cpp)};
	struct dtl_kernels_query q = {.op = "nope", .dtype = DTL_DTYPE_F32};
	struct dtl_kernels_answer a;

	ck_assert_int_eq(dtl_kernels_scan_dirs(&kernels, missing, 1, &error), -ENOENT);
	ck_assert_str_eq(error.loc.file, "/nonexistent/dtypelint-kernels");
	scan(src, 1);
	ck_assert_int_eq(dtl_kernels_query(&kernels, &q, &a, &error), -ENOENT);
	ck_assert_ptr_nonnull(strstr(error.message, "'nope'"));
	q.op = "f";
	q.dtype = DTL_DTYPE_NONE;
	ck_assert_int_eq(dtl_kernels_query(&kernels, &q, &a, &error), -EINVAL);
	q.dtype = DTL_DTYPE_F32;
	ck_assert_int_eq(dtl_kernels_query(&kernels, &q, &a, &error), 0);
	ck_assert_int_eq(a.verdict, DTL_KERNELS_UNKNOWN);

	ck_assert_int_eq(dtl_kernels_scan_file(&kernels, "/nonexistent/x.cpp", &error), -ENOENT);
	ck_assert_int_eq(dtl_kernels_scan_file(&kernels, DTL_KERNELS_TREE, &error), -EINVAL);
	/* scan_file does not link: queries refuse stale contracts */
	ck_assert_int_eq(
	    dtl_kernels_scan_file(&kernels, DTL_KERNELS_TREE "/csrc/ops/ops.cpp", &error), 0);
	ck_assert_int_eq(dtl_kernels_query(&kernels, &q, &a, &error), -EINVAL);
	ck_assert_int_eq(dtl_kernels_write_text(stdout, &kernels, &error), -EINVAL);
	ck_assert_int_eq(dtl_kernels_link(&kernels, &error), 0);
	ck_assert_int_eq(dtl_kernels_query(&kernels, &q, &a, &error), 0);

	/* limits */
	struct dtl_kernels_options options;
	dtl_kernels_fini(&kernels);
	dtl_kernels_options_default(&options);
	options.max_file_size = 8;
	ck_assert_int_eq(dtl_kernels_init(&kernels, &arena, &options, &error), 0);
	ck_assert_int_eq(dtl_kernels_scan_sources(&kernels, src, 1, &error), -EFBIG);
	dtl_kernels_fini(&kernels);
	dtl_kernels_fini(&kernels); /* idempotent */
	dtl_kernels_fini(NULL);
	ck_assert_int_eq(dtl_kernels_init(&kernels, &arena, NULL, &error), 0);
}
END_TEST

/* #if branches that duplicate a signature, constructors with brace initialisers, templates */
START_TEST(structure)
{
	static const char cpp[] =
	    "#ifdef USE_NEW_API\n"
	    "at::Tensor dup(at::Tensor x, int64_t n) {\n"
	    "#else\n"
	    "at::Tensor dup(at::Tensor x) {\n"
	    "#endif\n"
	    "  TORCH_CHECK(x.scalar_type() == at::kFloat, \"dup: float only\");\n" /* 6 */
	    "  return x;\n"
	    "}\n"
	    "struct Op {\n"
	    "  Op(at::Tensor t) : t_{t}, n_(1) {\n"
	    "    TORCH_CHECK(t.scalar_type() == at::kHalf, \"Op wants half\");\n" /* 11 */
	    "  }\n"
	    "  at::Tensor t_;\n"
	    "  int n_;\n"
	    "};\n"
	    "template <typename T, int N = 4>\n"
	    "__global__ void __launch_bounds__(256) kern(T *x) { x[0] = x[1]; }\n"
	    "at::Tensor after(at::Tensor y) {\n" /* 18 */
	    "  AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), \"after\", [&] {\n"
	    "    kern<scalar_t><<<1, 256>>>(y.data_ptr<scalar_t>());\n"
	    "  });\n"
	    "  return y;\n"
	    "}\n"
	    "PYBIND11_MODULE(s, m) {\n"
	    "  m.def(\"dup\", &dup); m.def(\"after\", &after);\n"
	    "  m.def(\"make\", [](at::Tensor t) { Op o(t); return t; });\n"
	    "}\n";
	static const struct dtl_kernels_source src[] = {SRC("/s/structure.cu", cpp)};

	scan(src, 1);
	const struct dtl_kernels_contract *c = contract("dup");
	ck_assert_uint_eq(c->definition_line, 4);
	ck_assert_str_eq(evidence_at(c, DTL_KERNELS_FACT_ASSERT, 6)->function, "dup");
	c = contract("after");
	ck_assert_uint_eq(c->definition_line, 18);
	ck_assert_uint_eq(c->dispatch_types, F64 | F32);
	ck_assert_uint_eq(c->evidence[0].call_depth, 0);
	ck_assert_str_eq(c->evidence[0].function, "after");
	/* the lambda names Op: its constructor is reached, t matches by name */
	c = contract("make");
	const struct dtl_kernels_evidence *e = evidence_at(c, DTL_KERNELS_FACT_ASSERT, 11);
	ck_assert_str_eq(e->function, "Op");
	ck_assert_uint_eq(e->call_depth, 1);
	ck_assert_str_eq(e->param, "t");
	ck_assert_int_eq(ask("make", DTL_DTYPE_F32).verdict, DTL_KERNELS_REJECTS);
}
END_TEST

/* ---- a tree on disk ---- */

START_TEST(scan_tree)
{
	static const char *const dirs[] = {DTL_KERNELS_TREE "/"};

	ck_assert_int_eq(dtl_kernels_scan_dirs(&kernels, dirs, 1, &error), 0);
	/* 5 sources, the hidden directory and README.txt skipped */
	ck_assert_uint_eq(kernels.stats.files, 5);
	ck_assert_uint_eq(kernels.stats.files_failed, 0);
	ck_assert_uint_eq(kernels.n_contracts, 3);
	const struct dtl_kernels_contract *fill = contract("fill");
	ck_assert_uint_eq(fill->dispatch_types, F32 | BF16);
	ck_assert_str_eq(fill->evidence[0].macro_file, DTL_KERNELS_TREE "/csrc/includes/shim.h");
	const struct dtl_kernels_contract *xpu = contract("fill_xpu");
	ck_assert_uint_eq(xpu->dispatch_types, F16);
	ck_assert_str_eq(xpu->evidence[0].macro_file, DTL_KERNELS_TREE "/csrc/xpu/includes/shim.h");
	ck_assert_str_eq(xpu->definition_file, DTL_KERNELS_TREE "/csrc/xpu/ops/ops.cpp");

	/* scale (ops.cpp) -> scale_cuda (kern.cu): the .cu file parses as CUDA */
	const struct dtl_kernels_contract *scale = contract("scale");
	ck_assert_uint_eq(scale->dispatch_types, F64 | F32 | F16);
	const struct dtl_kernels_evidence *e = &scale->evidence[0];
	ck_assert_str_eq(e->file, DTL_KERNELS_TREE "/csrc/ops/kern.cu");
	ck_assert_uint_eq(e->line, 16);
	ck_assert_uint_eq(e->call_depth, 1);
	ck_assert_str_eq(e->param, "input");
	ck_assert_str_eq(e->backend, "cuda");
	struct dtl_kernels_answer a = ask_on("scale", DTL_DTYPE_BF16, "cuda");
	ck_assert_int_eq(a.verdict, DTL_KERNELS_REJECTS);
	ck_assert_str_eq(a.message, "\"scale_cuda\" not implemented for 'BFloat16'");
}
END_TEST

/* the progress callback: once per file of a directory scan, done rising to the total */
struct progress_log {
	size_t calls, last_done, total;
	bool rising;
};

static void log_progress(void *data, size_t done, size_t total)
{
	struct progress_log *p = data;

	p->rising &= done == p->last_done + 1 && (!p->total || total == p->total);
	p->calls++;
	p->last_done = done;
	p->total = total;
}

START_TEST(scan_progress)
{
	static const char *const dirs[] = {DTL_KERNELS_TREE "/"};
	struct dtl_kernels_options options;
	struct progress_log log = {.rising = true};

	dtl_kernels_fini(&kernels);
	dtl_kernels_options_default(&options);
	options.progress = log_progress;
	options.progress_data = &log;
	ck_assert_int_eq(dtl_kernels_init(&kernels, &arena, &options, &error), 0);
	ck_assert_int_eq(dtl_kernels_scan_dirs(&kernels, dirs, 1, &error), 0);
	ck_assert_uint_eq(log.calls, 5);
	ck_assert_uint_eq(log.last_done, 5);
	ck_assert_uint_eq(log.total, 5);
	ck_assert(log.rising);
	/* a single file is no tree: nothing is reported */
	ck_assert_int_eq(
	    dtl_kernels_scan_file(&kernels, DTL_KERNELS_TREE "/csrc/ops/ops.cpp", &error), 0);
	ck_assert_uint_eq(log.calls, 5);
}
END_TEST

/* ---- writers ---- */

static char *capture(int (*writer)(FILE *, const struct dtl_kernels *, struct dtl_error *),
                     size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(writer(f, &kernels, &error), 0);
	fclose(f);
	return buf;
}

START_TEST(json_and_text)
{
	static const struct dtl_kernels_source src[] = {
	    SRC("/v/csrc/includes/type_shim.h", shim_h),
	    SRC("/v/csrc/adam/multi_tensor_adam.cu", adam_cu),
	    SRC("/c/checks.cpp", checks_src),
	};
	size_t len;

	scan(src, 3);
	char *json = capture(dtl_kernels_write_json, &len);
	cJSON *root = cJSON_Parse(json);
	ck_assert_ptr_nonnull(root);
	ck_assert_int_eq(cJSON_GetObjectItem(root, "version")->valueint, 1);
	ck_assert_str_eq(cJSON_GetObjectItem(root, "tool")->valuestring, "dtypelint");
	cJSON *contracts = cJSON_GetObjectItem(root, "contracts");
	ck_assert_int_eq(cJSON_GetArraySize(contracts), 10);
	/* sorted by op */
	const char *prev = "";
	for (int i = 0; i < cJSON_GetArraySize(contracts); i++) {
		const char *op =
		    cJSON_GetObjectItem(cJSON_GetArrayItem(contracts, i), "op")->valuestring;
		ck_assert_int_le(strcmp(prev, op), 0);
		prev = op;
	}
	cJSON *attn = NULL, *adam = NULL;
	for (int i = 0; i < cJSON_GetArraySize(contracts); i++) {
		cJSON *item = cJSON_GetArrayItem(contracts, i);
		const char *op = cJSON_GetObjectItem(item, "op")->valuestring;
		if (strcmp(op, "attn") == 0)
			attn = item;
		if (strcmp(op, "multi_tensor_adam") == 0)
			adam = item;
	}
	ck_assert_ptr_nonnull(attn);
	ck_assert_ptr_nonnull(adam);
	ck_assert_str_eq(cJSON_GetObjectItem(attn, "op")->valuestring, "attn");
	ck_assert_str_eq(cJSON_GetObjectItem(attn, "namespace")->valuestring, "chk");
	ck_assert_str_eq(cJSON_GetObjectItem(attn, "function")->valuestring, "attn");
	ck_assert_str_eq(cJSON_GetObjectItem(attn, "file")->valuestring, "/c/checks.cpp");
	ck_assert_int_eq(cJSON_GetObjectItem(attn, "line")->valueint, 47);
	cJSON *asserted = cJSON_GetObjectItem(attn, "asserted_types");
	ck_assert_int_eq(cJSON_GetArraySize(asserted), 2);
	ck_assert_str_eq(cJSON_GetArrayItem(asserted, 0)->valuestring, "bfloat16");
	ck_assert_str_eq(cJSON_GetArrayItem(asserted, 1)->valuestring, "float16");
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(attn, "dispatch_types")), 0);
	cJSON *inputs = cJSON_GetObjectItem(attn, "inputs");
	ck_assert_int_eq(cJSON_GetArraySize(inputs), 3);
	ck_assert_str_eq(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(inputs, 1), "same_dtype_as")->valuestring, "q");
	cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItem(attn, "evidence"), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(ev, "file")->valuestring, "/c/checks.cpp");
	ck_assert_int_eq(cJSON_GetObjectItem(ev, "line")->valueint, 3);
	ck_assert_str_eq(cJSON_GetObjectItem(ev, "kind")->valuestring, "assert");
	ck_assert_int_eq(cJSON_GetObjectItem(ev, "call_depth")->valueint, 0);
	ck_assert(cJSON_IsArray(cJSON_GetObjectItem(ev, "ifdef_guards")));
	ev = cJSON_GetArrayItem(cJSON_GetObjectItem(adam, "evidence"), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(ev, "macro")->valuestring,
	                 "DISPATCH_DOUBLE_FLOAT_AND_HALF");
	ck_assert_str_eq(cJSON_GetObjectItem(ev, "message")->valuestring,
	                 "\"adam\" not implemented for '{ScalarType}'");
	cJSON_Delete(root);

	/* byte-identical when the sources come in another order */
	static const struct dtl_kernels_source reversed[] = {
	    SRC("/c/checks.cpp", checks_src),
	    SRC("/v/csrc/adam/multi_tensor_adam.cu", adam_cu),
	    SRC("/v/csrc/includes/type_shim.h", shim_h),
	};
	dtl_kernels_fini(&kernels);
	ck_assert_int_eq(dtl_kernels_init(&kernels, &arena, NULL, &error), 0);
	scan(reversed, 3);
	size_t len2;
	char *json2 = capture(dtl_kernels_write_json, &len2);
	ck_assert_uint_eq(len, len2);
	ck_assert_str_eq(json, json2);
	free(json);
	free(json2);

	char *text = capture(dtl_kernels_write_text, &len);
	size_t lines = 0;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	ck_assert_uint_eq(lines, 10);
	ck_assert_ptr_nonnull(strstr(text, "/c/checks.cpp:47: op 'chk::attn' (torch_library) -> "
	                                   "attn: asserted [bfloat16, float16] (3 facts, first "
	                                   "assert at /c/checks.cpp:3, depth 0)\n"));
	ck_assert_ptr_nonnull(strstr(text, "op 'multi_tensor_adam' (pybind11) -> "
	                                   "multi_tensor_adam: dispatch [float32, bfloat16, "
	                                   "float16, float64]"));
	free(text);
}
END_TEST

START_TEST(dtype_names)
{
	char buf[64];

	ck_assert_str_eq(dtl_kernels_dtype_name(DTL_DTYPE_BF16), "bfloat16");
	ck_assert_str_eq(dtl_kernels_dtype_name(33), "complex64");
	ck_assert_ptr_null(dtl_kernels_dtype_name(0));
	ck_assert_ptr_null(dtl_kernels_dtype_name(63));
	ck_assert_str_eq(dtl_kernels_scalar_type_name(DTL_DTYPE_F16), "Half");
	ck_assert_str_eq(dtl_kernels_scalar_type_name(34), "ComplexDouble");
	ck_assert_uint_eq(dtl_kernels_format_dtypes(F32 | F16, buf, sizeof(buf)), 16);
	ck_assert_str_eq(buf, "float32, float16");
	ck_assert_uint_eq(dtl_kernels_format_dtypes(F32 | F16, buf, 9), 16);
	ck_assert_str_eq(buf, "float32");
	ck_assert_uint_eq(dtl_kernels_all_dtypes() & 1, 0);
	ck_assert_str_eq(dtl_kernels_verdict_name(DTL_KERNELS_MAY_REJECT), "may-reject");
	ck_assert_str_eq(dtl_kernels_binding_name(DTL_KERNELS_BINDING_TORCH_LIBRARY_IMPL),
	                 "torch_library_impl");
}
END_TEST

/* libclang is dlopen()ed (issue 6): the loader's errors, and a set loading the library that
 * options.libclang_path names. */
START_TEST(libclang_loader)
{
	static const struct dtl_kernels_source src[] = {
	    SRC("/l/a.cpp", "void a(at::Tensor x) { AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "
	                    "\"a\", [&] {}); }\nPYBIND11_MODULE(l, m) { m.def(\"a\", &a); }\n")};
	struct dtl_libclang lc, zero = {0};
	struct dtl_kernels k2;

	ck_assert_int_eq(dtl_kernels_libclang_open(&lc, "/nonexistent/libclang.so.1", &error),
	                 -ENOENT);
	ck_assert_str_eq(error.loc.file, "");
	ck_assert_ptr_nonnull(
	    strstr(error.message, "cannot load libclang '/nonexistent/libclang.so.1': "));
	ck_assert_ptr_null(lc.handle);
	/* a library that is not libclang: the first missing function is named */
	ck_assert_int_eq(dtl_kernels_libclang_open(&lc, "libc.so.6", &error), -ENOSYS);
	ck_assert_ptr_nonnull(strstr(error.message, "'libc.so.6' is not a usable libclang: "));
	ck_assert_ptr_nonnull(strstr(error.message, "clang_createIndex"));
	ck_assert_ptr_null(lc.handle);
	ck_assert_ptr_null(lc.tokenize);
	dtl_kernels_libclang_close(&zero);
	/* options.libclang_path: the set loads that library, and says so when it cannot */
	struct dtl_kernels_options options;
	dtl_kernels_options_default(&options);
	options.libclang_path = "/nonexistent/libclang.so.1";
	ck_assert_int_eq(dtl_kernels_init(&k2, &arena, &options, &error), -ENOENT);
	ck_assert_ptr_nonnull(
	    strstr(error.message, "cannot load libclang '/nonexistent/libclang.so.1': "));
	dtl_kernels_fini(&k2);

	ck_assert_int_eq(dtl_kernels_libclang_open(&lc, NULL, &error), 0);
	ck_assert_str_eq(lc.path, dtl_kernels_libclang_default_path());
	ck_assert_ptr_nonnull(lc.createIndex);
	ck_assert_ptr_nonnull(lc.Cursor_isMacroFunctionLike);
	options.libclang_path = lc.path;
	ck_assert_int_eq(dtl_kernels_init(&k2, &arena, &options, &error), 0);
	ck_assert_int_eq(dtl_kernels_scan_sources(&k2, src, 1, &error), 0);
	ck_assert_uint_eq(k2.n_contracts, 1);
	ck_assert_uint_eq(k2.contracts[0].dispatch_types, F32 | F64);
	dtl_kernels_fini(&k2);
	ck_assert_ptr_nonnull(lc.handle); /* the set's own load is counted apart from this one */
	dtl_kernels_libclang_close(&lc);
	ck_assert_ptr_null(lc.handle);
}
END_TEST

/*
 * The sandbox (issue 21): files scan in batches of child processes; a child that crashes on
 * one file (DTYPELINT_TEST_KERNEL_CHILD, src/kernels/sandbox.c) fails that file only, and the
 * files after it in the batch are scanned by a new child. Results cross the pipe intact.
 */
START_TEST(sandbox_batch)
{
	static const char op[] = "#include <torch/extension.h>\n"
	                         "void f(at::Tensor t) {\n"
	                         "  AT_DISPATCH_FLOATING_TYPES(t.scalar_type(), \"f\", [&] {});\n"
	                         "}\n"
	                         "PYBIND11_MODULE(ext, m) { m.def(\"OP\", &f); }\n";
	char texts[3][sizeof(op) + 16];
	const char *names[3] = {"a_op", "misbehave_op", "z_op"};
	struct dtl_kernels_source src[3];
	const struct dtl_error *failures;

	for (int i = 0; i < 3; i++) {
		const char *at = strstr(op, "OP");
		snprintf(texts[i], sizeof(texts[i]), "%.*s%s%s", (int)(at - op), op, names[i],
		         at + 2);
		src[i].text = texts[i];
		src[i].length = strlen(texts[i]);
	}
	src[0].path = "ext/a.cpp";
	src[1].path = "ext/misbehave.cpp";
	src[2].path = "ext/z.cpp";
	setenv("DTYPELINT_TEST_KERNEL_CHILD", "crash", 1);
	int r = dtl_kernels_scan_sources(&kernels, src, 3, &error);
	unsetenv("DTYPELINT_TEST_KERNEL_CHILD");
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(kernels.stats.files, 2);
	ck_assert_uint_eq(kernels.stats.files_failed, 1);
	ck_assert_uint_eq(kernels.n_files, 3);
	ck_assert(!kernels.files[0].failed && kernels.files[1].failed && !kernels.files[2].failed);
	ck_assert_uint_eq(dtl_kernels_file_errors(&kernels, &failures), 1);
	ck_assert_str_eq(failures[0].loc.file, "ext/misbehave.cpp");
	ck_assert_uint_eq(failures[0].loc.line, 1);
	ck_assert_ptr_nonnull(strstr(failures[0].message, "crashed"));
	ck_assert_uint_eq(contract("a_op")->dispatch_types, F32 | F64);
	ck_assert_uint_eq(contract("z_op")->dispatch_types, F32 | F64);
	ck_assert_str_eq(contract("z_op")->file, "ext/z.cpp");
	ck_assert_uint_eq(contract("z_op")->line, 5);
	const struct dtl_kernels_contract *none = NULL;
	ck_assert_uint_eq(dtl_kernels_find(&kernels, "misbehave_op", &none), 0);
}
END_TEST

/* An in-memory source may include the other sources, and nothing on disk. */
START_TEST(sandbox_in_memory_includes)
{
	static const struct dtl_kernels_source src[] = {
	    SRC("ext/ok.cpp", "#include \"shim.h\"\nvoid f() {}\n"),
	    SRC("ext/shim.h", "#define SHIM 1\n"),
	    SRC("ext/bad.cpp", "int a;\n#include \"" DTL_KERNELS_TREE "/csrc/includes/shim.h\"\n"),
	};
	const struct dtl_error *failures;

	scan(src, 3);
	ck_assert_uint_eq(kernels.stats.files_failed, 1);
	ck_assert_uint_eq(dtl_kernels_file_errors(&kernels, &failures), 1);
	ck_assert_str_eq(failures[0].loc.file, "ext/bad.cpp");
	ck_assert_uint_eq(failures[0].loc.line, 2);
	ck_assert_ptr_nonnull(strstr(failures[0].message, "outside the scanned directories"));
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-kernels-registered.h"

static void add_tests(TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("kernels")
