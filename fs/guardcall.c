/* The FUSE calls as the table makes them (guardcall.h).  With a guard (a
 * store on a network or FUSE file system), each call runs on a thread of
 * its own (guard_run) with copies of what it reads and
 * buffers of its own for what it returns, copied back only when it ends
 * in time: a call given up on may still write them when the store
 * answers, long after the request was answered EIO.  The handle it uses
 * is held until then (psfs_file_hold, psfs_dirlist_hold).  The journal
 * needs no store: its paths are never guarded. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "guard.h"
#include "guardcall.h"
#include "journal.h"
#include "ops_internal.h"
#include "opspath.h"

enum psfs_call_op {
	CALL_GETATTR, CALL_OPENDIR, CALL_READDIR, CALL_RELEASEDIR, CALL_READLINK, CALL_OPEN, CALL_CREATE,
	CALL_READ, CALL_WRITE, CALL_TRUNCATE, CALL_FLUSH, CALL_FSYNC, CALL_RELEASE, CALL_UNLINK, CALL_MKDIR,
	CALL_RMDIR, CALL_SYMLINK, CALL_RENAME, CALL_CHMOD, CALL_CHOWN, CALL_UTIMENS, CALL_STATFS,
};

/* One name of a listing made on a guard's thread. */
struct psfs_call_name {
	char *name;
	struct stat st;
	int has_st;
	off_t off;
	enum fuse_fill_dir_flags flags;
};

struct psfs_call {
	struct guard_job job; /* first: guard.c hands it back */
	enum psfs_call_op op;
	char *path, *path2;
	struct fuse_file_info fi;
	int has_fi;
	int file_held, dir_held; /* fi.fh held for the call */
	struct stat st;
	struct statvfs vfs;
	char *buf;
	size_t size;
	off_t off;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	unsigned flags;
	int datasync;
	struct timespec tv[2];
	int has_tv;
	enum fuse_readdir_flags rflags;
	struct psfs_call_name *names;
	size_t n_names, cap_names;
	int names_nomem;
	size_t names_max; /* 0: all; an open directory's listing is handed out a chunk a call */
};

/* Names handed out by one call of an open directory's readdir: more than
 * the kernel takes at once (its 4 KiB buffer), few enough that a listing
 * of a million names is not copied whole for every chunk. */
#define PSFS_CALL_NAMES_MAX 1024

static int psfs_call_collect(void *buf, const char *name, const struct stat *st, off_t off,
			     enum fuse_fill_dir_flags flags)
{
	struct psfs_call *c = buf;
	if (c->names_max && c->n_names == c->names_max)
		return 1; /* the rest from the next offset, by the next call */
	if (c->n_names == c->cap_names) {
		size_t cap = c->cap_names ? 2 * c->cap_names : 64;
		struct psfs_call_name *names = realloc(c->names, cap * sizeof *names);
		if (!names) {
			c->names_nomem = 1;
			return 1;
		}
		c->names = names;
		c->cap_names = cap;
	}
	struct psfs_call_name *n = &c->names[c->n_names];
	if (!(n->name = strdup(name))) {
		c->names_nomem = 1;
		return 1;
	}
	n->has_st = st != NULL;
	if (st)
		n->st = *st;
	n->off = off;
	n->flags = flags;
	c->n_names++;
	return 0;
}

static int psfs_call_run(struct guard_job *job)
{
	struct psfs_call *c = (struct psfs_call *)job;
	struct fuse_file_info *fi = c->has_fi ? &c->fi : NULL;
	switch (c->op) {
	case CALL_GETATTR: return psfs_aliased_getattr(c->path, &c->st, fi);
	case CALL_OPENDIR: return psfs_aliased_opendir(c->path, fi);
	case CALL_READDIR: {
		int res = psfs_aliased_readdir(c->path, c, psfs_call_collect, c->off, fi, c->rflags);
		return !res && c->names_nomem ? -ENOMEM : res;
	}
	case CALL_RELEASEDIR: return psfs_releasedir(c->path, fi);
	case CALL_READLINK: return psfs_aliased_readlink(c->path, c->buf, c->size);
	case CALL_OPEN: return psfs_aliased_open(c->path, fi);
	case CALL_CREATE: return psfs_checked_create(c->path, c->mode, fi);
	case CALL_READ: return psfs_aliased_read(c->path, c->buf, c->size, c->off, fi);
	case CALL_WRITE: return psfs_aliased_write(c->path, c->buf, c->size, c->off, fi);
	case CALL_TRUNCATE: return psfs_aliased_truncate(c->path, c->off, fi);
	case CALL_FLUSH: return psfs_aliased_flush(c->path, fi);
	case CALL_FSYNC: return psfs_aliased_fsync(c->path, c->datasync, fi);
	case CALL_RELEASE: return psfs_aliased_release(c->path, fi);
	case CALL_UNLINK: return psfs_aliased_unlink(c->path);
	case CALL_MKDIR: return psfs_aliased_mkdir(c->path, c->mode);
	case CALL_RMDIR: return psfs_aliased_rmdir(c->path);
	case CALL_SYMLINK: return psfs_aliased_symlink(c->path2, c->path);
	case CALL_RENAME: return psfs_aliased_rename(c->path, c->path2, c->flags);
	case CALL_CHMOD: return psfs_aliased_chmod(c->path, c->mode, fi);
	case CALL_CHOWN: return psfs_aliased_chown(c->path, c->uid, c->gid, fi);
	case CALL_UTIMENS: return psfs_aliased_utimens(c->path, c->has_tv ? c->tv : NULL, fi);
	case CALL_STATFS: return psfs_statfs(c->path, &c->vfs);
	}
	return -ENOSYS;
}

static void psfs_call_free(struct psfs_call *c)
{
	/* The call's own reference; a release dropped the kernel's. */
	if (c->file_held)
		psfs_file_put((struct psfs_file *)(uintptr_t)c->fi.fh);
	if (c->dir_held)
		psfs_dirlist_put(c->fi.fh);
	for (size_t i = 0; i < c->n_names; i++)
		free(c->names[i].name);
	free(c->names);
	free(c->buf);
	free(c->path);
	free(c->path2);
	free(c);
}

/* The call ended after its request was answered EIO: a handle it made
 * then is released at once, as the kernel will never use it. */
static void psfs_call_abandoned(struct guard_job *job, int res)
{
	struct psfs_call *c = (struct psfs_call *)job;
	/* What a writer was told EIO of is said once it is known: whether
	 * its text went in after all (nothing is tried again). */
	if (c->op == CALL_FLUSH || c->op == CALL_FSYNC || c->op == CALL_WRITE || c->op == CALL_RENAME)
		journal_log("%s of %s, answered EIO when the store stopped answering, %s once it answered%s%s",
			    c->op == CALL_FLUSH ? "the close" : c->op == CALL_FSYNC ? "the fsync"
			    : c->op == CALL_WRITE ? "a write" : "the rename", journal_path(c->path),
			    res >= 0 ? "went through" : "failed",
			    res < 0 ? ": " : c->op == CALL_FLUSH ? ": what was written is in the session (do not write it again)" : "",
			    res < 0 ? strerror(-res) : "");
	if (res == 0 && (c->op == CALL_OPEN || c->op == CALL_CREATE))
		psfs_aliased_release(c->path, &c->fi);
	else if (res == 0 && c->op == CALL_OPENDIR)
		psfs_releasedir(c->path, &c->fi);
	psfs_call_free(c);
}

static int psfs_guarded(const char *path)
{
	return psfs_self()->guard && !journal_owns(path);
}

/* A call of op on path (and fi, if given), set up for the rest by the
 * caller: NULL when out of memory. */
static struct psfs_call *psfs_call_new(enum psfs_call_op op, const char *path, struct fuse_file_info *fi)
{
	struct psfs_call *c = calloc(1, sizeof *c);
	if (!c || !(c->path = strdup(path))) {
		free(c);
		return NULL;
	}
	c->op = op;
	c->job.run = psfs_call_run;
	c->job.abandoned = psfs_call_abandoned;
	if (fi) {
		c->fi = *fi;
		c->has_fi = 1;
	}
	int dir = op == CALL_READDIR || op == CALL_RELEASEDIR;
	if (fi && fi->fh && dir) {
		psfs_dirlist_hold(fi->fh);
		c->dir_held = 1;
	} else if (fi && fi->fh && op != CALL_OPEN && op != CALL_CREATE && op != CALL_OPENDIR) {
		psfs_file_hold((struct psfs_file *)(uintptr_t)fi->fh);
		c->file_held = 1;
	}
	return c;
}

/* Runs c: its result.  *mine: c is still the caller's (who copies back
 * what it returns and frees it); else its thread has it. */
static int psfs_call_do(struct psfs_call *c, int *mine)
{
	int res = -EIO;
	int always = c->op == CALL_RELEASE || c->op == CALL_RELEASEDIR;
	struct psfs_file *held = c->file_held ? (struct psfs_file *)(uintptr_t)c->fi.fh : NULL;
	enum guard_outcome out = guard_run(psfs_self()->guard, &c->job, always, &res);
	/* The handle outlives this call: the kernel's reference ends only
	 * at release, after this call is answered. */
	if (out != GUARD_DONE && held)
		atomic_store(&held->store_gave_up, 1);
	*mine = out != GUARD_GAVE_UP;
	if (out == GUARD_GAVE_UP)
		return always ? 0 : -EIO;
	if (out == GUARD_NOMEM)
		res = always ? psfs_call_run(&c->job) : -ENOMEM;
	return res;
}

/* The common end of a call made with psfs_call_new. */
#define PSFS_CALL_END(c, res, on_success)          \
	do {                                      \
		int mine_;                        \
		res = psfs_call_do(c, &mine_);    \
		if (!mine_)                       \
			return res;               \
		if (res >= 0) {                   \
			on_success;               \
		}                                 \
		psfs_call_free(c);                \
		return res;                       \
	} while (0)

int psfs_call_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	if (!psfs_guarded(path))
		return psfs_aliased_getattr(path, st, fi);
	struct psfs_call *c = psfs_call_new(CALL_GETATTR, path, fi);
	int res, mine;
	if (!c)
		return -ENOMEM;
	res = psfs_call_do(c, &mine);
	if (mine && res >= 0)
		*st = c->st;
	if (mine)
		psfs_call_free(c);
	if (res == -EIO && strcmp(path, "/") == 0 && !guard_available(psfs_self()->guard)) {
		/* The mount's root stays a directory, so that the journal,
		 * which says why the rest answers EIO, can be read. */
		memset(st, 0, sizeof *st);
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		st->st_uid = getuid();
		st->st_gid = getgid();
		res = 0;
	}
	return res;
}

int psfs_call_opendir(const char *path, struct fuse_file_info *fi)
{
	if (!psfs_guarded(path))
		return psfs_aliased_opendir(path, fi);
	struct psfs_call *c = psfs_call_new(CALL_OPENDIR, path, fi);
	int res;
	if (!c)
		return -ENOMEM;
	PSFS_CALL_END(c, res, *fi = c->fi);
}

int psfs_call_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
			     struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	if (!psfs_guarded(path))
		return psfs_aliased_readdir(path, buf, filler, offset, fi, flags);
	struct psfs_call *c = psfs_call_new(CALL_READDIR, path, fi);
	int res;
	if (!c)
		return -ENOMEM;
	c->off = offset;
	c->rflags = flags;
	if (c->dir_held)
		c->names_max = PSFS_CALL_NAMES_MAX;
	PSFS_CALL_END(c, res, for (size_t i = 0; i < c->n_names; i++) {
		const struct psfs_call_name *n = &c->names[i];
		if (filler(buf, n->name, n->has_st ? &n->st : NULL, n->off, n->flags))
			break;
	});
}

int psfs_call_releasedir(const char *path, struct fuse_file_info *fi)
{
	if (!psfs_guarded(path))
		return psfs_releasedir(path, fi);
	struct psfs_call *c = psfs_call_new(CALL_RELEASEDIR, path, fi);
	int res;
	if (!c)
		return psfs_releasedir(path, fi);
	PSFS_CALL_END(c, res, (void)0);
}

int psfs_call_readlink(const char *path, char *buf, size_t size)
{
	if (!psfs_guarded(path))
		return psfs_aliased_readlink(path, buf, size);
	struct psfs_call *c = psfs_call_new(CALL_READLINK, path, NULL);
	int res;
	if (!c || !(c->buf = calloc(1, size ? size : 1))) {
		if (c)
			psfs_call_free(c);
		return -ENOMEM;
	}
	c->size = size;
	PSFS_CALL_END(c, res, memcpy(buf, c->buf, size));
}

int psfs_call_open(const char *path, struct fuse_file_info *fi)
{
	if (!psfs_guarded(path))
		return psfs_aliased_open(path, fi);
	struct psfs_call *c = psfs_call_new(CALL_OPEN, path, fi);
	int res;
	if (!c)
		return -ENOMEM;
	PSFS_CALL_END(c, res, *fi = c->fi);
}

int psfs_call_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	if (!psfs_guarded(path))
		return psfs_checked_create(path, mode, fi);
	struct psfs_call *c = psfs_call_new(CALL_CREATE, path, fi);
	int res;
	if (!c)
		return -ENOMEM;
	c->mode = mode;
	PSFS_CALL_END(c, res, *fi = c->fi);
}

int psfs_call_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	if (!psfs_guarded(path))
		return psfs_aliased_read(path, buf, size, off, fi);
	struct psfs_call *c = psfs_call_new(CALL_READ, path, fi);
	int res;
	if (!c || !(c->buf = malloc(size ? size : 1))) {
		if (c)
			psfs_call_free(c);
		return -ENOMEM;
	}
	c->size = size;
	c->off = off;
	PSFS_CALL_END(c, res, memcpy(buf, c->buf, (size_t)res));
}

int psfs_call_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	if (!psfs_guarded(path))
		return psfs_aliased_write(path, buf, size, off, fi);
	struct psfs_call *c = psfs_call_new(CALL_WRITE, path, fi);
	int res;
	if (!c || !(c->buf = malloc(size ? size : 1))) {
		if (c)
			psfs_call_free(c);
		return -ENOMEM;
	}
	memcpy(c->buf, buf, size);
	c->size = size;
	c->off = off;
	PSFS_CALL_END(c, res, (void)0);
}

/* Calls that return nothing but their result: op on path (and path2),
 * with the fields set by SET. */
#define PSFS_CALL_PLAIN(op, path, fi, direct, set)              \
	do {                                                    \
		if (!psfs_guarded(path))                        \
			return direct;                          \
		struct psfs_call *c = psfs_call_new(op, path, fi); \
		int res;                                        \
		if (!c)                                         \
			return -ENOMEM;                         \
		set;                                            \
		PSFS_CALL_END(c, res, (void)0);                 \
	} while (0)

int psfs_call_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	PSFS_CALL_PLAIN(CALL_TRUNCATE, path, fi, psfs_aliased_truncate(path, size, fi), c->off = size);
}

int psfs_call_flush(const char *path, struct fuse_file_info *fi)
{
	PSFS_CALL_PLAIN(CALL_FLUSH, path, fi, psfs_aliased_flush(path, fi), (void)0);
}

int psfs_call_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	PSFS_CALL_PLAIN(CALL_FSYNC, path, fi, psfs_aliased_fsync(path, datasync, fi), c->datasync = datasync);
}

int psfs_call_release(const char *path, struct fuse_file_info *fi)
{
	if (!psfs_guarded(path))
		return psfs_aliased_release(path, fi);
	struct psfs_call *c = psfs_call_new(CALL_RELEASE, path, fi);
	int res;
	if (!c)
		return psfs_aliased_release(path, fi);
	PSFS_CALL_END(c, res, (void)0);
}

int psfs_call_unlink(const char *path)
{
	PSFS_CALL_PLAIN(CALL_UNLINK, path, NULL, psfs_aliased_unlink(path), (void)0);
}

int psfs_call_mkdir(const char *path, mode_t mode)
{
	PSFS_CALL_PLAIN(CALL_MKDIR, path, NULL, psfs_aliased_mkdir(path, mode), c->mode = mode);
}

int psfs_call_rmdir(const char *path)
{
	PSFS_CALL_PLAIN(CALL_RMDIR, path, NULL, psfs_aliased_rmdir(path), (void)0);
}

int psfs_call_symlink(const char *target, const char *path)
{
	PSFS_CALL_PLAIN(CALL_SYMLINK, path, NULL, psfs_aliased_symlink(target, path),
			if (!(c->path2 = strdup(target))) {
				psfs_call_free(c);
				return -ENOMEM;
			});
}

int psfs_call_rename(const char *from, const char *to, unsigned int flags)
{
	PSFS_CALL_PLAIN(CALL_RENAME, from, NULL, psfs_aliased_rename(from, to, flags),
			c->flags = flags;
			if (!(c->path2 = strdup(to))) {
				psfs_call_free(c);
				return -ENOMEM;
			});
}

int psfs_call_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	PSFS_CALL_PLAIN(CALL_CHMOD, path, fi, psfs_aliased_chmod(path, mode, fi), c->mode = mode);
}

int psfs_call_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	PSFS_CALL_PLAIN(CALL_CHOWN, path, fi, psfs_aliased_chown(path, uid, gid, fi), c->uid = uid; c->gid = gid);
}

int psfs_call_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	PSFS_CALL_PLAIN(CALL_UTIMENS, path, fi, psfs_aliased_utimens(path, tv, fi),
			if (tv) {
				c->tv[0] = tv[0];
				c->tv[1] = tv[1];
				c->has_tv = 1;
			});
}

int psfs_call_statfs(const char *path, struct statvfs *st)
{
	if (!psfs_guarded(path))
		return psfs_statfs(path, st);
	struct psfs_call *c = psfs_call_new(CALL_STATFS, path, NULL);
	int res;
	if (!c)
		return -ENOMEM;
	PSFS_CALL_END(c, res, *st = c->vfs);
}
