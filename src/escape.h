/* How strings from a session (ids, tool names, labels) become file names:
 * bytes outside [A-Za-z0-9_-] are written %XX.  '.' is escaped too, so the
 * dots in "NNNN-kind.id.md" are unambiguous separators, and no name can be
 * ".", ".." or hold a '/'. */
#ifndef PS_ESCAPE_H
#define PS_ESCAPE_H

#include <stddef.h>

/* Returns a new NUL-terminated escaped copy of s[0..n), or NULL. */
char *escape_name(const char *s, size_t n);

/* Like escape_name, but a result longer than limit bytes is cut (at a whole
 * escape) and ends in "~h" and 16 hex digits of a hash of the whole string:
 * names stay under the kernel's 255 bytes and unique, and '~' (always
 * escaped otherwise) marks them as shortened.  limit >= 24. */
char *escape_name_max(const char *s, size_t n, size_t limit);

/* Whether a name part was shortened by escape_name_max. */
int escape_is_shortened(const char *part);

/* Decodes %XX in place; returns the decoded length, or (size_t)-1 when
 * the name holds a malformed escape or a byte that escape_name escapes
 * (so every string has exactly one name). */
size_t escape_unname(char *s);

#endif
