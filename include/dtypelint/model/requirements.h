/* SPDX-License-Identifier: MIT */
/*
 * The framework versions a project's own dependency files allow: requirements and constraint
 * files (with their -r/-c includes), `pip freeze` and `pip list --format=json` output,
 * pyproject.toml, uv.lock, poetry.lock, pylock.toml, Pipfile.lock, conda environment.yml and
 * conda-lock files, and a Dockerfile's `pip install` lines.
 * Users pin versions there, never in a dtypelint option, so the verdict reads them there: a
 * pin is one version, a range (`deepspeed>=0.18,<0.20`, `trl~=1.6`, a bare name) many.
 */
#ifndef DTYPELINT_REQUIREMENTS_H
#define DTYPELINT_REQUIREMENTS_H
#ifndef DTL_SEES_MODEL
#error                                                                                             \
    "dtypelint/model/requirements.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/core/limits.h"
#include "dtypelint/model/plan.h"
#include "dtypelint/core/version.h"

/* What the files allow of one framework: the versions from lo to hi (unset: open). */
struct dtl_requirement {
	bool present;              /* a file names the framework */
	struct dtl_version lo, hi; /* unset: open */
	bool lo_strict, hi_strict; /* `>` and `<` rather than `>=` and `<=` */
	const char *spec;          /* the specifiers as written: ">=0.18,<0.20"; "" for none */
	struct dtl_loc loc;        /* the line that names it */
};

struct dtl_requirements {
	struct dtl_requirement fw[DTL_FW_COUNT];
	size_t files; /* dependency files read */
};

/* Reads one dependency file (its kind told by its name and content) into the frameworks of
 * *into that no earlier file named. Returns 0, or a negative errno with *error set at the
 * line of a framework's malformed version or of a refused include. */
int dtl_requirements_read(const char *path, struct dtl_arena *arena,
                          const struct dtl_limits *limits, struct dtl_requirements *into,
                          struct dtl_error *error);
/* Reads the dependency files beside start (a file or a folder) and in every folder above it up
 * to its git repository's root, the nearest first (outside a repository: start's folder only).
 * In one folder: lock files, then requirements*.txt and constraints*.txt, then pyproject.toml,
 * then environment.yml, then the Dockerfile. */
int dtl_requirements_find(const char *start, struct dtl_arena *arena,
                          const struct dtl_limits *limits, struct dtl_requirements *into,
                          struct dtl_error *error);
/* Does the requirement allow exactly one version (lo)? */
bool dtl_requirement_pinned(const struct dtl_requirement *r);
/* Is v allowed? */
bool dtl_requirement_allows(const struct dtl_requirement *r, const struct dtl_version *v);

#endif
