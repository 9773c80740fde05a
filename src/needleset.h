/* Finding the first place where any of a few short byte strings stands,
 * in one pass over the buffer.
 *
 * A skim of a session (sessioninfo_load_skim) looks for half a dozen
 * strings in every line of a store; a pass per string was most of a
 * first search.  This tests two bytes of every needle at each position of
 * a block of 16 (SSE2) or 32 (AVX2, chosen at run time) and compares only
 * where some needle's two are in place (bytefind.h's filter, for several
 * needles at once).  A needle may be caseless: its ASCII letters (given in
 * lowercase) then match in either case.
 *
 * A set is immutable once made: any number of threads may search with it. */
#ifndef PS_NEEDLESET_H
#define PS_NEEDLESET_H

#include <stddef.h>

#define NEEDLESET_MAX 16

struct needleset_needle {
	const char *text;       /* borrowed: must outlive the set */
	size_t len;             /* at least 1 */
	int caseless;           /* text is ASCII lowercase; either case matches */
	size_t i0, i1;          /* the two positions tested */
	unsigned char c0, c1;   /* their bytes (| 0x20 when caseless) */
	unsigned char fold;     /* 0x20 when caseless, else 0 */
};

struct needleset {
	struct needleset_needle needles[NEEDLESET_MAX];
	size_t n;
	size_t max_len;
};

/* Fills *set with needles (texts[i] of lens[i] bytes, caseless[i]);
 * -1 when there are none, more than NEEDLESET_MAX, or one is empty. */
int needleset_init(struct needleset *set, const char *const *texts, const size_t *lens, const int *caseless,
		   size_t n);

/* The first place in [p, end) where one of the needles stands, with its
 * index in *which (the lowest index when several start there), or NULL. */
const char *needleset_find(const struct needleset *set, const char *p, const char *end, size_t *which);

#endif
