/* A fast path for reading one stored line into jansson values.
 *
 * jansson's decoder reads a character at a time through a stream and grows
 * every string a byte at a time; rendering the entry files of a large
 * session spent half its time there (tests/bench/results.md).  This parser takes
 * the common case -- an object of valid UTF-8, standard escapes, numbers
 * within range -- in runs (memchr-like scans, one copy per string) and
 * builds the same values jansson would.  Everything else it declines, and
 * the caller decodes with jansson, which then decides (and reports) exactly
 * as before.  tests/fuzz/fuzz_jparse.c checks the two agree.
 */
#ifndef PS_JPARSE_H
#define PS_JPARSE_H

#include <stddef.h>
#include <jansson.h>

enum jparse_result {
	JPARSE_OK,
	JPARSE_DECLINED, /* not the common case, or not JSON: ask jansson */
	JPARSE_NOMEM,
};

/* Parses text[0..len) as one JSON object with optional white space around
 * it, as json_loadb(text, len, JSON_ALLOW_NUL) would.  On JPARSE_OK *out is
 * a new reference; otherwise *out is NULL. */
enum jparse_result jparse_object(const char *text, size_t len, json_t **out);

#endif
