/* Renders one session entry as the Markdown shown in an entry file
 * (NNNN-role.id.md).  The format is documented in docs/entry-format.md and
 * is designed to be parsed back by the write side. */
#ifndef PS_RENDER_H
#define PS_RENDER_H

#include <stddef.h>
#include <jansson.h>

/* The entry file name assumed when none is given. */
#define RENDER_DEFAULT_NAME "entry.md"

/* entry: a parsed session entry (version 3 form), borrowed.
 * name: the entry file's name (NNNN-kind.id.md, layout.h), borrowed.  The
 * links to the entry's image files are relative to it (NAME less ".md",
 * then ".images/N.ext"), so they resolve wherever the file is listed; NULL
 * stands for RENDER_DEFAULT_NAME (an entry rendered outside a mount).  The
 * parser must be given the same name (parse.h).
 * Returns a new malloc'd buffer holding the Markdown (NUL-terminated for
 * convenience; *len excludes the NUL), or NULL when memory runs out. */
char *render_entry(const json_t *entry, const char *name, size_t *len);

#endif
