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

#endif
