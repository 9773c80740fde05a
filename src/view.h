/* The bytes of every file a session directory shows, and their sizes.
 * Shared by the FUSE daemon and the pisession tool so both show the same. */
#ifndef PS_VIEW_H
#define PS_VIEW_H

#include <stdint.h>
#include "layout.h"

/* Size of a file node without building it when a cache knows (entry files
 * remember their rendered size, contexts are cached by tip). */
ps_err view_size(struct ps_session *s, const struct layout_node *node, uint64_t *size);

/* Like view_size, but only when it is known without building anything
 * (returns 0 then, 1 with *size set otherwise). */
int view_size_known(const struct ps_session *s, const struct layout_node *node, uint64_t *size);

/* The whole content of a file node (not LAYOUT_RAW, which is the session
 * file itself and read in place).  *buf is new; *len its length. */
ps_err view_content(struct ps_session *s, const struct layout_node *node, char **buf, size_t *len);

/* Whether a node's content can never change: entry files and stored lines.
 * The front end lets the kernel cache those for good. */
int view_immutable(const struct layout_node *node);

#endif
