/* What was derived from a session file, kept by a key (the file's place)
 * and the file's stat stamp, within a byte budget: the overview files
 * (fs/overview.c) keep each session's row here, so building usage.csv or
 * sessions.md again costs a listing with a stat per file, not an index
 * and a parse of every session file (the session cache holds 256, a store
 * may have thousands: without this, every build of a store-wide file read
 * the whole store again).
 *
 * A kept value is valid while the file's device, inode, size and
 * modification and change times are as they were when it was derived (as
 * session_refresh tells a changed file); another stamp drops it.  The least
 * recently used values go first when the budget is passed.
 *
 * Ownership: keys and values are copied in and out.  Thread-safe (one
 * lock, never held while the caller derives a value).  A NULL memo keeps
 * nothing: get finds nothing, put does nothing. */
#ifndef PS_FILEMEMO_H
#define PS_FILEMEMO_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "filestamp.h"
#include "ps_error.h"

struct filememo;

/* A new memo holding at most budget bytes (keys, values and their
 * bookkeeping); 0 keeps nothing. */
ps_err filememo_new(size_t budget, struct filememo **out);
void filememo_free(struct filememo *m);

/* When a value is kept for key with this stamp: appends it to out and
 * returns 1 (-1 when out could not grow: out as it was).  Otherwise 0; a
 * value kept with another stamp is dropped. */
int filememo_get(struct filememo *m, const char *key, size_t key_len, const struct filestamp *stamp,
		 struct buf *out);

/* Keeps len bytes of data for key with this stamp, in place of what was
 * kept for key; the least recently used values are dropped to fit the
 * budget (a value larger than the budget is not kept).  PS_ERR_NOMEM (the
 * memo as it was, less the old value). */
ps_err filememo_put(struct filememo *m, const char *key, size_t key_len, const struct filestamp *stamp,
		    const void *data, size_t len);

struct diskmemo;
/* Backs the memo with disk (diskmemo.h; borrowed, outlives the memo):
 * what is put is kept there too, and a get that finds nothing in memory
 * asks it. */
void filememo_set_disk(struct filememo *m, struct diskmemo *disk);
/* Commits what was put to disk since (the end of a build). */
void filememo_flush(struct filememo *m);

/* Bytes held now, and how many values (for tests). */
size_t filememo_bytes(struct filememo *m, size_t *count);

#endif
