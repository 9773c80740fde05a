#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "fanout.h"
#include "infocache.h"
#include "giveback.h"
#include "infokeeper.h"
#include "lockorder.h"
#include "strpool.h"

/* Keeping a session holds its info and that info frozen, about half the
 * file's size: two threads each keeping a 100 MB session were most of a
 * huge store's peak memory, and two keeping sessions of a few megabytes
 * each, with what their arenas kept, still took it past 128 MB.  Files
 * this large are kept one at a time, and the memory is given back after
 * each. */
#define KEEPER_LARGE_FILE ((off_t)2 << 20)

struct infokeeper {
	struct infocache *cache; /* borrowed */
	pthread_mutex_t large;   /* held while a large file is kept */
	pthread_mutex_t lock;
	pthread_cond_t work;
	/* Every path ever queued, once: its pool offset and whether it is
	 * queued now; the queue holds their indices, queue[head..n) still
	 * to keep. */
	struct keeper_path {
		uint32_t off;
		int queued;
	} *known;
	size_t n_known, cap_known;
	struct strpool paths;
	struct strmap index;     /* path -> index in known */
	uint32_t *queue;
	size_t head, n, cap;
	int stopping;
	unsigned held;           /* searches running: infokeeper_hold */
	struct timespec deadline; /* CLOCK_MONOTONIC, once stopping */
	size_t kept;
	pthread_t threads[FANOUT_MAX_THREADS];
	unsigned n_threads;
};

static void keeper_on_read(void *ctx, const char *path)
{
	infokeeper_add(ctx, path);
}

static int keeper_past(const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec || (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* The next path to keep (new), or NULL when the keeper stops. */
static char *keeper_take(struct infokeeper *k)
{
	char *path = NULL;
	lockorder_lock(&k->lock, LOCK_KEEPER);
	while ((k->head == k->n || k->held) && !k->stopping)
		pthread_cond_wait(&k->work, &k->lock);
	if (k->head < k->n && !(k->stopping && keeper_past(&k->deadline))) {
		struct keeper_path *kp = &k->known[k->queue[k->head++]];
		kp->queued = 0;
		path = strdup(strpool_get(&k->paths, kp->off));
		if (k->head == k->n) {
			k->head = k->n = 0;
		} else if (k->head >= 1024 && k->head > k->n / 2) { /* never drained: the taken part goes */
			memmove(k->queue, k->queue + k->head, (k->n - k->head) * sizeof *k->queue);
			k->n -= k->head;
			k->head = 0;
		}
	}
	lockorder_unlock(&k->lock, LOCK_KEEPER);
	return path;
}

static void *keeper_main(void *arg)
{
	struct infokeeper *k = arg;
	struct sched_param idle = { 0 };
	int at_idle = pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) == 0;
	char *path;
	while ((path = keeper_take(k))) {
		if (at_idle) {
			/* Stopping: nothing else to give way to any more, and a
			 * busy machine must not starve the last writes. */
			lockorder_lock(&k->lock, LOCK_KEEPER);
			int stopping = k->stopping;
			lockorder_unlock(&k->lock, LOCK_KEEPER);
			if (stopping && pthread_setschedparam(pthread_self(), SCHED_OTHER, &idle) == 0)
				at_idle = 0;
		}
		struct stat st;
		int large = stat(path, &st) == 0 && st.st_size >= KEEPER_LARGE_FILE;
		if (large)
			lockorder_lock(&k->large, LOCK_KEEPER_LARGE);
		int wrote = infocache_keep(k->cache, path);
		if (large) {
			giveback_free_memory();
			lockorder_unlock(&k->large, LOCK_KEEPER_LARGE);
		}
		free(path);
		/* Committed at once: while a batch is open, a search's reads of
		 * the disk wait for the writer's connection. */
		if (wrote)
			infocache_flush(k->cache);
		lockorder_lock(&k->lock, LOCK_KEEPER);
		k->kept += wrote > 0;
		int drained = k->head == k->n;
		lockorder_unlock(&k->lock, LOCK_KEEPER);
		if (drained)
			giveback_free_memory();
	}
	return NULL;
}

static void keeper_free(struct infokeeper *k)
{
	free(k->queue);
	free(k->known);
	strpool_free(&k->paths);
	strmap_free(&k->index);
	pthread_cond_destroy(&k->work);
	pthread_mutex_destroy(&k->lock);
	pthread_mutex_destroy(&k->large);
	free(k);
}

ps_err infokeeper_start(struct infocache *cache, unsigned threads, struct infokeeper **out)
{
	*out = NULL;
	if (!infocache_has_disk(cache))
		return PS_OK;
	struct infokeeper *k = calloc(1, sizeof *k);
	if (!k)
		return PS_ERR_NOMEM;
	k->cache = cache;
	pthread_mutex_init(&k->large, NULL);
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->work, NULL);
	if (threads < 1)
		threads = 1;
	if (threads > FANOUT_MAX_THREADS)
		threads = FANOUT_MAX_THREADS;
	for (unsigned i = 0; i < threads; i++)
		if (pthread_create(&k->threads[k->n_threads], NULL, keeper_main, k) == 0)
			k->n_threads++;
	if (!k->n_threads) {
		keeper_free(k);
		return PS_ERR_IO;
	}
	infocache_set_keeper(cache, keeper_on_read, k);
	*out = k;
	return PS_OK;
}

void infokeeper_add(struct infokeeper *k, const char *path)
{
	if (!k)
		return;
	size_t len = strlen(path);
	lockorder_lock(&k->lock, LOCK_KEEPER);
	uint32_t at = strmap_get(&k->index, &k->paths, path, len);
	if (k->stopping || (at != PS_NIL && k->known[at].queued))
		goto out;
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 256;
		uint32_t *q = realloc(k->queue, cap * sizeof *q);
		if (!q)
			goto out;
		k->queue = q;
		k->cap = cap;
	}
	if (at == PS_NIL) {
		uint32_t off;
		if (k->n_known == k->cap_known) {
			size_t cap = k->cap_known ? 2 * k->cap_known : 256;
			struct keeper_path *more = realloc(k->known, cap * sizeof *more);
			if (!more)
				goto out;
			k->known = more;
			k->cap_known = cap;
		}
		if (strpool_add(&k->paths, path, len, &off) != PS_OK ||
		    strmap_put(&k->index, &k->paths, off, (uint32_t)k->n_known) != PS_OK)
			goto out;
		at = (uint32_t)k->n_known++;
		k->known[at].off = off;
	}
	k->known[at].queued = 1;
	k->queue[k->n++] = at;
	pthread_cond_signal(&k->work);
out:
	lockorder_unlock(&k->lock, LOCK_KEEPER);
}

void infokeeper_hold(struct infokeeper *k)
{
	if (!k)
		return;
	lockorder_lock(&k->lock, LOCK_KEEPER);
	k->held++;
	lockorder_unlock(&k->lock, LOCK_KEEPER);
}

void infokeeper_release(struct infokeeper *k)
{
	if (!k)
		return;
	lockorder_lock(&k->lock, LOCK_KEEPER);
	if (k->held && !--k->held)
		pthread_cond_broadcast(&k->work);
	lockorder_unlock(&k->lock, LOCK_KEEPER);
}

size_t infokeeper_pending(struct infokeeper *k)
{
	if (!k)
		return 0;
	lockorder_lock(&k->lock, LOCK_KEEPER);
	size_t n = k->n - k->head;
	lockorder_unlock(&k->lock, LOCK_KEEPER);
	return n;
}

void infokeeper_stop(struct infokeeper *k, long finish_ms, size_t *kept, size_t *left)
{
	if (kept)
		*kept = 0;
	if (left)
		*left = 0;
	if (!k)
		return;
	lockorder_lock(&k->lock, LOCK_KEEPER);
	k->stopping = 1;
	clock_gettime(CLOCK_MONOTONIC, &k->deadline);
	k->deadline.tv_sec += finish_ms / 1000;
	k->deadline.tv_nsec += (finish_ms % 1000) * 1000000L;
	if (k->deadline.tv_nsec >= 1000000000L) {
		k->deadline.tv_sec++;
		k->deadline.tv_nsec -= 1000000000L;
	}
	pthread_cond_broadcast(&k->work);
	lockorder_unlock(&k->lock, LOCK_KEEPER);
	for (unsigned i = 0; i < k->n_threads; i++)
		pthread_join(k->threads[i], NULL);
	infocache_set_keeper(k->cache, NULL, NULL);
	infocache_flush(k->cache);
	if (kept)
		*kept = k->kept;
	if (left)
		*left = k->n - k->head;
	keeper_free(k);
}
