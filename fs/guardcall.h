/* The FUSE calls as the operations table makes them (guardcall.c): on a
 * store that may stop answering (guard.h) each runs on a thread of its
 * own, bounded; on any other, straight through to opspath.h. */
#ifndef PSFS_GUARDCALL_H
#define PSFS_GUARDCALL_H

#include <sys/statvfs.h>
#include "pisessionfs.h"

int psfs_call_getattr(const char *path, struct stat *st, struct fuse_file_info *fi);
int psfs_call_opendir(const char *path, struct fuse_file_info *fi);
int psfs_call_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags);
int psfs_call_releasedir(const char *path, struct fuse_file_info *fi);
int psfs_call_readlink(const char *path, char *buf, size_t size);
int psfs_call_open(const char *path, struct fuse_file_info *fi);
int psfs_call_create(const char *path, mode_t mode, struct fuse_file_info *fi);
int psfs_call_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi);
int psfs_call_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi);
int psfs_call_truncate(const char *path, off_t size, struct fuse_file_info *fi);
int psfs_call_flush(const char *path, struct fuse_file_info *fi);
int psfs_call_fsync(const char *path, int datasync, struct fuse_file_info *fi);
int psfs_call_release(const char *path, struct fuse_file_info *fi);
int psfs_call_unlink(const char *path);
int psfs_call_mkdir(const char *path, mode_t mode);
int psfs_call_rmdir(const char *path);
int psfs_call_symlink(const char *target, const char *path);
int psfs_call_rename(const char *from, const char *to, unsigned int flags);
int psfs_call_chmod(const char *path, mode_t mode, struct fuse_file_info *fi);
int psfs_call_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi);
int psfs_call_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi);
int psfs_call_statfs(const char *path, struct statvfs *st);

#endif
