/* Appending entries to a session file the way pi appends them: one
 * complete JSON line per entry (JSON.stringify form), written with a single
 * O_APPEND write and fsynced before success is reported.  Everything is
 * validated before anything is written, so a refused append leaves the file
 * byte-identical.  Each write is recorded first (recover.h), so that what a
 * kill leaves of it can be taken back. */
#ifndef PS_APPEND_H
#define PS_APPEND_H

#include <stddef.h>
#include <jansson.h>
#include "appenditem.h"
#include "session.h"

/* Re-reads the file (pi may have appended meanwhile), resolves parents,
 * fills ids (8 hex characters from libuuid, unique in the session) and
 * timestamps, validates every item, migrates a version 1 or 2 file to
 * version 3 (temporary file, fsync, rename) and appends all items in one
 * write.  `generation` is the index generation the caller resolved `ref`
 * in: if the file was replaced since, nothing is written (PS_ERR_IO).
 * On success the index has been refreshed and holds the new entries. */
ps_err append_items(struct ps_session *s, uint64_t generation, struct append_item *items, size_t n,
		    struct append_error *err);

/* A new id (8 hex characters from libuuid) not used in the session.  The
 * caller may set it on an item before append_items when a later item of
 * the same write must refer to it.  out >= 9 bytes. */
void append_fresh_id(const struct ps_session *s, char *out);

/* The current time as pi writes it: 2026-11-29T19:11:31.052Z.  out >= 32. */
void append_now_iso(char *out);

#endif
