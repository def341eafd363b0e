/* SPDX-License-Identifier: MIT */
/*
 * Arena allocation and string interning for per-run data. Everything allocated from an arena
 * is freed at once by dtl_arena_fini(); nothing in it is freed one by one.
 */
#ifndef DTYPELINT_ARENA_H
#define DTYPELINT_ARENA_H

#include <stddef.h>
#include <stdint.h>

struct dtl_arena_chunk;

struct dtl_arena {
	struct dtl_arena_chunk *head;
	size_t total; /* bytes handed out, for limits and benchmarks */
};

void dtl_arena_init(struct dtl_arena *arena);
void dtl_arena_fini(struct dtl_arena *arena);
/* Zeroed, aligned to 16; NULL only on out of memory or size overflow. */
void *dtl_arena_alloc(struct dtl_arena *arena, size_t size);
/* n * size with overflow check */
void *dtl_arena_calloc(struct dtl_arena *arena, size_t n, size_t size);
/* Copies len bytes and appends a NUL. */
char *dtl_arena_strndup(struct dtl_arena *arena, const char *text, size_t len);
char *dtl_arena_sprintf(struct dtl_arena *arena, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A growable array whose storage lives in the arena (old storage is abandoned on growth). */
struct dtl_vec {
	void *items;
	size_t count;
	size_t capacity;
};
/* Returns a pointer to a new zeroed slot of item_size bytes, or NULL on out of memory. */
void *dtl_vec_push(struct dtl_vec *vec, struct dtl_arena *arena, size_t item_size);

/* 64-bit FNV-1a */
uint64_t dtl_hash_bytes(const void *data, size_t len);

/*
 * A map from byte strings to a value index. Keys are borrowed (they must outlive the map);
 * storage comes from the arena. Used for interning names and for name -> index lookups.
 */
struct dtl_strmap {
	struct dtl_strmap_slot *slots;
	size_t capacity; /* power of two */
	size_t count;
	struct dtl_arena *arena;
};
void dtl_strmap_init(struct dtl_strmap *map, struct dtl_arena *arena);
/* Returns the stored value or -1. */
int64_t dtl_strmap_get(const struct dtl_strmap *map, const char *key, size_t len);
/* Inserts key -> value if absent. Returns the value now stored (the old one when the key
 * existed), or -ENOMEM. */
int64_t dtl_strmap_put(struct dtl_strmap *map, const char *key, size_t len, int64_t value);

#endif
