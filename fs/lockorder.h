/* The daemon's lock order, checked (docs/architecture.md, "Locks").
 * Every lock of fs/ has a level; a thread takes locks in increasing
 * level only, so no two threads can wait for each other.  Builds with
 * PSFS_LOCKORDER (the sanitized ones: make SANITIZE=1, SANITIZE=thread)
 * abort at the first lock taken out of order, naming both; other builds
 * compile this away. */
#ifndef PSFS_LOCKORDER_H
#define PSFS_LOCKORDER_H

enum lock_level {
	LOCK_CWD_START, /* starting a session in a new directory (cwdnew.c): one at a time */
	LOCK_DRAFT,   /* a draft's (draft.h): one at a time */
	LOCK_SESSION, /* a session's, through store_acquire (src/store.h) */
	LOCK_OVERLAY, /* the overlay's namespace (overlay.h) */
	LOCK_JOURNAL, /* the log's (journal.h) */
	LOCK_LEVELS
};

#ifdef PSFS_LOCKORDER
#include <stdio.h>
#include <stdlib.h>

extern _Thread_local unsigned lockorder_held[LOCK_LEVELS];

static inline void lockorder_take(enum lock_level level)
{
	static const char *const names[LOCK_LEVELS] = { "cwd start", "draft", "session", "overlay", "journal" };
	for (int l = level; l < LOCK_LEVELS; l++) {
		/* Sessions nest (a fork reads its source while the catalog
		 * takes the new one); every other level is taken once. */
		if (lockorder_held[l] && !(l == LOCK_SESSION && level == LOCK_SESSION)) {
			fprintf(stderr, "pisessionfs: lock order violated: %s lock taken while holding the %s lock\n",
				names[level], names[l]);
			abort();
		}
	}
	lockorder_held[level]++;
}

static inline void lockorder_drop(enum lock_level level)
{
	lockorder_held[level]--;
}
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

#endif
