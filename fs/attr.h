/* Attributes (attr.c): stat of every name of the mount, and the pieces
 * of it that listings (dir.c, readdirplus) and readlink share.  Above
 * routing (route.h), below the operations table (ops.c). */
#ifndef PSFS_ATTR_H
#define PSFS_ATTR_H

#include <stdint.h>
#include <sys/stat.h>
#include "layout.h"
#include "pisessionfs.h"

/* The FUSE getattr: 0 or -errno.  A FUSE handler (fuse_get_context()). */
int psfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi);
/* A node's attributes when its size is known; file: the session file. */
void psfs_node_fill(const struct ps_session *s, const struct layout_node *node, const struct stat *file,
		    uint64_t size, struct stat *st);
/* A fork's typed name (p->link_to set, depth 2): a symlink to its session
 * directory, shown to whoever may read the session file.  0 or -errno
 * (-ENOENT for a caller who may not). */
int psfs_fork_name_stat(struct psfs *fs, const struct psfs_path *p, struct stat *st);

#endif
