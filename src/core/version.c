/* SPDX-License-Identifier: MIT */
/*
 * Package versions (version.h): parsing the PEP 440 subset the version table and the importers
 * read ("4.51.3", "2.13.0rc1", "0.20.0.dev0"), ordering them as PEP 440 does, and formatting them
 * back for messages. The behaviours of rules/versions.yaml switch on these comparisons; also
 * dtypelint's own build version.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dtl-build-version.h"
#include "dtypelint/core/version.h"

const char *dtl_build_version(void)
{
	return DTL_BUILD_VERSION;
}

/* PEP 440 subset: N(.N){0,3} then an optional pre/dev tag (aN, bN, rcN, .devN) and an optional
 * local label (+...). Pre-releases sort before their release: dev < a < b < rc < release. */
int dtl_version_parse(const char *text, size_t len, struct dtl_version *ret_version)
{
	struct dtl_version v = {.set = true};
	size_t i = 0;
	int parts = 0;

	if (len > 0 && (text[0] == 'v' || text[0] == 'V'))
		i = 1;
	while (i < len && parts < 4) {
		long n = 0;
		size_t start = i;
		while (i < len && text[i] >= '0' && text[i] <= '9') {
			n = n * 10 + (text[i] - '0');
			if (n > 1000000)
				return -EINVAL;
			i++;
		}
		if (i == start)
			return -EINVAL;
		v.part[parts++] = (int)n;
		if (i < len && text[i] == '.' && i + 1 < len && text[i + 1] >= '0' &&
		    text[i + 1] <= '9')
			i++;
		else
			break;
	}
	if (parts == 0)
		return -EINVAL;
	if (i < len && text[i] != '+') {
		static const struct {
			const char *tag;
			int base;
		} tags[] = {
		    {".dev", -4000}, {"dev", -4000}, {"rc", -1000}, {"a", -3000}, {"b", -2000}};
		size_t k;
		for (k = 0; k < sizeof(tags) / sizeof(tags[0]); k++) {
			size_t tl = strlen(tags[k].tag);
			if (len - i >= tl && memcmp(text + i, tags[k].tag, tl) == 0)
				break;
		}
		if (k == sizeof(tags) / sizeof(tags[0]))
			return -EINVAL;
		i += strlen(tags[k].tag);
		int n = 0;
		while (i < len && text[i] >= '0' && text[i] <= '9') {
			n = n * 10 + (text[i++] - '0');
			if (n > 900) /* a date-stamped dev build: later than any small number */
				n = 900;
		}
		v.pre = tags[k].base + n;
	}
	if (i < len && text[i] != '+')
		return -EINVAL;
	*ret_version = v;
	return 0;
}

int dtl_version_compare(const struct dtl_version *a, const struct dtl_version *b)
{
	for (int i = 0; i < 4; i++) {
		if (a->part[i] != b->part[i])
			return a->part[i] < b->part[i] ? -1 : 1;
	}
	if (a->pre != b->pre)
		return a->pre < b->pre ? -1 : 1;
	return 0;
}

char *dtl_version_format(const struct dtl_version *version, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%d.%d", version->part[0], version->part[1]);

	if (n >= 0 && (size_t)n < size && (version->part[2] || version->part[3]))
		n += snprintf(buf + n, size - (size_t)n, ".%d", version->part[2]);
	if (n >= 0 && (size_t)n < size && version->part[3])
		n += snprintf(buf + n, size - (size_t)n, ".%d", version->part[3]);
	if (n >= 0 && (size_t)n < size && version->pre) {
		int pre = version->pre;
		const char *tag = pre < -3000   ? ".dev"
		                  : pre < -2000 ? "a"
		                  : pre < -1000 ? "b"
		                                : "rc";
		int base = pre < -3000 ? -4000 : pre < -2000 ? -3000 : pre < -1000 ? -2000 : -1000;
		snprintf(buf + n, size - (size_t)n, "%s%d", tag, pre - base);
	}
	return buf;
}
