/* SPDX-License-Identifier: MIT */
/*
 * A launch script or command line (--launch), read the way a user reads it and never run:
 * shell words (quotes, line continuations, comments, VAR=x assignments, export, $VAR and
 * ${VAR:-default} from the script's own assignments), then the launch commands dtypelint
 * knows (accelerate launch, deepspeed, torchrun, python, llamafactory-cli train, axolotl
 * train) and the files, flags and environment variables among their arguments that carry
 * dtypes, python -m verl.trainer.main_ppo's config and key=value overrides (read by the
 * verl importer) and OpenRLHF's openrlhf.cli.* arguments (the openrlhf importer). A heredoc
 * taken by `read NAME` is split into words where $NAME is used. Each setting keeps its line and
 * column in the script. A variable the script does not set is named, never guessed.
 */
#ifndef DTYPELINT_LAUNCH_H
#define DTYPELINT_LAUNCH_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/launch.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/model/manifest.h"

struct dtl_launch {
	const char *file;
	const char *launcher; /* "accelerate launch", "deepspeed", ...; NULL: none found */
	struct dtl_loc launcher_loc;
	const char *deepspeed_file, *accelerate_file, *trainer_args_file; /* resolved paths */
	struct dtl_loc deepspeed_loc, accelerate_loc, trainer_args_loc;
	enum dtl_precision precision; /* --bf16 / --fp16 / --mixed_precision / env */
	struct dtl_loc precision_loc;
	enum dtl_strategy strategy; /* --use_fsdp + FSDP_VERSION, --use_deepspeed, env */
	struct dtl_loc strategy_loc;
	/* the training script's --fsdp (its words; NULL for a bare --fsdp, which is True) and
	 * --fsdp_config (a resolved path): TrainingArguments' own FSDP
	 * (dtl_import_trainer_fsdp); trainer_fsdp_given false: no --fsdp */
	bool trainer_fsdp_given;
	const char *trainer_fsdp, *trainer_fsdp_config;
	struct dtl_loc trainer_fsdp_loc, trainer_fsdp_config_loc;
	int64_t world_size; /* --num_processes, --nproc_per_node, --num_gpus x --nnodes */
	struct dtl_loc world_size_loc;
	/* struct dtl_input_warning: unresolved variables, parts not read */
	struct dtl_vec warnings;
	/* struct dtl_unmodelled: rollout engines, tensor and pipeline parallelism (DT604) */
	struct dtl_vec unmodelled;
	/* a framework that takes its own config and key=value overrides (python -m
	 * verl.trainer.main_ppo): its importer's id ("verl"), NULL when none; its config file
	 * (NULL: the framework's packaged defaults); its overrides in order (struct
	 * dtl_framework_override, import.h), each at its word */
	const char *framework;
	struct dtl_loc framework_loc;
	const char *framework_file;
	struct dtl_loc framework_file_loc;
	struct dtl_vec framework_overrides;
};

/* Reads the script at path (no command found: an input error that says so). */
int dtl_launch_read(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                    struct dtl_launch *ret_launch, struct dtl_error *error);
/* The name of the command line after --launch -- in locations: "<command line>:1:COL". */
#define DTL_LAUNCH_COMMAND_LINE "<command line>"
/* Reads argv (--launch -- CMD...) as a one-line script: the words joined by spaces, each
 * quoted as the shell reads it back (shlex.join), so that COL counts in that line. Its
 * relative paths are taken from the working directory. */
int dtl_launch_read_argv(const char *const *argv, size_t argc, struct dtl_arena *arena,
                         const struct dtl_limits *limits, struct dtl_launch *ret_launch,
                         struct dtl_error *error);
/* dtl_compose() applies a launch (compose.h: launch_file): its files through their importers
 * (a kind an option also names is taken from the option), then its flags, each kept at its
 * place in the script. */

#endif
