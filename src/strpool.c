#include <stdlib.h>
#include <string.h>
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

/* FNV-1a: ids are short, and this is deterministic, which the derived ids
 * of version-1 sessions rely on. */
uint64_t strpool_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static int strmap_key_eq(const struct strpool *pool, uint32_t off, const char *key, size_t n)
{
	const char *k = strpool_get(pool, off);
	return strncmp(k, key, n) == 0 && k[n] == '\0';
}

uint32_t strmap_get(const struct strmap *map, const struct strpool *pool, const char *key, size_t n)
{
	if (!map->cap)
		return PS_NIL;
	size_t mask = map->cap - 1;
	for (size_t i = strpool_hash(key, n) & mask;; i = (i + 1) & mask) {
		if (map->keys[i] == PS_NIL)
			return PS_NIL;
		if (strmap_key_eq(pool, map->keys[i], key, n))
			return map->vals[i];
	}
}

static ps_err strmap_grow(struct strmap *map, const struct strpool *pool)
{
	size_t cap = map->cap ? map->cap * 2 : 64;
	uint32_t *keys = malloc(cap * sizeof *keys);
	uint32_t *vals = malloc(cap * sizeof *vals);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return PS_ERR_NOMEM;
	}
	memset(keys, 0xff, cap * sizeof *keys);
	for (size_t j = 0; j < map->cap; j++) {
		if (map->keys[j] == PS_NIL)
			continue;
		const char *k = strpool_get(pool, map->keys[j]);
		size_t i = strpool_hash(k, strlen(k)) & (cap - 1);
		while (keys[i] != PS_NIL)
			i = (i + 1) & (cap - 1);
		keys[i] = map->keys[j];
		vals[i] = map->vals[j];
	}
	free(map->keys);
	free(map->vals);
	map->keys = keys;
	map->vals = vals;
	map->cap = cap;
	return PS_OK;
}

ps_err strmap_put(struct strmap *map, const struct strpool *pool, uint32_t key, uint32_t val)
{
	if ((map->count + 1) * 4 > map->cap * 3) {
		ps_err err = strmap_grow(map, pool);
		if (err)
			return err;
	}
	const char *k = strpool_get(pool, key);
	size_t n = strlen(k);
	size_t mask = map->cap - 1;
	size_t i = strpool_hash(k, n) & mask;
	for (; map->keys[i] != PS_NIL; i = (i + 1) & mask) {
		if (strmap_key_eq(pool, map->keys[i], k, n)) {
			map->vals[i] = val;
			return PS_OK;
		}
	}
	map->keys[i] = key;
	map->vals[i] = val;
	map->count++;
	return PS_OK;
}

void strmap_free(struct strmap *map)
{
	free(map->keys);
	free(map->vals);
	memset(map, 0, sizeof *map);
}
