/* A JavaScript regular expression (the syntax new RegExp(p, "i") takes
 * without the u flag, Annex B included) rewritten for PCRE2, so that what
 * compiles and what matches is JavaScript's wherever PCRE2 can say it:
 * identity escapes (\A, \z, \p ... are plain letters in JavaScript), \s as
 * JavaScript's white space, "." that stops at all four line terminators,
 * \uHHHH and surrogate pairs, octal escapes, backreferences, and
 * JavaScript's syntax errors for what PCRE2 alone would accept (possessive
 * quantifiers, (?flags), atomic groups, quantified lookbehinds).  The
 * remaining differences are listed in docs/search.md.  Pure functions. */
#ifndef PS_JSREGEX_H
#define PS_JSREGEX_H

#include <stddef.h>
#include "buf.h"
#include "ps_error.h"

/* Appends the PCRE2 pattern for the JavaScript pattern p[0..n) (UTF-8) to
 * out, to be compiled with jsregex_pcre2_options().  PS_ERR_INVALID with
 * *why (static text, JavaScript's wording) for a pattern JavaScript
 * refuses; PS_ERR_NOMEM. */
ps_err jsregex_translate(const char *p, size_t n, struct buf *out, const char **why);

/* The compile options the translated pattern expects (PCRE2_UTF, caseless,
 * $ at the very end only, empty classes, unset backreferences match ""). */
unsigned jsregex_pcre2_options(void);

#endif
