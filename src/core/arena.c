/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtypelint/arena.h"

#define CHUNK_MIN (64 * 1024)
#define ALIGN     16

struct dtl_arena_chunk {
	struct dtl_arena_chunk *next;
	size_t used;
	size_t size;
	_Alignas(ALIGN) unsigned char data[];
};

void dtl_arena_init(struct dtl_arena *arena)
{
	arena->head = NULL;
	arena->total = 0;
}

void dtl_arena_fini(struct dtl_arena *arena)
{
	struct dtl_arena_chunk *chunk = arena->head;

	while (chunk) {
		struct dtl_arena_chunk *next = chunk->next;
		free(chunk);
		chunk = next;
	}
	arena->head = NULL;
	arena->total = 0;
}

void *dtl_arena_alloc(struct dtl_arena *arena, size_t size)
{
	struct dtl_arena_chunk *chunk = arena->head;
	size_t rounded;

	if (size > SIZE_MAX / 2)
		return NULL;
	rounded = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (rounded == 0)
		rounded = ALIGN;
	if (!chunk || chunk->size - chunk->used < rounded) {
		/* Chunks double with the arena's size so that the number of chunks stays
		 * logarithmic and memory stays linear in what was asked for. */
		size_t want = arena->total / 2 > CHUNK_MIN ? arena->total / 2 : CHUNK_MIN;
		if (want < rounded)
			want = rounded;
		chunk = malloc(sizeof(*chunk) + want);
		if (!chunk)
			return NULL;
		chunk->size = want;
		chunk->used = 0;
		chunk->next = arena->head;
		arena->head = chunk;
	}
	void *p = chunk->data + chunk->used;
	chunk->used += rounded;
	arena->total += rounded;
	memset(p, 0, rounded);
	return p;
}

void *dtl_arena_calloc(struct dtl_arena *arena, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	return dtl_arena_alloc(arena, n * size);
}

char *dtl_arena_strndup(struct dtl_arena *arena, const char *text, size_t len)
{
	char *copy = dtl_arena_alloc(arena, len + 1);

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
	out = dtl_arena_alloc(arena, (size_t)len + 1);
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
		void *items = dtl_arena_calloc(arena, capacity, item_size);
		if (!items)
			return NULL;
		if (vec->count)
			memcpy(items, vec->items, vec->count * item_size);
		vec->items = items;
		vec->capacity = capacity;
	}
	void *slot = (unsigned char *)vec->items + item_size * vec->count++;
	memset(slot, 0, item_size); /* a slot below capacity may hold popped data */
	return slot;
}

uint64_t dtl_hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

struct dtl_strmap_slot {
	const char *key;
	size_t len;
	uint64_t hash;
	int64_t value;
};

void dtl_strmap_init(struct dtl_strmap *map, struct dtl_arena *arena)
{
	map->slots = NULL;
	map->capacity = 0;
	map->count = 0;
	map->arena = arena;
}

static struct dtl_strmap_slot *find_slot(struct dtl_strmap_slot *slots, size_t capacity,
                                         const char *key, size_t len, uint64_t hash)
{
	size_t i = hash & (capacity - 1);

	for (;;) {
		struct dtl_strmap_slot *slot = &slots[i];
		if (!slot->key)
			return slot;
		if (slot->hash == hash && slot->len == len && memcmp(slot->key, key, len) == 0)
			return slot;
		i = (i + 1) & (capacity - 1);
	}
}

int64_t dtl_strmap_get(const struct dtl_strmap *map, const char *key, size_t len)
{
	if (!map->capacity)
		return -1;
	struct dtl_strmap_slot *slot =
	    find_slot(map->slots, map->capacity, key, len, dtl_hash_bytes(key, len));
	return slot->key ? slot->value : -1;
}

static int grow(struct dtl_strmap *map)
{
	size_t capacity = map->capacity ? map->capacity * 2 : 64;
	struct dtl_strmap_slot *slots = dtl_arena_calloc(map->arena, capacity, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < map->capacity; i++) {
		struct dtl_strmap_slot *old = &map->slots[i];
		if (old->key)
			*find_slot(slots, capacity, old->key, old->len, old->hash) = *old;
	}
	map->slots = slots;
	map->capacity = capacity;
	return 0;
}

int64_t dtl_strmap_put(struct dtl_strmap *map, const char *key, size_t len, int64_t value)
{
	uint64_t hash = dtl_hash_bytes(key, len);

	if ((map->count + 1) * 4 > map->capacity * 3 && grow(map) < 0)
		return -ENOMEM;
	struct dtl_strmap_slot *slot = find_slot(map->slots, map->capacity, key, len, hash);
	if (slot->key)
		return slot->value;
	slot->key = key;
	slot->len = len;
	slot->hash = hash;
	slot->value = value;
	map->count++;
	return value;
}
