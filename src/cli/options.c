/* SPDX-License-Identifier: MIT */
/* Command-line parsing. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dtl-config.h"

static const char usage[] =
    "Usage: dtypelint [OPTIONS] MANIFEST...\n"
    "Predict dtype-contract failures of an FSDP1, FSDP2 or DeepSpeed ZeRO-3 training set-up\n"
    "from a model manifest (JSON or YAML), before any GPU time is spent.\n"
    "\n"
    "Plan (what the manifest's `training:` section says, or overrides of it):\n"
    "  --plan FILE           read the plan from FILE (the `training:` mapping at top level)\n"
    "  --strategy S          zero3 | fsdp1 | fsdp2 | ddp | single\n"
    "  --precision P         bf16 | fp16 | fp32\n"
    "  --with NAME=VER[,..]  framework versions: torch, transformers, peft, deepspeed,\n"
    "                        accelerate, trl, bitsandbytes (e.g. --with torch=2.7.1)\n"
    "Output:\n"
    "  -f, --format FMT      text (gcc-style, default) | json\n"
    "  -o, --output FILE     write the report to FILE instead of standard output\n"
    "  -q, --quiet           no summary line on standard error\n"
    "Rules:\n"
    "  --select RULES        run only these rules (ids, names or id prefixes, comma-separated)\n"
    "  --ignore RULES        do not run these rules\n"
    "  --fail-on LEVEL       exit 1 on findings at or above error | warning | info\n"
    "                        (default: warning)\n"
    "  --list-rules          list the rules (with -f json: as JSON)\n"
    "  --explain RULE        print a rule's documentation\n"
    "  --version             print the version\n"
    "  -h, --help            print this help\n"
    "\n"
    "Exit status: 0 no finding at or above --fail-on; 1 findings at or above --fail-on;\n"
    "2 usage or input error (file:line:col: error: ...); 3 internal error.\n"
    "See dtypelint(1).\n";

enum {
	OPT_PLAN = 256,
	OPT_STRATEGY,
	OPT_PRECISION,
	OPT_WITH,
	OPT_SELECT,
	OPT_IGNORE,
	OPT_FAIL_ON,
	OPT_LIST_RULES,
	OPT_EXPLAIN,
	OPT_VERSION,
};

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
		if (len) {
			const char **slot = dtl_vec_push(vec, arena, sizeof(*slot));
			if (!slot || !(*slot = dtl_arena_strndup(arena, p, len)))
				return -ENOMEM;
		}
		p += len + (comma ? 1 : 0);
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
			    "deepspeed, accelerate, trl, bitsandbytes)",
			    item);
		if (dtl_version_parse(eq + 1, strlen(eq + 1), &plan->versions[fw]) < 0)
			return usage_error("--with: '%s' is not a version", eq + 1);
		plan->version_locs[fw] = option_loc("--with");
		p += len + (comma ? 1 : 0);
	}
	return 0;
}

int dtl_cli_parse(int argc, char **argv, struct dtl_arena *arena, struct dtl_options *o)
{
	static const struct option long_options[] = {
	    {"plan", required_argument, NULL, OPT_PLAN},
	    {"strategy", required_argument, NULL, OPT_STRATEGY},
	    {"precision", required_argument, NULL, OPT_PRECISION},
	    {"with", required_argument, NULL, OPT_WITH},
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"select", required_argument, NULL, OPT_SELECT},
	    {"ignore", required_argument, NULL, OPT_IGNORE},
	    {"fail-on", required_argument, NULL, OPT_FAIL_ON},
	    {"list-rules", no_argument, NULL, OPT_LIST_RULES},
	    {"explain", required_argument, NULL, OPT_EXPLAIN},
	    {"version", no_argument, NULL, OPT_VERSION},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	dtl_plan_init(&o->overrides);
	o->fail_on = DTL_SEVERITY_WARNING;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:qh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_PLAN:
			o->plan_file = optarg;
			break;
		case OPT_STRATEGY:
			if (dtl_strategy_parse(optarg, &o->overrides.strategy) < 0)
				return usage_error("--strategy: '%s' is not one of zero3, fsdp1, "
				                   "fsdp2, ddp, single",
				                   optarg);
			o->overrides.strategy_loc = option_loc("--strategy");
			break;
		case OPT_PRECISION:
			if (dtl_precision_parse(optarg, &o->overrides.precision) < 0)
				return usage_error(
				    "--precision: '%s' is not one of bf16, fp16, fp32", optarg);
			o->overrides.precision_loc = option_loc("--precision");
			break;
		case OPT_WITH:
			if (parse_with(&o->overrides, optarg) < 0)
				return -EINVAL;
			break;
		case 'f':
			if (strcmp(optarg, "text") == 0)
				o->format = DTL_FORMAT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				o->format = DTL_FORMAT_JSON;
			else
				return usage_error("--format: '%s' is not one of text, json",
				                   optarg);
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_SELECT:
			if (split_list(arena, &o->select, optarg) < 0)
				return -ENOMEM;
			break;
		case OPT_IGNORE:
			if (split_list(arena, &o->ignore, optarg) < 0)
				return -ENOMEM;
			break;
		case OPT_FAIL_ON:
			if (dtl_severity_parse(optarg, &o->fail_on) < 0)
				return usage_error(
				    "--fail-on: '%s' is not one of error, warning, info", optarg);
			break;
		case OPT_LIST_RULES:
			o->list_rules = true;
			break;
		case OPT_EXPLAIN:
			o->explain = optarg;
			break;
		case OPT_VERSION:
			printf("dtypelint %s\n", DTL_VERSION);
			return 1;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	o->inputs = (const char **)(argv + optind);
	o->input_count = (size_t)(argc - optind);
	if (!o->input_count && !o->list_rules && !o->explain)
		return usage_error("no manifest given");
	return 0;
}
