/* A subagent's session found store-wide, by id or name: what by-id/ and
 * by-name/ answer when no session of the store's own has the id or name
 * (docs/layout.md "Subagent runs"). */
#ifndef PS_FAMILYSEARCH_H
#define PS_FAMILYSEARCH_H

#include <sys/stat.h>
#include "family.h"

/* The subagent's session of the store (in any family folder, at any
 * depth) whose header id is key (or begins with key, 8 characters or
 * more), or whose session name is key (by_name), among those may says
 * the caller may read (the parent's file and the child's): PS_OK with
 * *path new, its directory's path below the mount root
 * ("PROJECT/STEM/subagents/NAME"); PS_ERR_NOENT when none is, or when
 * more than one is; PS_ERR_NOMEM.  It walks every family of the store:
 * for a lookup that the top-level sessions did not answer. */
typedef int (*family_may_fn)(void *ctx, const struct stat *st);
ps_err family_search_store(struct ps_store *store, struct family_cache *cache, int by_name, const char *key,
			   family_may_fn may, void *ctx, char **path);

#endif
