/* Directory listings: every name of a directory (views, the journal,
 * projects, sessions, a session's layout and the in-memory side files),
 * and the listing an open directory keeps so that the kernel reads it by
 * offset.  Shared internals: ops_internal.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "caller.h"
#include "cwdnew.h"
#include "journal.h"
#include "ops_internal.h"
#include "sessionops.h"
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

/* Every name of a directory, through filler. */
static int psfs_readdir_all(const char *path, void *buf, fuse_fill_dir_t filler, enum fuse_readdir_flags flags)
{
	struct psfs *fs = psfs_self();
	struct psfs_fill f = { buf, filler, path, (flags & FUSE_READDIR_PLUS) != 0, NULL, { 0 }, NULL };
	struct psfs_caller who;
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	ps_err err = PS_OK;
	int res, pending;

	if ((res = psfs_split(path, &p)))
		return res;
	overlay_lock(psfs_overlay());
	struct overlay_node *ov = overlay_get(psfs_overlay(), path);
	pending = ov && ov->kind == OVERLAY_BRANCH;
	int kept = ov && ov->kind == OVERLAY_CWD && cwdnew_visible(ov);
	overlay_unlock(psfs_overlay());
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	if (views_owns(path)) {
		res = views_readdir(fs, path, buf, filler);
		/* Directories made under by-cwd/ beside what the catalog
		 * shows; one it does not know holds only what was made in it. */
		if (res == -ENOENT && kept)
			res = 0;
		return res || !cwdnew_owns(path) ? res : cwdnew_readdir(fs, path, buf, filler, 1);
	}
	if (search_owns(path, &p))
		return search_readdir(fs, path, &p, buf, filler);
	if (subagents_owns(&p))
		return subagents_readdir(fs, path, &p, buf, filler);
	if (pending) {
		/* Only in-memory nodes. */
	} else if (journal_owns(path)) {
		if ((res = journal_readdir(path, buf, filler)))
			return res;
	} else if (p.depth == 0) {
		filler(buf, JOURNAL_NAME, NULL, 0, 0);
		for (size_t i = 0; views_names[i]; i++)
			filler(buf, views_names[i], NULL, 0, 0);
		filler(buf, SEARCH_NAME, NULL, 0, 0);
		overview_readdir(&p, buf, filler);
		err = store_list_project_names(fs->store, psfs_fill_store, &f);
		/* Session files directly in the store, beside the projects (a
		 * project or a view of the same name wins: psfs_split). */
		if (!err)
			err = store_list_session_names(fs->store, "", psfs_fill_root_session, &f);
	} else if (p.depth == 1) {
		err = store_list_session_names(fs->store, p.project, psfs_fill_store, &f);
		if (!err) {
			overview_readdir(&p, buf, filler);
			filler(buf, SEARCH_NAME, NULL, 0, 0);
			subagents_fill_project(fs, &p, buf, filler);
		}
	} else {
		err = store_acquire(fs->store, p.project, p.session, &ref);
		if (err)
			return -psfs_errno(err);
		if (f.plus && fstat(ref.session->fd, &f.file) == 0)
			f.session = ref.session;
		err = layout_resolve(ref.session, p.rest, &node);
		if (!err)
			err = layout_is_dir(node.kind) ? layout_list(ref.session, &node, psfs_fill_layout, &f) : PS_ERR_NOTDIR;
		store_release(fs->store, &ref);
		if (!err)
			subagents_fill_session(fs, path, &p, buf, filler);
	}
	if (err)
		return -psfs_errno(err);
	if (strcmp(path, JOURNAL_REJECTED) == 0) {
		psfs_caller_get(&who);
		f.owner = &who;
	}
	overlay_lock(psfs_overlay());
	overlay_list(psfs_overlay(), path, psfs_fill_overlay, &f);
	overlay_unlock(psfs_overlay());
	return 0;
}

/* An open directory: the listing taken when reading starts (or restarts
 * at offset 0), handed out by offset.  libfuse 3.14, given names without
 * offsets, walks its own list from the start for every chunk the kernel
 * asks for, so a directory of a million entry files took minutes; with
 * offsets each chunk costs its own size.  The kernel never reads one open
 * directory from two threads at once (getdents holds the file position
 * lock), so the listing needs no lock of its own. */
struct psfs_dirlist {
	struct psfs_dirent {
		char *name;
		struct stat *st;                 /* NULL: the name only */
		enum fuse_fill_dir_flags flags;
	} *ents;
	size_t n, cap;
	int nomem;                               /* the listing is incomplete */
	struct psfs_folder_hold *hold;           /* a folder's: who holds it open (sessionops.h) */
};

static void psfs_dirlist_clear(struct psfs_dirlist *dl)
{
	for (size_t i = 0; i < dl->n; i++) {
		free(dl->ents[i].name);
		free(dl->ents[i].st);
	}
	dl->n = 0;
	dl->nomem = 0;
}

/* A fuse_fill_dir_t that keeps what it is given; 1 (stop) when out of memory. */
static int psfs_dirlist_add(void *buf, const char *name, const struct stat *st, off_t off,
			    enum fuse_fill_dir_flags flags)
{
	struct psfs_dirlist *dl = buf;
	(void)off;
	if (dl->n == dl->cap) {
		size_t cap = dl->cap ? dl->cap * 2 : 64;
		struct psfs_dirent *ents = realloc(dl->ents, cap * sizeof *ents);
		if (!ents) {
			dl->nomem = 1;
			return 1;
		}
		dl->ents = ents;
		dl->cap = cap;
	}
	struct psfs_dirent *e = &dl->ents[dl->n];
	e->name = strdup(name);
	e->st = st ? malloc(sizeof *st) : NULL;
	e->flags = flags;
	if (!e->name || (st && !e->st)) {
		free(e->name);
		free(e->st);
		dl->nomem = 1;
		return 1;
	}
	if (st)
		*e->st = *st;
	dl->n++;
	return 0;
}

int psfs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct psfs_dirlist *dl = calloc(1, sizeof *dl);
	if (!dl)
		return -ENOMEM;
	int res = psfs_folder_hold(path, &dl->hold);
	if (res) {
		free(dl);
		return res;
	}
	fi->fh = (uint64_t)(uintptr_t)dl;
	return 0;
}

int psfs_releasedir(const char *path, struct fuse_file_info *fi)
{
	struct psfs_dirlist *dl = (struct psfs_dirlist *)(uintptr_t)fi->fh;
	(void)path;
	if (dl) {
		psfs_folder_release(dl->hold);
		psfs_dirlist_clear(dl);
		free(dl->ents);
		free(dl);
	}
	return 0;
}

int psfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
		 struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct psfs_dirlist *dl = fi ? (struct psfs_dirlist *)(uintptr_t)fi->fh : NULL;
	if (!dl)
		return psfs_readdir_all(path, buf, filler, flags);
	if (offset == 0) {
		/* A new listing (or rewinddir): what the directory holds now. */
		psfs_dirlist_clear(dl);
		psfs_session_listed(path);
		int res = psfs_readdir_all(path, dl, psfs_dirlist_add, flags);
		if (res)
			return res;
		if (dl->nomem) {
			psfs_dirlist_clear(dl);
			return -ENOMEM; /* never a listing that silently lacks names */
		}
	}
	for (size_t i = offset > 0 ? (size_t)offset : 0; i < dl->n; i++) {
		const struct psfs_dirent *e = &dl->ents[i];
		if (filler(buf, e->name, e->st, (off_t)i + 1, e->flags))
			break;
	}
	return 0;
}
