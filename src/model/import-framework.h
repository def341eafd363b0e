/* SPDX-License-Identifier: MIT */
/*
 * The seam between --framework-config and each framework's importer (import-torchtune.c,
 * ...): the config file's tree, the framework's command-line overrides, and one getter that
 * reads a dotted key the way the framework sees it once the overrides are merged. A new
 * framework is one importer file and one line in import-framework.c's table.
 */
#ifndef DTL_IMPORT_FRAMEWORK_H
#define DTL_IMPORT_FRAMEWORK_H

#include "import-util.h"

/* "key=value" (value read as a YAML scalar, its columns those of the option's text) or
 * "~key" (removed); ignored: a launch argument whose importer does not read it, kept only to
 * be listed as not read */
struct dtl_fw_override {
	const char *key; /* dotted; NUL-terminated, in the arena */
	bool removed;
	bool ignored;
	const struct dtl_node *value; /* NULL when removed */
	struct dtl_schema s; /* the option's or the script's file, for the value's location */
};

struct dtl_framework_importer;

struct dtl_fw_config {
	const struct dtl_framework_importer *importer; /* the one that claimed the file */
	struct dtl_loaded *l; /* the file: its source text, tree and schema */
	const char *path;
	struct dtl_fw_override *overrides;
	size_t override_count;
	struct dtl_arena *arena;
	const struct dtl_limits *limits;
	struct dtl_manifest *m;
	struct dtl_error *error;
	struct dtl_fw_keys *keys; /* what dtl_fw_get read (NULL: not recorded) */
};

/* A value and the schema that locates it (the file's, or an override's). node NULL: absent. */
struct dtl_fw_value {
	const struct dtl_node *node;
	const struct dtl_schema *s;
};

/* The keys dtl_fw_get was asked for (import-framework-keys.c): each once, in the order first
 * read, for --show-plan's keys read and not read */
struct dtl_fw_read {
	const char *key;
	struct dtl_fw_value v;
};
struct dtl_fw_keys {
	struct dtl_strmap seen; /* dotted key -> index in read */
	struct dtl_vec read;    /* struct dtl_fw_read */
	bool oom;               /* a read could not be recorded: the import fails */
};

/* Records that the importer read dotted (its value v), for --show-plan; then, after the import,
 * lists the keys read and those the file and the overrides set that were not read in the
 * manifest's recipe, with a warning when none of them was read. */
void dtl_fw_keys_record(const struct dtl_fw_config *c, const char *dotted, struct dtl_fw_value v);
int dtl_fw_keys_finish(struct dtl_fw_config *c);

/* The value at a dotted key ("model.lora_rank"), the last override of it (or of a mapping
 * above it, for a removal) winning over the file. */
struct dtl_fw_value dtl_fw_get(const struct dtl_fw_config *c, const char *dotted);
/* The value's location (the file's root when absent). */
struct dtl_loc dtl_fw_loc(const struct dtl_fw_config *c, struct dtl_fw_value v);
/* A warning for the command line to print at loc (dropped when out of memory). */
void dtl_fw_warn(struct dtl_fw_config *c, struct dtl_loc loc, const char *message);
/* A boolean or an integer in [lo, hi] at key into *ret: dflt when absent or null; a value of
 * another type or out of range is the schema's input error (negative). */
int dtl_fw_bool(const struct dtl_fw_config *c, const char *key, bool dflt, bool *ret);
int dtl_fw_int(const struct dtl_fw_config *c, const char *key, int64_t lo, int64_t hi, int64_t dflt,
               int64_t *ret);
/* A DT604 not-modelled entry at loc: what is not simulated and what it touches (both in
 * c's arena; NULL from a failed formatting is -ENOMEM). */
int dtl_fw_unmodelled(struct dtl_fw_config *c, struct dtl_loc loc, const char *what,
                      const char *touches);
/* The same, at key's place (the file's root when the key is absent). */
int dtl_fw_unmodelled_key(struct dtl_fw_config *c, const char *key, const char *what,
                          const char *touches);
/* key's place: the value's, or the file's root when absent. */
struct dtl_loc dtl_fw_key_loc(const struct dtl_fw_config *c, const char *key);
/* Whether key has a value that is not null. */
bool dtl_fw_given(const struct dtl_fw_config *c, const char *key);
/* A command-line argument's text at key into *ret (dflt when absent or null): a value that is
 * no string (a number, a boolean) as written, the way argparse receives it. */
int dtl_fw_text(const struct dtl_fw_config *c, const char *key, const char *dflt, const char **ret);

struct dtl_framework_importer {
	const char *kind; /* "torchtune recipe": what the file is, in messages */
	const char *id;   /* "verl": the name a launch command gives it (NULL: none) */
	/* whether it reads a dotted key (NULL: not asked) */
	bool (*reads)(const char *key);
	bool (*detect)(const struct dtl_node *root);
	int (*import)(struct dtl_fw_config *c);
};

extern const struct dtl_framework_importer dtl_importer_torchtune;
extern const struct dtl_framework_importer dtl_importer_torchtitan;
extern const struct dtl_framework_importer dtl_importer_verl;
extern const struct dtl_framework_importer dtl_importer_nemo;
extern const struct dtl_framework_importer dtl_importer_openrlhf;
extern const struct dtl_framework_importer dtl_importer_automodel;
extern const struct dtl_framework_importer dtl_importer_dschat;

#endif
