/* Attributes (attr.h): what stat(2) and readlink(2) of the store's names
 * answer (node.h's PSFS_NODE_STORE row): the root, projects, sessions and
 * the nodes of a session's layout. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "attr.h"
#include "caller.h"
#include "content.h"
#include "layout.h"
#include "ops_internal.h"
#include "pisessionfs.h"
#include "route.h"
#include "sizer.h"
#include "subagents.h"

/* A directory's attributes: owner and times of like (may be NULL). */
static void psfs_dir_stat(struct stat *st, const struct stat *like, mode_t perm)
{
	memset(st, 0, sizeof *st);
	st->st_mode = S_IFDIR | perm;
	st->st_nlink = 2;
	if (like) {
		st->st_uid = like->st_uid;
		st->st_gid = like->st_gid;
		st->st_atim = like->st_atim;
		st->st_mtim = like->st_mtim;
		st->st_ctim = like->st_ctim;
	}
}

/* Permission bits of what a session shows: read where the session file is
 * readable; write where it is writable and the node takes writes. */
static mode_t psfs_perm(const struct stat *file, int dir, int writable)
{
	mode_t r = file->st_mode & 0444;
	mode_t w = writable ? file->st_mode & 0222 : 0;
	return r | w | (dir ? r >> 2 : 0);
}

static int psfs_node_writable(enum layout_kind kind)
{
	return kind == LAYOUT_TREE_DIR || kind == LAYOUT_LABELS_DIR || kind == LAYOUT_ENTRY ||
	       kind == LAYOUT_NAME || kind == LAYOUT_LOADOUT || kind == LAYOUT_RAW;
}

/* Attributes of a node whose size is known. */
void psfs_node_fill(const struct ps_session *s, const struct layout_node *node, const struct stat *file,
		    uint64_t size, struct stat *st)
{
	int dir = layout_is_dir(node->kind);
	psfs_dir_stat(st, file, psfs_perm(file, dir, psfs_node_writable(node->kind)));
	if (dir)
		return;
	st->st_mode = S_IFREG | psfs_perm(file, 0, psfs_node_writable(node->kind));
	st->st_nlink = 1;
	st->st_size = (off_t)size;
	st->st_blocks = (blkcnt_t)((size + 511) / 512);
	if (node->kind == LAYOUT_ENTRY && s->entries[node->entry].time_ms > 0) {
		int64_t ms = s->entries[node->entry].time_ms;
		st->st_mtim.tv_sec = ms / 1000;
		st->st_mtim.tv_nsec = (ms % 1000) * 1000000;
		st->st_ctim = st->st_mtim;
	}
	if (layout_is_symlink(node->kind))
		st->st_mode = S_IFLNK | 0777;
}

static int psfs_node_stat(struct ps_session *s, const struct layout_node *node, const struct stat *file,
			  struct stat *st)
{
	uint64_t size = 0;
	if (!layout_is_dir(node->kind)) {
		ps_err err = content_size(s, node, &size);
		if (err)
			return -psfs_errno(err);
	}
	psfs_node_fill(s, node, file, size, st);
	return 0;
}

/* A fork's typed name (p->link_to set, depth 2): a symlink to its session
 * directory, shown to whoever may read the session file (the name comes
 * from its content).  0 or -errno (-ENOENT for a caller who may not). */
static int psfs_fork_name_stat(struct psfs *fs, const struct psfs_path *p, struct stat *st)
{
	struct stat file;
	struct psfs_caller c;
	ps_err err = store_stat_session(fs->store, p->project, p->link_to, &file);
	if (err)
		return -psfs_errno(err);
	psfs_caller_get(&c);
	if (!psfs_caller_may_read(&c, file.st_uid, file.st_gid, file.st_mode))
		return -ENOENT;
	psfs_dir_stat(st, &file, 0777);
	st->st_mode = S_IFLNK | 0777;
	st->st_nlink = 1;
	st->st_size = (off_t)strlen(p->link_to);
	return 0;
}

int psfs_store_getattr(struct psfs *fs, const struct psfs_node *n, const struct stat *root, struct stat *st)
{
	const struct psfs_path *p = &n->p;
	struct stat file;
	struct store_ref ref;
	struct layout_node node;
	int res;
	ps_err err;

	switch (p->depth) {
	case 0:
		/* As the store's own modes: `mkdir NAME` starts a session
		 * where the store lets its user make a file. */
		/* (The store gone: read-only, for the journal.) */
		psfs_dir_stat(st, root, S_ISDIR(root->st_mode) ? root->st_mode & 0777 : 0555);
		return 0;
	case 1:
		err = store_stat_project(fs->store, p->project, &file);
		if (err)
			return -psfs_errno(err);
		psfs_dir_stat(st, &file, file.st_mode & 0777);
		return 0;
	case 2:
		if (p->link_to[0])
			return psfs_fork_name_stat(fs, p, st);
		/* No indexing: `ls -l` of a project with thousands of sessions
		 * must not parse them. */
		err = store_stat_session(fs->store, p->project, p->session, &file);
		if (err)
			return -psfs_errno(err);
		psfs_dir_stat(st, &file, psfs_perm(&file, 1, 1));
		return 0;
	}
	err = store_stat_session(fs->store, p->project, p->session, &file);
	if (!err)
		err = store_acquire(fs->store, p->project, p->session, &ref);
	if (err)
		return -psfs_errno(err);
	err = layout_resolve(ref.session, p->rest, &node);
	if (!err && node.kind == LAYOUT_ENTRY) {
		uint64_t known;
		/* Likely the first of many: `ls -l` stats every entry. */
		if (!content_size_known(ref.session, &node, &known))
			sizer_hint(fs->sizer, p->project, p->session, ref.session, node.entry + 1);
	}
	char *usage = NULL;
	size_t usage_len = 0;
	if (!err && node.kind == LAYOUT_USAGE && node.session_root &&
	    (res = subagents_usage_json(fs, p, ref.session, &usage, &usage_len))) {
		/* A parent's usage.json, with its subagents' (subagents.h). */
		if (res > 0)
			psfs_node_fill(ref.session, &node, &file, usage_len, st);
		free(usage);
		store_release(fs->store, &ref);
		return res > 0 ? 0 : res;
	}
	res = err ? -psfs_errno(err) : psfs_node_stat(ref.session, &node, &file, st);
	store_release(fs->store, &ref);
	return res;
}

int psfs_store_readlink(struct psfs *fs, const struct psfs_node *n, char *buf, size_t size)
{
	struct store_ref ref;
	struct layout_node node;
	int res;

	if (n->p.depth == 2 && n->p.link_to[0]) {
		struct stat st;
		if ((res = psfs_fork_name_stat(fs, &n->p, &st)))
			return res;
		snprintf(buf, size, "%s", n->p.link_to);
		return 0;
	}
	if ((res = route_acquire(fs, &n->p, &ref, &node)))
		return res;
	if (layout_is_symlink(node.kind)) {
		char *target = layout_symlink_target(ref.session, &node);
		res = target ? 0 : -ENOMEM;
		if (target)
			snprintf(buf, size, "%s", target);
		free(target);
	} else {
		res = -EINVAL;
	}
	store_release(fs->store, &ref);
	return res;
}
