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

/* Names people type and read (labels, branch names, session names, cwd
 * components; docs/layout.md "Escaping"): every byte is kept except what a
 * file name cannot hold or what would be unreadable in a listing.  Written
 * %XX (upper-case hex): '/', control characters (0x00-0x1F, 0x7F), the
 * dots of a string that is "." or "..", a '%' followed by two upper-case
 * hex digits (only there, so the name reads back), and the '~' of a string
 * whose name would otherwise end like a shortened one.  A name longer than
 * limit bytes is cut (at a whole character, never inside an escape) and
 * ends in "~h" and 16 hex digits of a hash of the whole string, as
 * escape_name_max (a limit under 24 counts as 24).  Returns a new string,
 * or NULL. */
char *escape_typed_name(const char *s, size_t n, size_t limit);

/* The string a typed name stands for (new, NUL-terminated; *len its
 * length), or NULL with *len 0 when no string has that name (e.g. "%41",
 * whose string "A" is named "A"), or with *len (size_t)-1 when memory runs
 * out.  Control characters typed as they are count as their escape, so a
 * label typed with a tab names the label listed with %09.  Shortened names
 * are not decoded (see escape_typed_shortened). */
char *escape_typed_string(const char *name, size_t *len);

/* Whether a name ends like one cut by escape_typed_name ("~h" and 16
 * lower-case hex digits). */
int escape_typed_shortened(const char *name);

#endif
