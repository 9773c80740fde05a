/* pi's /resume search as directories (docs/layout.md "Searching"):
 *
 *   MOUNT/search/QUERY/                  every session the caller may read
 *   MOUNT/PROJECT/search/QUERY/          that project folder's sessions
 *     NN-<title>~<id tail>/              one per session pi's
 *                                        filterAndSortSessions(sessions,
 *                                        QUERY, "recent") lists, in its order
 *       session -> the session directory
 *       NNNN-<kind>.<id>.md -> each entry file whose text the query found
 *
 * Matching is src/search.c's; the sessions' infos come from the mount's
 * cache (struct psfs's infos, within -o search_cache: src/infocache.h), so a search after the first
 * reads only what was appended since.  A result is kept a second for the
 * lookups that follow a listing; a name once listed keeps resolving while
 * its session still matches, whatever its rank or title now (the id tail
 * decides).  Every call is the caller's own: only sessions it may read
 * (caller.h). */
#ifndef PSFS_SEARCHDIR_H
#define PSFS_SEARCHDIR_H

#include <stddef.h>
#include "pisessionfs.h"

#define SEARCH_NAME "search"
/* -o search_cache's default: what search keeps of the sessions it read,
 * all of it within the budget: the infos (struct psfs's infos) and an
 * eighth for the verdicts of recent queries (searchmemo.h). */
#define SEARCH_CACHE_DEFAULT ((size_t)32 << 20)
#define SEARCH_VERDICTS_SHARE(budget) ((budget) / 8)

/* The results kept for the lookups that follow a listing (struct psfs's
 * search), and the verdicts of recent queries within verdict_bytes: this
 * module's own, made and freed by main.c; NULL when out of memory.
 * Thread-safe (their own lock). */
struct search_results;
struct search_results *search_results_new(size_t verdict_bytes);
void search_results_free(struct search_results *sr);

/* Whether path is a search directory or inside one: MOUNT/search... or,
 * when p (the path as psfs_split split it) names a project, PROJECT/search... */
int search_owns(const char *path, const struct psfs_path *p);
/* 0 or -errno: -EINVAL for a query that is not valid (the log says why),
 * -ENOENT for a name that is not (or no longer) a result. */
int search_getattr(struct psfs *fs, const char *path, const struct psfs_path *p, const struct stat *root,
		   struct stat *st);
int search_readdir(struct psfs *fs, const char *path, const struct psfs_path *p, void *buf, fuse_fill_dir_t filler);
int search_readlink(struct psfs *fs, const char *path, const struct psfs_path *p, char *buf, size_t size);

#endif
