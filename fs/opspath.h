/* The operations on a path (opspath.c), each as libfuse calls it: by-cwd
 * aliases resolved and changes below subagents/ refused first.  Called
 * by guardcall.c, on the request's thread or a guard's. */
#ifndef PSFS_OPSPATH_H
#define PSFS_OPSPATH_H

#include <sys/statvfs.h>
#include "pisessionfs.h"

int psfs_aliased_getattr(const char *path, struct stat *st, struct fuse_file_info *fi);
int psfs_aliased_opendir(const char *path, struct fuse_file_info *fi);
int psfs_aliased_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
			 struct fuse_file_info *fi, enum fuse_readdir_flags flags);
int psfs_aliased_readlink(const char *path, char *buf, size_t size);
int psfs_aliased_open(const char *path, struct fuse_file_info *fi);
int psfs_aliased_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi);
int psfs_aliased_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi);
int psfs_aliased_truncate(const char *path, off_t size, struct fuse_file_info *fi);
int psfs_aliased_flush(const char *path, struct fuse_file_info *fi);
int psfs_aliased_fsync(const char *path, int datasync, struct fuse_file_info *fi);
int psfs_aliased_release(const char *path, struct fuse_file_info *fi);
int psfs_aliased_unlink(const char *path);
int psfs_aliased_mkdir(const char *path, mode_t mode);
int psfs_aliased_rmdir(const char *path);
int psfs_aliased_symlink(const char *target, const char *path);
int psfs_aliased_rename(const char *from, const char *to, unsigned int flags);
int psfs_aliased_chmod(const char *path, mode_t mode, struct fuse_file_info *fi);
int psfs_aliased_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi);
int psfs_aliased_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi);
int psfs_checked_create(const char *path, mode_t mode, struct fuse_file_info *fi);
int psfs_statfs(const char *path, struct statvfs *st);

#endif
