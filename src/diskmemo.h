/* What was derived from a store's session files, kept on disk across
 * mounts: one SQLite database per store in the user's cache directory
 * ($XDG_CACHE_HOME/pisessionfs/), so a daemon started again lists titles
 * and builds sessions.md from what it derived last time, with a stat per
 * file, instead of reading the whole store (docs/layout.md "The cache").
 *
 * The same contract as filememo.h: a value is kept by key with the stamp
 * (device, inode, size, mtime, ctime) of the file it was derived from, and
 * is returned only for that stamp, so the file always wins over the cache.
 * A database that is corrupt, from another version or layout of the kept
 * values, made for another store, or unreadable is removed and made again,
 * and the reason is given to the note callback (the daemon logs it).  When
 * no database can be made at all the memo is disabled: every get misses.
 *
 * Writes are batched in one transaction, committed by diskmemo_flush (the
 * callers flush after each build) or every DISKMEMO_BATCH puts; WAL with
 * synchronous=NORMAL, so a crash loses at most the last batch, never the
 * database.
 *
 * Ownership: keys and values are copied in and out.  Thread-safe (one
 * lock around the connection).  A NULL memo keeps nothing.
 *
 * While open it holds its database's lock in the cache directory
 * (cachedir.h), so no other mount's sweep or `pisession cache clear`
 * removes it. */
#ifndef PS_DISKMEMO_H
#define PS_DISKMEMO_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "filestamp.h"
#include "ps_error.h"

struct diskmemo;

/* Told why the database was dropped or cannot be used (borrowed text). */
typedef void (*diskmemo_note_fn)(void *ctx, const char *what);

/* Opens (or makes) the database for the store at store_path (absolute)
 * in the directory dir (made 0700 where missing, with its parents); format
 * names the layout of the values the caller keeps: a database made with
 * another format, or by another version of pisessionfs, is made again.
 * Always gives a memo (*out new); one that could not open a database is
 * disabled (PS_ERR_IO returned then, with a note).  PS_ERR_NOMEM: *out
 * NULL. */
ps_err diskmemo_open(const char *dir, const char *store_path, const char *format, diskmemo_note_fn note,
		     void *note_ctx, struct diskmemo **out);
/* Commits and closes.  NULL is fine. */
void diskmemo_free(struct diskmemo *m);

/* The database's path (borrowed), or NULL when disabled. */
const char *diskmemo_path(const struct diskmemo *m);

/* As filememo_get: 1 and the value appended to out, 0 when nothing is
 * kept for key with this stamp (what is kept with another is dropped), -1
 * when out could not grow. */
int diskmemo_get(struct diskmemo *m, const char *key, size_t key_len, const struct filestamp *stamp,
		 struct buf *out);
/* 1 when any value is kept under a key that starts with prefix[0..len). */
int diskmemo_has_prefix(struct diskmemo *m, const char *prefix, size_t len);
/* 1 when a value is kept for key with this stamp, without reading it. */
int diskmemo_has(struct diskmemo *m, const char *key, size_t key_len, const struct filestamp *stamp);
/* Keeps the value for key with this stamp (in the open batch). */
void diskmemo_put(struct diskmemo *m, const char *key, size_t key_len, const struct filestamp *stamp,
		  const void *data, size_t len);
/* Commits the open batch; then, past the budget, drops the values seen
 * least recently (with a note saying how many). */
void diskmemo_flush(struct diskmemo *m);
/* Bounds the cache directory to max_bytes (-o cache_max) from now on:
 * sweeps it (cachedir_sweep: what it removes goes to the note callback)
 * and keeps this database to the room the others leave, at each flush;
 * when it needs more, other databases no mount uses give way first, the
 * least recently used first, then its own values used least recently.
 * Takes as long as the sweep: the daemon calls it in a thread of its
 * own. */
void diskmemo_set_bound(struct diskmemo *m, uint64_t max_bytes);

/* Values kept on disk now (for tests; -1 when disabled). */
long diskmemo_count(struct diskmemo *m);

#endif
