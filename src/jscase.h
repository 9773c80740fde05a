/* String#toLowerCase as V8 computes it (ICU's root-locale full lowercase
 * mapping), over UTF-8: what pi's session search compares.  The simple
 * mappings come from the C library's C.UTF-8 locale (towlower_l); the two
 * full mappings that are not simple are done by hand: U+0130 becomes
 * "i" U+0307, and a capital sigma at the end of a word becomes U+03C2
 * (Final_Sigma, with the Cased and Case_Ignorable properties approximated:
 * docs/search.md).  Without the C.UTF-8 locale only ASCII is lowered.
 * Thread-safe. */
#ifndef PS_JSCASE_H
#define PS_JSCASE_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"

/* Whether the C.UTF-8 locale was loaded (at the first call, once): without
 * it only ASCII is lowered.  glibc tells no failed allocation inside
 * newlocale from a locale that is not there, and keeps the failure, so the
 * programs ask this first and say so rather than answer otherwise. */
int jscase_has_locale(void);

/* Appends the lowercase of s[0..n) to out.  s is valid UTF-8 (the
 * stand-ins of lone surrogates, jstext.h, are kept as they are).  Returns
 * 0, or -1 when memory ran out (out then holds a prefix). */
int jscase_lower(const char *s, size_t n, struct buf *out);

/* Decodes one code point of valid UTF-8 at s (n > 0 bytes left); *len
 * receives its length.  Invalid bytes decode as themselves, length 1. */
uint32_t jscase_decode(const char *s, size_t n, size_t *len);

/* Whether c is white space for JavaScript's \s and String#trim. */
int jscase_is_space(uint32_t c);

#endif
