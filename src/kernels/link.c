/* SPDX-License-Identifier: MIT */
/*
 * Per-op contracts: from each registration, a breadth-first walk of the project's call graph
 * (calls with argument mapping first, then every referenced identifier, class -> method edges
 * and file-scope registry macros), collecting the facts of each function reached with its
 * depth and the op parameter it constrains.
 * docs/kernels.md §7 (BFS up to 6 hops; 352 of 550 ops got a fact against 196 at depth 0;
 * callee subjects mapped to caller arguments).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernels-private.h"

#define MAX_VISITED 4096u

struct index {
	struct dtl_strmap by_name; /* name -> first function */
	uint32_t *next_by_name;
	struct dtl_strmap by_cls; /* class -> first method */
	uint32_t *next_by_cls;
	struct dtl_strmap links; /* from -> first link */
	uint32_t *next_link;
	uint32_t *fact_start; /* facts of function f: fact_list[fact_start[f] .. fact_start[f+1]) */
	uint32_t *fact_list;
};

struct visit {
	uint32_t func;
	unsigned depth;
	int16_t *map; /* function parameter -> op parameter, -1 unknown */
};

struct linker {
	struct dtl_kernels *k;
	struct dtl_arena *scratch;
	struct index ix;
	const struct kfunc *funcs;
	uint32_t n_funcs;
	uint32_t *stamp;
	uint32_t generation;
	struct visit *queue;
	size_t n_queue;
	struct dtl_strmap finfo_by_path;
	const struct kfinfo *finfos;
	const struct kreg *reg;
	const struct kparam *op_params;
	uint32_t n_op_params;
};

static uint32_t chain_head(const struct dtl_strmap *map, const char *key)
{
	int64_t v = key ? dtl_strmap_get(map, key, strlen(key)) : -1;
	return v < 0 ? KNONE : (uint32_t)v;
}

static int build_index(struct linker *l)
{
	struct dtl_kernels_scanner *s = l->k->scanner;
	struct index *ix = &l->ix;
	const struct kfact *facts = s->facts.items;
	const struct klink *links = s->links.items;
	uint32_t n = l->n_funcs;

	dtl_strmap_init(&ix->by_name, l->scratch);
	dtl_strmap_init(&ix->by_cls, l->scratch);
	dtl_strmap_init(&ix->links, l->scratch);
	ix->next_by_name = dtl_arena_calloc(l->scratch, n + 1, sizeof(uint32_t));
	ix->next_by_cls = dtl_arena_calloc(l->scratch, n + 1, sizeof(uint32_t));
	ix->next_link = dtl_arena_calloc(l->scratch, s->links.count + 1, sizeof(uint32_t));
	ix->fact_start = dtl_arena_calloc(l->scratch, (size_t)n + 2, sizeof(uint32_t));
	ix->fact_list = dtl_arena_calloc(l->scratch, s->facts.count + 1, sizeof(uint32_t));
	l->stamp = dtl_arena_calloc(l->scratch, n + 1, sizeof(uint32_t));
	l->queue = dtl_arena_calloc(l->scratch, MAX_VISITED, sizeof(*l->queue));
	if (!ix->next_by_name || !ix->next_by_cls || !ix->next_link || !ix->fact_start ||
	    !ix->fact_list || !l->stamp || !l->queue)
		return -ENOMEM;
	/* chains in file order; a name has few definitions, so appending at the tail is cheap */
	for (uint32_t f = 0; f < n; f++) {
		const struct kfunc *fn = &l->funcs[f];
		ix->next_by_name[f] = KNONE;
		ix->next_by_cls[f] = KNONE;
		int64_t head = dtl_strmap_put(&ix->by_name, fn->name, strlen(fn->name), f);
		if (head < 0)
			return -ENOMEM;
		if ((uint32_t)head != f) {
			uint32_t tail = (uint32_t)head;
			while (ix->next_by_name[tail] != KNONE)
				tail = ix->next_by_name[tail];
			ix->next_by_name[tail] = f;
		}
		if (!fn->cls)
			continue;
		int64_t ch = dtl_strmap_put(&ix->by_cls, fn->cls, strlen(fn->cls), f);
		if (ch < 0)
			return -ENOMEM;
		if ((uint32_t)ch != f) {
			uint32_t tail = (uint32_t)ch;
			while (ix->next_by_cls[tail] != KNONE)
				tail = ix->next_by_cls[tail];
			ix->next_by_cls[tail] = f;
		}
	}
	for (uint32_t i = 0; i < s->links.count; i++) {
		ix->next_link[i] = KNONE;
		int64_t h = dtl_strmap_put(&ix->links, links[i].from, strlen(links[i].from), i);
		if (h < 0)
			return -ENOMEM;
		if ((uint32_t)h != i) {
			uint32_t tail = (uint32_t)h;
			while (ix->next_link[tail] != KNONE)
				tail = ix->next_link[tail];
			ix->next_link[tail] = i;
		}
	}
	l->finfos = s->finfos.items;
	dtl_strmap_init(&l->finfo_by_path, l->scratch);
	for (size_t i = 0; i < s->finfos.count; i++) {
		if (dtl_strmap_put(&l->finfo_by_path, l->finfos[i].path, strlen(l->finfos[i].path),
		                   (int64_t)i) < 0)
			return -ENOMEM;
	}
	/* bucket the facts by function (counting sort, stable: source order kept) */
	for (size_t i = 0; i < s->facts.count; i++) {
		if (facts[i].func < n)
			ix->fact_start[facts[i].func + 1]++;
	}
	for (uint32_t f = 0; f < n; f++)
		ix->fact_start[f + 1] += ix->fact_start[f];
	uint32_t *fill = dtl_arena_calloc(l->scratch, n + 1, sizeof(uint32_t));
	if (!fill)
		return -ENOMEM;
	memcpy(fill, ix->fact_start, (size_t)n * sizeof(uint32_t));
	for (size_t i = 0; i < s->facts.count; i++) {
		if (facts[i].func < n)
			ix->fact_list[fill[facts[i].func]++] = (uint32_t)i;
	}
	return 0;
}

/* Length of the common directory prefix: a name resolves to the definitions nearest to the
 * referring file (same file, then same directory, ...). */
static size_t affinity(const char *a, const char *b)
{
	size_t i = 0, last = 0;

	if (strcmp(a, b) == 0)
		return SIZE_MAX;
	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			last = i + 1;
		i++;
	}
	return last;
}

static const struct kfinfo *finfo(const struct linker *l, const char *path)
{
	int64_t i = dtl_strmap_get(&l->finfo_by_path, path, strlen(path));
	return i < 0 ? NULL : &l->finfos[i];
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (const char *const *)a,
	          y = (uintptr_t) * (const char *const *)b;
	return x < y ? -1 : x > y;
}

static bool declares(const struct kfinfo *fi, const char *name)
{
	return fi && fi->n_decls &&
	       bsearch(&name, fi->decls, fi->n_decls, sizeof(*fi->decls), cmp_ptr) != NULL;
}

static bool includes(const struct kfinfo *fi, const char *path)
{
	for (uint32_t i = 0; fi && i < fi->n_includes; i++) {
		if (fi->includes[i] == path)
			return true;
	}
	return false;
}

/* path lies in the directory of file, or below it */
static bool in_dir_of(const char *path, const char *file)
{
	const char *slash = strrchr(file, '/');

	if (!slash)
		return path[0] != '/';
	return strncmp(path, file, (size_t)(slash - file) + 1) == 0;
}

/*
 * Can code in from_file reach a function called name defined in to_file? Only within one
 * extension: the same directory tree as the referring file or the registration, a file it
 * includes, or a file that includes a header declaring the name. Without this, a name like
 * "quantize" links DeepSpeed's quantization ops to the unrelated fp_quantizer.
 */
static bool reachable(const struct linker *l, const char *from_file, const char *to_file,
                      const char *name)
{
	const struct kfinfo *a, *b;

	if (to_file == from_file || in_dir_of(to_file, from_file) ||
	    (l->reg && in_dir_of(to_file, l->reg->file)))
		return true;
	a = finfo(l, from_file);
	b = finfo(l, to_file);
	if (!a)
		return false;
	if (includes(a, to_file) || declares(a, name))
		return true;
	for (uint32_t i = 0; i < a->n_includes; i++) {
		if (declares(finfo(l, a->includes[i]), name) && includes(b, a->includes[i]))
			return true;
	}
	return false;
}

static size_t best_affinity(const struct linker *l, uint32_t head, const uint32_t *next,
                            const char *file, const char *cls, const char *name)
{
	size_t best = 0;
	bool any = false;

	for (uint32_t f = head; f != KNONE; f = next[f]) {
		if ((cls && l->funcs[f].cls != cls) || !reachable(l, file, l->funcs[f].file, name))
			continue;
		size_t a = affinity(file, l->funcs[f].file);
		if (!any || a > best)
			best = a;
		any = true;
	}
	return any ? best : SIZE_MAX - 1;
}

static void visit(struct linker *l, uint32_t f, unsigned depth, int16_t *map)
{
	if (l->stamp[f] == l->generation || l->n_queue >= MAX_VISITED)
		return;
	l->stamp[f] = l->generation;
	l->queue[l->n_queue].func = f;
	l->queue[l->n_queue].depth = depth;
	l->queue[l->n_queue].map = map;
	l->n_queue++;
}

static int16_t *new_map(struct linker *l, uint32_t n)
{
	int16_t *map = dtl_arena_calloc(l->scratch, n ? n : 1, sizeof(*map));

	for (uint32_t i = 0; map && i < n; i++)
		map[i] = -1;
	return map;
}

/* Functions named name nearest to file (optionally of class cls), each visited. */
static int visit_named(struct linker *l, const char *name, const char *file, const char *cls,
                       unsigned depth, const struct kcall *call, const struct visit *from)
{
	uint32_t head = chain_head(&l->ix.by_name, name);
	size_t best;

	if (head == KNONE)
		return 0;
	best = best_affinity(l, head, l->ix.next_by_name, file, cls, name);
	for (uint32_t f = head; f != KNONE; f = l->ix.next_by_name[f]) {
		const struct kfunc *g = &l->funcs[f];
		if ((cls && g->cls != cls) || affinity(file, g->file) != best ||
		    l->stamp[f] == l->generation || !reachable(l, file, g->file, name))
			continue;
		int16_t *map = new_map(l, g->n_params);
		if (!map)
			return -ENOMEM;
		/* callee parameter p receives the caller's argument p */
		const struct kfunc *caller = from ? &l->funcs[from->func] : NULL;
		for (uint32_t p = 0; call && caller && p < g->n_params && p < call->n_args; p++) {
			if (!call->args[p])
				continue;
			for (uint32_t j = 0; j < caller->n_params; j++) {
				if (caller->params[j].name == call->args[p]) {
					map[p] = from->map[j];
					break;
				}
			}
		}
		visit(l, f, depth, map);
	}
	return 0;
}

static int expand(struct linker *l, const struct visit *v)
{
	const struct kfunc *f = &l->funcs[v->func];
	unsigned depth = v->depth + 1;
	int r;

	for (uint32_t c = 0; c < f->n_calls; c++) {
		if ((r = visit_named(l, f->calls[c].callee, f->file, NULL, depth, &f->calls[c], v)))
			return r;
	}
	for (uint32_t i = 0; i < f->n_refs; i++) {
		if ((r = visit_named(l, f->refs[i], f->file, NULL, depth, NULL, NULL)))
			return r;
		/* docs/kernels.md §7: ScatterSum::apply(...) runs ScatterSum::forward */
		uint32_t m = chain_head(&l->ix.by_cls, f->refs[i]);
		for (; m != KNONE; m = l->ix.next_by_cls[m]) {
			int16_t *map = new_map(l, l->funcs[m].n_params);
			if (!map)
				return -ENOMEM;
			visit(l, m, depth, map);
		}
	}
	const struct klink *links = l->k->scanner->links.items;
	for (uint32_t i = chain_head(&l->ix.links, f->name); i != KNONE; i = l->ix.next_link[i]) {
		if ((r = visit_named(l, links[i].to, links[i].file, NULL, depth, NULL, NULL)))
			return r;
	}
	return 0;
}

/* The op parameter a variable of function v stands for, or -1. */
static int map_param(const struct linker *l, const struct visit *v, const char *base)
{
	const struct kfunc *f = &l->funcs[v->func];

	if (!base)
		return -1;
	for (uint32_t j = 0; j < f->n_params; j++) {
		if (f->params[j].name == base && v->map[j] >= 0)
			return v->map[j];
	}
	/* docs/kernels.md §5: beyond the bound function, a subject maps only when names match */
	for (uint32_t p = 0; p < l->n_op_params; p++) {
		if (l->op_params[p].name == base && base[0])
			return (int)p;
	}
	return -1;
}

static int cmp_evidence(const void *a, const void *b)
{
	const struct dtl_kernels_evidence *x = a, *y = b;
	int c;

	if (x->call_depth != y->call_depth)
		return x->call_depth < y->call_depth ? -1 : 1;
	if ((c = strcmp(x->file, y->file)))
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return 0;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const char *backend_of(struct dtl_kernels *k, const struct dtl_kernels_contract *c)
{
	if (c->dispatch_key) {
		if (strcmp(c->dispatch_key, "CUDA") == 0 ||
		    strcmp(c->dispatch_key, "AutogradCUDA") == 0)
			return dtl_kernels_intern_z(k, "cuda");
		if (strcmp(c->dispatch_key, "CPU") == 0 ||
		    strcmp(c->dispatch_key, "AutogradCPU") == 0)
			return dtl_kernels_intern_z(k, "cpu");
	}
	const char *file = c->definition_file ? c->definition_file : c->file;
	if (has_suffix(file, ".cu") || has_suffix(file, ".cuh"))
		return dtl_kernels_intern_z(k, "cuda");
	return NULL;
}

/* The contract's fields that come straight from the registration. */
static void contract_init(struct dtl_kernels_contract *c, const struct kreg *g)
{
	memset(c, 0, sizeof(*c));
	c->op = g->op;
	c->ns = g->ns;
	c->binding = g->binding;
	c->dispatch_key = g->dispatch_key;
	c->function = g->function;
	c->file = g->file;
	c->line = g->line;
	c->schema = g->schema;
	for (uint32_t a = 0; a < g->n_targs; a++)
		c->template_types |= g->targs[a];
}

/* Depth 0: queue the bound function(s) and take the op's parameters from the first. */
static int visit_bound(struct linker *l, const struct kreg *g, struct dtl_kernels_contract *c)
{
	int r;

	l->generation++;
	l->n_queue = 0;
	l->reg = g;
	l->op_params = NULL;
	l->n_op_params = 0;
	if (g->lambda_func != KNONE) {
		int16_t *map = new_map(l, l->funcs[g->lambda_func].n_params);
		if (!map)
			return -ENOMEM;
		visit(l, g->lambda_func, 0, map);
	} else if ((r = visit_named(l, g->fname, g->file, g->cls, 0, NULL, NULL)) < 0) {
		return r;
	} else if (!l->n_queue && g->cls &&
	           (r = visit_named(l, g->fname, g->file, NULL, 0, NULL, NULL)) < 0) {
		return r; /* Qual::fn where Qual is a namespace */
	}
	if (l->n_queue) {
		const struct kfunc *bound = &l->funcs[l->queue[0].func];
		l->op_params = bound->params;
		l->n_op_params = bound->n_params;
		c->definition_file = bound->file;
		c->definition_line = bound->line;
		for (size_t q = 0; q < l->n_queue; q++) {
			const struct kfunc *f = &l->funcs[l->queue[q].func];
			for (uint32_t j = 0; j < f->n_params; j++) {
				for (uint32_t p = 0; p < l->n_op_params; p++) {
					if (f->params[j].name == l->op_params[p].name)
						l->queue[q].map[j] = (int16_t)p;
				}
			}
		}
	}
	return 0;
}

/*
 * &f<__half>: T is bound by the registration at depth 0. Returns 1 when the
 * fact applies (its types and message now name the bound type), 0 when T is
 * unbound, or -ENOMEM.
 */
static int bind_template_fact(struct linker *l, const struct kreg *g, const struct visit *v,
                              struct dtl_kernels_evidence *e)
{
	const struct kfunc *f = &l->funcs[v->func];

	e->types = 0;
	for (uint32_t t = 0; v->depth == 0 && t < f->n_tparams && t < g->n_targs; t++) {
		if (f->tparams[t] == e->template_param)
			e->types = g->targs[t];
	}
	if (!e->types)
		return 0;
	unsigned bit = 0;
	while (!(e->types & (UINT64_C(1) << bit)))
		bit++;
	char *msg = dtl_arena_sprintf(l->k->arena, "expected scalar type %s but found {ScalarType}",
	                              dtl_kernels_scalar_type_name(bit));
	if (!msg)
		return -ENOMEM;
	e->message = dtl_kernels_intern_z(l->k, msg);
	return 1;
}

/* Every queued function's facts, as evidence on the op's parameters, into ev. */
static int collect_evidence(struct linker *l, const struct kreg *g, struct dtl_vec *ev)
{
	const struct kfact *facts = l->k->scanner->facts.items;

	for (size_t q = 0; q < l->n_queue; q++) {
		const struct visit *v = &l->queue[q];
		for (uint32_t i = l->ix.fact_start[v->func]; i < l->ix.fact_start[v->func + 1];
		     i++) {
			const struct kfact *fact = &facts[l->ix.fact_list[i]];
			struct dtl_kernels_evidence e = fact->ev;
			if (e.template_param) {
				int r = bind_template_fact(l, g, v, &e);
				if (r < 0)
					return r;
				if (r == 0)
					continue;
			}
			e.call_depth = v->depth;
			int p = map_param(l, v, e.subject_base);
			e.param = p >= 0 ? l->op_params[p].name : NULL;
			if (e.same_as) {
				int s = map_param(l, v, e.same_as);
				e.same_as_param = s >= 0 ? l->op_params[s].name : NULL;
			}
			struct dtl_kernels_evidence *slot =
			    dtl_vec_push(ev, l->scratch, sizeof(*slot));
			if (!slot)
				return -ENOMEM;
			*slot = e;
		}
	}
	return 0;
}

/* Sort the evidence and copy it into the contract's arena. */
static int store_evidence(struct dtl_kernels *k, struct dtl_kernels_contract *c,
                          const struct dtl_vec *ev)
{
	if (!ev->count)
		return 0;
	qsort(ev->items, ev->count, sizeof(struct dtl_kernels_evidence), cmp_evidence);
	c->evidence = dtl_arena_calloc(k->arena, ev->count, sizeof(*c->evidence));
	if (!c->evidence)
		return -ENOMEM;
	memcpy(c->evidence, ev->items, ev->count * sizeof(*c->evidence));
	c->n_evidence = ev->count;
	return 0;
}

/* The union of types each kind of fact names, over the whole contract. */
static void summarize_types(struct dtl_kernels_contract *c)
{
	for (size_t i = 0; i < c->n_evidence; i++) {
		const struct dtl_kernels_evidence *e = &c->evidence[i];
		if (e->same_as)
			continue;
		switch (e->kind) {
		case DTL_KERNELS_FACT_DISPATCH:
		case DTL_KERNELS_FACT_SWITCH:
			c->dispatch_types |= e->types;
			break;
		case DTL_KERNELS_FACT_ASSERT:
			c->asserted_types |= e->types;
			break;
		case DTL_KERNELS_FACT_ACCESSOR:
			c->accessor_types |= e->types;
			break;
		case DTL_KERNELS_FACT_BRANCH:
			c->branch_types |= e->types;
			break;
		}
	}
}

/* Narrow one input by the contract's definite facts on it. */
static void summarize_input(const struct dtl_kernels_contract *c, struct dtl_kernels_input *in)
{
	uint64_t all = dtl_kernels_all_dtypes();

	for (size_t i = 0; i < c->n_evidence; i++) {
		const struct dtl_kernels_evidence *e = &c->evidence[i];
		if (e->param != in->name)
			continue;
		if (e->same_as) {
			if (!in->same_dtype_as && e->same_as_param && e->same_as_param != in->name)
				in->same_dtype_as = e->same_as_param;
			continue;
		}
		if (!e->throws || e->skipped || e->n_guards || e->conditional || !e->types)
			continue;
		/* a fact inside "if (x is half)" only constrains half */
		uint64_t pass = (e->types | e->guarded_types | ~e->when) & all;
		if (!in->known) {
			in->known = true;
			in->accepts = pass;
			in->basis = e->kind;
			in->call_depth = e->call_depth;
		} else {
			in->accepts &= pass;
		}
	}
}

/* Per parameter: what the definite facts on it let through. */
static int summarize_inputs(struct linker *l, struct dtl_kernels_contract *c)
{
	if (l->n_op_params) {
		c->inputs = dtl_arena_calloc(l->k->arena, l->n_op_params, sizeof(*c->inputs));
		if (!c->inputs)
			return -ENOMEM;
		c->n_inputs = l->n_op_params;
	}
	for (uint32_t p = 0; p < l->n_op_params; p++) {
		struct dtl_kernels_input *in = &c->inputs[p];
		in->name = l->op_params[p].name;
		in->tensor = l->op_params[p].tensor;
		summarize_input(c, in);
	}
	return 0;
}

static int build_contract(struct linker *l, const struct kreg *g, struct dtl_kernels_contract *c)
{
	struct dtl_vec ev = {0};
	int r;

	contract_init(c, g);
	if ((r = visit_bound(l, g, c)) < 0)
		return r;
	for (size_t q = 0; q < l->n_queue; q++) {
		if (l->queue[q].depth < l->k->options.max_depth &&
		    (r = expand(l, &l->queue[q])) < 0)
			return r;
	}
	if ((r = collect_evidence(l, g, &ev)) < 0)
		return r;
	if ((r = store_evidence(l->k, c, &ev)) < 0)
		return r;
	summarize_types(c);
	if ((r = summarize_inputs(l, c)) < 0)
		return r;
	c->backend = backend_of(l->k, c);
	return 0;
}

static int cmp_nullable(const char *a, const char *b)
{
	if (!a || !b)
		return a ? 1 : b ? -1 : 0;
	return strcmp(a, b);
}

static int cmp_contract(const void *a, const void *b)
{
	const struct dtl_kernels_contract *x = a, *y = b;
	int c;

	if ((c = strcmp(x->op, y->op)) || (c = cmp_nullable(x->ns, y->ns)) ||
	    (c = strcmp(x->file, y->file)))
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if ((c = cmp_nullable(x->dispatch_key, y->dispatch_key)))
		return c;
	return cmp_nullable(x->function, y->function);
}

int dtl_kernels_link(struct dtl_kernels *k, struct dtl_error *error)
{
	struct dtl_loc nowhere = {0};
	struct dtl_kernels_scanner *s = k->scanner;
	struct dtl_arena scratch;
	struct linker l = {.k = k, .scratch = &scratch};
	const struct kreg *regs;
	int r = 0;

	if (!s)
		return dtl_error_set(error, nowhere, -EINVAL, "kernel scanner not initialised");
	if (s->funcs.count >= KNONE || s->facts.count >= KNONE || s->links.count >= KNONE)
		return dtl_error_set(error, nowhere, -E2BIG, "too many functions or facts");
	dtl_arena_init(&scratch);
	l.funcs = s->funcs.items;
	l.n_funcs = (uint32_t)s->funcs.count;
	regs = s->regs.items;
	k->contracts = NULL;
	k->n_contracts = 0;
	if ((r = build_index(&l)) < 0)
		goto out;
	if (s->regs.count) {
		k->contracts = dtl_arena_calloc(k->arena, s->regs.count, sizeof(*k->contracts));
		if (!k->contracts) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < s->regs.count; i++) {
		if (!regs[i].op || !regs[i].function)
			continue;
		if ((r = build_contract(&l, &regs[i], &k->contracts[k->n_contracts])) < 0)
			goto out;
		k->n_contracts++;
	}
	/* m.def("foo(Tensor x) -> Tensor") without a function gives its impls their schema */
	for (size_t i = 0; i < s->regs.count; i++) {
		if (regs[i].function || !regs[i].schema)
			continue;
		for (size_t j = 0; j < k->n_contracts; j++) {
			struct dtl_kernels_contract *c = &k->contracts[j];
			if (!c->schema && c->op == regs[i].op && c->ns == regs[i].ns)
				c->schema = regs[i].schema;
		}
	}
	if (k->n_contracts)
		qsort(k->contracts, k->n_contracts, sizeof(*k->contracts), cmp_contract);
	s->linked = true;
out:
	dtl_arena_fini(&scratch);
	if (r < 0)
		return dtl_error_set(error, nowhere, r,
		                     "out of memory while linking kernel contracts");
	return 0;
}

/* Contracts are sorted by op then namespace: the matches of (ns, name) are adjacent. */
static size_t match(const struct dtl_kernels *k, const char *ns, size_t ns_len, const char *name,
                    const struct dtl_kernels_contract **ret_first)
{
	size_t count = 0;

	for (size_t i = 0; i < k->n_contracts; i++) {
		const struct dtl_kernels_contract *c = &k->contracts[i];
		if (strcmp(c->op, name) != 0)
			continue;
		if (ns && !(c->ns && strlen(c->ns) == ns_len && strncmp(c->ns, ns, ns_len) == 0))
			continue;
		if (!count)
			*ret_first = c;
		else if (c != *ret_first + count)
			break;
		count++;
	}
	return count;
}

size_t dtl_kernels_find(const struct dtl_kernels *k, const char *op,
                        const struct dtl_kernels_contract **ret_first)
{
	const char *sep;
	size_t n;

	*ret_first = NULL;
	if (!op || !*op)
		return 0;
	if (strncmp(op, "torch.ops.", 10) == 0) {
		const char *rest = op + 10, *dot = strchr(rest, '.');
		return dot ? match(k, rest, (size_t)(dot - rest), dot + 1, ret_first) : 0;
	}
	if ((sep = strstr(op, "::")))
		return match(k, op, (size_t)(sep - op), sep + 2, ret_first);
	if ((n = match(k, NULL, 0, op, ret_first)))
		return n;
	/* "ns.name" (an op name may itself hold a dot: "foo.out", tried first) */
	if ((sep = strchr(op, '.')))
		return match(k, op, (size_t)(sep - op), sep + 1, ret_first);
	return 0;
}
