#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "diskmemo.h"
#include "infocache.h"
#include "infofreeze.h"
#include "lockorder.h"
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
	struct diskmemo *disk; /* borrowed; NULL: nothing kept across mounts */
	void (*keeper)(void *ctx, const char *path); /* infocache_set_keeper's */
	void *keeper_ctx;
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
	lockorder_lock(&c->lock, LOCK_INFO_CACHE);
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
	lockorder_unlock(&c->lock, LOCK_INFO_CACHE);
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

void infocache_set_disk(struct infocache *c, struct diskmemo *disk)
{
	c->disk = disk;
}

void infocache_set_keeper(struct infocache *c, void (*fn)(void *ctx, const char *path), void *ctx)
{
	c->keeper = fn;
	c->keeper_ctx = ctx;
}

int infocache_disk_keeps_any(struct infocache *c)
{
	return c->disk && diskmemo_has_prefix(c->disk, "i", 1);
}

int infocache_has_disk(const struct infocache *c)
{
	return c->disk != NULL;
}

void infocache_flush(struct infocache *c)
{
	diskmemo_flush(c->disk);
}

/* The disk's key of the info of path, in key: 0, -1 on memory. */
static int infocache_key(const char *path, struct buf *key)
{
	return buf_putc(key, 'i') || buf_puts(key, path) ? -1 : 0;
}

/* The info of path as kept on disk for the file as it is now (st), or
 * NULL. */
static struct sessioninfo *infocache_thaw(struct infocache *c, const char *path, const struct stat *st)
{
	struct filestamp stamp;
	struct buf kept = BUF_INIT, key = BUF_INIT;
	struct sessioninfo *info = NULL;
	filestamp_of(st, &stamp);
	if (!infocache_key(path, &key) &&
	    diskmemo_get(c->disk, key.data, key.len, &stamp, &kept) == 1 &&
	    infofreeze_take(path, kept.data, kept.len, &info) != PS_OK)
		info = NULL;
	buf_free(&kept);
	buf_free(&key);
	return info;
}

/* Whether info is what the file as stat'ed (st) holds. */
static int infocache_current(const struct sessioninfo *info, const struct stat *st)
{
	return info->dev == st->st_dev && info->ino == st->st_ino && info->size == (uint64_t)st->st_size &&
	       info->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Keeps info on disk when it is what the file as stat'ed (st) holds: at
 * once, or through the keeper (infocache_set_keeper).  Cache locked, or
 * info the caller's own.  The keeper is set before any other thread uses
 * the cache, so it is read without the lock. */
static void infocache_freeze(struct infocache *c, const struct sessioninfo *info, const struct stat *st)
{
	struct filestamp stamp;
	struct buf val = BUF_INIT, key = BUF_INIT;
	if (!infocache_current(info, st))
		return;
	if (c->keeper) {
		c->keeper(c->keeper_ctx, info->path);
		return;
	}
	filestamp_of(st, &stamp);
	if (!infocache_key(info->path, &key) && infofreeze_put(info, &val) == PS_OK)
		diskmemo_put(c->disk, key.data, key.len, &stamp, val.data, val.len);
	buf_free(&val);
	buf_free(&key);
}

static int infocache_same_ctime(const struct stat *a, const struct stat *b)
{
	return a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int infocache_keep(struct infocache *c, const char *path)
{
	struct stat before, after;
	struct filestamp stamp;
	struct buf key = BUF_INIT, val = BUF_INIT;
	struct sessioninfo *read = NULL;
	int frozen = 0;
	if (!c->disk || stat(path, &before) != 0 || infocache_key(path, &key) < 0)
		goto out;
	filestamp_of(&before, &stamp);
	if (diskmemo_has(c->disk, key.data, key.len, &stamp))
		goto out;
	/* The info held, when it is of the file as it is: frozen under the
	 * lock (a copy of its bytes), written after. */
	lockorder_lock(&c->lock, LOCK_INFO_CACHE);
	uint32_t at = strmap_get(&c->index, &c->paths, path, strlen(path));
	if (at != PS_NIL && c->slots[at].info && infocache_current(c->slots[at].info, &before))
		frozen = infofreeze_put(c->slots[at].info, &val) == PS_OK;
	lockorder_unlock(&c->lock, LOCK_INFO_CACHE);
	if (!frozen) {
		buf_free(&val);
		frozen = sessioninfo_load(path, &read) == PS_OK && infocache_current(read, &before) &&
			 stat(path, &after) == 0 && infocache_same_ctime(&before, &after) &&
			 infofreeze_put(read, &val) == PS_OK;
		sessioninfo_free(read);
	}
	if (frozen)
		diskmemo_put(c->disk, key.data, key.len, &stamp, val.data, val.len);
out:
	buf_free(&val);
	buf_free(&key);
	return frozen;
}

int infocache_holds(struct infocache *c, const char *path)
{
	lockorder_lock(&c->lock, LOCK_INFO_CACHE);
	uint32_t at = strmap_get(&c->index, &c->paths, path, strlen(path));
	int held = at != PS_NIL && c->slots[at].info;
	lockorder_unlock(&c->lock, LOCK_INFO_CACHE);
	return held;
}

int infocache_kept_bytes(struct infocache *c, const char *path, const struct filestamp *stamp, struct buf *out)
{
	size_t len = strlen(path);
	lockorder_lock(&c->lock, LOCK_INFO_CACHE);
	uint32_t at = strmap_get(&c->index, &c->paths, path, len);
	int held = at != PS_NIL && c->slots[at].info;
	lockorder_unlock(&c->lock, LOCK_INFO_CACHE);
	if (!c->disk || held)
		return 0;
	struct buf key = BUF_INIT;
	int found = infocache_key(path, &key) < 0 ? -1
									: diskmemo_get(c->disk, key.data, key.len, stamp, out);
	buf_free(&key);
	return found;
}

/* Without the lock: the info of path as kept on disk for the file as it
 * is, else read from the file (and then kept on disk when the file did
 * not change while it was read).  Reading a file no info is held for is
 * the long part of a first search, and must not hold up every other
 * caller of the cache (sessions.md, other searches, a fan-out's other
 * threads). */
static ps_err infocache_read(struct infocache *c, const char *path, struct sessioninfo **out, int *thawed)
{
	struct stat before, after;
	/* The stat stamps what is kept on disk: taken before the read, and
	 * the info kept only when the read saw that same file. */
	int stamped = c->disk && stat(path, &before) == 0;
	*thawed = stamped && (*out = infocache_thaw(c, path, &before));
	if (*thawed)
		return PS_OK; /* kept for this very stamp: the refresh reads nothing */
	ps_err err = sessioninfo_load(path, out);
	if (err) {
		*out = NULL;
		return err;
	}
	if (stamped && stat(path, &after) == 0 && infocache_same_ctime(&before, &after))
		infocache_freeze(c, *out, &before);
	return PS_OK;
}

/* infocache_get, or infocache_adopt when fresh is given (stolen). */
static ps_err infocache_take(struct infocache *c, const char *path, struct sessioninfo *fresh,
			     const struct sessioninfo **out)
{
	struct infocache_slot *s;
	struct sessioninfo *read = NULL;
	int changed = 1, thawed = 0;
	ps_err err = infocache_slot_of(c, path, &s);
	if (err) {
		sessioninfo_free(fresh);
		return err;
	}
	if (!s->info && fresh) {
		struct stat now;
		s->info = fresh;
		changed = 0;
		if (c->disk && stat(path, &now) == 0)
			infocache_freeze(c, fresh, &now); /* when it is still what it read */
	} else if (!s->info) {
		lockorder_unlock(&c->lock, LOCK_INFO_CACHE);
		err = infocache_read(c, path, &read, &thawed);
		lockorder_lock(&c->lock, LOCK_INFO_CACHE);
		if (err) {
			sessioninfo_free(read);
			return err;
		}
		/* The slots may have moved meanwhile, and another caller may
		 * have read the same file: the info held then wins. */
		if ((err = infocache_slot_of(c, path, &s))) {
			sessioninfo_free(read);
			return err;
		}
		if (s->info) {
			sessioninfo_free(read);
		} else {
			s->info = read;
			changed = thawed; /* a thawed info is refreshed as a held one */
		}
	} else {
		sessioninfo_free(fresh); /* one is held: it wins, brought up to date */
		fresh = NULL;
	}
	s->last_use = ++c->clock;
	if (changed) {
		struct stat before, after;
		int stamped = c->disk && stat(path, &before) == 0;
		err = sessioninfo_refresh(s->info, &changed);
		if (err) {
			infocache_drop(c, s);
			return err;
		}
		if (changed && stamped && stat(path, &after) == 0 && infocache_same_ctime(&before, &after))
			infocache_freeze(c, s->info, &before);
	}
	c->bytes -= s->bytes;
	s->bytes = sessioninfo_bytes(s->info);
	c->bytes += s->bytes;
	*out = s->info;
	return PS_OK;
}

ps_err infocache_get(struct infocache *c, const char *path, const struct sessioninfo **out)
{
	return infocache_take(c, path, NULL, out);
}

ps_err infocache_adopt(struct infocache *c, struct sessioninfo *fresh, const struct sessioninfo **out)
{
	/* fresh, and its path with it, may be freed on the way. */
	char *path = strdup(fresh->path);
	if (!path) {
		sessioninfo_free(fresh);
		return PS_ERR_NOMEM;
	}
	ps_err err = infocache_take(c, path, fresh, out);
	free(path);
	return err;
}

size_t infocache_bytes(struct infocache *c, size_t *count)
{
	lockorder_lock(&c->lock, LOCK_INFO_CACHE);
	size_t bytes = c->bytes, n = 0;
	for (size_t i = 0; i < c->n; i++)
		n += c->slots[i].info != NULL;
	lockorder_unlock(&c->lock, LOCK_INFO_CACHE);
	if (count)
		*count = n;
	return bytes;
}
