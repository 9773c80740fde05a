/* The operations as they act on a path (opspath.h): an open handle's own
 * state for getattr, the node's operations (node.h) for the rest of
 * stat, readlink and open, statfs; and, around every handler, a path
 * below a directory made in by-cwd/ read as its session's (cwdnew.h) and
 * a change below subagents/ refused (subagents_refuse). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include "cwdnew.h"
#include "lockorder.h"
#include "node.h"
#include "ops_internal.h"
#include "opspath.h"
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

int psfs_statfs(const char *path, struct statvfs *st)
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

int psfs_aliased_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_getattr(path, st, fi));
}

int psfs_aliased_opendir(const char *path, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_opendir(path, fi));
}

int psfs_aliased_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
				struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	PSFS_ALIASED(path, psfs_readdir(path, buf, filler, offset, fi, flags));
}

int psfs_aliased_readlink(const char *path, char *buf, size_t size)
{
	PSFS_ALIASED(path, psfs_readlink(path, buf, size));
}

int psfs_aliased_open(const char *path, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_open(path, fi));
}

int psfs_aliased_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_read(path, buf, size, off, fi));
}

int psfs_aliased_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_write(path, buf, size, off, fi));
}

int psfs_aliased_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	PSFS_GUARDED(path, "truncating", 0, psfs_truncate(path, size, fi));
}

int psfs_aliased_flush(const char *path, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_flush(path, fi));
}

int psfs_aliased_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_fsync(path, datasync, fi));
}

int psfs_aliased_release(const char *path, struct fuse_file_info *fi)
{
	PSFS_ALIASED(path, psfs_release(path, fi));
}

int psfs_aliased_unlink(const char *path)
{
	PSFS_GUARDED(path, "removing", 1, psfs_unlink(path));
}

int psfs_aliased_mkdir(const char *path, mode_t mode)
{
	PSFS_GUARDED(path, "making", 0, psfs_mkdir(path, mode));
}

int psfs_aliased_rmdir(const char *path)
{
	PSFS_GUARDED(path, "removing", 1, psfs_rmdir(path));
}

/* The link's own path; its target is text, read where it is used. */
int psfs_aliased_symlink(const char *target, const char *path)
{
	PSFS_GUARDED(path, "making a link", 0, psfs_symlink(target, path));
}

int psfs_checked_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int res = subagents_refuse(path, "creating", 0);
	return res ? (res > 0 ? -EPERM : res) : psfs_create(path, mode, fi);
}

int psfs_aliased_rename(const char *from, const char *to, unsigned int flags)
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

int psfs_aliased_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	PSFS_GUARDED(path, "changing the mode of", 0, psfs_chmod(path, mode, fi));
}

int psfs_aliased_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	PSFS_GUARDED(path, "changing the owner of", 0, psfs_chown(path, uid, gid, fi));
}

int psfs_aliased_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	PSFS_GUARDED(path, "changing the times of", 0, psfs_utimens(path, tv, fi));
}
