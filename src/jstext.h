/* Text as JavaScript (and so pi) sees it, where C's defaults differ:
 * decoding invalid UTF-8, lone UTF-16 surrogates, what trim() strips, and
 * what new Date() makes of a timestamp.  Pure functions: buffers returned
 * are new and the caller's. */
#ifndef PS_JSTEXT_H
#define PS_JSTEXT_H

#include <stddef.h>
#include <jansson.h>

/* 1 when s[0..n) is valid UTF-8 (no surrogates, no overlongs). */
int jstext_utf8_valid(const char *s, size_t n);

/* Decodes s[0..n) as Node's UTF-8 decoder does (the WHATWG algorithm): each
 * maximal invalid subsequence becomes one U+FFFD.  Returns a new buffer. */
char *jstext_utf8_replace(const char *s, size_t n, size_t *out_len);

/* JSON.parse keeps lone surrogate escapes (pi writes them when it cuts a
 * tool output inside an emoji); jansson refuses them.  This rewrites each
 * lone "\uD8xx".."\uDFxx" escape in a JSON text to the escape of a
 * stand-in code point U+10F800 + (unit - 0xD800), which jansson keeps and
 * jsonout turns back into "\udXXX".  Returns a new buffer, or NULL when
 * there is none (or memory ran out: then *out_len is 0). */
char *jstext_map_lone_surrogates(const char *s, size_t n, size_t *out_len);

/* The stand-ins of lone surrogates: U+10F800..U+10FFFF. */
#define JSTEXT_SURROGATE_BASE 0x10F800u

/* Whether s[0..n) is exactly a JSON number (the grammar JSON.parse takes):
 * the entry files' front matter quotes strings that would read as one. */
int jstext_is_json_number(const char *s, size_t n);

/* The bounds of s[0..n) without the white space String#trim() removes
 * (ASCII white space, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
 * U+202F, U+205F, U+3000, U+FEFF). */
void jstext_trim(const char *s, size_t n, size_t *start, size_t *len);

/* ECMAScript's time value range (TimeClip): milliseconds either side of the
 * epoch. */
#define JSTEXT_MAX_TIME_MS 8.64e15

/* Milliseconds since the epoch for an ISO-8601 timestamp, as JavaScript's
 * new Date(s).getTime() computes it.  Returns 0 and sets *ok = 0 when JS
 * would give NaN (then pi's JSON holds null). */
double jstext_iso_to_ms(const char *iso, int *ok);

/* JavaScript's truthiness of a parsed JSON value (v may be NULL: undefined):
 * false for null, false, 0, NaN and "". */
int jstext_truthy(const json_t *v);

#endif
