/* A session's title as pi's session list shows it (session-selector.js of
 * pi 1.6.0): its name, else its first user message, else "(no messages)",
 * on one line.  For the names recent/ and search/ give sessions and for
 * sessions.md.  Pure functions: strings returned are new and the
 * caller's, NULL when memory runs out. */
#ifndef PS_TITLE_H
#define PS_TITLE_H

#include <stddef.h>

/* name (NULL or "" for none) else first[0..first_len) (NULL for none)
 * else "(no messages)"; control characters (U+0000-U+001F, U+007F) read
 * as spaces, as pi shows them, runs of white space as one space, trimmed,
 * and cut at max bytes (at a character's start, max at least 8) ending
 * in "…" when longer. */
char *title_line(const char *name, const char *first, size_t first_len, size_t max);

/* A listed session's name, "NN-<title>~<id tail>" (recent/, search/):
 * the rank (at least two digits), the title and the tail escaped for a
 * file name as labels are (escape.h), within NAME_MAX.  New string. */
char *title_file_name(size_t rank, const char *title, const char *tail);

/* The fewest of ids[self]'s last characters, 8, then 12, 16, ... or all
 * of it, that no other of the n ids ends in (UUID v7 ids share their
 * first characters within a minute, their last are random).  Borrowed:
 * points into ids[self]. */
const char *title_id_tail(const char *const *ids, size_t n, size_t self);

/* Whether id ends in tail. */
int title_id_ends(const char *id, const char *tail);

#endif
