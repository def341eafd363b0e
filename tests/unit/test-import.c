/* SPDX-License-Identifier: MIT */
/*
 * Importers against the real public files copied into fixtures/corpus (SOURCES.md there) and
 * against files the tests write: DeepSpeed JSON, accelerate YAML, PEFT adapter configs, trainer
 * arguments, Hugging Face model folders (index-only), --export round trips.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dtl-test.h"
#include "dtypelint/cli/dtypelint.h"
#include "dtypelint/model/hf-conversion.h"
#include "dtypelint/model/import.h"
#include "dtypelint/model/schema.h"
#include "dtypelint/input/doc.h"
#include "dtypelint/input/source.h"

#ifndef DTL_SOURCE_ROOT
#define DTL_SOURCE_ROOT "."
#endif

static struct dtl_arena arena;
static struct dtl_limits limits;
static struct dtl_error error;
static char tmpdir[PATH_MAX]; /* the files one test writes; removed after it */

static void setup(void)
{
	dtl_arena_init(&arena);
	dtl_limits_default(&limits);
	memset(&error, 0, sizeof(error));
	dtl_test_mkdtemp(tmpdir, sizeof(tmpdir), "dtl-import");
}

static void teardown(void)
{
	dtl_test_rmtree(tmpdir);
	dtl_arena_fini(&arena);
}

static const char *corpus(const char *rel)
{
	static char path[1024];
	snprintf(path, sizeof(path), "%s/fixtures/corpus/%s", DTL_SOURCE_ROOT, rel);
	return path;
}

/* Writes text to name in this test's tmpdir; the path lives in the arena. */
static const char *write_tmp(const char *name, const char *text)
{
	const char *path = dtl_arena_sprintf(&arena, "%s/%s", tmpdir, name);
	ck_assert_ptr_nonnull(path);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static int ds(const char *path, struct dtl_plan *plan)
{
	dtl_plan_init(plan);
	return dtl_import_deepspeed(path, &arena, &limits, plan, &error);
}

static int acc(const char *path, struct dtl_plan *plan)
{
	dtl_plan_init(plan);
	return dtl_import_accelerate(path, &arena, &limits, plan, &error);
}

START_TEST(deepspeed_corpus)
{
	static const char *const files[] = {"AIDC-AI-Ovis-zero3_cp.json",
	                                    "PKU-YuanGroup-MoE-LLaVA-zero3.json",
	                                    "haotian-liu-LLaVA-zero3.json",
	                                    "haotian-liu-LLaVA-zero3_offload.json",
	                                    "hiyouga-LLaMA-Factory-ds_z3_config.json",
	                                    "hiyouga-LLaMA-Factory-ds_z3_fp8_config.json",
	                                    "hiyouga-LLaMA-Factory-ds_z3_offload_config.json",
	                                    "mesolitica-llm-embedding-ds_config_zero3.json",
	                                    "safr-ai-lab-pandora-llm-ds_config_zero3.json",
	                                    "zhenye234-LLaSA_training-ds_config_zero3.json",
	                                    NULL};
	struct dtl_plan plan;
	char rel[256];

	for (const char *const *f = files; *f; f++) {
		snprintf(rel, sizeof(rel), "configs/deepspeed/%s", *f);
		ck_assert_msg(ds(corpus(rel), &plan) == 0, "%s: %s", *f, error.message);
		ck_assert_int_eq(plan.strategy, DTL_STRATEGY_ZERO3);
	}
	ck_assert_int_eq(
	    ds(corpus("configs/deepspeed/safr-ai-lab-pandora-llm-ds_config_zero3.json"), &plan), 0);
	ck_assert_int_eq(plan.precision, DTL_PRECISION_FP16);
	ck_assert_int_eq(plan.zero3.persistence_threshold, 1000000); /* written 1e6 */
	ck_assert_int_eq(plan.zero3.offload_param, DTL_OFFLOAD_CPU);
	ck_assert_int_eq(
	    ds(corpus("configs/deepspeed/hiyouga-LLaMA-Factory-ds_z3_fp8_config.json"), &plan), 0);
	ck_assert_int_eq(plan.zero3.persistence_threshold, 35840);
	ck_assert_int_eq(plan.precision, DTL_PRECISION_UNSET); /* bf16 "auto" */
	ck_assert_int_eq(
	    ds(corpus("configs/deepspeed/hiyouga-LLaMA-Factory-ds_z3_config.json"), &plan), 0);
	ck_assert(plan.zero3.persistence_auto);
	ck_assert_uint_gt(plan.zero3.persistence_threshold_loc.line, 1);
	ck_assert_int_eq(
	    ds(corpus("configs/deepspeed/zhenye234-LLaSA_training-ds_config_zero3.json"), &plan),
	    0);
	ck_assert_int_eq(plan.zero3.offload_param, DTL_OFFLOAD_NONE);
}
END_TEST

START_TEST(deepspeed_refuses_bf16_with_fp16)
{
	struct dtl_plan plan;
	const char *both = write_tmp(
	    "both.json", "{\"bf16\": {\"enabled\": true},\n \"fp16\": {\"enabled\": true}}");
	ck_assert_int_lt(ds(both, &plan), 0);
	ck_assert_str_eq(error.message,
	                 "DeepSpeed refuses this config: 'RuntimeError: bfloat16 and fp16 "
	                 "cannot be enabled at once'");
	ck_assert_uint_eq(error.loc.line, 2);
}
END_TEST

START_TEST(deepspeed_bfloat16_alias_and_stage_2)
{
	struct dtl_plan plan;
	const char *alias =
	    write_tmp("alias.json",
	              "{\"bfloat16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 2},\n"
	              " \"data_types\": {\"buffer_dtype\": \"bf16\"}}");
	ck_assert_int_eq(ds(alias, &plan), 0);
	ck_assert_int_eq(plan.precision, DTL_PRECISION_BF16);
	ck_assert_int_eq(plan.strategy, DTL_STRATEGY_DDP);
	ck_assert_int_eq(plan.zero3.buffer_dtype, DTL_DTYPE_BF16);
}
END_TEST

START_TEST(deepspeed_rejects_stage_4)
{
	struct dtl_plan plan;
	const char *bad = write_tmp("bad.json", "{\"zero_optimization\": {\"stage\": 4}}");
	ck_assert_int_lt(ds(bad, &plan), 0);
	ck_assert_str_eq(error.message,
	                 "'zero_optimization.stage' must be an integer from 0 to 3, got 4");
}
END_TEST

START_TEST(accelerate_corpus)
{
	struct dtl_plan plan;
	static const char *const files[] = {"ContextualAI-HALOs-fsdp_8gpu.yaml",
	                                    "TartuNLP-llammas-deepspeed_train_config_bf16.yaml",
	                                    "TartuNLP-llammas-fsdp_config.yaml",
	                                    "acon96-home-llm-fsdp_config.yaml",
	                                    "hiyouga-LLaMA-Factory-fsdp2_config_qwen35.yaml",
	                                    "hiyouga-LLaMA-Factory-fsdp2_config_qwen35_moe.yaml",
	                                    "hiyouga-LLaMA-Factory-fsdp_config.yaml",
	                                    "hiyouga-LLaMA-Factory-fsdp_config_offload.yaml",
	                                    "huggingface-accelerate-tests-latest_fsdp.yaml",
	                                    "huggingface-alignment-handbook-fsdp.yaml",
	                                    "huggingface-alignment-handbook-fsdp_qlora.yaml",
	                                    "huggingface-alignment-handbook-zero3.yaml",
	                                    "huggingface-peft-deepspeed_config_z3_qlora.yaml",
	                                    "huggingface-peft-fsdp_config.yaml",
	                                    "huggingface-peft-fsdp_config_qlora.yaml",
	                                    "huggingface-trl-deepspeed_zero3.yaml",
	                                    "huggingface-trl-fsdp2.yaml",
	                                    "huggingface-trl-fsdp_qlora.yaml",
	                                    NULL};
	char rel[256];

	for (const char *const *f = files; *f; f++) {
		snprintf(rel, sizeof(rel), "configs/accelerate/%s", *f);
		ck_assert_msg(acc(corpus(rel), &plan) == 0, "%s: %s", *f, error.message);
	}
	ck_assert_int_eq(
	    acc(corpus("configs/accelerate/hiyouga-LLaMA-Factory-fsdp2_config_qwen35_moe.yaml"),
	        &plan),
	    0);
	ck_assert_int_eq(plan.strategy, DTL_STRATEGY_FSDP2);
	ck_assert_int_eq(plan.precision, DTL_PRECISION_BF16);
	ck_assert_int_eq(plan.world_size, 8);
	ck_assert_uint_eq(plan.fsdp.wrap.count, 2);
	ck_assert_str_eq(plan.fsdp.wrap.items[0].text, "Qwen3_5MoeDecoderLayer");
	ck_assert_str_eq(plan.fsdp.wrap.items[1].text, "Qwen3_5MoeVisionBlock");
	ck_assert_int_eq(plan.fsdp.param_dtype, DTL_DTYPE_BF16);
	ck_assert_int_eq(plan.fsdp.buffer_dtype, DTL_DTYPE_NONE); /* FSDP2 has none */
	ck_assert_int_eq(
	    acc(corpus("configs/accelerate/hiyouga-LLaMA-Factory-fsdp_config.yaml"), &plan), 0);
	ck_assert_int_eq(plan.strategy, DTL_STRATEGY_FSDP1);
	ck_assert_int_eq(plan.fsdp.buffer_dtype, DTL_DTYPE_BF16); /* accelerate's FSDP1 policy */
	ck_assert(!plan.fsdp.wrap.present);                       /* _no_split_modules */
	ck_assert_int_eq(
	    acc(corpus("configs/accelerate/huggingface-peft-fsdp_config_qlora.yaml"), &plan), 0);
	ck_assert_int_eq(plan.precision, DTL_PRECISION_FP32);
	ck_assert_int_eq(plan.fsdp.use_orig_params, DTL_FALSE);
	ck_assert_int_eq(
	    acc(corpus("configs/accelerate/huggingface-alignment-handbook-zero3.yaml"), &plan), 0);
	ck_assert_int_eq(plan.strategy, DTL_STRATEGY_ZERO3);
	ck_assert_int_eq(plan.zero3.init, DTL_TRUE);
	ck_assert_int_eq(
	    acc(corpus("configs/accelerate/TartuNLP-llammas-deepspeed_train_config_bf16.yaml"),
	        &plan),
	    0);
	ck_assert_int_eq(plan.strategy, DTL_STRATEGY_DDP); /* ZeRO-2 */
	ck_assert_int_eq(plan.zero3.init, DTL_FALSE);
}
END_TEST

/* The DeepSpeed config file the accelerate configs below point at: fp16, ZeRO-3. */
static void write_ds_fp16(void)
{
	write_tmp("ds.json",
	          "{\"fp16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 3}}");
}

START_TEST(accelerate_bf16_conflicts_with_fp16_deepspeed_file)
{
	struct dtl_plan plan;
	write_ds_fp16();
	const char *conflict =
	    write_tmp("conflict.yaml", "distributed_type: DEEPSPEED\nmixed_precision: bf16\n"
	                               "deepspeed_config:\n  deepspeed_config_file: ds.json\n");
	ck_assert_int_lt(acc(conflict, &plan), 0);
	ck_assert_str_eq(
	    error.message,
	    "accelerate refuses this config: 'ValueError: `--mixed_precision` arg "
	    "cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file.'");
}
END_TEST

START_TEST(accelerate_zero_stage_beside_deepspeed_file_is_refused)
{
	struct dtl_plan plan;
	write_ds_fp16();
	const char *ignored =
	    write_tmp("ignored.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n"
	                              "  deepspeed_config_file: ds.json\n  zero_stage: 3\n");
	ck_assert_int_lt(acc(ignored, &plan), 0);
	ck_assert_uint_eq(error.loc.line, 4);
}
END_TEST

START_TEST(accelerate_takes_plan_from_deepspeed_file)
{
	struct dtl_plan plan;
	write_ds_fp16();
	const char *ok =
	    write_tmp("ok.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n"
	                         "  deepspeed_config_file: ds.json\n  zero3_init_flag: true\n");
	ck_assert_int_eq(acc(ok, &plan), 0);
	ck_assert_int_eq(plan.strategy, DTL_STRATEGY_ZERO3);
	ck_assert_int_eq(plan.precision, DTL_PRECISION_FP16);
}
END_TEST

START_TEST(accelerate_fsdp2_refuses_forward_prefetch)
{
	struct dtl_plan plan;
	const char *fsdp2 =
	    write_tmp("fsdp2.yaml", "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n"
	                            "  fsdp_forward_prefetch: true\n");
	ck_assert_int_lt(acc(fsdp2, &plan), 0);
	ck_assert_str_eq(error.message,
	                 "accelerate refuses this config: 'ValueError: forward_prefetch "
	                 "is not yet implemented in FSDP2'");
}
END_TEST

/* a quoted version is read whole: "2" is 2, "2x" is refused (it was atoi'd) */
START_TEST(accelerate_quoted_fsdp_version_is_read_whole)
{
	struct dtl_plan plan;
	const char *quoted = write_tmp("quoted.yaml", "distributed_type: FSDP\nfsdp_config:\n"
	                                              "  fsdp_version: '2'\n");
	ck_assert_int_eq(acc(quoted, &plan), 0);
	ck_assert_int_eq(plan.strategy, DTL_STRATEGY_FSDP2);
	const char *junk = write_tmp("junk.yaml", "distributed_type: FSDP\nfsdp_config:\n"
	                                          "  fsdp_version: '2x'\n");
	ck_assert_int_lt(acc(junk, &plan), 0);
	ck_assert_str_eq(error.message, "'fsdp_version' must be 1 or 2, got '2x'");
	ck_assert_uint_eq(error.loc.line, 3);
}
END_TEST

START_TEST(peft_corpus)
{
	struct dtl_adapter a;
	const char *base;
	static const char *const files[] = {"llama-3.2-3b-bnb-4bit-qlora-unsloth",
	                                    "qwythos-9b-hybrid-lora", "flan-t5-base-lora",
	                                    "cosmos-reason2-2b-lora", NULL};
	char rel[256];

	for (const char *const *f = files; *f; f++) {
		snprintf(rel, sizeof(rel), "peft/%s/adapter_config.json", *f);
		ck_assert_msg(dtl_import_peft(corpus(rel), &arena, &limits, &a, &base, &error) == 0,
		              "%s: %s", *f, error.message);
		ck_assert(a.present);
	}
	ck_assert_int_eq(dtl_import_peft(corpus("peft/cosmos-reason2-2b-lora/adapter_config.json"),
	                                 &arena, &limits, &a, &base, &error),
	                 0);
	ck_assert_int_eq(a.r, 32);
	ck_assert_uint_eq(a.target_modules.count, 7);
	ck_assert_str_eq(base, "nvidia/Cosmos-Reason2-2B");
}
END_TEST

START_TEST(trainer_args_corpus)
{
	struct dtl_manifest m;

	memset(&m, 0, sizeof(m));
	dtl_plan_init(&m.plan);
	ck_assert_int_eq(
	    dtl_import_trainer_args(
	        corpus(
	            "configs/trainer-args/hiyouga-LLaMA-Factory-fsdp_qlora-llama3_lora_sft.yaml"),
	        &arena, &limits, &m, &error),
	    0);
	ck_assert_int_eq(m.quantization.method, DTL_QUANT_BNB_4BIT);
	ck_assert_str_eq(m.adapter.target_modules_string, "all-linear");
	ck_assert_int_eq(m.adapter.r, 8);
	ck_assert_int_eq(m.plan.precision, DTL_PRECISION_BF16);
	memset(&m, 0, sizeof(m));
	dtl_plan_init(&m.plan);
	ck_assert_msg(
	    dtl_import_trainer_args(
	        corpus("configs/trainer-args/hiyouga-LLaMA-Factory-llama3_fp8_fsdp_sft.yaml"),
	        &arena, &limits, &m, &error) == 0,
	    "%s", error.message);
}
END_TEST

/* A model folder through the whole pipeline with a ZeRO-3 bf16 plan: the number of router
 * weights and pinned (keep-in-fp32) tensors found must be the real ones. */
static void folder(const char *name, size_t tensors, size_t routers, size_t pinned,
                   enum dtl_quant_method quant)
{
	struct dtl_compose_inputs in = {.input = corpus(name)};
	struct dtl_manifest m;
	struct dtl_behavior_table behaviors;
	struct dtl_sim sim;
	struct dtl_plan plan;
	size_t nr = 0, np = 0;

	ck_assert_msg(dtl_compose(&in, &arena, &limits, &m, &error) == 0, "%s: %s:%u:%u: %s", name,
	              error.loc.file, error.loc.line, error.loc.column, error.message);
	ck_assert_uint_eq(m.tensor_count, tensors);
	ck_assert_int_eq(m.quantization.method, quant);
	ck_assert_int_eq(dtl_behavior_table_load(&behaviors, &arena, &error), 0);
	dtl_plan_init(&plan);
	plan.strategy = DTL_STRATEGY_FSDP2;
	plan.precision = DTL_PRECISION_BF16;
	ck_assert_msg(dtl_sim_run(&sim, &m, &plan, &behaviors, &arena, &error) == 0, "%s: %s", name,
	              error.message);
	for (size_t t = 0; t < sim.t.count; t++) {
		const char *dot = strrchr(sim.t.name[t], '.');
		if ((sim.t.flags[t] & DTL_TF_ROUTER) && dot && strcmp(dot, ".weight") == 0)
			nr++;
		if (sim.t.flags[t] & DTL_TF_PINNED)
			np++;
	}
	ck_assert_msg(nr == routers, "%s: %zu router weights, expected %zu", name, nr, routers);
	ck_assert_msg(np == pinned, "%s: %zu pinned tensors, expected %zu", name, np, pinned);
}

static const char torchtune_lora[] =
    "# tune run --nproc_per_node 2 lora_finetune_distributed --config x\n"
    "model:\n"
    "  _component_: torchtune.models.qwen2.lora_qwen2_0_5b\n"
    "  lora_attn_modules: ['q_proj', 'output_proj']\n"
    "  apply_lora_to_mlp: True\n"
    "  lora_rank: 32\n"
    "dtype: bf16\n";

static int tt(const char *path, const char *const *overrides, size_t n, struct dtl_manifest *m)
{
	memset(m, 0, sizeof(*m));
	dtl_plan_init(&m->plan);
	return dtl_import_framework_config(path, overrides, n, &arena, &limits, m, &error);
}

START_TEST(torchtune_recipe_line_and_lora_args)
{
	struct dtl_manifest m;
	ck_assert_msg(tt(write_tmp("lora.yaml", torchtune_lora), NULL, 0, &m) == 0, "%s",
	              error.message);
	ck_assert_int_eq(m.plan.strategy, DTL_STRATEGY_FSDP2);
	ck_assert_uint_eq(m.plan.strategy_loc.line, 1);
	ck_assert_str_eq(m.recipe.kind, "torchtune lora_finetune_distributed");
	ck_assert_int_eq(m.model.load_dtype, DTL_DTYPE_BF16);
	ck_assert_int_eq(m.adapter.r, 32);
	ck_assert_int_eq(m.adapter.autocast_adapter_dtype, DTL_FALSE);
	/* q_proj, output_proj as o_proj, then the three MLP projections */
	ck_assert_uint_eq(m.adapter.target_modules.count, 5);
	ck_assert_str_eq(m.adapter.target_modules.items[1].text, "o_proj");
	ck_assert_str_eq(m.adapter.target_modules.items[2].text, "gate_proj");
}
END_TEST

START_TEST(torchtune_overrides_win_and_remove)
{
	struct dtl_manifest m;
	const char *over[] = {"model.lora_rank=4", "~model.apply_lora_to_mlp", "dtype=None",
	                      "model=torchtune.models.qwen2.qwen2_0_5b", "model.lora_rank=16"};
	const char *path = write_tmp("lora.yaml", torchtune_lora);
	ck_assert_msg(tt(path, over, 3, &m) == 0, "%s", error.message);
	ck_assert_int_eq(m.adapter.r, 4);
	ck_assert_uint_eq(m.adapter.target_modules.count, 2);
	/* None is null: get_dtype(None) is float32 */
	ck_assert_int_eq(m.model.load_dtype, DTL_DTYPE_F32);
	/* "model=..." sets model._component_: a full model, no LoRA; the last rank wins */
	ck_assert_msg(tt(path, over + 3, 2, &m) == 0, "%s", error.message);
	ck_assert(!m.adapter.present);
}
END_TEST

START_TEST(torchtune_refusals_quote_torchtune)
{
	struct dtl_manifest m;
	const char *path = write_tmp("lora.yaml", torchtune_lora);
	const char *fp16[] = {"dtype=fp16"}, *bad[] = {"dtype=bf16=fp32"};
	ck_assert_int_lt(tt(path, fp16, 1, &m), 0);
	ck_assert_str_eq(error.loc.file, "--framework-override");
	ck_assert_uint_eq(error.loc.column, 7);
	ck_assert_ptr_nonnull(strstr(error.message, "full fp16 training is not supported"));
	ck_assert_int_lt(tt(path, bad, 1, &m), 0);
	ck_assert_ptr_nonnull(strstr(error.message, "must be in the form of key=value, got"));
	const char *other = write_tmp("other.yaml", "model:\n  _component_: mylib.Model\n");
	ck_assert_int_lt(tt(other, NULL, 0, &m), 0);
	ck_assert_ptr_nonnull(strstr(error.message, "no framework dtypelint reads"));
}
END_TEST

START_TEST(model_folders_corpus)
{
	/* name, tensors in weight_map (+ the rotary inv_freq buffers the profile says the model
	 * code creates, and their original_inv_freq copies), router weights, pinned (the
	 * inv_freq buffers: the copies are not), quantization */
	folder("models/wizardlm-2-8x22b", 1739 + 2, 56, 1, DTL_QUANT_NONE);
	folder("models/granite-3.1-1b-a400m-instruct", 218 + 2, 24, 1, DTL_QUANT_NONE);
	folder("models/gpt-oss-20b", 459 + 2, 24, 1, DTL_QUANT_NONE);
	folder("models/deepseek-ocr-2", 2707, 11, 0, DTL_QUANT_NONE);
	folder("models/qwen3.5-18b-reap-a3b", 15973, 40, 0, DTL_QUANT_NONE);
	/* T5's wo is kept float32 under float16: 24 encoder layers */
	folder("models/bria-3.2-t5-xxl-encoder", 219, 0, 24, DTL_QUANT_NONE);
	folder("models/devstral-small-2507", 363 + 2, 0, 1, DTL_QUANT_NONE);
	/* Gemma 3: the two rotary modules' inv_freq (to 4.57.6), the four per-layer-type buffers
	 * (from 5.0.0), embed_scale and the vision tower's int64 position_ids, every version's
	 * as the import lists them; pinned: the four inv_freq, not the copies */
	folder("models/medgemma-27b-it", 1247 + 8, 0, 4, DTL_QUANT_NONE);
	folder("models/cosmos-reason2-8b-qwen3-vl", 750 + 4, 0, 2, DTL_QUANT_NONE);
	folder("models/molmo-7b-d-nf4", 921, 0, 0, DTL_QUANT_BNB_4BIT);
	/* Llama: every release's created buffers as the import lists them, per layer for the 32
	 * per-attention rotary modules (inv_freq; cos_cached and sin_cached in three variants:
	 * float32 and load-dtype [1, 1, positions, head_dim], load-dtype [positions, head_dim];
	 * _cos_cached and _sin_cached), two causal_mask (int64, bool) and the per-model two;
	 * pinned: the 33 inv_freq and the float32 cos/sin caches (4.28.0 to 4.30.2: 32 * 2; not the
	 * load-dtype variants) */
	folder("models/llama-3.1-8b-bnb-int8", 739 + 32 * 9 + 2 + 2, 0, 33 + 32 * 2,
	       DTL_QUANT_BNB_8BIT);
}
END_TEST

START_TEST(export_round_trip)
{
	struct dtl_manifest m, again;
	struct dtl_compose_inputs in = {
	    .input = write_tmp(
	        "m.yaml",
	        "dtypelint: 1\nmodel: {checkpoint_dtype: bfloat16, modules: {\"l.*\": Block}, "
	        "tied: [[head.weight, l.0.w.weight]]}\n"
	        "frozen: [\"l.*.norm.**\"]\n"
	        "tensors:\n  - {name: l.0.w.weight, shape: [4, 4]}\n"
	        "  - {name: l.0.norm.weight, shape: [4], dtype: float32}\n"
	        "  - {name: l.0.buf, kind: buffer, shape: [2], dtype: float32, persistent: false}\n"
	        "adapter: {target_modules: [w], r: 4, autocast_adapter_dtype: false}\n"
	        "training: {strategy: zero3, precision: bf16, versions: {torch: \"2.7.1\"}, "
	        "zero3: {persistence_threshold: auto, data_types: {buffer_dtype: bf16}, "
	        "torch_autocast: {enabled: true, dtype: bf16}}}\n")};
	const char *formats[] = {"out.json", "out.yaml"};

	ck_assert_int_eq(dtl_compose(&in, &arena, &limits, &m, &error), 0);
	for (int i = 0; i < 2; i++) {
		const char *path = write_tmp(formats[i], "");
		ck_assert_int_eq(dtl_export_manifest(path, &m, &error), 0);
		ck_assert_msg(dtl_manifest_load(path, &arena, &limits, &again, &error) == 0,
		              "%s: %u:%u %s", formats[i], error.loc.line, error.loc.column,
		              error.message);
		ck_assert_uint_eq(again.tensor_count, 3);
		ck_assert_int_eq(again.tensors[2].kind, DTL_KIND_BUFFER);
		ck_assert(!again.tensors[2].persistent);
		ck_assert_int_eq(again.plan.strategy, DTL_STRATEGY_ZERO3);
		ck_assert(again.plan.zero3.persistence_auto);
		ck_assert_int_eq(again.plan.zero3.buffer_dtype, DTL_DTYPE_BF16);
		ck_assert_int_eq(again.plan.zero3.autocast, DTL_TRUE);
		ck_assert_int_eq(again.plan.zero3.autocast_dtype, DTL_DTYPE_BF16);
		ck_assert_int_eq(again.adapter.autocast_adapter_dtype, DTL_FALSE);
		ck_assert_uint_eq(again.model.tied_count, 1);
		ck_assert_str_eq(again.frozen.items[0].text, "l.*.norm.**");
	}
}
END_TEST

/* Reads one requirements file written to the tmpdir */
static const struct dtl_requirement *requirement(const char *text, enum dtl_framework fw)
{
	static struct dtl_requirements req;
	memset(&req, 0, sizeof(req));
	ck_assert_msg(dtl_requirements_read(write_tmp("requirements.txt", text), &arena, &limits,
	                                    &req, &error) == 0,
	              "%s", error.message);
	return &req.fw[fw];
}

static void assert_version(const struct dtl_version *v, const char *want)
{
	char buf[32];
	ck_assert_msg(v->set, "unset, expected %s", want);
	ck_assert_str_eq(dtl_version_format(v, buf, sizeof(buf)), want);
}

START_TEST(requirements_compatible_release_and_wildcard)
{
	const struct dtl_requirement *r = requirement("trl~=1.6\n", DTL_FW_TRL);
	assert_version(&r->lo, "1.6");
	assert_version(&r->hi, "2.0.dev0");
	ck_assert(r->hi_strict && !dtl_requirement_pinned(r));
	r = requirement("torch==2.4.*\n", DTL_FW_TORCH);
	assert_version(&r->lo, "2.4");
	assert_version(&r->hi, "2.5.dev0");
	r = requirement("DeepSpeed[autotuning] >=0.18, <0.20,!=0.19.0 ; python_version>'3.8'\n",
	                DTL_FW_DEEPSPEED);
	assert_version(&r->lo, "0.18");
	assert_version(&r->hi, "0.20");
	ck_assert(r->hi_strict);
	ck_assert_str_eq(r->spec, ">=0.18, <0.20,!=0.19.0");
	r = requirement("peft==0.17.1\n", DTL_FW_PEFT);
	ck_assert(dtl_requirement_pinned(r));
	r = requirement("accelerate\n", DTL_FW_ACCELERATE);
	ck_assert(r->present && !r->lo.set && !r->hi.set);
	r = requirement("deepspeed @ https://example.org/deepspeed.whl\n", DTL_FW_DEEPSPEED);
	ck_assert(!r->present);
}
END_TEST

/* NeMo Automodel by its PyPI names: nemo-automodel, nemo_automodel, any case (PEP 503) */
START_TEST(requirements_nemo_automodel_names)
{
	const struct dtl_requirement *r = requirement("nemo_automodel==0.4.0\n", DTL_FW_AUTOMODEL);
	ck_assert(dtl_requirement_pinned(r));
	assert_version(&r->lo, "0.4");
	r = requirement("NeMo.AutoModel>=0.5\n", DTL_FW_AUTOMODEL);
	ck_assert(r->present && !dtl_requirement_pinned(r));
	assert_version(&r->lo, "0.5");
	r = requirement("automodel==0.5.9\n", DTL_FW_AUTOMODEL); /* another project's name */
	ck_assert(!r->present);
}
END_TEST

START_TEST(requirements_constraint_narrows_requirement)
{
	write_tmp("constraints.txt", "deepspeed==0.19.2\n");
	const struct dtl_requirement *r =
	    requirement("deepspeed>=0.18\n-c constraints.txt\n", DTL_FW_DEEPSPEED);
	ck_assert(dtl_requirement_pinned(r));
	ck_assert_str_eq(r->loc.file + strlen(r->loc.file) - 15, "constraints.txt");
}
END_TEST

/* deepspeed>=0.18: one span per stretch without a behaviour change, DT121's bug
 * (0.12.0-0.19.2) ending in one, the newest known linted in the open top */
START_TEST(behavior_spans_split_a_range_at_boundaries)
{
	struct dtl_behavior_table table;
	struct dtl_version_span spans[32];
	ck_assert_int_eq(dtl_behavior_table_load(&table, &arena, &error), 0);
	const struct dtl_requirement *r = requirement("deepspeed>=0.18\n", DTL_FW_DEEPSPEED);
	size_t n = dtl_behavior_spans(&table, DTL_FW_DEEPSPEED, r, spans, 32);
	ck_assert_uint_ge(n, 3);
	assert_version(&spans[0].rep, "0.18");
	assert_version(&spans[0].lo, "0.18");
	bool ends_at_fix = false;
	for (size_t i = 0; i + 1 < n; i++) {
		ck_assert(spans[i].hi.set);
		if (!spans[i].hi_strict &&
		    dtl_version_compare(
		        &spans[i].hi, &(struct dtl_version){.part = {0, 19, 2}, .set = true}) == 0)
			ends_at_fix = true;
	}
	ck_assert(ends_at_fix);
	bool fixed_starts = false; /* the span after the bug starts at its fix, 0.19.3 */
	for (size_t i = 0; i < n; i++) {
		char buf[32];
		if (strcmp(dtl_version_format(&spans[i].lo, buf, sizeof(buf)), "0.19.3") == 0)
			fixed_starts = true;
	}
	ck_assert(fixed_starts);
	ck_assert(!spans[n - 1].hi.set);
	assert_version(&spans[n - 1].rep, "0.19.8");
	/* a pin is one span; a range below every boundary too */
	r = requirement("deepspeed==0.19.2\n", DTL_FW_DEEPSPEED);
	ck_assert_uint_eq(dtl_behavior_spans(&table, DTL_FW_DEEPSPEED, r, spans, 32), 1);
	assert_version(&spans[0].rep, "0.19.2");
	r = requirement("deepspeed<0.5\n", DTL_FW_DEEPSPEED);
	ck_assert_uint_eq(dtl_behavior_spans(&table, DTL_FW_DEEPSPEED, r, spans, 32), 1);
	ck_assert(!spans[0].lo.set);
}
END_TEST

/* A manifest of the named tensors, each of dtype and shape [d0, d1] (d0 0: no shape), in
 * this test's arena, as import-hf.c makes them. */
static struct dtl_manifest *conv_manifest(const char *const *names, const enum dtl_dtype *dtypes,
                                          const int64_t (*shapes)[2], size_t n)
{
	struct dtl_manifest *m = dtl_arena_calloc(&arena, 1, sizeof(*m));
	ck_assert_ptr_nonnull(m);
	m->tensors = dtl_arena_calloc(&arena, n + 1, sizeof(*m->tensors));
	ck_assert_ptr_nonnull(m->tensors);
	m->tensor_count = n;
	for (size_t i = 0; i < n; i++) {
		struct dtl_tensor_decl *t = &m->tensors[i];
		t->name = names[i];
		t->name_len = (uint32_t)strlen(names[i]);
		t->kind = DTL_KIND_PARAM;
		t->dtype = dtypes ? dtypes[i] : DTL_DTYPE_BF16;
		t->numel = -1;
		if (shapes[i][0]) {
			t->rank = 2;
			t->shape = dtl_arena_calloc(&arena, 2, sizeof(*t->shape));
			ck_assert_ptr_nonnull(t->shape);
			t->shape[0] = shapes[i][0];
			t->shape[1] = shapes[i][1];
			t->numel = shapes[i][0] * shapes[i][1];
		}
	}
	return m;
}

static const struct dtl_tensor_decl *conv_tensor(const struct dtl_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->tensor_count; i++)
		if (strcmp(m->tensors[i].name, name) == 0)
			return &m->tensors[i];
	return NULL;
}

/* dtl_hf_conversion_apply at the newest known versions */
static int conv_apply(const struct dtl_manifest *m, const struct dtl_hf_conversion *c,
                      const struct dtl_manifest **ret)
{
	struct dtl_behavior_table table;
	ck_assert_int_eq(dtl_behavior_table_load(&table, &arena, &error), 0);
	return dtl_hf_conversion_apply(m, c, &table, table.newest, &arena, ret);
}

static const struct dtl_hf_conversion *conv_find(const char *architecture, const char *type)
{
	const struct dtl_hf_conversion *c = NULL;
	ck_assert_int_eq(dtl_hf_conversion_find(architecture, type, &arena, &c, &error), 0);
	return c;
}

START_TEST(hf_conversion_fuses_mixtral_experts)
{
	static const char *const names[] = {
	    "model.layers.0.block_sparse_moe.experts.0.w1.weight",
	    "model.layers.0.block_sparse_moe.experts.0.w2.weight",
	    "model.layers.0.block_sparse_moe.experts.0.w3.weight",
	    "model.layers.0.block_sparse_moe.experts.1.w1.weight",
	    "model.layers.0.block_sparse_moe.experts.1.w2.weight",
	    "model.layers.0.block_sparse_moe.experts.1.w3.weight",
	    "model.layers.0.block_sparse_moe.gate.weight",
	};
	static const int64_t shapes[][2] = {{128, 64}, {64, 128}, {128, 64}, {128, 64},
	                                    {64, 128}, {128, 64}, {2, 64}};
	const struct dtl_hf_conversion *c = conv_find("MixtralForCausalLM", "mixtral");
	const struct dtl_manifest *m = conv_manifest(names, NULL, shapes, 7), *out;
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(conv_apply(m, c, &out), 0);
	ck_assert_uint_eq(out->tensor_count, 3);
	const struct dtl_tensor_decl *gu =
	    conv_tensor(out, "model.layers.0.mlp.experts.gate_up_proj");
	const struct dtl_tensor_decl *dp = conv_tensor(out, "model.layers.0.mlp.experts.down_proj");
	ck_assert_ptr_nonnull(gu);
	ck_assert_ptr_nonnull(dp);
	ck_assert_ptr_nonnull(conv_tensor(out, "model.layers.0.mlp.gate.weight"));
	ck_assert_uint_eq(gu->rank, 3);
	ck_assert_int_eq(gu->shape[0], 2);
	ck_assert_int_eq(gu->shape[1], 256);
	ck_assert_int_eq(gu->shape[2], 64);
	ck_assert_int_eq(gu->numel, 2 * 256 * 64);
	ck_assert_int_eq(dp->shape[1], 64);
	ck_assert_int_eq(dp->shape[2], 128);
	ck_assert_int_eq(gu->dtype, DTL_DTYPE_BF16);
	/* the checkpoint's names are the manifest's own: a 4.x plan keeps them */
	ck_assert_str_eq(m->tensors[0].name, names[0]);
}
END_TEST

START_TEST(hf_conversion_keeps_incomplete_or_mixed_experts)
{
	/* expert 1 has no up_proj; layer 1's experts differ in dtype */
	static const char *const names[] = {
	    "model.layers.0.mlp.experts.0.gate_proj.weight",
	    "model.layers.0.mlp.experts.0.up_proj.weight",
	    "model.layers.0.mlp.experts.1.gate_proj.weight",
	    "model.layers.1.mlp.experts.0.down_proj.weight",
	    "model.layers.1.mlp.experts.1.down_proj.weight",
	};
	static const enum dtl_dtype dtypes[] = {DTL_DTYPE_BF16, DTL_DTYPE_BF16, DTL_DTYPE_BF16,
	                                        DTL_DTYPE_BF16, DTL_DTYPE_F32};
	static const int64_t shapes[][2] = {{8, 4}, {8, 4}, {8, 4}, {4, 8}, {4, 8}};
	const struct dtl_hf_conversion *c = conv_find(NULL, "qwen3_moe");
	const struct dtl_manifest *m = conv_manifest(names, dtypes, shapes, 5), *out;
	ck_assert_int_eq(conv_apply(m, c, &out), 0);
	ck_assert_ptr_eq(out, m);
}
END_TEST

/* `behaviour:` of a profile or conversion entry (dtl_schema_behavior): absent is -1, a key of
 * rules/versions.yaml its index, anything else an error at the value's line and column */
static int behavior_of(const char *yaml, int *ret)
{
	struct dtl_source source;
	struct dtl_node *root;
	struct dtl_schema s = {
	    .file = "entry.yaml", .arena = &arena, .limits = &limits, .error = &error};
	ck_assert_int_eq(dtl_source_init_mem(&source, "entry.yaml", yaml, strlen(yaml)), 0);
	ck_assert_int_eq(dtl_doc_parse_yaml(&source, &arena, &limits, &root, &error), 0);
	int r = dtl_schema_behavior(&s, root, ret);
	dtl_source_fini(&source);
	return r;
}

START_TEST(schema_behavior_key)
{
	int b;
	ck_assert_int_eq(behavior_of("name: x\n", &b), 0);
	ck_assert_int_eq(b, -1);
	ck_assert_int_eq(behavior_of("behaviour: transformers-gemma2-embed-scale-buffer\n", &b), 0);
	ck_assert_int_ge(b, 0);
	ck_assert_int_lt(behavior_of("behaviour: no-such-behaviour\n", &b), 0);
	ck_assert_ptr_nonnull(strstr(error.message, "must be a key of rules/versions.yaml"));
	ck_assert_uint_eq(error.loc.line, 1);
	ck_assert_uint_eq(error.loc.column, 12);
}
END_TEST

START_TEST(hf_conversion_hostile_names)
{
	/* a leading zero, an index of 10 digits, a pattern that is the whole name: none is an
	 * expert; a rename that makes two names one leaves the folder's names */
	static const char *const odd[] = {
	    "model.layers.0.mlp.experts.01.down_proj.weight",
	    "model.layers.0.mlp.experts.1234567890.down_proj.weight",
	    "mlp.experts..down_proj.weight",
	};
	static const int64_t shapes[][2] = {{4, 8}, {4, 8}, {0, 0}};
	const struct dtl_hf_conversion *c = conv_find(NULL, "deepseek_v3");
	const struct dtl_manifest *m = conv_manifest(odd, NULL, shapes, 3), *out;
	ck_assert_int_eq(conv_apply(m, c, &out), 0);
	ck_assert_ptr_eq(out, m);

	static const char *const clash[] = {"model.layers.0.block_sparse_moe.x.weight",
	                                    "model.layers.0.mlp.x.weight"};
	c = conv_find("MixtralForCausalLM", "mixtral");
	m = conv_manifest(clash, NULL, shapes, 2);
	ck_assert_int_eq(conv_apply(m, c, &out), 0);
	ck_assert_ptr_eq(out, m);
}
END_TEST

START_TEST(hf_conversion_vlm_prefixes)
{
	static const char *const names[] = {
	    "model.layers.0.self_attn.q_proj.weight",
	    "model.language_model.norm.weight",
	    "visual.blocks.0.attn.qkv.weight",
	};
	static const int64_t shapes[][2] = {{0, 0}, {0, 0}, {0, 0}};
	/* the class name wins over a model_type that names another entry */
	const struct dtl_hf_conversion *c = conv_find("Qwen2VLForConditionalGeneration", "mixtral");
	const struct dtl_manifest *m = conv_manifest(names, NULL, shapes, 3), *out;
	ck_assert_int_eq(conv_apply(m, c, &out), 0);
	ck_assert_ptr_nonnull(
	    conv_tensor(out, "model.language_model.layers.0.self_attn.q_proj.weight"));
	ck_assert_ptr_nonnull(conv_tensor(out, "model.language_model.norm.weight"));
	ck_assert_ptr_nonnull(conv_tensor(out, "model.visual.blocks.0.attn.qkv.weight"));

	static const char *const llava[] = {"language_model.lm_head.weight",
	                                    "language_model.model.layers.0.mlp.up_proj.weight",
	                                    "vision_tower.vision_model.post_layernorm.weight"};
	c = conv_find("LlavaForConditionalGeneration", "llava");
	m = conv_manifest(llava, NULL, shapes, 3);
	ck_assert_int_eq(conv_apply(m, c, &out), 0);
	ck_assert_str_eq(out->tensors[0].name, "lm_head.weight");
	ck_assert_str_eq(out->tensors[1].name, "model.language_model.layers.0.mlp.up_proj.weight");
	/* the tower's vision_model too, at the newest versions (from 5.6.0) */
	ck_assert_str_eq(out->tensors[2].name, "model.vision_tower.post_layernorm.weight");
	ck_assert_ptr_null(conv_find("LlamaForCausalLM", "llama"));
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-import-registered.h"

static void add_tests(TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("import")
