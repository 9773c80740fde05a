/* Keeping search infos on disk after the search, not during it.
 *
 * A first search reads the store's sessions, and what it read is worth
 * keeping across mounts (infocache_set_disk): the next mount's search
 * then reads the cache, not the store.  Writing hundreds of megabytes of
 * message text to SQLite took a third of a first search's time, so the
 * info cache hands the paths it read to a keeper (infocache_set_keeper),
 * the search hands over the sessions it ruled out unread
 * (search_query_rules_out), and the keeper's threads, at idle priority,
 * read and keep them after the answer has gone out.  When the daemon
 * stops, what is still queued is kept within a time bound
 * (infokeeper_stop), so that a mount that lived for a single search is
 * remembered too.
 *
 * Thread-safe: paths may be added from any thread, with the info cache
 * locked too (its lock is taken last: nothing else is locked under it). */
#ifndef PS_INFOKEEPER_H
#define PS_INFOKEEPER_H

#include <stddef.h>
#include "ps_error.h"

struct infocache;
struct infokeeper;

/* Starts `threads` keeping threads (at least one) for cache (borrowed:
 * it must outlive the keeper) and tells the cache to defer its disk
 * writes to them.  A cache with no disk needs no keeper: *out NULL then,
 * PS_OK.  PS_ERR_NOMEM, or PS_ERR_IO when no thread could start. */
ps_err infokeeper_start(struct infocache *cache, unsigned threads, struct infokeeper **out);

/* Queues the session file at path (copied) to be kept on disk; a path
 * already queued is not queued twice.  NULL k: nothing. */
void infokeeper_add(struct infokeeper *k, const char *path);

/* A search (or other reading the keeper must not slow) runs from hold to
 * release: the keeper takes up no file meanwhile, so it never holds the
 * disk's lock, at idle priority, while the search waits for it.  Holds
 * nest and may overlap.  NULL k: nothing. */
void infokeeper_hold(struct infokeeper *k);
void infokeeper_release(struct infokeeper *k);

/* Stops the keeper: what is queued is still kept for at most finish_ms
 * (the threads then at normal priority), the rest dropped.  *kept and
 * *left (either may be NULL) say how many files were kept in all and how
 * many were left unkept.  The cache writes to disk itself again after. */
void infokeeper_stop(struct infokeeper *k, long finish_ms, size_t *kept, size_t *left);

/* Files queued and not yet taken up (for tests). */
size_t infokeeper_pending(struct infokeeper *k);

#endif
