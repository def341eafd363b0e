/* SPDX-License-Identifier: MIT */
/*
 * cJSON's allocator while the CLI runs: a bump heap. cJSON allocates every node and string of
 * a parsed document with its own malloc() and frees them one by one in cJSON_Delete(); for a
 * 100k-tensor manifest that is ~1 M mallocs and frees, about a sixth of the run's instructions
 * (tests/bench/README.md). Here an allocation is a pointer bump and a free only counts: when
 * every allocation has been freed (cJSON_Delete of the last tree: doc-json.c deletes its tree
 * before it returns) the heap starts over in its first block, so a document's nodes are gone
 * before the simulation runs. The CLI gives the blocks back at exit
 * (dtl_cli_json_heap_release), and after each input in case a tree was never deleted.
 *
 * cJSON_InitHooks() is process-wide, hence this one piece of global state, owned by the CLI:
 * the library itself never installs hooks (tests and fuzz targets run on cJSON's malloc).
 */
#include <stdint.h>
#include <stdlib.h>

#include <cJSON.h>

#include "cli.h"

#define HEAP_BLOCK (1u << 20)

struct heap_block {
	struct heap_block *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

static struct heap_block *heap; /* the block being filled, then the older ones */
static size_t live;              /* allocations not freed yet */

/* Everything was freed: keep the newest block, emptied, and give the others back. */
static void heap_reset(void)
{
	struct heap_block *rest = heap->next;
	heap->next = NULL;
	heap->used = 0;
	while (rest) {
		struct heap_block *next = rest->next;
		free(rest);
		rest = next;
	}
}

static void *heap_malloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n == 0 || n > SIZE_MAX / 2)
		return NULL;
	if (!heap || heap->size - heap->used < n) {
		size_t size = n > HEAP_BLOCK ? n : HEAP_BLOCK;
		struct heap_block *b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		/* a block made for one large allocation goes behind the one being filled */
		if (heap && size > HEAP_BLOCK) {
			b->next = heap->next;
			heap->next = b;
			b->used = n;
			live++;
			return b->data;
		}
		b->next = heap;
		heap = b;
	}
	void *p = heap->data + heap->used;
	heap->used += n;
	live++;
	return p;
}

static void heap_free(void *p)
{
	if (p && live && --live == 0)
		heap_reset();
}

void dtl_cli_json_heap_install(void)
{
	cJSON_Hooks hooks = {.malloc_fn = heap_malloc, .free_fn = heap_free};
	cJSON_InitHooks(&hooks);
}

void dtl_cli_json_heap_release(void)
{
	live = 0;
	while (heap) {
		struct heap_block *next = heap->next;
		free(heap);
		heap = next;
	}
}
