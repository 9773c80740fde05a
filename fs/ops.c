/* The FUSE operations: path-based (libfuse's high-level API), read-only for
 * now.  Every handler splits the path into project / session / the rest,
 * acquires the session from the store, and asks the core what the rest
 * names. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "pisessionfs.h"
#include "layout.h"
#include "view.h"

struct psfs_path {
	char project[NAME_MAX + 1];
	char session[NAME_MAX + 1];
	const char *rest;   /* inside the session directory, "" for itself */
	int depth;          /* 0 root, 1 project, 2 session, 3 inside */
};

/* An open file: a snapshot of its content taken at open, so a reader sees
 * one consistent version even if the session grows meanwhile.  The raw
 * session.jsonl is read in place instead (fd). */
struct psfs_file {
	char *data;
	size_t len;
	int fd;
};

static struct psfs *psfs_self(void)
{
	return fuse_get_context()->private_data;
}

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

static void psfs_dir_stat(struct stat *st, const struct stat *like)
{
	memset(st, 0, sizeof *st);
	st->st_mode = S_IFDIR | 0555;
	st->st_nlink = 2;
	if (like) {
		st->st_uid = like->st_uid;
		st->st_gid = like->st_gid;
		st->st_atim = like->st_atim;
		st->st_mtim = like->st_mtim;
		st->st_ctim = like->st_ctim;
	}
}

/* Attributes of a node inside a session; the session file's owner and times
 * stand for the generated files, so permissions and `ls -lt` make sense. */
static int psfs_node_stat(struct ps_session *s, const struct layout_node *node, const struct stat *file,
			  struct stat *st)
{
	uint64_t size = 0;
	psfs_dir_stat(st, file);
	if (layout_is_dir(node->kind))
		return 0;
	ps_err err = view_size(s, node, &size);
	if (err)
		return -psfs_errno(err);
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
	else
		st->st_mode = S_IFREG | (file->st_mode & 0444);
	return 0;
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

	(void)fi;
	if ((res = psfs_split(path, &p)))
		return res;
	switch (p.depth) {
	case 0:
		if (fstatat(AT_FDCWD, store_root(fs->store), &file, 0) != 0)
			return -errno;
		psfs_dir_stat(st, &file);
		return 0;
	case 1:
		err = store_stat_project(fs->store, p.project, &file);
		if (err)
			return -psfs_errno(err);
		psfs_dir_stat(st, &file);
		return 0;
	case 2:
		/* No indexing: `ls -l` of a project with thousands of
		 * sessions must not parse them. */
		err = store_stat_session(fs->store, p.project, p.session, &file);
		if (err)
			return -psfs_errno(err);
		psfs_dir_stat(st, &file);
		st->st_mode = S_IFDIR | (file.st_mode & 0444) | ((file.st_mode & 0444) >> 2);
		return 0;
	}
	err = store_stat_session(fs->store, p.project, p.session, &file);
	if (!err)
		err = store_acquire(fs->store, p.project, p.session, &ref);
	if (err)
		return -psfs_errno(err);
	err = layout_resolve(ref.session, p.rest, &node);
	res = err ? -psfs_errno(err) : psfs_node_stat(ref.session, &node, &file, st);
	store_release(fs->store, &ref);
	return res;
}

struct psfs_fill {
	void *buf;
	fuse_fill_dir_t filler;
};

static int psfs_fill_store(void *ctx, const char *name, const struct stat *st)
{
	struct psfs_fill *f = ctx;
	(void)st;
	return f->filler(f->buf, name, NULL, 0, 0);
}

static int psfs_fill_layout(void *ctx, const char *name, const struct layout_node *node)
{
	struct psfs_fill *f = ctx;
	struct stat st = { 0 };
	st.st_mode = layout_is_dir(node->kind) ? S_IFDIR
		: (node->kind == LAYOUT_LEAF || node->kind == LAYOUT_LABEL) ? S_IFLNK : S_IFREG;
	return f->filler(f->buf, name, &st, 0, 0);
}

static int psfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
			struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct psfs *fs = psfs_self();
	struct psfs_fill f = { buf, filler };
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	ps_err err;
	int res;

	(void)offset;
	(void)fi;
	(void)flags;
	if ((res = psfs_split(path, &p)))
		return res;
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	if (p.depth == 0)
		return -psfs_errno(store_list_projects(fs->store, psfs_fill_store, &f));
	if (p.depth == 1)
		return -psfs_errno(store_list_sessions(fs->store, p.project, psfs_fill_store, &f));
	err = store_acquire(fs->store, p.project, p.session, &ref);
	if (err)
		return -psfs_errno(err);
	err = layout_resolve(ref.session, p.rest, &node);
	if (!err)
		err = layout_is_dir(node.kind) ? layout_list(ref.session, &node, psfs_fill_layout, &f) : PS_ERR_NOTDIR;
	store_release(fs->store, &ref);
	return -psfs_errno(err);
}

static int psfs_readlink(const char *path, char *buf, size_t size)
{
	struct psfs *fs = psfs_self();
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	ps_err err;
	int res;

	if ((res = psfs_split(path, &p)))
		return res;
	if (p.depth < 3)
		return -EINVAL;
	err = store_acquire(fs->store, p.project, p.session, &ref);
	if (err)
		return -psfs_errno(err);
	err = layout_resolve(ref.session, p.rest, &node);
	res = -psfs_errno(err);
	if (!err && node.kind != LAYOUT_LEAF && node.kind != LAYOUT_LABEL)
		res = -EINVAL;
	else if (!err) {
		char *target = layout_symlink_target(ref.session, &node);
		if (!target) {
			res = -ENOMEM;
		} else {
			strncpy(buf, target, size);
			if (size)
				buf[size - 1] = '\0';
			free(target);
			res = 0;
		}
	}
	store_release(fs->store, &ref);
	return res;
}

static int psfs_open(const char *path, struct fuse_file_info *fi)
{
	struct psfs *fs = psfs_self();
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	struct psfs_file *file = NULL;
	ps_err err;
	int res;

	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
		return -EROFS;
	if ((res = psfs_split(path, &p)))
		return res;
	if (p.depth < 3)
		return -EISDIR;
	file = calloc(1, sizeof *file);
	if (!file)
		return -ENOMEM;
	file->fd = -1;
	err = store_acquire(fs->store, p.project, p.session, &ref);
	if (err) {
		free(file);
		return -psfs_errno(err);
	}
	err = layout_resolve(ref.session, p.rest, &node);
	if (!err && layout_is_dir(node.kind))
		err = PS_ERR_ISDIR;
	if (!err && node.kind == LAYOUT_RAW) {
		file->fd = open(ref.session->path, O_RDONLY | O_CLOEXEC);
		if (file->fd < 0)
			err = PS_ERR_IO;
	} else if (!err) {
		err = view_content(ref.session, &node, &file->data, &file->len);
	}
	if (!err) {
		/* Entry files and stored lines never change: let the kernel
		 * keep their pages.  Everything else is fetched anew at open. */
		fi->keep_cache = view_immutable(&node);
		if (node.kind == LAYOUT_RAW)
			fi->direct_io = 1; /* grows under the reader: no stale size */
	}
	store_release(fs->store, &ref);
	if (err) {
		free(file->data);
		free(file);
		return -psfs_errno(err);
	}
	fi->fh = (uint64_t)(uintptr_t)file;
	return 0;
}

static int psfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct psfs_file *file = (struct psfs_file *)(uintptr_t)fi->fh;
	(void)path;
	if (file->fd >= 0) {
		ssize_t got = pread(file->fd, buf, size, off);
		return got < 0 ? -errno : (int)got;
	}
	if (off < 0 || (size_t)off >= file->len)
		return 0;
	if (size > file->len - (size_t)off)
		size = file->len - (size_t)off;
	memcpy(buf, file->data + off, size);
	return (int)size;
}

static int psfs_release(const char *path, struct fuse_file_info *fi)
{
	struct psfs_file *file = (struct psfs_file *)(uintptr_t)fi->fh;
	(void)path;
	if (file->fd >= 0)
		close(file->fd);
	free(file->data);
	free(file);
	return 0;
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
	(void)conn;
	cfg->entry_timeout = fs->cfg.timeout;
	cfg->attr_timeout = fs->cfg.timeout;
	cfg->negative_timeout = 0;
	/* Paths, not inode numbers, identify nodes here; let libfuse keep
	 * the path for every inode so invalidation by path works. */
	cfg->nullpath_ok = 0;
	return fs;
}

const struct fuse_operations psfs_ops = {
	.init = psfs_init,
	.getattr = psfs_getattr,
	.readdir = psfs_readdir,
	.readlink = psfs_readlink,
	.open = psfs_open,
	.read = psfs_read,
	.release = psfs_release,
	.statfs = psfs_statfs,
};
