/* The FUSE operations (libfuse's high-level, path-based API): the table,
 * init, routing and stat.  Every handler splits the path into project /
 * session / the rest, acquires the session from the store and asks the
 * core what the rest names.  In-memory side files (overlay.c) are looked
 * up first; what a write means is decided in commit.c.  The handlers
 * live by job in dir.c, file.c and namespace.c (ops_internal.h). */
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
#include "catalog.h"
#include "commit.h"
#include "escape.h"
#include "journal.h"
#include "layout.h"
#include "overlay.h"
#include "ops_internal.h"
#include "caller.h"
#include "pisessionfs.h"
#include "sizer.h"
#include "watch.h"
#include "content.h"
#include "searchdir.h"
#include "overview.h"
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
	if (strcmp(name, JOURNAL_NAME) == 0 || overview_is_name(name) || strcmp(name, SEARCH_NAME) == 0)
		return 0;
	return store_stat_project(psfs_self()->store, name, &st) != PS_OK;
}

static int psfs_flat_any(void *ctx, const char *name, const struct stat *st)
{
	(void)name, (void)st;
	*(int *)ctx = 1;
	return 1;
}

int psfs_store_is_flat(void)
{
	int sessions = 0, projects = 0;
	store_list_session_names(psfs_self()->store, "", psfs_flat_any, &sessions);
	if (!sessions)
		store_list_project_names(psfs_self()->store, psfs_flat_any, &projects);
	return sessions || !projects;
}

static int psfs_is_root_session(const char *name)
{
	struct stat st;
	return psfs_root_name_free(name) && store_stat_session(psfs_self()->store, "", name, &st) == PS_OK;
}

/* The end of psfs_split once the session is named: p follows its name. */
static void psfs_split_rest(const char *p, struct psfs_path *out)
{
	out->depth = 2;
	while (*p == '/')
		p++;
	if (*p) {
		out->rest = p;
		out->depth = 3;
	}
}

/* A session's typed name (catalog_name_to_stem said named, stem): the
 * directory itself for a session started with mkdir; a symlink to it for
 * a fork (ln -s ENTRY PROJECT/NAME made a symlink, and the name stays
 * one: docs/layout.md "Forking a session"), unless the path goes on
 * inside it. */
static void psfs_split_named(struct psfs_path *out, int named, const char *stem)
{
	if (named == 2 && out->depth == 2)
		memcpy(out->link_to, stem, sizeof out->link_to);
	else if (named)
		memcpy(out->session, stem, sizeof out->session);
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
	char stem[NAME_MAX + 1];
	int named = 0;
	if (psfs_is_root_session(out->project) ||
	    /* A flat store's session started with `mkdir NAME`, by NAME. */
	    (psfs_root_name_free(out->project) &&
	     (named = catalog_name_to_stem(psfs_self()->catalog, "", out->project, stem)))) {
		memcpy(out->session, out->project, sizeof out->session);
		out->project[0] = '\0';
		psfs_split_rest(p, out);
		psfs_split_named(out, named, stem);
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
	psfs_split_rest(p + n, out);
	/* A session started with `mkdir PROJECT/NAME` answers to NAME too. */
	if (!overview_is_name(out->session) && strcmp(out->session, SEARCH_NAME) != 0)
		psfs_split_named(out, catalog_name_to_stem(psfs_self()->catalog, out->project, out->session, stem),
				 stem);
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

/* A fork's typed name: a symlink to its session directory, shown to
 * whoever may read the session file (the name comes from its content). */
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
		if (!journal_owns(path) && p.depth != 0)
			return -errno;
		memset(&file, 0, sizeof file);
		file.st_uid = getuid();
		file.st_gid = getgid();
	}
	if (journal_owns(path))
		return journal_getattr(path, &file, st);
	if (overview_owns(&p))
		return overview_getattr(fs, &p, &file, st);
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
			psfs_sizer_hint(p.project, p.session, ref.session, node.entry + 1);
	}
	res = err ? -psfs_errno(err) : psfs_node_stat(ref.session, &node, &file, st);
	store_release(fs->store, &ref);
	return res;
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
	if (!psfs_split(path, &p) && search_owns(path, &p))
		return search_readlink(psfs_self(), path, &p, buf, size);
	overlay_lock();
	struct overlay_node *ov = overlay_get(path);
	if (ov && ov->kind == OVERLAY_SYMLINK) {
		snprintf(buf, size, "%s", ov->link ? ov->link : "");
		overlay_unlock();
		return 0;
	}
	overlay_unlock();
	if (!psfs_split(path, &p) && p.depth == 2 && p.link_to[0]) {
		struct stat st;
		if ((res = psfs_fork_name_stat(psfs_self(), &p, &st)))
			return res;
		snprintf(buf, size, "%s", p.link_to);
		return 0;
	}
	if ((res = psfs_locate(path, &p, &ref, &node)))
		return res;
	if (layout_is_symlink(node.kind)) {
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
