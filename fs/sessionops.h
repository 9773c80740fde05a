/* Sessions as wholes: start, delete to the trash, fork (sessionops.c). */
#ifndef PSFS_SESSIONOPS_H
#define PSFS_SESSIONOPS_H

#include <sys/types.h>
#include "pisessionfs.h"

/* mkdir PATH (NAME in the folder parent, a project or a flat store's
 * root): a new session named NAME.  0 or -errno, logged. */
int psfs_session_start(const char *path, const struct psfs_path *parent, const char *name, mode_t mode);

/* unlink of SESSION/session.jsonl (p, ref acquired by the caller): the
 * session file to the trash, the session buried.  0 or -errno, logged;
 * a refusal is remembered for psfs_session_rm_refused. */
int psfs_session_trash(const char *path, const struct psfs_path *p, struct store_ref *ref);

/* Whether the calling process had its deletion of p's session refused
 * within the last 30 seconds (the rest of its rm -r removes nothing). */
int psfs_session_rm_refused(const struct psfs_path *p);

/* rmdir of a directory of a session in the trash: 1 (done), else 0. */
int psfs_session_rmdir_buried(const char *path);

/* symlink(target, path) with path's folder parent a project or a flat
 * store's root: a fork of the entry target names, called name.  0 or
 * -errno, logged. */
int psfs_session_fork(const char *target, const char *path, const struct psfs_path *parent, const char *name);

#endif
