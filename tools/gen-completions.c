/* SPDX-License-Identifier: MIT */
/*
 * Build tool: writes a shell completion for dtypelint from its template (completions/NAME.in) and
 * the option table (src/cli/option-table.h) with the limits (src/cli/limit-options.c), so that
 * a new option row is completed in bash, zsh and fish with no edit of the completions.
 * Usage: dtl-gen-completions bash|zsh|fish TEMPLATE OUTPUT
 * The template's line "@OPTIONS@" becomes the options' part (bash: the case arms of
 * _dtypelint_reply and the option words; zsh: the _arguments specs; fish: the complete
 * commands); every other line is copied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { DTL_OPT_REPEAT = 1, DTL_OPT_FORM = 2 };

static const struct row {
	const char *name;
	char short_name;
	const char *arg;
	int flags;
	const char *complete;
	const char *summary;
} rows[] = {
#define DTL_OPTION_GROUP(GROUP, HEADING)
#define DTL_OPTION(ID, LONG, SHORT, ARG, GROUP, FLAGS, COMPLETE, SUMMARY, HELP)                    \
	{LONG, SHORT, ARG, FLAGS, COMPLETE, SUMMARY},
#include "option-table.h"
#undef DTL_OPTION
#undef DTL_OPTION_GROUP
};

#define ROWS (sizeof(rows) / sizeof(rows[0]))

/* The kinds of completion a row's COMPLETE names, in the order of bash's case arms. */
static const char *const kinds[] = {"file", "dir", "rules", "rule", "setup", ""};

/* bash: the action of a case arm */
static const char *bash_action(const char *kind)
{
	if (strcmp(kind, "file") == 0)
		return "COMPREPLY=($(compgen -f -- \"$cur\"))";
	if (strcmp(kind, "dir") == 0)
		return "COMPREPLY=($(compgen -d -- \"$cur\"))";
	if (strcmp(kind, "rules") == 0)
		return "_dtypelint_list \"ALL $(_dtypelint_rules)\"";
	if (strcmp(kind, "rule") == 0)
		return "COMPREPLY=($(compgen -W \"$(_dtypelint_rules)\" -- \"$cur\"))";
	if (strcmp(kind, "setup") == 0)
		return "COMPREPLY=($(compgen -W \"$(_dtypelint_setups)\" -- \"$cur\"))";
	return ":";
}

static void bash_names(FILE *out, const struct row *r, const char *sep)
{
	if (r->short_name)
		fprintf(out, "-%c%s", r->short_name, sep);
	fprintf(out, "--%s", r->name);
}

static void bash_arm(FILE *out, const char *kind)
{
	const char *sep = "\t";
	size_t n = 0;

	for (size_t i = 0; i < ROWS; i++)
		n += rows[i].arg && !(rows[i].flags & DTL_OPT_FORM) &&
		     strcmp(rows[i].complete, kind) == 0;
	if (!n && *kind)
		return; /* no option of this kind: no empty arm */

	for (size_t i = 0; i < ROWS; i++)
		if (rows[i].arg && !(rows[i].flags & DTL_OPT_FORM) &&
		    strcmp(rows[i].complete, kind) == 0) {
			fputs(sep, out);
			bash_names(out, &rows[i], " | ");
			sep = " | ";
		}
	if (!*kind)
		for (int i = 0; i < DTL_LIMIT_COUNT; i++)
			fprintf(out, " | --%s", dtl_cli_limit_name(i));
	fprintf(out, ")\n\t\t%s\n\t\treturn\n\t\t;;\n", bash_action(kind));
}

static void bash(FILE *out)
{
	fputs("\tcase $prev in\n", out);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		bash_arm(out, kinds[k]);
	for (size_t i = 0; i < ROWS; i++)
		if (rows[i].complete[0] == '=') {
			fputc('\t', out);
			bash_names(out, &rows[i], " | ");
			fputs(")\n", out);
			if (strchr(rows[i].complete, '=') != strrchr(rows[i].complete, '='))
				fputs("\t\tcompopt -o nospace 2>/dev/null\n", out); /* NAME=... */
			fprintf(out,
			        "\t\tCOMPREPLY=($(compgen -W \"%s\" -- "
			        "\"$cur\"))\n\t\treturn\n\t\t;;\n",
			        rows[i].complete + 1);
		}
	fputs("\tesac\n\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"", out);
	for (size_t i = 0; i < ROWS; i++)
		if (!(rows[i].flags & DTL_OPT_FORM)) {
			bash_names(out, &rows[i], " ");
			fputc(' ', out);
		}
	for (int i = 0; i < DTL_LIMIT_COUNT; i++)
		fprintf(out, "--%s ", dtl_cli_limit_name(i));
	fputs("\" -- \"$cur\"))\n\t\treturn\n\tfi\n", out);
}

/* zsh: what completes the argument, after "[summary]:message:" */
static const char *zsh_action(const char *kind)
{
	if (strcmp(kind, "file") == 0)
		return "_files";
	if (strcmp(kind, "dir") == 0)
		return "_files -/";
	if (strcmp(kind, "rules") == 0 || strcmp(kind, "rule") == 0)
		return "_dtypelint_rules";
	if (strcmp(kind, "setup") == 0)
		return "_dtypelint_setups";
	return "";
}

/* zsh: the argument's message, its name in lower case without characters _arguments reads */
static void zsh_message(FILE *out, const char *arg)
{
	for (; *arg; arg++)
		if ((*arg >= 'A' && *arg <= 'Z') || (*arg >= 'a' && *arg <= 'z') || *arg == '=')
			fputc(*arg >= 'A' && *arg <= 'Z' ? *arg - 'A' + 'a' : *arg, out);
}

static void zsh_row(FILE *out, const struct row *r)
{
	fputs("\t'", out);
	if (r->short_name)
		fprintf(out, "(-%c --%s)'{-%c%s,--%s%s}'", r->short_name, r->name, r->short_name,
		        r->arg ? "+" : "", r->name, r->arg ? "=" : "");
	else
		fprintf(out, "%s--%s%s", r->flags & DTL_OPT_REPEAT ? "*" : "", r->name,
		        r->arg ? "=" : "");
	fprintf(out, "[%s]", r->summary);
	if (r->arg) {
		fputc(':', out);
		zsh_message(out, r->arg);
		if (r->complete[0] == '=')
			fprintf(out, ":(%s)", r->complete + 1);
		else
			fprintf(out, ":%s", zsh_action(r->complete));
	}
	fputs("' \\\n", out);
}

static void zsh(FILE *out)
{
	for (size_t i = 0; i < ROWS; i++)
		if (!(rows[i].flags & DTL_OPT_FORM))
			zsh_row(out, &rows[i]);
	for (int i = 0; i < DTL_LIMIT_COUNT; i++)
		fprintf(out, "\t'--%s=[limit: %s]:n:' \\\n", dtl_cli_limit_name(i),
		        dtl_cli_limit_help(i));
}

static const char *fish_action(const char *kind)
{
	if (strcmp(kind, "file") == 0)
		return " -r -F";
	if (strcmp(kind, "dir") == 0)
		return " -x -a '(__fish_complete_directories)'";
	if (strcmp(kind, "rules") == 0)
		return " -x -a '(__dtypelint_rule_list)'";
	if (strcmp(kind, "rule") == 0)
		return " -x -a '(__dtypelint_rules)'";
	if (strcmp(kind, "setup") == 0)
		return " -x -a '(__dtypelint_setups)'";
	return " -x";
}

static void fish(FILE *out)
{
	for (size_t i = 0; i < ROWS; i++) {
		const struct row *r = &rows[i];
		if (r->flags & DTL_OPT_FORM)
			continue;
		fputs("complete -c dtypelint", out);
		if (r->short_name)
			fprintf(out, " -s %c", r->short_name);
		fprintf(out, " -l %s", r->name);
		if (r->arg && r->complete[0] == '=')
			fprintf(out, " -x -a '%s'", r->complete + 1);
		else if (r->arg)
			fputs(fish_action(r->complete), out);
		fprintf(out, " -d '%s'\n", r->summary);
	}
	for (int i = 0; i < DTL_LIMIT_COUNT; i++)
		fprintf(out, "complete -c dtypelint -l %s -x -d 'limit: %s'\n",
		        dtl_cli_limit_name(i), dtl_cli_limit_help(i));
}

/* A summary goes between single quotes (zsh, fish) and zsh's [ ]: none of those in it. */
static int check_rows(void)
{
	for (size_t i = 0; i < ROWS; i++)
		if (strpbrk(rows[i].summary, "'[]\\\n")) {
			fprintf(stderr,
			        "option-table.h: --%s: the summary may not hold ' [ ] or \\\n",
			        rows[i].name);
			return -1;
		}
	return 0;
}

static int copy(FILE *in, FILE *out, void (*options)(FILE *))
{
	char line[4096];

	while (fgets(line, sizeof(line), in))
		if (strcmp(line, "@OPTIONS@\n") == 0)
			options(out);
		else
			fputs(line, out);
	return ferror(in) || ferror(out) ? -1 : 0;
}

int main(int argc, char **argv)
{
	void (*options)(FILE *) = NULL;

	if (argc == 4 && strcmp(argv[1], "bash") == 0)
		options = bash;
	else if (argc == 4 && strcmp(argv[1], "zsh") == 0)
		options = zsh;
	else if (argc == 4 && strcmp(argv[1], "fish") == 0)
		options = fish;
	if (!options) {
		fprintf(stderr, "usage: dtl-gen-completions bash|zsh|fish TEMPLATE OUTPUT\n");
		return 2;
	}
	if (check_rows() < 0)
		return 1;
	FILE *in = fopen(argv[2], "r"), *out = fopen(argv[3], "w");
	if (!in || !out) {
		perror(in ? argv[3] : argv[2]);
		return 1;
	}
	int r = copy(in, out, options);
	fclose(in);
	if (fclose(out) != 0 || r < 0) {
		perror(argv[3]);
		return 1;
	}
	return 0;
}
