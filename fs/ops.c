/* The FUSE operations (libfuse's high-level, path-based API): the one
 * table, init and the extended attributes.  Each call goes through
 * guardcall.c (bounded, on a store that may stop answering) to the
 * operations on a path (opspath.c).  What a path is and what
 * stat, readdir, readlink and open do with it is decided once, in node.c
 * (route_resolve's kind, then that kind's row); in-memory side files
 * (overlay.c) are looked up first; what a write means is decided in
 * commit.c.  The handlers live by job in node.c, dirhandle.c, file.c and
 * namespace.c (ops_internal.h); ops.o is the top of fs/'s objects:
 * nothing calls it. */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statvfs.h>
#include "guardcall.h"
#include "ops_internal.h"
#include "watch.h"

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

const struct fuse_operations psfs_ops = {
	.init = psfs_init,
	.getattr = psfs_call_getattr,
	.opendir = psfs_call_opendir,
	.readdir = psfs_call_readdir,
	.releasedir = psfs_call_releasedir,
	.readlink = psfs_call_readlink,
	.open = psfs_call_open,
	.create = psfs_call_create,
	.read = psfs_call_read,
	.write = psfs_call_write,
	.truncate = psfs_call_truncate,
	.flush = psfs_call_flush,
	.fsync = psfs_call_fsync,
	.release = psfs_call_release,
	.unlink = psfs_call_unlink,
	.mkdir = psfs_call_mkdir,
	.rmdir = psfs_call_rmdir,
	.symlink = psfs_call_symlink,
	.rename = psfs_call_rename,
	.chmod = psfs_call_chmod,
	.chown = psfs_call_chown,
	.utimens = psfs_call_utimens,
	.setxattr = psfs_setxattr,
	.getxattr = psfs_getxattr,
	.listxattr = psfs_listxattr,
	.removexattr = psfs_removexattr,
	.statfs = psfs_call_statfs,
};
