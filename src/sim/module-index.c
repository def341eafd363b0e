/* SPDX-License-Identifier: MIT */
/*
 * The module tree's index: a module's child found by its parent and its own segment ("mlp"
 * under "model.layers.0"). The modules table holds each key (parent, path, path_len), so a
 * slot is only the child's index and part of its hash: 8 bytes. Every operation reads one
 * segment of the path, never the whole path, so building the tree from names of many
 * segments stays linear in their bytes (a whole-path map hashed and compared every prefix:
 * a name of 200k segments took minutes).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "sim-private.h"

#define K_PARENT 0x9e3779b97f4a7c15ULL

/* Where module m's own (last) segment starts in its path. */
static uint32_t segment_start(const struct dtl_sim *sim, const struct dtl_module *m)
{
	return m->parent == 0 || m->parent == DTL_NONE_INDEX ? 0
	                                                     : sim->modules[m->parent].path_len + 1;
}

static uint64_t key_hash(const struct dtl_module_index *x, uint32_t parent, const char *seg,
                         size_t len)
{
	return dtl_hash_seeded(seg, len, x->seed ^ ((uint64_t)parent * K_PARENT));
}

static size_t home(uint64_t hash, size_t capacity)
{
	return (size_t)(hash >> 32) & (capacity - 1);
}

static uint64_t slot_of(uint64_t hash, uint32_t id)
{
	return (hash & 0xffffffff00000000ULL) | ((uint64_t)id + 1);
}

static void place(uint64_t *slots, size_t capacity, uint64_t slot)
{
	size_t i = home(slot, capacity);
	while (slots[i])
		i = (i + 1) & (capacity - 1);
	slots[i] = slot;
}

/* Rehashing reads each module's own segment again: linear in the bytes of the names. The
 * modules are visited in index order, not slot order: the table, the parents' lengths and
 * the names are then read mostly in sequence, where slot order would miss the cache three
 * times a module. */
static int grow(struct dtl_sim *sim, size_t capacity)
{
	struct dtl_module_index *x = &sim->module_index;
	uint64_t *slots = dtl_arena_calloc(sim->arena, capacity, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t id = 1; id < sim->module_count; id++) { /* every module but the root */
		const struct dtl_module *m = &sim->modules[id];
		uint32_t start = segment_start(sim, m);
		place(slots, capacity,
		      slot_of(key_hash(x, m->parent, m->path + start, m->path_len - start),
		              (uint32_t)id));
	}
	x->slots = slots;
	x->capacity = capacity;
	return 0;
}

void dtl_module_index_init(struct dtl_sim *sim)
{
	struct dtl_module_index *x = &sim->module_index;
	x->slots = NULL;
	x->capacity = x->count = 0;
	/* a seed from where the simulation lives (ASLR), as dtl_strmap_init does */
	x->seed = dtl_hash_bytes(&x, sizeof(x)) ^ (uint64_t)(uintptr_t)sim->arena;
}

int dtl_module_index_reserve(struct dtl_sim *sim, size_t n)
{
	size_t capacity = dtl_hash_capacity(sim->module_index.capacity, n);

	if (!capacity)
		return -ENOMEM;
	return capacity == sim->module_index.capacity ? 0 : grow(sim, capacity);
}

/* The slot where (parent, seg) is or would go. */
static uint64_t *find(const struct dtl_sim *sim, uint32_t parent, const char *seg, size_t len,
                      uint64_t hash)
{
	const struct dtl_module_index *x = &sim->module_index;
	size_t i = home(hash, x->capacity);

	for (;;) {
		uint64_t *slot = &x->slots[i];
		if (!*slot)
			return slot;
		if ((*slot >> 32) == (hash >> 32)) {
			const struct dtl_module *m =
			    &sim->modules[(uint32_t)(*slot & 0xffffffffu) - 1];
			uint32_t start = segment_start(sim, m);
			if (m->parent == parent && m->path_len - start == len &&
			    memcmp(m->path + start, seg, len) == 0)
				return slot;
		}
		i = (i + 1) & (x->capacity - 1);
	}
}

int64_t dtl_module_child(const struct dtl_sim *sim, uint32_t parent, const char *seg, size_t len)
{
	const struct dtl_module_index *x = &sim->module_index;
	if (!x->capacity)
		return -1;
	uint64_t slot = *find(sim, parent, seg, len, key_hash(x, parent, seg, len));
	return slot ? (int64_t)(slot & 0xffffffffu) - 1 : -1;
}

int64_t dtl_module_child_add(struct dtl_sim *sim, uint32_t parent, const char *path, uint32_t start,
                             uint32_t end)
{
	struct dtl_module_index *x = &sim->module_index;
	if ((x->count + 1) * 4 > x->capacity * 3 &&
	    grow(sim, x->capacity ? x->capacity * 2 : 64) < 0)
		return -ENOMEM;
	uint64_t hash = key_hash(x, parent, path + start, end - start);
	uint64_t *slot = find(sim, parent, path + start, end - start, hash);
	if (*slot)
		return (int64_t)(*slot & 0xffffffffu) - 1;
	int64_t id = dtl_sim_new_module(sim, path, end, parent);
	if (id < 0)
		return id;
	*slot = slot_of(hash, (uint32_t)id);
	x->count++;
	return id;
}

int64_t dtl_module_at(const struct dtl_sim *sim, const char *path, size_t len)
{
	int64_t id = 0; /* the root */
	size_t start = 0;

	if (len == 0)
		return sim->module_count ? 0 : -1;
	while (start <= len && id >= 0) {
		const char *dot = memchr(path + start, '.', len - start);
		size_t end = dot ? (size_t)(dot - path) : len;
		id = dtl_module_child(sim, (uint32_t)id, path + start, end - start);
		start = end + 1;
	}
	return id;
}
