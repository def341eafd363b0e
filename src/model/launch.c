/* SPDX-License-Identifier: MIT */
/*
 * --launch: a shell script or command line read as words, never run (include/dtypelint/
 * launch.h). The lexer is one pass over the bytes; a word is at most WORD_MAX bytes after
 * expansion and the script's variables at most VARS_MAX, so the worst case stays linear.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dtypelint/model/file-kind.h"
#include "dtypelint/model/import.h"
#include "dtypelint/model/launch.h"
#include "import-util.h"

enum { WORD_MAX = 4096, VARS_MAX = 256, WORDS_MAX = 4096, FRAMES_MAX = 64, FUNCS_MAX = 64 };
/* all heredoc words and function bodies re-read in one script: four times its size, and
 * 64 KiB */
#define SPLICE_MAX(lx) (4 * (lx)->src->size + 65536)

struct var;

struct word {
	char *text;
	size_t len;
	struct dtl_loc loc;
	const char *unresolved; /* the first variable the script does not set, or NULL */
	/* when that variable is set, but only in a branch, a loop or a function: the setting */
	const struct var *ambiguous;
	size_t start, end; /* its bytes in the script, as written */
};

struct var {
	char *name, *value;
	/* a heredoc taken by `read NAME <<EOF`: its body in the script, where an unquoted $NAME
	 * is split into words again (each at its place in the body) */
	bool heredoc;
	size_t body_start, body_end;
	uint32_t body_line;
	/* set in a branch, loop body or function (control.c's frames): the branch's id, 0 when
	 * set where it always runs; its value holds only inside that branch. each: a for loop's
	 * variable, one value per turn. where: "an if/else branch", ...; set: its word */
	uint32_t branch;
	bool each;
	const char *where;
	struct dtl_loc set;
	const struct call *local; /* `local NAME=v`: the call it belongs to, gone after it */
};

/* A shell function: its body's bytes (between its braces) and where they start */
struct func {
	const char *name;
	size_t start, end;
	uint32_t line, col;
	struct dtl_loc at; /* its { */
	bool called;
};

/* A call of a function being read: its positional arguments are the call's words */
struct call {
	const struct func *fn;
	const struct word *args;
	size_t argc;
	struct dtl_loc at; /* the call's first word */
	bool never;        /* the script never calls it: read once, its arguments named */
	const struct call *outer;
};

/* An if, case, loop, function or { } group the lexer is inside (control flow, below); a
 * function's definition (FRAME_FUNCTION) is not run, its calls (FRAME_CALL) are; a ( )
 * subshell keeps its assignments. */
enum frame_kind {
	FRAME_IF,
	FRAME_CASE,
	FRAME_LOOP,
	FRAME_FUNCTION,
	FRAME_GROUP,
	FRAME_CALL,
	FRAME_SUBSHELL
};

struct frame {
	enum frame_kind kind;
	uint32_t branch;   /* the branch being read (then, else, a case item, do): 0 in a test */
	bool pattern;      /* case: the next command is an item's pattern */
	struct dtl_loc at; /* its keyword */
	/* `if [ -z "$X" ]; then X=v; fi` (or "$X" == ""): a default for X, as ${X:-v} */
	const char *empty;
	size_t empty_len;
	bool other_branch; /* an elif or else: no longer a default */
	/* FRAME_FUNCTION: the function's name and its body's start (past its {) */
	const char *fn_name;
	size_t body_start;
	/* FRAME_SUBSHELL: the variables and launch settings before it, restored after it */
	size_t vars, launches;
	enum dtl_precision precision;
	enum dtl_strategy strategy;
	struct dtl_loc precision_loc, strategy_loc;
};

/* separators seen after a command: ;; && || () */
enum { SEP_CASE_END = 1, SEP_CHAIN = 2, SEP_PARENS = 4 };

/* `<<DELIM` seen on the current command: its body starts after the command's newline */
struct heredoc {
	bool pending, ready;
	bool dash; /* <<-: leading tabs are stripped */
	char delim[64];
	size_t start, end;
	uint32_t line;
};

struct lexer {
	const struct dtl_source *src;
	size_t i, limit; /* limit: the end of what is read (a heredoc's body, when splicing) */
	uint32_t line, col;
	bool split;     /* splicing a variable's words: a newline is a blank, '#' a letter */
	size_t spliced; /* bytes re-read by splicing: bounded, so the worst case stays linear */
	struct heredoc hd;
	struct dtl_arena *arena;
	struct var vars[VARS_MAX];
	size_t var_count;
	char buf[WORD_MAX];
	size_t len;
	const char *unresolved;
	const struct var *ambiguous;
	unsigned seps;
	struct frame frames[FRAMES_MAX];
	size_t depth, lost; /* lost: frames past FRAMES_MAX, popped without a slot */
	uint32_t next_branch;
	bool chained;        /* the command follows && or ||: it may not run */
	bool function;       /* the last command was NAME (): a { that follows is its body */
	const char *fn_name; /* that NAME */
	struct func funcs[FUNCS_MAX];
	size_t func_count;
	const struct call *call;     /* the call being read, NULL at the script's top */
	const struct word *from_arg; /* the call's word the last positional expansion took */
	/* ( and ) seen between commands: subshells to open and close */
	bool command_start;
	unsigned opens, closes;
	bool over_budget; /* a call was not followed for the budget (said once) */
};

struct reader {
	struct lexer lx;
	struct dtl_launch *out;
	const char *path;
	struct dtl_error *error;
	size_t launches;       /* launch commands found */
	bool first_branch;     /* the first one may not run (a branch, loop, function) */
	bool function_keyword; /* `function NAME` with its { on the next command */
};

static char peek(const struct lexer *lx, size_t ahead)
{
	size_t at = lx->i + ahead;
	return at < lx->limit ? lx->src->data[at] : '\0';
}

static bool at_end(const struct lexer *lx)
{
	return lx->i >= lx->limit;
}

/* one byte on, keeping line and column (columns count code points) */
static void advance(struct lexer *lx)
{
	char c = lx->src->data[lx->i++];
	if (c == '\n') {
		lx->line++;
		lx->col = 1;
	} else if (((unsigned char)c & 0xc0) != 0x80) {
		lx->col++;
	}
}

static void put(struct lexer *lx, const char *text, size_t n)
{
	if (n > WORD_MAX - 1 - lx->len)
		n = WORD_MAX - 1 - lx->len;
	memcpy(lx->buf + lx->len, text, n);
	lx->len += n;
}

static const struct var *find_var(const struct lexer *lx, const char *name, size_t n)
{
	for (size_t k = lx->var_count; k-- > 0;)
		if (strlen(lx->vars[k].name) == n && memcmp(lx->vars[k].name, name, n) == 0)
			return &lx->vars[k];
	return NULL;
}

/* whether branch id b is being read (an outer branch of the lexer's position) */
static bool inside(const struct lexer *lx, uint32_t b)
{
	for (size_t k = 0; k < lx->depth; k++)
		if (lx->frames[k].branch == b)
			return true;
	return false;
}

/* Its value where the lexer is; NULL when unset, or set only in a branch, loop or function
 * the lexer is not in (then lx->ambiguous names it: never one value guessed). */
static const char *lookup(struct lexer *lx, const char *name, size_t n)
{
	const struct var *v = find_var(lx, name, n);
	if (v && (v->each || (v->branch && !inside(lx, v->branch)))) {
		if (!lx->unresolved) /* the word's first unresolved variable is this one */
			lx->ambiguous = v;
		return NULL;
	}
	return v ? v->value : NULL;
}

static bool name_char(char c, bool first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && c >= '0' && c <= '9');
}

/* a variable the script does not set: its text stays, and it is named */
static void unresolved(struct lexer *lx, const char *raw, size_t n)
{
	if (!lx->unresolved)
		lx->unresolved = dtl_arena_strndup(lx->arena, raw, n);
	put(lx, raw, n);
}

/* $(...) or $((...)): skipped to its closing parenthesis; the command is not run */
static void command_substitution(struct lexer *lx, size_t start)
{
	int depth = 0;
	while (!at_end(lx)) {
		char c = peek(lx, 0);
		advance(lx);
		if (c == '(')
			depth++;
		else if (c == ')' && --depth == 0)
			break;
	}
	size_t n = lx->i - start;
	unresolved(lx, lx->src->data + start, n > 40 ? 40 : n);
}

/* A default's text (${NAME:-default}) with its own $NAME and ${NAME} references expanded,
 * one level deep: the shell expands them too. */
static void put_default(struct lexer *lx, const char *text, size_t n)
{
	for (size_t k = 0; k < n;) {
		if (text[k] != '$' || k + 1 == n) {
			put(lx, text + k++, 1);
			continue;
		}
		size_t at = k++;
		bool brace = text[k] == '{';
		size_t name = k + brace, end = name;
		while (end < n && name_char(text[end], end == name))
			end++;
		const char *value = end > name ? lookup(lx, text + name, end - name) : NULL;
		if (brace && end < n && text[end] == '}')
			end++;
		else if (brace)
			value = NULL;
		if (value)
			put(lx, value, strlen(value));
		else
			unresolved(lx, text + at, end - at);
		k = end > k ? end : k;
	}
}

static const char *ordinal(size_t k)
{
	static const char *const names[] = {"",    "1st", "2nd", "3rd", "4th",
	                                    "5th", "6th", "7th", "8th", "9th"};
	return k < 10 ? names[k] : "nth";
}

/* $K (K from 1 to 9) inside a function being called: the call's K-th word, when it is
 * literal; else named with what the call passes (never guessed) */
static void positional(struct lexer *lx, size_t k, size_t start)
{
	const struct call *c = lx->call;
	const struct word *arg = k <= c->argc ? &c->args[k - 1] : NULL;
	const char *why;

	if (arg && !arg->unresolved) {
		put(lx, arg->text, arg->len);
		lx->from_arg = arg;
		return;
	}
	if (c->never)
		why = dtl_arena_sprintf(lx->arena, "$%zu (%s is never called in the script)", k,
		                        c->fn->name);
	else if (arg)
		why = dtl_arena_sprintf(lx->arena,
		                        "$%zu (its call at %u:%u passes %s as %s's %s "
		                        "argument)",
		                        k, c->at.line, c->at.column, arg->unresolved, c->fn->name,
		                        ordinal(k));
	else
		why = dtl_arena_sprintf(lx->arena,
		                        "$%zu (its call at %u:%u passes %s no %s argument)", k,
		                        c->at.line, c->at.column, c->fn->name, ordinal(k));
	if (!lx->unresolved)
		lx->unresolved = why;
	put(lx, lx->src->data + start, lx->i - start);
}

/* ${NAME}, ${NAME:-default}, ${NAME-default} */
static void braced(struct lexer *lx, size_t start)
{
	advance(lx); /* { */
	if (lx->call && peek(lx, 0) >= '1' && peek(lx, 0) <= '9' && peek(lx, 1) == '}') {
		size_t k = (size_t)(peek(lx, 0) - '0');
		advance(lx);
		advance(lx);
		positional(lx, k, start);
		return;
	}
	size_t name = lx->i;
	while (!at_end(lx) && name_char(peek(lx, 0), lx->i == name))
		advance(lx);
	size_t name_len = lx->i - name;
	const char *value = lookup(lx, lx->src->data + name, name_len);
	bool dflt = peek(lx, 0) == '-' || (peek(lx, 0) == ':' && peek(lx, 1) == '-');
	if (dflt)
		while (!at_end(lx) && peek(lx, 0) != '-')
			advance(lx);
	size_t def = dflt ? lx->i + 1 : lx->i;
	if (dflt)
		advance(lx);
	while (!at_end(lx) && peek(lx, 0) != '}' && peek(lx, 0) != '\n')
		advance(lx);
	size_t def_len = lx->i - def;
	if (peek(lx, 0) == '}')
		advance(lx);
	const struct var *v = find_var(lx, lx->src->data + name, name_len);
	bool branch = v && !value && (v->each || v->branch);
	if (value)
		put(lx, value, strlen(value));
	else if (dflt && !branch) /* the script's own default: what the shell takes */
		put_default(lx, lx->src->data + def, def_len);
	else
		unresolved(lx, lx->src->data + start, lx->i - start);
}

static void expansion(struct lexer *lx)
{
	size_t start = lx->i;
	advance(lx); /* $ */
	char c = peek(lx, 0);
	if (c == '(') {
		command_substitution(lx, start);
	} else if (c == '{') {
		braced(lx, start);
	} else if (name_char(c, true)) {
		size_t name = lx->i;
		while (!at_end(lx) && name_char(peek(lx, 0), false))
			advance(lx);
		const char *value = lookup(lx, lx->src->data + name, lx->i - name);
		if (value)
			put(lx, value, strlen(value));
		else
			unresolved(lx, lx->src->data + start, lx->i - start);
	} else if (c >= '1' && c <= '9' && lx->call) {
		advance(lx);
		positional(lx, (size_t)(c - '0'), start);
	} else if ((c >= '0' && c <= '9') || c == '@' || c == '*' || c == '#' || c == '?') {
		advance(lx); /* the script's arguments: set by whoever runs it */
		unresolved(lx, lx->src->data + start, 2);
	} else {
		put(lx, "$", 1);
	}
}

static void single_quoted(struct lexer *lx)
{
	advance(lx);
	while (!at_end(lx) && peek(lx, 0) != '\'') {
		put(lx, lx->src->data + lx->i, 1);
		advance(lx);
	}
	if (!at_end(lx))
		advance(lx);
}

static void double_quoted(struct lexer *lx)
{
	advance(lx);
	while (!at_end(lx) && peek(lx, 0) != '"') {
		char c = peek(lx, 0);
		if (c == '\\' && strchr("$\"\\`\n", peek(lx, 1)) && peek(lx, 1)) {
			advance(lx);
			if (peek(lx, 0) != '\n')
				put(lx, lx->src->data + lx->i, 1);
			advance(lx);
		} else if (c == '$') {
			expansion(lx);
		} else {
			put(lx, lx->src->data + lx->i, 1);
			advance(lx);
		}
	}
	if (!at_end(lx))
		advance(lx);
}

static bool word_end(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' ||
	       c == '|' || c == '(' || c == ')' || c == '<' || c == '>' || c == '\0';
}

/* $K, ${K}, "$K" or "${K}" (K a digit) as written: one positional argument, nothing else */
static bool whole_positional(const char *p, size_t n)
{
	bool quoted = n >= 2 && p[0] == '"' && p[n - 1] == '"';
	p += quoted, n -= 2 * quoted;
	if (n == 2)
		return p[0] == '$' && p[1] >= '1' && p[1] <= '9';
	return n == 4 && p[0] == '$' && p[1] == '{' && p[2] >= '1' && p[2] <= '9' && p[3] == '}';
}

/* One word at the lexer's position into *w (text in the arena). */
static int read_word(struct lexer *lx, struct word *w)
{
	w->loc = (struct dtl_loc){.file = lx->src->path, .line = lx->line, .column = lx->col};
	w->start = lx->i;
	lx->len = 0;
	lx->unresolved = NULL;
	lx->ambiguous = NULL;
	lx->from_arg = NULL;
	while (!at_end(lx) && !word_end(peek(lx, 0))) {
		char c = peek(lx, 0);
		if (c == '\\') {
			advance(lx);
			if (!at_end(lx)) {
				if (peek(lx, 0) != '\n')
					put(lx, lx->src->data + lx->i, 1);
				advance(lx);
			}
		} else if (c == '\'') {
			single_quoted(lx);
		} else if (c == '"') {
			double_quoted(lx);
		} else if (c == '$') {
			expansion(lx);
		} else if (c == '`') {
			size_t start = lx->i;
			advance(lx);
			while (!at_end(lx) && peek(lx, 0) != '`')
				advance(lx);
			if (!at_end(lx))
				advance(lx);
			unresolved(lx, lx->src->data + start,
			           lx->i - start > 40 ? 40 : lx->i - start);
		} else {
			put(lx, lx->src->data + lx->i, 1);
			advance(lx);
		}
	}
	w->text = dtl_arena_strndup(lx->arena, lx->buf, lx->len);
	w->len = lx->len;
	w->end = lx->i;
	w->unresolved = lx->unresolved;
	w->ambiguous = lx->unresolved ? lx->ambiguous : NULL;
	/* "$1" as a whole word: its setting comes from the call's word, and is placed there */
	if (lx->from_arg && whole_positional(lx->src->data + w->start, w->end - w->start))
		w->loc = lx->from_arg->loc;
	return w->text ? 0 : -ENOMEM;
}

/* `<<DELIM`, `<<-DELIM`, `<<'DELIM'` (the lexer past `<<`): its body is taken at the end of
 * the command's line (heredoc_body) */
static void heredoc_start(struct lexer *lx)
{
	struct word delim;
	bool dash = peek(lx, 0) == '-';

	if (dash)
		advance(lx);
	while (!at_end(lx) && (peek(lx, 0) == ' ' || peek(lx, 0) == '\t'))
		advance(lx);
	if (read_word(lx, &delim) < 0 || !delim.len || delim.len >= sizeof(lx->hd.delim))
		return; /* no delimiter dtypelint can match: the lines stay commands */
	memcpy(lx->hd.delim, delim.text, delim.len + 1);
	lx->hd.dash = dash;
	lx->hd.pending = true;
}

/* The body, from the lexer's position (a line start) to the line that is the delimiter (or
 * the end, as bash takes it): skipped, and kept for a `read` on the same command. */
static void heredoc_body(struct lexer *lx)
{
	struct heredoc *hd = &lx->hd;
	size_t dlen = strlen(hd->delim);

	hd->pending = false;
	hd->ready = true;
	hd->start = hd->end = lx->i;
	hd->line = lx->line;
	while (!at_end(lx)) {
		size_t line = lx->i, text = line;
		while (hd->dash && text < lx->limit && lx->src->data[text] == '\t')
			text++;
		size_t end = text;
		while (end < lx->limit && lx->src->data[end] != '\n')
			end++;
		bool last =
		    end - text == dlen && memcmp(lx->src->data + text, hd->delim, dlen) == 0;
		while (lx->i < end)
			advance(lx);
		if (!at_end(lx))
			advance(lx); /* the newline */
		if (last) {
			hd->end = line;
			return;
		}
		hd->end = lx->i;
	}
}

/* what the separator at c (then next) says of the commands around it */
static unsigned separator(char c, char next)
{
	if (c == ';' && next == ';')
		return SEP_CASE_END;
	if ((c == '&' || c == '|') && next == c)
		return SEP_CHAIN;
	return c == '(' && next == ')' ? SEP_PARENS : 0;
}

/* A ( that starts a command opens a subshell (not NAME's (), not a case pattern's); a ) that
 * follows no ( closes one: counted here, taken once the command before them is read */
static void subshell_paren(struct lexer *lx)
{
	char c = peek(lx, 0);
	if (c == '\n' || c == ';' || c == '&' || c == '|')
		lx->command_start = true;
	else if (c == '(' && peek(lx, 1) != ')' && lx->command_start)
		lx->opens++;
	else if (c == ')' && (lx->i == 0 || lx->src->data[lx->i - 1] != '('))
		lx->closes++;
}

/* Blanks, continuations and comments; true at the end of a command. */
static bool skip_blanks(struct lexer *lx)
{
	while (!at_end(lx)) {
		char c = peek(lx, 0);
		if (c == ' ' || c == '\t' || c == '\r' || c == '\0' || (c == '\n' && lx->split)) {
			advance(lx); /* a NUL byte separates words, as blanks do */
		} else if (c == '\\' && peek(lx, 1) == '\n') {
			advance(lx);
			advance(lx);
		} else if (c == '#' && !lx->split) {
			while (!at_end(lx) && peek(lx, 0) != '\n')
				advance(lx);
		} else if (c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
			lx->seps = 0;
			while (!at_end(lx) && strchr("\n;&|()", peek(lx, 0))) {
				bool newline = peek(lx, 0) == '\n';
				lx->seps |= separator(peek(lx, 0), peek(lx, 1));
				subshell_paren(lx);
				advance(lx);
				if (newline && lx->hd.pending)
					heredoc_body(lx);
			}
			return true;
		} else if (c == '<' && peek(lx, 1) == '<' && peek(lx, 2) != '<' && !lx->split) {
			advance(lx);
			advance(lx);
			heredoc_start(lx);
		} else if (c == '<' || c == '>') {
			/* a redirection: its target is no argument */
			while (!at_end(lx) && (peek(lx, 0) == '<' || peek(lx, 0) == '>'))
				advance(lx);
			while (!at_end(lx) && (peek(lx, 0) == ' ' || peek(lx, 0) == '\t'))
				advance(lx);
			struct word ignored;
			if (read_word(lx, &ignored) < 0)
				return true;
		} else {
			return false;
		}
	}
	return true;
}

static void warn(struct reader *rd, struct dtl_loc loc, const char *message)
{
	struct dtl_input_warning *w =
	    message ? dtl_vec_push(&rd->out->warnings, rd->lx.arena, sizeof(*w)) : NULL;
	if (w) {
		w->loc = loc;
		w->message = message;
	}
}

static bool is(const struct word *w, const char *text)
{
	return strcmp(w->text, text) == 0;
}

static bool ends(const struct word *w, const char *suffix)
{
	size_t n = strlen(suffix);
	return w->len >= n && strcmp(w->text + w->len - n, suffix) == 0;
}

static const char *base(const struct word *w)
{
	const char *slash = strrchr(w->text, '/');
	return slash ? slash + 1 : w->text;
}

/* NAME=value: an assignment (the name's length, else 0) */
static size_t assignment(const struct word *w)
{
	size_t n = 0;
	while (n < w->len && name_char(w->text[n], n == 0))
		n++;
	return n && n < w->len && w->text[n] == '=' ? n : 0;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Why a word's variable has no value here, after "which ": not set at all, set only in a
 * branch, loop or function the word is not in, or a for loop's (each of its words in turn). */
static const char *which(struct dtl_arena *arena, const struct word *w)
{
	const struct var *v = w->ambiguous;
	if (!v)
		return "the script does not set (an argument or the environment of whoever runs "
		       "it)";
	if (v->each)
		return dtl_arena_sprintf(arena,
		                         "takes each word of the for loop at %u:%u in turn: its "
		                         "value depends on the turn",
		                         v->set.line, v->set.column);
	return dtl_arena_sprintf(arena,
	                         "the script sets only inside %s (at %u:%u): its value depends "
	                         "on the run",
	                         v->where, v->set.line, v->set.column);
}

/* A file the command names: as given from the working directory, else from the script's
 * folder; unresolved or missing, it is said and not read. */
static int file_arg(struct reader *rd, const struct word *w, const char *what, const char **ret,
                    struct dtl_loc *ret_loc)
{
	struct dtl_arena *arena = rd->lx.arena;
	if (w->unresolved && w->ambiguous) {
		warn(rd, w->loc,
		     dtl_arena_sprintf(arena, "%s '%s': %s, which %s: not read", what, w->text,
		                       w->unresolved, which(arena, w)));
		return 0;
	}
	if (w->unresolved) {
		warn(rd, w->loc,
		     dtl_arena_sprintf(arena,
		                       "%s '%s': %s is not set in the script (an argument or the "
		                       "environment of whoever runs it): not read",
		                       what, w->text, w->unresolved));
		return 0;
	}
	const char *path = w->text;
	if (!exists(path) && !(path = dtl_path_relative_to(arena, rd->path, w->text)))
		return -ENOMEM;
	if (!exists(path)) {
		warn(rd, w->loc,
		     dtl_arena_sprintf(arena,
		                       "%s '%s' is not there (from the working directory or the "
		                       "script's folder): not read",
		                       what, w->text));
		return 0;
	}
	int r = dtl_confine_check(path, rd->path, w->loc, rd->error);
	if (r < 0)
		return r;
	*ret = path;
	*ret_loc = w->loc;
	return 0;
}

static void set_precision(struct reader *rd, const char *value, struct dtl_loc loc)
{
	enum dtl_precision p = strcmp(value, "bf16") == 0 || strcmp(value, "fp8") == 0
	                           ? DTL_PRECISION_BF16
	                       : strcmp(value, "fp16") == 0 ? DTL_PRECISION_FP16
	                       : strcmp(value, "no") == 0   ? DTL_PRECISION_FP32
	                                                    : DTL_PRECISION_UNSET;
	if (p == DTL_PRECISION_UNSET)
		return;
	rd->out->precision = p;
	rd->out->precision_loc = loc;
}

static void set_world(struct reader *rd, const struct word *w)
{
	char *end;
	long n = strtol(w->text, &end, 10);
	if (w->unresolved || *end || n < 1 || n > 1 << 20)
		return;
	rd->out->world_size = n;
	rd->out->world_size_loc = w->loc;
}

/* The environment variables of a command or the script that carry a setting: accelerate
 * reads ACCELERATE_MIXED_PRECISION and ACCELERATE_USE_FSDP / ACCELERATE_USE_DEEPSPEED in the
 * launched process, and FSDP_VERSION for its FSDP plugin (rules/versions.yaml recipes.launch-env).
 */
static void environment(struct reader *rd, const struct word *w, size_t name_len)
{
	const char *value = w->text + name_len + 1;
	struct dtl_loc loc = w->loc;
#define NAMED(n) (name_len == strlen(n) && memcmp(w->text, n, name_len) == 0)
	if (NAMED("ACCELERATE_MIXED_PRECISION")) {
		set_precision(rd, value, loc);
	} else if (NAMED("ACCELERATE_USE_FSDP") && strcasecmp(value, "true") == 0) {
		if (rd->out->strategy != DTL_STRATEGY_FSDP2)
			rd->out->strategy = DTL_STRATEGY_FSDP1;
		rd->out->strategy_loc = loc;
	} else if (NAMED("FSDP_VERSION") && strcmp(value, "2") == 0) {
		rd->out->strategy = DTL_STRATEGY_FSDP2;
		rd->out->strategy_loc = loc;
	} else if (NAMED("ACCELERATE_USE_DEEPSPEED") && strcasecmp(value, "true") == 0) {
		rd->out->strategy = DTL_STRATEGY_ZERO3;
		rd->out->strategy_loc = loc;
	}
#undef NAMED
}

/* The branch an assignment made now holds in (0: where it always runs), and what it is. */
static uint32_t branch_here(struct lexer *lx, const char **ret_where)
{
	static const char *const kinds[] = {[FRAME_IF] = "an if/elif/else branch",
	                                    [FRAME_CASE] = "a case item",
	                                    [FRAME_LOOP] = "a loop body",
	                                    [FRAME_FUNCTION] = "a function",
	                                    [FRAME_GROUP] = "a { } group",
	                                    [FRAME_CALL] = "a function called where it may not run",
	                                    [FRAME_SUBSHELL] = "a ( ) subshell"};
	*ret_where = NULL;
	if (lx->chained || lx->lost) {
		*ret_where = lx->chained ? "a command after && or ||" : "a deeply nested block";
		return ++lx->next_branch; /* a branch never entered again */
	}
	for (size_t k = lx->depth; k-- > 0;)
		if (lx->frames[k].branch) {
			*ret_where = kinds[lx->frames[k].kind];
			return lx->frames[k].branch;
		}
	return 0;
}

/* whether an assignment made now may not run (a branch, a loop, a function, a chain) */
static bool conditional(const struct lexer *lx)
{
	if (lx->chained || lx->lost)
		return true;
	for (size_t k = 0; k < lx->depth; k++)
		if (lx->frames[k].branch)
			return true;
	return false;
}

/* Standalone NAME=value (not a command's prefix): one that accelerate reads, set only in a
 * branch, is named, not taken. True when so. */
static bool setting_in_branch(struct reader *rd, const struct word *w, size_t name_len)
{
	static const char *const settings[] = {"ACCELERATE_MIXED_PRECISION", "ACCELERATE_USE_FSDP",
	                                       "FSDP_VERSION", "ACCELERATE_USE_DEEPSPEED", NULL};
	const char *where;

	if (!conditional(&rd->lx))
		return false;
	for (const char *const *k = settings; *k; k++)
		if (strlen(*k) == name_len && strncmp(w->text, *k, name_len) == 0) {
			branch_here(&rd->lx, &where);
			warn(rd, w->loc,
			     dtl_arena_sprintf(rd->lx.arena,
			                       "%s is set only inside %s: which value the launch "
			                       "sees depends on the run: not read",
			                       *k, where));
			return true;
		}
	return false;
}

static int set_variable(struct reader *rd, const struct word *w, size_t name_len, bool standalone,
                        bool local)
{
	struct lexer *lx = &rd->lx;
	if (!standalone || !setting_in_branch(rd, w, name_len))
		environment(rd, w, name_len);
	if (lx->var_count == VARS_MAX)
		return 0; /* later ones stay unset: named when used */
	struct var *v = &lx->vars[lx->var_count];
	*v = (struct var){.set = w->loc};
	v->branch = branch_here(lx, &v->where);
	v->local = local ? lx->call : NULL;
	v->name = dtl_arena_strndup(lx->arena, w->text, name_len);
	v->value = dtl_arena_strndup(lx->arena, w->text + name_len + 1, w->len - name_len - 1);
	if (!v->name || !v->value)
		return -ENOMEM;
	/* a value built on a variable the script does not set is itself unresolved */
	if (!w->unresolved)
		lx->var_count++;
	return 0;
}

/* `read [-r] [-d ''] NAME <<EOF`: NAME is the heredoc's body (bash drops its backslash-newlines,
 * which the words read from it skip too) */
static int read_heredoc(struct reader *rd, const struct word *name)
{
	struct lexer *lx = &rd->lx;
	struct heredoc *hd = &lx->hd;

	if (!hd->ready || lx->var_count == VARS_MAX || !name->len || name->unresolved)
		return 0;
	for (size_t k = 0; k < name->len; k++)
		if (!name_char(name->text[k], k == 0))
			return 0;
	struct var *v = &lx->vars[lx->var_count];
	*v = (struct var){
	    .name = name->text,
	    .value = dtl_arena_strndup(lx->arena, lx->src->data + hd->start, hd->end - hd->start),
	    .heredoc = true,
	    .body_start = hd->start,
	    .body_end = hd->end,
	    .body_line = hd->line,
	    .set = name->loc};
	v->branch = branch_here(lx, &v->where);
	if (!v->value)
		return -ENOMEM;
	lx->var_count++;
	return 0;
}

/* "--name=value" or "--name value": the value word (a scratch word for the = form) */
static const struct word *value_of(const struct word *words, size_t n, size_t *j, const char *name,
                                   struct word *scratch)
{
	const struct word *w = &words[*j];
	size_t len = strlen(name);
	if (strncmp(w->text, name, len) != 0)
		return NULL;
	if (w->text[len] == '=') {
		*scratch = *w;
		scratch->text = w->text + len + 1;
		scratch->len = w->len - len - 1;
		return scratch;
	}
	if (w->text[len] || *j + 1 >= n)
		return NULL;
	return &words[++*j];
}

/* --bf16, --bf16 True, --bf16=true */
static bool flag_on(const struct word *words, size_t n, size_t *j, const char *name)
{
	const struct word *w = &words[*j];
	size_t len = strlen(name);
	if (strncmp(w->text, name, len) != 0 || (w->text[len] && w->text[len] != '='))
		return false;
	const char *v = w->text[len] == '=' ? w->text + len + 1 : NULL;
	if (!v && *j + 1 < n && words[*j + 1].text[0] != '-') {
		const char *next = words[*j + 1].text;
		if (!strcasecmp(next, "true") || !strcasecmp(next, "false") || !strcmp(next, "1") ||
		    !strcmp(next, "0"))
			v = words[++*j].text;
	}
	return !v || !strcasecmp(v, "true") || !strcmp(v, "1");
}

/* Flags that ask for what dtypelint does not model: a rollout engine (TRL's use_vllm,
 * OpenRLHF's vllm_num_engines) or tensor / pipeline parallelism above 1 (DT604). Returns 1
 * when the word at *j is one of them (taken), 0, or -ENOMEM. */
static int unmodelled_flag(struct reader *rd, const struct word *words, size_t n, size_t *j)
{
	static const struct {
		const char *flag;
		bool count; /* takes a number, unmodelled above 1 */
		const char *what, *touches;
	} flags[] = {
	    {"--use_vllm", false, "vLLM generation (--use_vllm)",
	     "the policy's weights, copied into the vLLM engine in its own dtype"},
	    {"--vllm_num_engines", true, "vLLM rollout engines (--vllm_num_engines)",
	     "the actor's weights, broadcast to the engines in their dtype"},
	    {"--tensor_model_parallel_size", true, "tensor parallelism",
	     "every Linear weight, split across ranks"},
	    {"--tensor_parallel_size", true, "tensor parallelism",
	     "every Linear weight, split across ranks"},
	    {"--tp_size", true, "tensor parallelism", "every Linear weight, split across ranks"},
	    {"--pipeline_model_parallel_size", true, "pipeline parallelism",
	     "every layer, placed on one pipeline stage"},
	    {"--pp_size", true, "pipeline parallelism",
	     "every layer, placed on one pipeline stage"},
	    /* Megatron-LM's spelling */
	    {"--tensor-model-parallel-size", true, "tensor parallelism",
	     "every Linear weight, split across ranks"},
	    {"--pipeline-model-parallel-size", true, "pipeline parallelism",
	     "every layer, placed on one pipeline stage"},
	};
	struct word scratch;
	const struct word *v;

	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		size_t at = *j, len = strlen(flags[k].flag);
		const char *text = words[at].text;
		if (strncmp(text, flags[k].flag, len) != 0 || (text[len] && text[len] != '='))
			continue;
		bool on = flags[k].count ? (v = value_of(words, n, j, flags[k].flag, &scratch)) &&
		                               !v->unresolved && strtol(v->text, NULL, 10) > 1
		                         : flag_on(words, n, j, flags[k].flag);
		if (!on)
			return 1;
		struct dtl_unmodelled *u =
		    dtl_vec_push(&rd->out->unmodelled, rd->lx.arena, sizeof(*u));
		if (!u)
			return -ENOMEM;
		*u = (struct dtl_unmodelled){
		    .what = flags[k].what, .touches = flags[k].touches, .loc = words[at].loc};
		return 1;
	}
	return 0;
}

/* TrainingArguments.fsdp: "--fsdp=WORDS", "--fsdp WORDS", or a bare --fsdp (nargs="?",
 * const=True) when the next word is a flag or there is none */
static void fsdp_arg(struct reader *rd, const struct word *words, size_t n, size_t *j)
{
	const struct word *w = &words[*j], *v = NULL;
	const char *text = NULL;

	if (w->text[6] == '=') {
		text = w->text + 7;
		v = w;
	} else if (*j + 1 < n && words[*j + 1].text[0] != '-') {
		v = &words[++*j];
		text = v->text;
	}
	if (v && v->unresolved) {
		warn(rd, v->loc,
		     dtl_arena_sprintf(
		         rd->lx.arena,
		         "--fsdp '%s': %s is not set in the script (an argument or the "
		         "environment of whoever runs it): not read",
		         text, v->unresolved));
		return;
	}
	rd->out->trainer_fsdp_given = true;
	rd->out->trainer_fsdp = text;
	rd->out->trainer_fsdp_loc = v ? v->loc : w->loc;
}

/* The training script's own arguments (HF TrainingArguments and the recipes' runners). */
static int script_args(struct reader *rd, const struct word *words, size_t n, size_t j)
{
	struct dtl_launch *out = rd->out;
	struct word scratch;
	const struct word *v;
	bool positional = false;
	int r = 0;

	for (; j < n && r == 0; j++) {
		const struct word *w = &words[j];
		if ((r = unmodelled_flag(rd, words, n, &j)) != 0) {
			r = r < 0 ? r : 0;
			continue;
		}
		if ((v = value_of(words, n, &j, "--deepspeed_config", &scratch)) ||
		    ((v = value_of(words, n, &j, "--deepspeed", &scratch)) && v->text[0] != '-'))
			r = file_arg(rd, v, "--deepspeed", &out->deepspeed_file,
			             &out->deepspeed_loc);
		else if (v) /* DeepSpeed-Chat's bare --deepspeed: the next word is a flag */
			j--;
		else if ((v = value_of(words, n, &j, "--fsdp_config", &scratch)))
			r = file_arg(rd, v, "--fsdp_config", &out->trainer_fsdp_config,
			             &out->trainer_fsdp_config_loc);
		else if (is(w, "--fsdp") || strncmp(w->text, "--fsdp=", 7) == 0)
			fsdp_arg(rd, words, n, &j);
		else if ((v = value_of(words, n, &j, "--config", &scratch)))
			r = file_arg(rd, v, "--config", &out->trainer_args_file,
			             &out->trainer_args_loc);
		else if (flag_on(words, n, &j, "--bf16")) {
			out->precision = DTL_PRECISION_BF16;
			out->precision_loc = w->loc;
		} else if (flag_on(words, n, &j, "--fp16")) {
			out->precision = DTL_PRECISION_FP16;
			out->precision_loc = w->loc;
		} else if (is(w, "--zero_stage") || is(w, "--dtype") || is(w, "--lora_dim") ||
		           is(w, "--offload")) {
			warn(rd, w->loc,
			     dtl_arena_sprintf(rd->lx.arena,
			                       "'%s' is the training script's own argument "
			                       "(DeepSpeed-Chat, OpenRLHF): not read",
			                       w->text));
		} else if (!positional && w->text[0] != '-' &&
		           (ends(w, ".yaml") || ends(w, ".yml") || ends(w, ".json"))) {
			/* the runner's recipe (LLaMA-Factory's train.py, alignment-handbook) */
			positional = true;
			r = file_arg(rd, w, "the recipe", &out->trainer_args_file,
			             &out->trainer_args_loc);
		}
	}
	return r;
}

static void found(struct reader *rd, const char *launcher, const struct word *w)
{
	rd->launches++;
	if (rd->out->launcher)
		return;
	rd->out->launcher = launcher;
	rd->out->launcher_loc = w->loc;
}

/* accelerate launch [options] script [args] */
static int accelerate_launch(struct reader *rd, const struct word *words, size_t n, size_t j)
{
	static const char *const bools[] = {"--use_fsdp", "--use_deepspeed", "--multi_gpu", "--cpu",
	                                    "--debug",    "--no_python",     "--quiet",     "-q",
	                                    NULL};
	struct dtl_launch *out = rd->out;
	struct word scratch;
	const struct word *v;
	int r;

	for (; j < n; j++) {
		const struct word *w = &words[j];
		if (w->text[0] != '-')
			return script_args(rd, words, n, j + 1);
		if (is(w, "-m") || is(w, "--module"))
			return script_args(rd, words, n, j + 2);
		if ((v = value_of(words, n, &j, "--config_file", &scratch)) ||
		    (v = value_of(words, n, &j, "--config-file", &scratch))) {
			if ((r = file_arg(rd, v, "--config_file", &out->accelerate_file,
			                  &out->accelerate_loc)) < 0)
				return r;
		} else if ((v = value_of(words, n, &j, "--deepspeed_config_file", &scratch))) {
			if ((r = file_arg(rd, v, "--deepspeed_config_file", &out->deepspeed_file,
			                  &out->deepspeed_loc)) < 0)
				return r;
		} else if ((v = value_of(words, n, &j, "--mixed_precision", &scratch))) {
			set_precision(rd, v->text, v->loc);
		} else if ((v = value_of(words, n, &j, "--num_processes", &scratch))) {
			set_world(rd, v);
		} else if ((v = value_of(words, n, &j, "--fsdp_version", &scratch))) {
			if (strcmp(v->text, "2") == 0) {
				out->strategy = DTL_STRATEGY_FSDP2;
				out->strategy_loc = v->loc;
			}
		} else if (is(w, "--use_fsdp")) {
			if (out->strategy != DTL_STRATEGY_FSDP2)
				out->strategy = DTL_STRATEGY_FSDP1;
			out->strategy_loc = w->loc;
		} else {
			bool flag = strchr(w->text, '=') != NULL;
			for (const char *const *b = bools; *b && !flag; b++)
				flag = is(w, *b);
			if (!flag && j + 1 < n && words[j + 1].text[0] != '-')
				j++; /* an option with a value dtypelint does not need */
		}
	}
	return 0;
}

/* A program to run whose arguments dtypelint does not read: said, and none of its arguments
 * taken (half a set-up read would lint as a whole one). True when so. */
static bool program_not_read(struct reader *rd, const struct word *m)
{
	struct dtl_arena *arena = rd->lx.arena;

	if (m->unresolved) {
		const char *what =
		    strcmp(m->text, m->unresolved) == 0
		        ? dtl_arena_sprintf(arena, "is %s", m->unresolved)
		        : dtl_arena_sprintf(arena, "'%s' is built on %s", m->text, m->unresolved);
		warn(rd, m->loc,
		     what ? dtl_arena_sprintf(arena,
		                              "the program to run %s, which the script does not "
		                              "set as NAME=value (a heredoc taken by 'read', a "
		                              "function or the environment): its arguments are "
		                              "not read",
		                              what)
		          : NULL);
		return true;
	}
	if (strncmp(m->text, "openrlhf.", 9) != 0)
		return false;
	warn(rd, m->loc,
	     dtl_arena_sprintf(arena,
	                       "'%s' is an OpenRLHF program dtypelint does not read (it reads "
	                       "openrlhf.cli.train_sft, train_dpo, train_rm and train_ppo_ray, as "
	                       "of v0.11.0)",
	                       m->text));
	return true;
}

/* OpenRLHF before its arguments were grouped (--zero_stage): v0.11.0's argparse refuses them */
static int openrlhf_old(struct reader *rd, const struct word *w)
{
	static const char *const renamed[][2] = {
	    {"--zero_stage", "--ds.zero_stage"},
	    {"--bf16", "--ds.param_dtype bf16"},
	    {"--param_dtype", "--ds.param_dtype"},
	    {"--adam_offload", "--ds.adam_offload"},
	    {"--load_in_4bit", "--ds.load_in_4bit"},
	    {"--lora_rank", "--ds.lora.rank"},
	    {"--lora_alpha", "--ds.lora.alpha"},
	    {"--target_modules", "--ds.lora.target_modules"},
	    {"--flash_attn", "--ds.attn_implementation"},
	    {"--packing_samples", "--ds.packing_samples"},
	    {"--vllm_num_engines", "--vllm.num_engines"},
	    {"--ref_reward_offload", "--ref.offload"},
	    {"--gradient_checkpointing", "--model.gradient_checkpointing_enable"},
	};
	size_t len = strcspn(w->text, "=");

	for (size_t k = 0; k < sizeof(renamed) / sizeof(renamed[0]); k++)
		if (strlen(renamed[k][0]) == len && strncmp(w->text, renamed[k][0], len) == 0)
			return dtl_error_set(rd->error, w->loc, -EINVAL,
			                     "OpenRLHF v0.11.0 refuses this: 'error: unrecognized "
			                     "arguments: %s' (it is %s there; dtypelint reads "
			                     "v0.11.0's arguments)",
			                     renamed[k][0], renamed[k][1]);
	return 0;
}

/* text inside YAML single quotes: each ' doubled */
static const char *single_quoted_yaml(struct dtl_arena *arena, const char *text)
{
	size_t n = strlen(text), quotes = 0;
	for (size_t i = 0; i < n; i++)
		quotes += text[i] == '\'';
	char *out = dtl_arena_alloc(arena, n + quotes + 1), *p = out;
	for (size_t i = 0; out && i <= n; i++) {
		if (text[i] == '\'')
			*p++ = '\'';
		*p++ = text[i];
	}
	return out;
}

/* --key v ... : "key=v" for one value, "key=true" for none, "key=['a', 'b']" for several */
static const char *openrlhf_value(struct dtl_arena *arena, const char *key,
                                  const struct word *values, size_t n)
{
	if (n == 0) /* a flag; --ds.lora.target_modules (nargs="*") alone is an empty list */
		return dtl_arena_sprintf(arena, "%s=%s", key,
		                         strcmp(key, "ds.lora.target_modules") == 0 ? "[]"
		                                                                    : "true");
	if (n == 1)
		return dtl_arena_sprintf(arena, "%s=%s", key, values[0].text);
	const char *text = dtl_arena_sprintf(arena, "%s=[", key);
	for (size_t i = 0; text && i < n; i++) {
		const char *q = single_quoted_yaml(arena, values[i].text);
		text = q ? dtl_arena_sprintf(arena, "%s%s'%s'", text, i ? ", " : "", q) : NULL;
	}
	return text ? dtl_arena_sprintf(arena, "%s]", text) : NULL;
}

/* An argument the framework's importer does not read: handed on by its key alone, so that
 * --show-plan lists it as not read */
static int not_read_arg(struct reader *rd, const char *key, struct dtl_loc loc)
{
	struct dtl_framework_override *o =
	    dtl_vec_push(&rd->out->framework_overrides, rd->lx.arena, sizeof(*o));
	if (!o)
		return -ENOMEM;
	*o = (struct dtl_framework_override){.text = key, .loc = loc, .not_read = true};
	return 0;
}

/* One --key [values...] of a framework's program (OpenRLHF, DeepSpeed-Chat: fw its importer's
 * id, name its name in messages): an override when its importer reads the key */
static int framework_arg(struct reader *rd, const char *fw, const char *name,
                         const struct word *words, size_t n, size_t *j)
{
	struct dtl_arena *arena = rd->lx.arena;
	const struct word *w = &words[*j];
	size_t klen = strcspn(w->text + 2, "="), count = 0;
	const char *key = dtl_arena_strndup(arena, w->text + 2, klen);
	const struct word *values = &words[*j + 1];
	struct word eq;
	int r;

	if (!key)
		return -ENOMEM;
	if (strcmp(fw, "openrlhf") == 0 && (r = openrlhf_old(rd, w)) < 0)
		return r;
	if (w->text[2 + klen] == '=') {
		eq = *w;
		eq.text = w->text + 3 + klen;
		eq.len = strlen(eq.text);
		values = &eq;
		count = 1;
	} else {
		while (*j + 1 < n && strncmp(words[*j + 1].text, "--", 2) != 0)
			++*j, count++;
	}
	if (!dtl_framework_reads(fw, key))
		return not_read_arg(rd, key, w->loc);
	for (size_t i = 0; i < count; i++)
		if (values[i].unresolved) {
			warn(rd, values[i].loc,
			     dtl_arena_sprintf(
			         arena,
			         "'--%s' is set from %s, which %s: not read, %s's default is taken",
			         key, values[i].unresolved, which(arena, &values[i]), name));
			return 0;
		}
	struct dtl_framework_override *o =
	    dtl_vec_push(&rd->out->framework_overrides, arena, sizeof(*o));
	if (!o || !(o->text = openrlhf_value(arena, key, values, count)))
		return -ENOMEM;
	o->loc = w->loc;
	o->value_loc = count ? values[0].loc : w->loc;
	return 0;
}

/* openrlhf.cli.train_sft / train_dpo / train_rm / train_ppo_ray and its arguments (m: the
 * module's word); another OpenRLHF program is said, not read */
static int openrlhf_main(struct reader *rd, const struct word *words, size_t n, size_t m)
{
	static const char *const programs[] = {"train_sft", "train_dpo", "train_rm",
	                                       "train_ppo_ray", NULL};
	const struct word *w = &words[m];
	const char *cli = NULL;
	int r;

	for (const char *const *p = programs; *p && !cli; p++)
		if (strcmp(w->text + strlen("openrlhf.cli."), *p) == 0 &&
		    strncmp(w->text, "openrlhf.cli.", 13) == 0)
			cli = *p;
	if (!cli) {
		program_not_read(rd, w);
		return 0;
	}
	rd->out->framework = "openrlhf";
	rd->out->framework_loc = w->loc;
	struct dtl_framework_override *o =
	    dtl_vec_push(&rd->out->framework_overrides, rd->lx.arena, sizeof(*o));
	if (!o || !(o->text = dtl_arena_sprintf(rd->lx.arena, "cli=%s", cli)))
		return -ENOMEM;
	o->loc = o->value_loc = w->loc;
	for (size_t j = m + 1; j < n; j++) {
		if (strncmp(words[j].text, "--", 2) == 0) {
			if ((r = framework_arg(rd, "openrlhf", "OpenRLHF", words, n, &j)) < 0)
				return r;
		} else if (words[j].unresolved) {
			warn(rd, words[j].loc,
			     dtl_arena_sprintf(rd->lx.arena,
			                       "'%s': more arguments from whoever runs the script, "
			                       "not known here: not read",
			                       words[j].unresolved));
		}
	}
	return 0;
}

/* DeepSpeed-Chat's training/stepN/main.py, known by its arguments: main.py with one that only
 * its parse_args defines. The step: "step3" (--actor_model_name_or_path), "step2" (the reward
 * model's --num_padding_at_beginning), "step2_dpo" (--beta, --label_smoothing, or a script in
 * its step2_dpo_finetuning folder: its scripts pass step1's arguments), "step1"; NULL when not
 * DeepSpeed-Chat's. */
static const char *dschat_step(const struct word *words, size_t n, size_t m, const char *script)
{
	static const char *const own[] = {"--zero_stage",
	                                  "--actor_zero_stage",
	                                  "--lora_dim",
	                                  "--actor_lora_dim",
	                                  "--lora_module_name",
	                                  "--only_optimize_lora",
	                                  "--enable_hybrid_engine",
	                                  "--enable_mixed_precision_lora",
	                                  "--offload_reference_model",
	                                  "--compute_fp32_loss",
	                                  NULL};
	const char *step = NULL, *b = base(&words[m]);
	bool actor = false, padding = false, dpo = strstr(script, "step2_dpo") != NULL;

	if (strcmp(b, "main.py") != 0 || words[m].unresolved)
		return NULL;
	for (size_t j = m + 1; j < n; j++) {
		size_t len = strcspn(words[j].text, "=");
		for (const char *const *k = own; *k && !step; k++)
			if (strlen(*k) == len && strncmp(words[j].text, *k, len) == 0)
				step = "step1";
		actor |= strncmp(words[j].text, "--actor_model_name_or_path", len) == 0 &&
		         len == strlen("--actor_model_name_or_path");
		padding |= strncmp(words[j].text, "--num_padding_at_beginning", len) == 0 &&
		           len == strlen("--num_padding_at_beginning");
		dpo |= (len == 6 && strncmp(words[j].text, "--beta", len) == 0) ||
		       (len == 17 && strncmp(words[j].text, "--label_smoothing", len) == 0);
	}
	if (!step)
		return NULL;
	return actor ? "step3" : padding ? "step2" : dpo ? "step2_dpo" : "step1";
}

/* deepspeed main.py --zero_stage 3 --dtype bf16 ...: DeepSpeed-Chat's arguments, handed to its
 * importer (m: the program's word) */
static int dschat_main(struct reader *rd, const struct word *words, size_t n, size_t m,
                       const char *step)
{
	struct dtl_framework_override *o =
	    dtl_vec_push(&rd->out->framework_overrides, rd->lx.arena, sizeof(*o));
	int r;

	rd->out->framework = "deepspeed-chat";
	rd->out->framework_loc = words[m].loc;
	if (!o || !(o->text = dtl_arena_sprintf(rd->lx.arena, "cli=%s", step)))
		return -ENOMEM;
	o->loc = o->value_loc = words[m].loc;
	for (size_t j = m + 1; j < n; j++) {
		if (strncmp(words[j].text, "--", 2) == 0) {
			if ((r = framework_arg(rd, "deepspeed-chat", "DeepSpeed-Chat", words, n,
			                       &j)) < 0)
				return r;
		} else if (words[j].unresolved) {
			warn(rd, words[j].loc,
			     dtl_arena_sprintf(rd->lx.arena,
			                       "'%s': more arguments from whoever runs the script, "
			                       "not known here: not read",
			                       words[j].unresolved));
		}
	}
	return 0;
}

/* the training script's arguments: DeepSpeed-Chat's own, else HF-style ones (m: the script) */
static int program_args(struct reader *rd, const struct word *words, size_t n, size_t m)
{
	const char *step = dschat_step(words, n, m, rd->path);
	return step ? dschat_main(rd, words, n, m, step) : script_args(rd, words, n, m + 1);
}

/* deepspeed / torchrun [options] script [args] */
static int distributed_launch(struct reader *rd, const struct word *words, size_t n, size_t j)
{
	static const char *const bools[] = {"--standalone",    "--no_python",  "--no-python",
	                                    "--no_local_rank", "--autotuning", NULL};
	struct word scratch;
	const struct word *v;
	int64_t nodes = 1;

	for (; j < n; j++) {
		const struct word *w = &words[j];
		if (w->text[0] != '-')
			break;
		if (is(w, "-m") || is(w, "--module")) {
			j++;
			break;
		}
		if ((v = value_of(words, n, &j, "--num_gpus", &scratch)) ||
		    (v = value_of(words, n, &j, "--nproc_per_node", &scratch)) ||
		    (v = value_of(words, n, &j, "--nproc-per-node", &scratch))) {
			set_world(rd, v);
		} else if ((v = value_of(words, n, &j, "--num_nodes", &scratch)) ||
		           (v = value_of(words, n, &j, "--nnodes", &scratch))) {
			nodes = strtol(v->text, NULL, 10);
		} else {
			bool flag = strchr(w->text, '=') != NULL;
			for (const char *const *b = bools; *b && !flag; b++)
				flag = is(w, *b);
			if (!flag && j + 1 < n && words[j + 1].text[0] != '-')
				j++;
		}
	}
	if (nodes > 1 && nodes < 1 << 20 && rd->out->world_size)
		rd->out->world_size *= nodes;
	if (j < n && strncmp(words[j].text, "openrlhf.", 9) == 0 && !words[j].unresolved)
		return openrlhf_main(rd, words, n, j);
	if (j < n && program_not_read(rd, &words[j]))
		return 0;
	return j < n ? program_args(rd, words, n, j) : 0;
}

/* One key=value word of main_ppo's Hydra command line, kept at its place. A value built on a
 * variable the script does not set is not guessed: said when verl's importer reads the key. */
static int verl_override(struct reader *rd, const struct word *w)
{
	struct dtl_arena *arena = rd->lx.arena;
	const char *key = w->text + strspn(w->text, "+~");
	size_t klen = strcspn(key, "=");
	const char *k = dtl_arena_strndup(arena, key, klen);

	if (!k)
		return -ENOMEM;
	if (w->unresolved) {
		if (dtl_framework_reads("verl", k))
			warn(rd, w->loc,
			     dtl_arena_sprintf(
			         arena,
			         "'%s' is set from %s, which %s: not read, verl's default is taken",
			         k, w->unresolved, which(arena, w)));
		else
			return not_read_arg(rd, k, w->loc);
		return 0;
	}
	struct dtl_framework_override *o =
	    dtl_vec_push(&rd->out->framework_overrides, arena, sizeof(*o));
	if (!o)
		return -ENOMEM;
	*o = (struct dtl_framework_override){.text = w->text, .loc = w->loc};
	return 0;
}

/* --config-path / --config-name: Hydra takes a relative config path from main_ppo.py's folder
 * (verl's packaged configs), an absolute one from the disk */
static int verl_config(struct reader *rd, const struct word *path, const struct word *name)
{
	struct dtl_arena *arena = rd->lx.arena;
	struct dtl_launch *out = rd->out;

	if (!name)
		return 0;
	size_t n = name->len;
	if (n > 5 && strcmp(name->text + n - 5, ".yaml") == 0)
		n -= 5;
	if (path && !path->unresolved && path->text[0] == '/') {
		const char *file =
		    dtl_arena_sprintf(arena, "%s/%.*s.yaml", path->text, (int)n, name->text);
		struct word w = *name;
		if (!file)
			return -ENOMEM;
		w.text = (char *)file;
		w.len = strlen(file);
		return file_arg(rd, &w, "--config-name", &out->framework_file,
		                &out->framework_file_loc);
	}
	if (n == strlen("ppo_trainer") && strncmp(name->text, "ppo_trainer", n) == 0)
		return 0;
	if (n == strlen("ppo_megatron_trainer") &&
	    strncmp(name->text, "ppo_megatron_trainer", n) == 0) {
		/* the packaged Megatron config: its actor strategy is megatron */
		struct dtl_framework_override *o =
		    dtl_vec_push(&out->framework_overrides, arena, sizeof(*o));
		if (!o)
			return -ENOMEM;
		*o = (struct dtl_framework_override){.text = "actor_rollout_ref.actor.strategy="
		                                             "megatron",
		                                     .loc = name->loc,
		                                     .value_loc = name->loc};
		return 0;
	}
	warn(rd, name->loc,
	     dtl_arena_sprintf(arena,
	                       "verl's config '%s' (a relative --config-path is verl's own "
	                       "folder, or a path the script does not set) is not read: "
	                       "ppo_trainer.yaml's defaults are taken",
	                       name->text));
	return 0;
}

/* python -m verl.trainer.main_ppo [--config-path P] [--config-name N] key=value ... */
static int verl_main(struct reader *rd, const struct word *words, size_t n, size_t j)
{
	struct word scratch, path_w, name_w;
	const struct word *v, *path = NULL, *name = NULL;
	int r;

	rd->out->framework = "verl";
	rd->out->framework_loc = words[j - 1].loc;
	for (; j < n; j++) {
		const struct word *w = &words[j];
		if ((v = value_of(words, n, &j, "--config-path", &scratch)) ||
		    (v = value_of(words, n, &j, "-cp", &scratch))) {
			path_w = *v;
			path = &path_w;
		} else if ((v = value_of(words, n, &j, "--config-name", &scratch)) ||
		           (v = value_of(words, n, &j, "-cn", &scratch))) {
			name_w = *v;
			name = &name_w;
		} else if (strchr(w->text, '=') || w->text[0] == '~') {
			if ((r = verl_override(rd, w)) < 0)
				return r;
		} else if (w->unresolved) {
			warn(rd, w->loc,
			     dtl_arena_sprintf(rd->lx.arena,
			                       "'%s': more overrides from whoever runs the script, "
			                       "not known here: not read",
			                       w->unresolved));
		}
	}
	return verl_config(rd, path, name);
}

/* python [-m module | script.py] args */
static int python(struct reader *rd, const struct word *words, size_t n, size_t j)
{
	if (j + 1 < n && is(&words[j], "-m")) {
		const struct word *m = &words[j + 1];
		if (is(m, "torch.distributed.run") || is(m, "torch.distributed.launch")) {
			found(rd, "torchrun", &words[0]);
			return distributed_launch(rd, words, n, j + 2);
		}
		if (is(m, "accelerate.commands.launch")) {
			found(rd, "accelerate launch", &words[0]);
			return accelerate_launch(rd, words, n, j + 2);
		}
		if (is(m, "verl.trainer.main_ppo")) {
			found(rd, "python -m verl.trainer.main_ppo", m);
			return verl_main(rd, words, n, j + 2);
		}
		if (strncmp(m->text, "openrlhf.", 9) == 0) {
			found(rd, m->text, m);
			return openrlhf_main(rd, words, n, j + 1);
		}
		if (strncmp(m->text, "verl.", 5) == 0) {
			found(rd, m->text, m);
			warn(rd, m->loc,
			     dtl_arena_sprintf(rd->lx.arena,
			                       "'%s' builds its set-up from its own arguments "
			                       "and config: not read yet",
			                       m->text));
			return 0;
		}
		if (is(m, "axolotl.cli.train") && j + 2 < n) {
			found(rd, "axolotl train", &words[0]);
			return file_arg(rd, &words[j + 2], "the recipe",
			                &rd->out->trainer_args_file, &rd->out->trainer_args_loc);
		}
		return 0; /* python -m venv, pip, ...: no training launch */
	}
	if (j < n && ends(&words[j], ".py")) {
		found(rd, "python", &words[0]);
		return program_args(rd, words, n, j);
	}
	return 0;
}

/* One command's words from j: assignments, wrappers, then a launcher. */
static int launch_command(struct reader *rd, struct word *words, size_t n, size_t j)
{
	size_t len, k = j;
	int r;

	while (k < n && assignment(&words[k]))
		k++;
	while (j < n && (len = assignment(&words[j])))
		if ((r = set_variable(rd, &words[j++], len, k == n, false)) < 0)
			return r;
	if (j < n && is(&words[j], "read"))
		return read_heredoc(rd, &words[n - 1]);
	if (j < n && (is(&words[j], "export") || is(&words[j], "local") ||
	              is(&words[j], "declare") || is(&words[j], "typeset"))) {
		/* local (declare, typeset) in a function: the call's own, gone after it */
		bool local = !is(&words[j], "export") && rd->lx.call;
		for (j++; j < n; j++)
			if ((len = assignment(&words[j])) &&
			    (r = set_variable(rd, &words[j], len, true, local)) < 0)
				return r;
		return 0;
	}
	while (j < n && (is(&words[j], "nohup") || is(&words[j], "env") || is(&words[j], "time") ||
	                 is(&words[j], "exec") || assignment(&words[j])))
		environment(rd, &words[j], assignment(&words[j])), j++;
	if (j >= n)
		return 0;
	const struct word *w = &words[j];
	const char *b = base(w);
	if (strcmp(b, "accelerate") == 0 && j + 1 < n && is(&words[j + 1], "launch")) {
		found(rd, "accelerate launch", w);
		return accelerate_launch(rd, words, n, j + 2);
	}
	if (strcmp(b, "deepspeed") == 0 || strcmp(b, "torchrun") == 0) {
		found(rd, strcmp(b, "deepspeed") == 0 ? "deepspeed" : "torchrun", w);
		return distributed_launch(rd, words, n, j + 1);
	}
	if ((strcmp(b, "llamafactory-cli") == 0 || strcmp(b, "axolotl") == 0) && j + 2 < n &&
	    is(&words[j + 1], "train")) {
		found(rd, strcmp(b, "axolotl") == 0 ? "axolotl train" : "llamafactory-cli train",
		      w);
		return file_arg(rd, &words[j + 2], "the recipe", &rd->out->trainer_args_file,
		                &rd->out->trainer_args_loc);
	}
	if (strcmp(b, "tune") == 0 && j + 1 < n && is(&words[j + 1], "run")) {
		found(rd, "tune run", w);
		warn(rd, w->loc, "'tune run' runs a torchtune recipe: its config is not read yet");
		return 0;
	}
	if (strncmp(b, "python", 6) == 0)
		return python(rd, words, n, j + 1);
	return 0;
}

/* Control flow. The script is never run, so no branch is taken: an if, case, loop body,
 * function or a command after && / || opens a branch (an id), and a variable set in one holds
 * only inside it; read anywhere else it is named, as one the script does not set. The one
 * exception is the default idiom `if [ -z "$X" ]; then X=v; fi` (or "$X" == ""), which is
 * ${X:-v}: X is the script's own default after it, as ${X:-v} is taken. Launch lines inside
 * a branch or loop are read as any other. A function's definition is not run: its body is
 * read at each call (call_function), as bash runs it, its $1... the call's words; a ( )
 * subshell's assignments end with it (subshells). */

static struct frame *push_frame(struct lexer *lx, enum frame_kind kind, struct dtl_loc at)
{
	if (lx->depth == FRAMES_MAX) {
		lx->lost++;
		return NULL;
	}
	struct frame *f = &lx->frames[lx->depth++];
	*f = (struct frame){.kind = kind, .at = at};
	return f;
}

/* the innermost open frame of kind (or of kind2), NULL when none */
static struct frame *innermost(struct lexer *lx, enum frame_kind kind, enum frame_kind kind2)
{
	for (size_t k = lx->depth; k-- > 0;)
		if (lx->frames[k].kind == kind || lx->frames[k].kind == kind2)
			return &lx->frames[k];
	return NULL;
}

/* fi, esac, done, }: the innermost frame of that kind closes (with any left open inside it);
 * its slot stays readable until the next push */
static struct frame *pop_frame(struct lexer *lx, enum frame_kind kind, enum frame_kind kind2)
{
	if (lx->lost) {
		lx->lost--;
		return NULL;
	}
	struct frame *f = innermost(lx, kind, kind2);
	if (f)
		lx->depth = (size_t)(f - lx->frames);
	return f;
}

static void open_branch(struct lexer *lx, struct frame *f)
{
	if (f)
		f->branch = ++lx->next_branch;
}

/* "$X", $X, "${X}" or ${X} as written: X's name (length in *ret_len), else NULL */
static const char *variable_ref(const struct lexer *lx, const struct word *w, size_t *ret_len)
{
	const char *p = lx->src->data + w->start, *end = lx->src->data + w->end;
	bool quoted = end - p >= 2 && *p == '"' && end[-1] == '"';
	p += quoted, end -= quoted;
	if (end - p < 2 || *p++ != '$')
		return NULL;
	bool brace = *p == '{';
	p += brace;
	if (brace && (end - p < 1 || *--end != '}'))
		return NULL;
	const char *name = p;
	while (p < end && name_char(*p, p == name))
		p++;
	*ret_len = (size_t)(p - name);
	return p == end && p > name ? name : NULL;
}

/* `if [ -z "$X" ]`, `if [ "$X" == "" ]` (=, [[ ]], test) with X unset so far: the frame
 * remembers X, a default for it if the then branch is all there is */
static void empty_test(struct lexer *lx, struct frame *f, const struct word *w, size_t n)
{
	const char *name = NULL;
	size_t len = 0;

	if (!f || n < 3 || !(is(&w[0], "[") || is(&w[0], "[[") || is(&w[0], "test")))
		return;
	if (is(&w[1], "-z"))
		name = variable_ref(lx, &w[2], &len);
	else if (n >= 4 && (is(&w[2], "=") || is(&w[2], "==")) && w[3].len == 0 &&
	         w[3].end - w[3].start == 2)
		name = variable_ref(lx, &w[1], &len);
	if (name && !find_var(lx, name, len)) {
		f->empty = name;
		f->empty_len = len;
	}
}

/* fi: an if that gave an unset X its default (no elif, no else) makes X's value hold after */
static void end_if(struct lexer *lx)
{
	struct frame *f = pop_frame(lx, FRAME_IF, FRAME_IF);
	if (!f || !f->empty || f->other_branch || !f->branch)
		return;
	uint32_t branch = f->branch;
	const char *where;
	uint32_t outer = branch_here(lx, &where);
	for (size_t k = 0; k < lx->var_count; k++) {
		struct var *v = &lx->vars[k];
		if (v->branch == branch && strlen(v->name) == f->empty_len &&
		    memcmp(v->name, f->empty, f->empty_len) == 0) {
			v->branch = outer;
			v->where = where;
		}
	}
}

/* `for NAME in WORDS`: NAME is each word in turn; one word is its value */
static int for_variable(struct reader *rd, const struct word *w, size_t n)
{
	struct lexer *lx = &rd->lx;
	size_t words = n >= 2 && is(&w[1], "in") ? n - 2 : 0;

	if (n < 1 || lx->var_count == VARS_MAX)
		return 0;
	for (size_t k = 0; k < w[0].len; k++)
		if (!name_char(w[0].text[k], k == 0))
			return 0;
	struct var *v = &lx->vars[lx->var_count];
	*v = (struct var){.name = w[0].text, .set = w[0].loc, .each = words != 1};
	if (words == 1 && w[2].unresolved)
		return 0;
	v->value = words == 1 ? w[2].text : "";
	lx->var_count++;
	return 0;
}

/* case WORD in [PATTERN]: the next command is an item's pattern, unless on this line */
static void case_start(struct lexer *lx, const struct word *w, size_t n)
{
	struct frame *f = push_frame(lx, FRAME_CASE, w[0].loc);
	size_t k = 1;

	while (k < n && !is(&w[k], "in"))
		k++;
	if (!f)
		return;
	f->pattern = k + 1 >= n;
	if (!f->pattern)
		open_branch(lx, f);
}

/* The } that closes frame f: when f is a function's body, the function is defined (a second
 * definition of a name replaces the first, as in bash) */
static void define(struct lexer *lx, const struct frame *f, const struct word *close)
{
	struct func *fn = NULL;

	if (!f || f->kind != FRAME_FUNCTION || !f->fn_name || close->start < f->body_start)
		return;
	for (size_t k = 0; k < lx->func_count && !fn; k++)
		if (strcmp(lx->funcs[k].name, f->fn_name) == 0)
			fn = &lx->funcs[k];
	if (!fn && lx->func_count == FUNCS_MAX)
		return; /* its calls are read as commands that launch nothing */
	if (!fn)
		fn = &lx->funcs[lx->func_count++];
	*fn = (struct func){.name = f->fn_name,
	                    .start = f->body_start,
	                    .end = close->start,
	                    .line = f->at.line,
	                    .col = f->at.column + 1,
	                    .at = f->at};
}

/* One reserved word at words[*j] (then, fi, do, {, ...): taken, *j past it. Returns 1 when
 * the command is done with (a pattern, a for or case line), 0 to read on, -ENOMEM. */
static int reserved(struct reader *rd, struct word *words, size_t n, size_t *j, bool *fn)
{
	struct lexer *lx = &rd->lx;
	const struct word *w = &words[*j];
	struct frame *f;

	if (is(w, "then")) {
		open_branch(lx, innermost(lx, FRAME_IF, FRAME_IF));
	} else if (is(w, "do")) {
		open_branch(lx, innermost(lx, FRAME_LOOP, FRAME_LOOP));
	} else if (is(w, "else") || is(w, "elif")) {
		if ((f = innermost(lx, FRAME_IF, FRAME_IF))) {
			f->other_branch = true;
			f->branch = 0;
			if (is(w, "else"))
				open_branch(lx, f);
		}
	} else if (is(w, "fi")) {
		end_if(lx);
	} else if (is(w, "done")) {
		pop_frame(lx, FRAME_LOOP, FRAME_LOOP);
	} else if (is(w, "esac")) {
		pop_frame(lx, FRAME_CASE, FRAME_CASE);
	} else if (is(w, "}")) {
		define(lx, pop_frame(lx, FRAME_FUNCTION, FRAME_GROUP), w);
	} else if (is(w, "{")) {
		f = push_frame(lx, *fn ? FRAME_FUNCTION : FRAME_GROUP, w->loc);
		if (*fn && f) {
			open_branch(lx, f);
			f->fn_name = lx->fn_name;
			f->body_start = w->end;
		}
		*fn = false;
	} else if (is(w, "if")) {
		f = push_frame(lx, FRAME_IF, w->loc);
		empty_test(lx, f, w + 1, n - *j - 1);
	} else if (is(w, "while") || is(w, "until")) {
		push_frame(lx, FRAME_LOOP, w->loc);
	} else if (is(w, "for") || is(w, "select")) {
		push_frame(lx, FRAME_LOOP, w->loc);
		return *j + 1 < n && for_variable(rd, w + 1, n - *j - 1) < 0 ? -ENOMEM : 1;
	} else if (is(w, "case")) {
		case_start(lx, w, n - *j);
		return 1;
	} else if (is(w, "function") && *j + 1 < n) {
		++*j; /* its name; its { on this line or the next */
		*fn = true;
		lx->fn_name = words[*j].text;
		rd->function_keyword = *j + 1 >= n;
	} else if (!is(w, "!")) {
		return 0;
	}
	++*j;
	return *j < n ? 2 : 1;
}

static int read_script(struct reader *rd);

/* whether the lexer is in a function's definition, which runs only when called */
static bool defining(const struct lexer *lx)
{
	for (size_t k = 0; k < lx->depth; k++)
		if (lx->frames[k].kind == FRAME_FUNCTION)
			return true;
	return false;
}

/* Where the lexer is in the script, kept across a function call */
struct place {
	size_t i, limit;
	uint32_t line, col;
	struct heredoc hd;
	size_t depth, lost;
	const struct call *call;
	bool chained, function;
	unsigned seps, opens, closes;
};

static struct func *function_named(struct lexer *lx, const struct word *w)
{
	for (size_t k = 0; k < lx->func_count && !w->unresolved; k++)
		if (strcmp(lx->funcs[k].name, w->text) == 0)
			return &lx->funcs[k];
	return NULL;
}

/* Why a call is not followed (NULL: it is): the function is being read already (it calls
 * itself, directly or through another), or the bodies read again would pass the budget
 * that keeps the worst case linear */
static const char *not_followed(struct lexer *lx, const struct func *fn)
{
	for (const struct call *c = lx->call; c; c = c->outer)
		if (c->fn == fn)
			return dtl_arena_sprintf(lx->arena,
			                         "function %s calls itself (defined at %u:%u): the "
			                         "call is not followed",
			                         fn->name, fn->at.line, fn->at.column);
	if (fn->end - fn->start + 1 <= SPLICE_MAX(lx) - lx->spliced)
		return NULL;
	if (lx->over_budget) /* said once */
		return "";
	lx->over_budget = true;
	return dtl_arena_sprintf(lx->arena,
	                         "the call of %s is not followed, nor any after it: dtypelint "
	                         "reads function bodies again up to 4 times the script's size "
	                         "and 64 KiB",
	                         fn->name);
}

/* A call of fn: its body read as bash runs it, $1... the call's words (args, argc). Its
 * assignments hold after it (bash's functions share the script's variables) unless made
 * with local; where the call may not run (after && or ||, in a branch) they are the
 * branch's. never: the script never calls fn; its body is read once, as where it may not
 * run, so that a launch line in it is still read, its arguments named. */
static int call_function(struct reader *rd, struct func *fn, const struct word *args, size_t argc,
                         struct dtl_loc at, bool never)
{
	struct lexer *lx = &rd->lx;
	const char *why = not_followed(lx, fn);
	struct call call = {
	    .fn = fn, .args = args, .argc = argc, .at = at, .never = never, .outer = lx->call};
	/* the script's place, frames and pending separators, as they are after the call */
	struct place saved = {.i = lx->i,
	                      .limit = lx->limit,
	                      .line = lx->line,
	                      .col = lx->col,
	                      .hd = lx->hd,
	                      .depth = lx->depth,
	                      .lost = lx->lost,
	                      .call = lx->call,
	                      .chained = lx->chained,
	                      .function = lx->function,
	                      .seps = lx->seps,
	                      .opens = lx->opens,
	                      .closes = lx->closes};
	struct frame *frames;
	int r;

	if (why) {
		warn(rd, at, *why ? why : NULL);
		return 0;
	}
	if (!(frames = malloc((lx->depth ? lx->depth : 1) * sizeof(*frames))))
		return -ENOMEM;
	memcpy(frames, lx->frames, lx->depth * sizeof(*frames));
	lx->spliced += fn->end - fn->start + 1;
	fn->called = true;
	struct frame *f = push_frame(lx, FRAME_CALL, at);
	if (f && (never || lx->chained))
		open_branch(lx, f);
	lx->i = fn->start;
	lx->limit = fn->end;
	lx->line = fn->line;
	lx->col = fn->col;
	lx->call = &call;
	lx->chained = lx->function = false;
	lx->seps = lx->opens = lx->closes = 0;
	lx->hd = (struct heredoc){0};
	r = read_script(rd);
	for (size_t k = 0; k < lx->var_count; k++)
		if (lx->vars[k].local == &call)
			lx->vars[k].name = ""; /* found no more */
	/* what the call set (variables, functions, branch ids, the budget) is kept */
	lx->i = saved.i, lx->limit = saved.limit, lx->line = saved.line, lx->col = saved.col;
	lx->depth = saved.depth, lx->lost = saved.lost, lx->call = saved.call;
	lx->chained = saved.chained, lx->function = saved.function, lx->seps = saved.seps;
	lx->opens = saved.opens, lx->closes = saved.closes, lx->hd = saved.hd;
	memcpy(lx->frames, frames, saved.depth * sizeof(*lx->frames));
	free(frames);
	return r;
}

/* One command: its reserved words, then its assignments and launcher. A launch command
 * besides one read already, where either may not run, is named and not merged into it. */
static int command(struct reader *rd, struct word *words, size_t n)
{
	struct lexer *lx = &rd->lx;
	struct frame *f = lx->depth ? &lx->frames[lx->depth - 1] : NULL;
	bool fn = lx->function;
	size_t j = 0;
	int r;

	lx->function = false;
	if (f && f->kind == FRAME_CASE && f->pattern && !is(&words[0], "esac")) {
		f->pattern = false; /* a pattern: the item's branch starts */
		open_branch(lx, f);
		return 0;
	}
	while ((r = reserved(rd, words, n, &j, &fn)) == 2)
		;
	if (r != 0)
		return r < 0 ? r : 0;
	if (defining(lx))
		return 0; /* a function's body is read at each of its calls */
	struct func *called = function_named(lx, &words[j]);
	if (called)
		return call_function(rd, called, words + j + 1, n - j - 1, words[j].loc, false);
	size_t before = rd->launches;
	struct dtl_launch kept = *rd->out;
	const char *first = rd->out->launcher;
	struct dtl_loc first_loc = rd->out->launcher_loc;
	if ((r = launch_command(rd, words, n, j)) < 0 || rd->launches == before)
		return r;
	if (rd->launches == 1) {
		rd->first_branch = conditional(lx);
		return 0;
	}
	if (!rd->first_branch && !conditional(lx))
		return 0;
	*rd->out = kept;
	warn(rd, words[j].loc,
	     dtl_arena_sprintf(lx->arena,
	                       "a second launch command, where one of the two may not run (a "
	                       "branch, loop or function): which runs depends on the run; "
	                       "dtypelint reads the first (%s at %u:%u), not this one",
	                       first, first_loc.line, first_loc.column));
	return 0;
}

/* What the separators after a command (of count words) say of the next: a case item ends at
 * ;;, a command after && or || may not run, NAME () is a function whose body follows. */
static void after_command(struct reader *rd, const struct word *words, size_t count)
{
	struct lexer *lx = &rd->lx;
	struct frame *f = lx->depth ? &lx->frames[lx->depth - 1] : NULL;

	if ((lx->seps & SEP_CASE_END) && f && f->kind == FRAME_CASE) {
		f->branch = 0;
		f->pattern = true;
	}
	if (count)
		lx->chained = (lx->seps & SEP_CHAIN) != 0;
	if (count == 1 && (lx->seps & SEP_PARENS)) {
		lx->function = true;
		lx->fn_name = words[0].text;
	}
	if (rd->function_keyword)
		lx->function = true;
	rd->function_keyword = false;
	lx->seps = 0;
}

static struct word *push_word(struct lexer *lx, struct dtl_vec *words)
{
	return words->count < WORDS_MAX ? dtl_vec_push(words, lx->arena, sizeof(struct word))
	                                : &((struct word *)words->items)[WORDS_MAX - 1];
}

/* An unquoted $NAME or ${NAME} that is a whole word, NAME a heredoc: its variable, the lexer
 * stepped past the reference; NULL otherwise (the lexer where it was). */
static const struct var *heredoc_ref(struct lexer *lx)
{
	if (lx->split || peek(lx, 0) != '$')
		return NULL;
	bool brace = peek(lx, 1) == '{';
	size_t name = 1 + brace, end = name;
	while (name_char(peek(lx, end), end == name))
		end++;
	const struct var *v = find_var(lx, lx->src->data + lx->i + name, end - name);
	if (end == name || (brace && peek(lx, end++) != '}') || !word_end(peek(lx, end)) || !v ||
	    !v->heredoc || v->each || (v->branch && !inside(lx, v->branch)) ||
	    v->body_end - v->body_start > SPLICE_MAX(lx) - lx->spliced)
		return NULL; /* past the budget: the value is one word, as in quotes */
	lx->spliced += v->body_end - v->body_start;
	while (end--)
		advance(lx);
	return v;
}

/* The shell splits an unquoted heredoc variable into words: they are read from the body, so
 * that each keeps its own line and column there. */
static int splice(struct lexer *lx, const struct var *v, struct dtl_vec *words)
{
	size_t i = lx->i, limit = lx->limit;
	uint32_t line = lx->line, col = lx->col;
	int r = 0;

	lx->i = v->body_start;
	lx->limit = v->body_end;
	lx->line = v->body_line;
	lx->col = 1;
	lx->split = true;
	while (r == 0) {
		skip_blanks(lx);
		if (at_end(lx))
			break;
		struct word *w = push_word(lx, words);
		if (!w) {
			r = -ENOMEM;
			break;
		}
		size_t before = lx->i;
		r = read_word(lx, w);
		if (lx->i == before)
			advance(lx);
	}
	lx->i = i;
	lx->limit = limit;
	lx->line = line;
	lx->col = col;
	lx->split = false;
	return r;
}

/* The ( and ) counted between the last command and the next: a ) closes the subshell the
 * lexer is in (a case pattern's is no subshell's), its variables and the launch settings its
 * exports made dropped when no launch command ran in it; a ( opens one (not where a case
 * pattern may start with it). */
static void subshells(struct reader *rd)
{
	struct lexer *lx = &rd->lx;
	struct dtl_launch *out = rd->out;

	for (; lx->closes; lx->closes--) {
		struct frame *f = lx->depth ? &lx->frames[lx->depth - 1] : NULL;
		if (!f || f->kind != FRAME_SUBSHELL)
			continue;
		lx->depth--;
		if (lx->var_count > f->vars)
			lx->var_count = f->vars;
		if (rd->launches != f->launches)
			continue;
		out->precision = f->precision, out->precision_loc = f->precision_loc;
		out->strategy = f->strategy, out->strategy_loc = f->strategy_loc;
	}
	struct frame *in = lx->depth ? &lx->frames[lx->depth - 1] : NULL;
	if (in && in->kind == FRAME_CASE && in->pattern)
		lx->opens = 0;
	for (; lx->opens; lx->opens--) {
		struct frame *f = push_frame(lx, FRAME_SUBSHELL, (struct dtl_loc){0});
		if (!f)
			continue;
		f->vars = lx->var_count;
		f->launches = rd->launches;
		f->precision = out->precision, f->precision_loc = out->precision_loc;
		f->strategy = out->strategy, f->strategy_loc = out->strategy_loc;
	}
}

/* "$@", $@, ${@}, "${@}" or $* as a whole word in a function being called: the lexer past
 * it, true; else false (the lexer where it was) */
static bool all_args_ref(struct lexer *lx)
{
	static const char *const forms[] = {"\"$@\"", "$@", "${@}", "\"${@}\"", "$*", "${*}"};

	if (!lx->call || lx->call->never || lx->split)
		return false;
	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		size_t n = strlen(forms[k]);
		if (n > lx->limit - lx->i || memcmp(lx->src->data + lx->i, forms[k], n) != 0 ||
		    !word_end(peek(lx, n)))
			continue;
		while (n--)
			advance(lx);
		return true;
	}
	return false;
}

/* The call's words, each as it is at the call (its text, place and what it leaves unset) */
static int splice_args(struct lexer *lx, struct dtl_vec *words)
{
	for (size_t k = 0; k < lx->call->argc; k++) {
		struct word *w = push_word(lx, words);
		if (!w)
			return -ENOMEM;
		*w = lx->call->args[k];
	}
	return 0;
}

static int read_script(struct reader *rd)
{
	struct lexer *lx = &rd->lx;
	struct dtl_vec words = {0};
	int r = 0;

	while (r == 0) {
		lx->command_start = words.count == 0;
		bool end = skip_blanks(lx);
		if (end && words.count)
			r = command(rd, words.items, words.count);
		if (end) {
			after_command(rd, words.items, words.count);
			subshells(rd);
			words.count = 0;
		}
		if (end)
			lx->hd.ready = false; /* a heredoc belongs to its own command */
		if (at_end(lx) || r < 0)
			break;
		if (end)
			continue;
		const struct var *hv = heredoc_ref(lx);
		if (hv) {
			r = splice(lx, hv, &words);
			continue;
		}
		if (all_args_ref(lx)) {
			r = splice_args(lx, &words);
			continue;
		}
		struct word *w = push_word(lx, &words);
		if (!w)
			return -ENOMEM;
		size_t before = lx->i;
		r = read_word(lx, w);
		if (lx->i == before) /* nothing a word takes: step over it */
			advance(lx);
	}
	return r;
}

/* The script in src, named src->path in the locations (no command found: an input error). */
static int read_source(struct dtl_source *src, struct dtl_arena *arena,
                       struct dtl_launch *ret_launch, struct dtl_error *error)
{
	struct dtl_launch out = {0};
	int r;

	struct reader *rd = calloc(1, sizeof(*rd));
	if (!rd || !(out.file = dtl_arena_strndup(arena, src->path, strlen(src->path)))) {
		free(rd);
		return -ENOMEM;
	}
	char *kept_path = src->path;
	src->path = (char *)out.file; /* locations outlive the source */
	rd->lx =
	    (struct lexer){.src = src, .limit = src->size, .line = 1, .col = 1, .arena = arena};
	rd->out = &out;
	rd->path = out.file;
	rd->error = error;
	r = read_script(rd);
	/* a function the script never calls: its body read once, where it may not run */
	for (size_t k = 0; r == 0 && k < rd->lx.func_count; k++)
		if (!rd->lx.funcs[k].called)
			r = call_function(rd, &rd->lx.funcs[k], NULL, 0, rd->lx.funcs[k].at, true);
	if (r == 0 && !out.launcher) {
		struct dtl_file_guess guess;
		dtl_file_kind_guess(src, &guess);
		r = dtl_error_set(error, (struct dtl_loc){.file = out.file, .line = 1, .column = 1},
		                  -EINVAL,
		                  "no launch command in this file (it looks like %s): dtypelint "
		                  "reads accelerate launch, deepspeed, torchrun, python -m "
		                  "torch.distributed.run, python SCRIPT.py, llamafactory-cli train "
		                  "and axolotl train",
		                  guess.kind->what);
	}
	src->path = kept_path;
	free(rd);
	if (r < 0)
		return r;
	*ret_launch = out;
	return 0;
}

int dtl_launch_read(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                    struct dtl_launch *ret_launch, struct dtl_error *error)
{
	struct dtl_source src;
	int r;

	if ((r = dtl_source_read(&src, path, limits, error)) < 0)
		return r;
	r = read_source(&src, arena, ret_launch, error);
	dtl_source_fini(&src);
	return r;
}

/* A word as the shell reads it back: as it is when it holds only characters the shell takes
 * literally (as Python's shlex.quote), else single-quoted with each ' as '\''. */
static char *put_quoted(char *p, const char *word)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                            "0123456789@%+=:,./-_";
	if (*word && strspn(word, plain) == strlen(word))
		return stpcpy(p, word);
	*p++ = '\'';
	for (; *word; word++)
		p = *word == '\'' ? stpcpy(p, "'\\''") : (*p = *word, p + 1);
	*p++ = '\'';
	return p;
}

int dtl_launch_read_argv(const char *const *argv, size_t argc, struct dtl_arena *arena,
                         const struct dtl_limits *limits, struct dtl_launch *ret_launch,
                         struct dtl_error *error)
{
	size_t size = 1;
	for (size_t i = 0; i < argc; i++)
		size += 4 * strlen(argv[i]) + 3;
	if (size > limits->max_file_size)
		return dtl_error_set(error, (struct dtl_loc){.file = DTL_LAUNCH_COMMAND_LINE},
		                     -EFBIG,
		                     "the command line is longer than max-file-size (%llu bytes)",
		                     (unsigned long long)limits->max_file_size);
	char *line = dtl_arena_alloc(arena, size), *p = line;
	if (!line)
		return -ENOMEM;
	for (size_t i = 0; i < argc; i++)
		p = put_quoted(i ? (*p++ = ' ', p) : p, argv[i]);
	*p++ = '\n';
	struct dtl_source src;
	int r = dtl_source_init_mem(&src, DTL_LAUNCH_COMMAND_LINE, line, (size_t)(p - line));
	if (r < 0)
		return r;
	r = read_source(&src, arena, ret_launch, error);
	dtl_source_fini(&src);
	return r;
}
