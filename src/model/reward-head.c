/* SPDX-License-Identifier: MIT */
/*
 * The model TRL's reward trainer loads: RewardTrainer builds AutoModelForSequenceClassification
 * with num_labels=1 from a causal LM's checkpoint (rules/versions.yaml trl-reward-seq-cls-head;
 * tests/oracle/DISAGREEMENTS.md D22). The live model has no lm_head (nor its tie) and a
 * `score` Linear(hidden_size, 1) that no file holds. Done on the manifest, before the
 * simulation builds its table, because the tensor table has no removal; the peft stage then
 * wraps `score` for a SEQ_CLS adapter like any task head.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/model/behavior.h"

static bool is_lm_head(const char *name, size_t len)
{
	static const char lm[] = "lm_head.";
	return len > sizeof(lm) - 1 && memcmp(name, lm, sizeof(lm) - 1) == 0;
}

/* The hidden size the head takes: lm_head's [vocab, hidden], else the tensor it is tied to
 * (the embedding, [vocab, hidden]), else the config's; -1 when none says. */
static int64_t head_width(const struct dtl_manifest *m, const struct dtl_tensor_decl *lm_head)
{
	if (lm_head && lm_head->shape && lm_head->rank == 2)
		return lm_head->shape[1];
	for (size_t g = 0; g < m->model.tied_count; g++)
		for (size_t k = 0; k < m->model.tied[g].count; k++) {
			const struct dtl_pattern *p = &m->model.tied[g].names[k];
			/* the parser's index, when it is over this list (else none: no scan) */
			int64_t i =
			    is_lm_head(p->text, p->len) || m->tensor_index.count != m->tensor_count
			        ? -1
			        : dtl_strmap_get(&m->tensor_index, p->text, p->len);
			if (i >= 0 && (size_t)i < m->tensor_count && m->tensors[i].shape &&
			    m->tensors[i].rank == 2)
				return m->tensors[i].shape[1];
		}
	return m->model.hidden_size > 0 ? m->model.hidden_size : -1;
}

/* The tied groups without lm_head; a group left with one name ties nothing */
static int drop_ties(struct dtl_manifest *out, const struct dtl_manifest *m,
                     struct dtl_arena *arena)
{
	struct dtl_tied_group *groups =
	    dtl_arena_calloc(arena, m->model.tied_count + 1, sizeof(*groups));
	size_t n = 0;

	if (!groups)
		return -ENOMEM;
	for (size_t g = 0; g < m->model.tied_count; g++) {
		const struct dtl_tied_group *tg = &m->model.tied[g];
		struct dtl_pattern *names = dtl_arena_calloc(arena, tg->count + 1, sizeof(*names));
		size_t k = 0;
		if (!names)
			return -ENOMEM;
		for (size_t i = 0; i < tg->count; i++)
			if (!is_lm_head(tg->names[i].text, tg->names[i].len))
				names[k++] = tg->names[i];
		if (k > 1)
			groups[n++] =
			    (struct dtl_tied_group){.names = names, .count = k, .loc = tg->loc};
	}
	out->model.tied = groups;
	out->model.tied_count = n;
	return 0;
}

/* score.weight where lm_head.weight was (the last module of both classes), else before the
 * gated tail (dtl_tensor_decl.gate) */
static struct dtl_tensor_decl score_decl(const struct dtl_manifest *m,
                                         const struct dtl_tensor_decl *lm_head, int64_t *shape)
{
	struct dtl_tensor_decl d = {.name = "score.weight",
	                            .name_len = 12,
	                            .kind = DTL_KIND_PARAM,
	                            .dtype = lm_head ? lm_head->dtype : DTL_DTYPE_NONE,
	                            .trainable = DTL_UNSET,
	                            .persistent = true,
	                            .loc = lm_head ? lm_head->loc : m->model.loc};
	d.dtype_loc = d.loc;
	d.dtype_reason = "TRL's RewardTrainer loads AutoModelForSequenceClassification with "
	                 "num_labels=1: a score head created in place of lm_head, in the load "
	                 "dtype";
	if (shape[1] > 0) {
		d.rank = 2;
		d.shape = shape;
		d.numel = shape[1];
	} else {
		d.numel = -1;
	}
	return d;
}

/* A causal LM's class (LlamaForCausalLM): AutoModelForSequenceClassification maps it to its
 * *ForSequenceClassification, whose head is `score`; other classes (T5's
 * classification_head, multimodal models) are left as they are */
static bool causal_lm(const struct dtl_manifest *m)
{
	static const char suffix[] = "ForCausalLM";
	const char *arch = m->model.architecture;
	size_t n = arch ? strlen(arch) : 0, s = sizeof(suffix) - 1;
	return n > s && strcmp(arch + n - s, suffix) == 0;
}

int dtl_manifest_reward_head(const struct dtl_manifest *m, struct dtl_arena *arena,
                             const struct dtl_manifest **ret)
{
	const struct dtl_tensor_decl *lm_head = NULL;
	bool tied = false;

	*ret = m;
	if (!causal_lm(m))
		return 0;
	for (size_t i = 0; i < m->tensor_count; i++) {
		const struct dtl_tensor_decl *d = &m->tensors[i];
		if (d->name_len > 6 && memcmp(d->name, "score.", 6) == 0)
			return 0; /* a head of that name already: not a causal LM's checkpoint */
		if (!lm_head && d->name_len == 14 && memcmp(d->name, "lm_head.weight", 14) == 0)
			lm_head = d;
	}
	for (size_t g = 0; g < m->model.tied_count; g++)
		for (size_t k = 0; k < m->model.tied[g].count; k++)
			tied = tied || is_lm_head(m->model.tied[g].names[k].text,
			                          m->model.tied[g].names[k].len);
	if (!lm_head && !tied)
		return 0; /* not a causal LM's checkpoint: the class keeps its own head */
	struct dtl_manifest *out = dtl_arena_alloc(arena, sizeof(*out));
	struct dtl_tensor_decl *t = dtl_arena_calloc(arena, m->tensor_count + 1, sizeof(*t));
	int64_t *shape = dtl_arena_calloc(arena, 2, sizeof(*shape));
	if (!out || !t || !shape)
		return -ENOMEM;
	*out = *m;
	shape[0] = 1;
	shape[1] = head_width(m, lm_head);
	size_t n = 0;
	bool placed = false;
	for (size_t i = 0; i < m->tensor_count; i++) {
		const struct dtl_tensor_decl *d = &m->tensors[i];
		if (!placed && (d == lm_head || (!lm_head && d->gate))) {
			t[n++] = score_decl(m, lm_head, shape);
			placed = true;
		}
		if (!is_lm_head(d->name, d->name_len))
			t[n++] = *d;
	}
	if (!placed)
		t[n++] = score_decl(m, lm_head, shape);
	out->tensors = t;
	out->tensor_count = n;
	/* the name index is the parser's, over the old list: the simulation makes its own */
	out->tensor_index = (struct dtl_strmap){0};
	out->model.seq_cls_head = true;
	*ret = out;
	return drop_ties(out, m, arena);
}
