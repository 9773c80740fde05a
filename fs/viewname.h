/* How the views at the mount root spell names (docs/layout.md
 * "Escaping"): by-id/ and by-name/ names, by-cwd/ paths, and the names of
 * before that keep resolving.  Strings returned are new (free them);
 * NULL when memory runs out. */
#ifndef PSFS_VIEWNAME_H
#define PSFS_VIEWNAME_H

#include <stddef.h>
#include "catalog.h"

/* s as a listed name, within limit bytes (room left for a suffix). */
char *views_escape_max(const char *s, size_t limit);
char *views_escape(const char *s);
/* s as names were escaped before (every '%' and control character). */
char *views_escape_before(const char *s);

/* A by-cwd path (no leading slash) with each component as it is listed. */
char *views_cwd_normalize(const char *path);
/* Replaces each session's cwd in items by its by-cwd key: 0 or -ENOMEM. */
int views_cwd_keys(struct catalog_session *items, size_t n);
/* Whether dir (like "home/u/proj", "" for by-cwd itself) is a prefix of
 * the cwd key, component by component; whether it is the key itself. */
int views_cwd_under(const char *cwd, const char *dir);
int views_cwd_is(const char *cwd, const char *dir);
/* How many components dir has. */
int views_depth(const char *dir);

#endif
