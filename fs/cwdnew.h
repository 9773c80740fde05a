/* Starting a session for a directory that has no project folder yet
 * (docs/layout.md "Starting a session in a new directory"):
 * `mkdir -p MOUNT/by-cwd/home/ana/newproj/NAME` makes directories kept in
 * memory (the overlay's OVERLAY_CWD nodes, seen only by their maker);
 * the first file made in the deepest starts the session NAME with the
 * cwd /home/ana/newproj, exactly, in the folder pi names for it.  From
 * then on that directory is the session's: every path below it stands
 * for the same path in the session directory (cwdnew_alias, which the
 * operations table applies to every path it is given).
 *
 * All of these serve a FUSE request (fuse_get_context must be valid). */
#ifndef PSFS_CWDNEW_H
#define PSFS_CWDNEW_H

#include <sys/types.h>
#include "pisessionfs.h"

/* Whether path is by-cwd/ or lies below it. */
int cwdnew_owns(const char *path);

/* When *path lies in a directory that started a session, *path becomes
 * the same path in that session directory (*alias, new, holds it; the
 * caller frees it), else *alias is NULL.  0 or -ENOMEM. */
int cwdnew_alias(const char **path, char **alias);

/* mkdir path under by-cwd/ (dir its parent, name its last component): a
 * directory kept in memory, the caller's.  0 or -errno, logged. */
int cwdnew_mkdir(const char *path, const char *name, mode_t mode);

/* rmdir of a kept directory that started nothing: 1 with *res the
 * answer (0, ENOTEMPTY), else 0 (not one). */
int cwdnew_rmdir(const char *path, int *res);

/* A file path made in a kept directory: starts that directory's session
 * (once; a second file finds it started) and sets *alias (new) to the
 * file's path in the session directory.  1 with *res 0 when it did, 1
 * with *res -errno (logged, nothing made) when it refused, 0 when path's
 * directory is no kept one.  entry_name says whether the session would
 * take a file of that name (checked before anything is made). */
int cwdnew_start(const char *path, int entry_name, char **alias, int *res);

/* The kept directories inside dir (a by-cwd path) the caller made,
 * through filler; those the catalog lists already (listed by
 * views_readdir) are left out when skip_listed.  0 or -ENOMEM. */
int cwdnew_readdir(struct psfs *fs, const char *dir, void *buf, fuse_fill_dir_t filler, int skip_listed);

/* Whether the kept directory node is shown to this caller: its maker's
 * and root's only (its name is what they typed). */
struct overlay_node;
int cwdnew_visible(const struct overlay_node *node);

#endif
