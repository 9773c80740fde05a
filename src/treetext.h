/* tree.txt: a session's entry tree drawn as pi 1.6.0's /tree draws it
 * (tree-selector.js with its "all" filter: every entry but the assistant
 * messages that only call tools, one line each), with each line naming
 * the entry's file so it can be found in the mount.  The format is in
 * docs/layout.md ("tree.txt").
 *
 * Ownership: the session is borrowed (the caller holds its lock); the
 * buffer returned is new and the caller's. */
#ifndef PS_TREETEXT_H
#define PS_TREETEXT_H

#include <stddef.h>
#include "ps_error.h"
#include "session.h"

/* How many characters (code points) of an entry's text a line shows
 * before it is cut with "…". */
#define TREETEXT_WIDTH 60

/* The whole drawing, one line per entry pi shows, in pi's order (the branch that
 * holds the current leaf first at every fork).  Time and memory are linear
 * in the entries (plus the lines' tree prefixes, which only widen at
 * forks).  *buf is new and NUL-terminated; *len excludes the NUL; an empty
 * session gives "". */
ps_err treetext_text(const struct ps_session *s, char **buf, size_t *len);

/* One entry's text as a tree line shows it, for tests: on one line (every
 * run of whitespace or control characters one space, trimmed), cut to
 * width code points with "…".  Appended to b; -1 when memory runs out. */
struct buf;

#endif
