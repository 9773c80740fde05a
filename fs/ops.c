/* The FUSE operations (libfuse's high-level, path-based API): the one
 * table, init, and the small handlers that belong to no job (readlink,
 * the extended attributes, statfs).  Every handler routes the path first
 * (route.h: project / session / the rest, the session acquired, the node
 * resolved); in-memory side files (overlay.c) are looked up first; what a
 * write means is decided in commit.c.  The handlers live by job in
 * attr.c, dir.c, file.c and namespace.c (ops_internal.h); ops.o is the
 * top of fs/'s objects: it calls them all and none calls it. */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include "layout.h"
#include "overlay.h"
#include "ops_internal.h"
#include "pisessionfs.h"
#include "watch.h"
#include "searchdir.h"
#include "views.h"

static int psfs_readlink(const char *path, char *buf, size_t size)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	char *target = NULL;
	int res = -EINVAL;

	if (!size)
		return -EINVAL;
	if (views_owns(path))
		return views_readlink(psfs_self(), path, buf, size);
	if (!psfs_split(path, &p) && search_owns(path, &p))
		return search_readlink(psfs_self(), path, &p, buf, size);
	overlay_lock(psfs_overlay());
	struct overlay_node *ov = overlay_get(psfs_overlay(), path);
	if (ov && ov->kind == OVERLAY_SYMLINK) {
		snprintf(buf, size, "%s", ov->link ? ov->link : "");
		overlay_unlock(psfs_overlay());
		return 0;
	}
	overlay_unlock(psfs_overlay());
	if (!psfs_split(path, &p) && p.depth == 2 && p.link_to[0]) {
		struct stat st;
		if ((res = psfs_fork_name_stat(psfs_self(), &p, &st)))
			return res;
		snprintf(buf, size, "%s", p.link_to);
		return 0;
	}
	if ((res = psfs_locate(path, &p, &ref, &node)))
		return res;
	if (layout_is_symlink(node.kind)) {
		target = layout_symlink_target(ref.session, &node);
		res = target ? 0 : -ENOMEM;
		if (target)
			snprintf(buf, size, "%s", target);
		free(target);
	} else {
		res = -EINVAL;
	}
	store_release(psfs_self()->store, &ref);
	return res;
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

const struct fuse_operations psfs_ops = {
	.init = psfs_init,
	.getattr = psfs_getattr,
	.opendir = psfs_opendir,
	.readdir = psfs_readdir,
	.releasedir = psfs_releasedir,
	.readlink = psfs_readlink,
	.open = psfs_open,
	.create = psfs_create,
	.read = psfs_read,
	.write = psfs_write,
	.truncate = psfs_truncate,
	.flush = psfs_flush,
	.fsync = psfs_fsync,
	.release = psfs_release,
	.unlink = psfs_unlink,
	.mkdir = psfs_mkdir,
	.rmdir = psfs_rmdir,
	.symlink = psfs_symlink,
	.rename = psfs_rename,
	.chmod = psfs_chmod,
	.chown = psfs_chown,
	.utimens = psfs_utimens,
	.setxattr = psfs_setxattr,
	.getxattr = psfs_getxattr,
	.listxattr = psfs_listxattr,
	.removexattr = psfs_removexattr,
	.statfs = psfs_statfs,
};
