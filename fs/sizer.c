/* Sizes entry files ahead of a reader that stats them all.
 *
 * An entry file's size is its rendered length, so the first `ls -l` (or
 * `find -printf %s`, or a file manager) of a session renders every entry,
 * one lookup at a time: the kernel sends them one by one, and a single
 * daemon thread renders while the other cores idle.  When a stat finds an
 * entry not sized yet, the sizer threads take the session from there and
 * size the rest in batches, off the session's lock (content_batch_*), so the
 * lookups that follow find their sizes known.  What a stat asks for before
 * the sizers got there is rendered by the stat itself, as without them.
 *
 * One session at a time: the latest hint wins, as the reader has moved on.
 * Only what a stat asked for starts it, never a plain listing, so `ls` of
 * every session does not render the store; and nothing while entry files
 * are being read (grep -r stats a directory's files, then reads them:
 * there the reads build the texts, and sizing ahead only competes). */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "caller.h"
#include "lockorder.h"
#include "pisessionfs.h"
#include "sizer.h"
#include "content.h"

#define SIZER_MAX_THREADS 4
/* How long after an entry file is opened for reading hints are ignored. */
#define SIZER_QUIET_NS 1000000000
/* Lines held per batch: the session's lock is taken once per batch. */
#define SIZER_BATCH_BYTES (1u << 20)

struct sizer {
	struct psfs *fs;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t threads[SIZER_MAX_THREADS];
	unsigned n_threads;
	int stopping;
	/* The job, guarded by lock: entries [start, end) then [0, start). */
	int active;
	uint64_t job;          /* bumps with each new job */
	char project[STORE_PROJECT_MAX];
	char session[NAME_MAX + 1];
	uint64_t generation;
	uint32_t start, end, next;
	int wrapped;
	/* Until when hints are ignored (CLOCK_MONOTONIC ns): entry files are
	 * being read, so their texts are built by the reads, and the spare
	 * core serves the reader better than sizing what it will read anyway
	 * (a first grep -r took 10% longer with the sizers on). */
	int64_t quiet_until;
};

/* Claims the next range of the job, [*from, *to); 0 when it is done. */
static int sizer_claim(struct sizer *sz, uint32_t *from, uint32_t *to)
{
	/* A range of entries taken at once by one thread; its batches skip
	 * what is sized already. */
	const uint32_t span = 4 * CONTENT_BATCH_MAX;
	if (!sz->wrapped && sz->next >= sz->end) {
		sz->wrapped = 1;
		sz->next = 0;
	}
	uint32_t limit = sz->wrapped ? sz->start : sz->end;
	if (sz->next >= limit) {
		sz->active = 0;
		return 0;
	}
	*from = sz->next;
	*to = limit - sz->next > span ? sz->next + span : limit;
	sz->next = *to;
	return 1;
}

/* Sizes [from, to) of the job's session; 0 once the job is moot (the
 * session is gone from the cache or was indexed anew). */
static int sizer_run(struct sizer *sz, const char *project, const char *session, uint64_t generation, uint32_t from,
		     uint32_t to)
{
	struct content_batch batch = { 0 };
	struct store_ref ref;
	uint32_t next = from;
	int ok = 1;

	while (ok && next < to) {
		if (store_acquire_cached(sz->fs->store, project, session, &ref) != PS_OK)
			return 0;
		ok = ref.session->generation == generation &&
		     content_batch_take(ref.session, &next, to, SIZER_BATCH_BYTES, &batch) == PS_OK;
		store_release(sz->fs->store, &ref);
		if (ok && batch.n) {
			content_batch_render(&batch);
			if (store_acquire_cached(sz->fs->store, project, session, &ref) != PS_OK) {
				ok = 0;
			} else {
				content_batch_keep(ref.session, &batch);
				store_release(sz->fs->store, &ref);
			}
		}
		content_batch_clear(&batch);
	}
	return ok;
}

static void *sizer_main(void *arg)
{
	struct sizer *sz = arg;
	char project[STORE_PROJECT_MAX], session[NAME_MAX + 1];
	lockorder_lock(&sz->lock, LOCK_SIZER);
	for (;;) {
		uint32_t from, to;
		while (!sz->stopping && !(sz->active && sizer_claim(sz, &from, &to)))
			pthread_cond_wait(&sz->wake, &sz->lock);
		if (sz->stopping)
			break;
		uint64_t job = sz->job, generation = sz->generation;
		memcpy(project, sz->project, sizeof project);
		memcpy(session, sz->session, sizeof session);
		lockorder_unlock(&sz->lock, LOCK_SIZER);
		int ok = sizer_run(sz, project, session, generation, from, to);
		lockorder_lock(&sz->lock, LOCK_SIZER);
		if (!ok && sz->job == job)
			sz->active = 0;
	}
	lockorder_unlock(&sz->lock, LOCK_SIZER);
	return NULL;
}

static int64_t sizer_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Called when an entry file is opened for reading: the sizers stop, and
 * ignore hints for a second. */
static void sizer_reading(struct sizer *sz)
{
	if (!sz || !sz->n_threads)
		return;
	int64_t now = sizer_now();
	lockorder_lock(&sz->lock, LOCK_SIZER);
	sz->quiet_until = now + SIZER_QUIET_NS;
	sz->active = 0;
	lockorder_unlock(&sz->lock, LOCK_SIZER);
}

void sizer_hint(struct sizer *sz, const char *project, const char *session, const struct ps_session *s,
		uint32_t entry)
{
	if (!sz || !sz->n_threads || strlen(project) >= STORE_PROJECT_MAX || strlen(session) > NAME_MAX)
		return;
	int64_t now = sizer_now();
	lockorder_lock(&sz->lock, LOCK_SIZER);
	if (now < sz->quiet_until) {
		lockorder_unlock(&sz->lock, LOCK_SIZER);
		return;
	}
	int same = sz->active && sz->generation == s->generation && strcmp(sz->project, project) == 0 &&
		   strcmp(sz->session, session) == 0;
	if (!same) {
		strcpy(sz->project, project);
		strcpy(sz->session, session);
		sz->generation = s->generation;
		sz->start = sz->next = entry;
		sz->end = s->n_entries;
		sz->wrapped = 0;
		sz->active = 1;
		sz->job++;
		pthread_cond_broadcast(&sz->wake);
	}
	lockorder_unlock(&sz->lock, LOCK_SIZER);
}

struct sizer *sizer_start(struct psfs *fs)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* The cores the request thread does not use; at least one, as the
	 * renders and the kernel's round trips overlap even on one core. */
	unsigned want = cpus > 2 ? (unsigned)(cpus - 1) : 1;
	if (want > SIZER_MAX_THREADS)
		want = SIZER_MAX_THREADS;
	struct sizer *sz = calloc(1, sizeof *sz);
	if (!sz)
		return NULL;
	sz->fs = fs;
	pthread_mutex_init(&sz->lock, NULL);
	pthread_cond_init(&sz->wake, NULL);
	for (sz->n_threads = 0; sz->n_threads < want; sz->n_threads++) {
		if (pthread_create(&sz->threads[sz->n_threads], NULL, sizer_main, sz) != 0)
			break;
	}
	if (!sz->n_threads) {
		sizer_stop(sz);
		return NULL;
	}
	return sz;
}

void sizer_stop(struct sizer *sz)
{
	if (!sz)
		return;
	lockorder_lock(&sz->lock, LOCK_SIZER);
	sz->stopping = 1;
	pthread_cond_broadcast(&sz->wake);
	lockorder_unlock(&sz->lock, LOCK_SIZER);
	for (unsigned i = 0; i < sz->n_threads; i++)
		pthread_join(sz->threads[i], NULL);
	pthread_cond_destroy(&sz->wake);
	pthread_mutex_destroy(&sz->lock);
	free(sz);
}

/* For a FUSE handler: the sizers of the mount it serves. */
void psfs_sizer_reading(void)
{
	struct fuse_context *ctx = psfs_context();
	struct psfs *fs = ctx && ctx->fuse ? ctx->private_data : NULL;
	sizer_reading(fs ? fs->sizer : NULL);
}
