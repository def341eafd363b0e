/* SPDX-License-Identifier: MIT */
/*
 * libclang parses untrusted sources (issue 21, requirement 7): each file is scanned in a forked
 * child, as compilers run untrusted parses, with a CPU-time limit (RLIMIT_CPU), an address-space
 * limit (RLIMIT_AS) and a wall-clock timeout after which the parent kills it. Before this an
 * '#include "/dev/zero"' made libclang read zeros until memory ran out, '#include </dev/stdin>'
 * waited for the terminal, and a libclang crash was counted in stats.files_failed, nowhere
 * else.
 *
 * The child runs dtl_kernels_scan_local() (scan-local.c) on its copy of the scanner and sends back,
 * through a pipe, what that added: the file's record, the statistics, and the new functions, facts,
 * registrations, links and file infos, every string length-prefixed. The parent reads at most
 * KSANDBOX_MAX_RESULT bytes, checks every count, index, enum and string against the bytes it
 * holds, and interns the strings again in its own scanner. A child that crashes, is killed, or
 * sends anything malformed fails its file with an error that kernels_file_errors() lists.
 *
 * Includes: libclang's C API has no hook on include resolution, so the policy is checked twice
 * in the child: before the parse on the main file's own #include lines (so that /dev/zero is
 * never opened), and after it on every file clang_getInclusions() lists (what macros or nested
 * headers reached). A file may include only files under the scanned roots (resolved with
 * realpath(), so a symlink out of the tree does not count as inside) and in-memory sources;
 * -nostdinc means there is no system include directory. Anything under /dev, /proc or /sys is
 * refused by name as well. What the pre-check cannot see (a nested /dev/zero) is stopped by the
 * limits and reported as a crash or a limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "kernels-private.h"

/* AddressSanitizer reserves terabytes of shadow memory: under it RLIMIT_AS would fail every
 * allocation, so only the parent's resident-memory watchdog bounds the child. */
#if defined(__SANITIZE_ADDRESS__)
#define KSANDBOX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KSANDBOX_ASAN 1
#endif
#endif
#ifndef KSANDBOX_ASAN
#define KSANDBOX_ASAN 0
#endif

/* Per file (issue 35): under 60 s of CPU and 120 s of wall clock, 16 macro-heavy files of 415
 * bytes took 13.8 s each; a file of a real extension parses in well under a second without
 * system headers (-nostdinc), and the wall clock is for files that block rather than spin. */
#define KSANDBOX_CPU_S       5u                    /* CPU seconds per file */
#define KSANDBOX_WALL_MS     10000u                /* wall clock per file */
#define KSANDBOX_MEM         (2048ull << 20)       /* memory per file, on top of the parent's */
#define KSANDBOX_MAX_RESULT  (64u * 1024u * 1024u) /* bytes a child may send back */
#define KSANDBOX_POLL_MS     50                    /* how often the memory watchdog looks */
#define KSANDBOX_MAGIC       0x4b4c5444u           /* "DTLK" */
#define KSANDBOX_END         0x21444e45u           /* "END!" */
#define KSANDBOX_EXIT_NOMEM  3                     /* the child could not build its result */
#define KSANDBOX_EXIT_TOOBIG 4

struct ksandbox_limits {
	unsigned cpu_s, wall_ms;
	unsigned long long mem;
	const char *knob;
};

/*
 * DTYPELINT_TEST_KERNEL_CHILD (tests/kernels/sandbox.sh and test-kernels.c, never documented
 * for users) makes the child misbehave instead of scanning a file whose path contains
 * "misbehave": "crash" aborts, "hang" sleeps, "spin" burns CPU, "alloc" allocates and touches
 * memory without end, "garbage" sends a malformed result. Any value also shortens the limits to 1 s
 * of CPU, 8 s of wall clock and 256 MiB, so that the tests run in seconds.
 */
static void limits_get(struct ksandbox_limits *l)
{
	const char *knob = getenv("DTYPELINT_TEST_KERNEL_CHILD");

	l->cpu_s = KSANDBOX_CPU_S;
	l->wall_ms = KSANDBOX_WALL_MS;
	l->mem = KSANDBOX_MEM;
	l->knob = knob && *knob ? knob : NULL;
	if (l->knob) {
		l->cpu_s = 1;
		l->wall_ms = 8000; /* CPU time runs slower than the clock on a busy machine */
		l->mem = 256ull << 20;
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Field `field` (0: size, 1: resident) of /proc/PID/statm in bytes; 0 when unknown. */
static unsigned long long statm(pid_t pid, int field)
{
	char path[64], buf[128];
	unsigned long long v[2] = {0, 0};
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/statm", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &v[0], &v[1]) != 2)
		return 0;
	return v[field] * (unsigned long long)sysconf(_SC_PAGESIZE);
}

/* ---- the child's result: a byte string ---- */

struct wbuf {
	unsigned char *data;
	size_t len, cap;
	int err; /* KSANDBOX_EXIT_* once something did not fit */
};

static void w_bytes(struct wbuf *w, const void *p, size_t n)
{
	if (w->err)
		return;
	if (n > KSANDBOX_MAX_RESULT - w->len) {
		w->err = KSANDBOX_EXIT_TOOBIG;
		return;
	}
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		while (cap < w->len + n)
			cap *= 2;
		unsigned char *d = realloc(w->data, cap);
		if (!d) {
			w->err = KSANDBOX_EXIT_NOMEM;
			return;
		}
		w->data = d;
		w->cap = cap;
	}
	memcpy(w->data + w->len, p, n);
	w->len += n;
}

static void w_u8(struct wbuf *w, uint8_t v)
{
	w_bytes(w, &v, 1);
}

static void w_u32(struct wbuf *w, uint32_t v)
{
	w_bytes(w, &v, sizeof(v));
}

static void w_u64(struct wbuf *w, uint64_t v)
{
	w_bytes(w, &v, sizeof(v));
}

#define KSTR_NULL UINT32_MAX

static void w_str(struct wbuf *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!s) {
		w_u32(w, KSTR_NULL);
		return;
	}
	if (n >= KSTR_NULL) {
		w->err = KSANDBOX_EXIT_TOOBIG;
		return;
	}
	w_u32(w, (uint32_t)n);
	w_bytes(w, s, n);
}

#define KSTATS_N (sizeof(struct dtl_kernels_stats) / sizeof(size_t))
_Static_assert(sizeof(struct dtl_kernels_stats) == KSTATS_N * sizeof(size_t),
               "struct dtl_kernels_stats holds size_t counters only");

struct kbase {
	size_t funcs, facts, regs, links, finfos, files;
	struct dtl_kernels_stats stats;
};

static void base_of(const struct dtl_kernels *k, struct kbase *b)
{
	const struct dtl_kernels_scanner *s = k->scanner;

	b->funcs = s->funcs.count;
	b->facts = s->facts.count;
	b->regs = s->regs.count;
	b->links = s->links.count;
	b->finfos = s->finfos.count;
	b->files = s->files.count;
	b->stats = k->stats;
}

static void w_func(struct wbuf *w, const struct kfunc *f)
{
	w_str(w, f->name);
	w_str(w, f->cls);
	w_str(w, f->file);
	w_u32(w, f->line);
	w_u32(w, f->n_params);
	for (uint32_t i = 0; i < f->n_params; i++) {
		w_str(w, f->params[i].name);
		w_u8(w, f->params[i].tensor);
	}
	w_u32(w, f->n_tparams);
	for (uint32_t i = 0; i < f->n_tparams; i++)
		w_str(w, f->tparams[i]);
	w_u32(w, f->n_refs);
	for (uint32_t i = 0; i < f->n_refs; i++)
		w_str(w, f->refs[i]);
	w_u32(w, f->n_calls);
	for (uint32_t i = 0; i < f->n_calls; i++) {
		w_str(w, f->calls[i].callee);
		w_u32(w, f->calls[i].n_args);
		for (uint32_t a = 0; a < f->calls[i].n_args; a++)
			w_str(w, f->calls[i].args[a]);
	}
	w_u8(w, f->has_dispatch);
}

static void w_fact(struct wbuf *w, const struct kfact *f)
{
	const struct dtl_kernels_evidence *e = &f->ev;

	w_u32(w, (uint32_t)e->kind);
	w_str(w, e->file);
	w_u32(w, e->line);
	w_str(w, e->function);
	w_str(w, e->backend);
	w_u32(w, e->call_depth);
	w_str(w, e->param);
	w_str(w, e->subject);
	w_str(w, e->subject_base);
	w_str(w, e->same_as);
	w_str(w, e->same_as_param);
	w_u64(w, e->types);
	w_u64(w, e->guarded_types);
	w_u64(w, e->when);
	w_str(w, e->name);
	w_str(w, e->macro);
	w_str(w, e->macro_file);
	w_u32(w, e->macro_line);
	w_str(w, e->template_param);
	w_str(w, e->message);
	if (e->n_guards > UINT32_MAX) {
		w->err = KSANDBOX_EXIT_TOOBIG;
		return;
	}
	w_u32(w, (uint32_t)e->n_guards);
	for (size_t i = 0; i < e->n_guards; i++)
		w_str(w, e->guards[i]);
	w_u8(w, (uint8_t)(e->skipped | e->conditional << 1 | e->negated << 2 | e->throws << 3));
	w_u32(w, f->func);
}

static void w_reg(struct wbuf *w, const struct kreg *g)
{
	w_str(w, g->op);
	w_str(w, g->ns);
	w_str(w, g->dispatch_key);
	w_str(w, g->schema);
	w_str(w, g->file);
	w_str(w, g->function);
	w_str(w, g->fname);
	w_str(w, g->cls);
	w_u32(w, g->line);
	w_u32(w, (uint32_t)g->binding);
	w_u32(w, g->n_targs);
	for (uint32_t i = 0; i < g->n_targs; i++)
		w_u64(w, g->targs[i]);
	w_u32(w, g->lambda_func);
}

static void w_finfo(struct wbuf *w, const struct kfinfo *fi)
{
	w_str(w, fi->path);
	w_u32(w, fi->n_includes);
	for (uint32_t i = 0; i < fi->n_includes; i++)
		w_str(w, fi->includes[i]);
	w_u32(w, fi->n_decls);
	for (uint32_t i = 0; i < fi->n_decls; i++)
		w_str(w, fi->decls[i]);
}

static bool fits_u32(size_t n)
{
	return n <= UINT32_MAX;
}

/* Everything dtl_kernels_scan_local() added to the scanner since b. */
static void w_result(struct wbuf *w, const struct dtl_kernels *k, const struct kbase *b, int r,
                     const struct dtl_error *error)
{
	const struct dtl_kernels_scanner *s = k->scanner;
	const struct dtl_kernels_file *rec =
	    (const struct dtl_kernels_file *)s->files.items + b->files;
	const size_t *now = (const size_t *)&k->stats, *then = (const size_t *)&b->stats;

	w_u32(w, KSANDBOX_MAGIC);
	w_u32(w, (uint32_t)-r);
	if (r < 0) {
		w_u32(w, error->loc.line);
		w_u32(w, error->loc.column);
		w_str(w, error->message);
	}
	if (s->files.count != b->files + 1) {
		w->err =
		    KSANDBOX_EXIT_NOMEM; /* dtl_kernels_scan_local() could not record the file */
		return;
	}
	w_u64(w, rec->parse_ns);
	w_u64(w, rec->tokens);
	w_u32(w, rec->diagnostics);
	w_u8(w, rec->failed);
	for (size_t i = 0; i < KSTATS_N; i++)
		w_u64(w, now[i] - then[i]);
	if (!fits_u32(s->funcs.count - b->funcs) || !fits_u32(s->facts.count - b->facts) ||
	    !fits_u32(s->regs.count - b->regs) || !fits_u32(s->links.count - b->links) ||
	    !fits_u32(s->finfos.count - b->finfos)) {
		w->err = KSANDBOX_EXIT_TOOBIG;
		return;
	}
	w_u32(w, (uint32_t)(s->funcs.count - b->funcs));
	for (size_t i = b->funcs; i < s->funcs.count; i++)
		w_func(w, (const struct kfunc *)s->funcs.items + i);
	w_u32(w, (uint32_t)(s->facts.count - b->facts));
	for (size_t i = b->facts; i < s->facts.count; i++)
		w_fact(w, (const struct kfact *)s->facts.items + i);
	w_u32(w, (uint32_t)(s->regs.count - b->regs));
	for (size_t i = b->regs; i < s->regs.count; i++)
		w_reg(w, (const struct kreg *)s->regs.items + i);
	w_u32(w, (uint32_t)(s->links.count - b->links));
	for (size_t i = b->links; i < s->links.count; i++) {
		const struct klink *l = (const struct klink *)s->links.items + i;
		w_str(w, l->from);
		w_str(w, l->to);
		w_str(w, l->file);
	}
	w_u32(w, (uint32_t)(s->finfos.count - b->finfos));
	for (size_t i = b->finfos; i < s->finfos.count; i++)
		w_finfo(w, (const struct kfinfo *)s->finfos.items + i);
	w_u32(w, KSANDBOX_END);
}

static void write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t m = write(fd, p, n);
		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0)
			_exit(1);
		p += m;
		n -= (size_t)m;
	}
}

static void misbehave(const char *knob)
{
	if (strcmp(knob, "crash") == 0) {
		abort();
	} else if (strcmp(knob, "hang") == 0) {
		for (;;)
			pause();
	} else if (strcmp(knob, "spin") == 0) {
		for (volatile unsigned long i = 0;; i++)
			;
	} else if (strcmp(knob, "alloc") == 0) {
		for (;;) {
			char *p = malloc(1u << 20);
			if (!p)
				abort(); /* as LLVM's bad_alloc handler does */
			memset(p, 1, 1u << 20);
		}
	}
}

static void child_main(struct dtl_kernels *k, int fd, pid_t parent, const struct ksandbox_limits *l,
                       const struct kjob *jobs, size_t n, struct CXUnsavedFile *unsaved,
                       unsigned n_unsaved)
{
	struct wbuf w = {0};
	struct rlimit rl, cpu;
	int null;

#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (getppid() != parent)
		_exit(1);
	/* libclang prints crash reports with unescaped paths, and /dev/stdin must not wait for
	 * the terminal. Sanitizer builds keep stderr for their own reports. */
	null = open("/dev/null", O_RDWR);
	if (null < 0)
		_exit(1);
	dup2(null, STDIN_FILENO);
	dup2(null, STDOUT_FILENO);
	if (!KSANDBOX_ASAN)
		dup2(null, STDERR_FILENO);
	rl.rlim_cur = rl.rlim_max = 0;
	setrlimit(RLIMIT_CORE, &rl);
	/* RLIMIT_CPU counts the whole process: the soft limit moves up file by file (SIGXCPU),
	 * the hard one (SIGKILL) is the batch's total */
	cpu.rlim_cur = l->cpu_s;
	cpu.rlim_max = (rlim_t)l->cpu_s * n + 1;
	if (setrlimit(RLIMIT_CPU, &cpu) < 0)
		_exit(1);
	if (!KSANDBOX_ASAN) {
		/* the child starts with the parent's mappings (libLLVM, the arena): the limit
		 * is on what it maps beyond them */
		unsigned long long size = statm(getpid(), 0);
		rl.rlim_cur = rl.rlim_max = (rlim_t)((size ? size : 1ull << 30) + l->mem);
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			_exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		struct dtl_error error = {0};
		struct rusage ru;
		struct kbase b;
		uint32_t len;
		int r;

		if (i > 0 && getrusage(RUSAGE_SELF, &ru) == 0) {
			cpu.rlim_cur =
			    (rlim_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1 + l->cpu_s;
			if (cpu.rlim_cur > cpu.rlim_max)
				cpu.rlim_cur = cpu.rlim_max;
			if (setrlimit(RLIMIT_CPU, &cpu) < 0)
				_exit(1);
		}
		if (l->knob && strstr(jobs[i].path, "misbehave")) {
			if (strcmp(l->knob, "garbage") == 0) {
				/* a well-framed result whose contents are 0xff bytes */
				unsigned char junk[4 + 8 + 256];
				uint32_t n_junk = sizeof(junk) - 4, magic = KSANDBOX_MAGIC, ok = 0;
				memset(junk, 0xff, sizeof(junk));
				memcpy(junk, &n_junk, 4);
				memcpy(junk + 4, &magic, 4);
				memcpy(junk + 8, &ok, 4);
				write_all(fd, junk, sizeof(junk));
				continue;
			}
			misbehave(l->knob);
		}
		base_of(k, &b);
		r = dtl_kernels_scan_local(k, jobs[i].path, unsaved, n_unsaved,
		                           jobs[i].include_dirs, jobs[i].n_include_dirs, &error);
		w.len = 0;
		w_u32(&w, 0); /* the frame's length, filled in below */
		w_result(&w, k, &b, r, &error);
		if (w.err)
			_exit(w.err);
		len = (uint32_t)(w.len - 4);
		memcpy(w.data, &len, 4);
		write_all(fd, w.data, w.len);
	}
	_exit(0);
}

/* ---- the parent: read, validate, apply ---- */

struct rbuf {
	struct dtl_kernels *k;
	const unsigned char *p, *end;
	bool bad;   /* malformed */
	bool nomem; /* the parent ran out of memory */
};

static void r_bytes(struct rbuf *rd, void *out, size_t n)
{
	if (rd->bad || (size_t)(rd->end - rd->p) < n) {
		rd->bad = true;
		memset(out, 0, n);
		return;
	}
	memcpy(out, rd->p, n);
	rd->p += n;
}

static uint8_t r_u8(struct rbuf *rd)
{
	uint8_t v;
	r_bytes(rd, &v, 1);
	return v;
}

static uint32_t r_u32(struct rbuf *rd)
{
	uint32_t v;
	r_bytes(rd, &v, sizeof(v));
	return v;
}

static uint64_t r_u64(struct rbuf *rd)
{
	uint64_t v;
	r_bytes(rd, &v, sizeof(v));
	return v;
}

/* An interned string; NULL for a NULL string or on failure (rd->bad or rd->nomem). */
static const char *r_str(struct rbuf *rd)
{
	uint32_t n = r_u32(rd);
	const char *s;

	if (rd->bad || n == KSTR_NULL)
		return NULL;
	if ((size_t)(rd->end - rd->p) < n || memchr(rd->p, '\0', n)) {
		rd->bad = true;
		return NULL;
	}
	s = dtl_kernels_intern(rd->k, (const char *)rd->p, n);
	rd->p += n;
	if (!s)
		rd->nomem = true;
	return s;
}

/* A non-NULL string. */
static const char *r_str_nn(struct rbuf *rd)
{
	const char *s = r_str(rd);

	if (!s)
		rd->bad = true;
	return s;
}

static bool failed(const struct rbuf *rd)
{
	return rd->bad || rd->nomem;
}

/* A count of items at least min_size bytes each, checked against what is left. */
static uint32_t r_count(struct rbuf *rd, size_t min_size)
{
	uint32_t n = r_u32(rd);

	if (!rd->bad && (size_t)(rd->end - rd->p) / min_size < n)
		rd->bad = true;
	return rd->bad ? 0 : n;
}

static void *r_array(struct rbuf *rd, uint32_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	p = dtl_arena_calloc(rd->k->arena, n, size);
	if (!p)
		rd->nomem = true;
	return p;
}

static const char **r_strs(struct rbuf *rd, uint32_t *ret_n)
{
	uint32_t n = r_count(rd, 4);
	const char **v = r_array(rd, n, sizeof(*v));

	for (uint32_t i = 0; v && i < n && !failed(rd); i++)
		v[i] = r_str(rd);
	*ret_n = v ? n : 0;
	return v;
}

static bool func_ok(uint32_t func, const struct kbase *b, size_t n_funcs)
{
	return func == KNONE || (func >= b->funcs && func - b->funcs < n_funcs);
}

static void r_func(struct rbuf *rd, struct kfunc *f)
{
	f->name = r_str_nn(rd);
	f->cls = r_str(rd);
	f->file = r_str_nn(rd);
	f->line = r_u32(rd);
	f->n_params = r_count(rd, 5);
	f->params = r_array(rd, f->n_params, sizeof(*f->params));
	for (uint32_t i = 0; f->params && i < f->n_params && !failed(rd); i++) {
		f->params[i].name = r_str_nn(rd);
		f->params[i].tensor = r_u8(rd) != 0;
	}
	f->tparams = r_strs(rd, &f->n_tparams);
	f->refs = r_strs(rd, &f->n_refs);
	f->n_calls = r_count(rd, 8);
	f->calls = r_array(rd, f->n_calls, sizeof(*f->calls));
	for (uint32_t i = 0; f->calls && i < f->n_calls && !failed(rd); i++) {
		f->calls[i].callee = r_str_nn(rd);
		f->calls[i].args = r_strs(rd, &f->calls[i].n_args);
	}
	f->has_dispatch = r_u8(rd) != 0;
}

static void r_fact(struct rbuf *rd, struct kfact *f)
{
	struct dtl_kernels_evidence *e = &f->ev;
	uint32_t kind = r_u32(rd), n_guards;
	uint8_t flags;

	if (kind > DTL_KERNELS_FACT_ACCESSOR)
		rd->bad = true;
	e->kind = (enum dtl_kernels_fact_kind)kind;
	e->file = r_str_nn(rd);
	e->line = r_u32(rd);
	e->function = r_str(rd);
	e->backend = r_str(rd);
	e->call_depth = r_u32(rd);
	e->param = r_str(rd);
	e->subject = r_str(rd);
	e->subject_base = r_str(rd);
	e->same_as = r_str(rd);
	e->same_as_param = r_str(rd);
	e->types = r_u64(rd);
	e->guarded_types = r_u64(rd);
	e->when = r_u64(rd);
	e->name = r_str(rd);
	e->macro = r_str(rd);
	e->macro_file = r_str(rd);
	e->macro_line = r_u32(rd);
	e->template_param = r_str(rd);
	e->message = r_str(rd);
	e->guards = r_strs(rd, &n_guards);
	e->n_guards = n_guards;
	flags = r_u8(rd);
	e->skipped = flags & 1;
	e->conditional = flags & 2;
	e->negated = flags & 4;
	e->throws = flags & 8;
	f->func = r_u32(rd);
	for (size_t i = 0; i < e->n_guards; i++) {
		if (!e->guards[i])
			rd->bad = true;
	}
}

static void r_reg(struct rbuf *rd, struct kreg *g)
{
	uint32_t binding;

	g->op = r_str_nn(rd);
	g->ns = r_str(rd);
	g->dispatch_key = r_str(rd);
	g->schema = r_str(rd);
	g->file = r_str_nn(rd);
	g->function = r_str(rd);
	g->fname = r_str(rd);
	g->cls = r_str(rd);
	g->line = r_u32(rd);
	binding = r_u32(rd);
	if (binding > DTL_KERNELS_BINDING_REGISTER_OPERATORS)
		rd->bad = true;
	g->binding = (enum dtl_kernels_binding)binding;
	g->n_targs = r_count(rd, 8);
	g->targs = r_array(rd, g->n_targs, sizeof(*g->targs));
	for (uint32_t i = 0; g->targs && i < g->n_targs; i++)
		g->targs[i] = r_u64(rd);
	g->lambda_func = r_u32(rd);
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (const char *const *)a,
	          y = (uintptr_t) * (const char *const *)b;
	return x < y ? -1 : x > y;
}

static void r_finfo(struct rbuf *rd, struct kfinfo *fi)
{
	fi->path = r_str_nn(rd);
	fi->includes = r_strs(rd, &fi->n_includes);
	fi->decls = r_strs(rd, &fi->n_decls);
	for (uint32_t i = 0; i < fi->n_includes && !failed(rd); i++) {
		if (!fi->includes[i])
			rd->bad = true;
	}
	for (uint32_t i = 0; i < fi->n_decls && !failed(rd); i++) {
		if (!fi->decls[i])
			rd->bad = true;
	}
	/* link.c searches decls by address, and addresses are the parent's now */
	if (!failed(rd) && fi->n_decls)
		qsort(fi->decls, fi->n_decls, sizeof(*fi->decls), cmp_ptr);
}

/* Pushes n items of vec read by fn; false on failure. */
#define R_ITEMS(rd, vec, type, min_size, fn)                                                       \
	do {                                                                                       \
		uint32_t n_ = r_count(rd, min_size);                                               \
		for (uint32_t i_ = 0; i_ < n_ && !failed(rd); i_++) {                              \
			type *item_ = dtl_vec_push(&(vec), (rd)->k->arena, sizeof(type));          \
			if (!item_) {                                                              \
				(rd)->nomem = true;                                                \
				break;                                                             \
			}                                                                          \
			fn(rd, item_);                                                             \
		}                                                                                  \
	} while (0)

static void r_link(struct rbuf *rd, struct klink *l)
{
	l->from = r_str_nn(rd);
	l->to = r_str_nn(rd);
	l->file = r_str_nn(rd);
}

static void rollback(struct dtl_kernels *k, const struct kbase *b)
{
	struct dtl_kernels_scanner *s = k->scanner;

	s->funcs.count = b->funcs;
	s->facts.count = b->facts;
	s->regs.count = b->regs;
	s->links.count = b->links;
	s->finfos.count = b->finfos;
	k->stats = b->stats;
}

/*
 * Applies a child's result to k (rec is the file's record). Returns 0, -EBADMSG for a malformed
 * result or -ENOMEM; *child_code is the child's own negative code (0 when it scanned the file),
 * *child_error its error then.
 */
static int apply(struct dtl_kernels *k, const struct kbase *b, const unsigned char *data,
                 size_t len, struct dtl_kernels_file *rec, int *child_code,
                 struct dtl_error *child_error)
{
	struct dtl_kernels_scanner *s = k->scanner;
	struct rbuf rd = {.k = k, .p = data, .end = data + len};
	size_t *stats = (size_t *)&k->stats;
	uint32_t code;

	*child_code = 0;
	if (r_u32(&rd) != KSANDBOX_MAGIC)
		return -EBADMSG;
	code = r_u32(&rd);
	if (code > 4095)
		return -EBADMSG;
	if (code) {
		char message[DTL_ERROR_MESSAGE_MAX];
		uint32_t n;
		*child_code = -(int)code;
		child_error->loc.line = r_u32(&rd);
		child_error->loc.column = r_u32(&rd);
		n = r_u32(&rd);
		if (rd.bad || n >= sizeof(message) || (size_t)(rd.end - rd.p) < n ||
		    memchr(rd.p, '\0', n))
			return -EBADMSG;
		memcpy(message, rd.p, n);
		message[n] = '\0';
		rd.p += n;
		snprintf(child_error->message, sizeof(child_error->message), "%s", message);
	}
	rec->parse_ns = r_u64(&rd);
	rec->tokens = (size_t)r_u64(&rd);
	rec->diagnostics = r_u32(&rd);
	rec->failed = r_u8(&rd) != 0;
	for (size_t i = 0; i < KSTATS_N; i++) {
		uint64_t d = r_u64(&rd);
		if (d > UINT32_MAX)
			rd.bad = true;
		else
			stats[i] += (size_t)d;
	}
	R_ITEMS(&rd, s->funcs, struct kfunc, 30, r_func);
	size_t n_funcs = s->funcs.count - b->funcs;
	R_ITEMS(&rd, s->facts, struct kfact, 100, r_fact);
	for (size_t i = b->facts; i < s->facts.count && !failed(&rd); i++) {
		if (!func_ok(((struct kfact *)s->facts.items)[i].func, b, n_funcs))
			rd.bad = true;
	}
	R_ITEMS(&rd, s->regs, struct kreg, 48, r_reg);
	for (size_t i = b->regs; i < s->regs.count && !failed(&rd); i++) {
		if (!func_ok(((struct kreg *)s->regs.items)[i].lambda_func, b, n_funcs))
			rd.bad = true;
	}
	R_ITEMS(&rd, s->links, struct klink, 12, r_link);
	R_ITEMS(&rd, s->finfos, struct kfinfo, 12, r_finfo);
	if (r_u32(&rd) != KSANDBOX_END || rd.p != rd.end)
		rd.bad = true;
	if (failed(&rd)) {
		rollback(k, b);
		rec->tokens = 0;
		rec->diagnostics = 0;
		rec->failed = false; /* end_file() counts it */
		return rd.nomem ? -ENOMEM : -EBADMSG;
	}
	return 0;
}

static int sandbox_error(struct dtl_error *error, const char *path, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int sandbox_error(struct dtl_error *error, const char *path, int code, const char *fmt, ...)
{
	struct dtl_loc loc = {.file = path, .line = 1, .column = 1};
	va_list ap;

	va_start(ap, fmt);
	dtl_error_setv(error, loc, code, fmt, ap);
	va_end(ap);
	return code;
}

static int record_error(struct dtl_kernels *k, const struct dtl_error *error)
{
	struct dtl_error *e = dtl_vec_push(&k->scanner->errors, k->arena, sizeof(*e));

	if (!e)
		return -ENOMEM;
	dtl_error_copy(e, error);
	return 0;
}

/* Opens the file's record; *b is the scanner before it. */
static struct dtl_kernels_file *begin_file(struct dtl_kernels *k, const char *path, struct kbase *b)
{
	struct dtl_kernels_scanner *s = k->scanner;
	struct dtl_kernels_file *rec;

	base_of(k, b);
	rec = dtl_vec_push(&s->files, k->arena, sizeof(*rec));
	if (!rec || !(rec->path = dtl_kernels_intern_z(k, path)))
		return NULL;
	k->files = s->files.items;
	k->n_files = s->files.count;
	s->linked = false;
	return rec;
}

/* Closes the file's record with r, its outcome: a failure is counted and recorded. */
static int end_file(struct dtl_kernels *k, int r, uint64_t t0, const struct dtl_error *error)
{
	struct dtl_kernels_scanner *s = k->scanner;
	struct dtl_kernels_file *rec =
	    (struct dtl_kernels_file *)s->files.items + s->files.count - 1;

	rec->total_ns = now_ns() - t0;
	if (s->progress_total && k->options.progress && s->progress_done < s->progress_total)
		k->options.progress(k->options.progress_data, ++s->progress_done,
		                    s->progress_total);
	if (r == -ENOMEM || r == 0)
		return r;
	if (!rec->failed) {
		/* the child did not get to count it */
		rec->failed = true;
		k->stats.files_failed++;
	}
	return record_error(k, error) < 0 ? -ENOMEM : r;
}

/* One frame from the child: the result of the next file. */
static int take_frame(struct dtl_kernels *k, const char *path, const unsigned char *data,
                      size_t len, struct dtl_error *error)
{
	struct dtl_error child_error = {0};
	struct dtl_kernels_file *rec;
	struct kbase b;
	int code = 0, r;

	if (!(rec = begin_file(k, path, &b)))
		return dtl_error_set(error, (struct dtl_loc){.file = path}, -ENOMEM,
		                     "out of memory");
	r = apply(k, &b, data, len, rec, &code, &child_error);
	if (r == -EBADMSG) {
		sandbox_error(error, path, r, "the parser process sent a malformed result");
	} else if (r == -ENOMEM) {
		dtl_error_set(error, (struct dtl_loc){.file = path}, r, "out of memory");
	} else if (code < 0) {
		/* the child's out of memory is this file's fault, not the parent's */
		r = code == -ENOMEM ? -EFBIG : code;
		child_error.loc.file = path;
		if (!child_error.loc.line)
			child_error.loc.line = child_error.loc.column = 1;
		dtl_error_set(error, child_error.loc, r, "%s", child_error.message);
	}
	return r;
}

enum kchild_end {
	KCHILD_EOF,
	KCHILD_TIMEOUT,
	KCHILD_MEMORY,
	KCHILD_TOOBIG,
	KCHILD_NOMEM,
	KCHILD_BUDGET, /* the scan's budget (options.budget_s) ran out */
};

struct kreader {
	unsigned char *data;
	size_t len, cap;
};

/*
 * Reads frames from the child and applies them, file after file (*next counts them), until
 * EOF, a file's wall-clock limit, the memory limit, or a failure of the parent (*ret_r).
 */
static enum kchild_end read_child(struct dtl_kernels *k, int fd, pid_t pid,
                                  const struct ksandbox_limits *l, unsigned long long rss0,
                                  const struct kjob *jobs, size_t n, size_t *next, uint64_t *t0,
                                  int *ret_r, struct dtl_error *error)
{
	struct kreader rd = {0};
	uint64_t deadline = now_ms() + l->wall_ms, budget_end = k->scanner->budget_end_ms;
	enum kchild_end end;

	*ret_r = 0;
	for (;;) {
		uint64_t t = now_ms();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int wait, m;

		if (budget_end && t >= budget_end && budget_end <= deadline) {
			end = KCHILD_BUDGET;
			break;
		}
		if (t >= deadline) {
			end = KCHILD_TIMEOUT;
			break;
		}
		if (budget_end && budget_end < deadline)
			deadline = budget_end;
		wait = deadline - t < KSANDBOX_POLL_MS ? (int)(deadline - t) : KSANDBOX_POLL_MS;
		m = poll(&p, 1, wait);
		if (m < 0 && errno != EINTR) {
			end = KCHILD_NOMEM;
			break;
		}
		/* RLIMIT_AS does not hold under AddressSanitizer, and a watchdog costs little */
		if (m == 0 && statm(pid, 1) > rss0 + l->mem) {
			end = KCHILD_MEMORY;
			break;
		}
		if (m <= 0)
			continue;
		if (rd.cap - rd.len < 65536) {
			size_t c = rd.cap ? rd.cap * 2 : 65536 * 2;
			unsigned char *d;
			if (rd.cap > KSANDBOX_MAX_RESULT + 8) {
				end = KCHILD_TOOBIG;
				break;
			}
			if (!(d = realloc(rd.data, c))) {
				end = KCHILD_NOMEM;
				break;
			}
			rd.data = d;
			rd.cap = c;
		}
		ssize_t got = read(fd, rd.data + rd.len, rd.cap - rd.len);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0) {
			end = KCHILD_EOF;
			break;
		}
		rd.len += (size_t)got;
		/* every complete frame is a file done */
		size_t off = 0;
		uint32_t flen;
		while (rd.len - off >= 4) {
			memcpy(&flen, rd.data + off, 4);
			if (flen > KSANDBOX_MAX_RESULT || *next >= n) {
				end = KCHILD_TOOBIG;
				goto out;
			}
			if (rd.len - off - 4 < flen)
				break;
			int r = take_frame(k, jobs[*next].path, rd.data + off + 4, flen, error);
			r = end_file(k, r, *t0, error);
			if (r == -ENOMEM) {
				*ret_r = r;
				end = KCHILD_NOMEM;
				goto out;
			}
			if (r < 0)
				*ret_r = r;
			off += 4 + (size_t)flen;
			(*next)++;
			*t0 = now_ns();
			deadline = now_ms() + l->wall_ms;
			if (budget_end && budget_end < deadline)
				deadline = budget_end;
		}
		memmove(rd.data, rd.data + off, rd.len - off);
		rd.len -= off;
	}
out:
	free(rd.data);
	return end;
}

/* How the child ended, as the error of the file it was scanning. */
static int child_error(struct dtl_error *error, const char *path, enum kchild_end end, int status,
                       const struct ksandbox_limits *l, unsigned budget_s)
{
	if (end == KCHILD_BUDGET)
		return sandbox_error(error, path, -ETIMEDOUT,
		                     "stopped: the scan's wall-clock budget of %u s ran out while "
		                     "libclang parsed this file",
		                     budget_s);
	if (end == KCHILD_TIMEOUT)
		return sandbox_error(error, path, -ETIMEDOUT,
		                     "libclang took longer than the wall-clock limit of %u s on "
		                     "this file and was stopped",
		                     (l->wall_ms + 999) / 1000);
	if (end == KCHILD_MEMORY)
		return sandbox_error(error, path, -EFBIG,
		                     "libclang used more than the memory limit of %llu MiB on this "
		                     "file and was stopped",
		                     l->mem >> 20);
	if (end == KCHILD_TOOBIG ||
	    (WIFEXITED(status) && WEXITSTATUS(status) == KSANDBOX_EXIT_TOOBIG))
		return sandbox_error(error, path, -EFBIG,
		                     "the scan of this file gave more than %u MiB",
		                     KSANDBOX_MAX_RESULT >> 20);
	if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL))
		return sandbox_error(error, path, -ETIME,
		                     "libclang exceeded the CPU time limit of %u s on this file",
		                     l->cpu_s);
	if (WIFSIGNALED(status))
		return sandbox_error(
		    error, path, -EIO,
		    "libclang crashed on this file (signal %d, %s); its limits are "
		    "%u s of CPU time and %llu MiB of memory",
		    WTERMSIG(status), strsignal(WTERMSIG(status)), l->cpu_s, l->mem >> 20);
	if (WIFEXITED(status) && WEXITSTATUS(status) == KSANDBOX_EXIT_NOMEM)
		return sandbox_error(
		    error, path, -EFBIG,
		    "the parser process ran out of memory on this file (limit %llu "
		    "MiB)",
		    l->mem >> 20);
	return sandbox_error(error, path, -EIO,
	                     "the parser process ended before it scanned this file (exit status "
	                     "%d)",
	                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* One child for jobs[*next, n): returns -ENOMEM, or the last file's failure, or 0. */
static int run_child(struct dtl_kernels *k, const struct kjob *jobs, size_t n, size_t *next,
                     struct CXUnsavedFile *unsaved, unsigned n_unsaved,
                     const struct ksandbox_limits *l, struct dtl_error *error)
{
	const char *path = jobs[*next].path;
	enum kchild_end end;
	pid_t pid, parent = getpid();
	uint64_t t0 = now_ns();
	unsigned long long rss0;
	int fds[2], status = 0, r, last = 0;
	struct kbase b;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	rss0 = statm(parent, 1);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(fds[0]);
		close(fds[1]);
		goto fail;
	}
	if (pid == 0) {
		close(fds[0]);
		child_main(k, fds[1], parent, l, jobs + *next, n - *next, unsaved, n_unsaved);
		_exit(1);
	}
	close(fds[1]);
	end = read_child(k, fds[0], pid, l, rss0, jobs, n, next, &t0, &last, error);
	close(fds[0]);
	if (end != KCHILD_EOF)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (end == KCHILD_NOMEM)
		return dtl_error_set(error, (struct dtl_loc){.file = path}, -ENOMEM,
		                     "out of memory");
	if (*next >= n)
		return last;
	/* the child ended while it scanned jobs[*next] */
	path = jobs[*next].path;
	if (!begin_file(k, path, &b))
		return dtl_error_set(error, (struct dtl_loc){.file = path}, -ENOMEM,
		                     "out of memory");
	r = child_error(error, path, end, status, l, k->options.budget_s);
	(*next)++;
	return end_file(k, r, t0, error);
fail:
	if (!begin_file(k, path, &b))
		return dtl_error_set(error, (struct dtl_loc){.file = path}, -ENOMEM,
		                     "out of memory");
	sandbox_error(error, path, r, "cannot start the parser process: %s", strerror(-r));
	(*next)++;
	return end_file(k, r, t0, error);
}

void dtl_kernels_scan_budget(struct dtl_kernels *k, bool on)
{
	k->scanner->budget_end_ms =
	    on && k->options.budget_s ? now_ms() + (uint64_t)k->options.budget_s * 1000u : 0;
}

/* Once the budget is spent, each file not reached fails by name: nothing is silently dropped. */
static int skip_rest(struct dtl_kernels *k, const struct kjob *jobs, size_t n, size_t *next,
                     struct dtl_error *error)
{
	int r = 0;

	for (; *next < n; (*next)++) {
		const char *path = jobs[*next].path;
		struct kbase b;
		if (!begin_file(k, path, &b))
			return dtl_error_set(error, (struct dtl_loc){.file = path}, -ENOMEM,
			                     "out of memory");
		sandbox_error(error, path, -ETIMEDOUT,
		              "not scanned: the scan's wall-clock budget of %u s was spent before "
		              "this file",
		              k->options.budget_s);
		r = end_file(k, -ETIMEDOUT, now_ns(), error);
		if (r == -ENOMEM)
			return r;
	}
	return r;
}

int dtl_kernels_scan_batch(struct dtl_kernels *k, const struct kjob *jobs, size_t n,
                           struct CXUnsavedFile *unsaved, unsigned n_unsaved,
                           struct dtl_error *error)
{
	struct ksandbox_limits l;
	size_t next = 0;
	int r = 0;

	limits_get(&l);
	while (next < n) {
		uint64_t budget_end = k->scanner->budget_end_ms;
		if (budget_end && now_ms() >= budget_end)
			return skip_rest(k, jobs, n, &next, error);
		size_t end = n - next > KSANDBOX_BATCH ? next + KSANDBOX_BATCH : n;
		r = run_child(k, jobs, end, &next, unsaved, n_unsaved, &l, error);
		if (r == -ENOMEM)
			return r;
	}
	return r;
}

int dtl_kernels_scan_one(struct dtl_kernels *k, const char *path, struct CXUnsavedFile *unsaved,
                         unsigned n_unsaved, const char *const *include_dirs, size_t n_include_dirs,
                         struct dtl_error *error)
{
	struct kjob job = {
	    .path = path, .include_dirs = include_dirs, .n_include_dirs = n_include_dirs};

	return dtl_kernels_scan_batch(k, &job, 1, unsaved, n_unsaved, error);
}

size_t dtl_kernels_file_errors(const struct dtl_kernels *k, const struct dtl_error **ret)
{
	if (!k->scanner) {
		*ret = NULL;
		return 0;
	}
	*ret = k->scanner->errors.items;
	return k->scanner->errors.count;
}
