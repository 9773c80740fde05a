/* Calls to a store that may stop answering, bounded (guard.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include "caller.h"
#include "guard.h"
#include "journal.h"
#include "lockorder.h"

/* How long a call waits for the store's answer to a statfs before the
 * store is taken not to answer; and, while it is unavailable, how long a
 * call waits for a probe to say it answers again. */
#define GUARD_PROBE_MS 1000
#define GUARD_RETRY_MS 300
/* How often a waiting request looks whether its caller gave up. */
#define GUARD_TICK_MS 100

struct guard {
	char *root;
	long bound_ms;
	struct journal *journal;
	pthread_mutex_t lock;
	pthread_cond_t answered_cond;
	pthread_cond_t idle_cond;     /* the last thread running ended */
	int unavailable;
	int probing;          /* a probe thread is waiting for the store */
	int threads;          /* probes and calls running */
	int freed;            /* guard_free was called: the last thread frees it */
	uint64_t answers;     /* statfs calls the store answered */
};

/* Condition variables timed by the monotonic clock: a change of the
 * wall clock neither cuts a wait short nor makes it last. */
static void guard_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

static void guard_deadline(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Whether a comes no later than b. */
static int guard_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

struct guard *guard_new(const char *root, double bound, struct journal *j)
{
	struct guard *g = calloc(1, sizeof *g);
	if (!g || !(g->root = strdup(root))) {
		free(g);
		return NULL;
	}
	g->bound_ms = (long)(bound * 1000);
	g->journal = j;
	pthread_mutex_init(&g->lock, NULL);
	guard_cond_init(&g->answered_cond);
	guard_cond_init(&g->idle_cond);
	return g;
}

static void guard_destroy(struct guard *g)
{
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->answered_cond);
	pthread_cond_destroy(&g->idle_cond);
	free(g->root);
	free(g);
}

/* A thread of g ends (g locked, and unlocked here). */
static void guard_thread_ends(struct guard *g)
{
	int idle = --g->threads == 0;
	if (idle)
		pthread_cond_broadcast(&g->idle_cond);
	/* freed: guard_free stopped waiting and left g to the last thread. */
	int last = idle && g->freed;
	lockorder_unlock(&g->lock, LOCK_GUARD);
	if (last)
		guard_destroy(g);
}

int guard_free(struct guard *g)
{
	if (!g)
		return 0;
	struct timespec until;
	lockorder_lock(&g->lock, LOCK_GUARD);
	g->journal = NULL; /* freed after this: a late thread logs nothing */
	/* Threads that are ending (a probe, a call that was answered) end
	 * within moments; one that waits for a frozen store does not. */
	guard_deadline(&until, GUARD_PROBE_MS);
	while (g->threads && pthread_cond_timedwait(&g->idle_cond, &g->lock, &until) != ETIMEDOUT)
		;
	int stuck = g->threads > 0;
	g->freed = stuck;
	lockorder_unlock(&g->lock, LOCK_GUARD);
	if (!stuck)
		guard_destroy(g);
	return stuck;
}

int guard_available(struct guard *g)
{
	lockorder_lock(&g->lock, LOCK_GUARD);
	int up = !g->unavailable;
	lockorder_unlock(&g->lock, LOCK_GUARD);
	return up;
}

static void *guard_probe_main(void *arg)
{
	struct guard *g = arg;
	struct statvfs st;
	int ok = statvfs(g->root, &st) == 0 || (errno != EIO && errno != ENOTCONN && errno != ETIMEDOUT);
	lockorder_lock(&g->lock, LOCK_GUARD);
	g->probing = 0;
	if (ok) {
		g->answers++;
		if (g->unavailable) {
			g->unavailable = 0;
			if (g->journal)
				journal_log_in(g->journal, "the store %s answers again", g->root);
		}
	}
	pthread_cond_broadcast(&g->answered_cond);
	guard_thread_ends(g);
	return NULL;
}

/* Whether the store answers a statfs within ms (one probe at a time: a
 * probe still waiting means it does not).  g locked. */
static int guard_answers(struct guard *g, long ms)
{
	uint64_t before = g->answers;
	struct timespec until;
	if (!g->probing) {
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, guard_probe_main, g) == 0) {
			g->probing = 1;
			g->threads++;
		}
		pthread_attr_destroy(&attr);
		if (!g->probing)
			return 0;
	}
	guard_deadline(&until, ms);
	while (g->answers == before && g->probing)
		if (pthread_cond_timedwait(&g->answered_cond, &g->lock, &until) == ETIMEDOUT)
			break;
	return g->answers != before;
}

static void *guard_job_main(void *arg)
{
	struct guard_job *job = arg;
	struct guard *g = job->guard;
	psfs_context_serve_for(&job->ctx, &job->caller_gave_up);
	int res = job->run(job);
	lockorder_lock(&job->lock, LOCK_GUARD_JOB);
	int given_up = job->given_up;
	job->res = res;
	job->done = 1;
	pthread_cond_signal(&job->done_cond);
	lockorder_unlock(&job->lock, LOCK_GUARD_JOB);
	if (given_up) {
		/* Still in the request's context: releasing a handle needs it. */
		pthread_mutex_destroy(&job->lock);
		pthread_cond_destroy(&job->done_cond);
		job->abandoned(job, res);
	}
	psfs_context_serve_for(NULL, NULL);
	lockorder_lock(&g->lock, LOCK_GUARD);
	guard_thread_ends(g);
	return NULL;
}

enum guard_outcome guard_run(struct guard *g, struct guard_job *job, int always, int *res)
{
	lockorder_lock(&g->lock, LOCK_GUARD);
	int up = !g->unavailable || guard_answers(g, GUARD_RETRY_MS);
	lockorder_unlock(&g->lock, LOCK_GUARD);
	if (!up && !always)
		return GUARD_REFUSED;
	struct fuse_context *ctx = psfs_context();
	if (ctx)
		job->ctx = *ctx;
	job->done = job->given_up = 0;
	atomic_init(&job->caller_gave_up, 0);
	job->guard = g;
	pthread_mutex_init(&job->lock, NULL);
	guard_cond_init(&job->done_cond);
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	lockorder_lock(&g->lock, LOCK_GUARD);
	g->threads++;
	lockorder_unlock(&g->lock, LOCK_GUARD);
	int made = pthread_create(&t, &attr, guard_job_main, job) == 0;
	pthread_attr_destroy(&attr);
	if (!made) {
		lockorder_lock(&g->lock, LOCK_GUARD);
		guard_thread_ends(g);
		pthread_mutex_destroy(&job->lock);
		pthread_cond_destroy(&job->done_cond);
		return GUARD_NOMEM;
	}
	struct timespec until, tick;
	guard_deadline(&until, g->bound_ms);
	lockorder_lock(&job->lock, LOCK_GUARD_JOB);
	while (!job->done && up) {
		/* A caller that gives up (^C of a search) is told to the job
		 * as libfuse tells this thread. */
		guard_deadline(&tick, GUARD_TICK_MS);
		int last = guard_before(&until, &tick);
		int woke = pthread_cond_timedwait(&job->done_cond, &job->lock, last ? &until : &tick) != ETIMEDOUT;
		if (psfs_caller_gave_up())
			atomic_store(&job->caller_gave_up, 1);
		if (woke || !last)
			continue;
		/* Slow, or not answering?  A store that answers a statfs is
		 * slow: wait another bound. */
		lockorder_unlock(&job->lock, LOCK_GUARD_JOB);
		lockorder_lock(&g->lock, LOCK_GUARD);
		int answers = guard_answers(g, GUARD_PROBE_MS);
		if (!answers && !g->unavailable) {
			g->unavailable = 1;
			if (g->journal)
				journal_log_in(g->journal, "the store %s did not answer for %ld ms: its calls answer EIO until it "
				       "answers again (a write not yet in it is refused, its text kept in rejected/)",
				       g->root, g->bound_ms + GUARD_PROBE_MS);
		}
		lockorder_unlock(&g->lock, LOCK_GUARD);
		lockorder_lock(&job->lock, LOCK_GUARD_JOB);
		if (job->done)
			break;
		if (!answers) {
			up = 0;
			break;
		}
		guard_deadline(&until, g->bound_ms);
	}
	if (!job->done && (!up || always)) {
		/* always and unavailable: not waited for at all. */
		job->given_up = 1;
		lockorder_unlock(&job->lock, LOCK_GUARD_JOB);
		return GUARD_GAVE_UP;
	}
	*res = job->res;
	lockorder_unlock(&job->lock, LOCK_GUARD_JOB);
	pthread_mutex_destroy(&job->lock);
	pthread_cond_destroy(&job->done_cond);
	return GUARD_DONE;
}
