/* FNV-1a, 64 bits: the one hash of short keys here (hash tables, the
 * cache's file names and stamps).  Fast and deterministic, not made to
 * resist keys chosen to collide, which only the caller's own data could
 * be.  Fold bytes into h, starting from FNV1A_BASIS:
 *
 *     uint64_t h = fnv1a_add_str(FNV1A_BASIS, project);
 *     h = fnv1a_add(h, "/", 1);
 */
#ifndef PS_FNV_H
#define PS_FNV_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_BASIS 14695981039346656037ULL
#define FNV1A_PRIME 1099511628211ULL

static inline uint64_t fnv1a_add(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * FNV1A_PRIME;
	return h;
}

static inline uint64_t fnv1a_add_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * FNV1A_PRIME;
	return h;
}

#endif
