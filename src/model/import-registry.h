/* SPDX-License-Identifier: MIT */
/*
 * Importers of other frameworks' files, found by the kind file-kind.c gives a file. A kind
 * with an importer here is read by it; a kind without one is "not read" (an input error that
 * names it). To read a new framework: write its importer, add one line to the table in
 * import-registry.c, and its files stop being errors.
 */
#ifndef DTL_IMPORT_REGISTRY_H
#define DTL_IMPORT_REGISTRY_H

#include "dtypelint/model/manifest.h"

/* The roles a file plays on the command line */
enum dtl_import_role {
	DTL_ROLE_INPUT,        /* the positional input: *m starts zeroed, dtl_plan_init()ed */
	DTL_ROLE_TRAINER_ARGS, /* --trainer-args: adds to *m, which holds the input's manifest */
};

struct dtl_kind_importer {
	const char *kind; /* a dtl_file_kind id: "verl", "torchtune", ... */
	int (*import)(const char *path, enum dtl_import_role role, struct dtl_arena *arena,
	              const struct dtl_limits *limits, struct dtl_manifest *m,
	              struct dtl_error *error);
};

/* The importer of kind, or NULL. */
const struct dtl_kind_importer *dtl_kind_importer_find(const char *kind);

#endif
