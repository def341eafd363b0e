/* SPDX-License-Identifier: MIT */
/*
 * Arena allocation and string interning for per-run data. Everything allocated from an arena
 * is freed at once by dtl_arena_fini(); nothing in it is freed one by one.
 *
 * Memory comes zeroed from calloc and is never reused, so allocation is a pointer bump with no
 * memset: pages an allocation does not touch cost no memory (a table sized for the worst case
 * costs what it uses). Small allocations share chunks; an allocation of DTL_ARENA_BLOCK_MIN
 * bytes or more gets a block of its own, which lets dtl_vec and dtl_strmap grow without
 * leaving their old storage behind (a block is resized in place or released).
 */
#ifndef DTYPELINT_ARENA_H
#define DTYPELINT_ARENA_H
#ifndef DTL_SEES_CORE
#error "dtypelint/core/arena.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DTL_ARENA_BLOCK_MIN (128 * 1024)

struct dtl_arena_chunk;
struct dtl_arena_block;

struct dtl_arena {
	struct dtl_arena_chunk *head;   /* small allocations; head is the one being filled */
	struct dtl_arena_block *blocks; /* large allocations, one each */
	size_t total;                   /* bytes handed out and still held, for benchmarks */
};

/* An empty arena in caller-owned storage; it allocates nothing until the first dtl_arena_alloc().
 * dtl_arena_fini() frees every allocation at once and leaves the arena empty (init again to
 * reuse it). */
void dtl_arena_init(struct dtl_arena *arena);
void dtl_arena_fini(struct dtl_arena *arena);
/* Frees everything but the newest chunk, which is emptied (and zeroed) for reuse: for an
 * arena that holds one small item at a time. */
void dtl_arena_reset(struct dtl_arena *arena);
/* Zeroed, aligned to 16; NULL only on out of memory or size overflow. */
void *dtl_arena_alloc(struct dtl_arena *arena, size_t size);
/* n * size with overflow check */
void *dtl_arena_calloc(struct dtl_arena *arena, size_t n, size_t size);
/* Grows an allocation of old_size bytes (from this arena) to new_size bytes, keeping its
 * contents and zeroing the rest: in place when it is a block, else by copying (the old
 * storage is abandoned). NULL on out of memory (the old allocation stays valid). */
void *dtl_arena_realloc(struct dtl_arena *arena, void *p, size_t old_size, size_t new_size);
/* Copies len bytes and appends a NUL. Strings are packed (not aligned). */
char *dtl_arena_strndup(struct dtl_arena *arena, const char *text, size_t len);
char *dtl_arena_sprintf(struct dtl_arena *arena, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A growable array whose storage lives in the arena. Small storage that is outgrown is
 * abandoned; storage of DTL_ARENA_BLOCK_MIN bytes or more is resized in place. */
struct dtl_vec {
	void *items;
	size_t count;
	size_t capacity;
};
/* Returns a pointer to a new zeroed slot of item_size bytes, or NULL on out of memory.
 * Pointers into the vector are invalidated by a push that grows it. */
void *dtl_vec_push(struct dtl_vec *vec, struct dtl_arena *arena, size_t item_size);

/* A fast 64-bit hash of bytes (not keyed: use it for tables, never for anything an
 * attacker must not be able to predict). */
uint64_t dtl_hash_bytes(const void *data, size_t len);
/* The same hash under a seed: a table keyed on input bytes takes a seed of its own (from
 * where it lives: ASLR), so no crafted input can collide its keys in advance. */
uint64_t dtl_hash_seeded(const void *data, size_t len, uint64_t seed);
/* The power of two, at least capacity (64 when 0), that holds n keys at most 3/4 full: what
 * an open-addressing table reserves; 0 when n is beyond any table. */
size_t dtl_hash_capacity(size_t capacity, size_t n);

/*
 * A map from byte strings to a value index. Keys are borrowed (they must outlive the map);
 * storage comes from the arena. Used for interning names and for name -> index lookups.
 * Keys are hashed with a per-map seed, so crafted keys cannot all collide.
 */
struct dtl_strmap_slot;
struct dtl_strmap {
	struct dtl_strmap_slot *slots;
	size_t capacity; /* power of two */
	size_t count;
	uint64_t seed;
	struct dtl_arena *arena;
};
/* An empty map whose slots will come from arena (borrowed: it must outlive the map); it cannot
 * fail, the first put allocates. There is no fini: the arena frees the map. */
void dtl_strmap_init(struct dtl_strmap *map, struct dtl_arena *arena);
/* Makes room for n keys in all, so that inserting them does not grow the map. 0 or -ENOMEM. */
int dtl_strmap_reserve(struct dtl_strmap *map, size_t n);
/* Returns the stored value or -1. */
int64_t dtl_strmap_get(const struct dtl_strmap *map, const char *key, size_t len);
/* Starts loading the slot where key's probe begins, for a get or put soon after: in a map of
 * many names every probe is a cache (and TLB) miss, which the work in between hides. Worth
 * it only for a map that misses the caches: dtl_strmap_is_large(). */
void dtl_strmap_prefetch(const struct dtl_strmap *map, const char *key, size_t len);
/* 1 MiB of slots or more: past the second-level cache (a 10k-tensor manifest's maps stay
 * below; a 100k-tensor manifest's, 4 MiB, cost 4 % more instructions prefetched and ran 3-6 %
 * faster, measured run by run against the same build with 8 MiB). */
bool dtl_strmap_is_large(const struct dtl_strmap *map);
/* dtl_strmap_prefetch() and dtl_strmap_put() (below) with the key's hash, from
 * dtl_strmap_hash() for this map, so that a key prefetched and then inserted is hashed once. */
uint64_t dtl_strmap_hash(const struct dtl_strmap *map, const char *key, size_t len);
void dtl_strmap_prefetch_hash(const struct dtl_strmap *map, uint64_t hash);
#define DTL_STRMAP_VALUE_MAX (INT64_C(0xFFFFFFFF))
/* Keys are shorter than this (16 MiB): the slot keeps the length in 24 bits beside a tag. */
#define DTL_STRMAP_KEY_MAX (UINT32_C(1) << 24)
/* Inserts key -> value if absent (0 <= value <= DTL_STRMAP_VALUE_MAX, else -EINVAL; a key of
 * DTL_STRMAP_KEY_MAX bytes or more is -ENOMEM). Returns the value now stored (the old one
 * when the key existed), or -ENOMEM. */
int64_t dtl_strmap_put(struct dtl_strmap *map, const char *key, size_t len, int64_t value);
int64_t dtl_strmap_put_hash(struct dtl_strmap *map, const char *key, size_t len, uint64_t hash,
                            int64_t value);

#endif
