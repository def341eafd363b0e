/* SPDX-License-Identifier: MIT */
/*
 * The words the layers share about a simulated tensor: the stages that change its dtype, its
 * flags, and the kinds of group a sharding strategy forms. The simulation (sim.h) writes them;
 * the findings' views (finding-view.h) carry them to the reporters, which never see the
 * simulation (docs/design.md §2). Defined once here, so neither layer mirrors the other.
 */
#ifndef DTYPELINT_VOCAB_H
#define DTYPELINT_VOCAB_H
#ifndef DTL_SEES_CORE
#error "dtypelint/core/vocab.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stdint.h>

/* "no such row": a tensor, module, group or event index that is absent */
#define DTL_NONE_INDEX UINT32_MAX

/* The stages in the order a set-up goes through them; a trace step names one. */
enum dtl_stage {
	DTL_STAGE_DECLARE, /* what the manifest says */
	DTL_STAGE_LOAD,
	DTL_STAGE_ZERO_INIT,
	DTL_STAGE_QUANTIZE,
	DTL_STAGE_KBIT_PREPARE,
	DTL_STAGE_PEFT,
	DTL_STAGE_TRAINER,
	DTL_STAGE_ENGINE,
	DTL_STAGE_SHARD,
	DTL_STAGE_COMPUTE,
};
#define DTL_STAGE_COUNT (DTL_STAGE_COMPUTE + 1)

/* What a tensor is, as bits of its flags. */
enum dtl_tensor_flag {
	DTL_TF_TRAINABLE = 1u << 0,
	DTL_TF_QUANTIZED = 1u << 1,
	DTL_TF_ADAPTER = 1u << 2,
	DTL_TF_PINNED = 1u << 3,     /* must stay fp32 (keep-in-fp32 strict, explicit pin) */
	DTL_TF_PERSISTENT = 1u << 4, /* buffers: in the state dict */
	DTL_TF_ZERO_PARAM = 1u << 5, /* created under zero.Init */
	DTL_TF_ZERO_PERSIST = 1u << 6,
	DTL_TF_IGNORED = 1u << 7, /* FSDP ignored */
	DTL_TF_ALIAS = 1u << 8,   /* a tied name of a parameter listed under another name */
	DTL_TF_ROUTER = 1u << 9,
	DTL_TF_QUANT_STATE = 1u << 10, /* a pre-quantized checkpoint's absmax/quant_map/SCB/... */
	DTL_TF_INT8 = 1u << 11,        /* an LLM.int8 weight (Int8Params) */
	/* a weight stored quantized in the checkpoint (its quant state is beside it): loaded
	 * with the dtype it is stored in (Params4bit.from_prequantized keeps data.dtype) */
	DTL_TF_PREQUANTIZED = 1u << 12,
	/* DeepSpeed torch_autocast tagged it (a Linear/Conv param): communicated in the plan's
	 * zero3.autocast_dtype, stored in its own dtype */
	DTL_TF_AUTOCAST_COMM = 1u << 13,
};

/* The collective a group of tensors meets: an FSDP1 FlatParameter, an FSDP2 fully_shard
 * group, or one of ZeRO-3's two parameter sets. */
enum dtl_group_kind {
	DTL_GROUP_FSDP1_UNIT,
	DTL_GROUP_FSDP2_GROUP,
	DTL_GROUP_ZERO3_PERSISTENT,
	DTL_GROUP_ZERO3_TRAINABLE,
};

#endif
