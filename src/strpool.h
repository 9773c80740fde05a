/* An append-only pool of NUL-terminated strings addressed by 32-bit offsets,
 * and a hash index from string to a 32-bit value.  Entries refer to their ids
 * and names by offset so an entry stays a few dozen bytes. */
#ifndef PS_STRPOOL_H
#define PS_STRPOOL_H

#include <stddef.h>
#include <stdint.h>
#include "ps_error.h"

#define PS_NIL UINT32_MAX

struct strpool {
	char *buf;
	size_t len, cap;
};

/* Copies s[0..n) plus a NUL; *off receives its offset. */
ps_err strpool_add(struct strpool *pool, const char *s, size_t n, uint32_t *off);
/* Borrowed pointer, valid until the next strpool_add. */
static inline const char *strpool_get(const struct strpool *pool, uint32_t off)
{
	return pool->buf + off;
}
void strpool_free(struct strpool *pool);

/* Maps the pool string at a key offset to a value.  Keys are compared as
 * NUL-terminated strings, so keys never contain NUL (callers escape).
 * Each slot keeps its key's hash, so that a probe compares strings only
 * where the hashes agree: a session's index looks every id up twice. */
struct strmap_slot {
	uint32_t key;     /* pool offset, PS_NIL when empty */
	uint32_t val;
	uint32_t hash;    /* strpool_hash's low bits: the home slot, and a filter */
};
struct strmap {
	struct strmap_slot *slots;
	size_t cap, count;
};

/* Returns the value for key, or PS_NIL. */
uint32_t strmap_get(const struct strmap *map, const struct strpool *pool, const char *key, size_t n);
/* Sets key (a pool offset) to val, replacing an existing value. */
ps_err strmap_put(struct strmap *map, const struct strpool *pool, uint32_t key, uint32_t val);
void strmap_free(struct strmap *map);

uint64_t strpool_hash(const char *s, size_t n);

#endif
