/* Builds the model context pi would send: the C counterpart of pi 1.6.0's
 * buildSessionContext() (dist/core/session-manager.js), with the spec's
 * compaction.retainedTail honoured (the spec wins where it and pi differ). */
#ifndef PS_CONTEXT_H
#define PS_CONTEXT_H

#include <stddef.h>
#include <jansson.h>

/* path: n entries from the root to the leaf (root first), each a parsed
 * session entry already migrated to version 3.  Borrowed: nothing in path is
 * modified or kept.  Returns a new reference to
 *   {"messages": [...], "thinkingLevel": "...", "model": {...} | null}
 * or NULL when memory runs out. */
json_t *context_build(json_t *const *path, size_t n);

/* Milliseconds since the epoch for an ISO-8601 timestamp, as JavaScript's
 * new Date(s).getTime() computes it.  Returns 0 and sets *ok = 0 when JS
 * would give NaN (then pi's JSON holds null). */
double context_iso_to_ms(const char *iso, int *ok);

#endif
