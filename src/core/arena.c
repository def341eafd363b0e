/* SPDX-License-Identifier: MIT */
/*
 * The arenas, vectors, hashes and string maps of arena.h, the core layer's memory that every
 * later layer allocates from: a run's sources, document trees, manifest, tensor table and
 * findings all live in arenas freed at once by dtl_arena_fini(). Small allocations bump a
 * pointer in shared chunks; large ones get a block of their own that realloc can grow without
 * leaving the old storage behind, so that the tables of a 100k-tensor model cost what they
 * use. The string map hashes with a per-map seed,
 * so a crafted manifest cannot make every name collide.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dtypelint/core/arena.h"
#include "bytes.h"
#include "huge-pages.h"

#define CHUNK_MIN (64 * 1024)
#define CHUNK_MAX (2 * 1024 * 1024)
#define ALIGN     16

/* Chunks and blocks come from calloc (zeroed; glibc maps large ones lazily from the kernel)
 * rather than mmap, so that valgrind and LeakSanitizer still see an arena nobody freed. */
struct dtl_arena_chunk {
	struct dtl_arena_chunk *next;
	size_t used;
	size_t size;
	_Alignas(ALIGN) unsigned char data[];
};

struct dtl_arena_block {
	struct dtl_arena_block *next, *prev;
	size_t size;
	_Alignas(ALIGN) unsigned char data[];
};

void dtl_arena_init(struct dtl_arena *arena)
{
	arena->head = NULL;
	arena->blocks = NULL;
	arena->total = 0;
}

static void free_chunks(struct dtl_arena_chunk *chunk)
{
	while (chunk) {
		struct dtl_arena_chunk *next = chunk->next;
		free(chunk);
		chunk = next;
	}
}

static void free_blocks(struct dtl_arena_block *block)
{
	while (block) {
		struct dtl_arena_block *next = block->next;
		free(block);
		block = next;
	}
}

void dtl_arena_fini(struct dtl_arena *arena)
{
	free_chunks(arena->head);
	free_blocks(arena->blocks);
	dtl_arena_init(arena);
}

void dtl_arena_reset(struct dtl_arena *arena)
{
	struct dtl_arena_chunk *keep = arena->head;

	free_blocks(arena->blocks);
	arena->blocks = NULL;
	arena->total = 0;
	if (!keep)
		return;
	free_chunks(keep->next);
	/* allocations are zeroed: zero what was handed out of the chunk kept */
	memset(keep->data, 0, keep->used);
	keep->used = 0;
	keep->next = NULL;
}

/*
 * Asks for 2 MiB pages under an allocation of HUGE_MIN bytes or more (chunks, blocks: what a
 * big manifest's tensors, names and table live in), as glibc does under its
 * glibc.malloc.hugetlb=1 tunable: the whole mapping from its first page, so that the
 * kernel, which merges neighbouring mappings with the same advice, can back every aligned
 * 2 MiB inside them with one page. A 100k-tensor run touched 13.9k pages, one fault and one
 * cleared page each: a fifth of its time was the kernel's (tests/bench/README.md, sixth
 * round). Advice only: where transparent huge pages are off or refused nothing changes, and
 * the pages are touched anyway, so peak RSS stays (1M tensors: the same within 1 %).
 */
#define HUGE_MIN ((size_t)2 << 20)

void dtl_advise_huge_pages(void *p, size_t size)
{
#ifdef MADV_HUGEPAGE
	long page_size = sysconf(_SC_PAGESIZE);
	if (!p || size < HUGE_MIN || page_size <= 0)
		return;
	uintptr_t page = (uintptr_t)page_size;
	uintptr_t start = (uintptr_t)p & ~(page - 1);
	(void)madvise((void *)start, size + ((uintptr_t)p - start), MADV_HUGEPAGE);
#else
	(void)p;
	(void)size;
#endif
}

static void *block_alloc(struct dtl_arena *arena, size_t size)
{
	struct dtl_arena_block *block = calloc(1, sizeof(*block) + size);

	if (!block)
		return NULL;
	dtl_advise_huge_pages(block, sizeof(*block) + size);
	block->size = size;
	block->prev = NULL;
	block->next = arena->blocks;
	if (arena->blocks)
		arena->blocks->prev = block;
	arena->blocks = block;
	arena->total += size;
	return block->data;
}

/* The block whose data is p, or NULL when p is not a block of this arena. */
static struct dtl_arena_block *block_of(const struct dtl_arena *arena, const void *p)
{
	for (struct dtl_arena_block *b = arena->blocks; b; b = b->next)
		if (b->data == p)
			return b;
	return NULL;
}

static void block_link_replace(struct dtl_arena *arena, struct dtl_arena_block *b)
{
	if (b->prev)
		b->prev->next = b;
	else
		arena->blocks = b;
	if (b->next)
		b->next->prev = b;
}

/* Grows the block at p to size bytes, keeping its contents; the bytes past the old size are
 * NOT zeroed. realloc moves large blocks with mremap: no copy, no old storage left behind. */
static void *block_resize(struct dtl_arena *arena, void *p, size_t size)
{
	struct dtl_arena_block *b = block_of(arena, p);

	if (!b || size > SIZE_MAX - sizeof(*b))
		return NULL;
	size_t old = b->size;
	struct dtl_arena_block *bigger = realloc(b, sizeof(*b) + size);
	if (!bigger)
		return NULL;
	dtl_advise_huge_pages(bigger, sizeof(*bigger) + size);
	bigger->size = size;
	block_link_replace(arena, bigger);
	arena->total = arena->total - old + size;
	return bigger->data;
}

static void block_release(struct dtl_arena *arena, void *p)
{
	struct dtl_arena_block *b = block_of(arena, p);

	if (!b)
		return;
	if (b->prev)
		b->prev->next = b->next;
	else
		arena->blocks = b->next;
	if (b->next)
		b->next->prev = b->prev;
	arena->total -= b->size;
	free(b);
}

/* size bytes at the given alignment (a power of two <= ALIGN) from the head chunk. */
static void *bump(struct dtl_arena *arena, size_t size, size_t align)
{
	struct dtl_arena_chunk *chunk = arena->head;
	size_t start = chunk ? (chunk->used + align - 1) & ~(align - 1) : 0;

	if (!chunk || start > chunk->size || chunk->size - start < size) {
		/* chunks grow with the arena up to CHUNK_MAX: few chunks for a small arena,
		 * and at most CHUNK_MAX left unused in the last one */
		size_t want = arena->total / 2;
		if (want < CHUNK_MIN)
			want = CHUNK_MIN;
		if (want > CHUNK_MAX)
			want = CHUNK_MAX;
		if (want < size)
			want = size;
		chunk = calloc(1, sizeof(*chunk) + want);
		if (!chunk)
			return NULL;
		dtl_advise_huge_pages(chunk, sizeof(*chunk) + want);
		chunk->size = want;
		chunk->used = 0;
		chunk->next = arena->head;
		arena->head = chunk;
		start = 0;
	}
	chunk->used = start + size;
	arena->total += size;
	return chunk->data + start;
}

void *dtl_arena_alloc(struct dtl_arena *arena, size_t size)
{
	if (size > SIZE_MAX / 2)
		return NULL;
	if (size >= DTL_ARENA_BLOCK_MIN)
		return block_alloc(arena, size);
	return bump(arena, size ? size : 1, ALIGN);
}

void *dtl_arena_calloc(struct dtl_arena *arena, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	return dtl_arena_alloc(arena, n * size);
}

void *dtl_arena_realloc(struct dtl_arena *arena, void *p, size_t old_size, size_t new_size)
{
	void *bigger = NULL;

	if (new_size <= old_size)
		return p;
	if (p && old_size >= DTL_ARENA_BLOCK_MIN) {
		bigger = block_resize(arena, p, new_size);
		if (bigger)
			memset((unsigned char *)bigger + old_size, 0, new_size - old_size);
	}
	if (!bigger) {
		bigger = dtl_arena_alloc(arena, new_size);
		if (!bigger)
			return NULL;
		if (old_size)
			memcpy(bigger, p, old_size);
	}
	return bigger;
}

char *dtl_arena_strndup(struct dtl_arena *arena, const char *text, size_t len)
{
	char *copy;

	if (len >= SIZE_MAX / 2)
		return NULL;
	copy =
	    len + 1 >= DTL_ARENA_BLOCK_MIN ? block_alloc(arena, len + 1) : bump(arena, len + 1, 1);
	if (!copy)
		return NULL;
	memcpy(copy, text, len);
	copy[len] = '\0';
	return copy;
}

char *dtl_arena_sprintf(struct dtl_arena *arena, const char *fmt, ...)
{
	va_list args;
	int len;
	char *out;

	va_start(args, fmt);
	len = vsnprintf(NULL, 0, fmt, args);
	va_end(args);
	if (len < 0)
		return NULL;
	out = (size_t)len + 1 >= DTL_ARENA_BLOCK_MIN ? block_alloc(arena, (size_t)len + 1)
	                                             : bump(arena, (size_t)len + 1, 1);
	if (!out)
		return NULL;
	va_start(args, fmt);
	vsnprintf(out, (size_t)len + 1, fmt, args);
	va_end(args);
	return out;
}

void *dtl_vec_push(struct dtl_vec *vec, struct dtl_arena *arena, size_t item_size)
{
	if (vec->count == vec->capacity) {
		size_t capacity = vec->capacity ? vec->capacity * 2 : 16;
		void *items = NULL;
		if (item_size && capacity > SIZE_MAX / 2 / item_size)
			return NULL;
		/* storage that is a block grows in place; smaller storage is copied */
		if (vec->capacity * item_size >= DTL_ARENA_BLOCK_MIN)
			items = block_resize(arena, vec->items, capacity * item_size);
		if (!items) {
			items = dtl_arena_alloc(arena, capacity * item_size);
			if (!items)
				return NULL;
			if (vec->count)
				memcpy(items, vec->items, vec->count * item_size);
		}
		vec->items = items;
		vec->capacity = capacity;
	}
	void *slot = (unsigned char *)vec->items + item_size * vec->count++;
	memset(slot, 0, item_size); /* a slot below capacity may hold popped data */
	return slot;
}

/* ---- hashing ------------------------------------------------------------------------------ */

static uint64_t load64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* 64x64 -> 128-bit multiply, folded (the wyhash mixer) */
static uint64_t mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

#define K0 0xa0761d6478bd642fULL
#define K1 0xe7037ed1a0b428dbULL
#define K2 0x8ebc6af09c88c6e3ULL

/* 16 bytes a step; the tail is read as (possibly overlapping) words, never past the end. */
static uint64_t hash_seeded(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	size_t n = len;
	uint64_t h = seed ^ K0, a, b;

	while (n > 16) {
		h = mix(load64(p) ^ K1, load64(p + 8) ^ h);
		p += 16;
		n -= 16;
	}
	if (n > 8) {
		a = load64(p);
		b = load64(p + n - 8);
	} else {
		uint64_t w = dtl_bytes_short((const char *)p, n);
		a = (uint32_t)w;
		b = w >> 32;
	}
	return mix(K1 ^ (uint64_t)len, mix(a ^ K1, b ^ h ^ K2));
}

uint64_t dtl_hash_bytes(const void *data, size_t len)
{
	return hash_seeded(data, len, 0);
}

uint64_t dtl_hash_seeded(const void *data, size_t len, uint64_t seed)
{
	return hash_seeded(data, len, seed);
}

/* ---- the map -------------------------------------------------------------------------------- */

/* 16 bytes: a map of a million names is 16-32 MB. Eight bits of the hash are kept beside the
 * length as a tag: tensor names and module paths are mostly of a few lengths, so without it a
 * probe would read (a cache miss) every key of the same length it meets. Keys are shorter than
 * DTL_STRMAP_KEY_MAX. */
#define TAG_BITS 8
struct dtl_strmap_slot {
	const char *key;  /* NULL: empty */
	uint32_t len_tag; /* len << TAG_BITS | tag */
	uint32_t value;
};

static uint32_t len_tag(size_t len, uint64_t hash)
{
	return (uint32_t)len << TAG_BITS | (uint32_t)(hash & ((1u << TAG_BITS) - 1));
}

void dtl_strmap_init(struct dtl_strmap *map, struct dtl_arena *arena)
{
	map->slots = NULL;
	map->capacity = 0;
	map->count = 0;
	map->arena = arena;
	/* a per-map seed from where the map and its arena live (ASLR): no global state, and
	 * no fixed hash a crafted manifest could collide */
	map->seed = mix((uint64_t)(uintptr_t)map ^ K2, (uint64_t)(uintptr_t)arena ^ K1);
}

/* Where a key's probe begins (the tag takes the hash's low bits). */
static size_t home_slot(uint64_t hash, size_t capacity)
{
	return (size_t)(hash >> 32) & (capacity - 1);
}

static struct dtl_strmap_slot *find_slot(struct dtl_strmap_slot *slots, size_t capacity,
                                         const char *key, uint32_t len, uint64_t hash)
{
	size_t i = home_slot(hash, capacity);

	for (;;) {
		struct dtl_strmap_slot *slot = &slots[i];
		if (!slot->key)
			return slot;
		if (slot->len_tag == len_tag(len, hash) && memcmp(slot->key, key, len) == 0)
			return slot;
		i = (i + 1) & (capacity - 1);
	}
}

uint64_t dtl_strmap_hash(const struct dtl_strmap *map, const char *key, size_t len)
{
	return hash_seeded(key, len, map->seed);
}

int64_t dtl_strmap_get(const struct dtl_strmap *map, const char *key, size_t len)
{
	if (!map->capacity || len >= DTL_STRMAP_KEY_MAX)
		return -1;
	struct dtl_strmap_slot *slot = find_slot(map->slots, map->capacity, key, (uint32_t)len,
	                                         hash_seeded(key, len, map->seed));
	return slot->key ? (int64_t)slot->value : -1;
}

bool dtl_strmap_is_large(const struct dtl_strmap *map)
{
	return map->capacity * sizeof(struct dtl_strmap_slot) >= (1u << 20);
}

void dtl_strmap_prefetch_hash(const struct dtl_strmap *map, uint64_t hash)
{
	if (map->capacity)
		__builtin_prefetch(&map->slots[home_slot(hash, map->capacity)]);
}

void dtl_strmap_prefetch(const struct dtl_strmap *map, const char *key, size_t len)
{
	if (map->capacity && len < DTL_STRMAP_KEY_MAX)
		dtl_strmap_prefetch_hash(map, hash_seeded(key, len, map->seed));
}

/* Rehashes into capacity slots (a power of two); the old slots are released when they are a
 * block, so a map that grew to n keys holds about its final size, not twice it. */
static int rehash(struct dtl_strmap *map, size_t capacity)
{
	struct dtl_strmap_slot *slots = dtl_arena_calloc(map->arena, capacity, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < map->capacity; i++) {
		struct dtl_strmap_slot *old = &map->slots[i];
		if (!old->key)
			continue;
		uint32_t len = old->len_tag >> TAG_BITS;
		uint64_t hash = hash_seeded(old->key, len, map->seed);
		*find_slot(slots, capacity, old->key, len, hash) = *old;
	}
	if (map->slots && map->capacity * sizeof(*slots) >= DTL_ARENA_BLOCK_MIN)
		block_release(map->arena, map->slots);
	map->slots = slots;
	map->capacity = capacity;
	return 0;
}

size_t dtl_hash_capacity(size_t capacity, size_t n)
{
	if (n > SIZE_MAX / 8)
		return 0;
	if (!capacity)
		capacity = 64;
	while (n * 4 > capacity * 3)
		capacity *= 2;
	return capacity;
}

int dtl_strmap_reserve(struct dtl_strmap *map, size_t n)
{
	size_t capacity = dtl_hash_capacity(map->capacity, n);

	if (!capacity)
		return -ENOMEM;
	return capacity == map->capacity ? 0 : rehash(map, capacity);
}

int64_t dtl_strmap_put(struct dtl_strmap *map, const char *key, size_t len, int64_t value)
{
	if (len >= DTL_STRMAP_KEY_MAX)
		return -ENOMEM;
	return dtl_strmap_put_hash(map, key, len, hash_seeded(key, len, map->seed), value);
}

int64_t dtl_strmap_put_hash(struct dtl_strmap *map, const char *key, size_t len, uint64_t hash,
                            int64_t value)
{
	if (len >= DTL_STRMAP_KEY_MAX)
		return -ENOMEM;
	if (value < 0 || value > DTL_STRMAP_VALUE_MAX)
		return -EINVAL;
	if ((map->count + 1) * 4 > map->capacity * 3 &&
	    rehash(map, map->capacity ? map->capacity * 2 : 64) < 0)
		return -ENOMEM;
	struct dtl_strmap_slot *slot =
	    find_slot(map->slots, map->capacity, key, (uint32_t)len, hash);
	if (slot->key)
		return slot->value;
	slot->key = key;
	slot->len_tag = len_tag(len, hash);
	slot->value = (uint32_t)value;
	map->count++;
	return value;
}
