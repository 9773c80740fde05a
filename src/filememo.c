/* Values derived from session files, by key and stat stamp (filememo.h):
 * a chained hash table for the keys and a list in order of use for the
 * budget, so a lookup, a put and each eviction cost O(1). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "diskmemo.h"
#include "filememo.h"
#include "lockorder.h"
#include "strpool.h"

struct filememo_item {
	struct filememo_item *chain;       /* hash chain */
	struct filememo_item *newer, *older; /* use order */
	struct filestamp stamp;
	size_t key_len, len, bytes;
	char *key;                         /* key_len bytes, then len of value */
};

struct filememo {
	pthread_mutex_t lock;
	size_t budget, bytes, count;
	struct filememo_item **table;
	size_t table_size;                 /* a power of two, or 0 */
	struct filememo_item *newest, *oldest;
	struct diskmemo *disk;             /* borrowed; NULL: memory only */
};

ps_err filememo_new(size_t budget, struct filememo **out)
{
	struct filememo *m = calloc(1, sizeof *m);
	if (!m)
		return PS_ERR_NOMEM;
	pthread_mutex_init(&m->lock, NULL);
	m->budget = budget;
	*out = m;
	return PS_OK;
}

void filememo_free(struct filememo *m)
{
	if (!m)
		return;
	for (struct filememo_item *it = m->newest, *next; it; it = next) {
		next = it->older;
		free(it->key);
		free(it);
	}
	free(m->table);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static int filememo_same_stamp(const struct filestamp *a, const struct filestamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
	       a->ctime_ns == b->ctime_ns;
}

static struct filememo_item **filememo_link(struct filememo *m, const char *key, size_t key_len)
{
	if (!m->table_size)
		return NULL;
	struct filememo_item **link = &m->table[strpool_hash(key, key_len) & (m->table_size - 1)];
	while (*link && ((*link)->key_len != key_len || memcmp((*link)->key, key, key_len) != 0))
		link = &(*link)->chain;
	return link;
}

static void filememo_unlist(struct filememo *m, struct filememo_item *it)
{
	if (it->newer)
		it->newer->older = it->older;
	else
		m->newest = it->older;
	if (it->older)
		it->older->newer = it->newer;
	else
		m->oldest = it->newer;
	it->newer = it->older = NULL;
}

static void filememo_list_newest(struct filememo *m, struct filememo_item *it)
{
	it->older = m->newest;
	it->newer = NULL;
	if (m->newest)
		m->newest->newer = it;
	m->newest = it;
	if (!m->oldest)
		m->oldest = it;
}

/* Takes the item at *link out of the table and the list, and frees it. */
static void filememo_drop(struct filememo *m, struct filememo_item **link)
{
	struct filememo_item *it = *link;
	*link = it->chain;
	filememo_unlist(m, it);
	m->bytes -= it->bytes;
	m->count--;
	free(it->key);
	free(it);
}

static ps_err filememo_put_memory(struct filememo *m, const char *key, size_t key_len,
				  const struct filestamp *stamp, const void *data, size_t len);

int filememo_get(struct filememo *m, const char *key, size_t key_len, const struct filestamp *stamp,
		 struct buf *out)
{
	int res = 0;
	if (!m)
		return 0;
	lockorder_lock(&m->lock, LOCK_FILE_MEMO);
	struct filememo_item **link = filememo_link(m, key, key_len);
	if (link && *link) {
		struct filememo_item *it = *link;
		if (!filememo_same_stamp(&it->stamp, stamp)) {
			filememo_drop(m, link);
		} else if (buf_put(out, it->key + key_len, it->len)) {
			res = -1;
		} else {
			filememo_unlist(m, it);
			filememo_list_newest(m, it);
			res = 1;
		}
	}
	lockorder_unlock(&m->lock, LOCK_FILE_MEMO);
	if (res == 0 && m->disk) {
		size_t start = out->len;
		res = diskmemo_get(m->disk, key, key_len, stamp, out);
		if (res == 1)
			(void)filememo_put_memory(m, key, key_len, stamp, out->data + start, out->len - start);
	}
	return res;
}

/* Doubles the table (from 64) when it holds more items than buckets. */
static void filememo_grow(struct filememo *m)
{
	if (m->count < m->table_size)
		return;
	size_t size = m->table_size ? m->table_size * 2 : 64;
	struct filememo_item **table = calloc(size, sizeof *table);
	if (!table)
		return; /* longer chains, no harm */
	for (size_t i = 0; i < m->table_size; i++) {
		for (struct filememo_item *it = m->table[i], *next; it; it = next) {
			next = it->chain;
			struct filememo_item **link = &table[strpool_hash(it->key, it->key_len) & (size - 1)];
			it->chain = *link;
			*link = it;
		}
	}
	free(m->table);
	m->table = table;
	m->table_size = size;
}

ps_err filememo_put(struct filememo *m, const char *key, size_t key_len, const struct filestamp *stamp,
		    const void *data, size_t len)
{
	if (m && m->disk)
		diskmemo_put(m->disk, key, key_len, stamp, data, len);
	return filememo_put_memory(m, key, key_len, stamp, data, len);
}

void filememo_set_disk(struct filememo *m, struct diskmemo *disk)
{
	if (m)
		m->disk = disk;
}

void filememo_flush(struct filememo *m)
{
	if (m)
		diskmemo_flush(m->disk);
}

static ps_err filememo_put_memory(struct filememo *m, const char *key, size_t key_len,
				  const struct filestamp *stamp, const void *data, size_t len)
{
	size_t bytes = sizeof(struct filememo_item) + key_len + len + 2 * sizeof(void *);
	if (!m)
		return PS_OK;
	lockorder_lock(&m->lock, LOCK_FILE_MEMO);
	struct filememo_item **link = filememo_link(m, key, key_len);
	if (link && *link)
		filememo_drop(m, link);
	if (bytes > m->budget) {
		lockorder_unlock(&m->lock, LOCK_FILE_MEMO);
		return PS_OK;
	}
	while (m->oldest && m->bytes + bytes > m->budget)
		filememo_drop(m, filememo_link(m, m->oldest->key, m->oldest->key_len));
	struct filememo_item *it = calloc(1, sizeof *it);
	char *copy = malloc(key_len + len ? key_len + len : 1);
	if (!it || !copy) {
		free(it);
		free(copy);
		lockorder_unlock(&m->lock, LOCK_FILE_MEMO);
		return PS_ERR_NOMEM;
	}
	memcpy(copy, key, key_len);
	if (len)
		memcpy(copy + key_len, data, len);
	it->key = copy;
	it->key_len = key_len;
	it->len = len;
	it->bytes = bytes;
	it->stamp = *stamp;
	filememo_grow(m);
	if (!m->table_size) {
		free(it);
		free(copy);
		lockorder_unlock(&m->lock, LOCK_FILE_MEMO);
		return PS_ERR_NOMEM;
	}
	link = &m->table[strpool_hash(key, key_len) & (m->table_size - 1)];
	it->chain = *link;
	*link = it;
	filememo_list_newest(m, it);
	m->bytes += bytes;
	m->count++;
	lockorder_unlock(&m->lock, LOCK_FILE_MEMO);
	return PS_OK;
}

size_t filememo_bytes(struct filememo *m, size_t *count)
{
	lockorder_lock(&m->lock, LOCK_FILE_MEMO);
	size_t bytes = m->bytes;
	if (count)
		*count = m->count;
	lockorder_unlock(&m->lock, LOCK_FILE_MEMO);
	return bytes;
}
