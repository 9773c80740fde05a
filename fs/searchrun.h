/* One search run (searchdir.h shows its results as directories): the
 * candidates pi would read, in pi's order; each one's info from the
 * mount's cache, the disk, a skim that rules it out, or the file; the
 * query's verdicts of unchanged files reused (searchmemo.h); the hits
 * named and sorted as pi lists them.  Private to searchdir.c. */
#ifndef PSFS_SEARCHRUN_H
#define PSFS_SEARCHRUN_H

#include <stddef.h>
#include <stdint.h>
#include "caller.h"
#include "pisessionfs.h"

struct searchmemo;

/* A link in a result's directory. */
struct search_link {
	char *name, *target;
};

struct search_hit {
	char *project, *stem, *id;
	char *name;               /* as listed: NN-<title>~<id tail> */
	double modified_ms;
	size_t order;             /* in the catalog's order: ties keep it */
	int by_name;              /* ties go by file name instead (below) */
	struct search_link *links; /* built at the first look inside */
	size_t n_links;
	int links_built;
};

struct search_result {
	char *scope, *query;
	struct psfs_caller who;   /* whose it is: uid, gid and groups */
	int64_t made_ns;
	struct search_hit *hits;
	size_t n;
};

/* What one query may spend matching, in ns (-o search_budget). */
long long search_budget_ns(const struct psfs *fs);
/* A budget's gave_up (search.h): the caller's request was interrupted. */
int search_caller_gave_up(void *ctx);

/* Frees r and all it holds (NULL is fine). */
void search_result_free(struct search_result *r);

/* Runs query over the sessions of scope ("" for the whole store) that
 * the caller may read, reusing and then keeping the query's verdicts in
 * verdicts: 0 with *out new, or -errno (-EINVAL for an invalid query,
 * -ETIMEDOUT for one over its budget, -EINTR when the caller gave up;
 * the log says why). */
int search_run(struct psfs *fs, struct searchmemo *verdicts, const char *scope, const char *query,
	       struct search_result **out);

#endif
