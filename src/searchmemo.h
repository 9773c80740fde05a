/* What recent queries decided for each session file, so that a query run
 * again (its listing expired, or a session was appended to) costs what
 * changed: every file whose stamp (filestamp.h) is what it was keeps its
 * verdict, and only the others are read.  A verdict depends on the
 * file's bytes and the query alone, not on who asked: who may see which
 * sessions is decided before, per caller, as for any search.
 *
 * A table of verdicts is immutable once kept, and shared by reference:
 * a search reads the one it got while another search replaces it.  The
 * memo holds the tables of at most a few queries (the newest), within a
 * budget of bytes: a store of 15,000 sessions makes tables of about 3 MB.
 *
 * Ownership: strings are copied in; what find lends is valid while the
 * caller holds its reference.  Thread-safe. */
#ifndef PS_SEARCHMEMO_H
#define PS_SEARCHMEMO_H

#include <stddef.h>
#include "filestamp.h"
#include "ps_error.h"

struct search_verdict {
	struct filestamp stamp; /* of the file as it was decided */
	int match;
	const char *id, *title; /* a match's, as listed; NULL for no match */
	double modified_ms;
};

struct search_verdicts;
struct searchmemo;

/* A memo of the tables of at most max queries, all within max_bytes (a
 * table larger alone is not kept); NULL when memory ran out. */
struct searchmemo *searchmemo_new(size_t max, size_t max_bytes);
void searchmemo_free(struct searchmemo *m);

/* The table kept for query in scope: a new reference (give it back with
 * search_verdicts_put), or NULL. */
struct search_verdicts *searchmemo_get(struct searchmemo *m, const char *scope, const char *query);
/* Keeps v (stolen) as the table of its query, in place of any older one;
 * the least recently kept tables go while there are more than max or
 * they hold more than max_bytes. */
void searchmemo_keep(struct searchmemo *m, struct search_verdicts *v);
/* The bytes the kept tables hold. */
size_t searchmemo_bytes(struct searchmemo *m);

/* A new, empty table for query in scope (NULL when memory ran out). */
struct search_verdicts *search_verdicts_new(const char *scope, const char *query);
/* Adds the verdict for the file named key[0..len) (unique in the table). */
ps_err search_verdicts_add(struct search_verdicts *v, const char *key, size_t len, const struct search_verdict *verdict);
/* 1 with *out the verdict for key when the file's stamp is still stamp
 * (its strings lent while the reference is held), else 0. */
int search_verdicts_find(const struct search_verdicts *v, const char *key, size_t len, const struct filestamp *stamp,
			 struct search_verdict *out);
/* Gives back a reference (NULL is fine). */
void search_verdicts_put(struct search_verdicts *v);

#endif
