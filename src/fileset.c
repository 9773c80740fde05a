#include <stdint.h>
#include <stdlib.h>
#include "fileset.h"

struct fileset_slot {
	dev_t dev;
	ino_t ino;
};

static size_t fileset_slot_of(const struct fileset *set, dev_t dev, ino_t ino)
{
	return (size_t)(((uint64_t)dev * 0x9E3779B97F4A7C15ull) ^ (uint64_t)ino) & (set->cap - 1);
}

int fileset_meet(struct fileset *set, dev_t dev, ino_t ino)
{
	if (!ino)
		ino = 1; /* 0 marks an empty slot; no real file has it */
	if (2 * (set->n + 1) > set->cap) {
		struct fileset bigger = { NULL, set->cap ? set->cap * 2 : 256, 0 };
		if (!(bigger.slots = calloc(bigger.cap, sizeof *bigger.slots)))
			return -1;
		for (size_t i = 0; i < set->cap; i++)
			if (set->slots[i].ino)
				fileset_meet(&bigger, set->slots[i].dev, set->slots[i].ino);
		free(set->slots);
		*set = bigger;
	}
	size_t i = fileset_slot_of(set, dev, ino);
	for (; set->slots[i].ino; i = (i + 1) & (set->cap - 1))
		if (set->slots[i].dev == dev && set->slots[i].ino == ino)
			return 1;
	set->slots[i].dev = dev;
	set->slots[i].ino = ino;
	set->n++;
	return 0;
}

void fileset_free(struct fileset *set)
{
	free(set->slots);
	set->slots = NULL;
	set->cap = set->n = 0;
}
