/* The SessionInfos (sessioninfo.h) of the session files searched lately,
 * kept within a byte budget, so a search after the first one costs a stat
 * per session and a scan of text in memory, not a read of the store.
 * A kept info is brought up to date at each use (only the bytes appended
 * since are read); the least recently used go first when the budget is
 * passed, which a later search pays for by reading those files again.
 *
 * Locking: one lock for the whole cache, taken by infocache_lock and held
 * while the caller uses what infocache_get lends; the budget is enforced
 * at infocache_unlock, so nothing lent is freed under the caller. */
#ifndef PS_INFOCACHE_H
#define PS_INFOCACHE_H

#include <stddef.h>
#include "buf.h"
#include "ps_error.h"
#include "sessioninfo.h"

struct infocache;

/* A new cache holding at most budget bytes of infos (sessioninfo_bytes);
 * 0 keeps none beyond the current lock's use. */
ps_err infocache_new(size_t budget, struct infocache **out);
void infocache_free(struct infocache *cache);

void infocache_lock(struct infocache *cache);
/* Drops least recently used infos until the rest fit the budget. */
void infocache_unlock(struct infocache *cache);

/* With the cache locked: the info of the session file at path, loaded or
 * refreshed now; lent until infocache_unlock.  A file no info is held for
 * is read with the lock let go meanwhile (other callers go on), so call
 * it once per locking: what an earlier call lent may be gone after it.  PS_ERR_NOENT/IO when the
 * file cannot be read (a kept info of it is dropped), PS_ERR_NOMEM. */
ps_err infocache_get(struct infocache *cache, const char *path, const struct sessioninfo **out);

/* infocache_get for an info the caller has just read whole (stolen):
 * held, and kept on disk as a read one is, when the cache holds none of
 * its file; else freed, and the one held is lent, brought up to date. */
ps_err infocache_adopt(struct infocache *cache, struct sessioninfo *fresh, const struct sessioninfo **out);

/* Keeps every info read on disk too (diskmemo.h; borrowed, outlives the
 * cache), and takes one from there, by the file's stamp, before reading
 * a file no info is held for: another mount's reading counts. */
struct diskmemo;
void infocache_set_disk(struct infocache *cache, struct diskmemo *disk);
/* Defers keeping on disk: what infocache_get reads is then not written
 * at once, but fn(ctx, path) is told the file's path, and
 * infocache_keep(cache, path) writes it later (infokeeper.h).  fn NULL:
 * written at once again.  Set while no other thread uses the cache. */
void infocache_set_keeper(struct infocache *cache, void (*fn)(void *ctx, const char *path), void *ctx);

/* Keeps on disk the info of the session file at path as it is now,
 * unless the disk has it already: from the info held, when it is
 * current, else read from the file.  1 when something was written, else 0
 * (kept already, no disk, the file gone or changing while it was read).
 * Without the cache locked; the read runs with no lock held. */
int infocache_keep(struct infocache *cache, const char *path);

/* 1 when infos are kept on disk (infocache_set_disk gave a disk). */
int infocache_has_disk(const struct infocache *cache);

/* Commits what was kept on disk since (the end of a search). */
void infocache_flush(struct infocache *cache);

/* With the cache NOT locked (it is taken only to look, and let go while
 * the disk is read, so that a search's threads read at once), when it
 * holds no info of path: the bytes kept on disk for that file with this
 * stamp (infofreeze.h; a search reads them without making an info),
 * appended to out: 1.  0 when there are none (or an info is held:
 * infocache_get it), -1 when out cannot grow. */
struct filestamp;
int infocache_kept_bytes(struct infocache *cache, const char *path, const struct filestamp *stamp,
			 struct buf *out);

/* 1 when the disk keeps any info at all (0 without a disk): a search on
 * a cache never filled can skip asking for each file. */
int infocache_disk_keeps_any(struct infocache *cache);

/* With the cache NOT locked: 1 when it holds an info of path now. */
int infocache_holds(struct infocache *cache, const char *path);

/* Bytes held now, and how many infos. */
size_t infocache_bytes(struct infocache *cache, size_t *count);

#endif
