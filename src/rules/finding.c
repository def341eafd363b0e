/* SPDX-License-Identifier: MIT */
/* Building findings: messages, involved tensors, notes with each tensor's dtype history. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

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
	used += (size_t)snprintf(text + used, sizeof(text) - used,
	                         "'%s' is %s%s%s%s: ", sim->t.name[tensor],
	                         dtl_dtype_name(sim->t.dtype[tensor]),
	                         sim->t.kind[tensor] == DTL_KIND_BUFFER      ? " (buffer)"
	                         : sim->t.kind[tensor] == DTL_KIND_QUANT_STATE
	                             ? " (quantization state)"
	                         : (sim->t.flags[tensor] & DTL_TF_ALIAS)     ? " (tied)"
	                         : (sim->t.flags[tensor] & DTL_TF_TRAINABLE) ? " (trainable)"
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
