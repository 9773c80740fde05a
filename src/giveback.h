/* Giving freed memory back to the system after a burst of reading.
 *
 * Reading many sessions on several threads (fanout.h, the cache keeper)
 * leaves what those threads freed held by the process: glibc's malloc
 * gives each thread an arena of its own and returns its free pages only
 * when asked.  After a store's first search that was a fifth of the
 * daemon's resident memory, and the next burst started from there. */
#ifndef PS_GIVEBACK_H
#define PS_GIVEBACK_H

/* Under a sanitizer the heap is the sanitizer's, not glibc's: glibc's
 * malloc_trim then initialises its own unused arenas from whichever thread
 * calls first, and a thread's exit later failed glibc's arena assertion
 * (a->attached_threads > 0) and aborted the sanitized daemon. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GIVEBACK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GIVEBACK_SANITIZED 1
#endif
#endif

#if defined(__GLIBC__) && !defined(GIVEBACK_SANITIZED)
#include <malloc.h>
#endif

static inline void giveback_free_memory(void)
{
#if defined(__GLIBC__) && !defined(GIVEBACK_SANITIZED)
	malloc_trim(0);
#endif
}

#endif
