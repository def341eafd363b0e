/* SPDX-License-Identifier: MIT */
/* The importers of other frameworks' files, by file kind (import-registry.h). */
#include <string.h>

#include "import-registry.h"

/* { "kind", importer }: one line per framework whose files dtypelint reads by kind */
static const struct dtl_kind_importer importers[] = {
    {NULL, NULL},
};

const struct dtl_kind_importer *dtl_kind_importer_find(const char *kind)
{
	for (size_t i = 0; importers[i].kind; i++)
		if (strcmp(importers[i].kind, kind) == 0)
			return &importers[i];
	return NULL;
}
