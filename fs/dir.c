/* Listings of the store's names (the PSFS_NODE_STORE row of node.h): the
 * root, a project, a session's layout; and the in-memory side files
 * (overlay.h) every such directory lists beside its own.  Shared
 * internals: ops_internal.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "caller.h"
#include "journal.h"
#include "ops_internal.h"
#include "overview.h"
#include "content.h"
#include "searchdir.h"
#include "subagents.h"
#include "views.h"

struct psfs_fill {
	void *buf;
	fuse_fill_dir_t filler;
	const char *dir;
	/* readdirplus: attributes go with the names where they cost nothing,
	 * so a warm `ls -l` needs no lookup per file */
	int plus;
	const struct ps_session *session;
	struct stat file;
	/* rejected/: only the caller's own texts are listed (journal.h) */
	const struct psfs_caller *owner;
};

static int psfs_fill_store(void *ctx, const char *name, const struct stat *st)
{
	struct psfs_fill *f = ctx;
	/* Projects and sessions are directories in the mount: say so in the
	 * entry's type, so ls --color or find need no stat to know it. */
	struct stat dir = { .st_mode = S_IFDIR };
	(void)st;
	return f->filler(f->buf, name, &dir, 0, 0);
}

static int psfs_fill_root_session(void *ctx, const char *name, const struct stat *st)
{
	struct psfs_fill *f = ctx;
	if (!psfs_root_name_free(name))
		return 0;
	return psfs_fill_store(f, name, st);
}

static int psfs_fill_layout(void *ctx, const char *name, const struct layout_node *node)
{
	struct psfs_fill *f = ctx;
	char path[PATH_MAX];
	struct stat st = { 0 };
	/* A file an editor renamed away is not listed until it is back. */
	if (!layout_is_dir(node->kind) && (size_t)snprintf(path, sizeof path, "%s/%s", f->dir, name) < sizeof path) {
		overlay_lock(psfs_overlay());
		struct overlay_node *hidden = overlay_get(psfs_overlay(), path);
		int skip = hidden && hidden->kind == OVERLAY_HIDDEN;
		overlay_unlock(psfs_overlay());
		if (skip)
			return 0;
	}
	uint64_t size;
	if (f->plus && f->session && content_size_known(f->session, node, &size)) {
		psfs_node_fill(f->session, node, &f->file, size, &st);
		return f->filler(f->buf, name, &st, 0, FUSE_FILL_DIR_PLUS);
	}
	st.st_mode = layout_is_dir(node->kind) ? S_IFDIR
		: layout_is_symlink(node->kind) ? S_IFLNK : S_IFREG;
	return f->filler(f->buf, name, &st, 0, 0);
}

static void psfs_fill_overlay(void *ctx, const char *name, const struct overlay_node *node)
{
	struct psfs_fill *f = ctx;
	struct stat st;
	if (f->owner && !psfs_caller_is(f->owner, node->uid))
		return;
	overlay_stat(node, &st);
	f->filler(f->buf, name, &st, 0, 0);
}

int psfs_store_readdir(struct psfs *fs, const struct psfs_node *n, void *buf, fuse_fill_dir_t filler,
		       enum fuse_readdir_flags flags)
{
	const struct psfs_path *p = &n->p;
	struct psfs_fill f = { buf, filler, n->path, (flags & FUSE_READDIR_PLUS) != 0, NULL, { 0 }, NULL };
	struct store_ref ref;
	struct layout_node node;
	ps_err err = PS_OK;

	if (p->depth == 0) {
		filler(buf, JOURNAL_NAME, NULL, 0, 0);
		for (size_t i = 0; views_names[i]; i++)
			filler(buf, views_names[i], NULL, 0, 0);
		filler(buf, SEARCH_NAME, NULL, 0, 0);
		overview_readdir(p, buf, filler);
		err = store_list_project_names(fs->store, psfs_fill_store, &f);
		/* Session files directly in the store, beside the projects (a
		 * project or a view of the same name wins: route_split). */
		if (!err)
			err = store_list_session_names(fs->store, "", psfs_fill_root_session, &f);
	} else if (p->depth == 1) {
		err = store_list_session_names(fs->store, p->project, psfs_fill_store, &f);
		if (!err) {
			overview_readdir(p, buf, filler);
			filler(buf, SEARCH_NAME, NULL, 0, 0);
			subagents_fill_project(fs, p, buf, filler);
		}
	} else {
		err = store_acquire(fs->store, p->project, p->session, &ref);
		if (err)
			return -psfs_errno(err);
		if (f.plus && fstat(ref.session->fd, &f.file) == 0)
			f.session = ref.session;
		err = layout_resolve(ref.session, p->rest, &node);
		if (!err)
			err = layout_is_dir(node.kind) ? layout_list(ref.session, &node, psfs_fill_layout, &f) : PS_ERR_NOTDIR;
		store_release(fs->store, &ref);
		if (!err)
			subagents_fill_session(fs, n->path, p, buf, filler);
	}
	return err ? -psfs_errno(err) : 0;
}

int psfs_readdir_overlay(const char *path, void *buf, fuse_fill_dir_t filler, enum fuse_readdir_flags flags)
{
	struct psfs_fill f = { buf, filler, path, (flags & FUSE_READDIR_PLUS) != 0, NULL, { 0 }, NULL };
	struct psfs_caller who;
	if (strcmp(path, JOURNAL_REJECTED) == 0) {
		psfs_caller_get(&who);
		f.owner = &who;
	}
	overlay_lock(psfs_overlay());
	overlay_list(psfs_overlay(), path, psfs_fill_overlay, &f);
	overlay_unlock(psfs_overlay());
	return 0;
}
