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
#include "pisessionfs.h"
#include "content.h"
#include "views.h"

struct psfs_path {
	char project[NAME_MAX + 1];
	char session[NAME_MAX + 1];
	const char *rest;   /* inside the session directory, "" for itself */
	int depth;          /* 0 root, 1 project, 2 session, 3 inside */
};

enum psfs_handle {
	HANDLE_READ,    /* a snapshot taken at open (data), or the raw file (fd) */
	HANDLE_OVERLAY, /* an in-memory file */
	HANDLE_EDIT,    /* an entry file opened for writing: a buffer */
	HANDLE_NAME,    /* `name` opened for writing */
	HANDLE_RAW,     /* session.jsonl opened for appending */
};

/* An open file.  Readers see one consistent snapshot even while the session
 * grows; writers fill a buffer that becomes entries when flushed. */
struct psfs_file {
	enum psfs_handle kind;
	pthread_mutex_t lock;
	char *data;
	size_t len;
	int fd;
	struct overlay_node *node;
	char *path;
	char project[NAME_MAX + 1];
	char session[NAME_MAX + 1];
	uint32_t entry;
	uint64_t generation;
	uint64_t raw_base;  /* size of session.jsonl when opened */
	int growing;        /* a transcript: reads past the end look for more */
	uint64_t changes;   /* growing: the session's change count the snapshot is from */
	int append;         /* opened with O_APPEND: writes go to the end, whatever the offset */
	int dirty;          /* written to since the last commit */
	int truncated;      /* opened with O_TRUNC and not committed since */
	int lazy;           /* an immutable file: its text is built at the first read */
	int refused;        /* an entry's rewrite refused at a write: so are the rest */
};

static struct psfs *psfs_self(void)
{
	return fuse_get_context()->private_data;
}

/* Whether a name at the mount root is a session file lying directly in the
 * store (a flat store, docs/layout.md): STORE/<name>.jsonl, where no
 * project directory, view or file of the mount root has that name. */
static int psfs_root_name_free(const char *name)
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
static int psfs_split(const char *path, struct psfs_path *out)
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
static char *psfs_dirname(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	if (!slash || slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static int psfs_is_journal(const char *path)
{
	return strcmp(path, JOURNAL_DIR) == 0 || strncmp(path, JOURNAL_DIR "/", sizeof JOURNAL_DIR) == 0;
}

/* Resolves a path inside a session; on success the session stays acquired
 * (release with store_release). */
static int psfs_locate(const char *path, struct psfs_path *p, struct store_ref *ref, struct layout_node *node)
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
	       kind == LAYOUT_NAME || kind == LAYOUT_RAW;
}

/* Attributes of a node whose size is known. */
static void psfs_node_fill(const struct ps_session *s, const struct layout_node *node, const struct stat *file,
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
	overlay_lock();
	struct overlay_node *node = overlay_get(path);
	if (node && node->kind == OVERLAY_HIDDEN)
		res = -ENOENT;
	else if (node) {
		overlay_stat(node, st);
		res = 1;
	}
	overlay_unlock();
	return res;
}

static int psfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
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
		char *csv;
		size_t len;
		if (p.depth == 2 && (err = store_stat_project(fs->store, p.project, &file)))
			return -psfs_errno(err);
		res = views_usage_csv(fs, p.depth == 2 ? p.project : NULL, &csv, &len);
		if (res)
			return res;
		free(csv);
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
		if (!content_size_known(ref.session, &node, &known))
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
	if (f->plus && f->session && content_size_known(f->session, node, &size)) {
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

static int psfs_opendir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	struct psfs_dirlist *dl = calloc(1, sizeof *dl);
	if (!dl)
		return -ENOMEM;
	fi->fh = (uint64_t)(uintptr_t)dl;
	return 0;
}

static int psfs_releasedir(const char *path, struct fuse_file_info *fi)
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

static int psfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
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

static struct psfs_file *psfs_file_new(enum psfs_handle kind, const char *path)
{
	struct psfs_file *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->kind = kind;
	f->fd = -1;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	return f;
}

static void psfs_file_free(struct psfs_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->node) {
		overlay_lock();
		overlay_put(f->node);
		overlay_unlock();
	}
	pthread_mutex_destroy(&f->lock);
	free(f->data);
	free(f->path);
	free(f);
}

/* A file written at the name of an entry an editor moved aside (f after
 * `mv f f~`): its content is the entry's new text.  The overlay lock is
 * held. */
static int psfs_overlay_rewrites_entry(const struct overlay_node *node)
{
	return node->edit_of && !node->unlinked && strcmp(node->edit_of, node->path) == 0;
}

static int psfs_open_overlay(const char *path, struct fuse_file_info *fi, int *found)
{
	struct psfs_file *f;
	overlay_lock();
	struct overlay_node *node = overlay_get(path);
	*found = node != NULL;
	if (!node) {
		overlay_unlock();
		return 0;
	}
	if (node->kind != OVERLAY_FILE) {
		overlay_unlock();
		return node->kind == OVERLAY_BRANCH ? -EISDIR : -ENOENT;
	}
	if ((fi->flags & O_TRUNC) && (fi->flags & O_ACCMODE) != O_RDONLY)
		overlay_truncate(node, 0);
	node->opens++;
	overlay_unlock();
	f = psfs_file_new(HANDLE_OVERLAY, path);
	if (!f) {
		overlay_lock();
		overlay_put(node);
		overlay_unlock();
		return -ENOMEM;
	}
	f->node = node;
	/* A rewrite of an entry moved aside (emacs): emptied like an entry
	 * opened with O_TRUNC (psfs_commit). */
	overlay_lock();
	if ((fi->flags & O_TRUNC) && (fi->flags & O_ACCMODE) != O_RDONLY && psfs_overlay_rewrites_entry(node))
		f->truncated = 1;
	overlay_unlock();
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	return 0;
}

static int psfs_open(const char *path, struct fuse_file_info *fi)
{
	struct psfs *fs = psfs_self();
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	struct psfs_file *f = NULL;
	int writing = (fi->flags & O_ACCMODE) != O_RDONLY;
	int found, res;
	ps_err err = PS_OK;

	res = psfs_open_overlay(path, fi, &found);
	if (found)
		return res;
	if (strcmp(path, JOURNAL_LOG) == 0) {
		if (writing)
			return -EACCES;
		if (!(f = psfs_file_new(HANDLE_READ, path)) || !(f->data = journal_snapshot(&f->len))) {
			if (f)
				psfs_file_free(f);
			return -ENOMEM;
		}
		fi->fh = (uint64_t)(uintptr_t)f;
		fi->direct_io = 1;
		return 0;
	}
	if (!psfs_split(path, &p) && ((p.depth == 1 && strcmp(p.project, VIEWS_USAGE_CSV) == 0) ||
				      (p.depth == 2 && strcmp(p.session, VIEWS_USAGE_CSV) == 0))) {
		if (writing)
			return -EACCES;
		if (!(f = psfs_file_new(HANDLE_READ, path)))
			return -ENOMEM;
		res = views_usage_csv(fs, p.depth == 2 ? p.project : NULL, &f->data, &f->len);
		if (res) {
			psfs_file_free(f);
			return res;
		}
		fi->fh = (uint64_t)(uintptr_t)f;
		fi->direct_io = 1;
		return 0;
	}
	if ((res = psfs_locate(path, &p, &ref, &node)))
		return res == -EINVAL ? -EISDIR : res;
	struct ps_session *s = ref.session;
	if (layout_is_dir(node.kind)) {
		err = PS_ERR_ISDIR;
		goto out;
	}
	if (writing) {
		enum psfs_handle kind;
		switch (node.kind) {
		case LAYOUT_ENTRY:
			kind = HANDLE_EDIT;
			break;
		case LAYOUT_NAME:
			kind = HANDLE_NAME;
			break;
		case LAYOUT_RAW:
			if (fi->flags & O_TRUNC) {
				journal_log("refused truncating %s: history is append-only", path);
				err = PS_ERR_PERM;
				goto out;
			}
			kind = HANDLE_RAW;
			break;
		default:
			journal_log("refused writing %s: it is generated from the session", path);
			err = PS_ERR_PERM;
			goto out;
		}
		if (!(f = psfs_file_new(kind, path))) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		f->entry = node.entry;
		f->generation = s->generation;
		f->raw_base = s->size;
		/* The kernel computes O_APPEND offsets from a size it may have
		 * cached before another writer appended: ignore them. */
		f->append = (fi->flags & O_APPEND) != 0;
		memcpy(f->project, p.project, sizeof f->project);
		memcpy(f->session, p.session, sizeof f->session);
		if (kind != HANDLE_RAW && !(fi->flags & O_TRUNC))
			err = content_content(s, &node, &f->data, &f->len);
		/* `: > name` clears the name though nothing is written; that
		 * is decided at the last close, since a shell's redirection
		 * closes a duplicate of the file before anything is written. */
		if (kind != HANDLE_RAW && (fi->flags & O_TRUNC))
			f->truncated = 1;
		/* O_TRUNC of an entry is the start of a rewrite, not a change. */
		fi->direct_io = 1;
	} else {
		if (!(f = psfs_file_new(HANDLE_READ, path))) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		if (node.kind == LAYOUT_RAW) {
			f->fd = open(s->path, O_RDONLY | O_CLOEXEC);
			if (f->fd < 0)
				err = PS_ERR_IO;
			fi->direct_io = 1; /* grows under the reader: no stale size */
		} else {
			/* The kernel keeps the pages of immutable files: a reader
			 * of a file it has cached never reads, so their text is
			 * built at the first read, not at every open (a second
			 * grep -r rendered every entry again). */
			if (content_immutable(&node))
				f->lazy = 1;
			else
				err = content_content(s, &node, &f->data, &f->len);
			if (node.kind == LAYOUT_ENTRY)
				psfs_sizer_reading();
			/* Entry files and stored lines never change: the kernel
			 * may keep their pages.  The rest (context.json, name...)
			 * bypasses the page cache, so a reader keeps the version it
			 * opened even when another reader opens a newer one.
			 * Once the file was rewritten and indexed anew
			 * (generation past 1), the kernel's pages of a path may
			 * hold the text it had before, with a size and mtime
			 * that tell it nothing: drop them at each open. */
			fi->keep_cache = content_immutable(&node) && s->generation == 1;
			fi->direct_io = !content_immutable(&node);
			f->growing = node.kind == LAYOUT_TRANSCRIPT;
			f->changes = s->changes;
			f->generation = s->generation;
			memcpy(f->project, p.project, sizeof f->project);
			memcpy(f->session, p.session, sizeof f->session);
		}
	}
out:
	store_release(fs->store, &ref);
	if (err) {
		if (f)
			psfs_file_free(f);
		return -psfs_errno(err);
	}
	fi->fh = (uint64_t)(uintptr_t)f;
	return 0;
}

/* A transcript only grows while the session grows along its path (each
 * one is a prefix of the next): a reader at the end of its snapshot, such
 * as `tail -f`, gets what was added since.  When the path changed (the
 * leaf moved to another branch) the old snapshot stays as it was. */
static void psfs_grow_snapshot(struct psfs_file *f)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	char *data = NULL;
	size_t len = 0;
	uint64_t changes, generation;
	if (psfs_locate(f->path, &p, &ref, &node))
		return;
	changes = ref.session->changes;
	generation = ref.session->generation;
	pthread_mutex_lock(&f->lock);
	int same = f->changes == changes && f->generation == generation;
	pthread_mutex_unlock(&f->lock);
	/* A reader at the end (every read to EOF ends there) must not cost
	 * a whole new transcript when nothing was added. */
	ps_err err = same ? PS_ERR_NOENT : content_content(ref.session, &node, &data, &len);
	store_release(psfs_self()->store, &ref);
	if (err)
		return;
	pthread_mutex_lock(&f->lock);
	f->changes = changes;
	f->generation = generation;
	if (len > f->len && memcmp(data, f->data, f->len) == 0) {
		free(f->data);
		f->data = data;
		f->len = len;
		data = NULL;
	}
	pthread_mutex_unlock(&f->lock);
	free(data);
}

/* Builds a lazy handle's text (psfs_open): what the path shows now. */
static int psfs_read_build(struct psfs_file *f)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	int res = 0;

	pthread_mutex_lock(&f->lock);
	if (f->lazy) {
		res = psfs_locate(f->path, &p, &ref, &node);
		if (!res) {
			ps_err err = content_content(ref.session, &node, &f->data, &f->len);
			store_release(psfs_self()->store, &ref);
			res = err ? -psfs_errno(err) : 0;
		}
		if (!res)
			f->lazy = 0;
	}
	pthread_mutex_unlock(&f->lock);
	return res;
}

static int psfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	const char *data;
	size_t len;
	int res = 0;
	(void)path;
	if (f->kind == HANDLE_READ && (res = psfs_read_build(f)))
		return res;
	if (f->growing && off >= 0 && (size_t)off >= f->len)
		psfs_grow_snapshot(f);
	if (f->fd >= 0) {
		ssize_t got = pread(f->fd, buf, size, off);
		return got < 0 ? -errno : (int)got;
	}
	if (f->kind == HANDLE_OVERLAY)
		overlay_lock();
	pthread_mutex_lock(&f->lock);
	data = f->kind == HANDLE_OVERLAY ? f->node->data : f->data;
	len = f->kind == HANDLE_OVERLAY ? f->node->len : f->len;
	if (off >= 0 && (size_t)off < len) {
		if (size > len - (size_t)off)
			size = len - (size_t)off;
		memcpy(buf, data + off, size);
		res = (int)size;
	}
	pthread_mutex_unlock(&f->lock);
	if (f->kind == HANDLE_OVERLAY)
		overlay_unlock();
	return res;
}

/* Buffers of writers are bounded like the overlay's files. */
#define PSFS_MAX_WRITE ((size_t)256 << 20)

static int psfs_buffer_write(struct psfs_file *f, const char *buf, size_t size, size_t off)
{
	if (off + size > PSFS_MAX_WRITE)
		return -EFBIG;
	if (off + size > f->len) {
		char *grown = realloc(f->data, off + size + 1);
		if (!grown)
			return -ENOMEM;
		memset(grown + f->len, 0, off + size + 1 - f->len);
		f->data = grown;
		f->len = off + size;
	}
	memcpy(f->data + off, buf, size);
	f->dirty = 1;
	return (int)size;
}

/* The first write into an entry file opened with O_TRUNC decides whether
 * it is the entry's text alone (commit_check_text): an entry that cannot
 * take that is refused here, so that `echo text > ENTRY.md` fails in the
 * shell.  A refused handle writes nothing more and commits nothing.
 * f->lock is held. */
static int psfs_edit_check_text(struct psfs_file *f, const char *buf, size_t size, off_t off)
{
	struct store_ref ref;
	int res;

	if (f->refused)
		return -EINVAL;
	/* Opened with O_TRUNC, as the shell, tee, Python's "w" and nano do;
	 * not vim's ftruncate, whose write error would read "file system
	 * full?": its refusal stays at close(). */
	if (off != 0 || size == 0 || f->len != 0 || !f->truncated)
		return 0;
	if (store_acquire(psfs_self()->store, f->project, f->session, &ref))
		return 0; /* the commit says why */
	res = commit_check_text(&ref, f->generation, f->entry, f->path, buf, size);
	store_release(psfs_self()->store, &ref);
	if (res) {
		f->refused = 1;
		f->dirty = 0;
		f->truncated = 0;
	}
	return res;
}

static int psfs_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	int res;
	(void)path;
	if (off < 0)
		return -EINVAL;
	switch (f->kind) {
	case HANDLE_OVERLAY:
		overlay_lock();
		res = overlay_write(f->node, buf, size, off);
		overlay_unlock();
		if (res > 0) {
			pthread_mutex_lock(&f->lock);
			f->dirty = 1;
			pthread_mutex_unlock(&f->lock);
		}
		return res;
	case HANDLE_EDIT:
	case HANDLE_NAME:
		pthread_mutex_lock(&f->lock);
		res = f->kind == HANDLE_EDIT ? psfs_edit_check_text(f, buf, size, off) : 0;
		if (!res)
			res = psfs_buffer_write(f, buf, size, (size_t)off);
		pthread_mutex_unlock(&f->lock);
		return res;
	case HANDLE_RAW:
		if (f->append) {
			pthread_mutex_lock(&f->lock);
			res = psfs_buffer_write(f, buf, size, f->len);
			pthread_mutex_unlock(&f->lock);
			return res;
		}
		/* Only appends: bytes at the end of the file as it was opened. */
		if ((uint64_t)off < f->raw_base) {
			journal_log("refused writing inside %s at offset %lld: history is append-only", f->path, (long long)off);
			return -EPERM;
		}
		pthread_mutex_lock(&f->lock);
		res = psfs_buffer_write(f, buf, size, (size_t)((uint64_t)off - f->raw_base));
		pthread_mutex_unlock(&f->lock);
		return res;
	default:
		return -EBADF;
	}
}

/* Turns what a handle holds into entries; called on flush (close), fsync
 * and release.  Errors reach the caller's close() or fsync(). */
static int psfs_commit(struct psfs_file *f, int last)
{
	struct psfs *fs = psfs_self();
	struct store_ref ref;
	int res = 0;

	pthread_mutex_lock(&f->lock);
	if (f->refused) {
		/* Refused at its first write (psfs_edit_check_text), which said
		 * so and logged it; close() need not say it again (cat, Python
		 * would report it twice).  fsync() says nothing is durable. */
		res = last ? -EINVAL : 0;
		goto out;
	}
	if (!f->dirty && f->truncated && !last && (f->kind == HANDLE_EDIT || f->kind == HANDLE_OVERLAY)) {
		/* An entry emptied and not written (yet): refused if it stays
		 * so, which the last close records; this close already says. */
		res = -EINVAL;
		goto out;
	}
	if (!f->dirty && !(last && f->truncated))
		goto out;
	f->dirty = 0;
	f->truncated = 0;
	if (f->kind == HANDLE_OVERLAY) {
		/* A file created in a tree or pending-branch directory. */
		const char *name;
		char *dir = psfs_dirname(f->path, &name);
		char *text = NULL, *fork_id = NULL, *label = NULL, *edit_of = NULL;
		size_t len = 0;
		int pending = 0;
		if (!dir) {
			res = -ENOMEM;
			goto out;
		}
		overlay_lock();
		struct overlay_node *parent = overlay_get(dir);
		if (parent && parent->kind == OVERLAY_BRANCH) {
			pending = 1;
			fork_id = strdup(parent->fork_id);
			label = strdup(parent->label);
		}
		int wanted = !f->node->unlinked && strcmp(f->node->path, f->path) == 0 &&
			     (commit_is_entry_name(name) || f->node->edit_of) &&
			     (f->node->len > 0 || psfs_overlay_rewrites_entry(f->node));
		/* An entry moved aside and written back empty (emacs): refused
		 * below; at the last close the entry then shows again as it was
		 * (a refusal at an earlier close leaves the file to its writer:
		 * vim removes it and puts its backup back). */
		int emptied = last && wanted && psfs_overlay_rewrites_entry(f->node) &&
			      commit_is_blank(f->node->data, f->node->len);
		if (wanted) {
			text = malloc(f->node->len + 1);
			if (text && f->node->len) { /* an emptied entry's data may be NULL */
				memcpy(text, f->node->data, f->node->len);
				len = f->node->len;
			}
			edit_of = f->node->edit_of ? strdup(f->node->edit_of) : NULL;
		}
		overlay_unlock();
		if (wanted && text && !psfs_is_journal(f->path)) {
			struct psfs_path p;
			struct layout_node node;
			const char *target = edit_of ? edit_of : dir;
			res = pending ? psfs_split(dir, &p) : psfs_locate(target, &p, &ref, &node);
			if (!res && pending) {
				ps_err err = store_acquire(fs->store, p.project, p.session, &ref);
				res = err ? -psfs_errno(err) : 0;
			}
			if (!res) {
				if (pending)
					res = commit_branch(&ref, fork_id, label, f->path, text, len);
				else if (edit_of && node.kind == LAYOUT_ENTRY)
					res = commit_edit(&ref, ref.session->generation, node.entry, f->path, text, len);
				else if (edit_of && node.kind == LAYOUT_NAME)
					res = commit_name(&ref, f->path, text, len);
				else if (node.kind == LAYOUT_TREE_DIR)
					res = commit_new(&ref, ref.session->generation, node.branch, f->path, text, len);
				else
					res = 0; /* not a tree directory: stays a side file */
				store_release(fs->store, &ref);
			} else if (res != -EINVAL) {
				journal_reject(f->path, text, len, "the directory it was written in is gone");
			}
			if (res == -EINVAL && emptied) {
				overlay_lock();
				if (!f->node->unlinked)
					overlay_remove(f->node);
				overlay_unlock();
			}
			if (res == 0 && (pending || edit_of || node.kind == LAYOUT_TREE_DIR)) {
				/* It is an entry now: the file gives way to the entry's. */
				overlay_lock();
				if (!f->node->unlinked)
					overlay_remove(f->node);
				if (pending && (parent = overlay_get(dir)) && parent->kind == OVERLAY_BRANCH)
					overlay_remove(parent);
				overlay_unlock();
			}
		}
		free(text);
		free(fork_id);
		free(label);
		free(edit_of);
		free(dir);
		goto out;
	}
	ps_err err = store_acquire(fs->store, f->project, f->session, &ref);
	if (err) {
		journal_reject(f->path, f->data ? f->data : "", f->len, "the session is gone");
		res = -psfs_errno(err);
		goto out;
	}
	switch (f->kind) {
	case HANDLE_EDIT:
		res = commit_edit(&ref, f->generation, f->entry, f->path, f->data ? f->data : "", f->len);
		break;
	case HANDLE_NAME:
		res = commit_name(&ref, f->path, f->data ? f->data : "", f->len);
		break;
	case HANDLE_RAW:
		res = commit_raw(&ref, f->path, f->data ? f->data : "", f->len);
		if (res == 0) {
			/* Appended: later writes on this handle go after it. */
			f->raw_base += f->len;
			f->len = 0;
		} else if (res == -EINVAL) {
			/* Refused lines are kept in rejected/; later lines on this
			 * descriptor start afresh. */
			f->len = 0;
		}
		break;
	default:
		break;
	}
	/* A full disk (nothing was written: a partial write is taken back) may
	 * pass: the next fsync or close tries again instead of reporting
	 * success for text never written.  Other failures are not retried, as
	 * the lines may already be in the file. */
	if (res == -ENOSPC)
		f->dirty = 1;
	store_release(fs->store, &ref);
out:
	pthread_mutex_unlock(&f->lock);
	return res;
}

static int psfs_flush(const char *path, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	int res = psfs_commit(f, 0);
	/* The kernel sized the file by what was written; let it ask again. */
	if (f->kind != HANDLE_READ)
		psfs_watch_queue(path);
	return res;
}

/* An entry file's rewrite that holds nothing but whitespace (yet). */
static int psfs_edit_is_blank(struct psfs_file *f)
{
	int blank = 0;
	if (f->kind == HANDLE_EDIT) {
		pthread_mutex_lock(&f->lock);
		blank = (f->dirty || f->truncated) && commit_is_blank(f->data, f->len);
		pthread_mutex_unlock(&f->lock);
	} else if (f->kind == HANDLE_OVERLAY) {
		overlay_lock();
		blank = psfs_overlay_rewrites_entry(f->node) && commit_is_blank(f->node->data, f->node->len);
		overlay_unlock();
	}
	return blank;
}

static int psfs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	(void)path;
	(void)datasync;
	/* An emptied entry is refused at close(), not here: editors take a
	 * failed fsync for a disk that lost the file (vim: "E667: Fsync
	 * failed", "WARNING: Original file may be lost or damaged"), which it
	 * is not.  Nothing is appended either way; the handle stays as it
	 * is, so the close refuses it (docs/layout.md, "Refusals"). */
	if (psfs_edit_is_blank(f))
		return 0;
	/* fsync asks for durability now: an emptied name is committed too. */
	return psfs_commit(f, 1);
}

static int psfs_release(const char *path, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	(void)path;
	/* Errors here reach no one but the log (and the kept text). */
	psfs_commit(f, 1);
	psfs_file_free(f);
	return 0;
}

/* Where a new name may be made: a tree directory of a session, a pending
 * branch, or labels/.  Returns the kind of directory, or -errno. */
enum psfs_dir { DIR_TREE, DIR_PENDING, DIR_LABELS };

static int psfs_parent_kind(const char *path, enum psfs_dir *kind)
{
	const char *name;
	char *dir = psfs_dirname(path, &name);
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	int res;

	if (!dir)
		return -ENOMEM;
	overlay_lock();
	struct overlay_node *parent = overlay_get(dir);
	int pending = parent && parent->kind == OVERLAY_BRANCH;
	overlay_unlock();
	if (pending) {
		*kind = DIR_PENDING;
		free(dir);
		return 0;
	}
	res = psfs_locate(dir, &p, &ref, &node);
	free(dir);
	if (res)
		return res == -EINVAL ? -EPERM : res;
	if (node.kind == LAYOUT_TREE_DIR && ref.session->have_header)
		*kind = DIR_TREE;
	else if (node.kind == LAYOUT_LABELS_DIR)
		*kind = DIR_LABELS;
	else
		res = -EPERM;
	store_release(psfs_self()->store, &ref);
	return res;
}

static int psfs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	enum psfs_dir kind;
	int res = psfs_parent_kind(path, &kind);
	int found;

	if (res) {
		journal_log("refused creating %s: files can be made only in a session's tree directories", path);
		return res;
	}
	if (kind == DIR_LABELS) {
		journal_log("refused creating %s: labels are symlinks (ln -s ENTRY labels/NAME)", path);
		return -EPERM;
	}
	struct fuse_context *ctx = fuse_get_context();
	overlay_lock();
	struct overlay_node *old = overlay_get(path);
	char *edit_of = old && old->kind == OVERLAY_HIDDEN && old->edit_of ? strdup(old->edit_of) : NULL;
	struct overlay_node *node = overlay_add(path, OVERLAY_FILE, mode & 07777);
	if (node) {
		node->uid = ctx->uid;
		node->gid = ctx->gid;
		node->edit_of = edit_of;
	} else {
		free(edit_of);
	}
	overlay_unlock();
	if (!node)
		return -ENOMEM;
	res = psfs_open_overlay(path, fi, &found);
	return found ? res : -ENOENT;
}

static int psfs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	if (size < 0)
		return -EINVAL;
	if (fi && fi->fh) {
		struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
		int res = 0;
		if (f->kind == HANDLE_OVERLAY) {
			overlay_lock();
			res = overlay_truncate(f->node, size);
			overlay_unlock();
			pthread_mutex_lock(&f->lock);
			f->dirty = 1;
			pthread_mutex_unlock(&f->lock);
			return res;
		}
		if (f->kind == HANDLE_EDIT || f->kind == HANDLE_NAME) {
			pthread_mutex_lock(&f->lock);
			if ((size_t)size > f->len)
				res = psfs_buffer_write(f, "", 0, (size_t)size);
			else
				f->len = (size_t)size;
			f->dirty = 1;
			pthread_mutex_unlock(&f->lock);
			return res;
		}
		if (f->kind == HANDLE_RAW && (uint64_t)size >= f->raw_base)
			return 0;
	}
	overlay_lock();
	struct overlay_node *node = overlay_get(path);
	if (node && node->kind == OVERLAY_FILE) {
		int res = overlay_truncate(node, size);
		overlay_unlock();
		return res;
	}
	overlay_unlock();
	journal_log("refused truncating %s: history is append-only (open it for writing instead)", path);
	return -EPERM;
}

/* Side files editors rename an entry file to while saving it. */
static int psfs_is_backup_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] == '.' || name[0] == '#' || (n && name[n - 1] == '~') ||
	       (n > 4 && (strcmp(name + n - 4, ".bak") == 0 || strcmp(name + n - 4, ".orig") == 0));
}

/* The label a name in labels/ (or after NNNN~) stands for: the name as
 * typed, with %XX read as an escape (docs/layout.md "Escaping").  NULL
 * with *res set when no label has that name (refused and logged, so
 * nothing is appended under a name that would then not resolve). */
static char *psfs_label_of(const char *path, const char *name, int *res)
{
	ps_err err;
	char *label = layout_typed_label(name, &err);
	*res = 0;
	if (!label && err) {
		*res = -psfs_errno(err);
	} else if (!label) {
		journal_reject(path, name, strlen(name),
			       "no label is named so: %XX in a name stands for the byte XX (upper-case hex), "
			       "so a literal % before two such digits is written %25");
		*res = -EINVAL;
	}
	return label;
}

/* Resolves a symlink target to an entry of the session: a path relative to
 * labels/ (../0002-user.x.md), an entry id, or a path inside the mount. */
static uint32_t psfs_label_target(struct ps_session *s, const struct psfs_path *p, const char *target)
{
	struct layout_node node;
	struct psfs *fs = psfs_self();
	const char *rel = NULL;
	char prefix[PATH_MAX * 2];

	if (strncmp(target, "../", 3) == 0)
		rel = target + 3;
	else if (target[0] == '/') {
		snprintf(prefix, sizeof prefix, "%s/%s%s%s/", fs->mountpoint ? fs->mountpoint : "", p->project,
			 p->project[0] ? "/" : "", p->session);
		if (strncmp(target, prefix, strlen(prefix)) == 0)
			rel = target + strlen(prefix);
	} else if (!strchr(target, '/')) {
		uint32_t e = session_find(s, target, strlen(target));
		if (e != PS_NIL)
			return e;
		rel = target; /* an entry file name of the session directory */
	}
	if (rel && layout_resolve(s, rel, &node) == PS_OK && node.kind == LAYOUT_ENTRY)
		return node.entry;
	return PS_NIL;
}

static int psfs_symlink(const char *target, const char *path)
{
	enum psfs_dir kind;
	int res = psfs_parent_kind(path, &kind);
	const char *name;
	char *dir;

	if (res) {
		journal_log("refused symlink %s: only labels/ and tree directories take symlinks", path);
		return res;
	}
	if (kind != DIR_LABELS) {
		/* emacs's lock link .#f and the like: kept in memory only. */
		struct fuse_context *ctx = fuse_get_context();
		overlay_lock();
		struct overlay_node *node = overlay_add(path, OVERLAY_SYMLINK, 0777);
		res = node ? overlay_set_data(node, target, strlen(target)) : -ENOMEM;
		if (node) {
			node->uid = ctx->uid;
			node->gid = ctx->gid;
		}
		overlay_unlock();
		return res;
	}
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	dir = psfs_dirname(path, &name);
	if (!dir)
		return -ENOMEM;
	res = psfs_locate(dir, &p, &ref, &node);
	free(dir);
	if (res)
		return res;
	/* One call, one label: a name that is there already is EEXIST (the
	 * kernel says so too, unless its cache is stale), and the label must
	 * be listed under the name typed, or the lookup after the call fails. */
	char rel[PATH_MAX];
	struct layout_node there;
	snprintf(rel, sizeof rel, "labels/%s", name);
	char *label = NULL;
	uint32_t entry = psfs_label_target(ref.session, &p, target);
	if (layout_resolve(ref.session, rel, &there) == PS_OK)
		res = -EEXIST;
	else if (!(label = psfs_label_of(path, name, &res)))
		;
	else if (entry == PS_NIL) {
		char why[PATH_MAX + 128];
		snprintf(why, sizeof why, "the target %s is not an entry of this session", target);
		journal_reject(path, target, strlen(target), why);
		res = -EINVAL;
	} else {
		res = commit_label(&ref, path, entry, label, PS_NIL);
	}
	free(label);
	store_release(psfs_self()->store, &ref);
	return res;
}

static int psfs_unlink(const char *path)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	int res;

	overlay_lock();
	struct overlay_node *ov = overlay_get(path);
	if (ov && (ov->kind == OVERLAY_FILE || ov->kind == OVERLAY_SYMLINK)) {
		overlay_remove(ov);
		overlay_unlock();
		return 0;
	}
	overlay_unlock();
	if (ov)
		return ov->kind == OVERLAY_HIDDEN ? -ENOENT : -EISDIR;
	if ((res = psfs_locate(path, &p, &ref, &node)))
		return res == -EINVAL ? -EPERM : res;
	if (node.kind == LAYOUT_LABEL) {
		res = commit_label(&ref, path, node.entry, NULL, PS_NIL);
	} else {
		journal_log("refused removing %s: history is append-only", path);
		res = layout_is_dir(node.kind) ? -EISDIR : -EPERM;
	}
	store_release(psfs_self()->store, &ref);
	return res;
}

static int psfs_mkdir(const char *path, mode_t mode)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node dirnode, exists;
	const char *name;
	char *dir = psfs_dirname(path, &name);
	int res;
	uint32_t depth = 0;
	char *end = NULL;

	if (!dir)
		return -ENOMEM;
	res = psfs_locate(dir, &p, &ref, &dirnode);
	free(dir);
	if (res) {
		journal_log("refused mkdir %s: branches are made inside a session (NNNN~name)", path);
		return res == -EINVAL ? -EPERM : res;
	}
	struct ps_session *s = ref.session;
	unsigned long d = strtoul(name, &end, 10);
	if (end - name >= 4 && *end == '~' && end[1] && d >= 1 && d < PS_NIL)
		depth = (uint32_t)d;
	if (dirnode.kind != LAYOUT_TREE_DIR || !depth || !s->have_header) {
		journal_log("refused mkdir %s: a new branch is a directory NNNN~name in a tree directory", path);
		res = -EPERM;
		goto out;
	}
	char rel[PATH_MAX];
	snprintf(rel, sizeof rel, "%s%s%s", p.rest, p.rest[0] ? "/" : "", name);
	if (layout_resolve(s, rel, &exists) == PS_OK) {
		res = -EEXIST;
		goto out;
	}
	/* The fork point: the entry of depth NNNN-1 on this directory's chain. */
	uint32_t fork = PS_NIL;
	if (depth > 1) {
		uint32_t lo = dirnode.session_root ? 0 : s->entries[s->branches[dirnode.branch].first].depth;
		uint32_t hi = lo;
		for (uint32_t e = s->branches[dirnode.branch].first; e != PS_NIL; e = s->entries[e].first_child) {
			hi = s->entries[e].depth;
			if (s->entries[e].depth == depth - 1)
				fork = e;
		}
		/* Out of this directory's range: ERANGE says so, where ENOENT
		 * read as a missing parent directory.  After the directory's
		 * last entry there is no branch to make: what is written there
		 * continues this directory, and a shell that went into NNNN~name
		 * would be left in a directory that is gone. */
		if (fork == PS_NIL || s->entries[fork].first_child == PS_NIL) {
			char range[64] = "no NNNN works here yet";
			if (hi > lo)
				snprintf(range, sizeof range, "NNNN is %04u to %04u here", lo + 1, hi);
			journal_log("refused mkdir %s: %s%u in this directory; a branch NNNN~name starts after the entry "
				    "of depth NNNN-1 and beside the one of depth NNNN, so %s%s",
				    path, fork == PS_NIL ? "no entry of depth " : "nothing follows the entry of depth ",
				    depth - 1, range, fork == PS_NIL ? "" : " (a new file here continues this directory)");
			res = -ERANGE;
			goto out;
		}
	} else if (!dirnode.session_root) {
		journal_log("refused mkdir %s: a new root (0001~name) is made in the session directory", path);
		res = -EPERM;
		goto out;
	} else if (s->n_entries == 0) {
		journal_log("refused mkdir %s: the session has no entry yet, so its first root is the session "
			    "directory itself (a new file there starts it)", path);
		res = -ERANGE;
		goto out;
	}
	char *label = psfs_label_of(path, end + 1, &res);
	if (!label)
		goto out;
	struct fuse_context *ctx = fuse_get_context();
	overlay_lock();
	struct overlay_node *node = overlay_get(path) ? NULL : overlay_add(path, OVERLAY_BRANCH, mode & 07777);
	if (node) {
		node->uid = ctx->uid;
		node->gid = ctx->gid;
		node->label = label;
		node->fork_id = strdup(fork == PS_NIL ? "" : session_str(s, s->entries[fork].id));
		label = NULL;
		res = node->label && node->fork_id ? 0 : -ENOMEM;
	} else {
		res = -EEXIST;
	}
	overlay_unlock();
	free(label);
out:
	store_release(psfs_self()->store, &ref);
	return res;
}

static int psfs_rmdir(const char *path)
{
	overlay_lock();
	struct overlay_node *ov = overlay_get(path);
	int res;
	if (ov && ov->kind == OVERLAY_BRANCH)
		res = overlay_has_children(path) ? -ENOTEMPTY : (overlay_remove(ov), 0);
	else
		res = ov ? -ENOTDIR : 1;
	overlay_unlock();
	if (res <= 0)
		return res;
	struct stat st;
	res = psfs_getattr(path, &st, NULL);
	if (res)
		return res;
	journal_log("refused removing %s: history is append-only", path);
	return S_ISDIR(st.st_mode) ? -EPERM : -ENOTDIR;
}

static int psfs_rename_label(const char *from, const char *to, unsigned int flags)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node src, dst;
	const char *name;
	char *dir = psfs_dirname(to, &name);
	int res;

	if (!dir)
		return -ENOMEM;
	res = psfs_locate(from, &p, &ref, &src);
	if (res) {
		free(dir);
		return res;
	}
	char rel[PATH_MAX];
	snprintf(rel, sizeof rel, "labels/%s", name);
	int exists = layout_resolve(ref.session, rel, &dst) == PS_OK;
	char *label = psfs_label_of(to, name, &res);
	if (!label)
		;
	else if (exists && (flags & RENAME_NOREPLACE))
		res = -EEXIST;
	else
		res = commit_label(&ref, to, src.entry, label, exists ? dst.entry : PS_NIL);
	free(label);
	free(dir);
	store_release(psfs_self()->store, &ref);
	return res;
}

static int psfs_rename(const char *from, const char *to, unsigned int flags)
{
	struct psfs_path pf, pt;
	struct store_ref ref;
	struct layout_node src, dst;
	const char *to_name;
	int res;

	if (flags & RENAME_EXCHANGE)
		return -EINVAL;
	if ((res = psfs_split(from, &pf)) || (res = psfs_split(to, &pt)))
		return res;
	if (pf.depth < 3 || pt.depth < 3 || strcmp(pf.project, pt.project) || strcmp(pf.session, pt.session)) {
		journal_log("refused renaming %s to %s: sessions and projects are the store's files", from, to);
		return -EPERM;
	}
	char *to_dir = psfs_dirname(to, &to_name);
	if (!to_dir)
		return -ENOMEM;

	overlay_lock();
	struct overlay_node *node = overlay_get(from);
	struct overlay_node *target = overlay_get(to);
	overlay_unlock();
	if (node && node->kind == OVERLAY_HIDDEN)
		node = NULL, res = -ENOENT;
	if (node && (node->kind == OVERLAY_FILE || node->kind == OVERLAY_SYMLINK)) {
		/* A side file saved over an entry (sed -i, an editor's
		 * write-then-rename): that is an edit of the entry. */
		int over_entry = 0;
		uint32_t entry = PS_NIL;
		uint64_t gen = 0;
		if (node->kind == OVERLAY_FILE && (!target || target->kind == OVERLAY_HIDDEN) &&
		    psfs_locate(to, &pt, &ref, &dst) == 0) {
			over_entry = dst.kind == LAYOUT_ENTRY;
			entry = dst.entry;
			gen = ref.session->generation;
			if (!over_entry) {
				store_release(psfs_self()->store, &ref);
				journal_log("refused renaming %s over %s: it is generated from the session", from, to);
				free(to_dir);
				return -EPERM;
			}
		}
		if (over_entry) {
			overlay_lock();
			char *text = malloc(node->len + 1);
			size_t len = node->len;
			if (text && len)
				memcpy(text, node->data, len);
			overlay_unlock();
			res = text ? commit_edit(&ref, gen, entry, to, text, len) : -ENOMEM;
			free(text);
			store_release(psfs_self()->store, &ref);
			if (res == 0) {
				overlay_lock();
				if ((node = overlay_get(from)))
					overlay_remove(node);
				if ((target = overlay_get(to)) && target->kind == OVERLAY_HIDDEN)
					overlay_remove(target);
				overlay_unlock();
			}
			free(to_dir);
			return res;
		}
		overlay_lock();
		node = overlay_get(from);
		res = node ? overlay_rename(node, to) : -ENOENT;
		overlay_unlock();
		free(to_dir);
		return res;
	}
	if (node) {
		free(to_dir);
		return node->kind == OVERLAY_BRANCH ? -EPERM : -ENOENT;
	}
	free(to_dir);
	if ((res = psfs_locate(from, &pf, &ref, &src)))
		return res;
	if (src.kind == LAYOUT_LABEL) {
		store_release(psfs_self()->store, &ref);
		return psfs_rename_label(from, to, flags);
	}
	if ((src.kind == LAYOUT_ENTRY || src.kind == LAYOUT_NAME) && psfs_is_backup_name(to_name)) {
		/* vim and emacs move the file aside before writing a new one:
		 * the entry stays in history; its path looks empty until the
		 * new file is written there (an edit) or the backup comes back. */
		char *content = NULL;
		size_t len = 0;
		ps_err err = content_content(ref.session, &src, &content, &len);
		store_release(psfs_self()->store, &ref);
		if (err)
			return -psfs_errno(err);
		struct fuse_context *ctx = fuse_get_context();
		overlay_lock();
		struct overlay_node *copy = overlay_add(to, OVERLAY_FILE, 0644);
		struct overlay_node *hidden = copy ? overlay_add(from, OVERLAY_HIDDEN, 0) : NULL;
		res = copy && hidden && overlay_set_data(copy, content, len) == 0 ? 0 : -ENOMEM;
		if (!res) {
			copy->uid = hidden->uid = ctx->uid;
			copy->gid = hidden->gid = ctx->gid;
			copy->edit_of = strdup(from);
			hidden->edit_of = strdup(from);
		}
		overlay_unlock();
		free(content);
		return res;
	}
	store_release(psfs_self()->store, &ref);
	journal_log("refused renaming %s to %s: history is append-only", from, to);
	return -EPERM;
}

static int psfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	if (fi && fi->fh && ((struct psfs_file *)(uintptr_t)fi->fh)->kind != HANDLE_OVERLAY)
		return 0; /* an editor restoring modes after a save: nothing to keep */
	overlay_lock();
	struct overlay_node *node = overlay_get(path);
	if (fi && fi->fh && !node)
		node = ((struct psfs_file *)(uintptr_t)fi->fh)->node;
	if (node && node->kind != OVERLAY_HIDDEN) {
		node->mode = mode & 07777;
		overlay_unlock();
		return 0;
	}
	overlay_unlock();
	/* Editors restore the mode a file had after saving: no change, no
	 * refusal. */
	struct stat st;
	if (psfs_getattr(path, &st, NULL) == 0 && (st.st_mode & 07777) == (mode & 07777))
		return 0;
	journal_log("refused chmod of %s: modes come from the session file", path);
	return -EPERM;
}

static int psfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	if (fi && fi->fh && ((struct psfs_file *)(uintptr_t)fi->fh)->kind != HANDLE_OVERLAY)
		return 0;
	overlay_lock();
	struct overlay_node *node = overlay_get(path);
	if (fi && fi->fh && !node)
		node = ((struct psfs_file *)(uintptr_t)fi->fh)->node;
	if (node && node->kind != OVERLAY_HIDDEN) {
		if (uid != (uid_t)-1)
			node->uid = uid;
		if (gid != (gid_t)-1)
			node->gid = gid;
		overlay_unlock();
		return 0;
	}
	overlay_unlock();
	struct stat st;
	if (psfs_getattr(path, &st, NULL) == 0 && (uid == (uid_t)-1 || uid == st.st_uid) &&
	    (gid == (gid_t)-1 || gid == st.st_gid))
		return 0;
	journal_log("refused chown of %s: owners come from the session file", path);
	return -EPERM;
}

static int psfs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	overlay_lock();
	struct overlay_node *node = overlay_get(path);
	if (fi && fi->fh && !node)
		node = ((struct psfs_file *)(uintptr_t)fi->fh)->node;
	if (node && node->kind != OVERLAY_HIDDEN && tv) {
		if (tv[1].tv_nsec == UTIME_NOW)
			clock_gettime(CLOCK_REALTIME, &node->mtime);
		else if (tv[1].tv_nsec != UTIME_OMIT)
			node->mtime = tv[1];
	}
	overlay_unlock();
	/* `touch` on an entry changes nothing worth refusing. */
	return 0;
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
	cfg->hard_remove = 1;
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
