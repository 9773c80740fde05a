#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "infocache.h"
#include "strpool.h"

struct infocache_slot {
	struct sessioninfo *info; /* NULL: dropped (the slot is reused for its path) */
	size_t bytes;
	uint64_t last_use;
};

struct infocache {
	pthread_mutex_t lock;
	size_t budget, bytes;
	uint64_t clock;
	/* path -> slot; paths stay in the pool once seen (a store has a
	 * bounded number of session files, each path kept once). */
	struct strpool paths;
	struct strmap index;
	struct infocache_slot *slots;
	size_t n, cap;
};

ps_err infocache_new(size_t budget, struct infocache **out)
{
	struct infocache *c = calloc(1, sizeof *c);
	if (!c)
		return PS_ERR_NOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->budget = budget;
	*out = c;
	return PS_OK;
}

void infocache_free(struct infocache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		sessioninfo_free(c->slots[i].info);
	free(c->slots);
	strmap_free(&c->index);
	strpool_free(&c->paths);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void infocache_lock(struct infocache *c)
{
	pthread_mutex_lock(&c->lock);
}

static void infocache_drop(struct infocache *c, struct infocache_slot *s)
{
	sessioninfo_free(s->info);
	s->info = NULL;
	c->bytes -= s->bytes;
	s->bytes = 0;
}

void infocache_unlock(struct infocache *c)
{
	/* A pass per dropped info: the budget is passed by a few at a time
	 * (the infos one search read), so this stays short. */
	while (c->bytes > c->budget) {
		struct infocache_slot *oldest = NULL;
		for (size_t i = 0; i < c->n; i++)
			if (c->slots[i].info && (!oldest || c->slots[i].last_use < oldest->last_use))
				oldest = &c->slots[i];
		if (!oldest)
			break;
		infocache_drop(c, oldest);
	}
	pthread_mutex_unlock(&c->lock);
}

static ps_err infocache_slot_of(struct infocache *c, const char *path, struct infocache_slot **out)
{
	size_t len = strlen(path);
	uint32_t at = strmap_get(&c->index, &c->paths, path, len);
	if (at != PS_NIL) {
		*out = &c->slots[at];
		return PS_OK;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct infocache_slot *slots = realloc(c->slots, cap * sizeof *slots);
		if (!slots)
			return PS_ERR_NOMEM;
		c->slots = slots;
		c->cap = cap;
	}
	uint32_t key;
	ps_err err = strpool_add(&c->paths, path, len, &key);
	if (!err)
		err = strmap_put(&c->index, &c->paths, key, (uint32_t)c->n);
	if (err)
		return err;
	memset(&c->slots[c->n], 0, sizeof c->slots[c->n]);
	*out = &c->slots[c->n++];
	return PS_OK;
}

ps_err infocache_get(struct infocache *c, const char *path, const struct sessioninfo **out)
{
	struct infocache_slot *s;
	ps_err err = infocache_slot_of(c, path, &s);
	if (err)
		return err;
	s->last_use = ++c->clock;
	if (s->info) {
		err = sessioninfo_refresh(s->info, NULL);
		if (err) {
			infocache_drop(c, s);
			return err;
		}
	} else if ((err = sessioninfo_load(path, &s->info))) {
		s->info = NULL;
		return err;
	}
	c->bytes -= s->bytes;
	s->bytes = sessioninfo_bytes(s->info);
	c->bytes += s->bytes;
	*out = s->info;
	return PS_OK;
}

size_t infocache_bytes(struct infocache *c, size_t *count)
{
	pthread_mutex_lock(&c->lock);
	size_t bytes = c->bytes, n = 0;
	for (size_t i = 0; i < c->n; i++)
		n += c->slots[i].info != NULL;
	pthread_mutex_unlock(&c->lock);
	if (count)
		*count = n;
	return bytes;
}
