/* SPDX-License-Identifier: MIT */
/* Command-line parsing. Every option is documented in --help and dtypelint(1); a test checks
 * that the two name the same long options. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dtl-config.h"

static const char usage_head[] =
    "Usage: dtypelint [OPTIONS] INPUT...\n"
    "       dtypelint --scan-kernels DIR... [-f json]\n"
    "       dtypelint [OPTIONS] INPUT... --launch -- CMD...\n"
    "Predict dtype-contract failures of an FSDP1, FSDP2 or DeepSpeed ZeRO-3 training set-up\n"
    "from a model manifest (JSON or YAML) or a Hugging Face model folder, before any GPU\n"
    "time is spent.\n"
    "\n";

static const char usage_tail[] =
    "\n"
    "Exit status: 0 no finding at or above --fail-on; 1 findings at or above --fail-on;\n"
    "2 usage, configuration or input error (file:line:col: error: ...); 3 internal error.\n"
    "See dtypelint(1) and dtypelint-manifest(5).\n";

/* The table's rows (option-table.h), as --help and getopt_long read them. */
enum { DTL_OPT_REPEAT = 1, DTL_OPT_FORM = 2 };

#define DTL_OPTION_GROUP(GROUP, HEADING) GROUP_##GROUP,
#define DTL_OPTION(ID, LONG, SHORT, ARG, GROUP, FLAGS, COMPLETE, SUMMARY, HELP)
enum option_group {
#include "option-table.h"
	GROUP_COUNT
};
#undef DTL_OPTION
#undef DTL_OPTION_GROUP
#define DTL_OPTION_GROUP(GROUP, HEADING)

enum {
	OPT_FIRST = 255,
#define DTL_OPTION(ID, LONG, SHORT, ARG, GROUP, FLAGS, COMPLETE, SUMMARY, HELP) OPT_##ID,
#include "option-table.h"
#undef DTL_OPTION
	OPT_LIMIT, /* OPT_LIMIT + i: the limit i */
};

static const struct option_row {
	int id;
	const char *name;
	char short_name;
	const char *arg;
	enum option_group group;
	int flags;
	const char *help;
} option_rows[] = {
#define DTL_OPTION(ID, LONG, SHORT, ARG, GROUP, FLAGS, COMPLETE, SUMMARY, HELP)                    \
	{OPT_##ID, LONG, SHORT, ARG, GROUP_##GROUP, FLAGS, HELP},
#include "option-table.h"
#undef DTL_OPTION
};
#undef DTL_OPTION_GROUP

#define OPTION_ROWS (sizeof(option_rows) / sizeof(option_rows[0]))

static const char *const group_headings[GROUP_COUNT] = {
#define DTL_OPTION_GROUP(GROUP, HEADING) [GROUP_##GROUP] = HEADING,
#define DTL_OPTION(ID, LONG, SHORT, ARG, GROUP, FLAGS, COMPLETE, SUMMARY, HELP)
#include "option-table.h"
#undef DTL_OPTION
#undef DTL_OPTION_GROUP
};

/* "  -f, --format FMT      text..." : the label in 21 columns, or alone on its line when
 * longer; the help's other lines from column 25. */
static void print_row(FILE *out, const struct option_row *row)
{
	char label[64];
	const char *help = row->help;
	int n = 0;

	if (row->short_name)
		n = snprintf(label, sizeof(label), "-%c, ", row->short_name);
	snprintf(label + n, sizeof(label) - (size_t)n, "--%s%s%s", row->name, row->arg ? " " : "",
	         row->arg ? row->arg : "");
	if (strlen(label) > 21)
		fprintf(out, "  %s\n%24s", label, "");
	else
		fprintf(out, "  %-21s ", label);
	for (const char *nl; (nl = strchr(help, '\n')); help = nl + 1)
		fprintf(out, "%.*s\n%24s", (int)(nl - help), help, "");
	fprintf(out, "%s\n", help);
}

static void print_limits(FILE *out)
{
	struct dtl_limits defaults;

	dtl_limits_default(&defaults);
	for (int i = 0; i < DTL_LIMIT_COUNT; i++) {
		char option[40];
		snprintf(option, sizeof(option), "--%s N", dtl_cli_limit_name(i));
		fprintf(out, "  %-21s %s (default %llu)\n", option, dtl_cli_limit_help(i),
		        (unsigned long long)dtl_cli_limit_get(&defaults, i));
	}
}

static void print_usage(FILE *out)
{
	fputs(usage_head, out);
	for (int g = 0; g < GROUP_COUNT; g++) {
		fputs(group_headings[g], out);
		for (size_t i = 0; i < OPTION_ROWS; i++)
			if (option_rows[i].group == (enum option_group)g)
				print_row(out, &option_rows[i]);
		if (g == GROUP_LIMITS)
			print_limits(out);
	}
	fputs(usage_tail, out);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list args;

	fprintf(stderr, "dtypelint: ");
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fprintf(stderr, "\nTry 'dtypelint --help'.\n");
	return -EINVAL;
}

static struct dtl_loc option_loc(const char *option)
{
	struct dtl_loc loc = {.file = option, .line = 0, .column = 0};
	return loc;
}

static int split_list(struct dtl_arena *arena, struct dtl_vec *vec, const char *arg)
{
	const char *p = arg;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len) {
			const char **slot = dtl_vec_push(vec, arena, sizeof(*slot));
			if (!slot || !(*slot = dtl_arena_strndup(arena, p, len)))
				return -ENOMEM;
		}
		p = comma ? comma + 1 : p + len;
		if (!comma)
			break;
	}
	return 0;
}

static int parse_with(struct dtl_plan *plan, const char *arg)
{
	char item[128];
	const char *p = arg;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		enum dtl_framework fw;
		if (len >= sizeof(item))
			return usage_error("--with: '%s' is too long", arg);
		memcpy(item, p, len);
		item[len] = '\0';
		char *eq = strchr(item, '=');
		if (!eq)
			return usage_error("--with: expected NAME=VERSION, got '%s'", item);
		*eq = '\0';
		if (dtl_framework_parse(item, &fw) < 0)
			return usage_error(
			    "--with: unknown framework '%s' (torch, transformers, peft, "
			    "deepspeed, accelerate, trl, bitsandbytes, nemo-automodel)",
			    item);
		if (dtl_version_parse(eq + 1, strlen(eq + 1), &plan->versions[fw]) < 0)
			return usage_error("--with: '%s' is not a version", eq + 1);
		plan->version_locs[fw] = option_loc("--with");
		p += len + (comma ? 1 : 0);
	}
	return 0;
}

static const struct {
	const char *name;
	enum dtl_format format;
} formats[] = {
    {"text", DTL_FORMAT_TEXT},
    {"json", DTL_FORMAT_JSON},
    {"json-lines", DTL_FORMAT_JSON_LINES},
    {"sarif", DTL_FORMAT_SARIF},
    {"github", DTL_FORMAT_GITHUB},
    {"gitlab", DTL_FORMAT_GITLAB},
    {"markdown", DTL_FORMAT_MARKDOWN},
    {"html", DTL_FORMAT_HTML},
    {"concise", DTL_FORMAT_CONCISE},
};

static int parse_format(const char *arg, enum dtl_format *ret_format)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(arg, formats[i].name) == 0) {
			*ret_format = formats[i].format;
			return 0;
		}
	return usage_error(
	    "--format: '%s' is not one of text, concise, json, json-lines, sarif, github, "
	    "gitlab, markdown, html",
	    arg);
}

/* The table's rows with a getopt entry, one per limit, and the terminating zeros. */
static void build_long_options(struct option long_options[OPTION_ROWS + DTL_LIMIT_COUNT + 1])
{
	size_t n = 0;

	for (size_t i = 0; i < OPTION_ROWS; i++)
		if (!(option_rows[i].flags & DTL_OPT_FORM))
			long_options[n++] =
			    (struct option){option_rows[i].name,
			                    option_rows[i].arg ? required_argument : no_argument,
			                    NULL, option_rows[i].id};
	for (int i = 0; i < DTL_LIMIT_COUNT; i++)
		long_options[n++] =
		    (struct option){dtl_cli_limit_name(i), required_argument, NULL, OPT_LIMIT + i};
	long_options[n] = (struct option){NULL, 0, NULL, 0};
}

/* getopt_long's short options ("f:o:qvh", after ':' that reports a missing argument), and
 * the row of a short option it returns. */
static void build_short_options(char shorts[2 * OPTION_ROWS + 2])
{
	size_t n = 0;

	shorts[n++] = ':';
	for (size_t i = 0; i < OPTION_ROWS; i++)
		if (option_rows[i].short_name) {
			shorts[n++] = option_rows[i].short_name;
			if (option_rows[i].arg)
				shorts[n++] = ':';
		}
	shorts[n] = '\0';
}

static int option_id(int c)
{
	for (size_t i = 0; i < OPTION_ROWS && c < OPT_FIRST; i++)
		if (option_rows[i].short_name == c)
			return option_rows[i].id;
	return c;
}

/* What the parser of one group of options returns, besides a negative errno. */
enum {
	OPTION_TAKEN = 0, /* handled: parse the next one */
	OPTION_EXIT = 1,  /* --help or --version printed: the caller exits 0 */
	OPTION_OTHER = 2, /* not this group's option */
};

static int push_arg(struct dtl_vec *vec, struct dtl_arena *arena, const char *arg)
{
	const char **slot = dtl_vec_push(vec, arena, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = arg;
	return OPTION_TAKEN;
}

/* --scan-budget SECONDS: 0 (no budget) to a day */
static int parse_scan_budget(const char *arg, int *ret_s)
{
	char *end;
	long n;

	if (*arg < '0' || *arg > '9')
		return usage_error("--scan-budget: '%s' is not a number of seconds from 0 to 86400",
		                   arg);
	n = strtol(arg, &end, 10);
	if (*end || n < 0 || n > 86400)
		return usage_error("--scan-budget: '%s' is not a number of seconds from 0 to 86400",
		                   arg);
	*ret_s = (int)n;
	return OPTION_TAKEN;
}

/* "Inputs" and "Kernels" of --help: the files and folders read besides the operands. */
static int input_option(int c, const char *arg, struct dtl_arena *arena, struct dtl_options *o)
{
	switch (c) {
	case OPT_DEEPSPEED:
		o->deepspeed_file = arg;
		return OPTION_TAKEN;
	case OPT_ACCELERATE:
		o->accelerate_file = arg;
		return OPTION_TAKEN;
	case OPT_PEFT:
		o->peft_file = arg;
		return OPTION_TAKEN;
	case OPT_TRAINER_ARGS:
		o->trainer_args_file = arg;
		return OPTION_TAKEN;
	case OPT_FRAMEWORK_CONFIG:
		o->framework_file = arg;
		return OPTION_TAKEN;
	case OPT_FRAMEWORK_OVERRIDE:
		return push_arg(&o->framework_overrides, arena, arg);
	case OPT_LAUNCH:
		if (strcmp(arg, "--") == 0) /* --launch -- CMD...: cut off by launch_command() */
			return o->launch_argc ? OPTION_TAKEN
			                      : usage_error("--launch --: no command after --");
		o->launch_file = arg;
		return OPTION_TAKEN;
	case OPT_EXPORT:
		o->export_file = arg;
		return OPTION_TAKEN;
	case OPT_SCAN_KERNELS:
		return push_arg(&o->scan_kernels, arena, arg);
	case OPT_KERNELS:
		return push_arg(&o->kernels, arena, arg);
	case OPT_SCAN_BUDGET:
		return parse_scan_budget(arg, &o->scan_budget_s);
	}
	return OPTION_OTHER;
}

static int parse_pick(const char *arg, int *ret_pick)
{
	char *end;
	long n = strtol(arg, &end, 10);

	if (*end || n < 1 || n > 1000)
		return usage_error("--pick: '%s' is not a number from 1 to 1000", arg);
	*ret_pick = (int)n;
	return OPTION_TAKEN;
}

/* "Fixes" of --help. */
static int fix_option(int c, const char *arg, struct dtl_options *o)
{
	switch (c) {
	case OPT_FIX_PLAN:
		o->fix_plan = true;
		return OPTION_TAKEN;
	case OPT_WRITE:
		o->fix_write = true;
		return OPTION_TAKEN;
	case OPT_DIFF:
		o->fix_diff = true;
		return OPTION_TAKEN;
	case OPT_PICK:
		return parse_pick(arg, &o->fix_pick);
	case OPT_WRAP_PLAN:
		o->wrap_plan = true;
		return OPTION_TAKEN;
	}
	return OPTION_OTHER;
}

/* "Plan" of --help: overrides of the manifest's `training:` section. */
static int plan_option(int c, const char *arg, struct dtl_arena *arena, struct dtl_options *o)
{
	switch (c) {
	case OPT_PLAN:
		o->plan_file = arg;
		return OPTION_TAKEN;
	case OPT_STRATEGY:
		if (dtl_strategy_parse(arg, &o->overrides.strategy) < 0)
			return usage_error("--strategy: '%s' is not one of zero3, fsdp1, fsdp2, "
			                   "ddp, single",
			                   arg);
		o->overrides.strategy_loc = option_loc("--strategy");
		return OPTION_TAKEN;
	case OPT_PRECISION:
		if (dtl_precision_parse(arg, &o->overrides.precision) < 0)
			return usage_error("--precision: '%s' is not one of bf16, fp16, fp32", arg);
		o->overrides.precision_loc = option_loc("--precision");
		return OPTION_TAKEN;
	case OPT_DEVICE_MEMORY:
		if (dtl_bytes_parse(arg, &o->overrides.device_memory) < 0)
			return usage_error("--device-memory: '%s' is not a size such as 80GiB, "
			                   "40GB or a number of bytes",
			                   arg);
		o->overrides.device_memory_loc = option_loc("--device-memory");
		return OPTION_TAKEN;
	case OPT_WITH:
		return parse_with(&o->overrides, arg) < 0 ? -EINVAL : OPTION_TAKEN;
	case OPT_VERSIONS_FROM:
		return push_arg(&o->versions_from, arena, arg);
	case OPT_ASSUME:
		if (strcmp(arg, "newest") != 0)
			return usage_error("--assume: '%s' is not 'newest'", arg);
		o->assume_newest = true;
		return OPTION_TAKEN;
	}
	return OPTION_OTHER;
}

static int parse_color(const char *arg, enum dtl_color *ret_color)
{
	if (strcmp(arg, "auto") == 0)
		*ret_color = DTL_COLOR_AUTO;
	else if (strcmp(arg, "always") == 0)
		*ret_color = DTL_COLOR_ALWAYS;
	else if (strcmp(arg, "never") == 0)
		*ret_color = DTL_COLOR_NEVER;
	else
		return usage_error("--color: '%s' is not one of auto, always, never", arg);
	return OPTION_TAKEN;
}

static int parse_trace(const char *arg, struct dtl_arena *arena, struct dtl_options *o)
{
	const char *problem = dtl_glob_check(arg, strlen(arg));

	if (!*arg || problem)
		return usage_error("--trace: bad glob '%s': %s", arg, problem ? problem : "empty");
	return push_arg(&o->trace, arena, arg);
}

/* "Output" of --help. */
static int output_option(int c, const char *arg, struct dtl_arena *arena, struct dtl_options *o)
{
	switch (c) {
	case OPT_FORMAT:
		return parse_format(arg, &o->format) < 0 ? -EINVAL : OPTION_TAKEN;
	case OPT_OUTPUT:
		o->output = arg;
		return OPTION_TAKEN;
	case OPT_VERBOSE:
		o->verbose = true;
		return OPTION_TAKEN;
	case OPT_QUIET:
		o->quiet = true;
		return OPTION_TAKEN;
	case OPT_COLOR:
		return parse_color(arg, &o->color);
	case OPT_STATISTICS:
		o->statistics = true;
		return OPTION_TAKEN;
	case OPT_SHOW_PLAN:
		o->show_plan = true;
		return OPTION_TAKEN;
	case OPT_MEMORY:
		o->memory = true;
		return OPTION_TAKEN;
	case OPT_TRACE:
		return parse_trace(arg, arena, o);
	}
	return OPTION_OTHER;
}

/* "Rules" of --help. */
static int rules_option(int c, const char *arg, struct dtl_arena *arena, struct dtl_options *o)
{
	switch (c) {
	case OPT_SELECT:
		/* a later --select replaces an earlier one, as in ruff */
		o->select.count = 0;
		o->select_given = true;
		return split_list(arena, &o->select, arg);
	case OPT_EXTEND_SELECT:
		return split_list(arena, &o->extend_select, arg);
	case OPT_IGNORE:
		return split_list(arena, &o->ignore, arg);
	case OPT_FAIL_ON:
		if (dtl_lint_severity_parse(arg, &o->fail_on) < 0)
			return usage_error("--fail-on: '%s' is not one of error, warning, info",
			                   arg);
		o->fail_on_given = true;
		return OPTION_TAKEN;
	case OPT_EXIT_ZERO:
		o->exit_zero = true;
		return OPTION_TAKEN;
	case OPT_LIST_RULES:
		o->list_rules = true;
		return OPTION_TAKEN;
	case OPT_EXPLAIN:
		o->explain = arg;
		return OPTION_TAKEN;
	}
	return OPTION_OTHER;
}

/* "Configuration, baselines" of --help. */
static int config_option(int c, const char *arg, struct dtl_arena *arena, struct dtl_options *o)
{
	switch (c) {
	case OPT_SETUP:
		return push_arg(&o->setups, arena, arg);
	case OPT_STDIN_FILENAME:
		o->stdin_filename = arg;
		return OPTION_TAKEN;
	case OPT_CONFIG:
		o->config_file = arg;
		return OPTION_TAKEN;
	case OPT_NO_CONFIG:
		o->no_config = true;
		return OPTION_TAKEN;
	case OPT_BASELINE:
		o->baseline = arg;
		return OPTION_TAKEN;
	case OPT_WRITE_BASELINE:
		o->write_baseline = arg;
		return OPTION_TAKEN;
	}
	return OPTION_OTHER;
}

/* "Limits" of --help: one option per limit. */
static int limit_option(int c, const char *arg, struct dtl_options *o)
{
	uint64_t value;
	int i, r;

	if (c < OPT_LIMIT || c >= OPT_LIMIT + DTL_LIMIT_COUNT)
		return OPTION_OTHER;
	i = c - OPT_LIMIT;
	r = dtl_cli_limit_parse(i, arg, &value);
	if (r == -ERANGE)
		return usage_error("--%s: '%s' is out of range (1 to %llu)", dtl_cli_limit_name(i),
		                   arg, (unsigned long long)dtl_cli_limit_max(i));
	if (r < 0)
		return usage_error("--%s: '%s' is not a positive integer (with an optional K, M or "
		                   "G suffix)",
		                   dtl_cli_limit_name(i), arg);
	o->limits.set |= 1u << i;
	o->limits.values[i] = value;
	return OPTION_TAKEN;
}

static void print_version(void)
{
	/* the release, and what git describe says of a checkout's build */
	if (strcmp(dtl_build_version(), DTL_VERSION) == 0)
		printf("dtypelint %s\n", DTL_VERSION);
	else
		printf("dtypelint %s (git %s)\n", DTL_VERSION, dtl_build_version());
}

/* "Other" of --help, and what getopt_long reports of an option it does not know. */
static int other_option(int c, const char *option)
{
	switch (c) {
	case OPT_VERSION:
		print_version();
		return OPTION_EXIT;
	case OPT_HELP:
		print_usage(stdout);
		return OPTION_EXIT;
	case ':':
		return usage_error("option '%s' needs an argument", option);
	}
	return usage_error("unknown option '%s'", option);
}

/* One option getopt_long returned: each group of --help in turn, until one takes it. */
static int parse_option(int c, const char *arg, const char *option, struct dtl_arena *arena,
                        struct dtl_options *o)
{
	int r = input_option(c, arg, arena, o);

	if (r == OPTION_OTHER)
		r = fix_option(c, arg, o);
	if (r == OPTION_OTHER)
		r = plan_option(c, arg, arena, o);
	if (r == OPTION_OTHER)
		r = output_option(c, arg, arena, o);
	if (r == OPTION_OTHER)
		r = rules_option(c, arg, arena, o);
	if (r == OPTION_OTHER)
		r = config_option(c, arg, arena, o);
	if (r == OPTION_OTHER)
		r = limit_option(c, arg, o);
	if (r == OPTION_OTHER)
		r = other_option(c, option);
	return r;
}

/* The operands: inputs, or with --scan-kernels more directories to scan. */
static int take_operands(int argc, char **argv, struct dtl_arena *arena, struct dtl_options *o)
{
	o->inputs = (const char **)(argv + optind);
	o->input_count = (size_t)(argc - optind);
	/* "--scan-kernels DIR1 DIR2" (the usage line's DIR...): the operands are directories
	 * too; they were dropped without a word before (issue 21). */
	if (!o->scan_kernels.count)
		return 0;
	for (size_t i = 0; i < o->input_count; i++)
		if (push_arg(&o->scan_kernels, arena, o->inputs[i]) < 0)
			return -ENOMEM;
	o->input_count = 0;
	return 0;
}

/* Options that exclude each other, or that only go with another. */
static int check_combinations(const struct dtl_options *o)
{
	bool text_or_json = o->format == DTL_FORMAT_TEXT || o->format == DTL_FORMAT_JSON;

	if (o->config_file && o->no_config)
		return usage_error("--config and --no-config exclude each other");
	if (o->launch_file && o->launch_argc)
		return usage_error("--launch FILE and --launch -- CMD... exclude each other");
	if (o->statistics && !text_or_json)
		return usage_error("--statistics prints text or json, not the %s format",
		                   formats[o->format].name);
	if (o->show_plan && !text_or_json)
		return usage_error("--show-plan prints text or json, not the %s format",
		                   formats[o->format].name);
	if (o->memory && !text_or_json)
		return usage_error("--memory prints text or json, not the %s format",
		                   formats[o->format].name);
	if (o->fix_write && !o->fix_plan)
		return usage_error("--write goes with --fix-plan");
	if (o->fix_diff && !o->fix_plan)
		return usage_error("--diff goes with --fix-plan");
	if (o->fix_diff && o->fix_write)
		return usage_error("--diff and --write exclude each other");
	if (o->fix_pick && !o->fix_write && !o->fix_diff)
		return usage_error("--pick goes with --fix-plan --write or --diff");
	if (o->fix_plan && o->wrap_plan)
		return usage_error("--fix-plan and --wrap-plan exclude each other");
	/* no file arguments: the set-ups of the config (checked once it is read) */
	if (o->input_count && o->setups.count)
		return usage_error(
		    "--setup picks set-ups of the config; it takes no file arguments");
	return 0;
}

/* One job per input, each with the input files the options named. */
static int make_jobs(struct dtl_arena *arena, struct dtl_options *o)
{
	o->jobs = dtl_arena_calloc(arena, o->input_count ? o->input_count : 1, sizeof(*o->jobs));
	if (!o->jobs)
		return -ENOMEM;
	for (size_t i = 0; i < o->input_count; i++) {
		struct dtl_lint_job *job = &o->jobs[i];
		job->input = o->inputs[i];
		job->plan_file = o->plan_file;
		job->deepspeed_file = o->deepspeed_file;
		job->accelerate_file = o->accelerate_file;
		job->peft_file = o->peft_file;
		job->trainer_args_file = o->trainer_args_file;
		job->framework_file = o->framework_file;
		job->framework_overrides = (const char *const *)o->framework_overrides.items;
		job->framework_override_count = o->framework_overrides.count;
		job->launch_file = o->launch_file;
		job->launch_argv = o->launch_argv;
		job->launch_argc = o->launch_argc;
		dtl_plan_init(&job->versions);
	}
	return 0;
}

static int check_stdin(const struct dtl_options *o)
{
	size_t dashes = 0;

	for (size_t i = 0; i < o->input_count; i++)
		dashes += strcmp(o->inputs[i], "-") == 0;
	if (dashes > 1)
		return usage_error("standard input ('-') can be given once");
	if (o->stdin_filename && !dashes)
		return usage_error("--stdin-filename names standard input ('-'), which is not an "
		                   "input");
	return 0;
}

/* --launch -- CMD...: the words after that "--" are the command, not dtypelint's options
 * (getopt_long would take its --config_file for one): they are cut off before parsing, and
 * the argument count returned. A "--" of its own ends the options first. */
static int launch_command(int argc, char **argv, struct dtl_options *o)
{
	for (int i = 1; i + 1 < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--launch") == 0 && strcmp(argv[i + 1], "--") == 0) {
			o->launch_argv = (const char *const *)argv + i + 2;
			o->launch_argc = (size_t)(argc - i - 2);
			return i + 2;
		}
	return argc;
}

int dtl_cli_parse(int argc, char **argv, struct dtl_arena *arena, struct dtl_options *o)
{
	struct option long_options[OPTION_ROWS + DTL_LIMIT_COUNT + 1];
	char shorts[2 * OPTION_ROWS + 2];
	int c, r;

	build_long_options(long_options);
	build_short_options(shorts);
	memset(o, 0, sizeof(*o));
	dtl_plan_init(&o->overrides);
	o->fail_on = DTL_SEVERITY_WARNING;
	o->scan_budget_s = -1;
	argc = launch_command(argc, argv, o);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, long_options, NULL)) != -1) {
		r = parse_option(option_id(c), optarg, argv[optind - 1], arena, o);
		if (r != OPTION_TAKEN)
			return r;
	}
	if ((r = take_operands(argc, argv, arena, o)) < 0 || (r = check_combinations(o)) < 0 ||
	    (r = make_jobs(arena, o)) < 0 || (r = check_stdin(o)) < 0)
		return r;
	return 0;
}
