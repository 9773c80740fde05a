/* A conversation as one readable Markdown document (transcript.md): the
 * path from the root to an entry, each entry a short section.  The format,
 * and why the transcript of a path is a byte prefix of every longer one, is
 * in docs/transcript-format.md.
 *
 * Ownership: the session is borrowed (the caller holds its lock); the
 * buffer returned is new and the caller's. */
#ifndef PS_TRANSCRIPT_H
#define PS_TRANSCRIPT_H

#include <stddef.h>
#include <stdint.h>
#include "ps_error.h"
#include "session.h"

/* Image links are link_prefix (NULL for none; "../" per directory level of
 * the transcript below the session directory) plus the entry file's path
 * from the session directory by id names, less ".md", plus
 * ".images/N.ext".
 *
 * The transcript of the path from the root to tip (an index into
 * s->entries; PS_NIL gives the title alone).  *buf is new and
 * NUL-terminated; *len excludes the NUL.  PS_ERR_NOTSESSION for a file
 * without a header, PS_ERR_NOENT for a tip out of range. */
ps_err transcript_text(const struct ps_session *s, uint32_t tip, const char *link_prefix, char **buf, size_t *len);

#endif
