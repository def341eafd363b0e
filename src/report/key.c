/* SPDX-License-Identifier: MIT */
/*
 * A finding's identity across runs: rule + file + group/tensor, never the line, so that
 * fingerprints (SARIF, GitLab) and baseline entries survive edits that move lines
 * (PHPStan's baseline counts per message and file, https://phpstan.org/user-guide/baseline;
 * GitHub's partialFingerprints,
 * https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report-private.h"

bool dtl_report_finding_key(const struct dtl_report_input *input, const struct dtl_finding *f,
                            char *buf, size_t size)
{
	const char *group = f->view.group ? f->view.group->name : "";
	const char *tensor = f->tensor_count ? f->view.tensors[0].name : "";
	int n;

	if (!*group && !*tensor)
		n = snprintf(buf, size, "\n\n%s", f->message ? f->message : "");
	else
		n = snprintf(buf, size, "%s\n%s", group, tensor);
	return n >= 0 && (size_t)n < size;
}

void dtl_report_fingerprint(const char *rule, const char *path, const char *key, size_t occurrence,
                            char ret_hex[17])
{
	/* FNV-1a over the NUL-separated fields; the occurrence only when > 0, so that the
	 * first of equal keys keeps the same fingerprint when a second one appears */
	const char *fields[] = {"dtypelint/v1", rule, path, key};
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const unsigned char *p = (const unsigned char *)fields[i];
		for (; *p; p++) {
			h ^= *p;
			h *= 0x100000001b3ull;
		}
		h *= 0x100000001b3ull; /* the NUL separator: xor with 0, then multiply */
	}
	for (size_t o = occurrence; o; o >>= 8) {
		h ^= (unsigned char)(o & 0xff);
		h *= 0x100000001b3ull;
	}
	snprintf(ret_hex, 17, "%016llx", (unsigned long long)h);
}

const char *dtl_report_sarif_level(enum dtl_severity severity)
{
	switch (severity) {
	case DTL_SEVERITY_ERROR:
		return "error";
	case DTL_SEVERITY_WARNING:
		return "warning";
	case DTL_SEVERITY_INFO:
		break;
	}
	return "note";
}

int dtl_report_items(struct dtl_arena *arena, const struct dtl_report_input *inputs, size_t n,
                     struct dtl_report_item **ret_items, size_t *ret_count)
{
	return dtl_report_items_at(arena, inputs, n, NULL, ret_items, ret_count);
}

int dtl_report_items_at(struct dtl_arena *arena, const struct dtl_report_input *inputs, size_t n,
                        const char *root, struct dtl_report_item **ret_items, size_t *ret_count)
{
	struct dtl_strmap seen; /* (rule, path, key) -> index into counts */
	struct dtl_report_item *items;
	size_t *counts, count = 0, k = 0, distinct = 0;
	char path[4096], key[2048];

	for (size_t i = 0; i < n; i++)
		count += inputs[i].findings->items.count;
	items = dtl_arena_calloc(arena, count ? count : 1, sizeof(*items));
	counts = dtl_arena_calloc(arena, count ? count : 1, sizeof(*counts));
	if (!items || !counts)
		return -ENOMEM;
	dtl_strmap_init(&seen, arena);
	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *f = inputs[i].findings->items.items;
		for (size_t j = 0; j < inputs[i].findings->items.count; j++, k++) {
			struct dtl_report_item *it = &items[k];
			const char *file = f[j].loc.file ? f[j].loc.file : "-";
			it->input = &inputs[i];
			it->finding = &f[j];
			it->relative = dtl_report_relpath(file, root, path, sizeof(path));
			if (!path[0])
				snprintf(path, sizeof(path), "%s", file);
			it->path = dtl_arena_strndup(arena, path, strlen(path));
			if (!it->path)
				return -ENOMEM;
			dtl_report_finding_key(&inputs[i], &f[j], key, sizeof(key));
			/* the n-th finding with an equal (rule, path, key) gets occurrence n */
			size_t rule_len = strlen(f[j].rule->id), path_len = strlen(it->path);
			size_t id_len = rule_len + 1 + path_len + 1 + strlen(key);
			char *id = dtl_arena_alloc(arena, id_len + 1);
			if (!id)
				return -ENOMEM;
			memcpy(id, f[j].rule->id, rule_len);
			memcpy(id + rule_len + 1, it->path, path_len);
			memcpy(id + rule_len + 1 + path_len + 1, key, strlen(key));
			int64_t slot = dtl_strmap_put(&seen, id, id_len, (int64_t)distinct);
			if (slot < 0)
				return -ENOMEM;
			if ((size_t)slot == distinct)
				distinct++;
			size_t occurrence = counts[slot]++;
			dtl_report_fingerprint(f[j].rule->id, it->path, key, occurrence,
			                       it->fingerprint);
		}
	}
	*ret_items = items;
	*ret_count = count;
	return 0;
}
