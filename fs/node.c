/* The kinds of node and their operations (node.h): one table, and the
 * stat, listing, readlink and open of a path through it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "attr.h"
#include "commitfile.h"
#include "cwdnew.h"
#include "journal.h"
#include "node.h"
#include "ops_internal.h"
#include "overlay.h"
#include "overview.h"
#include "searchdir.h"
#include "subagents.h"
#include "views.h"

/* The views (views.h).  A directory made under by-cwd/ is listed beside
 * what the catalog shows; one the catalog does not know holds only what
 * was made in it (cwdnew.h). */
static int node_view_getattr(struct psfs *fs, const struct psfs_node *n, const struct stat *root, struct stat *st)
{
	(void)root;
	return views_getattr(fs, n->path, st);
}

static int node_view_readdir(struct psfs *fs, const struct psfs_node *n, void *buf, fuse_fill_dir_t filler,
			     enum fuse_readdir_flags flags)
{
	(void)flags;
	overlay_lock(fs->overlay);
	struct overlay_node *ov = overlay_get(fs->overlay, n->path);
	int kept = ov && ov->kind == OVERLAY_CWD && cwdnew_visible(ov);
	overlay_unlock(fs->overlay);
	int res = views_readdir(fs, n->path, buf, filler);
	if (res == -ENOENT && kept)
		res = 0;
	return res || !cwdnew_owns(n->path) ? res : cwdnew_readdir(fs, n->path, buf, filler, 1);
}

static int node_view_readlink(struct psfs *fs, const struct psfs_node *n, char *buf, size_t size)
{
	return views_readlink(fs, n->path, buf, size);
}

/* The journal (journal.h). */
static int node_journal_getattr(struct psfs *fs, const struct psfs_node *n, const struct stat *root,
				struct stat *st)
{
	return journal_getattr(fs->journal, n->path, root, st);
}

static int node_journal_readdir(struct psfs *fs, const struct psfs_node *n, void *buf, fuse_fill_dir_t filler,
				enum fuse_readdir_flags flags)
{
	(void)fs, (void)flags;
	return journal_readdir(n->path, buf, filler);
}

static int node_journal_open(struct psfs *fs, const struct psfs_node *n, int flags, char **text, size_t *len)
{
	(void)fs;
	return journal_open(n->path, flags, text, len);
}

/* sessions.md and the usage files (overview.h). */
static int node_overview_getattr(struct psfs *fs, const struct psfs_node *n, const struct stat *root,
				 struct stat *st)
{
	return overview_getattr(fs, &n->p, root, st);
}

static int node_overview_open(struct psfs *fs, const struct psfs_node *n, int flags, char **text, size_t *len)
{
	return overview_open(fs, &n->p, flags, text, len);
}

/* A session's family (subagents.h). */
static int node_family_getattr(struct psfs *fs, const struct psfs_node *n, const struct stat *root,
			       struct stat *st)
{
	(void)root;
	return subagents_getattr(fs, n->path, &n->p, st);
}

static int node_family_readdir(struct psfs *fs, const struct psfs_node *n, void *buf, fuse_fill_dir_t filler,
			       enum fuse_readdir_flags flags)
{
	(void)flags;
	return subagents_readdir(fs, n->path, &n->p, buf, filler);
}

static int node_family_readlink(struct psfs *fs, const struct psfs_node *n, char *buf, size_t size)
{
	return subagents_readlink(fs, n->path, &n->p, buf, size);
}

static int node_family_open(struct psfs *fs, const struct psfs_node *n, int flags, char **text, size_t *len)
{
	return subagents_open(fs, n->path, &n->p, flags, text, len);
}

/* search/ (searchdir.h). */
static int node_search_getattr(struct psfs *fs, const struct psfs_node *n, const struct stat *root,
			       struct stat *st)
{
	return search_getattr(fs, n->path, &n->p, root, st);
}

static int node_search_readdir(struct psfs *fs, const struct psfs_node *n, void *buf, fuse_fill_dir_t filler,
			       enum fuse_readdir_flags flags)
{
	(void)flags;
	return search_readdir(fs, n->path, &n->p, buf, filler);
}

static int node_search_readlink(struct psfs *fs, const struct psfs_node *n, char *buf, size_t size)
{
	return search_readlink(fs, n->path, &n->p, buf, size);
}

static const struct node_ops node_table[PSFS_NODE_KINDS] = {
	[PSFS_NODE_STORE] = {
		.getattr = psfs_store_getattr,
		.readdir = psfs_store_readdir,
		.readlink = psfs_store_readlink,
		.open = psfs_store_open,
		.root_stat = NODE_ROOT_NEEDED,
		.lists_overlay = 1,
	},
	[PSFS_NODE_VIEW] = {
		.getattr = node_view_getattr,
		.readdir = node_view_readdir,
		.readlink = node_view_readlink,
	},
	[PSFS_NODE_JOURNAL] = {
		.getattr = node_journal_getattr,
		.readdir = node_journal_readdir,
		.open_text = node_journal_open,
		.root_stat = NODE_ROOT_OPTIONAL,
		.lists_overlay = 1, /* the rejected texts */
	},
	[PSFS_NODE_OVERVIEW] = {
		.getattr = node_overview_getattr,
		.open_text = node_overview_open,
		.root_stat = NODE_ROOT_NEEDED,
	},
	[PSFS_NODE_FAMILY] = {
		.getattr = node_family_getattr,
		.readdir = node_family_readdir,
		.readlink = node_family_readlink,
		.open_text = node_family_open,
		.root_stat = NODE_ROOT_NEEDED,
	},
	[PSFS_NODE_SEARCH] = {
		.getattr = node_search_getattr,
		.readdir = node_search_readdir,
		.readlink = node_search_readlink,
		.root_stat = NODE_ROOT_NEEDED,
	},
};

/* The store directory's stat for n's getattr.  The log and the rejected
 * texts stay reachable when the store directory is gone: that is when
 * they are most needed.  A store gone from its path (removed, moved away)
 * is an empty store, its views empty, until a directory is there again
 * (store_follow_root). */
static int node_root_stat(struct psfs *fs, const struct psfs_node *n, struct stat *root)
{
	int optional = node_table[n->kind].root_stat == NODE_ROOT_OPTIONAL || n->p.depth == 0;
	/* The journal's calls are not guarded (guard.h): on a store that may
	 * stop answering, its attributes never wait for the store. */
	int unasked = fs->guard && node_table[n->kind].root_stat == NODE_ROOT_OPTIONAL;
	if (!unasked && fstatat(AT_FDCWD, store_root(fs->store), root, 0) == 0)
		return 0;
	if (!unasked && errno != ENOENT && errno != ENOTDIR && !optional)
		return -errno;
	memset(root, 0, sizeof *root);
	root->st_uid = getuid();
	root->st_gid = getgid();
	return 0;
}

/* The overlay's answer for path: 1 with st filled when it holds a node
 * there, -ENOENT when an entry file there was renamed away, else 0. */
static int node_overlay_stat(struct psfs *fs, const char *path, struct stat *st)
{
	int res = 0;
	overlay_lock(fs->overlay);
	struct overlay_node *node = overlay_get(fs->overlay, path);
	if (node && node->kind == OVERLAY_HIDDEN)
		res = -ENOENT;
	else if (node && node->kind == OVERLAY_CWD && !cwdnew_visible(node))
		res = 0; /* another caller's: as if it were not there */
	else if (node) {
		/* A saved name outlives every lookup the kernel may cache. */
		if (node->kind == OVERLAY_SAVED)
			overlay_saved_keep(node, psfs_saved_grace());
		overlay_stat(node, st);
		res = 1;
	}
	overlay_unlock(fs->overlay);
	return res;
}

int node_stat(struct psfs *fs, const char *path, struct stat *st)
{
	struct psfs_node n;
	struct stat root = { 0 };
	int res;

	if (psfs_is_fuse_hidden(path)) {
		/* A descriptor of an entry another program saved over by
		 * rename: libfuse renamed its node (psfs_init, psfs_rename);
		 * the entry itself never moved. */
		char *entry = NULL;
		overlay_lock(fs->overlay);
		struct overlay_node *alias = overlay_get(fs->overlay, path);
		if (alias && alias->kind == OVERLAY_ALIAS)
			entry = strdup(alias->edit_of);
		overlay_unlock(fs->overlay);
		if (entry) {
			res = node_stat(fs, entry, st);
			free(entry);
			return res;
		}
	}
	if ((res = node_overlay_stat(fs, path, st)))
		return res < 0 ? res : 0;
	if ((res = route_resolve(fs, path, &n)))
		return res;
	const struct node_ops *ops = &node_table[n.kind];
	if (ops->root_stat != NODE_ROOT_UNUSED && (res = node_root_stat(fs, &n, &root)))
		return res;
	return ops->getattr(fs, &n, &root, st);
}

int node_list(struct psfs *fs, const char *path, void *buf, fuse_fill_dir_t filler,
	      enum fuse_readdir_flags flags)
{
	struct psfs_node n;
	int res = route_resolve(fs, path, &n);
	if (res)
		return res;
	/* A branch directory made with mkdir and not yet written to holds
	 * only in-memory names. */
	overlay_lock(fs->overlay);
	struct overlay_node *ov = overlay_get(fs->overlay, path);
	int pending = ov && ov->kind == OVERLAY_BRANCH;
	overlay_unlock(fs->overlay);
	const struct node_ops *ops = &node_table[n.kind];
	if (!ops->readdir)
		return -ENOTDIR;
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	if (!ops->lists_overlay)
		return ops->readdir(fs, &n, buf, filler, flags);
	if (!pending && (res = ops->readdir(fs, &n, buf, filler, flags)))
		return res;
	return psfs_readdir_overlay(path, buf, filler, flags);
}

int node_readlink(struct psfs *fs, const char *path, char *buf, size_t size)
{
	struct psfs_node n;
	int res;
	if (!size)
		return -EINVAL;
	overlay_lock(fs->overlay);
	struct overlay_node *ov = overlay_get(fs->overlay, path);
	if (ov && ov->kind == OVERLAY_SYMLINK) {
		snprintf(buf, size, "%s", ov->link ? ov->link : "");
		overlay_unlock(fs->overlay);
		return 0;
	}
	overlay_unlock(fs->overlay);
	if ((res = route_resolve(fs, path, &n)))
		return res;
	const struct node_ops *ops = &node_table[n.kind];
	return ops->readlink ? ops->readlink(fs, &n, buf, size) : -EINVAL;
}

int node_open(struct psfs *fs, const char *path, struct fuse_file_info *fi)
{
	struct psfs_node n;
	char *entry = NULL;
	int found, res = psfs_open_overlay(path, fi, &found, &entry);
	if (entry) {
		/* The kernel's name of an entry whose node libfuse hid for a
		 * rename that was then refused: it is that entry. */
		res = node_open(fs, entry, fi);
		free(entry);
		return res;
	}
	if (found)
		return res;
	if ((res = route_resolve(fs, path, &n)))
		return res;
	const struct node_ops *ops = &node_table[n.kind];
	if (ops->open_text) {
		char *text = NULL;
		size_t len = 0;
		if ((res = ops->open_text(fs, &n, fi->flags, &text, &len)))
			return res;
		return psfs_open_text(path, fi, text, len);
	}
	/* The kernel opens a directory with opendir: what has no open here
	 * is a directory or a link. */
	return ops->open ? ops->open(fs, &n, fi) : -EISDIR;
}
