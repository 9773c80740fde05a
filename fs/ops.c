/* The FUSE operations (libfuse's high-level, path-based API): the one
 * table, init, and the small handlers that belong to no job (getattr's
 * open handle, the extended attributes, statfs).  What a path is and what
 * stat, readdir, readlink and open do with it is decided once, in node.c
 * (route_resolve's kind, then that kind's row); in-memory side files
 * (overlay.c) are looked up first; what a write means is decided in
 * commit.c.  The handlers live by job in node.c, dirhandle.c, file.c and
 * namespace.c (ops_internal.h); ops.o is the top of fs/'s objects: it
 * calls them all and none calls it. */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include "cwdnew.h"
#include "layout.h"
#include "lockorder.h"
#include "node.h"
#include "overlay.h"
#include "ops_internal.h"
#include "pisessionfs.h"
#include "watch.h"
#include "subagents.h"

/* stat(2): an open handle's own state first, then the path (node.h). */
static int psfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct psfs_file *f = fi && fi->fh ? (struct psfs_file *)(uintptr_t)fi->fh : NULL;
	int res;

	if (f && (f->kind == HANDLE_EDIT || f->kind == HANDLE_NAME)) {
		/* An editor's fstat after writing sees what it wrote. */
		res = node_stat(psfs_self(), path, st);
		if (res == 0) {
			lockorder_lock(&f->lock, LOCK_READER);
			st->st_size = (off_t)f->len;
			lockorder_unlock(&f->lock, LOCK_READER);
		}
		if (res != -ENOENT)
			return res;
	}
	if (f && f->kind == HANDLE_OVERLAY) {
		overlay_lock(psfs_overlay());
		overlay_stat(f->node, st);
		overlay_unlock(psfs_overlay());
		return 0;
	}
	return node_stat(psfs_self(), path, st);
}

static int psfs_readlink(const char *path, char *buf, size_t size)
{
	return node_readlink(psfs_self(), path, buf, size);
}

static int psfs_open(const char *path, struct fuse_file_info *fi)
{
	return node_open(psfs_self(), path, fi);
}

/* ACLs and other attributes are not kept; "not supported" is the answer
 * sed -i and editors fall back from. */
static int psfs_setxattr(const char *path, const char *name, const char *value, size_t size, int flags)
{
	(void)path, (void)name, (void)value, (void)size, (void)flags;
	return -EOPNOTSUPP;
}

static int psfs_getxattr(const char *path, const char *name, char *value, size_t size)
{
	(void)path, (void)name, (void)value, (void)size;
	return -EOPNOTSUPP;
}

static int psfs_listxattr(const char *path, char *list, size_t size)
{
	(void)path, (void)list, (void)size;
	return 0;
}

static int psfs_removexattr(const char *path, const char *name)
{
	(void)path, (void)name;
	return -EOPNOTSUPP;
}

static int psfs_statfs(const char *path, struct statvfs *st)
{
	(void)path;
	if (statvfs(store_root(psfs_self()->store), st) != 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		/* The store gone from its path (store_follow_root): df still
		 * names it, with nothing in it. */
		memset(st, 0, sizeof *st);
		st->f_bsize = st->f_frsize = 4096;
	}
	st->f_namemax = NAME_MAX;
	return 0;
}

static void *psfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	struct psfs *fs = psfs_self();
	double timeout = fs->cfg.timeout;
	(void)conn;
	if (isnan(timeout))
		timeout = watch_hears_all(fs->watch) ? PSFS_TIMEOUT_WATCHED : PSFS_TIMEOUT_UNWATCHED;
	cfg->entry_timeout = timeout;
	cfg->attr_timeout = timeout;
	cfg->negative_timeout = 0;
	/* A close of a read-only file has nothing to flush: spare grep -r a
	 * round trip per file. */
	cfg->no_rofd_flush = 1;
	/* Paths identify nodes here; libfuse keeps them for invalidation. */
	cfg->nullpath_ok = 0;
	/* An entry replaced by rename while open (sed -i, rsync, an editor
	 * saving it as another program reads it): libfuse moves the open
	 * node aside to .fuse_hidden… (psfs_rename) instead of dropping its
	 * name, so fstat on the old descriptor keeps working, not ESTALE. */
	cfg->hard_remove = 0;
	return fs;
}

/* Every path a handler is given goes through cwdnew_alias first: below a
 * directory made in by-cwd/ that started a session, a path stands for the
 * same one in the session's directory (cwdnew.h). */
#define PSFS_ALIASED(path, call)                     \
	do {                                         \
		char *alias_;                        \
		int res_ = cwdnew_alias(&(path), &alias_); \
		if (!res_)                           \
			res_ = (call);               \
		free(alias_);                        \
		return res_;                         \
	} while (0)

/* The same for a change of the namespace, which below subagents/ only a
 * child's own files take (subagents_refuse): what names the change,
 * whether it removes (rm -r of a parent walks through). */
#define PSFS_GUARDED(path, what, removal, call)                           \
	do {                                                              \
		char *alias_;                                             \
		int res_ = cwdnew_alias(&(path), &alias_);                \
		if (!res_)                                                \
			res_ = subagents_refuse(path, what, removal);     \
		res_ = res_ > 0 ? 0 : res_ < 0 ? res_ : (call);           \
		free(alias_);                                             \
		return res_;                                              \
	} while (0)

static int psfs_aliased_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_getattr(path, st, fi));
}

static int psfs_aliased_opendir(const char *path, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_opendir(path, fi));
}

static int psfs_aliased_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
				struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	PSFS_ALIASED(path, psfs_readdir(path, buf, filler, offset, fi, flags));
}

static int psfs_aliased_readlink(const char *path, char *buf, size_t size)
{
	PSFS_ALIASED(path, psfs_readlink(path, buf, size));
}

static int psfs_aliased_open(const char *path, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_open(path, fi));
}

static int psfs_aliased_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_read(path, buf, size, off, fi));
}

static int psfs_aliased_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_write(path, buf, size, off, fi));
}

static int psfs_aliased_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	PSFS_GUARDED(path, "truncating", 0, psfs_truncate(path, size, fi));
}

static int psfs_aliased_flush(const char *path, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_flush(path, fi));
}

static int psfs_aliased_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_fsync(path, datasync, fi));
}

static int psfs_aliased_release(const char *path, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_release(path, fi));
}

static int psfs_aliased_unlink(const char *path)
{
	PSFS_GUARDED(path, "removing", 1, psfs_unlink(path));
}

static int psfs_aliased_mkdir(const char *path, mode_t mode)
{
	PSFS_GUARDED(path, "making", 0, psfs_mkdir(path, mode));
}

static int psfs_aliased_rmdir(const char *path)
{
	PSFS_GUARDED(path, "removing", 1, psfs_rmdir(path));
}

/* The link's own path; its target is text, read where it is used. */
static int psfs_aliased_symlink(const char *target, const char *path)
{
	PSFS_GUARDED(path, "making a link", 0, psfs_symlink(target, path));
}

static int psfs_guarded_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int res = subagents_refuse(path, "creating", 0);
	return res ? (res > 0 ? -EPERM : res) : psfs_create(path, mode, fi);
}

static int psfs_aliased_rename(const char *from, const char *to, unsigned int flags)
{
	char *from_alias = NULL, *to_alias = NULL;
	int res = cwdnew_alias(&from, &from_alias);
	if (!res)
		res = cwdnew_alias(&to, &to_alias);
	if (!res && !(res = subagents_refuse(from, "renaming", 0)))
		res = subagents_refuse(to, "renaming onto", 0);
	if (!res)
		res = psfs_rename(from, to, flags);
	else if (res > 0)
		res = -EPERM;
	free(from_alias);
	free(to_alias);
	return res;
}

static int psfs_aliased_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	PSFS_GUARDED(path, "changing the mode of", 0, psfs_chmod(path, mode, fi));
}

static int psfs_aliased_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	PSFS_GUARDED(path, "changing the owner of", 0, psfs_chown(path, uid, gid, fi));
}

static int psfs_aliased_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	PSFS_GUARDED(path, "changing the times of", 0, psfs_utimens(path, tv, fi));
}

const struct fuse_operations psfs_ops = {
	.init = psfs_init,
	.getattr = psfs_aliased_getattr,
	.opendir = psfs_aliased_opendir,
	.readdir = psfs_aliased_readdir,
	.releasedir = psfs_releasedir,
	.readlink = psfs_aliased_readlink,
	.open = psfs_aliased_open,
	.create = psfs_guarded_create,
	.read = psfs_aliased_read,
	.write = psfs_aliased_write,
	.truncate = psfs_aliased_truncate,
	.flush = psfs_aliased_flush,
	.fsync = psfs_aliased_fsync,
	.release = psfs_aliased_release,
	.unlink = psfs_aliased_unlink,
	.mkdir = psfs_aliased_mkdir,
	.rmdir = psfs_aliased_rmdir,
	.symlink = psfs_aliased_symlink,
	.rename = psfs_aliased_rename,
	.chmod = psfs_aliased_chmod,
	.chown = psfs_aliased_chown,
	.utimens = psfs_aliased_utimens,
	.setxattr = psfs_setxattr,
	.getxattr = psfs_getxattr,
	.listxattr = psfs_listxattr,
	.removexattr = psfs_removexattr,
	.statfs = psfs_statfs,
};
