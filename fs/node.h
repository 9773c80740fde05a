/* What a path is, and what each kind of path does (node.c).  route.h
 * decides a path's kind once (route_resolve); here each kind has one row
 * of operations, and the path operations that every kind answers (stat,
 * listing, readlink, open) go through that row and nowhere else.
 *
 * Above the kinds' own modules (attr.c, dir.c and file.c for the store;
 * views.c, journal.c, overview.c, subagents.c, searchdir.c for the
 * mount's own names), below the FUSE handlers (ops.c, dirhandle.c,
 * namespace.c).  The in-memory files (overlay.h) are a layer above the
 * kinds: a name the overlay holds answers first, and a directory lists
 * the overlay's names beside its own where its row says so. */
#ifndef PSFS_NODE_H
#define PSFS_NODE_H

#include <sys/stat.h>
#include "pisessionfs.h"
#include "route.h"

/* One kind's operations.  A missing one is what the kind never is: no
 * readdir, not a directory; no readlink, not a link; no open, nothing
 * that opens as a file. */
struct node_ops {
	/* root: the store directory's stat when root_stat says so, else
	 * zeroed. */
	int (*getattr)(struct psfs *fs, const struct psfs_node *n, const struct stat *root, struct stat *st);
	int (*readdir)(struct psfs *fs, const struct psfs_node *n, void *buf, fuse_fill_dir_t filler,
		       enum fuse_readdir_flags flags);
	int (*readlink)(struct psfs *fs, const struct psfs_node *n, char *buf, size_t size);
	/* A file generated whole at open: *text is new (the handle takes it). */
	int (*open_text)(struct psfs *fs, const struct psfs_node *n, int flags, char **text, size_t *len);
	/* A file with a handle of its own (file.c): fills fi->fh. */
	int (*open)(struct psfs *fs, const struct psfs_node *n, struct fuse_file_info *fi);
	enum {
		NODE_ROOT_UNUSED,   /* getattr needs no stat of the store directory */
		NODE_ROOT_NEEDED,   /* needs it; a store gone from its path is an empty one */
		NODE_ROOT_OPTIONAL, /* and any failure of it is one (the journal outlives the store) */
	} root_stat;
	/* Its listing includes the overlay's names there (dir.c). */
	int lists_overlay;
};

/* stat(2) of path: a name libfuse hid for an open file, the overlay, then
 * the kind's getattr.  0 or -errno. */
int node_stat(struct psfs *fs, const char *path, struct stat *st);
/* Every name of directory path, through filler ("." and ".." first). */
int node_list(struct psfs *fs, const char *path, void *buf, fuse_fill_dir_t filler,
	      enum fuse_readdir_flags flags);
/* readlink(2) of path into buf (NUL-terminated, truncated to size). */
int node_readlink(struct psfs *fs, const char *path, char *buf, size_t size);
/* open(2) of path: a handle in fi->fh, or -errno. */
int node_open(struct psfs *fs, const char *path, struct fuse_file_info *fi);

#endif
