/* SPDX-License-Identifier: MIT */
/*
 * Suppressions, applied after every rule ran: the manifest's `suppress:` list (rule, optional
 * tensors glob, reason) and inline YAML comments `# dtypelint: ignore[RULE,...] reason`
 * (ruff's noqa comments, https://docs.astral.sh/ruff/linter/#error-suppression). A suppression that
 * silences nothing is reported as DT002 unused-suppression (src/rules/dt002-unused-suppression.c
 * makes those findings), like ruff's RUF100.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "dtypelint/core/glob.h"
#include "lint-private.h"

struct selector_use {
	const char *selector;
	size_t used;
};

struct inline_suppression {
	struct dtl_loc loc; /* the '#' */
	bool own_line;      /* nothing but the comment on its line: it covers the next line */
	struct selector_use *selectors;
	size_t count;
	const char *reason;
};

/* JSON by its name: no need to read it again (JSON has no comments) */
static bool named_json(const char *path)
{
	const char *dot = strrchr(path, '.');
	return dot && strcasecmp(dot, ".json") == 0;
}

static bool is_json(const struct dtl_source *source, const char *path)
{
	const char *dot = strrchr(path, '.');

	if (named_json(path))
		return true;
	if (dot && (strcasecmp(dot, ".yaml") == 0 || strcasecmp(dot, ".yml") == 0))
		return false;
	/* the document parser sniffs the first byte the same way */
	return source->size && (source->data[0] == '{' || source->data[0] == '[');
}

static int directive_error(struct dtl_error *error, struct dtl_loc loc, const char *what)
{
	return dtl_error_set(error, loc, -EINVAL,
	                     "inline suppression: %s (expected '# dtypelint: ignore[RULE,...] "
	                     "reason')",
	                     what);
}

/* Parses the text after '#' of one comment; returns 0 (and nothing added) for comments that
 * are no dtypelint directive. */
static int parse_directive(const char *text, size_t len, struct dtl_loc loc, bool own_line,
                           struct dtl_arena *arena, struct dtl_vec *out, struct dtl_error *error)
{
	static const char prefix[] = "dtypelint:";
	const char *p = text, *end = text + len;
	struct inline_suppression *s;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(end - p) < sizeof(prefix) - 1 || memcmp(p, prefix, sizeof(prefix) - 1) != 0)
		return 0;
	p += sizeof(prefix) - 1;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(end - p) < 6 || memcmp(p, "ignore", 6) != 0)
		return 0; /* a comment that merely mentions dtypelint */
	p += 6;
	if (p >= end || *p != '[')
		return directive_error(error, loc, "'ignore' must be followed by '[RULE,...]'");
	const char *close = memchr(p, ']', (size_t)(end - p));
	if (!close)
		return directive_error(error, loc, "no ']' after the rules");
	s = dtl_vec_push(out, arena, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->loc = loc;
	s->own_line = own_line;
	/* count, then store the comma-separated selectors */
	size_t max = 1;
	for (const char *q = p + 1; q < close; q++)
		max += *q == ',';
	s->selectors = dtl_arena_calloc(arena, max, sizeof(*s->selectors));
	if (!s->selectors)
		return -ENOMEM;
	for (const char *q = p + 1; q <= close;) {
		const char *comma = memchr(q, ',', (size_t)(close - q));
		const char *stop = comma ? comma : close;
		const char *a = q, *b = stop;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (a == b)
			return directive_error(error, loc, "an empty rule in '[...]'");
		if (!(s->selectors[s->count++].selector =
		          dtl_arena_strndup(arena, a, (size_t)(b - a))))
			return -ENOMEM;
		q = stop + 1;
	}
	const char *r = close + 1, *r_end = end;
	while (r < r_end && (*r == ' ' || *r == '\t'))
		r++;
	while (r_end > r && (r_end[-1] == ' ' || r_end[-1] == '\t' || r_end[-1] == '\r'))
		r_end--;
	if (r == r_end)
		return directive_error(error, loc,
		                       "a reason must follow the rules (say why it is safe)");
	s->reason = dtl_arena_strndup(arena, r, (size_t)(r_end - r));
	return s->reason ? 0 : -ENOMEM;
}

/* Finds the comments of a YAML source: a '#' at the start of a line or after a blank, outside
 * quoted scalars. Block scalars are not tracked: a manifest has none worth commenting in. */
static int scan_comments(const struct dtl_source *source, const char *file, struct dtl_arena *arena,
                         struct dtl_vec *out, struct dtl_error *error)
{
	const char *data = source->data;
	size_t size = source->size;
	uint32_t line = 1;

	for (size_t start = 0; start < size; line++) {
		const char *nl = memchr(data + start, '\n', size - start);
		size_t end = nl ? (size_t)(nl - data) : size;
		/* a line without a '#' holds no directive (most lines of a manifest) */
		if (!memchr(data + start, '#', end - start)) {
			start = end + 1;
			continue;
		}
		char quote = 0, prev = 0; /* prev: the last non-blank byte outside quotes */
		uint32_t column = 1;
		bool content = false;
		for (size_t i = start; i < end; i++) {
			char ch = data[i];
			if (((unsigned char)ch & 0xc0) != 0x80 && i > start)
				column++;
			if (quote) {
				if (ch == '\\' && quote == '"' && i + 1 < end)
					i++;
				else if (ch == quote)
					quote = 0;
				continue;
			}
			if ((ch == '"' || ch == '\'') && (!prev || strchr(":-[{,?", prev))) {
				quote = ch;
				content = true;
				continue;
			}
			if (ch == '#' &&
			    (i == start || data[i - 1] == ' ' || data[i - 1] == '\t')) {
				struct dtl_loc loc = {.file = file, .line = line, .column = column};
				int r = parse_directive(data + i + 1, end - i - 1, loc, !content,
				                        arena, out, error);
				if (r < 0)
					return r;
				break;
			}
			if (ch != ' ' && ch != '\t' && ch != '\r') {
				prev = ch;
				content = true;
			}
		}
		start = end + 1;
	}
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* Does an inline suppression on its line cover a finding that points at line? */
static bool covers(const struct inline_suppression *s, uint32_t line)
{
	return s->loc.line == line || (s->own_line && s->loc.line + 1 == line);
}

/* The comment on line, or NULL: comments are in line order, at most one a line. */
static struct inline_suppression *comment_on(struct inline_suppression *inl, size_t count,
                                             uint32_t line)
{
	size_t lo = 0, hi = count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (inl[mid].loc.line < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < count && inl[lo].loc.line == line ? &inl[lo] : NULL;
}

/* The inline suppressions that cover a place of a finding in file: the comment on its line,
 * and one alone on the line before. Looked up by line, not tried one by one (findings x
 * comments). Marks the selectors that name rule; true when there is one. */
static bool inline_use(struct inline_suppression *inl, size_t count, struct dtl_loc loc,
                       const char *file, const struct dtl_rule *rule)
{
	struct inline_suppression *on[2];
	bool hit = false;

	if (!count || !same_file(loc.file, file))
		return false;
	on[0] = comment_on(inl, count, loc.line);
	on[1] = loc.line > 1 ? comment_on(inl, count, loc.line - 1) : NULL;
	for (size_t i = 0; i < 2; i++) {
		if (!on[i] || !covers(on[i], loc.line))
			continue;
		for (size_t j = 0; j < on[i]->count; j++)
			if (dtl_rule_matches(rule, on[i]->selectors[j].selector)) {
				on[i]->selectors[j].used++;
				hit = true;
			}
	}
	return hit;
}

static bool listed_covers(const struct dtl_suppression *s, const struct dtl_finding *f,
                          const struct dtl_sim *sim)
{
	if (!s->tensors.text)
		return true;
	for (size_t k = 0; k < f->tensor_count; k++) {
		uint32_t t = f->tensors[k];
		if (dtl_glob_match(s->tensors.text, s->tensors.len, sim->t.name[t],
		                   sim->t.name_len[t]))
			return true;
	}
	return false;
}

/* The listed suppressions of one rule, indexed the first time a finding of it is seen. */
struct rule_suppressions {
	bool built;
	const uint32_t *plain; /* no tensors glob: they cover every finding of the rule */
	size_t plain_count;
	bool plain_marked;
	struct dtl_globset globs; /* the others, by their tensors glob */
	uint32_t *glob_owner;     /* glob index -> suppression index */
};

static int index_rule(struct rule_suppressions *rs, const struct dtl_manifest *m,
                      const uint32_t *ids, size_t count, struct dtl_arena *arena)
{
	uint32_t *plain = dtl_arena_calloc(arena, count + 1, sizeof(uint32_t));

	rs->glob_owner = dtl_arena_calloc(arena, count + 1, sizeof(uint32_t));
	if (!plain || !rs->glob_owner)
		return -ENOMEM;
	dtl_globset_init(&rs->globs, arena);
	for (size_t n = 0; n < count; n++) {
		const struct dtl_suppression *s = &m->suppress[ids[n]];
		if (!s->tensors.text) {
			plain[rs->plain_count++] = ids[n];
			continue;
		}
		rs->glob_owner[rs->globs.count] = ids[n];
		if (dtl_globset_add(&rs->globs, s->tensors.text, s->tensors.len) < 0)
			return -ENOMEM;
	}
	rs->plain = plain;
	rs->built = true;
	return 0;
}

/* Marks the suppressions of rs that cover finding f; true when one does. Each of f's tensors
 * is matched once against the rule's glob set (a glob per suppression and tensor took 9 s for
 * 8,000 suppressions and findings), and the suppressions without a glob are marked once. */
static bool listed_use(struct rule_suppressions *rs, const struct dtl_finding *f,
                       const struct dtl_sim *sim, size_t *used, uint32_t *scratch)
{
	bool hit = rs->plain_count > 0;

	if (hit && !rs->plain_marked) {
		for (size_t n = 0; n < rs->plain_count; n++)
			used[rs->plain[n]]++;
		rs->plain_marked = true;
	}
	if (!rs->globs.count)
		return hit;
	for (size_t k = 0; k < f->tensor_count; k++) {
		uint32_t t = f->tensors[k];
		size_t n = dtl_globset_matches(&rs->globs, sim->t.name[t], sim->t.name_len[t],
		                               scratch, rs->globs.count);
		for (size_t j = 0; j < n; j++)
			used[rs->glob_owner[scratch[j]]]++;
		hit |= n > 0;
	}
	return hit;
}

/* The inline suppression comments of the manifest file (a model folder and JSON have none):
 * from the source read already, else read here. */
static int read_comments(const struct dtl_manifest *m, const struct dtl_limits *limits,
                         const struct dtl_source *read_already, struct dtl_arena *arena,
                         struct dtl_vec *comments, struct dtl_error *error)
{
	struct dtl_source source;
	struct stat st;
	int r = 0;

	if (read_already)
		return is_json(read_already, m->file)
		           ? 0
		           : scan_comments(read_already, m->file, arena, comments, error);
	if (named_json(m->file) || stat(m->file, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	r = dtl_source_read(&source, m->file, limits, error);
	if (r < 0)
		return r;
	if (!is_json(&source, m->file))
		r = scan_comments(&source, m->file, arena, comments, error);
	dtl_source_fini(&source);
	return r;
}

/* What each suppression silenced, for DT002: the listed ones, then the inline ones. */
static int report_unused(const struct dtl_manifest *m, const size_t *listed_used,
                         const struct dtl_vec *comments, const struct dtl_rule_selection *selection,
                         struct dtl_arena *arena, struct dtl_findings *findings)
{
	const struct inline_suppression *inl = comments->items;
	size_t use_count = m->suppress_count, n = 0;

	for (size_t k = 0; k < comments->count; k++)
		use_count += inl[k].count;
	struct dtl_suppression_use *uses = dtl_arena_calloc(arena, use_count + 1, sizeof(*uses));
	if (!uses)
		return -ENOMEM;
	for (size_t k = 0; k < m->suppress_count; k++)
		uses[n++] = (struct dtl_suppression_use){.rule = m->suppress[k].rule,
		                                         .tensors = m->suppress[k].tensors.text,
		                                         .loc = m->suppress[k].loc,
		                                         .used = listed_used[k]};
	for (size_t k = 0; k < comments->count; k++)
		for (size_t j = 0; j < inl[k].count; j++)
			uses[n++] =
			    (struct dtl_suppression_use){.rule = inl[k].selectors[j].selector,
			                                 .inline_comment = true,
			                                 .loc = inl[k].loc,
			                                 .used = inl[k].selectors[j].used};
	return dtl_rules_unused_suppressions(uses, n, selection, arena, findings);
}

int dtl_lint_suppress(const struct dtl_sim *sim, struct dtl_findings *findings,
                      const struct dtl_rule_selection *selection, const struct dtl_limits *limits,
                      const struct dtl_source *read_already, struct dtl_arena *arena,
                      size_t *ret_suppressed, struct dtl_error *error)
{
	const struct dtl_manifest *m = sim->manifest;
	struct dtl_vec comments = {0}; /* struct inline_suppression */
	size_t *listed_used, kept = 0, removed = 0;
	int r;

	*ret_suppressed = 0;
	if ((r = read_comments(m, limits, read_already, arena, &comments, error)) < 0)
		return r;
	listed_used = dtl_arena_calloc(arena, m->suppress_count ? m->suppress_count : 1,
	                               sizeof(*listed_used));
	/* by_rule[by_rule_start[r] .. by_rule_start[r + 1]): the suppressions whose selector
	 * names rule r, lowest first (decided once, not once per finding: a thousand
	 * suppressions of one rule cost nothing to the findings of the others) */
	size_t rule_count;
	const struct dtl_rule *const *rules = dtl_rules_all(&rule_count);
	bool *covers = dtl_arena_calloc(arena, m->suppress_count * rule_count + 1, sizeof(bool));
	size_t *by_rule_start = dtl_arena_calloc(arena, rule_count + 2, sizeof(size_t));
	uint32_t *by_rule =
	    dtl_arena_calloc(arena, m->suppress_count * rule_count + 1, sizeof(uint32_t));
	struct rule_suppressions *per_rule =
	    dtl_arena_calloc(arena, rule_count + 1, sizeof(*per_rule));
	uint32_t *scratch = dtl_arena_calloc(arena, m->suppress_count + 1, sizeof(uint32_t));
	if (!listed_used || !covers || !by_rule_start || !by_rule || !per_rule || !scratch)
		return -ENOMEM;
	for (size_t k = 0; k < m->suppress_count; k++) {
		const char *selector = m->suppress[k].rule;
		/* suppressions in a row often name the same rules */
		if (k > 0 && selector && m->suppress[k - 1].rule &&
		    strcmp(selector, m->suppress[k - 1].rule) == 0) {
			memcpy(covers + k * rule_count, covers + (k - 1) * rule_count,
			       rule_count * sizeof(bool));
			continue;
		}
		for (size_t j = 0; j < rule_count; j++)
			covers[k * rule_count + j] = dtl_rule_matches(rules[j], selector);
	}
	for (size_t j = 0, n = 0; j < rule_count; j++) {
		by_rule_start[j] = n;
		for (size_t k = 0; k < m->suppress_count; k++)
			if (covers[k * rule_count + j])
				by_rule[n++] = (uint32_t)k;
		by_rule_start[j + 1] = n;
	}

	struct dtl_finding *items = findings->items.items;
	struct inline_suppression *inl = comments.items;
	for (size_t i = 0; i < findings->items.count; i++) {
		const struct dtl_finding *f = &items[i];
		bool hit = false;
		size_t rule = 0;
		while (rule < rule_count && rules[rule] != f->rule)
			rule++;
		if (rule < rule_count) {
			struct rule_suppressions *rs = &per_rule[rule];
			if (!rs->built &&
			    (r = index_rule(rs, m, by_rule + by_rule_start[rule],
			                    by_rule_start[rule + 1] - by_rule_start[rule], arena)) <
			        0)
				return r;
			hit = listed_use(rs, f, sim, listed_used, scratch);
		} else {
			for (size_t k = 0; k < m->suppress_count; k++)
				if (dtl_rule_matches(f->rule, m->suppress[k].rule) &&
				    listed_covers(&m->suppress[k], f, sim)) {
					listed_used[k]++;
					hit = true;
				}
		}
		/* a comment covering the finding at more than one place counts more than once:
		 * harmless, only whether it is used matters */
		hit |= inline_use(inl, comments.count, f->loc, m->file, f->rule);
		for (size_t k = 0; k < f->note_count; k++)
			hit |= inline_use(inl, comments.count, f->notes[k].loc, m->file, f->rule);
		if (hit)
			removed++;
		else
			items[kept++] = *f;
	}
	findings->items.count = kept;
	*ret_suppressed = removed;
	return report_unused(m, listed_used, &comments, selection, arena, findings);
}
