/* Internals shared by the FUSE operations, split by job the way
 * squashfuse splits its front end:
 *   ops.c       the operations table and init (the top: nothing calls it);
 *   guardcall.c each call, bounded on a store that may stop answering;
 *   opspath.c   the operations on a path, aliases and refusals first;
 *   node.c      a path's kind (route_resolve) to that kind's operations:
 *               stat, listing, readlink, open (node.h);
 *   attr.c      stat and readlink of the store's names, attr.h;
 *   dir.c       listings of the store's names and the overlay's;
 *   dirhandle.c an open directory's listing, read by offset;
 *   fileopen.c  file handles opened: an in-memory file's, a text, a
 *               store node's for reading or writing;
 *   file.c      file handles read and written, and their commit points
 *               (the opener's close, fsync, the last release);
 *   draft.c     the text and state of a file being written (draft.h);
 *   namespace.c namespace edits (create, unlink, mkdir, rmdir, symlink,
 *               rename, chmod, chown, utimens, truncate) and what they
 *               guess of editors' saves.
 * All of them route paths through route.h (route_resolve, psfs_split),
 * which lies below them and calls none of them back; this header brings
 * route.h and attr.h in.  Only the handler files (and sessionops.c)
 * include it.  Every function here runs in a FUSE handler
 * (psfs_context() is valid) unless said otherwise.
 *
 * Ownership: a struct psfs_file belongs to the kernel's file handle
 * (fi->fh): made through node_open (file.c's psfs_store_open,
 * psfs_open_overlay, psfs_open_text) or by psfs_create, freed only by
 * psfs_release.
 * A reader's snapshot is guarded by its lock; a writer's text and state
 * by its draft's; node (an overlay file) by the overlay lock.  A session
 * acquired by psfs_locate is the caller's until store_release. */
#ifndef PSFS_OPS_INTERNAL_H
#define PSFS_OPS_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include "caller.h"
#include "layout.h"
#include "attr.h"
#include "draft.h"
#include "overlay.h"
#include "pisessionfs.h"
#include "route.h"

enum psfs_handle {
	HANDLE_READ,    /* a snapshot taken at open (data), or the raw file (fd) */
	HANDLE_OVERLAY, /* an in-memory file */
	HANDLE_EDIT,    /* an entry file opened for writing: a buffer */
	HANDLE_NAME,    /* `name` or `loadout.json` opened for writing */
	HANDLE_RAW,     /* session.jsonl opened for appending */
};

/* An open file.  Readers see one consistent snapshot even while the session
 * grows; a handle opened for writing holds a draft (draft.h), shared by
 * every descriptor of that open file, which becomes entries at a commit
 * point (docs/layout.md, "When a write is committed"). */
struct psfs_file {
	enum psfs_handle kind;
	pthread_mutex_t lock;  /* a reader's snapshot (data, len, lazy, changes, generation) */
	char *data;
	size_t len;
	int fd;
	struct overlay_node *node; /* HANDLE_OVERLAY: held (node->opens) */
	struct draft *draft;   /* writers and HANDLE_OVERLAY: a reference */
	char *path;
	char project[STORE_PROJECT_MAX];
	char session[NAME_MAX + 1];
	uint64_t generation;
	int growing;        /* a transcript: reads past the end look for more */
	uint64_t changes;   /* growing: the session's change count the snapshot is from */
	int append;         /* opened with O_APPEND: writes go to the end, whatever the offset */
	int writable;       /* opened for writing: its closes may be commit points */
	int lazy;           /* an immutable file: its text is built at the first read */
	pid_t opener;       /* the process that opened it (psfs_caller_process) */
	uid_t uid;          /* who opened it: its commit speaks for them (caller.h) */
	gid_t gid;
	_Atomic int refs;   /* the kernel's handle, and each guarded call still running with it (guard.h) */
	_Atomic int store_gave_up; /* a guarded call on it was answered EIO: the store stopped answering */
};

static inline struct psfs *psfs_self(void)
{
	return psfs_context()->private_data;
}

/* The request's mount's in-memory files (overlay.h). */
static inline struct overlay *psfs_overlay(void)
{
	return psfs_self()->overlay;
}

/* Open directories (dirhandle.c). */
int psfs_opendir(const char *path, struct fuse_file_info *fi);
int psfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
		 struct fuse_file_info *fi, enum fuse_readdir_flags flags);
int psfs_releasedir(const char *path, struct fuse_file_info *fi);

/* Listings of the store's names (dir.c): the PSFS_NODE_STORE row's
 * readdir, and the overlay's names in directory path. */
int psfs_store_readdir(struct psfs *fs, const struct psfs_node *n, void *buf, fuse_fill_dir_t filler,
		       enum fuse_readdir_flags flags);
int psfs_readdir_overlay(const char *path, void *buf, fuse_fill_dir_t filler, enum fuse_readdir_flags flags);

/* File handles: made and freed (fileopen.c); a handle's path is copied.
 * A new handle holds one reference, the kernel's; psfs_file_hold adds
 * one (a guarded call still running with it), psfs_file_put drops one and
 * frees the handle with the last. */
struct psfs_file *psfs_file_new(enum psfs_handle kind, const char *path);
void psfs_file_free(struct psfs_file *f);
void psfs_file_hold(struct psfs_file *f);
void psfs_file_put(struct psfs_file *f);
/* An open directory's listing (dirhandle.c), held the same way. */
void psfs_dirlist_hold(uint64_t fh);
void psfs_dirlist_put(uint64_t fh);
/* Opening them (fileopen.c); reading, writing and committing (file.c). */
/* The PSFS_NODE_STORE row's open: an entry, a name, the raw session, a
 * generated file of the session. */
int psfs_store_open(struct psfs *fs, const struct psfs_node *n, struct fuse_file_info *fi);
/* A read handle on text made whole at open (the journal's log, usage.csv,
 * a run's artifact): the handle takes text, or frees it on failure. */
int psfs_open_text(const char *path, struct fuse_file_info *fi, char *text, size_t len);
int psfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi);
int psfs_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi);
int psfs_flush(const char *path, struct fuse_file_info *fi);
int psfs_fsync(const char *path, int datasync, struct fuse_file_info *fi);
int psfs_release(const char *path, struct fuse_file_info *fi);
/* Opens the in-memory file at path, if there is one (*found): 0 or
 * -errno, with fi->fh set on success.  Where path is the kernel's name of
 * an entry libfuse hid (OVERLAY_ALIAS), nothing is opened and *entry is
 * that entry's path (new), to be opened instead. */
int psfs_open_overlay(const char *path, struct fuse_file_info *fi, int *found, char **entry);

/* What namespace.c and rename.c both ask of a path. */
/* Where a new name may be made: a tree directory of a session, a pending
 * branch, or labels/. */
enum psfs_dir { DIR_TREE, DIR_PENDING, DIR_LABELS };
/* The kind of directory path's parent is, or -errno. */
int psfs_parent_kind(const char *path, enum psfs_dir *kind);
/* Whether a name is an editor's side file, kept in memory only. */
int psfs_is_side_name(const char *name);
/* The label a name in labels/ stands for (new), or NULL with *res set
 * (refused and logged). */
char *psfs_label_of(const char *path, const char *name, int *res);
/* The entry a symlink target in labels/ names, or PS_NIL. */
uint32_t psfs_label_target(struct ps_session *s, const struct psfs_path *p, const char *target);
/* Whether name is ln -sf's temporary (gnulib's "Cu" and six characters). */
int psfs_is_link_temporary(const char *name);

/* Namespace edits (namespace.c; rename in rename.c). */
int psfs_create(const char *path, mode_t mode, struct fuse_file_info *fi);
int psfs_truncate(const char *path, off_t size, struct fuse_file_info *fi);
int psfs_unlink(const char *path);
int psfs_mkdir(const char *path, mode_t mode);
int psfs_rmdir(const char *path);
int psfs_symlink(const char *target, const char *path);
int psfs_rename(const char *from, const char *to, unsigned int flags);
int psfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi);
int psfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi);
int psfs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi);

#endif
