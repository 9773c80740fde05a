#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "caller.h"
#include "usagecsv.h"
#include "views.h"

/* One per usage.csv recently stat'ed: the store's and a few projects'. */
#define USAGECSV_SLOTS 16

struct usagecsv_memo {
	int used;           /* slot in use */
	int whole_store;    /* the store's usage.csv, else project's */
	char *project;
	struct buf listing; /* what the length was built from */
	size_t len;
	uint64_t last_use;  /* the least recently used slot goes first */
};

static struct {
	pthread_mutex_t lock;
	struct usagecsv_memo slot[USAGECSV_SLOTS];
	uint64_t clock;
} memo = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* What a session contributes to the listing: its place and what tells
 * that it changed (session_refresh looks at the same). */
struct usagecsv_stamp {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

struct usagecsv_walk {
	struct psfs *fs;
	const char *project;
	struct buf *out;
	int failed;
	struct psfs_caller who; /* as views_usage_csv, only the sessions it may read */
};

static int usagecsv_put_session(void *ctx, const char *name, const struct stat *st)
{
	struct usagecsv_walk *w = ctx;
	if (!psfs_caller_may_read(&w->who, st->st_uid, st->st_gid, st->st_mode))
		return 0;
	struct usagecsv_stamp stamp = {
		(uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
		(int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		(int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
	};
	/* Names end in NUL, so no two listings run together alike. */
	if (buf_put(w->out, w->project, strlen(w->project) + 1) || buf_put(w->out, name, strlen(name) + 1) ||
	    buf_put(w->out, &stamp, sizeof stamp))
		w->failed = 1;
	return w->failed;
}

static int usagecsv_put_project(void *ctx, const char *name, const struct stat *st)
{
	struct usagecsv_walk *w = ctx;
	(void)st;
	w->project = name;
	if (store_list_sessions(w->fs->store, name, usagecsv_put_session, w) != PS_OK)
		w->failed = 1;
	return w->failed;
}

/* The listing of the sessions project's usage.csv covers (the whole
 * store's when project is NULL, its root's own sessions included, as
 * views_usage_csv covers them).  0, or -1 (gone, out of memory). */
static int usagecsv_listing(struct psfs *fs, const char *project, struct buf *out)
{
	struct usagecsv_walk w = { fs, project, out, 0, { 0 } };
	ps_err err;
	psfs_caller_get(&w.who);
	if (project) {
		err = store_list_sessions(fs->store, project, usagecsv_put_session, &w);
	} else {
		err = store_list_projects(fs->store, usagecsv_put_project, &w);
		if (!err && !w.failed) {
			w.project = "";
			err = store_list_sessions(fs->store, "", usagecsv_put_session, &w);
		}
	}
	return err || w.failed ? -1 : 0;
}

static int usagecsv_same_key(const struct usagecsv_memo *m, const char *project)
{
	return m->used && (project ? !m->whole_store && strcmp(m->project, project) == 0 : m->whole_store);
}

static int usagecsv_lookup(const char *project, const struct buf *listing, size_t *len)
{
	int found = 0;
	pthread_mutex_lock(&memo.lock);
	for (size_t i = 0; i < USAGECSV_SLOTS && !found; i++) {
		struct usagecsv_memo *m = &memo.slot[i];
		if (usagecsv_same_key(m, project) && m->listing.len == listing->len &&
		    (!listing->len || memcmp(m->listing.data, listing->data, listing->len) == 0)) {
			*len = m->len;
			m->last_use = ++memo.clock;
			found = 1;
		}
	}
	pthread_mutex_unlock(&memo.lock);
	return found;
}

static void usagecsv_slot_free(struct usagecsv_memo *m)
{
	free(m->project);
	buf_free(&m->listing);
	memset(m, 0, sizeof *m);
}

/* Keeps len for the listing (taken: *listing is emptied). */
static void usagecsv_remember(const char *project, struct buf *listing, size_t len)
{
	char *key = project ? strdup(project) : NULL;
	if (project && !key)
		return;
	pthread_mutex_lock(&memo.lock);
	struct usagecsv_memo *m = NULL;
	for (size_t i = 0; i < USAGECSV_SLOTS && !m; i++)
		if (usagecsv_same_key(&memo.slot[i], project))
			m = &memo.slot[i];
	for (size_t i = 0; i < USAGECSV_SLOTS && !m; i++)
		if (!memo.slot[i].used)
			m = &memo.slot[i];
	if (!m) {
		m = &memo.slot[0];
		for (size_t i = 1; i < USAGECSV_SLOTS; i++)
			if (memo.slot[i].last_use < m->last_use)
				m = &memo.slot[i];
	}
	usagecsv_slot_free(m);
	m->used = 1;
	m->whole_store = !project;
	m->project = key;
	m->listing = *listing;
	m->len = len;
	m->last_use = ++memo.clock;
	pthread_mutex_unlock(&memo.lock);
	*listing = (struct buf)BUF_INIT;
}

int usagecsv_size(struct psfs *fs, const char *project, size_t *len)
{
	struct buf before = BUF_INIT, after = BUF_INIT;
	char *csv = NULL;
	int listed = usagecsv_listing(fs, project, &before) == 0, res = 0;

	if (listed && usagecsv_lookup(project, &before, len))
		goto out;
	res = views_usage_csv(fs, project, &csv, len);
	/* Kept only when nothing changed while it was built: then the length
	 * is that of the sessions as listed. */
	if (!res && listed && usagecsv_listing(fs, project, &after) == 0 && after.len == before.len &&
	    (!before.len || memcmp(after.data, before.data, before.len) == 0))
		usagecsv_remember(project, &before, *len);
out:
	free(csv);
	buf_free(&before);
	buf_free(&after);
	return res;
}

void usagecsv_clear(void)
{
	pthread_mutex_lock(&memo.lock);
	for (size_t i = 0; i < USAGECSV_SLOTS; i++)
		usagecsv_slot_free(&memo.slot[i]);
	pthread_mutex_unlock(&memo.lock);
}

int usagecsv_owns(const struct psfs_path *p)
{
	return (p->depth == 1 && strcmp(p->project, VIEWS_USAGE_CSV) == 0) ||
	       (p->depth == 2 && strcmp(p->session, VIEWS_USAGE_CSV) == 0);
}

int usagecsv_getattr(struct psfs *fs, const struct psfs_path *p, const struct stat *root, struct stat *st)
{
	struct stat like = *root;
	size_t len;
	ps_err err;
	int res;

	if (p->depth == 2 && (err = store_stat_project(fs->store, p->project, &like)))
		return -psfs_errno(err);
	res = usagecsv_size(fs, p->depth == 2 ? p->project : NULL, &len);
	if (res)
		return res;
	memset(st, 0, sizeof *st);
	st->st_mode = S_IFREG | 0444;
	st->st_nlink = 1;
	st->st_uid = like.st_uid;
	st->st_gid = like.st_gid;
	st->st_atim = like.st_atim;
	st->st_mtim = like.st_mtim;
	st->st_ctim = like.st_ctim;
	st->st_size = (off_t)len;
	return 0;
}

void usagecsv_readdir(const struct psfs_path *dir, void *buf, fuse_fill_dir_t filler)
{
	if (dir->depth == 0 || dir->depth == 1)
		filler(buf, VIEWS_USAGE_CSV, NULL, 0, 0);
}

int usagecsv_open(struct psfs *fs, const struct psfs_path *p, int flags, char **data, size_t *len)
{
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	return views_usage_csv(fs, p->depth == 2 ? p->project : NULL, data, len);
}
