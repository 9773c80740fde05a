/* The FUSE operations (libfuse's high-level, path-based API).  Every
 * handler splits the path into project / session / the rest, acquires the
 * session from the store and asks the core what the rest names.  In-memory
 * side files (overlay.c) are looked up first; what a write means is
 * decided in commit.c. */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "buf.h"
#include "commit.h"
#include "escape.h"
#include "journal.h"
#include "layout.h"
#include "overlay.h"
#include "ops_internal.h"
#include "pisessionfs.h"
#include "view.h"
#include "usagecsv.h"
#include "views.h"

/* The names libfuse gives a file that is replaced or removed while open
 * (psfs_init: hard_remove is off). */
int psfs_is_fuse_hidden(const char *path)
{
	const char *slash = strrchr(path, '/');
	return strncmp(slash ? slash + 1 : path, ".fuse_hidden", 12) == 0;
}

/* Whether a name at the mount root is a session file lying directly in the
 * store (a flat store, docs/layout.md): STORE/<name>.jsonl, where no
 * project directory, view or file of the mount root has that name. */
int psfs_root_name_free(const char *name)
{
	struct stat st;
	for (size_t i = 0; views_names[i]; i++)
		if (strcmp(name, views_names[i]) == 0)
			return 0;
	if (strcmp(name, JOURNAL_NAME) == 0 || strcmp(name, VIEWS_USAGE_CSV) == 0)
		return 0;
	return store_stat_project(psfs_self()->store, name, &st) != PS_OK;
}

static int psfs_is_root_session(const char *name)
{
	struct stat st;
	return psfs_root_name_free(name) && store_stat_session(psfs_self()->store, "", name, &st) == PS_OK;
}

/* Splits a path into project, session and the rest.  A session at the
 * store root (psfs_is_root_session) has the project "". */
int psfs_split(const char *path, struct psfs_path *out)
{
	const char *p = path;
	memset(out, 0, sizeof *out);
	out->rest = "";
	while (*p == '/')
		p++;
	if (!*p)
		return 0;
	size_t n = strcspn(p, "/");
	if (n > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(out->project, p, n);
	out->depth = 1;
	p += n;
	if (psfs_is_root_session(out->project)) {
		memcpy(out->session, out->project, sizeof out->session);
		out->project[0] = '\0';
		out->depth = 2;
		while (*p == '/')
			p++;
		if (*p) {
			out->rest = p;
			out->depth = 3;
		}
		return 0;
	}
	while (*p == '/')
		p++;
	if (!*p)
		return 0;
	n = strcspn(p, "/");
	if (n > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(out->session, p, n);
	out->depth = 2;
	p += n;
	while (*p == '/')
		p++;
	if (*p) {
		out->rest = p;
		out->depth = 3;
	}
	return 0;
}

/* Splits "/a/b/name" into a new "/a/b" and a pointer to "name". */
char *psfs_dirname(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	if (!slash || slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

int psfs_is_journal(const char *path)
{
	return strcmp(path, JOURNAL_DIR) == 0 || strncmp(path, JOURNAL_DIR "/", sizeof JOURNAL_DIR) == 0;
}

/* Resolves a path inside a session; on success the session stays acquired
 * (release with store_release). */
int psfs_locate(const char *path, struct psfs_path *p, struct store_ref *ref, struct layout_node *node)
{
	int res = psfs_split(path, p);
	if (res)
		return res;
	if (p->depth < 2)
		return -EINVAL;
	ps_err err = store_acquire(psfs_self()->store, p->project, p->session, ref);
	if (err)
		return -psfs_errno(err);
	err = layout_resolve(ref->session, p->rest, node);
	if (err) {
		store_release(psfs_self()->store, ref);
		return -psfs_errno(err);
	}
	return 0;
}

void psfs_dir_stat(struct stat *st, const struct stat *like, mode_t perm)
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
	       kind == LAYOUT_NAME || kind == LAYOUT_RAW;
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
	if (node->kind == LAYOUT_LEAF || node->kind == LAYOUT_LABEL)
		st->st_mode = S_IFLNK | 0777;
}

static int psfs_node_stat(struct ps_session *s, const struct layout_node *node, const struct stat *file,
			  struct stat *st)
{
	uint64_t size = 0;
	if (!layout_is_dir(node->kind)) {
		ps_err err = view_size(s, node, &size);
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
	overlay_lock();
	struct overlay_node *node = overlay_get(path);
	if (node && node->kind == OVERLAY_HIDDEN)
		res = -ENOENT;
	else if (node) {
		/* A saved name outlives every lookup the kernel may cache. */
		if (node->kind == OVERLAY_SAVED)
			overlay_saved_keep(node, psfs_saved_grace());
		overlay_stat(node, st);
		res = 1;
	}
	overlay_unlock();
	return res;
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
				pthread_mutex_lock(&f->lock);
				st->st_size = (off_t)f->len;
				pthread_mutex_unlock(&f->lock);
			}
			if (res != -ENOENT)
				return res;
		}
		if (f->kind == HANDLE_OVERLAY) {
			overlay_lock();
			overlay_stat(f->node, st);
			overlay_unlock();
			return 0;
		}
	}
	if (psfs_is_fuse_hidden(path)) {
		/* A descriptor of an entry another program saved over by
		 * rename: libfuse renamed its node (psfs_init, psfs_rename);
		 * the entry itself never moved. */
		char *entry = NULL;
		overlay_lock();
		struct overlay_node *alias = overlay_get(path);
		if (alias && alias->kind == OVERLAY_ALIAS)
			entry = strdup(alias->edit_of);
		overlay_unlock();
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
	 * directory is gone: that is when they are most needed. */
	if (fstatat(AT_FDCWD, store_root(fs->store), &file, 0) != 0) {
		if (!psfs_is_journal(path) && p.depth != 0)
			return -errno;
		memset(&file, 0, sizeof file);
		file.st_uid = getuid();
		file.st_gid = getgid();
	}
	if (psfs_is_journal(path)) {
		psfs_dir_stat(st, &file, 0555);
		if (strcmp(path, JOURNAL_LOG) == 0) {
			st->st_mode = S_IFREG | 0444;
			st->st_nlink = 1;
			st->st_size = (off_t)journal_size();
		} else if (strcmp(path, JOURNAL_DIR) != 0 && strcmp(path, JOURNAL_REJECTED) != 0) {
			return -ENOENT;
		}
		return 0;
	}
	if ((p.depth == 1 && strcmp(p.project, VIEWS_USAGE_CSV) == 0) ||
	    (p.depth == 2 && strcmp(p.session, VIEWS_USAGE_CSV) == 0)) {
		size_t len;
		if (p.depth == 2 && (err = store_stat_project(fs->store, p.project, &file)))
			return -psfs_errno(err);
		res = usagecsv_size(fs, p.depth == 2 ? p.project : NULL, &len);
		if (res)
			return res;
		psfs_dir_stat(st, &file, 0444);
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)len;
		return 0;
	}
	switch (p.depth) {
	case 0:
		psfs_dir_stat(st, &file, 0555);
		return 0;
	case 1:
		err = store_stat_project(fs->store, p.project, &file);
		if (err)
			return -psfs_errno(err);
		psfs_dir_stat(st, &file, 0555);
		return 0;
	case 2:
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
		if (!view_size_known(ref.session, &node, &known))
			psfs_sizer_hint(p.project, p.session, ref.session, node.entry + 1);
	}
	res = err ? -psfs_errno(err) : psfs_node_stat(ref.session, &node, &file, st);
	store_release(fs->store, &ref);
	return res;
}

struct psfs_fill {
	void *buf;
	fuse_fill_dir_t filler;
	const char *dir;
	/* readdirplus: attributes go with the names where they cost nothing,
	 * so a warm `ls -l` needs no lookup per file */
	int plus;
	const struct ps_session *session;
	struct stat file;
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
		overlay_lock();
		struct overlay_node *hidden = overlay_get(path);
		int skip = hidden && hidden->kind == OVERLAY_HIDDEN;
		overlay_unlock();
		if (skip)
			return 0;
	}
	uint64_t size;
	if (f->plus && f->session && view_size_known(f->session, node, &size)) {
		psfs_node_fill(f->session, node, &f->file, size, &st);
		return f->filler(f->buf, name, &st, 0, FUSE_FILL_DIR_PLUS);
	}
	st.st_mode = layout_is_dir(node->kind) ? S_IFDIR
		: (node->kind == LAYOUT_LEAF || node->kind == LAYOUT_LABEL) ? S_IFLNK : S_IFREG;
	return f->filler(f->buf, name, &st, 0, 0);
}

static void psfs_fill_overlay(void *ctx, const char *name, const struct overlay_node *node)
{
	struct psfs_fill *f = ctx;
	struct stat st;
	overlay_stat(node, &st);
	f->filler(f->buf, name, &st, 0, 0);
}

/* Every name of a directory, through filler. */
static int psfs_readdir_all(const char *path, void *buf, fuse_fill_dir_t filler, enum fuse_readdir_flags flags)
{
	struct psfs *fs = psfs_self();
	struct psfs_fill f = { buf, filler, path, (flags & FUSE_READDIR_PLUS) != 0, NULL, { 0 } };
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	ps_err err = PS_OK;
	int res, pending;

	if ((res = psfs_split(path, &p)))
		return res;
	overlay_lock();
	struct overlay_node *ov = overlay_get(path);
	pending = ov && ov->kind == OVERLAY_BRANCH;
	overlay_unlock();
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	if (views_owns(path))
		return views_readdir(fs, path, buf, filler);
	if (pending || strcmp(path, JOURNAL_REJECTED) == 0) {
		/* Only in-memory nodes. */
	} else if (strcmp(path, JOURNAL_DIR) == 0) {
		filler(buf, "log", NULL, 0, 0);
		filler(buf, "rejected", NULL, 0, 0);
	} else if (p.depth == 0) {
		filler(buf, JOURNAL_NAME, NULL, 0, 0);
		for (size_t i = 0; views_names[i]; i++)
			filler(buf, views_names[i], NULL, 0, 0);
		filler(buf, VIEWS_USAGE_CSV, NULL, 0, 0);
		err = store_list_project_names(fs->store, psfs_fill_store, &f);
		/* Session files directly in the store, beside the projects (a
		 * project or a view of the same name wins: psfs_split). */
		if (!err)
			err = store_list_session_names(fs->store, "", psfs_fill_root_session, &f);
	} else if (p.depth == 1) {
		err = store_list_session_names(fs->store, p.project, psfs_fill_store, &f);
		if (!err)
			filler(buf, VIEWS_USAGE_CSV, NULL, 0, 0);
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
	}
	if (err)
		return -psfs_errno(err);
	overlay_lock();
	overlay_list(path, psfs_fill_overlay, &f);
	overlay_unlock();
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
	(void)path;
	struct psfs_dirlist *dl = calloc(1, sizeof *dl);
	if (!dl)
		return -ENOMEM;
	fi->fh = (uint64_t)(uintptr_t)dl;
	return 0;
}

int psfs_releasedir(const char *path, struct fuse_file_info *fi)
{
	struct psfs_dirlist *dl = (struct psfs_dirlist *)(uintptr_t)fi->fh;
	(void)path;
	if (dl) {
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
	overlay_lock();
	struct overlay_node *ov = overlay_get(path);
	if (ov && ov->kind == OVERLAY_SYMLINK) {
		snprintf(buf, size, "%.*s", (int)ov->len, ov->data ? ov->data : "");
		overlay_unlock();
		return 0;
	}
	overlay_unlock();
	if ((res = psfs_locate(path, &p, &ref, &node)))
		return res;
	if (node.kind == LAYOUT_LEAF || node.kind == LAYOUT_LABEL) {
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
	if (statvfs(store_root(psfs_self()->store), st) != 0)
		return -errno;
	st->f_namemax = NAME_MAX;
	return 0;
}

static void *psfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	struct psfs *fs = psfs_self();
	double timeout = fs->cfg.timeout;
	(void)conn;
	if (isnan(timeout))
		timeout = psfs_watch_hears_all() ? PSFS_TIMEOUT_WATCHED : PSFS_TIMEOUT_UNWATCHED;
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
