/* SPDX-License-Identifier: MIT */
/* Loading the version table (rules/versions.yaml, embedded) and asking it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtypelint/model/behavior.h"
#include "dtypelint/model/hf-conversion.h"
#include "dtypelint/input/doc.h"
#include "dtypelint/model/embedded.h"

/* The rules/versions.yaml key of each behaviour (tools/gen-behaviors.c) */
static const char *const behavior_names[DTL_B_COUNT] = {
#include "rules/dtl-behavior-names.h"
};

static int bad(struct dtl_error *error, const struct dtl_node *node, const char *what)
{
	struct dtl_loc loc = dtl_node_loc(node, "rules/versions.yaml");
	return dtl_error_set(error, loc, -EINVAL, "version table: %s", what);
}

static int read_version(const struct dtl_node *node, struct dtl_version *out,
                        struct dtl_error *error)
{
	if (!node)
		return 0;
	if (node->type != DTL_NODE_STRING ||
	    dtl_version_parse(node->string.text, node->string.len, out) < 0)
		return bad(error, node, "a version must be a quoted string like \"2.1\"");
	return 0;
}

static int read_text(const struct dtl_node *map, const char *key, const char **out,
                     struct dtl_error *error)
{
	const struct dtl_node *node = dtl_node_get(map, key);
	if (!node || node->type != DTL_NODE_STRING)
		return bad(error, map, "every behaviour needs framework, fact, status and summary");
	*out = node->string.text;
	return 0;
}

int dtl_behavior_table_load(struct dtl_behavior_table *table, struct dtl_arena *arena,
                            struct dtl_error *error)
{
	const struct dtl_embedded_file *file = &dtl_embedded_versions[0];
	struct dtl_source source;
	struct dtl_limits limits;
	struct dtl_node *root;
	const struct dtl_node *newest, *behaviours;
	int r;

	memset(table, 0, sizeof(*table));
	dtl_limits_default(&limits);
	r = dtl_source_init_mem(&source, "rules/versions.yaml", file->data, file->size);
	if (r < 0)
		return r;
	r = dtl_doc_parse_yaml(&source, arena, &limits, &root, error);
	dtl_source_fini(&source);
	if (r < 0)
		return r;
	newest = dtl_node_get(root, "newest");
	behaviours = dtl_node_get(root, "behaviours");
	if (!newest || !behaviours || behaviours->type != DTL_NODE_MAP)
		return bad(error, root, "needs 'newest' and 'behaviours'");
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		const struct dtl_node *v = dtl_node_get(newest, dtl_framework_name(fw));
		if (!v)
			return bad(error, newest, "'newest' must name every framework");
		r = read_version(v, &table->newest[fw], error);
		if (r < 0)
			return r;
	}
	for (int b = 0; b < DTL_B_COUNT; b++) {
		struct dtl_behavior_info *info = &table->entries[b];
		const struct dtl_node *map = dtl_node_get(behaviours, behavior_names[b]);
		const char *framework = NULL;
		if (!map || map->type != DTL_NODE_MAP)
			return bad(error, behaviours, behavior_names[b]);
		info->name = behavior_names[b];
		if ((r = read_text(map, "framework", &framework, error)) < 0 ||
		    (r = read_text(map, "fact", &info->fact, error)) < 0 ||
		    (r = read_text(map, "status", &info->status, error)) < 0 ||
		    (r = read_text(map, "summary", &info->summary, error)) < 0)
			return r;
		if (dtl_framework_parse(framework, &info->framework) < 0)
			return bad(error, map, "unknown framework");
		if ((r = read_version(dtl_node_get(map, "since"), &info->since, error)) < 0 ||
		    (r = read_version(dtl_node_get(map, "until"), &info->until, error)) < 0)
			return r;
	}
	if (behaviours->map.count != DTL_B_COUNT)
		return bad(error, behaviours, "an entry is not known to the code");
	return 0;
}

/* An error in the snapshot file of dtl_behavior_table_pin_newest, at node */
static int bad_pin(struct dtl_error *error, const struct dtl_node *node, const char *file,
                   const char *what)
{
	return dtl_error_set(error, dtl_node_loc(node, file), -EINVAL, "newest-known snapshot: %s",
	                     what);
}

/* One framework's pinned version into *out: a quoted version no newer than the table's */
static int read_pin(const struct dtl_behavior_table *table, const struct dtl_pair *pair,
                    const char *file, struct dtl_version *out, struct dtl_error *error)
{
	enum dtl_framework fw;

	if (pair->key.type != DTL_NODE_STRING ||
	    dtl_framework_parse(pair->key.string.text, &fw) < 0)
		return bad_pin(error, &pair->key, file, "not a framework of the version table");
	if (pair->value.type != DTL_NODE_STRING ||
	    dtl_version_parse(pair->value.string.text, pair->value.string.len, &out[fw]) < 0)
		return bad_pin(error, &pair->value, file, "a version must be a quoted string");
	/* a snapshot is of the table's past: a version after its newest is one nobody read */
	if (dtl_version_compare(&out[fw], &table->newest[fw]) > 0)
		return bad_pin(error, &pair->value, file, "newer than the table's newest");
	return 0;
}

int dtl_behavior_table_pin_newest(struct dtl_behavior_table *table, const struct dtl_source *source,
                                  struct dtl_arena *arena, struct dtl_error *error)
{
	struct dtl_version pinned[DTL_FW_COUNT] = {0};
	const struct dtl_node *newest;
	struct dtl_limits limits;
	struct dtl_node *root;
	int r;

	dtl_limits_default(&limits);
	if ((r = dtl_doc_parse_yaml(source, arena, &limits, &root, error)) < 0)
		return r;
	newest = dtl_node_get(root, "newest");
	if (!newest || newest->type != DTL_NODE_MAP || root->map.count != 1)
		return bad_pin(error, root, source->path, "needs 'newest:' and nothing else");
	if (newest->map.count != DTL_FW_COUNT)
		return bad_pin(error, newest, source->path,
		               "'newest' must name every framework once");
	for (size_t i = 0; i < newest->map.count; i++)
		if ((r = read_pin(table, &newest->map.pairs[i], source->path, pinned, error)) < 0)
			return r;
	memcpy(table->newest, pinned, sizeof(pinned));
	return 0;
}

bool dtl_behavior_active(const struct dtl_behavior_table *table, enum dtl_behavior behavior,
                         const struct dtl_version versions[DTL_FW_COUNT])
{
	const struct dtl_behavior_info *info = &table->entries[behavior];
	const struct dtl_version *v = &versions[info->framework];

	if (info->since.set && dtl_version_compare(v, &info->since) < 0)
		return false;
	if (info->until.set) {
		/* "until 0.19.2" includes 0.19.2.post1 and 0.19.2.x but not 0.19.3 */
		struct dtl_version cut = info->until;
		if (dtl_version_compare(v, &cut) > 0 &&
		    !(v->part[0] == cut.part[0] && v->part[1] == cut.part[1] &&
		      v->part[2] == cut.part[2] && cut.part[3] == 0))
			return false;
	}
	return true;
}

int dtl_behavior_lookup(const char *name, size_t len)
{
	for (int b = 0; b < DTL_B_COUNT; b++)
		if (strlen(behavior_names[b]) == len && memcmp(behavior_names[b], name, len) == 0)
			return b;
	return -1;
}

/* m without the tensors of other versions than versions' (the gated tail) */
static int drop_gated(const struct dtl_manifest *m, const struct dtl_behavior_table *table,
                      const struct dtl_version versions[DTL_FW_COUNT], struct dtl_arena *arena,
                      const struct dtl_manifest **ret)
{
	size_t kept = m->tensor_count;

	*ret = m;
	if (!kept || !m->tensors[kept - 1].gate)
		return 0;
	/* the gated tensors are last: the others keep their indices in every variant */
	size_t first = kept;
	while (first > 0 && m->tensors[first - 1].gate)
		first--;
	struct dtl_tensor_decl *t = dtl_arena_calloc(arena, kept + 1, sizeof(*t));
	struct dtl_manifest *out = dtl_arena_alloc(arena, sizeof(*out));
	if (!t || !out)
		return -ENOMEM;
	memcpy(t, m->tensors, first * sizeof(*t));
	kept = first;
	for (size_t i = first; i < m->tensor_count; i++)
		if (dtl_behavior_active(table, (enum dtl_behavior)(m->tensors[i].gate - 1),
		                        versions))
			t[kept++] = m->tensors[i];
	if (kept == m->tensor_count)
		return 0;
	*out = *m;
	out->tensors = t;
	out->tensor_count = kept;
	/* the name index is the parser's, over every tensor: the simulation makes its own */
	out->tensor_index = (struct dtl_strmap){0};
	*ret = out;
	return 0;
}

int dtl_manifest_at_versions(const struct dtl_manifest *m, const struct dtl_behavior_table *table,
                             const struct dtl_plan *plan, struct dtl_arena *arena,
                             const struct dtl_manifest **ret)
{
	struct dtl_version versions[DTL_FW_COUNT];
	int r;

	for (int fw = 0; fw < DTL_FW_COUNT; fw++)
		versions[fw] = plan->versions[fw].set ? plan->versions[fw] : table->newest[fw];
	if ((r = drop_gated(m, table, versions, arena, ret)) < 0)
		return r;
	/* an HF folder's names as the live model has them, where transformers converts them
	 * (rules/conversions.yaml) */
	if (m->conversion &&
	    dtl_behavior_active(table, (enum dtl_behavior)m->conversion->behavior, versions) &&
	    (r = dtl_hf_conversion_apply(*ret, m->conversion, table, versions, arena, ret)) < 0)
		return r;
	/* the plan's trainer, when one input names it (a trainer linted as one of several
	 * keeps the checkpoint's class) */
	if (plan->trainer && !plan->trainer_range && strcmp(plan->trainer, "trl-reward") == 0 &&
	    dtl_behavior_active(table, DTL_B_TRL_REWARD_SEQ_CLS_HEAD, versions))
		return dtl_manifest_reward_head(*ret, arena, ret);
	return 0;
}

const char *dtl_behavior_range(const struct dtl_behavior_table *table, enum dtl_behavior behavior,
                               struct dtl_arena *arena)
{
	const struct dtl_behavior_info *info = &table->entries[behavior];
	const char *fw = dtl_framework_name(info->framework);
	char a[32], b[32];

	if (info->since.set && info->until.set)
		return dtl_arena_sprintf(arena, "%s %s to %s", fw,
		                         dtl_version_format(&info->since, a, sizeof(a)),
		                         dtl_version_format(&info->until, b, sizeof(b)));
	if (info->since.set)
		return dtl_arena_sprintf(arena, "%s >= %s", fw,
		                         dtl_version_format(&info->since, a, sizeof(a)));
	if (info->until.set)
		return dtl_arena_sprintf(arena, "%s <= %s", fw,
		                         dtl_version_format(&info->until, b, sizeof(b)));
	return fw;
}

/* The first release after "until" u: 0.19.2 -> 0.19.3, 2.5 -> 2.5.1 (dtl_behavior_active
 * keeps 0.19.2.x and 0.19.2.post1 in "until 0.19.2") */
static struct dtl_version after(const struct dtl_version *u)
{
	struct dtl_version v = {.set = true};
	for (int i = 0; i < 4; i++)
		v.part[i] = u->part[i];
	v.part[u->part[3] ? 3 : 2]++;
	return v;
}

/* A version below b, for a span with no lower end: 2.1 -> 2.0, 0.12.0 -> 0.11, 1.0 -> 0.0 */
static struct dtl_version below(const struct dtl_version *b)
{
	struct dtl_version v = {.set = true};
	v.part[0] = b->part[0];
	if (b->part[1] > 0)
		v.part[1] = b->part[1] - 1;
	else if (b->part[0] > 0)
		v.part[0] = b->part[0] - 1;
	return v;
}

struct cut {
	struct dtl_version first;       /* the first version of the span it starts */
	struct dtl_version last_before; /* the last version before it, when known (an until) */
};

static int by_first(const void *a, const void *b)
{
	return dtl_version_compare(&((const struct cut *)a)->first,
	                           &((const struct cut *)b)->first);
}

/* The versions where a behaviour of fw starts or stops, sorted, each once */
static size_t cuts_of(const struct dtl_behavior_table *table, enum dtl_framework fw,
                      struct cut *cuts)
{
	size_t n = 0, kept = 0;

	for (int b = 0; b < DTL_B_COUNT; b++) {
		const struct dtl_behavior_info *info = &table->entries[b];
		if (info->framework != fw)
			continue;
		if (info->since.set)
			cuts[n++] = (struct cut){.first = info->since};
		if (info->until.set)
			cuts[n++] =
			    (struct cut){.first = after(&info->until), .last_before = info->until};
	}
	qsort(cuts, n, sizeof(*cuts), by_first);
	for (size_t i = 0; i < n; i++) {
		if (kept && dtl_version_compare(&cuts[kept - 1].first, &cuts[i].first) == 0) {
			if (cuts[i].last_before.set)
				cuts[kept - 1].last_before = cuts[i].last_before;
			continue;
		}
		cuts[kept++] = cuts[i];
	}
	return kept;
}

/* The span from cut a (NULL: open below) to cut b (NULL: open above), clipped to r; false
 * when r allows none of it */
static bool clip(const struct dtl_behavior_table *table, enum dtl_framework fw, const struct cut *a,
                 const struct cut *b, const struct dtl_requirement *r, struct dtl_version_span *out)
{
	struct dtl_version_span s = {0};

	if (a)
		s.lo = a->first;
	if (r->lo.set && (!s.lo.set || dtl_version_compare(&r->lo, &s.lo) >= 0))
		s.lo = r->lo_strict ? after(&r->lo) : r->lo;
	if (b) {
		s.hi = b->last_before.set ? b->last_before : b->first;
		s.hi_strict = !b->last_before.set;
	}
	if (r->hi.set && (!s.hi.set || dtl_version_compare(&r->hi, &s.hi) < 0 ||
	                  (dtl_version_compare(&r->hi, &s.hi) == 0 && r->hi_strict))) {
		s.hi = r->hi;
		s.hi_strict = r->hi_strict;
	}
	if (b && s.lo.set && dtl_version_compare(&s.lo, &b->first) >= 0)
		return false;
	if (s.lo.set && s.hi.set) {
		int c = dtl_version_compare(&s.lo, &s.hi);
		if (c > 0 || (c == 0 && s.hi_strict))
			return false;
	}
	if (a && r->hi.set && dtl_version_compare(&a->first, &r->hi) > 0)
		return false;
	/* the version linted: the newest known where the span reaches it, else its first */
	const struct dtl_version *newest = &table->newest[fw];
	if (!b && (!s.hi.set || dtl_version_compare(newest, &s.hi) < 0) &&
	    (!s.lo.set || dtl_version_compare(newest, &s.lo) >= 0))
		s.rep = *newest;
	else if (s.lo.set)
		s.rep = s.lo;
	else
		s.rep = below(&b->first);
	*out = s;
	return true;
}

size_t dtl_behavior_spans(const struct dtl_behavior_table *table, enum dtl_framework fw,
                          const struct dtl_requirement *r, struct dtl_version_span *out, size_t max)
{
	struct cut cuts[2 * DTL_B_COUNT];
	size_t n = cuts_of(table, fw, cuts), count = 0;

	for (size_t i = 0; i <= n && count < max; i++) {
		const struct cut *a = i ? &cuts[i - 1] : NULL, *b = i < n ? &cuts[i] : NULL;
		if (clip(table, fw, a, b, r, &out[count]))
			count++;
	}
	return count;
}
