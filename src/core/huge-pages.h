/* SPDX-License-Identifier: MIT */
/* Huge-page advice for large buffers (src/core/arena.c): internal to the library (the arena,
 * and src/input/source.c for file buffers). */
#ifndef DTL_CORE_HUGE_PAGES_H
#define DTL_CORE_HUGE_PAGES_H
#ifndef DTL_SEES_CORE
#error "huge-pages.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stddef.h>

/* Advises 2 MiB pages under [p, p + size) when it is 2 MiB or more (arena.c says why);
 * for memory from malloc the caller owns, before it is written. */
void dtl_advise_huge_pages(void *p, size_t size);

#endif
