#include <stdlib.h>
#include <string.h>
#include "fnv.h"
#include "strpool.h"

ps_err strpool_add(struct strpool *pool, const char *s, size_t n, uint32_t *off)
{
	if (pool->len + n + 1 > UINT32_MAX - 1)
		return PS_ERR_TOOBIG;
	if (pool->len + n + 1 > pool->cap) {
		size_t cap = pool->cap ? pool->cap : 4096;
		while (cap < pool->len + n + 1)
			cap *= 2;
		char *buf = realloc(pool->buf, cap);
		if (!buf)
			return PS_ERR_NOMEM;
		pool->buf = buf;
		pool->cap = cap;
	}
	memcpy(pool->buf + pool->len, s, n);
	pool->buf[pool->len + n] = '\0';
	*off = (uint32_t)pool->len;
	pool->len += n + 1;
	return PS_OK;
}

void strpool_free(struct strpool *pool)
{
	free(pool->buf);
	memset(pool, 0, sizeof *pool);
}

/* FNV-1a from a basis one digit short of FNV's own, as it was first
 * written: the ids derived for version-1 sessions and the ~h names of
 * escaped file names are made with it, and a name once shown must stay. */
#define STRPOOL_HASH_BASIS 1469598103934665603ULL

uint64_t strpool_hash(const char *s, size_t n)
{
	return fnv1a_add(STRPOOL_HASH_BASIS, s, n);
}

static int strmap_key_eq(const struct strpool *pool, const struct strmap_slot *slot, uint32_t hash, const char *key,
			 size_t n)
{
	if (slot->hash != hash)
		return 0;
	const char *k = strpool_get(pool, slot->key);
	return strncmp(k, key, n) == 0 && k[n] == '\0';
}

uint32_t strmap_get(const struct strmap *map, const struct strpool *pool, const char *key, size_t n)
{
	if (!map->cap)
		return PS_NIL;
	size_t mask = map->cap - 1;
	uint32_t hash = (uint32_t)strpool_hash(key, n);
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		if (map->slots[i].key == PS_NIL)
			return PS_NIL;
		if (strmap_key_eq(pool, &map->slots[i], hash, key, n))
			return map->slots[i].val;
	}
}

static ps_err strmap_grow(struct strmap *map)
{
	size_t cap = map->cap ? map->cap * 2 : 64;
	struct strmap_slot *slots = malloc(cap * sizeof *slots);
	if (!slots)
		return PS_ERR_NOMEM;
	for (size_t i = 0; i < cap; i++)
		slots[i].key = PS_NIL;
	for (size_t j = 0; j < map->cap; j++) {
		if (map->slots[j].key == PS_NIL)
			continue;
		size_t i = map->slots[j].hash & (cap - 1);
		while (slots[i].key != PS_NIL)
			i = (i + 1) & (cap - 1);
		slots[i] = map->slots[j];
	}
	free(map->slots);
	map->slots = slots;
	map->cap = cap;
	return PS_OK;
}

ps_err strmap_put(struct strmap *map, const struct strpool *pool, uint32_t key, uint32_t val)
{
	if ((map->count + 1) * 4 > map->cap * 3) {
		ps_err err = strmap_grow(map);
		if (err)
			return err;
	}
	const char *k = strpool_get(pool, key);
	size_t n = strlen(k);
	size_t mask = map->cap - 1;
	uint32_t hash = (uint32_t)strpool_hash(k, n);
	size_t i = hash & mask;
	for (; map->slots[i].key != PS_NIL; i = (i + 1) & mask) {
		if (strmap_key_eq(pool, &map->slots[i], hash, k, n)) {
			map->slots[i].val = val;
			return PS_OK;
		}
	}
	map->slots[i] = (struct strmap_slot){ key, val, hash };
	map->count++;
	return PS_OK;
}

void strmap_free(struct strmap *map)
{
	free(map->slots);
	memset(map, 0, sizeof *map);
}
