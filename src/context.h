/* Builds the model context pi would send: the C counterpart of pi 1.6.0's
 * buildSessionContext() (dist/core/session-manager.js), with the spec's
 * compaction.retainedTail honoured (the spec wins where it and pi differ). */
#ifndef PS_CONTEXT_H
#define PS_CONTEXT_H

#include <stddef.h>
#include <jansson.h>
#include "ps_error.h"
#include "session.h"

/* path: n entries from the root to the leaf (root first), each a parsed
 * session entry already migrated to version 3.  Borrowed: nothing in path is
 * modified or kept.  Returns a new reference to
 *   {"messages": [...], "thinkingLevel": "...", "model": {...} | null}
 * or NULL when memory runs out. */
json_t *context_build(json_t *const *path, size_t n);

/* The context JSON text (pretty, final newline) for the path ending at idx
 * of s, or for an empty session when idx is PS_NIL.  Only the entries that
 * can change the context are parsed (after a compaction, the kept range).
 * *buf is new (the caller's); s is borrowed.  PS_ERR_NOENT for an idx past
 * the index, PS_ERR_NOMEM, or the session's read errors. */
ps_err context_text(const struct ps_session *s, uint32_t idx, char **buf, size_t *len);

#endif
