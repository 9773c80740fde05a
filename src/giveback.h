/* Giving freed memory back to the system after a burst of reading.
 *
 * Reading many sessions on several threads (fanout.h, the cache keeper)
 * leaves what those threads freed held by the process: glibc's malloc
 * gives each thread an arena of its own and returns its free pages only
 * when asked.  After a store's first search that was a fifth of the
 * daemon's resident memory, and the next burst started from there. */
#ifndef PS_GIVEBACK_H
#define PS_GIVEBACK_H

#ifdef __GLIBC__
#include <malloc.h>
#endif

static inline void giveback_free_memory(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

#endif
