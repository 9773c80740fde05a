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
#include "pisessionfs.h"
#include "sizer.h"
#include "content.h"

#define SIZER_MAX_THREADS 4
/* How long after an entry file is opened for reading hints are ignored. */
#define SIZER_QUIET_NS 1000000000
/* Lines held per batch: the session's lock is taken once per batch. */
#define SIZER_BATCH_BYTES (1u << 20)

static struct {
	struct psfs *fs;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t threads[SIZER_MAX_THREADS];
	unsigned n_threads;
	int stopping;
	/* The job, guarded by lock: entries [start, end) then [0, start). */
	int active;
	uint64_t job;          /* bumps with each new job */
	char project[NAME_MAX + 1];
	char session[NAME_MAX + 1];
	uint64_t generation;
	uint32_t start, end, next;
	int wrapped;
	/* Until when hints are ignored (CLOCK_MONOTONIC ns): entry files are
	 * being read, so their texts are built by the reads, and the spare
	 * core serves the reader better than sizing what it will read anyway
	 * (a first grep -r took 10% longer with the sizers on). */
	int64_t quiet_until;
} sizer = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

/* Claims the next range of the job, [*from, *to); 0 when it is done. */
static int sizer_claim(uint32_t *from, uint32_t *to)
{
	/* A range of entries taken at once by one thread; its batches skip
	 * what is sized already. */
	const uint32_t span = 4 * CONTENT_BATCH_MAX;
	if (!sizer.wrapped && sizer.next >= sizer.end) {
		sizer.wrapped = 1;
		sizer.next = 0;
	}
	uint32_t limit = sizer.wrapped ? sizer.start : sizer.end;
	if (sizer.next >= limit) {
		sizer.active = 0;
		return 0;
	}
	*from = sizer.next;
	*to = limit - sizer.next > span ? sizer.next + span : limit;
	sizer.next = *to;
	return 1;
}

/* Sizes [from, to) of the job's session; 0 once the job is moot (the
 * session is gone from the cache or was indexed anew). */
static int sizer_run(const char *project, const char *session, uint64_t generation, uint32_t from, uint32_t to)
{
	struct content_batch batch = { 0 };
	struct store_ref ref;
	uint32_t next = from;
	int ok = 1;

	while (ok && next < to) {
		if (store_acquire_cached(sizer.fs->store, project, session, &ref) != PS_OK)
			return 0;
		ok = ref.session->generation == generation &&
		     content_batch_take(ref.session, &next, to, SIZER_BATCH_BYTES, &batch) == PS_OK;
		store_release(sizer.fs->store, &ref);
		if (ok && batch.n) {
			content_batch_render(&batch);
			if (store_acquire_cached(sizer.fs->store, project, session, &ref) != PS_OK) {
				ok = 0;
			} else {
				content_batch_keep(ref.session, &batch);
				store_release(sizer.fs->store, &ref);
			}
		}
		content_batch_clear(&batch);
	}
	return ok;
}

static void *sizer_main(void *arg)
{
	char project[NAME_MAX + 1], session[NAME_MAX + 1];
	(void)arg;
	pthread_mutex_lock(&sizer.lock);
	for (;;) {
		uint32_t from, to;
		while (!sizer.stopping && !(sizer.active && sizer_claim(&from, &to)))
			pthread_cond_wait(&sizer.wake, &sizer.lock);
		if (sizer.stopping)
			break;
		uint64_t job = sizer.job, generation = sizer.generation;
		memcpy(project, sizer.project, sizeof project);
		memcpy(session, sizer.session, sizeof session);
		pthread_mutex_unlock(&sizer.lock);
		int ok = sizer_run(project, session, generation, from, to);
		pthread_mutex_lock(&sizer.lock);
		if (!ok && sizer.job == job)
			sizer.active = 0;
	}
	pthread_mutex_unlock(&sizer.lock);
	return NULL;
}

static int64_t sizer_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void psfs_sizer_reading(void)
{
	if (!sizer.n_threads)
		return;
	int64_t now = sizer_now();
	pthread_mutex_lock(&sizer.lock);
	sizer.quiet_until = now + SIZER_QUIET_NS;
	sizer.active = 0;
	pthread_mutex_unlock(&sizer.lock);
}

void psfs_sizer_hint(const char *project, const char *session, const struct ps_session *s, uint32_t entry)
{
	if (!sizer.n_threads || strlen(project) > NAME_MAX || strlen(session) > NAME_MAX)
		return;
	int64_t now = sizer_now();
	pthread_mutex_lock(&sizer.lock);
	if (now < sizer.quiet_until) {
		pthread_mutex_unlock(&sizer.lock);
		return;
	}
	int same = sizer.active && sizer.generation == s->generation && strcmp(sizer.project, project) == 0 &&
		   strcmp(sizer.session, session) == 0;
	if (!same) {
		strcpy(sizer.project, project);
		strcpy(sizer.session, session);
		sizer.generation = s->generation;
		sizer.start = sizer.next = entry;
		sizer.end = s->n_entries;
		sizer.wrapped = 0;
		sizer.active = 1;
		sizer.job++;
		pthread_cond_broadcast(&sizer.wake);
	}
	pthread_mutex_unlock(&sizer.lock);
}

int psfs_sizer_start(struct psfs *fs)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* The cores the request thread does not use; at least one, as the
	 * renders and the kernel's round trips overlap even on one core. */
	unsigned want = cpus > 2 ? (unsigned)(cpus - 1) : 1;
	if (want > SIZER_MAX_THREADS)
		want = SIZER_MAX_THREADS;
	sizer.fs = fs;
	sizer.stopping = 0;
	for (sizer.n_threads = 0; sizer.n_threads < want; sizer.n_threads++) {
		if (pthread_create(&sizer.threads[sizer.n_threads], NULL, sizer_main, NULL) != 0)
			break;
	}
	return sizer.n_threads ? 0 : -1;
}

void psfs_sizer_stop(void)
{
	pthread_mutex_lock(&sizer.lock);
	sizer.stopping = 1;
	pthread_cond_broadcast(&sizer.wake);
	pthread_mutex_unlock(&sizer.lock);
	for (unsigned i = 0; i < sizer.n_threads; i++)
		pthread_join(sizer.threads[i], NULL);
	sizer.n_threads = 0;
	sizer.active = 0;
}
