/* SPDX-License-Identifier: MIT */
/* The command-line options, one row each: the only place an option is described. From it come
 * getopt_long's option array and --help (src/cli/options.c) and the bash, zsh and fish
 * completions (tools/gen-completions.c, at build time); tests/golden-cli/man-options.py checks
 * dtypelint(1)'s OPTIONS against --help. HACKING.md "Adding an option" walks through a new row.
 *
 * No include guard: the includer defines DTL_OPTION(ID, LONG, SHORT, ARG, GROUP, FLAGS,
 * COMPLETE, SUMMARY, HELP) and DTL_OPTION_GROUP(GROUP, HEADING) first, and the table expands them.
 *   ID       OPT_<ID> in the handlers' switches
 *   LONG     the long name without "--"
 *   SHORT    the short form ('f'), or 0
 *   ARG      the argument's name in --help ("FILE"), or NULL for a flag
 *   GROUP    the --help group the row is printed in (the groups' order is their rows' order)
 *   FLAGS    DTL_OPT_REPEAT: may be given again (zsh's '*'); DTL_OPT_FORM: another form of the
 *            row above (--help only: no getopt entry and no completion of its own)
 *   COMPLETE the argument's completion: "file", "dir", "rule" (one), "rules" (a comma list),
 *            "setup" (a set-up of the config), "=WORD WORD" (these words), "" (nothing)
 *   SUMMARY  the completions' description of the option (no ' [ ] or backslash)
 *   HELP     --help's text: lines separated by '\n', printed from column 25
 * The limits (--max-file-size...) are rows of their own table (limit-options.c), printed
 * in the group LIMITS. */

DTL_OPTION_GROUP(INPUTS, "Inputs (composed into the manifest and plan; later ones override "
                         "earlier ones):\n")
DTL_OPTION(DEEPSPEED, "deepspeed", 0, "FILE", INPUTS, 0, "file", "a DeepSpeed JSON config",
           "a DeepSpeed JSON config")
DTL_OPTION(ACCELERATE, "accelerate", 0, "FILE", INPUTS, 0, "file", "an accelerate config YAML",
           "an accelerate config YAML")
DTL_OPTION(PEFT, "peft", 0, "FILE", INPUTS, 0, "file", "a PEFT adapter_config.json",
           "a PEFT adapter_config.json (LoRA)")
DTL_OPTION(TRAINER_ARGS, "trainer-args", 0, "FILE", INPUTS, 0, "file", "a training recipe",
           "a recipe: LLaMA-Factory, axolotl, TRL / alignment-handbook\n"
           "or PEFT examples arguments (YAML or JSON)")
DTL_OPTION(FRAMEWORK_CONFIG, "framework-config", 0, "FILE", INPUTS, 0, "file",
           "a training framework config (torchtune, torchtitan)",
           "a training framework's own config, told by its keys: a\n"
           "torchtune recipe YAML, a torchtitan job config TOML, a\n"
           "verl trainer config YAML or a NeMo Megatron config YAML")
DTL_OPTION(FRAMEWORK_OVERRIDE, "framework-override", 0, "KEY=VALUE", INPUTS, DTL_OPT_REPEAT, "",
           "a framework override KEY=VALUE",
           "an override as the framework's command line takes it\n"
           "(tune run's key=value, torchtitan's section.key=value,\n"
           "verl's key=value and +key=value, OpenRLHF's\n"
           "ds.zero_stage=3; ~key removes; repeatable)")
DTL_OPTION(LAUNCH, "launch", 0, "FILE", INPUTS, 0, "file", "a launch script, read and never run",
           "a launch script, read and never run: the files, flags and\n"
           "environment of its accelerate launch, deepspeed, torchrun,\n"
           "python, llamafactory-cli or axolotl command, python -m\n"
           "verl.trainer.main_ppo's key=value overrides and the\n"
           "arguments of OpenRLHF's openrlhf.cli.* programs")
DTL_OPTION(LAUNCH_COMMAND, "launch", 0, "-- CMD...", INPUTS, DTL_OPT_FORM, "",
           "a command line after --, read as a one-line launch script",
           "the rest of the command line, read as a one-line launch\n"
           "script (findings at <command line>:1:COL)")
DTL_OPTION(EXPORT, "export", 0, "FILE", INPUTS, 0, "file", "write the composed manifest to FILE",
           "also write the composed manifest to FILE (.json or .yaml)")

DTL_OPTION_GROUP(FIXES, "Fixes:\n")
DTL_OPTION(FIX_PLAN, "fix-plan", 0, NULL, FIXES, 0, "", "the fixes for each finding",
           "for each finding, the fixes that remove it in a re-simulation,\n"
           "ranked (text or json) instead of the report")
DTL_OPTION(DIFF, "diff", 0, NULL, FIXES, 0, "",
           "with --fix-plan: print the top fix as a unified diff",
           "with --fix-plan: print the top fix that a file of the input can\n"
           "hold as a unified diff (git apply, patch -p1); write nothing")
DTL_OPTION(WRITE, "write", 0, NULL, FIXES, 0, "", "with --fix-plan: apply the top fix",
           "with --fix-plan: apply that fix to the file that holds the\n"
           "setting, print the diff, lint again")
DTL_OPTION(PICK, "pick", 0, "N", FIXES, 0, "", "with --write: apply the N-th fix",
           "with --diff or --write: the N-th fix instead of the first")
DTL_OPTION(WRAP_PLAN, "wrap-plan", 0, NULL, FIXES, 0, "", "print FSDP2 fully_shard groups",
           "print FSDP2 fully_shard groups with one dtype each (python, or\n"
           "json with -f json) instead of the report")

DTL_OPTION_GROUP(KERNELS,
                 "Kernels (custom ops in C++/CUDA sources, read with libclang, loaded only for "
                 "these;\n"
                 "the environment variable DTYPELINT_LIBCLANG names another libclang):\n")
DTL_OPTION(SCAN_KERNELS, "scan-kernels", 0, "DIR", KERNELS, DTL_OPT_REPEAT, "dir",
           "print the ops dtype contracts",
           "print the ops' dtype contracts (repeatable; text or json)")
DTL_OPTION(KERNELS, "kernels", 0, "DIR", KERNELS, DTL_OPT_REPEAT, "dir", "use the kernels in DIR",
           "use them: DT701 checks the ops bound in model.kernels\n"
           "(repeatable)")
DTL_OPTION(SCAN_BUDGET, "scan-budget", 0, "SECONDS", KERNELS, 0, "",
           "wall-clock budget of the kernel scan (seconds)",
           "wall-clock budget of the whole scan (default 300; 0: none);\n"
           "files not scanned in it are errors, named (exit status 2)")

DTL_OPTION_GROUP(PLAN, "\nPlan (what the manifest's `training:` section says, or overrides of "
                       "it):\n")
DTL_OPTION(PLAN, "plan", 0, "FILE", PLAN, 0, "file", "read the plan from FILE",
           "read the plan from FILE (the `training:` mapping at top level)")
DTL_OPTION(STRATEGY, "strategy", 0, "S", PLAN, 0, "=zero3 fsdp1 fsdp2 ddp single",
           "the sharding strategy", "zero3 | fsdp1 | fsdp2 | ddp | single")
DTL_OPTION(PRECISION, "precision", 0, "P", PLAN, 0, "=bf16 fp16 fp32", "the mixed precision",
           "bf16 | fp16 | fp32")
DTL_OPTION(DEVICE_MEMORY, "device-memory", 0, "SIZE", PLAN, 0, "", "the memory of one device",
           "memory of one device (e.g. 80GiB) for DT801")
DTL_OPTION(WITH, "with", 0, "NAME=VER[,..]", PLAN, DTL_OPT_REPEAT,
           "=torch= transformers= peft= deepspeed= accelerate= trl= bitsandbytes= "
           "nemo-automodel=",
           "framework versions",
           "framework versions: torch, transformers, peft, deepspeed,\n"
           "accelerate, trl, bitsandbytes, nemo-automodel\n"
           "(e.g. --with torch=2.7.1)")
DTL_OPTION(VERSIONS_FROM, "versions-from", 0, "FILE", PLAN, DTL_OPT_REPEAT, "file",
           "read the framework versions from FILE",
           "read the versions from FILE (repeatable): requirements or\n"
           "constraints, pip freeze or pip list --format=json output,\n"
           "pyproject.toml, uv.lock, poetry.lock, pylock.toml,\n"
           "Pipfile.lock, environment.yml, conda-lock, a Dockerfile;\n"
           "without it, such files beside the input up to its\n"
           "repository's root")
DTL_OPTION(ASSUME, "assume", 0, "newest", PLAN, 0, "=newest",
           "lint a version range at its newest version only",
           "lint a version range at its newest allowed version only,\n"
           "not at every behaviour boundary inside it")

DTL_OPTION_GROUP(OUTPUT, "Output:\n")
DTL_OPTION(FORMAT, "format", 'f', "FMT", OUTPUT, 0,
           "=text concise json json-lines sarif github gitlab markdown html", "the report format",
           "text (gcc-style, default) | concise (one line a finding) |\n"
           "json | json-lines | sarif |\n"
           "github (workflow commands) | gitlab (Code Quality) |\n"
           "markdown (job summary) | html (one self-contained page)")
DTL_OPTION(OUTPUT, "output", 'o', "FILE", OUTPUT, 0, "file", "write the report to FILE",
           "write the report to FILE instead of standard output")
DTL_OPTION(COLOR, "color", 0, "WHEN", OUTPUT, 0, "=auto always never", "color the text report",
           "auto (default: when standard output is a terminal, or\n"
           "FORCE_COLOR or CLICOLOR_FORCE is set; never when NO_COLOR\n"
           "is) | always | never; text format only")
DTL_OPTION(STATISTICS, "statistics", 0, NULL, OUTPUT, 0, "", "the number of findings per rule",
           "print the number of findings per rule instead of the findings\n"
           "(text or json)")
DTL_OPTION(SHOW_PLAN, "show-plan", 0, NULL, OUTPUT, 0, "", "print the resolved plan",
           "print the resolved plan instead of the findings: versions and\n"
           "where each came from, defaults and \"auto\" resolved, the\n"
           "stages that apply, the keys of a recipe or framework config\n"
           "read and not read (text or json)")
DTL_OPTION(MEMORY, "memory", 0, NULL, OUTPUT, 0, "",
           "print the per-rank memory of the model states",
           "also print the per-rank memory of the model states (params,\n"
           "gathered, grads, optimizer, quant state, buffers; text after\n"
           "the report, or \"memory\" in each json input)")
DTL_OPTION(TRACE, "trace", 0, "GLOB", OUTPUT, DTL_OPT_REPEAT, "",
           "the dtype history of tensors matching GLOB",
           "also print the dtype history of the tensors matching GLOB,\n"
           "stage by stage (repeatable; after a text report, else on\n"
           "standard error)")
DTL_OPTION(QUIET, "quiet", 'q', NULL, OUTPUT, 0, "", "no versions and summary lines",
           "no versions and summary lines on standard error")
DTL_OPTION(VERBOSE, "verbose", 'v', NULL, OUTPUT, 0, "", "every note of each finding",
           "text: every note, each folded unit or group too (by default\n"
           "a finding shows its first note and counts the others)")

DTL_OPTION_GROUP(RULES, "Rules:\n")
DTL_OPTION(SELECT, "select", 0, "RULES", RULES, DTL_OPT_REPEAT, "rules", "run only these rules",
           "run only these rules (ids, names, id prefixes such as DT1, or\n"
           "ALL; comma-separated, repeatable)")
DTL_OPTION(EXTEND_SELECT, "extend-select", 0, "RULES", RULES, DTL_OPT_REPEAT, "rules",
           "add these rules", "add these rules to the selection")
DTL_OPTION(IGNORE, "ignore", 0, "RULES", RULES, DTL_OPT_REPEAT, "rules", "do not run these rules",
           "do not run these rules")
DTL_OPTION(FAIL_ON, "fail-on", 0, "LEVEL", RULES, 0, "=error warning info",
           "exit 1 at or above LEVEL",
           "exit 1 on findings at or above error | warning | info\n"
           "(default: warning)")
DTL_OPTION(EXIT_ZERO, "exit-zero", 0, NULL, RULES, 0, "", "exit 0 even with findings",
           "exit 0 even when findings reach --fail-on")
DTL_OPTION(LIST_RULES, "list-rules", 0, NULL, RULES, 0, "", "list the rules",
           "list the rules (with -f json: as JSON)")
DTL_OPTION(EXPLAIN, "explain", 0, "RULE", RULES, 0, "rule", "print a rule documentation",
           "print a rule's documentation")

DTL_OPTION_GROUP(CONFIG, "Configuration, baselines:\n")
DTL_OPTION(SETUP, "setup", 0, "NAME", CONFIG, DTL_OPT_REPEAT, "setup",
           "lint this set-up of the config",
           "with no file arguments: lint only this set-up of the config's\n"
           "setups: (repeatable; default: every set-up)")
DTL_OPTION(STDIN_FILENAME, "stdin-filename", 0, "PATH", CONFIG, 0, "file",
           "the name of standard input",
           "name standard input ('-') PATH in the report, and find its\n"
           ".dtypelint.yaml from PATH")
DTL_OPTION(CONFIG, "config", 0, "FILE", CONFIG, 0, "file", "read FILE instead of .dtypelint.yaml",
           "read FILE instead of the nearest .dtypelint.yaml")
DTL_OPTION(NO_CONFIG, "no-config", 0, NULL, CONFIG, 0, "", "read no configuration file",
           "read no configuration file")
DTL_OPTION(BASELINE, "baseline", 0, "FILE", CONFIG, 0, "file", "do not report the findings in FILE",
           "do not report the findings recorded in FILE")
DTL_OPTION(WRITE_BASELINE, "write-baseline", 0, "FILE", CONFIG, 0, "file",
           "record every finding in FILE",
           "record every current finding in FILE (- for standard\n"
           "output) and exit 0")

DTL_OPTION_GROUP(LIMITS, "Limits (also the `limits:` keys of a config file; N may end in K, M "
                         "or G):\n")

DTL_OPTION_GROUP(OTHER, "Other:\n")
DTL_OPTION(VERSION, "version", 0, NULL, OTHER, 0, "", "print the version", "print the version")
DTL_OPTION(HELP, "help", 'h', NULL, OTHER, 0, "", "print the help", "print this help")
