/* SPDX-License-Identifier: MIT */
/* Shared by the dependency-file readers (requirements.c: specifiers and the YAML/JSON files;
 * requirements-files.c: line-oriented files, includes and finding the files). */
#ifndef DTL_REQUIREMENTS_PRIVATE_H
#define DTL_REQUIREMENTS_PRIVATE_H

#include "dtypelint/input/doc.h"
#include "dtypelint/model/requirements.h"

/* One dependency file being read, with the files it includes */
struct dtl_req_reader {
	struct dtl_arena *arena;
	const struct dtl_limits *limits;
	const char *file;                         /* the file being read, as shown (arena) */
	struct dtl_requirements *into;            /* what earlier files named: left alone */
	struct dtl_requirement got[DTL_FW_COUNT]; /* what this file (and its includes) names */
	int depth;                                /* of -r/-c includes */
	size_t files;                             /* files read, includes counted */
	struct dtl_error *error;
};

/* The framework a distribution name is (PEP 503 normalized; conda's "pytorch" too) */
int dtl_req_framework(const char *name, size_t len, enum dtl_framework *ret);
/* One requirement ("deepspeed[autotuning]>=0.18,<0.20 ; python_version>'3.8'") at loc; names
 * of other distributions are skipped. conda: conda's match specs ("pytorch=2.4.1") too.
 * spec_loc: where to report a malformed specifier (NULL: loc). */
int dtl_req_record(struct dtl_req_reader *rd, const char *text, size_t len, struct dtl_loc loc,
                   bool conda, const struct dtl_loc *spec_loc);
/* environment.yml, conda-lock, Pipfile.lock or pip list --format=json */
int dtl_req_read_tree(struct dtl_req_reader *rd, const struct dtl_node *root);
/* uv.lock, poetry.lock ([[package]]), pylock.toml ([[packages]]) or pyproject.toml (PEP 621
 * dependencies and optional groups, PEP 735 groups, [tool.uv], Poetry's tables) */
int dtl_req_read_toml(struct dtl_req_reader *rd, const struct dtl_node *root);

#endif
