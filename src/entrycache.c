#include <pthread.h>
#include <stdlib.h>
#include "entrycache.h"
#include "lockorder.h"

#define ENTRYCACHE_BUCKETS (1u << 14)

struct entrycache_item {
	uint64_t serial, generation;
	uint32_t idx;
	size_t cost;
	json_t *tree;                         /* the cache's reference */
	struct entrycache_item *chain;        /* next in the bucket */
	struct entrycache_item *newer, *older; /* recency list */
};

static struct {
	pthread_mutex_t lock;
	struct entrycache_item *buckets[ENTRYCACHE_BUCKETS];
	struct entrycache_item *newest, *oldest;
	size_t limit, bytes, count;
	uint64_t hits, misses;
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER, .limit = ENTRYCACHE_DEFAULT_BYTES };

static size_t entrycache_bucket(uint64_t serial, uint64_t generation, uint32_t idx)
{
	uint64_t h = serial * 0x9E3779B97F4A7C15ull ^ generation * 0xC2B2AE3D27D4EB4Full ^ idx;
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 32;
	return (size_t)(h & (ENTRYCACHE_BUCKETS - 1));
}

static void entrycache_unlist(struct entrycache_item *it)
{
	if (it->newer)
		it->newer->older = it->older;
	else
		cache.newest = it->older;
	if (it->older)
		it->older->newer = it->newer;
	else
		cache.oldest = it->newer;
	it->newer = it->older = NULL;
}

static void entrycache_list_front(struct entrycache_item *it)
{
	it->older = cache.newest;
	it->newer = NULL;
	if (cache.newest)
		cache.newest->newer = it;
	cache.newest = it;
	if (!cache.oldest)
		cache.oldest = it;
}

/* Under the lock: unlinks the item from the table and the recency list
 * and pushes it on *victims; its tree is released outside the lock by
 * entrycache_free_victims (freeing a big tree takes a while). */
static void entrycache_remove(struct entrycache_item *it, struct entrycache_item **victims)
{
	struct entrycache_item **link = &cache.buckets[entrycache_bucket(it->serial, it->generation, it->idx)];
	while (*link != it)
		link = &(*link)->chain;
	*link = it->chain;
	entrycache_unlist(it);
	cache.bytes -= it->cost;
	cache.count--;
	it->chain = *victims;
	*victims = it;
}

/* Under the lock: evicts the oldest items until the bound holds. */
static void entrycache_shrink(struct entrycache_item **victims)
{
	while (cache.oldest && cache.bytes > cache.limit)
		entrycache_remove(cache.oldest, victims);
}

static void entrycache_free_victims(struct entrycache_item *victims)
{
	while (victims) {
		struct entrycache_item *next = victims->chain;
		json_decref(victims->tree);
		free(victims);
		victims = next;
	}
}

void entrycache_set_limit(size_t bytes)
{
	struct entrycache_item *victims = NULL;
	lockorder_lock(&cache.lock, LOCK_ENTRY_CACHE);
	cache.limit = bytes;
	entrycache_shrink(&victims);
	lockorder_unlock(&cache.lock, LOCK_ENTRY_CACHE);
	entrycache_free_victims(victims);
}

json_t *entrycache_get(uint64_t serial, uint64_t generation, uint32_t idx)
{
	json_t *tree = NULL;
	lockorder_lock(&cache.lock, LOCK_ENTRY_CACHE);
	for (struct entrycache_item *it = cache.buckets[entrycache_bucket(serial, generation, idx)]; it; it = it->chain) {
		if (it->serial == serial && it->generation == generation && it->idx == idx) {
			entrycache_unlist(it);
			entrycache_list_front(it);
			tree = json_incref(it->tree);
			break;
		}
	}
	if (tree)
		cache.hits++;
	else
		cache.misses++;
	lockorder_unlock(&cache.lock, LOCK_ENTRY_CACHE);
	return tree;
}

void entrycache_put(uint64_t serial, uint64_t generation, uint32_t idx, json_t *entry, size_t line_len)
{
	struct entrycache_item *victims = NULL;
	size_t cost = ENTRYCACHE_COST(line_len);

	lockorder_lock(&cache.lock, LOCK_ENTRY_CACHE);
	if (!entry || cost > cache.limit / 8)
		goto out;
	size_t b = entrycache_bucket(serial, generation, idx);
	for (struct entrycache_item *it = cache.buckets[b]; it; it = it->chain)
		if (it->serial == serial && it->generation == generation && it->idx == idx)
			goto out; /* another thread parsed it meanwhile */
	struct entrycache_item *it = malloc(sizeof *it);
	if (!it)
		goto out; /* a cache may forget */
	it->serial = serial;
	it->generation = generation;
	it->idx = idx;
	it->cost = cost;
	it->tree = json_incref(entry);
	it->chain = cache.buckets[b];
	cache.buckets[b] = it;
	entrycache_list_front(it);
	cache.bytes += cost;
	cache.count++;
	entrycache_shrink(&victims);
out:
	lockorder_unlock(&cache.lock, LOCK_ENTRY_CACHE);
	entrycache_free_victims(victims);
}

void entrycache_clear(void)
{
	size_t limit;
	lockorder_lock(&cache.lock, LOCK_ENTRY_CACHE);
	limit = cache.limit;
	lockorder_unlock(&cache.lock, LOCK_ENTRY_CACHE);
	entrycache_set_limit(0);
	lockorder_lock(&cache.lock, LOCK_ENTRY_CACHE);
	cache.limit = limit;
	lockorder_unlock(&cache.lock, LOCK_ENTRY_CACHE);
}

void entrycache_stats(struct entrycache_stats *out)
{
	lockorder_lock(&cache.lock, LOCK_ENTRY_CACHE);
	out->hits = cache.hits;
	out->misses = cache.misses;
	out->bytes = cache.bytes;
	out->count = cache.count;
	lockorder_unlock(&cache.lock, LOCK_ENTRY_CACHE);
}
