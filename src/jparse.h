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

/* Which members jparse_object_keep builds: of the line's object, those
 * named in top (NULL-terminated); of the object that is the value of
 * inner_key (one of top), those named in inner.  The rest is read as
 * jparse_object reads it (so the same lines are declined) but not built:
 * a reader that needs a few fields of a large line (usage.c: the usage of
 * an assistant message, not its content) skips building the rest. */
struct jparse_keep {
	const char *const *top;
	const char *inner_key;
	const char *const *inner;
};

/* jparse_object keeping only what keep names (NULL: everything).  Declines
 * exactly the texts jparse_object declines. */
enum jparse_result jparse_object_keep(const char *text, size_t len, const struct jparse_keep *keep, json_t **out);

#endif
