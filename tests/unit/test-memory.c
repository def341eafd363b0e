/* SPDX-License-Identifier: MIT */
/* Unit tests of the per-rank memory accounting (src/sim/memory-estimate.c) and of the memory sizes
 * the plan reads (dtl_bytes_parse): the cases the reference tests do not reach. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtl-test.h"
#include "dtypelint/cli/dtypelint.h"

static struct dtl_arena arena;
static struct dtl_limits limits;
static struct dtl_error error;
static struct dtl_behavior_table behaviors;

static void setup(void)
{
	dtl_arena_init(&arena);
	dtl_limits_default(&limits);
	ck_assert_int_eq(dtl_behavior_table_load(&behaviors, &arena, &error), 0);
}

static void teardown(void)
{
	dtl_arena_fini(&arena);
}

static void size(const char *yaml, const struct dtl_memory_what_if *w, struct dtl_memory *ret)
{
	struct dtl_source src;
	struct dtl_node *root;
	struct dtl_manifest *m = dtl_arena_alloc(&arena, sizeof(*m));
	struct dtl_sim *sim = dtl_arena_alloc(&arena, sizeof(*sim));

	ck_assert_int_eq(dtl_source_init_mem(&src, "t.yaml", yaml, strlen(yaml)), 0);
	ck_assert_msg(dtl_doc_parse(&src, &arena, &limits, &root, &error) == 0, "%s",
	              error.message);
	ck_assert_msg(dtl_manifest_parse(root, "t.yaml", &arena, &limits, m, &error) == 0, "%s",
	              error.message);
	ck_assert_msg(dtl_sim_run(sim, m, &m->plan, &behaviors, &arena, &error) == 0, "%s",
	              error.message);
	dtl_memory_compute(sim, w, ret);
	dtl_source_fini(&src);
}

START_TEST(bytes_parse_units)
{
	int64_t b = 0;
	ck_assert_int_eq(dtl_bytes_parse("80GiB", &b), 0);
	ck_assert_int_eq(b, 80LL << 30);
	ck_assert_int_eq(dtl_bytes_parse("40GB", &b), 0);
	ck_assert_int_eq(b, 40000000000LL);
	ck_assert_int_eq(dtl_bytes_parse("1.5 TiB", &b), 0);
	ck_assert_int_eq(b, 3LL << 39);
	ck_assert_int_eq(dtl_bytes_parse("4096", &b), 0);
	ck_assert_int_eq(b, 4096);
}
END_TEST

START_TEST(bytes_parse_rejects_malformed)
{
	int64_t b = 0;
	ck_assert_int_eq(dtl_bytes_parse("", &b), -EINVAL);
	ck_assert_int_eq(dtl_bytes_parse("GiB", &b), -EINVAL);
	ck_assert_int_eq(dtl_bytes_parse("-1GiB", &b), -EINVAL);
	ck_assert_int_eq(dtl_bytes_parse("1e9", &b), -EINVAL);
	ck_assert_int_eq(dtl_bytes_parse("80gib", &b), -EINVAL);
	ck_assert_int_eq(dtl_bytes_parse("5PiB", &b), -EINVAL);
}
END_TEST

START_TEST(bytes_parse_out_of_range)
{
	int64_t b = 0;
	ck_assert_int_eq(dtl_bytes_parse("0", &b), -ERANGE);
	ck_assert_int_eq(dtl_bytes_parse("0.1", &b), -ERANGE);
	ck_assert_int_eq(dtl_bytes_parse("9999999TiB", &b), -ERANGE);
	ck_assert_int_eq(dtl_bytes_parse("99999999999999999999999999", &b), -ERANGE);
}
END_TEST

/* ZeRO-3 keeps persistent parameters whole, with their partition beside them (the real step
 * holds both: tests/oracle/DISAGREEMENTS.md M2), and still partitions their gradients and the
 * fp32 master; a tie is one storage; a tensor without a shape is counted apart. */
START_TEST(zero3_persistent_tied_unknown)
{
	struct dtl_memory m;
	size("dtypelint: 1\n"
	     "model: {tied: [[head.weight, embed.weight]]}\n"
	     "tensors:\n"
	     "  - {name: embed.weight, shape: [64, 8], dtype: bfloat16}\n"
	     "  - {name: norm.weight, shape: [8], dtype: bfloat16}\n"
	     "  - {name: odd.weight, dtype: bfloat16}\n"
	     "  - {name: head.weight, shape: [64, 8], dtype: bfloat16}\n"
	     "training: {strategy: zero3, precision: bf16, world_size: 4,\n"
	     "           zero3: {persistence_threshold: 8, prefetch_bucket_size: 0}}\n",
	     NULL, &m);
	ck_assert_uint_eq(m.unknown_numel, 1);
	/* embed 512 / 4 * 2 + norm 8 whole * 2 + its partition 2 * 2 */
	ck_assert_uint_eq(m.line[DTL_MEM_PARAMS].device, 256 + 16 + 4);
	ck_assert_uint_eq(m.line[DTL_MEM_GRADS].device, (512 / 4 + 2) * 2);
	ck_assert_uint_eq(m.line[DTL_MEM_OPTIMIZER].device, (512 / 4 + 2) * 12);
	/* the largest module's own parameters with their gradients */
	ck_assert_uint_eq(m.line[DTL_MEM_GATHERED].device, 512 * 4);
	ck_assert_str_eq(m.gathered_name, "embed");
}
END_TEST

static const char fsdp2_yaml[] =
    "dtypelint: 1\n"
    "model: {no_split_modules: [Block], modules: {\"layers.*\": Block}}\n"
    "tensors:\n"
    "  - {name: layers.0.w, shape: [16, 16], dtype: float32}\n"
    "  - {name: layers.1.w, shape: [16, 32], dtype: float32}\n"
    "training: {strategy: fsdp2, world_size: 2,\n"
    "           versions: {torch: \"2.7.1\", accelerate: \"1.10.0\"},\n"
    "           fsdp: {param_dtype: bfloat16, }}\n";

/* FSDP: shards in the stored dtype, the largest group gathered in param_dtype. */
START_TEST(fsdp2_shards_stored_dtype_gathers_param_dtype)
{
	struct dtl_memory m;

	size(fsdp2_yaml, NULL, &m);
	ck_assert_uint_eq(m.line[DTL_MEM_PARAMS].device, (256 + 512) / 2 * 4);
	ck_assert_uint_eq(m.line[DTL_MEM_GATHERED].device, 512 * 2 * 2);
	ck_assert_uint_eq(m.line[DTL_MEM_GATHERED].by_dtype[DTL_DTYPE_BF16], 512 * 2 * 2);
	ck_assert_uint_eq(m.line[DTL_MEM_OPTIMIZER].device, (256 + 512) / 2 * 8);
	ck_assert_uint_eq(m.host, 0);
}
END_TEST

/* cpu_offload moves shards, gradients and optimizer states to the host, not the gathered set. */
START_TEST(fsdp2_cpu_offload_keeps_only_gathered_on_device)
{
	struct dtl_memory m, off;
	struct dtl_memory_what_if w = {.fsdp_cpu_offload = true, .prefetch_bucket_size = -1};

	size(fsdp2_yaml, NULL, &m);
	size(fsdp2_yaml, &w, &off);
	ck_assert_uint_eq(off.total, m.line[DTL_MEM_GATHERED].device);
	ck_assert_uint_eq(off.host, m.total - m.line[DTL_MEM_GATHERED].device);
}
END_TEST

/* the plan's own fsdp.cpu_offload, without a what-if (an empty what-if keeps it) */
START_TEST(fsdp2_plan_cpu_offload_equals_what_if)
{
	struct dtl_memory off, planned;
	struct dtl_memory_what_if w = {.fsdp_cpu_offload = true, .prefetch_bucket_size = -1};
	struct dtl_memory_what_if keep = {.prefetch_bucket_size = -1};
	char *with_offload = dtl_arena_sprintf(&arena, "%.*scpu_offload: true}}\n",
	                                       (int)(strlen(fsdp2_yaml) - 3), fsdp2_yaml);

	size(fsdp2_yaml, &w, &off);
	size(with_offload, NULL, &planned);
	ck_assert_uint_eq(planned.host, off.host);
	size(with_offload, &keep, &planned);
	ck_assert_uint_eq(planned.host, off.host);
}
END_TEST

/* Adafactor: rows + columns for a matrix seen whole (DDP), the whole for a vector, and
 * unfactored on ZeRO-3's flat partitions. */
START_TEST(adafactor_factored_only_for_matrices)
{
	const char *ddp = "dtypelint: 1\n"
	                  "tensors:\n"
	                  "  - {name: fc.weight, shape: [30, 50], dtype: bfloat16}\n"
	                  "  - {name: fc.bias, shape: [30], dtype: bfloat16}\n"
	                  "training: {strategy: ddp, world_size: 2, optimizer: adafactor}\n";
	struct dtl_memory m;
	size(ddp, NULL, &m);
	ck_assert_uint_eq(m.line[DTL_MEM_OPTIMIZER].device, (30 + 50 + 30) * 4);
	struct dtl_memory_what_if w = {.optimizer = DTL_OPTIMIZER_SGD, .prefetch_bucket_size = -1};
	size(ddp, &w, &m);
	ck_assert_uint_eq(m.line[DTL_MEM_OPTIMIZER].device, (1500 + 30) * 2);
	size("dtypelint: 1\n"
	     "tensors:\n"
	     "  - {name: fc.weight, shape: [30, 50], dtype: bfloat16}\n"
	     "training: {strategy: zero3, precision: bf16, world_size: 2, optimizer: adafactor,\n"
	     "           zero3: {persistence_threshold: 0}}\n",
	     NULL, &m);
	ck_assert_uint_eq(m.line[DTL_MEM_OPTIMIZER].device, 750 * 4 + 750 * 4);
}
END_TEST

/* ZeRO-3's prefetch bucket: at most what is left of the model, capped by max_live. */
START_TEST(zero3_prefetch_bounded)
{
	const char *yaml =
	    "dtypelint: 1\n"
	    "tensors:\n"
	    "  - {name: a.w, shape: [100], dtype: bfloat16}\n"
	    "  - {name: b.w, shape: [60], dtype: bfloat16}\n"
	    "training: {strategy: zero3, precision: bf16, world_size: 2,\n"
	    "           zero3: {persistence_threshold: 0, max_live_parameters: 130}}\n";
	struct dtl_memory m;
	size(yaml, NULL, &m);
	/* a.w gathered with its gradient (400 B) + 30 more elements (max live 130) */
	ck_assert_uint_eq(m.line[DTL_MEM_GATHERED].device, 400 + 30 * 2);
	struct dtl_memory_what_if w = {.prefetch_bucket_size = 10};
	size(yaml, &w, &m);
	ck_assert_uint_eq(m.line[DTL_MEM_GATHERED].device, 400 + 10 * 2);
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-memory-registered.h"

static void add_tests(TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("memory")
