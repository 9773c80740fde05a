/* Renders one session entry as the Markdown shown in an entry file
 * (NNNN-role.id.md).  The format is documented in docs/entry-format.md and
 * is designed to be parsed back by the write side. */
#ifndef PS_RENDER_H
#define PS_RENDER_H

#include <stddef.h>
#include <jansson.h>

/* entry: a parsed session entry (version 3 form), borrowed.
 * Returns a new malloc'd buffer holding the Markdown (NUL-terminated for
 * convenience; *len excludes the NUL), or NULL when memory runs out. */
char *render_entry(const json_t *entry, size_t *len);

#endif
