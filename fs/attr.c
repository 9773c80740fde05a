/* Attributes (attr.h): what stat(2) of every name of the mount answers,
 * in the order psfs_getattr asks: an open handle's own state, the
 * in-memory files (overlay.c), the views, the journal, the overview
 * files, search/, then the store and the session's layout. */
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
#include "commitfile.h"
#include "cwdnew.h"
#include "content.h"
#include "journal.h"
#include "layout.h"
#include "lockorder.h"
#include "ops_internal.h"
#include "overlay.h"
#include "overview.h"
#include "pisessionfs.h"
#include "route.h"
#include "searchdir.h"
#include "sizer.h"
#include "subagents.h"
#include "views.h"

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

/* Looks the path up among in-memory nodes.  Returns 1 and fills st when it
 * is one, -ENOENT when an entry file there was renamed away, 0 otherwise. */
static int psfs_overlay_stat(const char *path, struct stat *st)
{
	int res = 0;
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), path);
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
	overlay_unlock(psfs_overlay());
	return res;
}

/* A fork's typed name: a symlink to its session directory, shown to
 * whoever may read the session file (the name comes from its content). */
int psfs_fork_name_stat(struct psfs *fs, const struct psfs_path *p, struct stat *st)
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

int psfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct psfs *fs = psfs_self();
	struct psfs_path p;
	struct stat file;
	struct store_ref ref;
	struct layout_node node;
	int res;
	ps_err err;

	if (fi && fi->fh) {
		struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
		if (f->kind == HANDLE_EDIT || f->kind == HANDLE_NAME) {
			/* An editor's fstat after writing sees what it wrote. */
			res = psfs_getattr(path, st, NULL);
			if (res == 0) {
				lockorder_lock(&f->lock, LOCK_READER);
				st->st_size = (off_t)f->len;
				lockorder_unlock(&f->lock, LOCK_READER);
			}
			if (res != -ENOENT)
				return res;
		}
		if (f->kind == HANDLE_OVERLAY) {
			overlay_lock(psfs_overlay());
			overlay_stat(f->node, st);
			overlay_unlock(psfs_overlay());
			return 0;
		}
	}
	if (psfs_is_fuse_hidden(path)) {
		/* A descriptor of an entry another program saved over by
		 * rename: libfuse renamed its node (psfs_init, psfs_rename);
		 * the entry itself never moved. */
		char *entry = NULL;
		overlay_lock(psfs_overlay());
		struct overlay_node *alias = overlay_get(psfs_overlay(), path);
		if (alias && alias->kind == OVERLAY_ALIAS)
			entry = strdup(alias->edit_of);
		overlay_unlock(psfs_overlay());
		if (entry) {
			res = psfs_getattr(entry, st, NULL);
			free(entry);
			return res;
		}
	}
	res = psfs_overlay_stat(path, st);
	if (res)
		return res < 0 ? res : 0;
	if ((res = psfs_split(path, &p)))
		return res;
	if (views_owns(path))
		return views_getattr(fs, path, st);
	/* The log and the rejected texts stay reachable even when the store
	 * directory is gone: that is when they are most needed.  A store gone
	 * from its path (removed, moved away) is an empty store, its views
	 * empty, until a directory is there again (store_follow_root). */
	if (fstatat(AT_FDCWD, store_root(fs->store), &file, 0) != 0) {
		if (errno != ENOENT && errno != ENOTDIR && !journal_owns(path) && p.depth != 0)
			return -errno;
		memset(&file, 0, sizeof file);
		file.st_uid = getuid();
		file.st_gid = getgid();
	}
	if (journal_owns(path))
		return journal_getattr(fs->journal, path, &file, st);
	if (overview_owns(&p))
		return overview_getattr(fs, &p, &file, st);
	if (subagents_owns(&p))
		return subagents_getattr(fs, path, &p, st);
	if (search_owns(path, &p))
		return search_getattr(fs, path, &p, &file, st);
	switch (p.depth) {
	case 0:
		/* As the store's own modes: `mkdir NAME` starts a session
		 * where the store lets its user make a file. */
		/* (The store gone: read-only, for the journal.) */
		psfs_dir_stat(st, &file, S_ISDIR(file.st_mode) ? file.st_mode & 0777 : 0555);
		return 0;
	case 1:
		err = store_stat_project(fs->store, p.project, &file);
		if (err)
			return -psfs_errno(err);
		psfs_dir_stat(st, &file, file.st_mode & 0777);
		return 0;
	case 2:
		if (p.link_to[0])
			return psfs_fork_name_stat(fs, &p, st);
		/* No indexing: `ls -l` of a project with thousands of sessions
		 * must not parse them. */
		err = store_stat_session(fs->store, p.project, p.session, &file);
		if (err)
			return -psfs_errno(err);
		psfs_dir_stat(st, &file, psfs_perm(&file, 1, 1));
		return 0;
	}
	err = store_stat_session(fs->store, p.project, p.session, &file);
	if (!err)
		err = store_acquire(fs->store, p.project, p.session, &ref);
	if (err)
		return -psfs_errno(err);
	err = layout_resolve(ref.session, p.rest, &node);
	if (!err && node.kind == LAYOUT_ENTRY) {
		uint64_t known;
		/* Likely the first of many: `ls -l` stats every entry. */
		if (!content_size_known(ref.session, &node, &known))
			sizer_hint(fs->sizer, p.project, p.session, ref.session, node.entry + 1);
	}
	char *usage = NULL;
	size_t usage_len = 0;
	if (!err && node.kind == LAYOUT_USAGE && node.session_root &&
	    (res = subagents_usage_json(fs, &p, ref.session, &usage, &usage_len))) {
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
