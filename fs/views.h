/* The navigation views at the mount root: by-id/, by-name/, by-cwd/ and
 * recent/, all symlinks into the real tree (docs/layout.md). */
#ifndef PSFS_VIEWS_H
#define PSFS_VIEWS_H

#include "catalog.h"
#include "pisessionfs.h"

/* Whether path is a view or inside one. */
int views_owns(const char *path);
int views_getattr(struct psfs *fs, const char *path, struct stat *st);
int views_readdir(struct psfs *fs, const char *path, void *buf, fuse_fill_dir_t filler);
int views_readlink(struct psfs *fs, const char *path, char *buf, size_t size);

/* The views built last, kept for the next request while the catalog
 * is unchanged (one per view, for the caller it was built for): the
 * mount's fs->views, made once; NULL (a unit test's psfs) builds every
 * time.  0 or -ENOMEM. */
struct views_memo;
int views_memo_new(struct views_memo **out);
void views_memo_free(struct views_memo *m);

/* Names of the views, for the root listing (NULL-terminated). */
extern const char *const views_names[];

#endif
