/* SPDX-License-Identifier: MIT */
/*
 * The rule catalogue (docs/design.md §5) and findings. Each rule's documentation lives in one table
 * entry next to its implementation; --explain, --list-rules, the JSON output and the man page
 * read that one source.
 */
#ifndef DTYPELINT_RULES_H
#define DTYPELINT_RULES_H
#ifndef DTL_SEES_RULES
#error "dtypelint/rules/rules.h is in the rules layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>

#include "dtypelint/rules/finding-view.h"
#include "dtypelint/rules/ops.h"

enum dtl_severity {
	DTL_SEVERITY_INFO,
	DTL_SEVERITY_WARNING,
	DTL_SEVERITY_ERROR,
};

struct dtl_check;
struct dtl_group;
struct dtl_finding;

/* --fix-plan: what a rule proposes for one of its findings (src/fix applies each candidate to
 * a copy of the input, re-simulates and keeps and ranks those that remove the finding). */
enum dtl_fix_kind {
	DTL_FIX_VERSION,              /* training.versions.<fw>: <text> */
	DTL_FIX_ALLGATHER_SEQUENTIAL, /* training.zero3.allgather_sequential: true */
	DTL_FIX_PERSISTENCE_ZERO,     /* training.zero3.persistence_threshold: 0 */
	DTL_FIX_AUTOCAST_OFF,         /* adapter.autocast_adapter_dtype: false */
	DTL_FIX_QUANT_STORAGE,        /* quantization.quant_storage: <dtype> */
	DTL_FIX_USE_ORIG_PARAMS,      /* training.fsdp.use_orig_params: true */
	DTL_FIX_WRAP_ADD,             /* training.fsdp.wrap += <text> */
	DTL_FIX_WRAP_REMOVE,          /* training.fsdp.wrap -= <text> */
	DTL_FIX_IGNORE_ADD,           /* training.fsdp.ignored += <text> */
	DTL_FIX_FSDP_BUFFER_DTYPE,    /* training.fsdp.buffer_dtype: <dtype or null> */
	DTL_FIX_ZERO3_BUFFER_DTYPE,   /* training.zero3.data_types.buffer_dtype: <dtype> */
	DTL_FIX_KEEP_STRICT_ADD,      /* model.keep_in_fp32_strict += <text> */
	/* DT801: what makes the model states fit (sized again by the whole simulation) */
	DTL_FIX_WORLD_SIZE,        /* training.world_size: <text> */
	DTL_FIX_OFFLOAD_OPTIMIZER, /* training.zero3.offload_optimizer: cpu */
	DTL_FIX_FSDP_CPU_OFFLOAD,  /* training.fsdp.cpu_offload: true */
	DTL_FIX_OPTIMIZER_8BIT,    /* training.optimizer: adamw_8bit */
	/* code changes: proven by re-simulation, printed, never written */
	DTL_FIX_GATHER_CONTEXT, /* read <text> inside deepspeed.zero.GatheredParameters */
};

struct dtl_fix_candidate {
	enum dtl_fix_kind kind;
	const char *text;     /* a pattern, class name or version */
	enum dtl_dtype dtype; /* NONE: null */
	enum dtl_framework framework;
	const char *title; /* "set training.zero3.allgather_sequential: true" */
	int cost;          /* how much it changes (smaller is better) */
};

struct dtl_fix_request {
	const struct dtl_sim *sim;
	const struct dtl_finding *finding; /* one of the rule's own */
	struct dtl_arena *arena;
	struct dtl_vec *candidates; /* struct dtl_fix_candidate, appended to in proposal order */
};

struct dtl_rule {
	const char *id;   /* "DT101" */
	const char *name; /* "fsdp1-mixed-dtype-unit" */
	enum dtl_severity severity;
	const char *summary;     /* one line */
	const char *explanation; /* what and why, with the real error text */
	const char *example;     /* a manifest fragment that fires it */
	const char *fix;
	const char *facts; /* the facts behind it */
	int (*check)(struct dtl_check *check);
	/* the fixes the facts support for one finding (NULL: none); -ENOMEM on failure */
	int (*propose_fixes)(const struct dtl_fix_request *request);
};

struct dtl_note {
	struct dtl_loc loc;
	const char *text;
	uint32_t tensor; /* DTL_NONE_INDEX when the note is about no tensor */
	/* a folded group that fails the same way as the finding's own: its name (text output
	 * shows these only with --verbose, the message names them as a range); else NULL */
	const char *same_way;
};

/* Where a finding fires among the values the inputs leave open (a version range a dependency
 * file allows, the trainer no input names): one per framework (or "trainer") whose open values
 * it fires at only some of. */
struct dtl_finding_range {
	const char *name;       /* "deepspeed" */
	const char *fires;      /* "0.18–0.19.2", "< 2.1", ">= 0.19.3" */
	const char *from, *to;  /* its first and last versions; NULL: open */
	const char *allowed;    /* what the file allows: ">=0.18" */
	const char *allowed_at; /* "requirements.txt:2:1" */
	const char *avoided_by; /* a requirement that avoids it: "deepspeed>=0.19.3"; NULL: none */
	/* an assumption rather than a range ("trainer", no input naming one): the values it does
	 * not fire with, "hf-trainer, trl-sft"; NULL for a range */
	const char *not_with;
};

struct dtl_finding {
	const struct dtl_rule *rule;
	enum dtl_severity severity;
	const char *message;
	struct dtl_loc loc;
	/* the framework error the finding predicts (NULL for silent effects) */
	const char *error_text;     /* "ValueError: Must flatten tensors ..." */
	const char *error_when;     /* "at wrap time" */
	const char *error_versions; /* "torch >= 2.1 (assumed 2.9.0)" */
	const char *effect;         /* for silent findings: what happens instead */
	uint32_t *tensors;          /* involved tensors, the offending one first */
	size_t tensor_count;
	const struct dtl_group *group;
	uint32_t group_offset; /* position of the offending tensor in the group */
	struct dtl_note *notes;
	size_t note_count;
	const char *fix;
	const struct dtl_finding_range *ranges; /* NULL: it fires at every allowed version */
	size_t range_count;
	uint32_t sort_tensor;         /* rank of the offending tensor, for ordering */
	struct dtl_finding_view view; /* what reporters print (dtl_input_view_init) */
};

struct dtl_findings {
	struct dtl_vec items; /* struct dtl_finding */
};

/* All rules, in id order. */
const struct dtl_rule *const *dtl_rules_all(size_t *ret_count);
/* By id ("DT101") or name ("fsdp1-mixed-dtype-unit"); NULL when unknown. */
const struct dtl_rule *dtl_rule_find(const char *id_or_name);
const char *dtl_severity_name(enum dtl_severity severity);
int dtl_severity_parse(const char *text, enum dtl_severity *ret_severity);

/* Which rules run: a rule runs when selected (all when select is empty) and not ignored.
 * Entries are ids, names or id prefixes ("DT1"). */
struct dtl_rule_selection {
	const char *const *select;
	size_t select_count;
	const char *const *ignore;
	size_t ignore_count;
};
/* Does a selector (an id, a name, an id prefix "DT1" or "ALL") name rule? */
bool dtl_rule_matches(const struct dtl_rule *rule, const char *selector);
/* Whether a selector (id, name, id prefix or ALL) matches any registered rule. */
bool dtl_rules_selector_known(const char *selector);
bool dtl_rule_selected(const struct dtl_rule *rule, const struct dtl_rule_selection *selection);
/* Does the selection ask for rule by an id, name or prefix (not only through "ALL" or an
 * empty selection)? Rules quiet by default (DT403 with nothing downstream) report then. */
bool dtl_rule_asked(const struct dtl_rule *rule, const struct dtl_rule_selection *selection);
/* Checks that every entry names a rule or a prefix of one; fills *error for the first that
 * does not. */
int dtl_rule_selection_validate(const struct dtl_rule_selection *selection,
                                struct dtl_error *error);

/* Runs the selected rules over a finished simulation, then sorts the findings
 * deterministically (file, line, column, rule, tensor). */
int dtl_rules_run(const struct dtl_sim *sim, const struct dtl_rule_selection *selection,
                  const struct dtl_op_oracle *ops, struct dtl_findings *findings,
                  struct dtl_error *error);
/* Sorts findings as dtl_rules_run() does (file, line, column, rule, tensor, message): for
 * callers that add findings afterwards (DT002 unused suppressions). */
void dtl_findings_sort(struct dtl_findings *findings);

/* DT002 unused-suppression: one suppression as the command line applied it (the manifest's
 * suppress: list, then the inline `# dtypelint: ignore[...]` comments, one per rule named). */
struct dtl_suppression_use {
	const char *rule;    /* the selector as written */
	const char *tensors; /* the tensors glob of a listed suppression; NULL: none */
	bool inline_comment;
	struct dtl_loc loc;
	size_t used; /* the findings it silenced */
};
/* Adds a DT002 finding for each suppression that names no rule, or that silenced nothing though
 * a rule it names ran; none when DT002 itself does not run. */
int dtl_rules_unused_suppressions(const struct dtl_suppression_use *uses, size_t count,
                                  const struct dtl_rule_selection *selection,
                                  struct dtl_arena *arena, struct dtl_findings *findings);

#endif
