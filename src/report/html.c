/* SPDX-License-Identifier: MIT */
/*
 * One self-contained HTML page: the findings, linked to their tensors; per input the groups
 * (FSDP1 units, FSDP2 groups, ZeRO-3 sets) with the mixed ones marked, and the module tree,
 * each tensor with its shape, whether it trains, its dtype after each stage (cells coloured
 * by dtype), its group and its trace.
 *
 * No network: CSS and the one script are inline, allowed by their hashes in a
 * Content-Security-Policy <meta> that allows nothing else (tests/html checks the hashes in
 * Chromium). Every input-derived string is HTML-escaped; ids are made of indices only.
 *
 * Large models stay readable and small: every module is collapsed (but those holding a
 * tensor of an error, which open), and a run of sibling modules named <prefix>.<N> that are
 * identical (tensors, shapes, flags, dtype at every stage, groups relative to the module) is
 * drawn once with its count, unless a finding names one of its tensors. The tree is walked
 * without recursion, and nesting stops at NEST_LIMIT (deeper modules are drawn flat).
 *
 * What is collapsed is not in the DOM until opened (issue 36: 100k distinct tensors were 1.9M
 * elements, 16-33 s before a browser showed anything): a collapsed module's body, each
 * distinct trace list, and the rows or modules past ROWS in one table or level (in chunks
 * that say which ones they hold) are inert <script type="text/html"> blocks after the tree,
 * "b" + the id of the <details> they fill; the script draws one on "toggle", or when the
 * address names an id inside it (it searches the blocks' text, then fills the chain).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dtl-config.h"
#include "report-private.h"

#define STAGES     DTL_STAGE_COUNT
#define NEST_LIMIT 24
/* rows per table and modules per level drawn at once; the others, in chunks of as many, are
 * drawn when their chunk is opened */
#define ROWS 200
/* groups listed per input besides the mixed ones (all of which are) */
#define GROUP_ROWS 200

/* The style and the script, allowed by the hashes in CSP below: change one, change its hash
 * (tests/html/check-html.py recomputes them). */
#define STYLE                                                                                      \
	"body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}"                       \
	"h1{font-size:1.5em}h1.bad{color:#b00}h1.ok{color:#070}"                                   \
	"code,.n,td{font-family:ui-monospace,monospace;font-size:12px}"                            \
	".finding{border-left:4px solid #888;padding:.2em .8em;margin:.8em 0;background:#f8f8f8}"  \
	".finding.error{border-color:#c00}.finding.warning{border-color:#d80}"                     \
	".finding.info{border-color:#38c}.finding:target{outline:2px solid #38c}"                  \
	".sev{font-weight:bold;text-transform:uppercase;margin-right:.5em}"                        \
	"table{border-collapse:collapse;margin:.2em 0}td,th{border:1px solid #ddd;"                \
	"padding:1px 4px;text-align:left;vertical-align:top}th{background:#f0f0f0;"                \
	"font-weight:normal;font-size:11px}"                                                       \
	"details.mod{margin:2px 0 2px 1.2em;padding:1px 4px}"                                      \
	"details.unit{border:2px solid #4a4;border-radius:4px}"                                    \
	"details.more{margin:2px 0 2px 1.2em;color:#555}"                                          \
	"details.unit.mixed{border:2px dashed #c00}"                                               \
	"summary{cursor:pointer}.cls{color:#777}"                                                  \
	".badge{display:inline-block;border-radius:3px;padding:0 4px;margin-left:4px;"             \
	"font-size:11px;background:#dfd}.badge.mixed{background:#c00;color:#fff}"                  \
	".badge.rep{background:#eef}tr:target{outline:2px solid #38c}tr.p td.n{"                   \
	"border-left:4px solid #a6f}tr.hit td.n{font-weight:bold}"                                 \
	"td.n{min-width:18em}.fl{color:#c00;margin-left:4px}"                                      \
	"details.tr ol{margin:0;padding-left:1.4em;font-family:system-ui,sans-serif}"              \
	".f32{background:#cfe3ff}.bf16{background:#ffd9a8}.f16{background:#ffc9dc}"                \
	".f64{background:#d9ccff}.f8e4m3{background:#d4f2c4}.f8e5m2{background:#c4ecd8}"           \
	".u8,.i8,.i16{background:#e2e2e2}.i32,.i64,.bool{background:#eeeedd}"                      \
	"td.x{background:#fafafa;color:#bbb}td.c{font-weight:bold}.legend span{padding:0 6px;"     \
	"margin-right:4px}ol.facts{overflow-wrap:anywhere}"                                        \
	"td{white-space:nowrap}details.tr ol{white-space:normal;min-width:40em}"
/* Every table's header row, stages included. A block's tables leave it to the page's script
 * (33k copies were 15 % of a 100k-tensor page). */
#define HEAD                                                                                       \
	"<tr><th>tensor<th>shape<th>trains<th>manifest<th>load<th>zero.Init<th>quantize<th>kbit"   \
	"<th>peft<th>trainer<th>engine<th>shard<th>compute<th>group<th>trace</tr>"
#define SCRIPT                                                                                     \
	"function fill(d){var "                                                                    \
	"q=d.getAttribute('data-q'),b=document.getElementById('b'+(q||d.id));"                     \
	"if(d.id&&b&&d.children.length<2){if(!q)b.remove();d.insertAdjacentHTML('beforeend',"      \
	"b.text.split('<table>').join('<table>" HEAD "'));}}"                                      \
	"function find(id){var e=document.getElementById(id);if(e||!id)return e;"                  \
	"var k='id=\"'+id+'\"',s=document.querySelectorAll('script[type=\"text/html\"]');"         \
	"for(var i=0;i<s.length;i++)if(s[i].text.indexOf(k)>=0){"                                  \
	"var d=find(s[i].id.slice(1));if(d)fill(d);return document.getElementById(id);}"           \
	"return null;}"                                                                            \
	"function show(){var e=find(location.hash.slice(1));"                                      \
	"if(!e)return;for(var p=e.parentElement;p;p=p.parentElement)"                              \
	"if(p.tagName==='DETAILS')p.open=true;e.scrollIntoView();}"                                \
	"addEventListener('toggle',function(v){if(v.target.open)fill(v.target);},true);"           \
	"addEventListener('hashchange',show);addEventListener('DOMContentLoaded',show);"
#define STYLE_HASH  "sha256-1jd9ktVfQQH35+MFhPKT2pwWfr38FSEwOot9HEPksjk="
#define SCRIPT_HASH "sha256-vY6531rPGGnQx+jcFUNX1CnvlFbH9sKpbQOV4zg1Z4I="
#define CSP                                                                                        \
	"default-src 'none'; style-src '" STYLE_HASH "'; script-src '" SCRIPT_HASH                 \
	"'; img-src 'none'; base-uri 'none'; form-action 'none'"

_Static_assert(STAGES == 10, "HEAD names the ten stages");

/* short dtype names, also their CSS classes */
static const char *short_name(enum dtl_dtype d)
{
	static const char *const names[DTL_DTYPE_COUNT] = {
	    [DTL_DTYPE_NONE] = "x",         [DTL_DTYPE_F32] = "f32",
	    [DTL_DTYPE_BF16] = "bf16",      [DTL_DTYPE_F16] = "f16",
	    [DTL_DTYPE_F64] = "f64",        [DTL_DTYPE_F8_E4M3FN] = "f8e4m3",
	    [DTL_DTYPE_F8_E5M2] = "f8e5m2", [DTL_DTYPE_U8] = "u8",
	    [DTL_DTYPE_I8] = "i8",          [DTL_DTYPE_I16] = "i16",
	    [DTL_DTYPE_I32] = "i32",        [DTL_DTYPE_I64] = "i64",
	    [DTL_DTYPE_BOOL] = "bool",
	};
	return d < DTL_DTYPE_COUNT && names[d] ? names[d] : "x";
}

/* HTML text and attribute values: the five specials as entities; controls and bytes of
 * invalid UTF-8 shown as \xNN / \uNNNN (a NUL or a raw C1 has no business in a page). */
static void put_n(FILE *out, const char *s, size_t len)
{
	for (const char *p = s, *e = s + len; p < e;) {
		uint32_t cp;
		bool escape;
		size_t n = dtl_report_char_at(p, &cp, &escape);
		if (escape)
			dtl_report_put_char_escape(out, cp);
		else if (*p == '&')
			fputs("&amp;", out);
		else if (*p == '<')
			fputs("&lt;", out);
		else if (*p == '>')
			fputs("&gt;", out);
		else if (*p == '"')
			fputs("&quot;", out);
		else if (*p == '\'')
			fputs("&#39;", out);
		else
			fwrite(p, 1, n, out);
		p += n;
	}
}

static void put(FILE *out, const char *s)
{
	put_n(out, s ? s : "", s ? strlen(s) : 0);
}

/* a name that may be a deep module's path: at most its last TAIL bytes, after an ellipsis
 * (a chain of n groups must not take n^2 bytes) */
#define TAIL 160
static void put_tail(FILE *out, const char *s)
{
	size_t len = strlen(s);

	if (len <= TAIL)
		return put_n(out, s, len);
	const char *p = s + len - TAIL;
	while ((*p & 0xc0) == 0x80) /* the start of a character */
		p++;
	fputs("\u2026", out);
	put_n(out, p, (size_t)(s + len - p));
}

static void put_loc(FILE *out, const struct dtl_loc *loc)
{
	put(out, loc->file ? loc->file : "-");
	fprintf(out, ":%u:%u", loc->line ? loc->line : 1, loc->column ? loc->column : 1);
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/* what one input's page needs, computed once in linear time */
struct view {
	FILE *out;
	size_t input;
	const struct dtl_input_view *in;
	const struct dtl_view_module *mods;
	const struct dtl_view_group *groups;
	uint8_t *stage; /* [tensor * STAGES + s]: dtype after stage s, NONE before it exists */
	uint32_t *first, *end; /* modules: the subtree's tensors are order[first..end) */
	bool *contiguous;      /* modules: and no other tensor lies in that range */
	uint32_t *depth;
	uint32_t *next;          /* modules: the next sibling to draw (past a run of repeats) */
	uint32_t *repeats;       /* modules: the length of the run it heads (1: none) */
	uint32_t *last;          /* modules: the last module of that run */
	bool *open;              /* modules: open by default */
	uint32_t *group_of;      /* modules: the FSDP unit / group wrapping it, or NONE */
	uint32_t *hot;           /* hot[r]: tensors named by a finding among order[0..r) */
	uint32_t *link;          /* tensors: the first finding naming it (report index), or NONE */
	uint16_t *mix;           /* groups: the set of stored dtypes of its members */
	uint32_t *group_finding; /* groups: a finding about it, or NONE */
	bool *inlined;  /* modules: a plain leaf, whose tensors are rows of its parent's table */
	uint32_t *head; /* modules: the first of the run it is in (itself when drawn) */
	/* modules: the module drawn for it: itself, or the first of the run that stands for it
	 * or for its outermost ancestor in a run */
	uint32_t *shown_as;
	bool *listed;      /* groups: a row of the groups table (all mixed ones, GROUP_ROWS more) */
	uint32_t *kids;    /* modules: how many children are drawn */
	uint32_t *written; /* modules: how many of those the open walk has written */
	struct dtl_vec lazy;     /* struct lazy: the stubs drawn, whose bodies are still to write */
	bool in_block;           /* writing those bodies */
	struct dtl_strmap facts; /* fact -> number: each is written once, at the section's end */
	struct dtl_vec fact_list;  /* const char * */
	struct dtl_strmap traces;  /* a trace's list (HTML) -> its number */
	struct dtl_vec trace_list; /* const char *: each distinct list, once */
	struct dtl_arena *arena;
	int error; /* -ENOMEM from the fact list */
};

static bool mixed(uint16_t set)
{
	return set & (set - 1);
}

static void dtype_set(FILE *out, uint16_t set)
{
	bool first = true;

	for (int d = 0; d < DTL_DTYPE_COUNT; d++)
		if (set & (1u << d)) {
			fprintf(out, "%s%s", first ? "" : "+", short_name(d));
			first = false;
		}
}

static void stages_of(struct view *v, uint32_t t, uint8_t *row)
{
	struct dtl_trace_step history[64];
	size_t n = dtl_input_view_history(v->in, t, history, 64), e = 0;
	enum dtl_dtype cur = n == 64 ? history[0].from : DTL_DTYPE_NONE;

	for (int s = 0; s < DTL_STAGE_COMPUTE; s++) {
		for (; e < n && (int)history[e].stage <= s; e++)
			if (history[e].stage != DTL_STAGE_COMPUTE)
				cur = history[e].to;
		row[s] = (uint8_t)cur;
	}
	row[DTL_STAGE_COMPUTE] = v->in->compute_dtype[t];
}

/* a module path's last segment is a number: a repeated layer's name */
static bool numbered(const struct dtl_view_module *m)
{
	uint32_t k = m->path_len;

	while (k > 0 && m->path[k - 1] >= '0' && m->path[k - 1] <= '9')
		k--;
	return k < m->path_len && (k == 0 || m->path[k - 1] == '.');
}

/* the path of a group's module relative to module m (*ret_len bytes; module paths are not
 * NUL-terminated), or NULL when it is not inside it */
static const char *inside(const struct dtl_view_module *mods, const struct dtl_view_group *g,
                          const struct dtl_view_module *m, uint32_t *ret_len)
{
	if (g->module == DTL_NONE_INDEX)
		return NULL;
	const struct dtl_view_module *gm = &mods[g->module];
	if (gm->path_len < m->path_len || memcmp(gm->path, m->path, m->path_len) != 0)
		return NULL;
	if (gm->path_len > m->path_len && gm->path[m->path_len] != '.')
		return NULL;
	*ret_len = gm->path_len - m->path_len;
	return gm->path + m->path_len;
}

static bool same_shape(const struct dtl_input_view *in, uint32_t a, uint32_t b)
{
	uint32_t da = in->decl[a], db = in->decl[b];
	const int64_t *sa = NULL, *sb = NULL;
	uint32_t ra = 0, rb = 0;

	if (in->numel[a] != in->numel[b])
		return false;
	if (da != DTL_NONE_INDEX) {
		sa = in->manifest->tensors[da].shape;
		ra = in->manifest->tensors[da].rank;
	}
	if (db != DTL_NONE_INDEX) {
		sb = in->manifest->tensors[db].shape;
		rb = in->manifest->tensors[db].rank;
	}
	if (!sa || !sb)
		return !sa && !sb;
	return ra == rb && memcmp(sa, sb, ra * sizeof(*sa)) == 0;
}

/* Are modules a and b (siblings) drawn alike? Linear in their tensors. */
static bool identical(const struct view *v, uint32_t a, uint32_t b)
{
	const struct dtl_input_view *in = v->in;
	const struct dtl_view_module *ma = &v->mods[a], *mb = &v->mods[b];

	if (!v->contiguous[a] || !v->contiguous[b] || !numbered(ma) || !numbered(mb))
		return false;
	if (v->end[a] - v->first[a] != v->end[b] - v->first[b] || ma->wrapped != mb->wrapped)
		return false;
	if ((ma->class_name || mb->class_name) &&
	    (!ma->class_name || !mb->class_name || strcmp(ma->class_name, mb->class_name) != 0))
		return false;
	if (v->hot[v->end[a]] != v->hot[v->first[a]] || v->hot[v->end[b]] != v->hot[v->first[b]])
		return false; /* a finding links to its tensors: they are drawn */
	for (uint32_t k = 0; k < v->end[a] - v->first[a]; k++) {
		uint32_t x = in->order[v->first[a] + k], y = in->order[v->first[b] + k];
		uint32_t lx = in->name_len[x] - ma->path_len, ly = in->name_len[y] - mb->path_len;
		if (lx != ly ||
		    memcmp(in->name[x] + ma->path_len, in->name[y] + mb->path_len, lx) != 0)
			return false;
		if (in->kind[x] != in->kind[y] || in->flags[x] != in->flags[y] ||
		    !same_shape(in, x, y) ||
		    memcmp(v->stage + (size_t)x * STAGES, v->stage + (size_t)y * STAGES, STAGES) !=
		        0)
			return false;
		uint32_t gx = in->group[x], gy = in->group[y];
		if ((gx == DTL_NONE_INDEX) != (gy == DTL_NONE_INDEX))
			return false;
		if (gx == DTL_NONE_INDEX || gx == gy)
			continue;
		uint32_t nx = 0, ny = 0;
		const char *rx = inside(v->mods, &v->groups[gx], ma, &nx);
		const char *ry = inside(v->mods, &v->groups[gy], mb, &ny);
		if (v->groups[gx].kind != v->groups[gy].kind || !rx || !ry || nx != ny ||
		    memcmp(rx, ry, nx) != 0 || v->mix[gx] != v->mix[gy])
			return false;
	}
	return true;
}

/* The view's per-tensor, per-module and per-group arrays; ret_size: per-module scratch. */
static int view_alloc(struct view *v, struct dtl_arena *arena, uint32_t **ret_size)
{
	const struct dtl_input_view *in = v->in;
	size_t nt = in->tensor_count, nm = in->module_count, ng = in->group_count;

	struct dtl_view_module *mods;
	struct dtl_view_group *groups;
	if (dtl_input_view_tree(in, arena, &mods, &groups) < 0)
		return -ENOMEM;
	v->mods = mods;
	v->groups = groups;
	v->stage = dtl_arena_alloc(arena, (nt ? nt : 1) * STAGES);
	v->first = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->end = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->contiguous = dtl_arena_calloc(arena, nm, sizeof(bool));
	v->depth = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->next = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->repeats = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->last = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->open = dtl_arena_calloc(arena, nm, sizeof(bool));
	v->group_of = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->hot = dtl_arena_calloc(arena, nt + 1, sizeof(uint32_t));
	v->link = dtl_arena_calloc(arena, nt ? nt : 1, sizeof(uint32_t));
	v->mix = dtl_arena_calloc(arena, ng ? ng : 1, sizeof(uint16_t));
	v->group_finding = dtl_arena_calloc(arena, ng ? ng : 1, sizeof(uint32_t));
	v->inlined = dtl_arena_calloc(arena, nm, sizeof(bool));
	v->head = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->shown_as = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->listed = dtl_arena_calloc(arena, ng ? ng : 1, sizeof(bool));
	v->kids = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->written = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	v->arena = arena;
	dtl_strmap_init(&v->facts, arena);
	dtl_strmap_init(&v->traces, arena);
	uint32_t *size = dtl_arena_calloc(arena, nm, sizeof(uint32_t));
	if (!v->stage || !v->first || !v->end || !v->contiguous || !v->depth || !v->next ||
	    !v->repeats || !v->last || !v->open || !v->group_of || !v->hot || !v->link || !v->mix ||
	    !v->group_finding || !v->inlined || !v->head || !v->shown_as || !v->listed ||
	    !v->kids || !v->written || !size)
		return -ENOMEM;
	*ret_size = size;
	return 0;
}

/* Each tensor's dtype after each stage; each group's set of stored dtypes. */
static void stage_tensors(struct view *v)
{
	const struct dtl_input_view *in = v->in;

	for (size_t t = 0; t < in->tensor_count; t++)
		stages_of(v, (uint32_t)t, v->stage + t * STAGES);
	for (size_t g = 0; g < in->group_count; g++) {
		for (size_t k = 0; k < v->groups[g].count; k++)
			v->mix[g] |= (uint16_t)(1u << in->dtype[v->groups[g].members[k]]);
	}
}

/* Link tensors and groups to the first finding naming them; open modules an error names. */
static void link_findings(struct view *v, const struct dtl_report_item *items, size_t count)
{
	const struct dtl_input_view *in = v->in;
	size_t nt = in->tensor_count, ng = in->group_count;

	for (size_t t = 0; t < nt; t++)
		v->link[t] = DTL_NONE_INDEX;
	for (size_t g = 0; g < ng; g++)
		v->group_finding[g] = DTL_NONE_INDEX;
	for (size_t i = 0; i < count; i++) {
		const struct dtl_finding *f = items[i].finding;
		if (items[i].input->view != in)
			continue;
		uint32_t g = f->view.group ? f->view.group->id : DTL_NONE_INDEX;
		if (g < ng && v->group_finding[g] == DTL_NONE_INDEX)
			v->group_finding[g] = (uint32_t)i;
		for (size_t k = 0; k < f->tensor_count; k++) {
			uint32_t t = f->tensors[k];
			if (v->link[t] == DTL_NONE_INDEX)
				v->link[t] = (uint32_t)i;
			if (f->severity != DTL_SEVERITY_ERROR)
				continue;
			for (uint32_t m = in->module[t]; m != DTL_NONE_INDEX && !v->open[m];
			     m = v->mods[m].parent)
				v->open[m] = true;
		}
	}
	for (size_t r = 0; r < nt; r++)
		v->hot[r + 1] = v->hot[r] + (v->link[in->order[r]] != DTL_NONE_INDEX);
}

/* Each module alone, at its depth; -EINVAL when a parent does not come first. */
static int init_modules(struct view *v)
{
	for (size_t m = 0; m < v->in->module_count; m++) {
		v->first[m] = UINT32_MAX;
		v->group_of[m] = DTL_NONE_INDEX;
		v->next[m] = v->mods[m].next_sibling;
		v->repeats[m] = 1;
		v->last[m] = (uint32_t)m;
		v->head[m] = (uint32_t)m;
		uint32_t p = v->mods[m].parent;
		if (p != DTL_NONE_INDEX && p >= m)
			return -EINVAL;
		v->depth[m] = p == DTL_NONE_INDEX ? 0 : v->depth[p] + 1;
	}
	return 0;
}

/* Subtree ranges: modules are made parents first, so children have larger indices. */
static void subtree_ranges(struct view *v, uint32_t *size)
{
	const struct dtl_input_view *in = v->in;
	size_t nm = in->module_count;

	for (size_t t = 0; t < in->tensor_count; t++) {
		uint32_t m = in->module[t], r = in->rank[t];
		size[m]++;
		if (r < v->first[m])
			v->first[m] = r;
		if (r + 1 > v->end[m])
			v->end[m] = r + 1;
	}
	for (size_t m = nm; m-- > 1;) {
		uint32_t p = v->mods[m].parent;
		if (p == DTL_NONE_INDEX)
			continue;
		size[p] += size[m];
		if (v->first[m] < v->first[p])
			v->first[p] = v->first[m];
		if (v->end[m] > v->end[p])
			v->end[p] = v->end[m];
	}
	for (size_t m = 0; m < nm; m++) {
		if (v->first[m] == UINT32_MAX)
			v->first[m] = v->end[m] = 0;
		v->contiguous[m] = v->end[m] - v->first[m] == size[m];
	}
}

/* The FSDP unit or group that wraps each module. */
static void mark_units(struct view *v)
{
	for (size_t g = 0; g < v->in->group_count; g++)
		if (v->groups[g].module != DTL_NONE_INDEX &&
		    (v->groups[g].kind == DTL_GROUP_FSDP1_UNIT ||
		     v->groups[g].kind == DTL_GROUP_FSDP2_GROUP))
			v->group_of[v->groups[g].module] = (uint32_t)g;
}

/* Runs of identical numbered siblings: each compared with the run's first. */
static void find_runs(struct view *v)
{
	for (size_t m = 0; m < v->in->module_count; m++) {
		uint32_t head = v->mods[m].first_child;
		while (head != DTL_NONE_INDEX) {
			uint32_t s = v->mods[head].next_sibling;
			while (s != DTL_NONE_INDEX && identical(v, head, s)) {
				v->head[s] = head;
				v->repeats[head]++;
				v->last[head] = s;
				s = v->mods[s].next_sibling;
			}
			v->next[head] = s;
			head = s;
		}
	}
}

/* The groups table: every mixed group or one with a finding, and GROUP_ROWS more. */
static void list_groups(struct view *v)
{
	for (size_t g = 0, others = 0; g < v->in->group_count; g++) {
		bool notable = mixed(v->mix[g]) || v->group_finding[g] != DTL_NONE_INDEX;
		v->listed[g] = notable || others < GROUP_ROWS;
		others += !notable;
	}
}

/* Which module is drawn for each one, and which leaves get no box of their own. */
static void choose_drawn(struct view *v)
{
	size_t nm = v->in->module_count;

	for (size_t m = 0; m < nm; m++) { /* parents first */
		uint32_t p = v->mods[m].parent;
		if (p != DTL_NONE_INDEX && v->shown_as[p] != p)
			v->shown_as[m] = v->shown_as[p];
		else
			v->shown_as[m] = v->head[m];
	}
	/* a leaf that is neither a unit nor a run (a Linear with its weight and bias) is rows
	 * of its parent's table: no box and table of its own per tensor */
	for (size_t m = 0; m < nm; m++)
		v->inlined[m] = v->mods[m].parent != DTL_NONE_INDEX &&
		                v->mods[m].first_child == DTL_NONE_INDEX &&
		                v->group_of[m] == DTL_NONE_INDEX && v->repeats[m] == 1 &&
		                v->depth[m] <= NEST_LIMIT;
	for (size_t m = 0; m < nm; m++) /* what drawn() and next[] visit: run heads, not inlined */
		if (v->mods[m].parent != DTL_NONE_INDEX && !v->inlined[m] && v->head[m] == m)
			v->kids[v->mods[m].parent]++;
}

static int view_init(struct view *v, struct dtl_arena *arena, const struct dtl_report_item *items,
                     size_t count)
{
	uint32_t *size;
	int r;

	if ((r = view_alloc(v, arena, &size)) < 0)
		return r;
	stage_tensors(v);
	link_findings(v, items, count);
	if ((r = init_modules(v)) < 0)
		return r;
	subtree_ranges(v, size);
	mark_units(v);
	find_runs(v);
	choose_drawn(v);
	list_groups(v);
	return 0;
}

/* m, or the first sibling after it that is drawn as a module of its own */
static uint32_t drawn(const struct view *v, uint32_t m)
{
	while (m != DTL_NONE_INDEX && v->inlined[m])
		m = v->next[m];
	return m;
}

/* the number of a fact in the section's list ("[3]"), adding it; 0 when memory ran out */
static size_t fact_number(struct view *v, const char *fact)
{
	int64_t k = dtl_strmap_put(&v->facts, fact, strlen(fact), (int64_t)v->fact_list.count);
	if (k < 0) {
		v->error = -ENOMEM;
		return 0;
	}
	if ((size_t)k == v->fact_list.count) {
		const char **slot = dtl_vec_push(&v->fact_list, v->arena, sizeof(*slot));
		if (!slot) {
			v->error = -ENOMEM;
			return 0;
		}
		*slot = fact;
	}
	return (size_t)k + 1;
}

static void group_link(FILE *out, const struct view *v, uint32_t g)
{
	const struct dtl_view_group *gr = &v->groups[g];
	const char *letter = gr->kind == DTL_GROUP_FSDP1_UNIT         ? "U"
	                     : gr->kind == DTL_GROUP_FSDP2_GROUP      ? "G"
	                     : gr->kind == DTL_GROUP_ZERO3_PERSISTENT ? "P"
	                                                              : "T";
	if (v->listed[g])
		fprintf(out, "<a href=\"#g%zu-%u\">%s%u</a>", v->input, g, letter, gr->index);
	else
		fprintf(out, "%s%u", letter, gr->index);
}

/* the steps of a trace, as a list */
static void trace_steps(FILE *out, struct view *v, const struct dtl_trace_step *history, size_t n)
{
	fputs("<ol>", out);
	for (size_t e = 0; e < n; e++) {
		const struct dtl_trace_step *ev = &history[e];
		fprintf(out, "<li>%s: %s \u2192 %s: ", ev->name, short_name(ev->from),
		        short_name(ev->to));
		put(out, ev->reason);
		if (ev->loc.file && v->in->manifest->file &&
		    strcmp(ev->loc.file, v->in->manifest->file) == 0) /* the section's file */
			fprintf(out, " (line %u:%u)", ev->loc.line, ev->loc.column);
		else if (ev->loc.file) {
			fputs(" (", out);
			put_loc(out, &ev->loc);
			fputc(')', out);
		}
		if (ev->fact) {
			size_t k = fact_number(v, ev->fact);
			if (k)
				fprintf(out, " <a href=\"#fact%zu-%zu\">[%zu]</a>", v->input, k, k);
		}
	}
	fputs("</ol>", out);
}

/* the number of a trace's list among the section's distinct ones, adding it; -1 when memory
 * ran out (v->error) */
static int64_t trace_number(struct view *v, const char *text, size_t len)
{
	/* a list too long for a key (a hostile reason) is not shared */
	bool keyed = len < DTL_STRMAP_KEY_MAX;
	int64_t k = keyed ? dtl_strmap_get(&v->traces, text, len) : -1;
	if (k >= 0)
		return k;
	char *copy = dtl_arena_strndup(v->arena, text, len);
	const char **slot = copy ? dtl_vec_push(&v->trace_list, v->arena, sizeof(*slot)) : NULL;
	if (!slot) {
		v->error = -ENOMEM;
		return -1;
	}
	*slot = copy;
	k = (int64_t)v->trace_list.count - 1;
	if (keyed && dtl_strmap_put(&v->traces, copy, len, k) < 0) {
		v->error = -ENOMEM;
		return -1;
	}
	return k;
}

/* A tensor's trace: a <details> whose list is drawn when opened, from a block "bq<input>-<k>"
 * that holds each distinct list once (a 100k-tensor model has about a hundred: written out
 * in each row they were 40 % of its page). */
static void trace(FILE *out, struct view *v, uint32_t t)
{
	struct dtl_trace_step history[64];
	size_t n = dtl_input_view_history(v->in, t, history, 64), len = 0;
	char *text = NULL;
	FILE *mem = open_memstream(&text, &len);

	if (!mem) {
		v->error = -ENOMEM;
		return;
	}
	trace_steps(mem, v, history, n);
	int64_t k = fclose(mem) == 0 && text ? trace_number(v, text, len) : -1;
	free(text);
	if (k < 0) {
		v->error = -ENOMEM;
		return;
	}
	fprintf(out,
	        "<details class=tr id=\"tr%zu-%u\" data-q=\"q%zu-%lld\"><summary>%zu "
	        "step%s</summary></details>",
	        v->input, t, v->input, (long long)k, n, plural(n));
}

/* the blocks of the traces' lists */
static void trace_blocks(FILE *out, const struct view *v)
{
	const char **lists = v->trace_list.items;

	for (size_t k = 0; k < v->trace_list.count; k++)
		fprintf(out, "<script type=\"text/html\" id=\"bq%zu-%zu\">%s</script>\n", v->input,
		        k, lists[k]);
}

static void tensor_row(FILE *out, struct view *v, const struct dtl_report_item *items, uint32_t t,
                       const struct dtl_view_module *m)
{
	const struct dtl_input_view *in = v->in;
	const uint8_t *row = v->stage + (size_t)t * STAGES;
	uint32_t skip = m->path_len ? m->path_len + 1 : 0;
	bool persist = in->flags[t] & DTL_TF_ZERO_PERSIST;

	fprintf(out, "<tr id=\"t%zu-%u\"%s><td class=n>", v->input, t,
	        v->link[t] != DTL_NONE_INDEX ? (persist ? " class=\"hit p\"" : " class=hit")
	        : persist                    ? " class=p"
	                                     : "");
	if (skip <= in->name_len[t])
		put_n(out, in->name[t] + skip, in->name_len[t] - skip);
	else
		put_n(out, in->name[t], in->name_len[t]);
	if (v->link[t] != DTL_NONE_INDEX)
		fprintf(out, "<a class=fl href=\"#f%u\">%s</a>", v->link[t],
		        items[v->link[t]].finding->rule->id);
	fputs("<td>", out);
	uint32_t d = in->decl[t];
	if (d != DTL_NONE_INDEX)
		dtl_report_put_shape(out, in->manifest->tensors[d].shape,
		                     in->manifest->tensors[d].rank, in->numel[t], "");
	else
		dtl_report_put_shape(out, NULL, 0, in->numel[t], "");
	fprintf(out, "<td>%s",
	        in->kind[t] == DTL_KIND_BUFFER        ? "buffer"
	        : in->kind[t] == DTL_KIND_QUANT_STATE ? "q-state"
	        : (in->flags[t] & DTL_TF_TRAINABLE)   ? "yes"
	                                              : "no");
	/* one cell per run of stages that keep the dtype: a bar that breaks where it changes */
	for (int s = 0, e; s < STAGES; s = e) {
		const char *name = short_name(row[s]);
		bool changed = s > 0 && row[s - 1] != DTL_DTYPE_NONE;
		for (e = s + 1; e < STAGES && row[e] == row[s];)
			e++;
		fputs("<td", out);
		if (e - s > 1)
			fprintf(out, " colspan=%d", e - s);
		if (row[s] == DTL_DTYPE_NONE)
			fputs(" class=x>\u00b7", out);
		else if (changed)
			fprintf(out, " class=\"%s c\">%s", name, name);
		else
			fprintf(out, " class=%s>%s", name, name);
	}
	fputs("<td>", out);
	if (in->group[t] != DTL_NONE_INDEX)
		group_link(out, v, in->group[t]);
	fputs("<td>", out);
	trace(out, v, t);
	fputs("</tr>\n", out);
}

/* in a block (in_block), without its header row: the page's script adds it */
static void table_head(FILE *out, const struct view *v)
{
	fputs(v->in_block ? "<table>\n" : "<table>" HEAD "\n", out);
}

/* A position in a module's table: tensor t of module c, which is the module itself or one of
 * its inlined children; t is NONE past the last row. */
struct rows {
	uint32_t m, c, t;
};

/* from (c, t) to the first row at or after it */
static void rows_settle(const struct view *v, struct rows *r)
{
	while (r->t == DTL_NONE_INDEX) {
		r->c = r->c == r->m ? v->mods[r->m].first_child : v->mods[r->c].next_sibling;
		while (r->c != DTL_NONE_INDEX && !v->inlined[r->c])
			r->c = v->mods[r->c].next_sibling;
		if (r->c == DTL_NONE_INDEX)
			return;
		r->t = v->mods[r->c].first_tensor;
	}
}

static struct rows rows_start(const struct view *v, uint32_t m)
{
	struct rows r = {m, m, v->mods[m].first_tensor};
	rows_settle(v, &r);
	return r;
}

static void rows_step(const struct view *v, struct rows *r)
{
	r->t = v->in->next_in_module[r->t];
	rows_settle(v, r);
}

/* a stub whose body waits in a block: a module's, or a chunk of rows or of children */
enum lazy_kind { LAZY_MODULE, LAZY_ROWS, LAZY_KIDS };
struct lazy {
	enum lazy_kind kind;
	uint32_t m;    /* the module (whose rows or children the chunk holds) */
	struct rows r; /* rows: the first one; children: the first in r.c */
	uint32_t n;    /* rows, children: how many */
};

static uint32_t push_lazy(struct view *v, enum lazy_kind kind, uint32_t m, struct rows r,
                          uint32_t n)
{
	struct lazy *l = dtl_vec_push(&v->lazy, v->arena, sizeof(*l));
	if (!l) {
		v->error = -ENOMEM;
		return UINT32_MAX;
	}
	*l = (struct lazy){kind, m, r, n};
	return (uint32_t)(v->lazy.count - 1);
}

/* A chunk of at most ROWS rows or children: a <details class=more> whose body waits in a block
 * "bx<input>-<k>". The summary says which ones: nothing is left out unsaid. */
static void stub_chunk(FILE *out, struct view *v, enum lazy_kind kind, uint32_t m, struct rows r,
                       uint32_t from, uint32_t n, uint32_t total)
{
	uint32_t k = push_lazy(v, kind, m, r, n);
	if (k == UINT32_MAX)
		return;
	fprintf(out,
	        "<details class=more id=\"x%zu-%u\"><summary>%s %u\u2013%u of %u</summary>"
	        "</details>\n",
	        v->input, k, kind == LAZY_ROWS ? "tensors" : "modules", from + 1, from + n, total);
}

/* n rows of module m's table from *r on, in one table; *r moves past them */
static void table_rows(FILE *out, struct view *v, const struct dtl_report_item *items,
                       struct rows *r, uint32_t n)
{
	table_head(out, v);
	for (uint32_t k = 0; k < n && r->t != DTL_NONE_INDEX; k++, rows_step(v, r))
		tensor_row(out, v, items, r->t, &v->mods[r->m]);
	fputs("</table>\n", out);
}

/* The table of a module's own tensors and those of its inlined children: ROWS rows, then the
 * others in chunks of ROWS drawn when opened (a flat model of 100k tensors is one table). */
static void own_tensors(FILE *out, struct view *v, const struct dtl_report_item *items, uint32_t m)
{
	struct rows r = rows_start(v, m);
	uint32_t total = 0;

	for (struct rows k = r; k.t != DTL_NONE_INDEX; rows_step(v, &k))
		total++;
	if (!total)
		return;
	table_rows(out, v, items, &r, ROWS);
	for (uint32_t done = ROWS; done < total; done += ROWS) {
		uint32_t n = total - done < ROWS ? total - done : ROWS;
		struct rows end = r;
		bool hit = false;
		for (uint32_t k = 0; k < n; k++, rows_step(v, &end))
			hit |= v->link[end.t] != DTL_NONE_INDEX;
		if (hit && v->open[m]) { /* an error's tensors are shown, as in the first rows */
			fprintf(out,
			        "<details class=more open><summary>tensors %u\u2013%u of "
			        "%u</summary>\n",
			        done + 1, done + n, total);
			table_rows(out, v, items, &r, n);
			fputs("</details>\n", out);
		} else
			stub_chunk(out, v, LAZY_ROWS, m, r, done, n, total);
		r = end;
	}
}

/* a module's name below its parent; drawn flat, past NEST_LIMIT, with its depth (not its
 * full path: a chain of n modules would take n^2 bytes) */
static void segment(FILE *out, const struct view *v, uint32_t m)
{
	const struct dtl_view_module *md = &v->mods[m];
	const struct dtl_view_module *p = &v->mods[md->parent];

	if (v->depth[m] > NEST_LIMIT)
		fprintf(out, "\u21b3 depth %u: ", v->depth[m]);
	if (!p->path_len)
		put_n(out, md->path, md->path_len);
	else
		put_n(out, md->path + p->path_len + 1, md->path_len - p->path_len - 1);
}

/* a module's <details> and <summary>, left open for its body */
static void module_head(FILE *out, const struct view *v, uint32_t m)
{
	const struct dtl_view_module *md = &v->mods[m];
	uint32_t g = v->group_of[m];

	fprintf(out, "<details id=\"m%zu-%u\" class=\"mod%s%s\"%s><summary>", v->input, m,
	        g != DTL_NONE_INDEX ? " unit" : "",
	        g != DTL_NONE_INDEX && mixed(v->mix[g]) ? " mixed" : "", v->open[m] ? " open" : "");
	segment(out, v, m);
	if (md->class_name) {
		fputs(" <span class=cls>", out);
		put(out, md->class_name);
		fputs("</span>", out);
	}
	if (g != DTL_NONE_INDEX) {
		fprintf(out, " <span class=badge>%s %u \u00b7 %zu tensor%s \u00b7 ",
		        dtl_report_group_kind(v->groups[g].kind), v->groups[g].index,
		        v->groups[g].count, plural(v->groups[g].count));
		dtype_set(out, v->mix[g]);
		fputs("</span>", out);
		if (mixed(v->mix[g]))
			fputs(" <span class=\"badge mixed\">mixed</span>", out);
	}
	if (v->repeats[m] > 1) {
		fprintf(out, " <span class=\"badge rep\">\u00d7%u identical: ", v->repeats[m]);
		segment(out, v, m);
		fputs(" \u2026 ", out);
		segment(out, v, v->last[m]);
		fputs("</span>", out);
	}
	fputs("</summary>\n", out);
}

/* A collapsed module: its <details> holds only its summary; its body (its tensors and the
 * stubs of its children) is written later into an inert <script type=text/html> block
 * "bm<input>-<m>", which the page's script parses when the module is opened. A closed page
 * costs a browser a few elements per drawn module, not a dozen per tensor. */
static void stub_module(FILE *out, struct view *v, uint32_t m)
{
	module_head(out, v, m);
	fputs("</details>\n", out);
	push_lazy(v, LAZY_MODULE, m, (struct rows){0}, 0);
}

/* Stubs for up to n drawn siblings from c on, which are collapsed (stopping at an open one);
 * returns the last one written. */
static uint32_t stub_siblings(FILE *out, struct view *v, uint32_t c, uint32_t n)
{
	uint32_t last = c;

	for (uint32_t k = 0; k < n && c != DTL_NONE_INDEX && !v->open[c]; k++) {
		stub_module(out, v, c);
		last = c;
		c = drawn(v, v->next[c]);
	}
	return last;
}

/* A run of collapsed siblings from c on, the (from+1)-th drawn child of its parent: past ROWS
 * of them, at most ROWS go into one chunk. Returns the last module written or chunked. */
static uint32_t collapsed(FILE *out, struct view *v, uint32_t c, uint32_t from)
{
	uint32_t p = v->mods[c].parent, n = 0, last = c;

	if (from < ROWS) {
		stub_module(out, v, c);
		return c;
	}
	for (uint32_t k = c; k != DTL_NONE_INDEX && !v->open[k] && n < ROWS;
	     k = drawn(v, v->next[k])) {
		last = k;
		n++;
	}
	stub_chunk(out, v, LAZY_KIDS, p, (struct rows){p, c, DTL_NONE_INDEX}, from, n, v->kids[p]);
	return last;
}

static void open_module(FILE *out, struct view *v, const struct dtl_report_item *items, uint32_t m)
{
	module_head(out, v, m);
	own_tensors(out, v, items, m);
}

/* The module tree in pre-order, without recursion, down the modules open by default (those
 * around an error's tensors): down the first children, along the next siblings (past runs of
 * repeats), up the parents. A collapsed module is a stub (stub_module), its subtree left for
 * lazy_bodies; all modules under it are collapsed too. */
static void tree(FILE *out, struct view *v, const struct dtl_report_item *items, uint32_t root)
{
	const struct dtl_view_module *mods = v->mods;
	uint32_t m = drawn(v, mods[root].first_child);

	own_tensors(out, v, items, root);
	while (m != DTL_NONE_INDEX) {
		uint32_t p = mods[m].parent;
		if (!v->open[m]) {
			uint32_t last = collapsed(out, v, m, v->written[p]);
			for (; m != last; m = drawn(v, v->next[m]))
				v->written[p]++;
			v->written[p]++;
		} else {
			v->written[p]++;
			open_module(out, v, items, m);
			if (v->depth[m] > NEST_LIMIT)
				fputs("</details>\n", out);
			if (drawn(v, mods[m].first_child) != DTL_NONE_INDEX) {
				m = drawn(v, mods[m].first_child);
				continue;
			}
		}
		for (;;) { /* m is written: close it (a stub is), then on to the next one */
			if (v->open[m] && v->depth[m] <= NEST_LIMIT)
				fputs("</details>\n", out);
			if (drawn(v, v->next[m]) != DTL_NONE_INDEX) {
				m = drawn(v, v->next[m]);
				break;
			}
			m = mods[m].parent;
			if (m == root) {
				m = DTL_NONE_INDEX;
				break;
			}
		}
	}
}

/* A collapsed module's body: its tensors, and its children (all collapsed) as stubs, ROWS of
 * them and the others in chunks. */
static void module_body(FILE *out, struct view *v, const struct dtl_report_item *items, uint32_t m)
{
	uint32_t c = drawn(v, v->mods[m].first_child);

	own_tensors(out, v, items, m);
	for (uint32_t from = 0; c != DTL_NONE_INDEX; c = drawn(v, v->next[c])) {
		uint32_t last = collapsed(out, v, c, from);
		for (from++; c != last; c = drawn(v, v->next[c]))
			from++;
	}
}

/* The body of each stub, as an inert block after the tree; writing one can add stubs to the
 * list (each module, row and child once: linear). Its text is HTML whose input-derived bytes
 * are escaped, so no '<' of a name can close the block. */
static void lazy_bodies(FILE *out, struct view *v, const struct dtl_report_item *items)
{
	v->in_block = true;
	for (size_t k = 0; k < v->lazy.count; k++) {
		struct lazy l = ((const struct lazy *)v->lazy.items)[k];
		if (l.kind == LAZY_MODULE)
			fprintf(out, "<script type=\"text/html\" id=\"bm%zu-%u\">", v->input, l.m);
		else
			fprintf(out, "<script type=\"text/html\" id=\"bx%zu-%zu\">", v->input, k);
		if (l.kind == LAZY_MODULE)
			module_body(out, v, items, l.m);
		else if (l.kind == LAZY_ROWS)
			table_rows(out, v, items, &l.r, l.n);
		else
			stub_siblings(out, v, l.r.c, l.n);
		fputs("</script>\n", out);
	}
}

static void groups_table(FILE *out, const struct view *v)
{
	size_t ng = v->in->group_count, left = 0;

	if (!ng)
		return;
	fputs("<h3>Groups</h3>\n<table><tr><th>kind<th>#<th>name<th>tensors<th>stored "
	      "dtypes<th>finding</tr>\n",
	      out);
	for (size_t g = 0; g < ng; g++) {
		const struct dtl_view_group *gr = &v->groups[g];
		bool mix = mixed(v->mix[g]);
		if (!v->listed[g]) {
			left++;
			continue;
		}
		fprintf(out, "<tr id=\"g%zu-%zu\"><td>%s<td>%u<td>", v->input, g,
		        dtl_report_group_kind(gr->kind), gr->index);
		if (gr->module != DTL_NONE_INDEX)
			fprintf(out, "<a href=\"#m%zu-%u\">", v->input, v->shown_as[gr->module]);
		put_tail(out, gr->name);
		if (gr->module != DTL_NONE_INDEX)
			fputs("</a>", out);
		fprintf(out, "<td>%zu<td>", gr->count);
		dtype_set(out, v->mix[g]);
		if (mix)
			fputs(" <span class=\"badge mixed\">mixed</span>", out);
		fputs("<td>", out);
		if (v->group_finding[g] != DTL_NONE_INDEX)
			fprintf(out, "<a href=\"#f%u\">finding</a>", v->group_finding[g]);
		fputs("</tr>\n", out);
	}
	if (left)
		fprintf(out, "<tr><td colspan=6>%zu more group%s, none mixed</tr>\n", left,
		        plural(left));
	fputs("</table>\n", out);
}

static void legend(FILE *out)
{
	fputs("<p class=legend>dtype after each stage: ", out);
	for (int d = 1; d < DTL_DTYPE_COUNT; d++)
		fprintf(out, "<span class=%s>%s = %s</span>", short_name(d), short_name(d),
		        dtl_dtype_name(d));
	fputs("<span class=x>\u00b7 = not there yet</span>; a cell spans the stages that keep "
	      "the dtype, bold: changed. Lines are in the file this section is about. Group: "
	      "U = FSDP1 unit, G = FSDP2 group, P = ZeRO-3 persistent, T = ZeRO-3 trainable. "
	      "Outlined modules are units or groups; dashed red: mixed dtypes.</p>\n",
	      out);
}

static int input_section(FILE *out, size_t i, const struct dtl_report_input *input,
                         const struct dtl_report_item *items, size_t count)
{
	struct dtl_arena arena;
	struct view v = {.out = out, .input = i, .in = input->view};
	const struct dtl_input_view *in = input->view;
	char ver[32];
	int r;

	fprintf(out, "<section class=input id=\"i%zu\"><h2>", i);
	put(out, in->manifest->file ? in->manifest->file : input->file);
	char precision[1024];
	fprintf(out, "</h2>\n<p>%s, precision ", dtl_strategy_name(in->rp.plan->strategy));
	put(out, dtl_report_precision(in->rp.plan, precision, sizeof(precision)));
	fprintf(out, ", world size %lld; %zu tensors, %zu groups. Versions:",
	        (long long)in->rp.plan->world_size, in->tensor_count, in->group_count);
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		if (!dtl_report_version_shown(in, fw))
			continue;
		fprintf(out, "%s %s ", fw ? "," : "", dtl_framework_name(fw));
		put(out, dtl_version_format(&in->rp.plan->versions[fw], ver, sizeof(ver)));
		if (in->rp.version_assumed[fw])
			fputs(" (assumed)", out);
	}
	fputs("</p>\n", out);
	dtl_arena_init(&arena);
	r = view_init(&v, &arena, items, count);
	if (r < 0)
		goto done;
	groups_table(out, &v);
	uint32_t root = 0;
	while (root < in->module_count && v.mods[root].parent != DTL_NONE_INDEX)
		root++;
	fprintf(out, "<h3 id=\"m%zu-%u\">Modules</h3>\n", i, root); /* the root's anchor */
	legend(out);
	if (root < in->module_count) {
		if (v.group_of[root] != DTL_NONE_INDEX) {
			uint32_t g = v.group_of[root];
			fprintf(out, "<p>The root is %s %u (%zu tensors, ",
			        dtl_report_group_kind(v.groups[g].kind), v.groups[g].index,
			        v.groups[g].count);
			dtype_set(out, v.mix[g]);
			fprintf(out, ")%s</p>\n",
			        mixed(v.mix[g]) ? " <span class=\"badge mixed\">mixed</span>" : "");
		}
		tree(out, &v, items, root);
		lazy_bodies(out, &v, items);
		trace_blocks(out, &v);
	}
	if (v.fact_list.count) {
		const char **facts = v.fact_list.items;
		fputs("<h3>Facts the steps cite</h3>\n<ol class=facts>", out);
		for (size_t k = 0; k < v.fact_list.count; k++) {
			fprintf(out, "<li id=\"fact%zu-%zu\">", i, k + 1);
			put(out, facts[k]);
		}
		fputs("</ol>\n", out);
	}
	r = v.error;
	fputs("</section>\n", out);
done:
	dtl_arena_fini(&arena);
	return r;
}

static void finding(FILE *out, size_t k, const struct dtl_report_item *it, size_t i)
{
	const struct dtl_finding *f = it->finding;

	fprintf(out, "<div class=\"finding %s\" id=\"f%zu\"><h3><span class=sev>%s</span>%s ",
	        dtl_severity_name(f->severity), k, dtl_severity_name(f->severity), f->rule->id);
	put(out, f->rule->name);
	fputs("</h3>\n<p class=msg>", out);
	put(out, f->message);
	fputs("</p>\n<p><code>", out);
	put(out, it->path);
	fprintf(out, ":%u:%u</code>", f->loc.line ? f->loc.line : 1,
	        f->loc.column ? f->loc.column : 1);
	fputs("</p>\n", out);
	if (f->error_text) {
		fputs("<p>", out);
		put(out, dtl_report_raiser(f));
		fputs(" raises ", out);
		put(out, dtl_report_when(f));
		fputs(":<br><code>", out);
		put(out, f->error_text);
		fputs("</code></p>\n", out);
	}
	if (f->effect) {
		fputs("<p>Effect: ", out);
		put(out, f->effect);
		fputs("</p>\n", out);
	}
	if (f->view.tensors && f->tensor_count) {
		fputs("<ul>", out);
		for (size_t t = 0; t < f->tensor_count; t++) {
			const struct dtl_finding_tensor *ft = &f->view.tensors[t];
			uint32_t x = ft->index;
			fprintf(out, "<li><a href=\"#t%zu-%u\"><code>", i, x);
			put(out, ft->name);
			fprintf(out, "</code></a> <span class=%s>%s</span>", short_name(ft->dtype),
			        short_name(ft->dtype));
			fprintf(out, " (<a href=\"#tr%zu-%u\">trace</a>)", i, x);
		}
		fputs("</ul>\n", out);
	}
	if (f->fix) {
		fputs("<p>Fix: ", out);
		put(out, f->fix);
		fputs("</p>\n", out);
	}
	fputs("</div>\n", out);
}

int dtl_report_html(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	struct dtl_arena arena;
	struct dtl_report_item *items;
	struct dtl_report_counts c;
	size_t count;
	int r;

	dtl_arena_init(&arena);
	r = dtl_report_items(&arena, inputs, n, &items, &count);
	if (r < 0)
		goto done;
	dtl_report_count(inputs, n, &c);
	fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"" CSP "\">\n"
	      "<meta name=viewport content=\"width=device-width\">\n"
	      "<title>dtypelint report</title>\n<style>" STYLE "</style>\n"
	      "<script>" SCRIPT "</script>\n</head><body>\n",
	      out);
	if (c.errors)
		fprintf(out, "<h1 class=bad>%zu error%s would stop this run</h1>\n", c.errors,
		        plural(c.errors));
	else
		fputs("<h1 class=ok>No error would stop this run</h1>\n", out);
	fprintf(out,
	        "<p>%zu error%s, %zu warning%s, %zu info in %zu file%s (dtypelint %s)</p>\n"
	        "<h2>Findings</h2>\n",
	        c.errors, plural(c.errors), c.warnings, plural(c.warnings), c.infos, n, plural(n),
	        DTL_VERSION);
	if (!count)
		fputs("<p>None.</p>\n", out);
	/* most severe first, each level in report order */
	for (int s = DTL_SEVERITY_ERROR; s >= DTL_SEVERITY_INFO; s--)
		for (size_t k = 0; k < count; k++)
			if ((int)items[k].finding->severity == s)
				finding(out, k, &items[k], (size_t)(items[k].input - inputs));
	for (size_t i = 0; i < n && r >= 0; i++)
		if (inputs[i].view)
			r = input_section(out, i, &inputs[i], items, count);
	fputs("</body></html>\n", out);
	if (r >= 0)
		r = ferror(out) ? -EIO : 0;
done:
	dtl_arena_fini(&arena);
	return r;
}
