/* SPDX-License-Identifier: MIT */
/* The keys of the training plan (a manifest's `training:` section, a --plan file), one row each:
 * the only place a plan key is described. From it come the reading of a plan with its
 * unknown-key errors (src/model/plan-parse.c), a framework importer's reading of a key
 * (dtl_plan_key_read), the plan's defaults and the overlay of a later input's (plan.c),
 * --export (export.c), the JSON Schema build/schemas/plan.schema.json (tools/gen-plan-schema.c,
 * at build time), and the check that dtypelint-manifest(5)'s Plan section names every key
 * (tests/docs/manifest-keys.py). HACKING.md "Add an importer key" walks through a new row.
 *
 * No include guard: the includer defines DTL_PLAN_KEY(PARENT, ID, NAME, TYPE, FIELD, LOC,
 * DEFAULT, VALUES, DOC, DEEPSPEED, ACCELERATE, TRAINER) first, and the table expands it (with
 * none defined it expands to nothing).
 *   PARENT   the ID of the mapping the key is in, ROOT for the plan's top level; a parent's
 *            row comes before its children's
 *   ID       DTL_PLAN_KEY_<ID> (plan-key.h)
 *   NAME     the key as written
 *   TYPE     how its value is read and written (enum dtl_plan_type, plan-key.h): a MAP holds
 *            keys; a SWITCH is a map whose presence sets FIELD to false until its key enabled
 *            says otherwise
 *   FIELD    AT(member of struct dtl_plan) the value is stored in; STORED: the plan's
 *            stored[DTL_PLAN_KEY_<ID>] (a key with no member of its own, read with
 *            dtl_plan_key_field()); NOWHERE (a MAP)
 *   LOC      AT(member) that takes the value's struct dtl_loc; STORED: stored_locs[ID]; NOWHERE
 *   DEFAULT  the framework's value when the key is absent, as JSON text, or NULL (the plan
 *            keeps it unset; the simulation applies the version's default)
 *   VALUES   the words an enumeration takes, in its error message's order, or NULL
 *   DOC      one line: the schema's description (no " or backslash)
 *   DEEPSPEED, ACCELERATE, TRAINER  the setting's spelling in a DeepSpeed JSON config, an
 *            accelerate config YAML and the HF TrainingArguments, or NULL where it has none
 * The rows of a mapping are in the order its unknown-key error lists them. */
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/plan-keys.h is in the model layer, barred from this one (docs/design.md §2)"
#endif
#ifndef DTL_PLAN_KEY
#define DTL_PLAN_KEY(PARENT, ID, NAME, TYPE, FIELD, LOC, DEFAULT, VALUES, DOC, DS, ACC, TR)
#define DTL_PLAN_KEY_NONE_DEFINED
#endif

/* clang-format off */
DTL_PLAN_KEY(ROOT, STRATEGY, "strategy", STRATEGY, AT(strategy), AT(strategy_loc), "\"single\"",
             "zero3, fsdp1, fsdp2, ddp, single", "how the model is sharded",
             "zero_optimization.stage", "distributed_type", "fsdp, deepspeed")
DTL_PLAN_KEY(ROOT, PRECISION, "precision", PRECISION, AT(precision), AT(precision_loc), NULL,
             "bf16, fp16, fp32", "the mixed-precision setting",
             "bf16.enabled, fp16.enabled", "mixed_precision", "bf16, fp16")
DTL_PLAN_KEY(ROOT, WORLD_SIZE, "world_size", RANKS, AT(world_size), AT(world_size_loc), NULL,
             NULL, "number of ranks", NULL, "num_processes", NULL)
DTL_PLAN_KEY(ROOT, VERSIONS, "versions", VERSIONS, NOWHERE, NOWHERE, NULL, NULL,
             "framework versions", NULL, NULL, NULL)
DTL_PLAN_KEY(ROOT, TRAINER, "trainer", TRAINER, AT(trainer), AT(trainer_loc), "\"none\"",
             "none, hf-trainer, trl-sft, trl-dpo, trl-grpo, trl-kto, trl-rloo, trl-reward, "
             "trl-orpo, trl-cpo, trl-bco, trl-online-dpo, verl",
             "the training loop", NULL, NULL, NULL)
DTL_PLAN_KEY(ROOT, FSDP, "fsdp", MAP, NOWHERE, AT(fsdp.loc), NULL, NULL,
             "FSDP settings (strategy fsdp1 or fsdp2)", NULL, "fsdp_config", "fsdp_config")
DTL_PLAN_KEY(FSDP, FSDP_WRAP, "wrap", GLOBS, AT(fsdp.wrap), NOWHERE, NULL, NULL,
             "wrapped module classes or globs", NULL,
             "fsdp_config.fsdp_transformer_layer_cls_to_wrap",
             "fsdp_config.transformer_layer_cls_to_wrap")
DTL_PLAN_KEY(FSDP, FSDP_PARAM_DTYPE, "param_dtype", DTYPE, AT(fsdp.param_dtype),
             AT(fsdp.param_dtype_loc), NULL, NULL, "MixedPrecision(param_dtype=...)", NULL,
             "mixed_precision", NULL)
DTL_PLAN_KEY(FSDP, FSDP_REDUCE_DTYPE, "reduce_dtype", DTYPE, AT(fsdp.reduce_dtype),
             AT(fsdp.reduce_dtype_loc), NULL, NULL, "MixedPrecision(reduce_dtype=...)", NULL,
             NULL, NULL)
DTL_PLAN_KEY(FSDP, FSDP_BUFFER_DTYPE, "buffer_dtype", DTYPE, AT(fsdp.buffer_dtype),
             AT(fsdp.buffer_dtype_loc), NULL, NULL, "MixedPrecision(buffer_dtype=...)", NULL,
             NULL, NULL)
DTL_PLAN_KEY(FSDP, FSDP_USE_ORIG_PARAMS, "use_orig_params", TRISTATE, AT(fsdp.use_orig_params),
             AT(fsdp.use_orig_params_loc), NULL, NULL, "FSDP1's use_orig_params", NULL,
             "fsdp_config.fsdp_use_orig_params", NULL)
DTL_PLAN_KEY(FSDP, FSDP_IGNORED, "ignored", GLOBS, AT(fsdp.ignored), NOWHERE, NULL, NULL,
             "modules FSDP leaves unsharded (globs)", NULL, NULL, NULL)
DTL_PLAN_KEY(FSDP, FSDP_CPU_OFFLOAD, "cpu_offload", TRISTATE, AT(fsdp.cpu_offload),
             AT(fsdp.cpu_offload_loc), "false", NULL,
             "CPUOffload(offload_params=True), for --memory", NULL,
             "fsdp_config.fsdp_offload_params", NULL)
DTL_PLAN_KEY(ROOT, ZERO3, "zero3", MAP, NOWHERE, AT(zero3.loc), NULL, NULL,
             "DeepSpeed ZeRO-3 settings", "zero_optimization", "deepspeed_config", NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_INIT, "init", TRISTATE, AT(zero3.init), AT(zero3.init_loc), "true",
             NULL, "zero.Init at load", NULL, "deepspeed_config.zero3_init_flag", NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_PERSISTENCE_THRESHOLD, "persistence_threshold", THRESHOLD_AUTO,
             AT(zero3.persistence_threshold), AT(zero3.persistence_threshold_loc), "100000",
             NULL, "parameters this small stay gathered (auto: 10 * hidden_size)",
             "zero_optimization.stage3_param_persistence_threshold", NULL, NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_MODEL_PERSISTENCE_THRESHOLD, "model_persistence_threshold", THRESHOLD,
             AT(zero3.model_persistence_threshold), AT(zero3.model_persistence_threshold_loc),
             NULL, NULL, "the most elements kept gathered in all",
             "zero_optimization.stage3_model_persistence_threshold", NULL, NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_ALLGATHER_SEQUENTIAL, "allgather_sequential", TRISTATE,
             AT(zero3.allgather_sequential), AT(zero3.allgather_sequential_loc), NULL, NULL,
             "gather parameters one by one",
             "zero_optimization.stage3_allgather_sequential", NULL, NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_OFFLOAD_PARAM, "offload_param", OFFLOAD, AT(zero3.offload_param),
             AT(zero3.offload_param_loc), "\"none\"", "none, cpu, nvme",
             "where the parameters live", "zero_optimization.offload_param.device",
             "deepspeed_config.offload_param_device", NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_DATA_TYPES, "data_types", MAP, NOWHERE, NOWHERE, NULL, NULL,
             "DeepSpeed's data_types section", "data_types", NULL, NULL)
DTL_PLAN_KEY(ZERO3_DATA_TYPES, ZERO3_BUFFER_DTYPE, "buffer_dtype", DTYPE,
             AT(zero3.buffer_dtype), AT(zero3.buffer_dtype_loc), NULL, NULL,
             "the dtype buffers are cast to", "data_types.buffer_dtype", NULL, NULL)
DTL_PLAN_KEY(ZERO3_DATA_TYPES, ZERO3_PARAM_DTYPE, "param_dtype", DTYPE, AT(zero3.param_dtype),
             AT(zero3.param_dtype_loc), NULL, NULL, "the dtype parameters are cast to",
             "data_types.param_dtype", NULL, NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_TORCH_AUTOCAST, "torch_autocast", SWITCH, AT(zero3.autocast),
             AT(zero3.autocast_loc), NULL, NULL, "DeepSpeed's torch_autocast section",
             "torch_autocast", NULL, NULL)
DTL_PLAN_KEY(ZERO3_TORCH_AUTOCAST, ZERO3_AUTOCAST_ENABLED, "enabled", TRISTATE,
             AT(zero3.autocast), NOWHERE, "false", NULL, "autocast on",
             "torch_autocast.enabled", NULL, NULL)
DTL_PLAN_KEY(ZERO3_TORCH_AUTOCAST, ZERO3_AUTOCAST_DTYPE, "dtype", DTYPE,
             AT(zero3.autocast_dtype), NOWHERE, NULL, NULL,
             "the dtype Linear and Conv parameters communicate in", "torch_autocast.dtype",
             NULL, NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_QUANTIZED_WEIGHTS, "quantized_weights", TRISTATE,
             AT(zero3.quantized_weights), AT(zero3.quantized_weights_loc), "false", NULL,
             "ZeRO++ quantized weights", "zero_optimization.zero_quantized_weights", NULL,
             NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_QUANTIZED_NONTRAINABLE, "quantized_nontrainable_weights", TRISTATE,
             AT(zero3.quantized_nontrainable), AT(zero3.quantized_nontrainable_loc), "false",
             NULL, "ZeRO++ quantized frozen weights",
             "zero_optimization.zero_quantized_nontrainable_weights", NULL, NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_OFFLOAD_OPTIMIZER, "offload_optimizer", OFFLOAD,
             AT(zero3.offload_optimizer), AT(zero3.offload_optimizer_loc), "\"none\"",
             "none, cpu, nvme", "where the optimizer states live",
             "zero_optimization.offload_optimizer.device",
             "deepspeed_config.offload_optimizer_device", NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_PREFETCH_BUCKET_SIZE, "prefetch_bucket_size", THRESHOLD,
             AT(zero3.prefetch_bucket_size), AT(zero3.prefetch_bucket_size_loc), "50000000",
             NULL, "elements prefetched, for --memory",
             "zero_optimization.stage3_prefetch_bucket_size", NULL, NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_MAX_LIVE_PARAMETERS, "max_live_parameters", THRESHOLD,
             AT(zero3.max_live_parameters), AT(zero3.max_live_parameters_loc), "1000000000",
             NULL, "elements gathered at once, for --memory",
             "zero_optimization.stage3_max_live_parameters", NULL, NULL)
DTL_PLAN_KEY(ZERO3, ZERO3_TENSOR_OVERRIDES, "tensor_overrides", TENSOR_OVERRIDES,
             AT(zero3.init_dtype_override), AT(zero3.init_dtype_override_loc), NULL,
             "dtype, device",
             "zero.Init(tensor_overrides=...): without dtype, zero.Init casts nothing", NULL,
             NULL, NULL)
DTL_PLAN_KEY(ROOT, DIRECT_ACCESS, "direct_access", GLOBS, AT(direct_access), NOWHERE, NULL,
             NULL, "tensors the training code reads directly (globs)", NULL, NULL, NULL)
DTL_PLAN_KEY(ROOT, MERGE, "merge", TRISTATE, AT(merge), AT(merge_loc), NULL, NULL,
             "adapters merged into the base weights", NULL, NULL, NULL)
DTL_PLAN_KEY(ROOT, MODEL_CAST, "model_cast", FLOAT_DTYPE, AT(model_cast), AT(model_cast_loc),
             NULL, NULL, "model.to(dtype) after loading (a floating dtype)", NULL, NULL, NULL)
DTL_PLAN_KEY(ROOT, OPTIMIZER, "optimizer", OPTIMIZER, AT(optimizer), AT(optimizer_loc),
             "\"adamw\"", "adamw, adamw_8bit, adafactor, sgd",
             "the optimizer whose states --memory sizes", "optimizer.type", NULL, "optim")
DTL_PLAN_KEY(ROOT, DEVICE_MEMORY, "device_memory", BYTES, AT(device_memory),
             AT(device_memory_loc), NULL, NULL,
             "the memory of one device, for DT801: 80GiB, 40GB or bytes", NULL, NULL, NULL)
/* clang-format on */
#ifdef DTL_PLAN_KEY_NONE_DEFINED
#undef DTL_PLAN_KEY
#undef DTL_PLAN_KEY_NONE_DEFINED
#endif
