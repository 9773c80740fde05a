#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "caller.h"
#include "filememo.h"
#include "infocache.h"
#include "overview.h"
#include "sessionsmd.h"
#include "title.h"
#include "usage.h"
#include "usagedays.h"

static const char *const overview_names[] = {
	OVERVIEW_USAGE_CSV, OVERVIEW_SESSIONS_MD, OVERVIEW_USAGE_DAILY, OVERVIEW_USAGE_MONTHLY,
	OVERVIEW_USAGE_DAILY_MODELS, OVERVIEW_USAGE_SVG,
};
enum overview_file { OVERVIEW_CSV, OVERVIEW_MD, OVERVIEW_DAILY, OVERVIEW_MONTHLY, OVERVIEW_DAILY_MODELS, OVERVIEW_SVG };
#define OVERVIEW_N_FILES (sizeof overview_names / sizeof overview_names[0])

const char *overview_file_name(size_t i)
{
	return i < OVERVIEW_N_FILES ? overview_names[i] : NULL;
}

/* --- the sessions a folder's overview covers ----------------------------------- */

/* Called with each session the overview covers that its row was not kept
 * for, acquired (with or without a header: a file without one has no row,
 * and that is kept too); st as listed. */
typedef ps_err (*overview_session_fn)(void *ctx, const char *project, const char *name, const struct stat *st,
				      struct ps_session *s);
/* Called first with each: 1 when the row kept for the file as listed was
 * used (no session is acquired then), 0 when none is kept, -1 when memory
 * ran out. */
typedef int (*overview_kept_fn)(void *ctx, const char *project, const char *name, const struct stat *st);

struct overview_each {
	struct psfs *fs;
	overview_kept_fn kept;
	overview_session_fn fn;
	void *ctx;
	ps_err err;
	struct psfs_caller who; /* rows only of the sessions it may read */
};

static int overview_each_session(void *ctx, const char *project, const char *name, const struct stat *st)
{
	struct overview_each *c = ctx;
	struct store_ref ref;
	if (!psfs_caller_may_read(&c->who, st->st_uid, st->st_gid, st->st_mode))
		return 0;
	/* A store-wide file on a store nothing is kept of yet reads every
	 * session: a caller that gives up (^C, timeout) stops it. */
	if (psfs_caller_gave_up()) {
		c->err = PS_ERR_INTR;
		return 1;
	}
	int kept = c->kept(c->ctx, project, name, st);
	if (kept) {
		if (kept < 0)
			c->err = PS_ERR_NOMEM;
		return kept < 0;
	}
	if (store_acquire(c->fs->store, project, name, &ref) != PS_OK)
		return 0; /* gone meanwhile */
	c->err = c->fn(c->ctx, project, name, st, ref.session);
	store_release(c->fs->store, &ref);
	return c->err != PS_OK;
}

static struct filememo *overview_rows(struct psfs *fs);

/* Calls kept, and fn where it kept nothing, with each session of project
 * (NULL: the whole store, its root's own sessions last) that the caller
 * may read, each file once. */
static ps_err overview_each(struct psfs *fs, const char *project, overview_kept_fn kept, overview_session_fn fn,
			    void *ctx)
{
	struct overview_each c = { fs, kept, fn, ctx, PS_OK, { 0 } };
	psfs_caller_get(&c.who);
	ps_err err = store_each_session(fs->store, project, overview_each_session, &c);
	filememo_flush(overview_rows(fs));
	return err ? err : c.err;
}

/* --- the rows kept ------------------------------------------------------------- */

/* Kept per session file (filememo.h): its usage.csv row, what its
 * sessions.md row shows, and its usage per day and model (usagedays.h's
 * blob).  Keys: 'c', 'm' or 'd', then "project/name". */
#define OVERVIEW_ROWS_BUDGET ((size_t)16 << 20)

static int overview_row_key(char kind, const char *project, const char *name, char *key, size_t size, size_t *len)
{
	int n = snprintf(key, size, "%c%s/%s", kind, project, name);
	if (n < 0 || (size_t)n >= size)
		return 0;
	*len = (size_t)n;
	return 1;
}

/* Whether the session as indexed is the file as listed: only then is what
 * was derived from it kept under the listing's stamp. */
static int overview_session_is(const struct ps_session *s, const struct stat *st)
{
	return s->dev == st->st_dev && s->ino == st->st_ino && s->size == (uint64_t)st->st_size &&
	       s->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* --- usage.csv ----------------------------------------------------------------- */

struct overview_csv {
	struct psfs *fs;
	struct buf *out;
};

static int overview_csv_kept(void *ctx, const char *project, const char *name, const struct stat *st)
{
	struct overview_csv *c = ctx;
	char key[2 * NAME_MAX + 4];
	size_t key_len;
	struct filestamp stamp;
	if (!overview_row_key('c', project, name, key, sizeof key, &key_len))
		return 0;
	filestamp_of(st, &stamp);
	return filememo_get(overview_rows(c->fs), key, key_len, &stamp, c->out);
}

static ps_err overview_csv_row(void *ctx, const char *project, const char *name, const struct stat *st,
			       struct ps_session *s)
{
	struct overview_csv *c = ctx;
	size_t start = c->out->len;
	ps_err err = s->have_header ? usage_csv_row(s, project, name, c->out) : PS_OK;
	char key[2 * NAME_MAX + 4];
	size_t key_len;
	if (!err && overview_session_is(s, st) && overview_row_key('c', project, name, key, sizeof key, &key_len)) {
		struct filestamp stamp;
		filestamp_of(st, &stamp);
		/* Out of memory here only costs the row's next build. */
		(void)filememo_put(overview_rows(c->fs), key, key_len, &stamp, c->out->data + start,
				   c->out->len - start);
	}
	return err;
}

static ps_err overview_build_csv(struct psfs *fs, const char *project, struct buf *out)
{
	struct overview_csv c = { fs, out };
	ps_err err = usage_csv_header(out);
	return err ? err : overview_each(fs, project, overview_csv_kept, overview_csv_row, &c);
}

/* --- usage over time: usage-daily.csv, usage-monthly.csv, usage-daily-models.csv, usage.svg */

struct overview_days {
	struct psfs *fs;
	struct usagedays *table;
	struct buf blob;
};

static int overview_days_kept(void *ctx, const char *project, const char *name, const struct stat *st)
{
	struct overview_days *c = ctx;
	char key[2 * NAME_MAX + 4];
	size_t key_len;
	struct filestamp stamp;
	if (!overview_row_key('d', project, name, key, sizeof key, &key_len))
		return 0;
	filestamp_of(st, &stamp);
	c->blob.len = 0;
	int found = filememo_get(overview_rows(c->fs), key, key_len, &stamp, &c->blob);
	if (found <= 0)
		return found;
	ps_err err = usagedays_add(c->table, c->blob.data, c->blob.len);
	return err == PS_ERR_NOMEM ? -1 : err ? 0 : 1; /* a bad blob: read the session */
}

static ps_err overview_days_session(void *ctx, const char *project, const char *name, const struct stat *st,
				   struct ps_session *s)
{
	struct overview_days *c = ctx;
	char key[2 * NAME_MAX + 4];
	size_t key_len;
	c->blob.len = 0;
	ps_err err = s->have_header ? usagedays_session_blob(s, &c->blob) : PS_OK;
	if (err)
		return err == PS_ERR_NOTSESSION ? PS_OK : err;
	if (overview_session_is(s, st) && overview_row_key('d', project, name, key, sizeof key, &key_len)) {
		struct filestamp stamp;
		filestamp_of(st, &stamp);
		(void)filememo_put(overview_rows(c->fs), key, key_len, &stamp, c->blob.data, c->blob.len);
	}
	return c->blob.len ? usagedays_add(c->table, c->blob.data, c->blob.len) : PS_OK;
}

static ps_err overview_build_days(struct psfs *fs, enum usagedays_file file, const char *project, struct buf *out)
{
	struct overview_days c = { fs, NULL, BUF_INIT };
	ps_err err = usagedays_new(&c.table);
	if (!err)
		err = overview_each(fs, project, overview_days_kept, overview_days_session, &c);
	if (!err)
		err = usagedays_write(c.table, file, project ? project : "all projects", out);
	usagedays_free(c.table);
	buf_free(&c.blob);
	return err;
}

/* --- sessions.md ----------------------------------------------------------------- */

struct overview_md_row {
	double modified_ms;
	size_t order;
	struct buf text;
};

struct overview_md {
	struct psfs *fs;
	int scoped;             /* a project's file: its sessions are its neighbours */
	struct overview_md_row *rows;
	size_t n, cap;
};

/* What a session's sessions.md row shows, as kept (then the title's
 * bytes): all but its directory, which depends on the file asked for. */
struct overview_md_kept {
	int listed;             /* 0: the session has no row */
	uint32_t branches;
	uint64_t messages;
	double cost, created_ms, modified_ms;
	size_t title_len;
};

/* Adds the row (row.dir is set here). */
static ps_err overview_md_add(struct overview_md *md, const char *project, const char *name,
			      struct sessionsmd_row *row)
{
	char *dir = NULL;
	if (md->n == md->cap) {
		size_t cap = md->cap ? md->cap * 2 : 32;
		struct overview_md_row *rows = realloc(md->rows, cap * sizeof *rows);
		if (!rows)
			return PS_ERR_NOMEM;
		md->rows = rows;
		md->cap = cap;
	}
	if (md->scoped ? asprintf(&dir, "%s", name) < 0
		       : asprintf(&dir, "%s%s%s", project, *project ? "/" : "", name) < 0)
		dir = NULL;
	struct overview_md_row *r = &md->rows[md->n];
	memset(r, 0, sizeof *r);
	row->dir = dir;
	ps_err err = row->title && dir ? sessionsmd_row(&r->text, row) : PS_ERR_NOMEM;
	free(dir);
	row->dir = NULL;
	if (err) {
		buf_free(&r->text);
		return err;
	}
	r->modified_ms = isnan(row->modified_ms) ? -INFINITY : row->modified_ms;
	r->order = md->n++;
	return PS_OK;
}

static int overview_md_kept(void *ctx, const char *project, const char *name, const struct stat *st)
{
	struct overview_md *md = ctx;
	char key[2 * NAME_MAX + 4];
	size_t key_len;
	struct filestamp stamp;
	struct buf got = BUF_INIT;
	struct overview_md_kept k;
	if (!overview_row_key('m', project, name, key, sizeof key, &key_len))
		return 0;
	filestamp_of(st, &stamp);
	int found = filememo_get(overview_rows(md->fs), key, key_len, &stamp, &got);
	if (found <= 0 || got.len < sizeof k || buf_putc(&got, '\0')) {
		buf_free(&got);
		return found < 0 ? -1 : 0;
	}
	memcpy(&k, got.data, sizeof k);
	ps_err err = PS_OK;
	if (k.listed) {
		struct sessionsmd_row row = { 0 };
		row.title = got.data + sizeof k;
		row.created_ms = k.created_ms;
		row.modified_ms = k.modified_ms;
		row.messages = k.messages;
		row.branches = k.branches;
		row.cost = k.cost;
		err = overview_md_add(md, project, name, &row);
	}
	buf_free(&got);
	return err ? -1 : 1;
}

/* Keeps what the row shows (title NULL: the session has no row). */
static void overview_md_keep(struct overview_md *md, const char *project, const char *name, const struct stat *st,
			     const struct sessionsmd_row *row)
{
	char key[2 * NAME_MAX + 4];
	size_t key_len;
	struct overview_md_kept k;
	struct buf val = BUF_INIT;
	struct filestamp stamp;
	if (!overview_row_key('m', project, name, key, sizeof key, &key_len))
		return;
	memset(&k, 0, sizeof k);
	k.listed = row && row->title;
	if (k.listed) {
		k.branches = row->branches;
		k.messages = row->messages;
		k.cost = row->cost;
		k.created_ms = row->created_ms;
		k.modified_ms = row->modified_ms;
		k.title_len = strlen(row->title);
	}
	if (!buf_put(&val, &k, sizeof k) && (!k.listed || !buf_put(&val, row->title, k.title_len))) {
		filestamp_of(st, &stamp);
		(void)filememo_put(overview_rows(md->fs), key, key_len, &stamp, val.data, val.len);
	}
	buf_free(&val);
}

static ps_err overview_md_session(void *ctx, const char *project, const char *name, const struct stat *st,
				  struct ps_session *s)
{
	struct overview_md *md = ctx;
	const struct sessioninfo *info;
	double cost = 0;
	uint64_t messages = 0;
	char *title = NULL;
	int same = overview_session_is(s, st);
	if (!s->have_header) {
		if (same)
			overview_md_keep(md, project, name, st, NULL);
		return PS_OK;
	}
	ps_err err = usage_totals(s, &cost, &messages);
	if (err) {
		if (err == PS_ERR_NOTSESSION && same)
			overview_md_keep(md, project, name, st, NULL);
		return err == PS_ERR_NOTSESSION ? PS_OK : err;
	}
	/* What pi's list shows of it: its title and last activity. */
	infocache_lock(md->fs->infos);
	err = infocache_get(md->fs->infos, s->path, &info);
	struct sessionsmd_row row = { 0 };
	if (!err) {
		size_t first_len = 0;
		const char *first = sessioninfo_first_message(info, &first_len);
		title = title_line(info->name, first, first_len, OVERVIEW_TITLE_MAX);
		row.created_ms = info->created_ms;
		row.modified_ms = info->modified_ms;
		/* The info read the file as listed too. */
		same = same && info->dev == st->st_dev && info->ino == st->st_ino &&
		       info->size == (uint64_t)st->st_size &&
		       info->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	}
	infocache_unlock(md->fs->infos);
	if (err)
		return err == PS_ERR_NOMEM ? err : PS_OK; /* gone meanwhile */
	row.title = title;
	row.messages = messages;
	row.branches = s->n_branches;
	row.cost = cost;
	err = title ? overview_md_add(md, project, name, &row) : PS_ERR_NOMEM;
	if (!err && same)
		overview_md_keep(md, project, name, st, &row);
	free(title);
	return err;
}

static int overview_md_newest_first(const void *a, const void *b)
{
	const struct overview_md_row *x = a, *y = b;
	if (x->modified_ms != y->modified_ms)
		return x->modified_ms > y->modified_ms ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static ps_err overview_build_md(struct psfs *fs, const char *project, struct buf *out)
{
	struct overview_md md = { fs, project != NULL, NULL, 0, 0 };
	ps_err err = overview_each(fs, project, overview_md_kept, overview_md_session, &md);
	if (!err) {
		if (md.n > 1) /* (rows is NULL when there are none) */
			qsort(md.rows, md.n, sizeof *md.rows, overview_md_newest_first);
		err = sessionsmd_header(out, md.n);
	}
	for (size_t i = 0; i < md.n; i++) {
		if (!err && buf_put(out, md.rows[i].text.data, md.rows[i].text.len))
			err = PS_ERR_NOMEM;
		buf_free(&md.rows[i].text);
	}
	free(md.rows);
	return err;
}

static int overview_file_of(const char *name);

int overview_build(struct psfs *fs, const char *name, const char *project, char **buf, size_t *len)
{
	struct buf out = BUF_INIT;
	ps_err err;
	switch (overview_file_of(name)) {
	case OVERVIEW_MD: err = overview_build_md(fs, project, &out); break;
	case OVERVIEW_DAILY: err = overview_build_days(fs, USAGEDAYS_DAILY, project, &out); break;
	case OVERVIEW_MONTHLY: err = overview_build_days(fs, USAGEDAYS_MONTHLY, project, &out); break;
	case OVERVIEW_DAILY_MODELS: err = overview_build_days(fs, USAGEDAYS_DAILY_MODELS, project, &out); break;
	case OVERVIEW_SVG: err = overview_build_days(fs, USAGEDAYS_SVG, project, &out); break;
	default: err = overview_build_csv(fs, project, &out); break;
	}
	if (err || buf_finish(&out)) {
		buf_free(&out);
		return -psfs_errno(err ? err : PS_ERR_NOMEM);
	}
	*buf = out.data ? out.data : strdup("");
	*len = out.len;
	return *buf ? 0 : -ENOMEM;
}

/* --- their sizes, without building them at every stat ------------------------------ */

/* One per overview file recently stat'ed: the store's and a few projects'. */
#define OVERVIEW_SLOTS 16

struct overview_slot {
	int used;           /* slot in use */
	int file;           /* enum overview_file */
	int whole_store;    /* the store's file, else project's */
	char *project;
	struct buf listing; /* what the length was built from */
	size_t len;
	uint64_t last_use;  /* the least recently used slot goes first */
};

struct overview_memo {
	struct filememo *rows; /* each session's rows (filememo.h), NULL: none kept */
	pthread_mutex_t lock;
	struct overview_slot slot[OVERVIEW_SLOTS];
	uint64_t clock;
};

/* What a session contributes to the listing: its place and what tells
 * that it changed (session_refresh looks at the same). */
struct overview_stamp {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

struct overview_walk {
	struct psfs *fs;
	const char *project;
	struct buf *out;
	int failed;
	struct psfs_caller who; /* as overview_each, only the sessions it may read */
};

static int overview_put_session(void *ctx, const char *name, const struct stat *st)
{
	struct overview_walk *w = ctx;
	if (!psfs_caller_may_read(&w->who, st->st_uid, st->st_gid, st->st_mode))
		return 0;
	struct overview_stamp stamp = {
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

static int overview_put_project(void *ctx, const char *name, const struct stat *st)
{
	struct overview_walk *w = ctx;
	(void)st;
	w->project = name;
	if (store_list_sessions(w->fs->store, name, overview_put_session, w) != PS_OK)
		w->failed = 1;
	return w->failed;
}

/* The listing of the sessions project's overview covers (the whole
 * store's when project is NULL, its root's own sessions included, as
 * overview_each covers them).  0, or -1 (gone, out of memory). */
static int overview_listing(struct psfs *fs, const char *project, struct buf *out)
{
	struct overview_walk w = { fs, project, out, 0, { 0 } };
	ps_err err;
	psfs_caller_get(&w.who);
	if (project) {
		err = store_list_sessions(fs->store, project, overview_put_session, &w);
	} else {
		err = store_list_projects(fs->store, overview_put_project, &w);
		if (!err && !w.failed) {
			w.project = "";
			err = store_list_sessions(fs->store, "", overview_put_session, &w);
		}
	}
	return err || w.failed ? -1 : 0;
}

static int overview_same_key(const struct overview_slot *m, int file, const char *project)
{
	return m->used && m->file == file &&
	       (project ? !m->whole_store && strcmp(m->project, project) == 0 : m->whole_store);
}

static int overview_lookup(struct overview_memo *memo, int file, const char *project, const struct buf *listing,
			   size_t *len)
{
	int found = 0;
	pthread_mutex_lock(&memo->lock);
	for (size_t i = 0; i < OVERVIEW_SLOTS && !found; i++) {
		struct overview_slot *m = &memo->slot[i];
		if (overview_same_key(m, file, project) && m->listing.len == listing->len &&
		    (!listing->len || memcmp(m->listing.data, listing->data, listing->len) == 0)) {
			*len = m->len;
			m->last_use = ++memo->clock;
			found = 1;
		}
	}
	pthread_mutex_unlock(&memo->lock);
	return found;
}

static void overview_slot_free(struct overview_slot *m)
{
	free(m->project);
	buf_free(&m->listing);
	memset(m, 0, sizeof *m);
}

/* Keeps len for the listing (taken: *listing is emptied). */
static void overview_remember(struct overview_memo *memo, int file, const char *project, struct buf *listing,
			      size_t len)
{
	char *key = project ? strdup(project) : NULL;
	if (project && !key)
		return;
	pthread_mutex_lock(&memo->lock);
	struct overview_slot *m = NULL;
	for (size_t i = 0; i < OVERVIEW_SLOTS && !m; i++)
		if (overview_same_key(&memo->slot[i], file, project))
			m = &memo->slot[i];
	for (size_t i = 0; i < OVERVIEW_SLOTS && !m; i++)
		if (!memo->slot[i].used)
			m = &memo->slot[i];
	if (!m) {
		m = &memo->slot[0];
		for (size_t i = 1; i < OVERVIEW_SLOTS; i++)
			if (memo->slot[i].last_use < m->last_use)
				m = &memo->slot[i];
	}
	overview_slot_free(m);
	m->used = 1;
	m->file = file;
	m->whole_store = !project;
	m->project = key;
	m->listing = *listing;
	m->len = len;
	m->last_use = ++memo->clock;
	pthread_mutex_unlock(&memo->lock);
	*listing = (struct buf)BUF_INIT;
}

static int overview_file_of(const char *name)
{
	for (size_t i = 0; i < OVERVIEW_N_FILES; i++)
		if (strcmp(name, overview_names[i]) == 0)
			return (int)i;
	return OVERVIEW_CSV;
}

int overview_size(struct psfs *fs, const char *name, const char *project, size_t *len)
{
	struct buf before = BUF_INIT, after = BUF_INIT;
	char *text = NULL;
	int file = overview_file_of(name);
	int listed = overview_listing(fs, project, &before) == 0, res = 0;

	if (listed && overview_lookup(fs->overview, file, project, &before, len))
		goto out;
	res = overview_build(fs, name, project, &text, len);
	/* Kept only when nothing changed while it was built: then the length
	 * is that of the sessions as listed. */
	if (!res && listed && overview_listing(fs, project, &after) == 0 && after.len == before.len &&
	    (!before.len || memcmp(after.data, before.data, before.len) == 0))
		overview_remember(fs->overview, file, project, &before, *len);
out:
	free(text);
	buf_free(&before);
	buf_free(&after);
	return res;
}

struct overview_memo *overview_memo_new(void)
{
	struct overview_memo *memo = calloc(1, sizeof *memo);
	if (!memo)
		return NULL;
	if (filememo_new(OVERVIEW_ROWS_BUDGET, &memo->rows)) {
		free(memo);
		return NULL;
	}
	pthread_mutex_init(&memo->lock, NULL);
	return memo;
}

void overview_memo_set_disk(struct overview_memo *memo, struct diskmemo *disk)
{
	if (memo)
		filememo_set_disk(memo->rows, disk);
}

struct filememo *overview_memo_rows(struct overview_memo *memo)
{
	return memo ? memo->rows : NULL;
}

static struct filememo *overview_rows(struct psfs *fs)
{
	return fs->overview ? fs->overview->rows : NULL;
}

void overview_memo_free(struct overview_memo *memo)
{
	if (!memo)
		return;
	for (size_t i = 0; i < OVERVIEW_SLOTS; i++)
		overview_slot_free(&memo->slot[i]);
	filememo_free(memo->rows);
	pthread_mutex_destroy(&memo->lock);
	free(memo);
}

/* --- the gate ---------------------------------------------------------------------- */

/* The file's name when p is an overview file, else NULL. */
static const char *overview_name(const struct psfs_path *p)
{
	const char *name = p->depth == 1 ? p->project : p->depth == 2 ? p->session : NULL;
	for (size_t i = 0; name && i < sizeof overview_names / sizeof overview_names[0]; i++)
		if (strcmp(name, overview_names[i]) == 0)
			return overview_names[i];
	return NULL;
}

int overview_is_name(const char *name)
{
	for (size_t i = 0; i < sizeof overview_names / sizeof overview_names[0]; i++)
		if (strcmp(name, overview_names[i]) == 0)
			return 1;
	return 0;
}

int overview_owns(const struct psfs_path *p)
{
	return overview_name(p) != NULL;
}

int overview_getattr(struct psfs *fs, const struct psfs_path *p, const struct stat *root, struct stat *st)
{
	struct stat like = *root;
	size_t len;
	ps_err err;
	int res;

	if (p->depth == 2 && (err = store_stat_project(fs->store, p->project, &like)))
		return -psfs_errno(err);
	res = overview_size(fs, overview_name(p), p->depth == 2 ? p->project : NULL, &len);
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

void overview_readdir(const struct psfs_path *dir, void *buf, fuse_fill_dir_t filler)
{
	if (dir->depth == 0 || dir->depth == 1)
		for (size_t i = 0; i < sizeof overview_names / sizeof overview_names[0]; i++)
			filler(buf, overview_names[i], NULL, 0, 0);
}

int overview_open(struct psfs *fs, const struct psfs_path *p, int flags, char **data, size_t *len)
{
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	return overview_build(fs, overview_name(p), p->depth == 2 ? p->project : NULL, data, len);
}
