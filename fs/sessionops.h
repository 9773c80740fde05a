/* Sessions as wholes: delete to the trash, fork (sessionops.c); starting
 * one is sessionstart.h's. */
#ifndef PSFS_SESSIONOPS_H
#define PSFS_SESSIONOPS_H

#include <sys/types.h>
#include "pisessionfs.h"

/* What sessionops.c remembers for a mount (struct psfs's sessionops):
 * which process read which session directory's listing and which is
 * deleting it, and whose deletion of which session was refused.  Made by
 * main.c (NULL when out of memory), which frees it with
 * sessionops_state_free (NULL is a no-op).  Thread-safe. */
struct sessionops_state *sessionops_state_new(void);
void sessionops_state_free(struct sessionops_state *st);

/* A listing of the session directory path was read (readdir): the
 * calling process may go on to delete it (docs/layout.md, "Deleting a
 * session"). */
void psfs_session_listed(const char *path);

/* unlink of SESSION/session.jsonl: 0 when it starts the deletion of the
 * session by a process that read its listing, else -errno (EPERM,
 * logged; EACCES for a caller who may not delete it, remembered for
 * psfs_session_rm_refused). */
int psfs_session_unlink(const char *path, const struct psfs_path *p);

/* Whether the calling process is deleting p's session: what else it
 * removes there succeeds and changes nothing. */
int psfs_session_deleting(const struct psfs_path *p);

/* Whether the calling process had its deletion of p's session refused
 * within the last 30 seconds (the rest of its rm -r removes nothing). */
int psfs_session_rm_refused(const struct psfs_path *p);

/* rmdir of a directory of a session the caller is deleting: 1 (*res the
 * answer; the session directory's moves the file to the trash), else 0. */
int psfs_session_rmdir(const char *path, int *res);

/* A listing of the mount's root or of a folder in it (a project, a view)
 * that a process holds open (opendir .. releasedir), remembered so that a
 * recursive removal of it is told from a deliberate one of a session
 * (docs/layout.md "Deleting a session": rm -rf MOUNT, rm -r PROJECT and
 * find MOUNT -delete hold the folder open while they remove what is in
 * it).  psfs_folder_hold: 0 with *hold new (NULL when path is deeper:
 * nothing to remember), or -ENOMEM; the calling process is the holder.
 * psfs_folder_release frees it (NULL is a no-op). */
struct psfs_folder_hold;
int psfs_folder_hold(const char *path, struct psfs_folder_hold **hold);
void psfs_folder_release(struct psfs_folder_hold *hold);

/* unlink or rmdir of path by a process that holds open a listing of the
 * root or of the folder path is in: 1 (refuse it, EPERM; the first such
 * refusal of each hold logs one line saying how to delete a session),
 * else 0. */
int psfs_folder_removal_refused(const char *path);

/* symlink(target, path) with path's folder parent a project or a flat
 * store's root: a fork of the entry target names, called name.  0 or
 * -errno, logged. */
int psfs_session_fork(const char *target, const char *path, const struct psfs_path *parent, const char *name);

#endif
