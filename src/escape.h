/* How strings from a session (ids, tool names, labels) become file names:
 * bytes outside [A-Za-z0-9_-] are written %XX.  '.' is escaped too, so the
 * dots in "NNNN-kind.id.md" are unambiguous separators, and no name can be
 * ".", ".." or hold a '/'. */
#ifndef PS_ESCAPE_H
#define PS_ESCAPE_H

#include <stddef.h>

/* Returns a new NUL-terminated escaped copy of s[0..n), or NULL. */
char *escape_name(const char *s, size_t n);

/* Decodes %XX in place; returns the decoded length, or (size_t)-1 when
 * the name holds a malformed escape or a byte that escape_name escapes
 * (so every string has exactly one name). */
size_t escape_unname(char *s);

#endif
