/* Attributes (attr.c): stat and readlink of the store's names (the
 * PSFS_NODE_STORE row of node.h), and the pieces of stat that listings
 * (dir.c, readdirplus) share.  Above routing (route.h), below node.c. */
#ifndef PSFS_ATTR_H
#define PSFS_ATTR_H

#include <stdint.h>
#include <sys/stat.h>
#include "layout.h"
#include "pisessionfs.h"
#include "route.h"

/* stat of a store node n (root: the store directory's stat): 0 or -errno. */
int psfs_store_getattr(struct psfs *fs, const struct psfs_node *n, const struct stat *root, struct stat *st);
/* readlink of a store node: a fork's typed name, a label, a layout link. */
int psfs_store_readlink(struct psfs *fs, const struct psfs_node *n, char *buf, size_t size);
/* A node's attributes when its size is known; file: the session file. */
void psfs_node_fill(const struct ps_session *s, const struct layout_node *node, const struct stat *file,
		    uint64_t size, struct stat *st);

#endif
