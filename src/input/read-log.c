/* SPDX-License-Identifier: MIT */
/*
 * Every file this run has read, by device and inode (source.h, dtl_read_log_*): an output
 * (-o, --export, --write-baseline) that is one of them is refused before it is written, whether
 * the file was typed, named by another file (a DeepSpeed JSON named by an accelerate YAML) or
 * found in a folder (a model's shards, config.json, index; a kernel source). One set for the
 * process: reads happen in many layers, and the question is asked once, by the cli.
 */
#include <stdlib.h>

#include "dtypelint/input/source.h"

struct entry {
	dev_t dev;
	ino_t ino;
	bool used;
};

static struct {
	struct entry *slots;
	size_t capacity, count;
	bool lost; /* out of memory once: every output is then suspect */
} log_set;

static size_t slot_of(dev_t dev, ino_t ino, size_t capacity)
{
	uint64_t h = ((uint64_t)dev * 0x9e3779b97f4a7c15u) ^ (uint64_t)ino;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9u;
	return (size_t)(h ^ (h >> 32)) & (capacity - 1);
}

static void insert(struct entry *slots, size_t capacity, dev_t dev, ino_t ino)
{
	size_t i = slot_of(dev, ino, capacity);
	while (slots[i].used && !(slots[i].dev == dev && slots[i].ino == ino))
		i = (i + 1) & (capacity - 1);
	slots[i] = (struct entry){.dev = dev, .ino = ino, .used = true};
}

static bool grow(void)
{
	size_t capacity = log_set.capacity ? log_set.capacity * 2 : 64;
	struct entry *slots = calloc(capacity, sizeof(*slots));
	if (!slots)
		return false;
	for (size_t i = 0; i < log_set.capacity; i++)
		if (log_set.slots[i].used)
			insert(slots, capacity, log_set.slots[i].dev, log_set.slots[i].ino);
	free(log_set.slots);
	log_set.slots = slots;
	log_set.capacity = capacity;
	return true;
}

void dtl_read_log_note(dev_t dev, ino_t ino)
{
	if (dtl_read_log_has(dev, ino))
		return;
	if ((log_set.count + 1) * 2 > log_set.capacity && !grow()) {
		log_set.lost = true;
		return;
	}
	insert(log_set.slots, log_set.capacity, dev, ino);
	log_set.count++;
}

bool dtl_read_log_has(dev_t dev, ino_t ino)
{
	if (log_set.lost)
		return true;
	if (!log_set.capacity)
		return false;
	for (size_t i = slot_of(dev, ino, log_set.capacity); log_set.slots[i].used;
	     i = (i + 1) & (log_set.capacity - 1))
		if (log_set.slots[i].dev == dev && log_set.slots[i].ino == ino)
			return true;
	return false;
}

void dtl_read_log_clear(void)
{
	free(log_set.slots);
	log_set.slots = NULL;
	log_set.capacity = log_set.count = 0;
	log_set.lost = false;
}
