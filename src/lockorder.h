/* The lock order of the daemon and its core, checked (docs/architecture.md,
 * "Locks").  Every mutex of src/ and fs/ has a level here; a thread takes
 * locks in increasing level only, so no two threads can wait for each
 * other.  Take and drop them with lockorder_lock and lockorder_unlock.
 *
 * Builds with PSFS_LOCKORDER (the sanitized ones: make SANITIZE=1,
 * SANITIZE=thread) abort at the first lock taken out of order, naming
 * both.  With PSFS_LOCKORDER_EDGES=FILE in the environment they abort on
 * nothing and instead add to FILE each pair "HELD -> TAKEN" the first time
 * a thread takes a lock while holding another: the order the code really
 * follows, from which this table was made.  Other builds compile it all
 * away to the bare pthread calls. */
#ifndef PS_LOCKORDER_H
#define PS_LOCKORDER_H

#include <pthread.h>

/* Low to high: a thread holding one takes only those after it. */
enum lock_level {
	LOCK_DIRLIST,         /* fs/dirhandle.c: an open directory's listing, while it is read */
	LOCK_CWD_START,       /* fs/cwdnew.c: a session started in a new directory, one at a time */
	LOCK_DRAFT,           /* fs/draft.h: a file being written, one at a time */
	LOCK_READER,          /* fs/ops_internal.h: a reader's snapshot of a file */
	LOCK_SEARCH_RESULTS,  /* fs/searchdir.c: the kept results of queries */
	LOCK_VIEWS,           /* fs/views.c: the views' listings */
	LOCK_OVERVIEW,        /* fs/overview.c: the store-wide files' texts */
	LOCK_CATALOG,         /* src/catalog.c: the views' table of sessions */
	LOCK_SESSION,         /* src/store.c: a session's, through store_acquire; nest only in a fork */
	LOCK_STORE,           /* src/store.c: the cache of indexes */
	LOCK_OVERLAY,         /* fs/overlay.c: the in-memory names */
	LOCK_FAMILY_CACHE,    /* src/familycache.c: subagent families read */
	LOCK_KEEPER_LARGE,    /* src/infokeeper.c: one large file kept at a time */
	LOCK_INFO_CACHE,      /* src/infocache.c: sessions' infos */
	LOCK_KEEPER,          /* src/infokeeper.c: the keeper's queue (an info cache hands it work) */
	LOCK_SEARCH_MEMO,     /* src/searchmemo.c: verdicts of queries */
	LOCK_ENTRY_CACHE,     /* src/entrycache.c: rendered entries */
	LOCK_FILE_MEMO,       /* src/filememo.c: values derived from files */
	LOCK_DISK_MEMO,       /* src/diskmemo.c: the disk cache's writing connection */
	LOCK_DISK_POOL,       /* src/diskmemo.c: its read-only connections */
	LOCK_CATALOG_PENDING, /* src/catalog.c: the changes the watcher heard */
	LOCK_SIZER,           /* fs/sizer.c: the sizes being worked out */
	LOCK_WATCH_QUEUE,     /* fs/watch.c: the kernel invalidations queued */
	LOCK_RM_WALKS,        /* fs/sessionops.c: the recursive removals seen */
	LOCK_RM_HOLDS,        /* fs/sessionops.c: the directories they hold open */
	LOCK_RM_REFUSED,      /* fs/sessionops.c: the removals refused, per process */
	LOCK_GUARD_JOB,       /* fs/guard.c: one call run for a request, and whether it was given up */
	LOCK_GUARD,           /* fs/guard.c: whether the store answers, and its probe */
	LOCK_JOURNAL,         /* fs/journal.c: the log */
	LOCK_LEVELS
};

#ifdef PSFS_LOCKORDER
/* Checks that level may be taken now (aborts or records), then counts it
 * held by the thread; lockorder_drop uncounts it. */
void lockorder_take(enum lock_level level);
void lockorder_drop(enum lock_level level);
#else
static inline void lockorder_take(enum lock_level level)
{
	(void)level;
}

static inline void lockorder_drop(enum lock_level level)
{
	(void)level;
}
#endif

/* The order is checked before the wait, so an inversion is reported
 * where it would deadlock, not after. */
static inline void lockorder_lock(pthread_mutex_t *m, enum lock_level level)
{
	lockorder_take(level);
	pthread_mutex_lock(m);
}

static inline void lockorder_unlock(pthread_mutex_t *m, enum lock_level level)
{
	pthread_mutex_unlock(m);
	lockorder_drop(level);
}

#endif
