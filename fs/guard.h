/* A store on a file system that may stop answering (an sshfs whose link
 * died, an NFS server gone: mountinfo_is_remote): each FUSE call that may
 * reach it runs on a thread of its own while the request's thread waits,
 * bounded (guard.c).  A call still waiting past the bound, while the store
 * does not answer a statfs(2) either, is answered EIO and left to its
 * thread; the store is then unavailable, and every call is answered EIO at
 * once, until it answers a statfs again (docs/shared-stores.md "When the
 * server stops answering").
 *
 * Why threads: once a FUSE server has read a request, the kernel lets
 * neither the thread that asked nor, through our mount, the caller go
 * before the answer, not even for SIGKILL.  Only a thread of our own can
 * wait for the store in the caller's place. */
#ifndef PSFS_GUARD_H
#define PSFS_GUARD_H

#include <pthread.h>
#include <stdint.h>
#include "pisessionfs.h"

/* One call run on a guard's thread.  The caller fills run and abandoned
 * and what run reads; guard_run fills the rest. */
struct guard_job {
	/* Runs on the guard's thread, in the request's context (caller.h:
	 * psfs_context); its result is the call's. */
	int (*run)(struct guard_job *job);
	/* Called on the guard's thread instead of handing the result back,
	 * when the request was answered EIO before run ended: undoes what
	 * needs undoing (a handle opened late is released) and frees job. */
	void (*abandoned)(struct guard_job *job, int res);
	struct fuse_context ctx; /* the request's, copied */
	_Atomic int caller_gave_up; /* the request was interrupted (psfs_caller_gave_up) */
	/* guard.c's */
	struct guard *guard;
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	int done, given_up, res;
};

struct guard;

/* The bound of a call, by default (-o store_timeout=SECONDS). */
#define PSFS_STORE_TIMEOUT 2.0

/* A guard of the store at root, with a bound in seconds, telling j (for
 * the log) when the store stops and starts answering: new, or NULL when
 * out of memory. */
struct journal;
struct guard *guard_new(const char *root, double bound, struct journal *j);
/* Frees g, or lets its last thread free it: threads still waiting for
 * the store keep running, detached, and end with the process.  Returns
 * whether such threads remain (then what they may still use, the mount's
 * state, must not be freed either). */
int guard_free(struct guard *g);

/* What guard_run did with a job. */
enum guard_outcome {
	GUARD_DONE,      /* run ended in time: *res is its result; the job is the caller's */
	GUARD_GAVE_UP,   /* the store stopped answering while run ran: the job is its thread's */
	GUARD_REFUSED,   /* the store is unavailable: run was not called; the job is the caller's */
	GUARD_NOMEM,     /* no thread could be made: run was not called */
};

/* Runs job->run on a thread of its own and waits for it while the store
 * answers.  always: run it even while the store is unavailable (a
 * release, whose handle must end), without waiting for it then. */
enum guard_outcome guard_run(struct guard *g, struct guard_job *job, int always, int *res);

/* Whether the store answers (1), or is marked unavailable (0). */
int guard_available(struct guard *g);

#endif
