#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "catalog.h"
#include "usage.h"
#include "views.h"

#define VIEWS_RECENT 50

const char *const views_names[] = { "by-id", "by-name", "by-cwd", "recent", NULL };

enum views_kind { VIEW_NONE, VIEW_BY_ID, VIEW_BY_NAME, VIEW_BY_CWD, VIEW_RECENT };

static enum views_kind views_kind_of(const char *path, const char **rest)
{
	static const struct { const char *name; enum views_kind kind; } views[] = {
		{ "/by-id", VIEW_BY_ID }, { "/by-name", VIEW_BY_NAME }, { "/by-cwd", VIEW_BY_CWD }, { "/recent", VIEW_RECENT },
	};
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
		size_t n = strlen(views[i].name);
		if (strncmp(path, views[i].name, n) == 0 && (path[n] == '\0' || path[n] == '/')) {
			*rest = path[n] ? path + n + 1 : "";
			return views[i].kind;
		}
	}
	return VIEW_NONE;
}

int views_owns(const char *path)
{
	const char *rest;
	return views_kind_of(path, &rest) != VIEW_NONE;
}

/* Names shown to people keep spaces and Unicode; only what cannot be in a
 * file name (or would be . or ..) is written %XX. */
static char *views_escape(const char *s)
{
	struct buf b = BUF_INIT;
	int all_dots = 1;
	for (const char *p = s; *p; p++)
		all_dots &= *p == '.';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int bad = *p < 0x20 || *p == 0x7f || *p == '/' || *p == '%' || (all_dots && *p == '.');
		if (bad ? buf_printf(&b, "%%%02X", *p) : buf_putc(&b, (char)*p)) {
			buf_free(&b);
			return NULL;
		}
	}
	if (buf_finish(&b)) {
		buf_free(&b);
		return NULL;
	}
	if (b.len > 200) {
		/* Long names are cut; the session stays reachable by id. */
		b.data[200] = '\0';
	}
	return b.data;
}

/* One listed symlink of a view. */
struct views_link {
	char *name;
	const struct catalog_session *session;
};

struct views_list {
	struct catalog_session *items;
	size_t n_items;
	struct views_link *links;
	size_t n;
};

static void views_list_free(struct views_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->links[i].name);
	free(l->links);
	catalog_snapshot_free(l->items, l->n_items);
}

static int views_taken(const struct views_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->links[i].name, name) == 0)
			return 1;
	return 0;
}

static int views_add(struct views_list *l, char *name, const struct catalog_session *c)
{
	if (!name)
		return -ENOMEM;
	l->links[l->n].name = name;
	l->links[l->n].session = c;
	l->n++;
	return 0;
}

/* Oldest first, so that a name keeps belonging to the session that had it
 * first when another session later takes the same name. */
static int views_oldest_first(const void *a, const void *b)
{
	const struct catalog_session *x = *(const struct catalog_session *const *)a;
	const struct catalog_session *y = *(const struct catalog_session *const *)b;
	int c = strcmp(x->stem, y->stem);
	return c ? c : strcmp(x->project, y->project);
}

/* The symlinks of by-id/, by-name/ or recent/. */
static int views_build(struct psfs *fs, enum views_kind kind, struct views_list *l)
{
	memset(l, 0, sizeof *l);
	ps_err err = catalog_snapshot(fs->catalog, &l->items, &l->n_items);
	if (err)
		return -psfs_errno(err);
	l->links = calloc(l->n_items ? l->n_items : 1, sizeof *l->links);
	const struct catalog_session **order = calloc(l->n_items ? l->n_items : 1, sizeof *order);
	int res = l->links && order ? 0 : -ENOMEM;
	for (size_t i = 0; !res && i < l->n_items; i++)
		order[i] = &l->items[i];
	if (!res && kind != VIEW_RECENT)
		qsort(order, l->n_items, sizeof *order, views_oldest_first);
	for (size_t i = 0; !res && i < l->n_items; i++) {
		const struct catalog_session *c = order[i];
		char *name = NULL, *base;
		if (kind == VIEW_RECENT) {
			if (i >= VIEWS_RECENT)
				break;
			if (asprintf(&name, "%02zu-%s", i + 1, c->stem) < 0)
				name = NULL;
			res = views_add(l, name, c);
			continue;
		}
		const char *key = kind == VIEW_BY_ID ? c->id : c->name;
		if (!*key)
			continue;
		if (!(base = views_escape(key))) {
			res = -ENOMEM;
			break;
		}
		if (views_taken(l, base)) {
			/* A stable suffix: the session's own id, then its file. */
			if (asprintf(&name, "%s~%.8s", base, kind == VIEW_BY_ID ? c->stem : c->id) < 0 || views_taken(l, name)) {
				free(name);
				if (asprintf(&name, "%s~%s", base, c->stem) < 0)
					name = NULL;
			}
			free(base);
		} else {
			name = base;
		}
		res = views_add(l, name, c);
	}
	free(order);
	if (res)
		views_list_free(l);
	return res;
}

static const struct catalog_session *views_find(const struct views_list *l, const char *name, int prefix)
{
	const struct catalog_session *found = NULL;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->links[i].name, name) == 0)
			return l->links[i].session;
	if (!prefix || strlen(name) < 4)
		return NULL;
	/* A unique prefix of an id resolves, as git resolves short hashes. */
	for (size_t i = 0; i < l->n; i++) {
		if (strncmp(l->links[i].session->id, name, strlen(name)) == 0) {
			if (found && found != l->links[i].session)
				return NULL;
			found = l->links[i].session;
		}
	}
	return found;
}

/* by-cwd shows a cwd's components as names: each escaped like by-name
 * (so "." , ".." and control characters cannot be names), empty ones
 * dropped.  Returns a new "home/u/proj" (no leading slash), or NULL. */
static char *views_cwd_key(const char *cwd)
{
	struct buf b = BUF_INIT;
	int bad = 0;
	while (*cwd && !bad) {
		size_t n = strcspn(cwd, "/");
		if (n) {
			char *part = strndup(cwd, n);
			char *esc = part ? views_escape(part) : NULL;
			bad = !esc || (b.len && buf_putc(&b, '/')) || buf_puts(&b, esc);
			free(part);
			free(esc);
		}
		cwd += n;
		while (*cwd == '/')
			cwd++;
	}
	if (bad || buf_finish(&b)) {
		buf_free(&b);
		return NULL;
	}
	return b.data ? b.data : strdup("");
}

/* Replaces each session's cwd in a snapshot by its by-cwd key. */
static int views_cwd_keys(struct catalog_session *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *key = views_cwd_key(items[i].cwd);
		if (!key)
			return -ENOMEM;
		free(items[i].cwd);
		items[i].cwd = key;
	}
	return 0;
}

/* by-cwd: is dir (a path like "home/u/proj", "" for by-cwd itself) a
 * prefix of the session's cwd, component by component? */
static int views_cwd_under(const char *cwd, const char *dir)
{
	while (*cwd == '/')
		cwd++;
	size_t n = strlen(dir);
	if (!n)
		return *cwd != '\0';
	return strncmp(cwd, dir, n) == 0 && (cwd[n] == '\0' || cwd[n] == '/');
}

static int views_cwd_is(const char *cwd, const char *dir)
{
	while (*cwd == '/')
		cwd++;
	size_t n = strlen(cwd);
	while (n && cwd[n - 1] == '/')
		n--;
	return strlen(dir) == n && strncmp(cwd, dir, n) == 0;
}

static int views_depth(const char *dir)
{
	int d = *dir ? 1 : 0;
	for (const char *p = dir; *p; p++)
		d += *p == '/';
	return d;
}

static void views_stat_dir(struct psfs *fs, struct stat *st)
{
	memset(st, 0, sizeof *st);
	if (stat(fs->cfg.store, st) != 0)
		memset(st, 0, sizeof *st);
	st->st_mode = S_IFDIR | 0555;
	st->st_nlink = 2;
	st->st_size = 0;
}

static void views_stat_link(struct psfs *fs, size_t target_len, struct stat *st)
{
	views_stat_dir(fs, st);
	st->st_mode = S_IFLNK | 0777;
	st->st_nlink = 1;
	st->st_size = (off_t)target_len;
}

/* The target of a link `depth` directories below the mount root. */
static char *views_target(const struct catalog_session *c, int depth)
{
	struct buf b = BUF_INIT;
	int bad = 0;
	for (int i = 0; i < depth && !bad; i++)
		bad = buf_puts(&b, "../");
	/* A session at the store root is a directory at the mount root. */
	bad = bad || buf_printf(&b, "%s%s%s", c->project, *c->project ? "/" : "", c->stem) || buf_finish(&b);
	if (bad) {
		buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* Resolves a path inside a view: a directory (*target NULL) or a link. */
static int views_resolve(struct psfs *fs, const char *path, char **target)
{
	const char *rest;
	enum views_kind kind = views_kind_of(path, &rest);
	int res = 0;
	*target = NULL;
	if (!*rest)
		return 0;
	if (kind != VIEW_BY_CWD) {
		struct views_list l;
		if (strchr(rest, '/'))
			return -ENOENT;
		if ((res = views_build(fs, kind, &l)))
			return res;
		const struct catalog_session *c = views_find(&l, rest, kind == VIEW_BY_ID);
		if (c)
			*target = views_target(c, 1);
		res = c ? (*target ? 0 : -ENOMEM) : -ENOENT;
		views_list_free(&l);
		return res;
	}
	struct catalog_session *items;
	size_t n;
	ps_err err = catalog_snapshot(fs->catalog, &items, &n);
	if (err)
		return -psfs_errno(err);
	if (views_cwd_keys(items, n)) {
		catalog_snapshot_free(items, n);
		return -ENOMEM;
	}
	res = -ENOENT;
	for (size_t i = 0; i < n && res; i++)
		if (views_cwd_under(items[i].cwd, rest))
			res = 0; /* a directory on the way to some cwd */
	if (res) {
		/* A session link: DIR/<stem> where DIR is its cwd. */
		const char *slash = strrchr(rest, '/');
		char *dir = slash ? strndup(rest, (size_t)(slash - rest)) : strdup("");
		const char *stem = slash ? slash + 1 : rest;
		for (size_t i = 0; dir && i < n && res; i++) {
			if (strcmp(items[i].stem, stem) == 0 && views_cwd_is(items[i].cwd, dir)) {
				*target = views_target(&items[i], views_depth(dir) + 1);
				res = *target ? 0 : -ENOMEM;
			}
		}
		free(dir);
	}
	catalog_snapshot_free(items, n);
	return res;
}

int views_getattr(struct psfs *fs, const char *path, struct stat *st)
{
	char *target;
	int res = views_resolve(fs, path, &target);
	if (res)
		return res;
	if (target)
		views_stat_link(fs, strlen(target), st);
	else
		views_stat_dir(fs, st);
	free(target);
	return 0;
}

int views_readlink(struct psfs *fs, const char *path, char *buf, size_t size)
{
	char *target;
	int res = views_resolve(fs, path, &target);
	if (res)
		return res;
	if (!target)
		return -EINVAL;
	snprintf(buf, size, "%s", target);
	free(target);
	return 0;
}

int views_readdir(struct psfs *fs, const char *path, void *buf, fuse_fill_dir_t filler)
{
	const char *rest;
	enum views_kind kind = views_kind_of(path, &rest);
	char *target;
	int res = views_resolve(fs, path, &target);
	if (res)
		return res;
	if (target) {
		free(target);
		return -ENOTDIR;
	}
	/* "." and ".." come from the caller. */
	if (kind != VIEW_BY_CWD) {
		struct views_list l;
		if ((res = views_build(fs, kind, &l)))
			return res;
		for (size_t i = 0; i < l.n; i++) {
			struct stat st = { .st_mode = S_IFLNK };
			filler(buf, l.links[i].name, &st, 0, 0);
		}
		views_list_free(&l);
		return 0;
	}
	struct catalog_session *items;
	size_t n;
	ps_err err = catalog_snapshot(fs->catalog, &items, &n);
	if (err)
		return -psfs_errno(err);
	if (views_cwd_keys(items, n)) {
		catalog_snapshot_free(items, n);
		return -ENOMEM;
	}
	struct buf seen = BUF_INIT; /* child names already listed, NUL-separated */
	for (size_t i = 0; i < n; i++) {
		const char *cwd = items[i].cwd;
		while (*cwd == '/')
			cwd++;
		if (views_cwd_is(items[i].cwd, rest)) {
			struct stat st = { .st_mode = S_IFLNK };
			filler(buf, items[i].stem, &st, 0, 0);
		} else if (views_cwd_under(items[i].cwd, rest)) {
			const char *child = cwd + strlen(rest) + (*rest ? 1 : 0);
			size_t len = strcspn(child, "/");
			char name[NAME_MAX + 1];
			if (!len || len > NAME_MAX)
				continue;
			memcpy(name, child, len);
			name[len] = '\0';
			int dup = 0;
			for (size_t off = 0; off < seen.len && !dup; off += strlen(seen.data + off) + 1)
				dup = strcmp(seen.data + off, name) == 0;
			if (dup)
				continue;
			buf_put(&seen, name, len + 1);
			struct stat st = { .st_mode = S_IFDIR };
			filler(buf, name, &st, 0, 0);
		}
	}
	buf_free(&seen);
	catalog_snapshot_free(items, n);
	return 0;
}

struct views_csv {
	struct psfs *fs;
	const char *project;
	struct buf *out;
	ps_err err;
};

static int views_csv_session(void *ctx, const char *name, const struct stat *st)
{
	struct views_csv *c = ctx;
	struct store_ref ref;
	(void)st;
	if (store_acquire(c->fs->store, c->project, name, &ref) != PS_OK)
		return 0; /* gone meanwhile */
	if (ref.session->have_header)
		c->err = usage_csv_row(ref.session, c->project, name, c->out);
	store_release(c->fs->store, &ref);
	return c->err != PS_OK;
}

static int views_csv_project(void *ctx, const char *name, const struct stat *st)
{
	struct views_csv *c = ctx;
	(void)st;
	c->project = name;
	store_list_sessions(c->fs->store, name, views_csv_session, c);
	return c->err != PS_OK;
}

int views_usage_csv(struct psfs *fs, const char *project, char **buf, size_t *len)
{
	struct buf out = BUF_INIT;
	struct views_csv c = { fs, project, &out, PS_OK };
	ps_err err;
	if (usage_csv_header(&out)) {
		buf_free(&out);
		return -ENOMEM;
	}
	if (project)
		err = store_list_sessions(fs->store, project, views_csv_session, &c);
	else
		err = store_list_projects(fs->store, views_csv_project, &c);
	if (!err)
		err = c.err;
	/* The whole store's file covers the sessions at its root too (their
	 * project column is empty). */
	if (!err && !project) {
		c.project = "";
		err = store_list_sessions(fs->store, "", views_csv_session, &c);
		if (!err)
			err = c.err;
	}
	if (err || buf_finish(&out)) {
		buf_free(&out);
		return -psfs_errno(err ? err : PS_ERR_NOMEM);
	}
	*buf = out.data;
	*len = out.len;
	return 0;
}
