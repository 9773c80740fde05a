/* The text of a user or assistant message decoded straight from its
 * stored line, without a jansson tree: the fast path of sessioninfo.c.
 * The spans come from scan_line() (scan.h: the line is valid JSON); each
 * function decodes as jsonline_load() and JSON.parse would, and declines
 * what it is not sure of.  They return 0 (done), 1 (declined: the caller
 * takes the jansson path; out is as it was) or -1 (out of memory). */
#ifndef PS_MSGTEXT_H
#define PS_MSGTEXT_H

#include <stddef.h>
#include "buf.h"
#include "scan.h"

/* Appends the JSON string raw[0..len) (between its quotes), decoded:
 * escapes as JSON.parse reads them, a lone surrogate as its stand-in
 * (jstext.h).  Invalid UTF-8 is declined. */
int msgtext_string(struct buf *out, const char *raw, size_t len);

/* Appends pi's extractTextContent of a content array (the '[' at p):
 * the text blocks' texts joined with " ". */
int msgtext_blocks(struct buf *out, const char *p, const char *end);

/* A number or an unescaped ASCII string of up to 63 bytes, NUL-terminated
 * into tmp: 1, or 0 when it is neither. */
int msgtext_small(const struct scan_field *f, char tmp[64]);

#endif
