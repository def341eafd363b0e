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
    "Predict dtype-contract failures of an FSDP1, FSDP2 or DeepSpeed ZeRO-3 training set-up\n"
    "from a model manifest (JSON or YAML) or a Hugging Face model folder, before any GPU\n"
    "time is spent.\n"
    "\n"
    "Inputs (composed into the manifest and plan; later ones override earlier ones):\n"
    "  --deepspeed FILE      a DeepSpeed JSON config\n"
    "  --accelerate FILE     an accelerate config YAML\n"
    "  --peft FILE           a PEFT adapter_config.json (LoRA)\n"
    "  --trainer-args FILE   a recipe: LLaMA-Factory, axolotl, TRL / alignment-handbook\n"
    "                        or PEFT examples arguments (YAML or JSON)\n"
    "  --framework-config FILE\n"
    "                        a training framework's own config, told by its keys: a\n"
    "                        torchtune recipe YAML, a torchtitan job config TOML, a\n"
    "                        verl trainer config YAML or a NeMo Megatron config YAML\n"
    "  --framework-override KEY=VALUE\n"
    "                        an override as the framework's command line takes it\n"
    "                        (tune run's key=value, torchtitan's section.key=value,\n"
    "                        verl's key=value and +key=value, OpenRLHF's\n"
    "                        ds.zero_stage=3; ~key removes; repeatable)\n"
    "  --launch FILE         a launch script, read and never run: the files, flags and\n"
    "                        environment of its accelerate launch, deepspeed, torchrun,\n"
    "                        python, llamafactory-cli or axolotl command, python -m\n"
    "                        verl.trainer.main_ppo's key=value overrides and the\n"
    "                        arguments of OpenRLHF's openrlhf.cli.* programs\n"
    "  --export FILE         also write the composed manifest to FILE (.json or .yaml)\n"
    "Fixes:\n"
    "  --fix-plan            for each finding, the fixes that remove it in a re-simulation,\n"
    "                        ranked (text or json) instead of the report\n"
    "  --diff                with --fix-plan: print the top fix that a file of the input can\n"
    "                        hold as a unified diff (git apply, patch -p1); write nothing\n"
    "  --write               with --fix-plan: apply that fix to the file that holds the\n"
    "                        setting, print the diff, lint again\n"
    "  --pick N              with --diff or --write: the N-th fix instead of the first\n"
    "  --wrap-plan           print FSDP2 fully_shard groups with one dtype each (python, or\n"
    "                        json with -f json) instead of the report\n"
    "Kernels (custom ops in C++/CUDA sources, read with libclang, loaded only for these;\n"
    "the environment variable DTYPELINT_LIBCLANG names another libclang):\n"
    "  --scan-kernels DIR    print the ops' dtype contracts (repeatable; text or json)\n"
    "  --kernels DIR         use them: DT701 checks the ops bound in model.kernels\n"
    "                        (repeatable)\n"
    "  --scan-budget SECONDS wall-clock budget of the whole scan (default 300; 0: none);\n"
    "                        files not scanned in it are errors, named (exit status 2)\n"
    "\n"
    "Plan (what the manifest's `training:` section says, or overrides of it):\n"
    "  --plan FILE           read the plan from FILE (the `training:` mapping at top level)\n"
    "  --strategy S          zero3 | fsdp1 | fsdp2 | ddp | single\n"
    "  --precision P         bf16 | fp16 | fp32\n"
    "  --device-memory SIZE  memory of one device (e.g. 80GiB) for DT801\n"
    "  --with NAME=VER[,..]  framework versions: torch, transformers, peft, deepspeed,\n"
    "                        accelerate, trl, bitsandbytes (e.g. --with torch=2.7.1)\n"
    "  --versions-from FILE  read the versions from FILE (repeatable): requirements or\n"
    "                        constraints, pip freeze or pip list --format=json output,\n"
    "                        pyproject.toml, uv.lock, poetry.lock, pylock.toml,\n"
    "                        Pipfile.lock, environment.yml, conda-lock, a Dockerfile;\n"
    "                        without it, such files beside the input up to its\n"
    "                        repository's root\n"
    "  --assume newest       lint a version range at its newest allowed version only,\n"
    "                        not at every behaviour boundary inside it\n"
    "Output:\n"
    "  -f, --format FMT      text (gcc-style, default) | concise (one line a finding) |\n"
    "                        json | json-lines | sarif |\n"
    "                        github (workflow commands) | gitlab (Code Quality) |\n"
    "                        markdown (job summary) | html (one self-contained page)\n"
    "  -o, --output FILE     write the report to FILE instead of standard output\n"
    "  --color WHEN          auto (default: when standard output is a terminal, or\n"
    "                        FORCE_COLOR or CLICOLOR_FORCE is set; never when NO_COLOR\n"
    "                        is) | always | never; text format only\n"
    "  --statistics          print the number of findings per rule instead of the findings\n"
    "                        (text or json)\n"
    "  --show-plan           print the resolved plan instead of the findings: versions and\n"
    "                        where each came from, defaults and \"auto\" resolved, the\n"
    "                        stages that apply (text or json)\n"
    "  --memory              also print the per-rank memory of the model states (params,\n"
    "                        gathered, grads, optimizer, quant state, buffers; text after\n"
    "                        the report, or \"memory\" in each json input)\n"
    "  --trace GLOB          also print the dtype history of the tensors matching GLOB,\n"
    "                        stage by stage (repeatable; after a text report, else on\n"
    "                        standard error)\n"
    "  -q, --quiet           no versions and summary lines on standard error\n"
    "  -v, --verbose         text: every note, each folded unit or group too (by default\n"
    "                        a finding shows its first note and counts the others)\n"
    "Rules:\n"
    "  --select RULES        run only these rules (ids, names, id prefixes such as DT1, or\n"
    "                        ALL; comma-separated, repeatable)\n"
    "  --extend-select RULES add these rules to the selection\n"
    "  --ignore RULES        do not run these rules\n"
    "  --fail-on LEVEL       exit 1 on findings at or above error | warning | info\n"
    "                        (default: warning)\n"
    "  --exit-zero           exit 0 even when findings reach --fail-on\n"
    "  --list-rules          list the rules (with -f json: as JSON)\n"
    "  --explain RULE        print a rule's documentation\n"
    "Configuration, baselines:\n"
    "  --setup NAME          with no file arguments: lint only this set-up of the config's\n"
    "                        setups: (repeatable; default: every set-up)\n"
    "  --stdin-filename PATH name standard input ('-') PATH in the report, and find its\n"
    "                        .dtypelint.yaml from PATH\n"
    "  --config FILE         read FILE instead of the nearest .dtypelint.yaml\n"
    "  --no-config           read no configuration file\n"
    "  --baseline FILE       do not report the findings recorded in FILE\n"
    "  --write-baseline FILE record every current finding in FILE (- for standard\n"
    "                        output) and exit 0\n"
    "Limits (also the `limits:` keys of a config file; N may end in K, M or G):\n";

static const char usage_tail[] =
    "Other:\n"
    "  --version             print the version\n"
    "  -h, --help            print this help\n"
    "\n"
    "Exit status: 0 no finding at or above --fail-on; 1 findings at or above --fail-on;\n"
    "2 usage, configuration or input error (file:line:col: error: ...); 3 internal error.\n"
    "See dtypelint(1) and dtypelint-manifest(5).\n";

static void print_usage(FILE *out)
{
	struct dtl_limits defaults;

	dtl_limits_default(&defaults);
	fputs(usage_head, out);
	for (int i = 0; i < DTL_LIMIT_COUNT; i++) {
		char option[40];
		snprintf(option, sizeof(option), "--%s N", dtl_cli_limit_name(i));
		fprintf(out, "  %-21s %s (default %llu)\n", option, dtl_cli_limit_help(i),
		        (unsigned long long)dtl_cli_limit_get(&defaults, i));
	}
	fputs(usage_tail, out);
}

enum {
	OPT_PLAN = 256,
	OPT_STRATEGY,
	OPT_PRECISION,
	OPT_WITH,
	OPT_VERSIONS_FROM,
	OPT_ASSUME,
	OPT_SELECT,
	OPT_EXTEND_SELECT,
	OPT_IGNORE,
	OPT_FAIL_ON,
	OPT_EXIT_ZERO,
	OPT_STATISTICS,
	OPT_SHOW_PLAN,
	OPT_COLOR,
	OPT_CONFIG,
	OPT_STDIN_FILENAME,
	OPT_SETUP,
	OPT_NO_CONFIG,
	OPT_BASELINE,
	OPT_WRITE_BASELINE,
	OPT_TRACE,
	OPT_LIST_RULES,
	OPT_EXPLAIN,
	OPT_VERSION,
	OPT_DEEPSPEED,
	OPT_ACCELERATE,
	OPT_PEFT,
	OPT_TRAINER_ARGS,
	OPT_FRAMEWORK_CONFIG,
	OPT_FRAMEWORK_OVERRIDE,
	OPT_LAUNCH,
	OPT_EXPORT,
	OPT_FIX_PLAN,
	OPT_WRITE,
	OPT_DIFF,
	OPT_PICK,
	OPT_WRAP_PLAN,
	OPT_SCAN_KERNELS,
	OPT_KERNELS,
	OPT_SCAN_BUDGET,
	OPT_MEMORY,
	OPT_DEVICE_MEMORY,
	OPT_LIMIT, /* OPT_LIMIT + i: the limit i */
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
			    "deepspeed, accelerate, trl, bitsandbytes)",
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

static const struct option fixed_options[] = {
    {"plan", required_argument, NULL, OPT_PLAN},
    {"deepspeed", required_argument, NULL, OPT_DEEPSPEED},
    {"accelerate", required_argument, NULL, OPT_ACCELERATE},
    {"peft", required_argument, NULL, OPT_PEFT},
    {"trainer-args", required_argument, NULL, OPT_TRAINER_ARGS},
    {"framework-config", required_argument, NULL, OPT_FRAMEWORK_CONFIG},
    {"framework-override", required_argument, NULL, OPT_FRAMEWORK_OVERRIDE},
    {"launch", required_argument, NULL, OPT_LAUNCH},
    {"export", required_argument, NULL, OPT_EXPORT},
    {"fix-plan", no_argument, NULL, OPT_FIX_PLAN},
    {"write", no_argument, NULL, OPT_WRITE},
    {"diff", no_argument, NULL, OPT_DIFF},
    {"pick", required_argument, NULL, OPT_PICK},
    {"wrap-plan", no_argument, NULL, OPT_WRAP_PLAN},
    {"scan-kernels", required_argument, NULL, OPT_SCAN_KERNELS},
    {"kernels", required_argument, NULL, OPT_KERNELS},
    {"scan-budget", required_argument, NULL, OPT_SCAN_BUDGET},
    {"strategy", required_argument, NULL, OPT_STRATEGY},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"with", required_argument, NULL, OPT_WITH},
    {"versions-from", required_argument, NULL, OPT_VERSIONS_FROM},
    {"assume", required_argument, NULL, OPT_ASSUME},
    {"format", required_argument, NULL, 'f'},
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"color", required_argument, NULL, OPT_COLOR},
    {"statistics", no_argument, NULL, OPT_STATISTICS},
    {"show-plan", no_argument, NULL, OPT_SHOW_PLAN},
    {"memory", no_argument, NULL, OPT_MEMORY},
    {"device-memory", required_argument, NULL, OPT_DEVICE_MEMORY},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"select", required_argument, NULL, OPT_SELECT},
    {"extend-select", required_argument, NULL, OPT_EXTEND_SELECT},
    {"ignore", required_argument, NULL, OPT_IGNORE},
    {"fail-on", required_argument, NULL, OPT_FAIL_ON},
    {"exit-zero", no_argument, NULL, OPT_EXIT_ZERO},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"stdin-filename", required_argument, NULL, OPT_STDIN_FILENAME},
    {"setup", required_argument, NULL, OPT_SETUP},
    {"no-config", no_argument, NULL, OPT_NO_CONFIG},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"write-baseline", required_argument, NULL, OPT_WRITE_BASELINE},
    {"list-rules", no_argument, NULL, OPT_LIST_RULES},
    {"explain", required_argument, NULL, OPT_EXPLAIN},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, 'h'},
};

#define FIXED_OPTIONS (sizeof(fixed_options) / sizeof(fixed_options[0]))

/* The fixed options, one per limit, and the terminating zeros. */
static void build_long_options(struct option long_options[FIXED_OPTIONS + DTL_LIMIT_COUNT + 1])
{
	memcpy(long_options, fixed_options, sizeof(fixed_options));
	for (int i = 0; i < DTL_LIMIT_COUNT; i++)
		long_options[FIXED_OPTIONS + (size_t)i] =
		    (struct option){dtl_cli_limit_name(i), required_argument, NULL, OPT_LIMIT + i};
	long_options[FIXED_OPTIONS + DTL_LIMIT_COUNT] = (struct option){NULL, 0, NULL, 0};
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
	case 'f':
		return parse_format(arg, &o->format) < 0 ? -EINVAL : OPTION_TAKEN;
	case 'o':
		o->output = arg;
		return OPTION_TAKEN;
	case 'v':
		o->verbose = true;
		return OPTION_TAKEN;
	case 'q':
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
	case 'h':
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

int dtl_cli_parse(int argc, char **argv, struct dtl_arena *arena, struct dtl_options *o)
{
	struct option long_options[FIXED_OPTIONS + DTL_LIMIT_COUNT + 1];
	int c, r;

	build_long_options(long_options);
	memset(o, 0, sizeof(*o));
	dtl_plan_init(&o->overrides);
	o->fail_on = DTL_SEVERITY_WARNING;
	o->scan_budget_s = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:qvh", long_options, NULL)) != -1) {
		r = parse_option(c, optarg, argv[optind - 1], arena, o);
		if (r != OPTION_TAKEN)
			return r;
	}
	if ((r = take_operands(argc, argv, arena, o)) < 0 || (r = check_combinations(o)) < 0 ||
	    (r = make_jobs(arena, o)) < 0 || (r = check_stdin(o)) < 0)
		return r;
	return 0;
}
