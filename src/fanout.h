/* Many independent reads at once: a store-wide file (sessions.md,
 * usage.csv), the views' catalog and a search read every session a first
 * time, one file after another, and on a store of thousands that is
 * seconds of one core while the others idle.  fanout_run shares the items
 * out to a few threads, the caller's one of them, so that such a first
 * read takes the machine's cores, and nothing else changes: each item is
 * done exactly once, by whichever thread takes it next, and the caller
 * puts the results together in its own order afterwards.
 *
 * Ownership: nothing is kept; ctx is borrowed for the call. */
#ifndef PS_FANOUT_H
#define PS_FANOUT_H

#include <stddef.h>

/* The most threads a fan-out uses (-o read_threads caps it lower). */
#define FANOUT_MAX_THREADS 16

/* Does item i.  Runs on any of the threads, several at once: it may only
 * touch item i's own result and what is thread-safe. */
typedef void (*fanout_item_fn)(void *ctx, size_t i);
/* Asked on the caller's thread only, before each item it takes (so it
 * may ask what only that thread can, such as whether its FUSE request
 * was interrupted): non-zero stops the fan-out, no item starts after it. */
typedef int (*fanout_stop_fn)(void *ctx);

/* Runs item(ctx, i) for every i in [0, n) on at most `threads` threads,
 * the calling one included (0: as many as the machine has cores, at most
 * FANOUT_MAX_THREADS); with one thread, or a thread that cannot be
 * started, the caller does the rest alone.  stop may be NULL.  Returns
 * only once every item that was started has finished: 0 when all n ran,
 * 1 when stop ended it early (the items not started are not run). */
int fanout_run(size_t n, unsigned threads, fanout_item_fn item, fanout_stop_fn stop, void *ctx);

/* The threads a fan-out of `threads` (0: the default) would use. */
unsigned fanout_threads(unsigned threads);

#endif
