/* SPDX-License-Identifier: MIT */
/*
 * What one input is linted with: the limits, the rule selection, the severity overrides and
 * the per-file ignores of its config merged with the options (include/dtypelint/lint/lint.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "dtypelint/lint/lint.h"
#include "dtypelint/report/report.h"
#include "lint-private.h"

bool dtl_lint_selector_known(const char *selector)
{
	return dtl_rules_selector_known(selector);
}

void dtl_lint_limits_apply(struct dtl_limits *l, const struct dtl_limit_settings *s)
{
	for (int i = 0; i < DTL_LIMIT_COUNT; i++) {
		if (!(s->set & (1u << i)))
			continue;
		uint64_t v = s->values[i];
		switch (i) {
		case DTL_LIMIT_FILE_SIZE:
			l->max_file_size = (size_t)v;
			break;
		case DTL_LIMIT_DEPTH:
			l->max_depth = (unsigned)v;
			break;
		case DTL_LIMIT_ALIAS_NODES:
			l->max_alias_nodes = (size_t)v;
			break;
		case DTL_LIMIT_TENSORS:
			l->max_tensors = (size_t)v;
			break;
		case DTL_LIMIT_NAME_LENGTH:
			l->max_name_length = (size_t)v;
			break;
		case DTL_LIMIT_RANK:
			l->max_rank = (unsigned)v;
			break;
		case DTL_LIMIT_HEADER_SIZE:
			l->max_safetensors_header = (size_t)v;
			break;
		}
	}
}

/* One glob segment against one path segment (fnmatch, a leading '.' matched only by '.'). */
static bool segment_glob(const char *g, size_t g_len, const char *p, size_t p_len)
{
	char gseg[1024], pseg[1024];

	if (g_len >= sizeof(gseg) || p_len >= sizeof(pseg))
		return false;
	memcpy(gseg, g, g_len);
	gseg[g_len] = '\0';
	memcpy(pseg, p, p_len);
	pseg[p_len] = '\0';
	return fnmatch(gseg, pseg, FNM_PERIOD) == 0;
}

static bool is_globstar(const char *g, size_t start, size_t end)
{
	return end - start == 2 && g[start] == '*' && g[start + 1] == '*';
}

/*
 * The glob's '/'-segments against the path's, a '**' taking any number of whole segments
 * (a last one at least one). Only the last '**' seen backtracks: on a mismatch it takes one
 * more segment and the segments after it are tried again, as a '*' does in a wildcard match.
 * That is enough, since what lies between two '**' matches a fixed number of segments and its
 * leftmost match is as good as any. So a pair (glob segment, path segment) is compared at most
 * once per '**' region: O(segments x segments) whatever the number of '**' (the recursive
 * version took exponential time on 20 '**' segments against a path 10 folders deep).
 */
static bool match_segments(const char *g, const char *p)
{
	size_t gl = strlen(g), pl = strlen(p), gi = 0, pi = 0; /* len + 1 is past the end */
	size_t star_g = SIZE_MAX, star_p = 0;

	while (pi <= pl) {
		if (gi <= gl) {
			size_t ge = gi + strcspn(g + gi, "/"), pe = pi + strcspn(p + pi, "/");
			if (is_globstar(g, gi, ge)) {
				gi = star_g = ge + 1;
				star_p = pi;
				continue;
			}
			if (segment_glob(g + gi, ge - gi, p + pi, pe - pi)) {
				gi = ge + 1;
				pi = pe + 1;
				continue;
			}
		}
		if (star_g == SIZE_MAX)
			return false;
		/* the last '**' takes one more segment */
		star_p += strcspn(p + star_p, "/") + 1;
		gi = star_g;
		pi = star_p;
	}
	return gi > gl; /* the path is used up: so must the glob be */
}

bool dtl_lint_path_glob(const char *glob, const char *path)
{
	while (glob[0] == '.' && glob[1] == '/')
		glob += 2;
	return match_segments(glob, path);
}

bool dtl_config_file_ignored(const struct dtl_config *c, const char *input,
                             const struct dtl_rule *rule)
{
	const struct dtl_file_ignore *fi = c->file_ignores.items;
	char rel[4096];
	const char *base;

	if (!c->file_ignores.count || !dtl_report_relpath(input, c->dir, rel, sizeof(rel)))
		return false;
	base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	for (size_t i = 0; i < c->file_ignores.count; i++) {
		/* a glob without '/' also matches the file's name in any directory */
		bool hit = dtl_lint_path_glob(fi[i].glob, rel) ||
		           (!strchr(fi[i].glob, '/') && dtl_lint_path_glob(fi[i].glob, base));
		if (!hit)
			continue;
		const char *const *rules = fi[i].rules.items;
		for (size_t k = 0; k < fi[i].rules.count; k++)
			if (dtl_rule_matches(rule, rules[k]))
				return true;
	}
	return false;
}

static bool any_matches(const struct dtl_vec *selectors, const struct dtl_rule *rule)
{
	const char *const *s = selectors->items;

	for (size_t i = 0; i < selectors->count; i++)
		if (dtl_rule_matches(rule, s[i]))
			return true;
	return false;
}

/* Is rule on, by the config's selectors (c: NULL for none) then the options'? */
static bool rule_on(const struct dtl_config *c, const struct dtl_lint_options *o,
                    const struct dtl_rule *rule)
{
	bool on = true;

	if (c) {
		if (c->has_select)
			on = any_matches(&c->select, rule);
		if (any_matches(&c->extend_select, rule))
			on = true;
		if (any_matches(&c->ignore, rule))
			on = false;
	}
	if (o->select_given)
		on = any_matches(&o->select, rule);
	if (any_matches(&o->extend_select, rule))
		on = true;
	if (any_matches(&o->ignore, rule))
		on = false;
	return on;
}

/*
 * Rule selection in layers, as ruff does (https://docs.astral.sh/ruff/linter/#rule-selection): all
 * rules, then the config's select (a new base), extend-select and ignore, then the options'
 * --select (a new base), --extend-select and --ignore. The result is a list of rule ids.
 */
static int build_selection(const struct dtl_config *c, const struct dtl_lint_options *o,
                           struct dtl_arena *arena, struct dtl_rule_selection *ret)
{
	static const char *const none[] = {"ALL"};
	size_t n, count = 0;
	const struct dtl_rule *const *rules = dtl_rules_all(&n);
	const char **ids = dtl_arena_calloc(arena, n ? n : 1, sizeof(*ids));

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (rule_on(c, o, rules[i]))
			ids[count++] = rules[i]->id;
	*ret = (struct dtl_rule_selection){0};
	if (count == 0) {
		ret->ignore = none;
		ret->ignore_count = 1;
	} else if (count < n) {
		ret->select = ids;
		ret->select_count = count;
	}
	return 0;
}

int dtl_lint_settings_init(struct dtl_lint_settings *s, const struct dtl_config *config,
                           const struct dtl_lint_options *o, struct dtl_arena *arena)
{
	memset(s, 0, sizeof(*s));
	s->options = o;
	s->config = config;
	/* limits: the defaults, then the config's, then the options' */
	dtl_limits_default(&s->limits);
	if (config)
		dtl_lint_limits_apply(&s->limits, &config->limits);
	dtl_lint_limits_apply(&s->limits, &o->limits);
	s->fail_on = o->fail_on_given                ? o->fail_on
	             : config && config->has_fail_on ? config->fail_on
	                                             : DTL_SEVERITY_WARNING;
	return build_selection(config, o, arena, &s->selection);
}

/* The most specific override of a rule's severity: a name or full id beats a prefix, which
 * beats ALL; among equals the later one. */
void dtl_lint_apply_overrides(const struct dtl_config *c, struct dtl_findings *findings)
{
	const struct dtl_severity_override *o = c->overrides.items;
	struct dtl_finding *f = findings->items.items;

	for (size_t k = 0; k < findings->items.count; k++) {
		size_t best = 0;
		for (size_t i = 0; i < c->overrides.count; i++) {
			if (!dtl_rule_matches(f[k].rule, o[i].selector))
				continue;
			size_t weight = strcmp(o[i].selector, "ALL") == 0 ? 1
			                : strcmp(o[i].selector, f[k].rule->name) == 0
			                    ? 1000
			                    : 1 + strlen(o[i].selector);
			if (weight >= best) {
				best = weight;
				f[k].severity = o[i].severity;
			}
		}
	}
}

/* Is the rule named by an ignore entry, of the options or of the config? (--select leaves
 * DT003 on: it is about the inputs, not the set-up) */
bool dtl_lint_ignored(const char *id, const struct dtl_lint_settings *s)
{
	const struct dtl_rule *rule = dtl_rule_find(id);

	return rule && (any_matches(&s->options->ignore, rule) ||
	                (s->config && any_matches(&s->config->ignore, rule)));
}

const struct dtl_rule *const *dtl_lint_rules(size_t *ret_count)
{
	return dtl_rules_all(ret_count);
}

const struct dtl_rule *dtl_lint_rule(const char *id_or_name)
{
	return dtl_rule_find(id_or_name);
}

const char *dtl_lint_severity_name(enum dtl_severity severity)
{
	return dtl_severity_name(severity);
}

int dtl_lint_severity_parse(const char *text, enum dtl_severity *ret_severity)
{
	return dtl_severity_parse(text, ret_severity);
}
