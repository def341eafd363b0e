/* SPDX-License-Identifier: MIT */
/* Building findings: messages, involved tensors, notes with each tensor's dtype history. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rule-check.h"

struct dtl_finding *dtl_check_report(struct dtl_check *c, enum dtl_severity severity,
                                     struct dtl_loc loc, const char *fmt, ...)
{
	struct dtl_finding *f = dtl_vec_push(&c->findings->items, c->arena, sizeof(*f));
	va_list args;
	char buf[1024];

	if (!f)
		return NULL;
	va_start(args, fmt);
	vsnprintf(buf, sizeof(buf), fmt, args);
	va_end(args);
	f->rule = c->rule;
	f->severity = severity;
	f->loc = loc;
	f->message = dtl_arena_strndup(c->arena, buf, strlen(buf));
	f->sort_tensor = UINT32_MAX;
	if (!f->message)
		return NULL;
	return f;
}

bool dtl_check_is_param(const struct dtl_sim *sim, uint32_t tensor)
{
	return sim->t.kind[tensor] == DTL_KIND_PARAM && !(sim->t.flags[tensor] & DTL_TF_ALIAS);
}

static int grow_tensors(struct dtl_check *c, struct dtl_finding *f)
{
	/* findings name a handful of tensors: grow by copying */
	uint32_t *tensors = dtl_arena_calloc(c->arena, f->tensor_count + 1, sizeof(*tensors));
	struct dtl_note *notes = dtl_arena_calloc(c->arena, f->note_count + 1, sizeof(*notes));

	if (!tensors || !notes)
		return -ENOMEM;
	if (f->tensor_count)
		memcpy(tensors, f->tensors, f->tensor_count * sizeof(*tensors));
	if (f->note_count)
		memcpy(notes, f->notes, f->note_count * sizeof(*notes));
	f->tensors = tensors;
	f->notes = notes;
	return 0;
}

int dtl_check_add_tensor(struct dtl_check *c, struct dtl_finding *f, uint32_t tensor,
                         const char *role)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_event history[32];
	size_t n = dtl_sim_history(sim, tensor, history, 32);
	char text[2048];
	size_t used = 0;
	int r = grow_tensors(c, f);

	if (r < 0)
		return r;
	f->tensors[f->tensor_count++] = tensor;
	if (f->sort_tensor == UINT32_MAX)
		f->sort_tensor = sim->t.rank[tensor];
	used += (size_t)snprintf(
	    text + used, sizeof(text) - used, "'%s' is %s%s%s%s: ", sim->t.name[tensor],
	    dtl_dtype_name(sim->t.dtype[tensor]),
	    sim->t.kind[tensor] == DTL_KIND_BUFFER        ? " (buffer)"
	    : sim->t.kind[tensor] == DTL_KIND_QUANT_STATE ? " (quantization state)"
	    : (sim->t.flags[tensor] & DTL_TF_ALIAS)       ? " (tied)"
	    : (sim->t.flags[tensor] & DTL_TF_TRAINABLE)   ? " (trainable)"
	                                                  : " (frozen)",
	    role ? ", " : "", role ? role : "");
	for (size_t i = 0; i < n && used < sizeof(text); i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s", i ? " -> " : "",
		                         history[i].reason);
	struct dtl_note *note = &f->notes[f->note_count++];
	note->loc = dtl_sim_tensor_loc(sim, tensor);
	note->tensor = tensor;
	note->text = dtl_arena_strndup(c->arena, text, strnlen(text, sizeof(text)));
	return note->text ? 0 : -ENOMEM;
}

const char *dtl_check_version(struct dtl_check *c, enum dtl_framework framework)
{
	const struct dtl_resolved_plan *rp = &c->sim->rp;
	char v[32];

	dtl_version_format(&rp->plan.versions[framework], v, sizeof(v));
	if (rp->version_assumed[framework])
		return dtl_arena_sprintf(c->arena, "%s %s (assumed: the plan names no %s version)",
		                         dtl_framework_name(framework), v,
		                         dtl_framework_name(framework));
	return dtl_arena_sprintf(c->arena, "%s %s", dtl_framework_name(framework), v);
}

const char *dtl_check_dtype_set(struct dtl_check *c, const uint32_t *tensors, size_t count,
                                bool torch_style)
{
	bool seen[DTL_DTYPE_COUNT] = {false};
	enum dtl_dtype order[DTL_DTYPE_COUNT];
	char text[512];
	size_t used = 0, n = 0;

	text[0] = '\0';
	for (size_t i = 0; i < count; i++) {
		enum dtl_dtype d = c->sim->t.dtype[tensors[i]];
		if (!seen[d]) {
			seen[d] = true;
			order[n++] = d;
		}
	}
	/* torch prints a Python set: "a, b"; prose reads "a, b and c" */
	for (size_t k = 0; k < n && used < sizeof(text); k++) {
		const char *sep = k == 0 ? "" : (torch_style || k + 1 < n) ? ", " : " and ";
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s", sep,
		                         torch_style ? dtl_dtype_torch_name(order[k])
		                                     : dtl_dtype_name(order[k]));
	}
	return dtl_arena_strndup(c->arena, text, strnlen(text, sizeof(text)));
}

/* text without the first occurrence of name, into the arena */
static const char *without(struct dtl_arena *arena, const char *text, const char *name)
{
	const char *at = text && name && name[0] ? strstr(text, name) : NULL;
	if (!text)
		return "";
	if (!at)
		return text;
	return dtl_arena_sprintf(arena, "%.*s%s", (int)(at - text), text, at + strlen(name));
}

/* The decimal number that ends name (its digits start at *ret_at), or -1 when it ends in none
 * or the number would not fit. */
static long long trailing_number(const char *name, size_t *ret_at)
{
	size_t len = strlen(name), at = len;
	long long v = 0;

	while (at > 0 && name[at - 1] >= '0' && name[at - 1] <= '9')
		at--;
	if (at == len || len - at > 15)
		return -1;
	for (size_t k = at; k < len; k++)
		v = v * 10 + (name[k] - '0');
	*ret_at = at;
	return v;
}

/* Appends "a", "a–b" (U+2013) or a run's separator to buf; false when it is full. */
static bool put_run(char *buf, size_t size, size_t *used, long long a, long long b, bool first)
{
	int n = a == b ? snprintf(buf + *used, size - *used, "%s%lld", first ? "" : ", ", a)
	               : snprintf(buf + *used, size - *used, "%s%lld\u2013%lld", first ? "" : ", ",
	                          a, b);
	if (n < 0 || (size_t)n >= size - *used)
		return false;
	*used += (size_t)n;
	return true;
}

const char *dtl_check_name_range(struct dtl_arena *arena, const char *const *names, size_t n)
{
	char runs[160];
	size_t at0 = 0, used = 0, shown = 0;

	if (n == 0)
		return "";
	if (n == 1 || trailing_number(names[0], &at0) < 0)
		return n == 1 ? names[0] : dtl_arena_sprintf(arena, "%s, ...", names[0]);
	/* one prefix and ascending numbers: "model.layers.1–55" or "model.layers.1–5, 7, 9–55" */
	long long start = trailing_number(names[0], &at0), prev = start;
	for (size_t k = 1; k <= n; k++) {
		size_t at = 0;
		long long v = k < n ? trailing_number(names[k], &at) : -1;
		if (k < n &&
		    (v < 0 || at != at0 || strncmp(names[k], names[0], at0) != 0 || v <= prev))
			return dtl_arena_sprintf(arena, "%s, ...", names[0]);
		if (k < n && v == prev + 1) {
			prev = v;
			continue;
		}
		if (shown == 4 || !put_run(runs, sizeof(runs), &used, start, prev, shown == 0)) {
			return dtl_arena_sprintf(arena, "%.*s%.*s, ...", (int)at0, names[0],
			                         (int)used, runs);
		}
		shown++;
		start = prev = v;
	}
	return dtl_arena_sprintf(arena, "%.*s%.*s", (int)at0, names[0], (int)used, runs);
}

/* "(and 55 more units like it: model.layers.1–55)" after the message of a finding that folded
 * others; the full list stays in its notes (JSON, SARIF related locations, --verbose). */
static int name_folded(struct dtl_check *c, struct dtl_finding *f, const char *what)
{
	size_t extra = 0;

	for (size_t k = 0; k < f->note_count; k++)
		extra += f->notes[k].same_way != NULL;
	if (!extra)
		return 0;
	const char **names = dtl_arena_calloc(c->arena, extra, sizeof(*names));
	if (!names)
		return -ENOMEM;
	extra = 0;
	for (size_t k = 0; k < f->note_count; k++)
		if (f->notes[k].same_way)
			names[extra++] = f->notes[k].same_way;
	const char *range = dtl_check_name_range(c->arena, names, extra);
	f->message = range
	                 ? dtl_arena_sprintf(c->arena, "%s (and %zu more %s%s like it: %s)",
	                                     f->message, extra, what, extra == 1 ? "" : "s", range)
	                 : NULL;
	return f->message ? 0 : -ENOMEM;
}

int dtl_check_merge_groups(struct dtl_check *c, size_t first, const char *what)
{
	struct dtl_finding *f = c->findings->items.items;
	size_t n = c->findings->items.count;
	struct dtl_strmap keys;

	if (n <= first + 1)
		return 0;
	size_t *into = dtl_arena_calloc(c->arena, n - first, sizeof(*into));
	size_t *folded = dtl_arena_calloc(c->arena, n - first, sizeof(*folded));
	if (!into || !folded)
		return -ENOMEM;
	dtl_strmap_init(&keys, c->arena);
	/* pass 1: which finding each one folds into, and how many each keeps */
	for (size_t i = first; i < n; i++) {
		into[i - first] = i;
		if (!f[i].group)
			continue;
		const char *key = dtl_arena_sprintf(
		    c->arena, "%s|%s", without(c->arena, f[i].message, f[i].group->name),
		    without(c->arena, f[i].error_text, f[i].group->name));
		if (!key)
			return -ENOMEM;
		int64_t prev = dtl_strmap_put(&keys, key, strlen(key), (int64_t)i);
		if (prev < 0)
			return -ENOMEM;
		if ((size_t)prev != i) {
			into[i - first] = (size_t)prev;
			folded[prev - (int64_t)first]++;
		}
	}
	/* the kept ones get their notes in one allocation each */
	for (size_t i = first; i < n; i++) {
		size_t extra = folded[i - first];
		if (!extra)
			continue;
		struct dtl_note *notes =
		    dtl_arena_calloc(c->arena, f[i].note_count + extra, sizeof(*notes));
		if (!notes)
			return -ENOMEM;
		if (f[i].note_count)
			memcpy(notes, f[i].notes, f[i].note_count * sizeof(*notes));
		f[i].notes = notes;
	}
	/* pass 2: notes for the folded, then keep only the kept, in order */
	size_t kept = first;
	for (size_t i = first; i < n; i++) {
		size_t to = into[i - first];
		if (to == i) {
			if (kept != i)
				f[kept] = f[i];
			/* later folded findings point at the kept one's old index: it moves down
			 * only past folded ones, which come after it, so remap by the old index */
			into[i - first] = kept;
			kept++;
			continue;
		}
		struct dtl_finding *k = &f[into[to - first]];
		struct dtl_note *note = &k->notes[k->note_count++];
		note->loc = f[i].group->loc;
		note->tensor = DTL_NONE_INDEX;
		note->text = dtl_arena_sprintf(
		    c->arena, "%s '%s' fails the same way",
		    f[i].group->kind == DTL_GROUP_FSDP1_UNIT ? "unit" : "group", f[i].group->name);
		note->same_way = f[i].group->name;
		if (!note->text)
			return -ENOMEM;
	}
	c->findings->items.count = kept;
	for (size_t i = first; i < kept; i++)
		if (name_folded(c, &f[i], what) < 0)
			return -ENOMEM;
	return 0;
}

void dtl_check_predict(struct dtl_check *c, struct dtl_finding *f, const char *error_text,
                       const char *when, enum dtl_framework framework, const char *fix)
{
	f->error_text = error_text;
	f->error_when = when;
	f->error_versions = dtl_check_version(c, framework);
	f->fix = fix;
}
