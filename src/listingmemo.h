/* A whole derived file kept on disk (diskmemo.h) under the listing it was
 * built from: sessions.md and the usage files of a store are built from
 * thousands of kept rows, a read of the cache each; a mount started again
 * on an unchanged store gives the file it built last time, found by one
 * read.  The listing names every file the text was derived from with its
 * stamp (overviewlist.h), so the text is only given for exactly that
 * state of them.
 *
 * One text per name is kept: the one built last.  The listing is not
 * stored, only a 128-bit digest of it, in the value's stamp (diskmemo
 * drops what is kept for a name under another).
 *
 * Ownership: name, listing and text are borrowed; out is appended to.
 * A NULL disk keeps nothing. */
#ifndef PS_LISTINGMEMO_H
#define PS_LISTINGMEMO_H

#include <stddef.h>
#include "buf.h"
#include "diskmemo.h"

/* The disk cache's key prefix of these texts ("o" NAME). */
#define LISTINGMEMO_KEY_PREFIX 'o'

/* 1 and the text kept for name as of exactly listing appended to out; 0
 * when none is; -1 when out cannot grow. */
int listingmemo_get(struct diskmemo *disk, const char *name, const struct buf *listing, struct buf *out);

/* Keeps text as name's, as of listing, and commits it. */
void listingmemo_put(struct diskmemo *disk, const char *name, const struct buf *listing, const char *text,
		     size_t len);

#endif
