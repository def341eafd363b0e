/* SPDX-License-Identifier: MIT */
/* Unit tests of src/core: dtypes, globs, versions, arena and string map. */
#include <stdio.h>
#include <string.h>

#include "dtl-test.h"
#include "dtypelint/arena.h"
#include "dtypelint/dtype.h"
#include "dtypelint/glob.h"
#include "dtypelint/version.h"

#define PARSE(s)   dtl_dtype_parse((s), strlen(s))
#define GLOB(p, s) dtl_glob_match((p), strlen(p), (s), strlen(s))

START_TEST(dtype_names_and_aliases)
{
	ck_assert_int_eq(PARSE("bfloat16"), DTL_DTYPE_BF16);
	ck_assert_int_eq(PARSE("torch.bfloat16"), DTL_DTYPE_BF16);
	ck_assert_int_eq(PARSE("bf16"), DTL_DTYPE_BF16);
	ck_assert_int_eq(PARSE("BF16"), DTL_DTYPE_BF16);
	ck_assert_int_eq(PARSE("half"), DTL_DTYPE_F16);
	ck_assert_int_eq(PARSE("double"), DTL_DTYPE_F64);
	ck_assert_int_eq(PARSE("F8_E4M3"), DTL_DTYPE_F8_E4M3FN);
	ck_assert_int_eq(PARSE("U8"), DTL_DTYPE_U8);
	ck_assert_int_eq(PARSE("Bfloat16"), DTL_DTYPE_NONE);
	ck_assert_int_eq(PARSE("torch."), DTL_DTYPE_NONE);
	ck_assert_int_eq(PARSE(""), DTL_DTYPE_NONE);
	ck_assert_str_eq(dtl_dtype_torch_name(DTL_DTYPE_F32), "torch.float32");
	ck_assert_str_eq(dtl_dtype_scalar_type_name(DTL_DTYPE_BF16), "BFloat16");
	ck_assert_uint_eq(dtl_dtype_itemsize(DTL_DTYPE_BF16), 2);
	ck_assert(dtl_dtype_is_floating(DTL_DTYPE_F8_E5M2));
	ck_assert(!dtl_dtype_is_floating(DTL_DTYPE_U8));
}
END_TEST

START_TEST(dtype_promotion)
{
	ck_assert_int_eq(dtl_dtype_promote(DTL_DTYPE_BF16, DTL_DTYPE_F32), DTL_DTYPE_F32);
	ck_assert_int_eq(dtl_dtype_promote(DTL_DTYPE_BF16, DTL_DTYPE_F16), DTL_DTYPE_F32);
	ck_assert_int_eq(dtl_dtype_promote(DTL_DTYPE_BF16, DTL_DTYPE_I64), DTL_DTYPE_BF16);
	ck_assert_int_eq(dtl_dtype_promote(DTL_DTYPE_U8, DTL_DTYPE_I8), DTL_DTYPE_I16);
	ck_assert_int_eq(dtl_dtype_promote(DTL_DTYPE_BOOL, DTL_DTYPE_I32), DTL_DTYPE_I32);
}
END_TEST

START_TEST(glob_matching)
{
	ck_assert(GLOB("model.layers.*", "model.layers.0"));
	ck_assert(!GLOB("model.layers.*", "model.layers.0.mlp"));
	ck_assert(GLOB("model.**", "model.layers.0.mlp"));
	ck_assert(GLOB("model.**", "model"));
	ck_assert(GLOB("**.weight", "weight"));
	ck_assert(GLOB("a.**.b", "a.b"));
	ck_assert(GLOB("a.**.b", "a.x.y.b"));
	ck_assert(!GLOB("a.**.b", "a.x.y.c"));
	ck_assert(GLOB("layer*", "layers"));
	ck_assert(!GLOB("layer*", "layers.0"));
	ck_assert(GLOB("*.mlp*", "h.mlp1"));
	ck_assert(GLOB("**", ""));
	ck_assert(!GLOB("*", ""));
	ck_assert(GLOB("a.b", "a.b"));
	ck_assert(!GLOB("a.b", "a.bc"));
	ck_assert_ptr_null(dtl_glob_check("model.**.w", 10));
	ck_assert_ptr_nonnull(dtl_glob_check("a..b", 4));
	ck_assert_ptr_nonnull(dtl_glob_check("a.b**", 5));
	ck_assert_ptr_nonnull(dtl_glob_check(".a", 2));
	ck_assert_ptr_nonnull(dtl_glob_check("", 0));
}
END_TEST

static int cmp(const char *a, const char *b)
{
	struct dtl_version va, vb;
	ck_assert_int_eq(dtl_version_parse(a, strlen(a), &va), 0);
	ck_assert_int_eq(dtl_version_parse(b, strlen(b), &vb), 0);
	return dtl_version_compare(&va, &vb);
}

START_TEST(versions)
{
	struct dtl_version v;
	char buf[32];

	ck_assert_int_lt(cmp("0.19.2", "0.19.3"), 0);
	ck_assert_int_eq(cmp("2.1", "2.1.0"), 0);
	ck_assert_int_lt(cmp("2.8.0.dev20250501", "2.8.0"), 0);
	ck_assert_int_lt(cmp("2.8.0rc1", "2.8.0"), 0);
	ck_assert_int_lt(cmp("2.8.0a1", "2.8.0b1"), 0);
	ck_assert_int_eq(cmp("2.1.0+cu121", "2.1.0"), 0);
	ck_assert_int_gt(cmp("1.10.0", "1.9.0"), 0);
	ck_assert_int_lt(dtl_version_parse("latest", 6, &v), 0);
	ck_assert_int_lt(dtl_version_parse("", 0, &v), 0);
	ck_assert_int_lt(dtl_version_parse("2.x", 3, &v), 0);
	ck_assert_int_eq(dtl_version_parse("4.57.0.dev0", 11, &v), 0);
	ck_assert_str_eq(dtl_version_format(&v, buf, sizeof(buf)), "4.57.dev0");
}
END_TEST

START_TEST(arena_and_strmap)
{
	struct dtl_arena arena;
	struct dtl_strmap map;
	char keys[3000][8];

	dtl_arena_init(&arena);
	dtl_strmap_init(&map, &arena);
	for (int i = 0; i < 3000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		ck_assert_int_eq(dtl_strmap_put(&map, keys[i], strlen(keys[i]), i), i);
	}
	ck_assert_int_eq(dtl_strmap_put(&map, "k7", 2, 99), 7);
	ck_assert_int_eq(dtl_strmap_get(&map, "k2999", 5), 2999);
	ck_assert_int_eq(dtl_strmap_get(&map, "k3000", 5), -1);
	ck_assert_uint_eq(map.count, 3000);
	char *s = dtl_arena_sprintf(&arena, "%s-%d", "x", 42);
	ck_assert_str_eq(s, "x-42");
	ck_assert_ptr_null(dtl_arena_calloc(&arena, SIZE_MAX / 2, 4));
	unsigned char *big = dtl_arena_alloc(&arena, 1 << 20);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(big[(1 << 20) - 1], 0);
	dtl_arena_fini(&arena);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, dtype_names_and_aliases);
	tcase_add_test(tc, dtype_promotion);
	tcase_add_test(tc, glob_matching);
	tcase_add_test(tc, versions);
	tcase_add_test(tc, arena_and_strmap);
}

DTL_TEST_MAIN("core")
