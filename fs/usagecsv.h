/* The size of usage.csv without building it on every stat.
 *
 * A usage.csv is built from every session it covers (each one indexed, so
 * a store larger than the session cache is parsed anew).  Its length is
 * kept with the listing it was built from: every session file's project,
 * name, device, inode, size, modification and change time, the same
 * things by which the store tells that a session changed.  A stat lists
 * the sessions again (readdir and a stat per file, no file opened) and,
 * when the listing is the same, answers with the length kept.
 *
 * Ownership: the memo is this module's (a few listings, the latest used
 * kept); the CSV itself is built by views_usage_csv, so whatever it holds
 * and however it prints, the size is the length of its bytes.
 * Thread-safe. */
#ifndef PSFS_USAGECSV_H
#define PSFS_USAGECSV_H

#include <stddef.h>
#include "pisessionfs.h"

/* The length of views_usage_csv(fs, project, ...): of one project's file,
 * or of the whole store's when project is NULL.  0, or -errno as
 * views_usage_csv fails. */
int usagecsv_size(struct psfs *fs, const char *project, size_t *len);

/* The gate of usage.csv for the FUSE operations (as views.h is for the
 * views): the store's at the mount root, and one in every project
 * directory.  p is the path as psfs_split split it. */
int usagecsv_owns(const struct psfs_path *p);
/* Attributes of a usage.csv; root: the store directory's (owner, times
 * of the store's file).  0 or -errno. */
int usagecsv_getattr(struct psfs *fs, const struct psfs_path *p, const struct stat *root, struct stat *st);
/* The names usage.csv adds to a listing of the root or of a project
 * directory (dir: that directory, split). */
void usagecsv_readdir(const struct psfs_path *dir, void *buf, fuse_fill_dir_t filler);
/* Opens a usage.csv: its text built now (*data new, the caller frees it).
 * 0, -EACCES for writing, or -errno as views_usage_csv fails. */
int usagecsv_open(struct psfs *fs, const struct psfs_path *p, int flags, char **data, size_t *len);

/* Frees the memo (at unmount). */
void usagecsv_clear(void);

#endif
