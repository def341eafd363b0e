/* SPDX-License-Identifier: MIT */
/*
 * What a file looks like, from its name and its first bytes: a dtypelint manifest, a
 * DeepSpeed JSON, or a verl config, a GitHub workflow, a notebook, a shell script... An input
 * dtypelint cannot read is then named for what it is, with the option or format that would
 * read it, never taken for something else (a verl YAML read as TRL arguments with no key
 * known, and a clean run). The signatures are a table in src/model/file-kind.c; importers of
 * other frameworks' files register by kind in src/model/import-registry.c and take precedence
 * over the "not read" error.
 */
#ifndef DTYPELINT_FILE_KIND_H
#define DTYPELINT_FILE_KIND_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/file-kind.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/model/manifest.h"
#include "dtypelint/input/source.h"

/* What reads a kind of file today. */
enum dtl_file_reader {
	DTL_READ_NONE,         /* nothing in dtypelint */
	DTL_READ_MANIFEST,     /* the input: a dtypelint manifest */
	DTL_READ_FOLDER,       /* the input, as the model folder that holds it */
	DTL_READ_DEEPSPEED,    /* --deepspeed */
	DTL_READ_ACCELERATE,   /* --accelerate */
	DTL_READ_PEFT,         /* --peft */
	DTL_READ_TRAINER_ARGS, /* --trainer-args */
	DTL_READ_CONFIG,       /* --config (a .dtypelint.yaml) */
	DTL_READ_LAUNCH,       /* --launch (a shell script or command line) */
};

struct dtl_file_kind {
	const char *id;   /* stable: "verl", "github-workflow", "shell", ... */
	const char *what; /* "a verl config" */
	enum dtl_file_reader reader;
	const char *hint; /* what to do instead, for a kind no option reads */
};

struct dtl_file_guess {
	const struct dtl_file_kind *kind;
	const char *evidence; /* "its name", or the text that gave it away ("actor_rollout_ref:") */
	struct dtl_loc loc;   /* where the evidence is (line 1 col 1 for the name) */
};

/* Guesses source's kind: always one (the last ones are "a YAML document", "a text file"). */
void dtl_file_kind_guess(const struct dtl_source *source, struct dtl_file_guess *ret);

/* Whether kind is a fallback ("a YAML document"): nothing tells what the file is for. */
bool dtl_file_kind_generic(const struct dtl_file_kind *kind);

/* The option that reads a reader's files ("--deepspeed FILE"), NULL for none. */
const char *dtl_file_reader_option(enum dtl_file_reader reader);

/*
 * Fills *error for a file that cannot be read as role ("the input", "--trainer-args"): names
 * it, what it looks like and where that shows, the top-level keys it has (none read), and
 * the option that reads it or the kind's hint. Returns -EINVAL (or -ENOMEM).
 */
int dtl_file_not_read(const struct dtl_source *source, const struct dtl_file_guess *guess,
                      const char *role, struct dtl_arena *arena, const struct dtl_limits *limits,
                      struct dtl_error *error);

/* Reads path and fills *error as dtl_file_not_read() when it looks like something role
 * cannot read: a kind whose reader is not accepted, or a plain YAML or JSON document whose
 * top level has no key own_key() takes (NULL: any document). Returns -EINVAL then,
 * 0 when the file may be what role reads (*ret_guess set either way), or the read's error
 * (ret_guess->kind NULL). */
int dtl_file_check_role(const char *path, const char *role, const enum dtl_file_reader *accepted,
                        size_t accepted_count, bool (*own_key)(const char *key, size_t len),
                        struct dtl_arena *arena, const struct dtl_limits *limits,
                        struct dtl_file_guess *ret_guess, struct dtl_error *error);

#endif
