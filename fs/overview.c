#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "caller.h"
#include "fanout.h"
#include "overviewlist.h"
#include "filememo.h"
#include "sessioninfo.h"
#include "overview.h"
#include "overviewmemo.h"
#include "sessionsmd.h"
#include "store.h"
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

/* An overview file is made of one value per session, kept in the rows
 * memo by the session file's stamp: what derive makes of the acquired
 * session, and use takes into the file being built, in the listing's
 * order.  The values missing from the memo are derived on several
 * threads at once (fanout.h): on a store nothing is kept of yet, that is
 * nearly all the work. */

/* Appends the session's value to value, and sets *keep when it may be
 * kept for the file as listed (st); an empty value adds nothing to the
 * file (a file pi does not list, or one gone meanwhile).  Runs on any
 * thread of the fan-out, several at once: it may only touch value and what
 * is thread-safe.  An error other than PS_ERR_NOTSESSION fails the file. */
typedef ps_err (*overview_derive_fn)(struct psfs *fs, const char *project, const char *name, int child,
				     const struct stat *st, struct ps_session *s, const struct sessioninfo *listing,
				     struct buf *value, int *keep);
/* Takes one session's value (never empty) into the file being built, on
 * the caller's thread, in order.  PS_ERR_INVALID: a value kept earlier is
 * unusable (the session is read again); another error fails the file. */
typedef ps_err (*overview_use_fn)(void *ctx, const char *project, const char *name, int child, const char *value,
				  size_t len);

struct overview_each {
	struct psfs *fs;
	char kind;        /* the rows memo's key prefix: 'c', 'm' or 'd' */
	int with_listing; /* derive wants the session's listing info (sessioninfo_load_listing's) */
	overview_derive_fn derive;
	struct overview_list *list;
	size_t *order;    /* the items by size, largest first: the order they are derived in */
};

#define OVERVIEW_KEY_MAX (STORE_PROJECT_MAX + 2 * PATH_MAX)
static int overview_row_key(char kind, const struct overview_item *it, char *key, size_t size, size_t *len);

static const char *overview_shown_project(const struct overview_item *it)
{
	return it->shown_project ? it->shown_project : it->project;
}

static const char *overview_shown_name(const struct overview_item *it)
{
	return it->shown_name ? it->shown_name : it->name;
}

static ps_err overview_listing_line(void *ctx, const char *line, size_t len, const struct scan_result *r)
{
	return sessioninfo_listing_line(ctx, line, len, r);
}

/* The session indexed anew, not through the store's cache: a store-wide
 * file would churn all of it (cache_sessions indexes held at once, tens of
 * megabytes) for sessions read once.  Where derive wants the listing info,
 * it is read from the same lines (session_open_observed): one read of the
 * file where the store's index and sessioninfo_load_listing would read it
 * twice, nearly all of a store's first sessions.md.  *listing stays NULL
 * where those lines are not pi's (session.h): derive loads it then.
 * PS_ERR_NOENT: gone. */
static ps_err overview_open_own(struct overview_each *c, const struct overview_item *it, struct ps_session **s,
				 struct sessioninfo **listing)
{
	struct sessioninfo *info = NULL;
	ps_err err = c->with_listing ? sessioninfo_listing_new(&info) : PS_OK;
	struct session_observer obs = { overview_listing_line, info, 0 };
	*s = NULL;
	*listing = NULL;
	if (!err)
		err = store_open_observed(c->fs->store, it->project, it->name, info ? &obs : NULL, s);
	if (!err && info && !obs.unusable) {
		err = sessioninfo_listing_end(info, (*s)->path, (*s)->dev, (*s)->ino, (*s)->size, (*s)->mtime_ns);
		if (!err) {
			*listing = info;
			info = NULL;
		}
	}
	if (err && *s) {
		session_free(*s);
		*s = NULL;
	}
	sessioninfo_free(info);
	return err;
}

/* Derives the value of it from the session file, keeping it in the memo
 * where derive says it may be (nothing when the file is gone): from the
 * store's index where it holds one, else read on its own
 * (overview_open_own). */
static ps_err overview_derive(struct overview_each *c, struct overview_item *it)
{
	struct store_ref ref = { 0 };
	struct ps_session *own = NULL;
	struct sessioninfo *listing = NULL;
	int keep = 0;
	ps_err err;
	it->value.len = 0;
	if (store_acquire_cached(c->fs->store, it->project, it->name, &ref) != PS_OK &&
	    (err = overview_open_own(c, it, &own, &listing)))
		return err == PS_ERR_NOMEM ? err : PS_OK; /* gone meanwhile */
	err = c->derive(c->fs, overview_shown_project(it), overview_shown_name(it), it->shown_name != NULL, &it->st,
			own ? own : ref.session, listing, &it->value, &keep);
	if (own)
		session_free(own);
	else
		store_release(c->fs->store, &ref);
	sessioninfo_free(listing);
	if (err == PS_ERR_NOTSESSION) {
		it->value.len = 0;
		err = PS_OK;
	}
	char key[OVERVIEW_KEY_MAX];
	size_t key_len;
	if (!err && keep && overview_row_key(c->kind, it, key, sizeof key, &key_len)) {
		struct filestamp stamp;
		filestamp_of(&it->st, &stamp);
		/* Out of memory here only costs the value's next derivation. */
		(void)filememo_put(overview_memo_rows(c->fs->overview), key, key_len, &stamp, it->value.data,
				   it->value.len);
	}
	return err;
}

static void overview_each_item(void *ctx, size_t i)
{
	struct overview_each *c = ctx;
	struct overview_item *it = &c->list->items[c->order ? c->order[i] : i];
	char key[OVERVIEW_KEY_MAX];
	size_t key_len;
	struct filestamp stamp;
	filestamp_of(&it->st, &stamp);
	if (overview_row_key(c->kind, it, key, sizeof key, &key_len)) {
		int found = filememo_get(overview_memo_rows(c->fs->overview), key, key_len, &stamp, &it->value);
		if (found) {
			it->kept = found > 0;
			it->err = found < 0 ? PS_ERR_NOMEM : PS_OK;
			return;
		}
	}
	it->err = overview_derive(c, it);
}

static int overview_larger_first(const void *a, const void *b, void *items)
{
	const struct overview_item *it = items;
	off_t x = it[*(const size_t *)a].st.st_size, y = it[*(const size_t *)b].st.st_size;
	return x > y ? -1 : x < y;
}

/* The order the threads take the items in: largest first, so that no
 * thread is left reading a 50 MB session alone at the end while the
 * others idle.  NULL (listing order) when out of memory. */
static size_t *overview_order(struct overview_item *items, size_t n)
{
	size_t *order = malloc((n ? n : 1) * sizeof *order);
	if (!order)
		return NULL;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, overview_larger_first, items);
	return order;
}

/* A store-wide file on a store nothing is kept of yet reads every
 * session: a caller that gives up (^C, timeout) stops it. */
static int overview_each_stop(void *ctx)
{
	(void)ctx;
	return psfs_caller_gave_up();
}

/* Calls use, in the listing's order, with the value of each session of
 * the list (overview_list, with its items; its items are used up), kept
 * in the memo, else derived. */
static ps_err overview_each(struct psfs *fs, struct overview_list *list, char kind, int with_listing,
			    overview_derive_fn derive, overview_use_fn use, void *ctx)
{
	struct overview_each c = { fs, kind, with_listing, derive, list, NULL };
	ps_err err = PS_OK;
	c.order = overview_order(list->items, list->n);
	if (fanout_run(list->n, fs->cfg.read_threads, overview_each_item, overview_each_stop, &c))
		err = PS_ERR_INTR;
	filememo_flush(overview_memo_rows(fs->overview));
	for (size_t i = 0; i < list->n; i++) {
		struct overview_item *it = &list->items[i];
		if (!err)
			err = it->err;
		if (!err && it->value.len) {
			int child = it->shown_name != NULL;
			err = use(ctx, overview_shown_project(it), overview_shown_name(it), child, it->value.data,
				  it->value.len);
			if (err == PS_ERR_INVALID && it->kept && !(err = overview_derive(&c, it)) && it->value.len)
				err = use(ctx, overview_shown_project(it), overview_shown_name(it), child, it->value.data,
					  it->value.len);
		}
		buf_free(&it->value);
	}
	free(c.order);
	return err;
}

/* --- the rows kept ------------------------------------------------------------- */

/* Kept per session file (filememo.h): its usage.csv row, what its
 * sessions.md row shows, and its usage per day and model (usagedays.h's
 * blob).  Keys: 'c', 'm' or 'd', then "project/name"; at most
 * OVERVIEW_ROWS_BUDGET of them (overviewmemo.h). */

/* A subagent's session's value is kept apart from the same file's as a
 * session of its own (a sessions.md value of a child is its cost only;
 * its usage.csv row names it as shown): its key ends in the name shown. */
static int overview_row_key(char kind, const struct overview_item *it, char *key, size_t size, size_t *len)
{
	int n = it->shown_name ? snprintf(key, size, "%c%s/%s//%s", kind, it->project, it->name, it->shown_name)
			       : snprintf(key, size, "%c%s/%s", kind, it->project, it->name);
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

static ps_err overview_csv_derive(struct psfs *fs, const char *project, const char *name, int child,
				  const struct stat *st, struct ps_session *s, const struct sessioninfo *listing,
				  struct buf *value, int *keep)
{
	(void)fs;
	(void)child;
	(void)listing;
	*keep = overview_session_is(s, st);
	return s->have_header ? usage_csv_row(s, project, name, value) : PS_OK;
}

static ps_err overview_csv_use(void *ctx, const char *project, const char *name, int child, const char *value,
			       size_t len)
{
	(void)child;
	(void)project;
	(void)name;
	return buf_put(ctx, value, len) ? PS_ERR_NOMEM : PS_OK;
}

static ps_err overview_build_csv(struct psfs *fs, struct overview_list *list, struct buf *out)
{
	ps_err err = usage_csv_header(out);
	return err ? err : overview_each(fs, list, 'c', 0, overview_csv_derive, overview_csv_use, out);
}

/* --- usage over time: usage-daily.csv, usage-monthly.csv, usage-daily-models.csv, usage.svg */

static ps_err overview_days_derive(struct psfs *fs, const char *project, const char *name, int child,
				   const struct stat *st, struct ps_session *s, const struct sessioninfo *listing,
				   struct buf *value, int *keep)
{
	(void)fs;
	(void)child;
	(void)listing;
	(void)project;
	(void)name;
	*keep = overview_session_is(s, st);
	return s->have_header ? usagedays_session_blob(s, value) : PS_OK;
}

static ps_err overview_days_use(void *ctx, const char *project, const char *name, int child, const char *value,
				size_t len)
{
	(void)child;
	(void)project;
	(void)name;
	ps_err err = usagedays_add(ctx, value, len);
	return err == PS_ERR_NOMEM || !err ? err : PS_ERR_INVALID; /* a bad blob: read the session */
}

static ps_err overview_build_days(struct psfs *fs, enum usagedays_file file, const char *project,
				  struct overview_list *list, struct buf *out)
{
	struct usagedays *table = NULL;
	ps_err err = usagedays_new(&table);
	if (!err)
		err = overview_each(fs, list, 'd', 0, overview_days_derive, overview_days_use, table);
	if (!err)
		err = usagedays_write(table, file, project ? project : "all projects", out);
	usagedays_free(table);
	return err;
}

/* --- sessions.md ----------------------------------------------------------------- */

struct overview_md_row {
	double modified_ms;
	size_t order;
	struct sessionsmd_row row; /* title and dir are the row's own */
};

struct overview_md {
	struct psfs *fs;
	int scoped;             /* a project's file: its sessions are its neighbours */
	struct overview_md_row *rows;
	size_t n, cap;
	/* The row of the last session met that was no subagent's (its
	 * subagents come right after it), or -1 when it has none. */
	ptrdiff_t parent;
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
			      const struct sessionsmd_row *row)
{
	char *dir = NULL, *title = strdup(row->title);
	md->parent = -1;
	if (md->n == md->cap) {
		size_t cap = md->cap ? md->cap * 2 : 32;
		struct overview_md_row *rows = realloc(md->rows, cap * sizeof *rows);
		if (!rows) {
			free(title);
			return PS_ERR_NOMEM;
		}
		md->rows = rows;
		md->cap = cap;
	}
	if (md->scoped ? asprintf(&dir, "%s", name) < 0
		       : asprintf(&dir, "%s%s%s", project, *project ? "/" : "", name) < 0)
		dir = NULL;
	if (!dir || !title) {
		free(dir);
		free(title);
		return PS_ERR_NOMEM;
	}
	struct overview_md_row *r = &md->rows[md->n];
	memset(r, 0, sizeof *r);
	r->row = *row;
	r->row.title = title;
	r->row.dir = dir;
	r->modified_ms = isnan(row->modified_ms) ? -INFINITY : row->modified_ms;
	md->parent = (ptrdiff_t)md->n;
	r->order = md->n++;
	return PS_OK;
}

static void overview_md_rows_free(struct overview_md *md)
{
	for (size_t i = 0; i < md->n; i++) {
		free((char *)md->rows[i].row.title);
		free((char *)md->rows[i].row.dir);
	}
	free(md->rows);
}

static ps_err overview_md_use(void *ctx, const char *project, const char *name, int child, const char *value,
			      size_t len)
{
	struct overview_md *md = ctx;
	struct overview_md_kept k;
	if (len < sizeof k)
		return PS_ERR_INVALID;
	memcpy(&k, value, sizeof k);
	if (child) {
		/* A subagent's session: counted in its parent's row (a file
		 * that is no session is not one of them). */
		if (md->parent >= 0 && k.listed) {
			md->rows[md->parent].row.subagent_sessions++;
			md->rows[md->parent].row.subagent_cost += k.cost;
		}
		return PS_OK;
	}
	if (!k.listed) {
		md->parent = -1;
		return PS_OK;
	}
	if (k.title_len != len - sizeof k)
		return PS_ERR_INVALID;
	char *title = strndup(value + sizeof k, k.title_len);
	if (!title)
		return PS_ERR_NOMEM;
	struct sessionsmd_row row = { 0 };
	row.title = title;
	row.created_ms = k.created_ms;
	row.modified_ms = k.modified_ms;
	row.messages = k.messages;
	row.branches = k.branches;
	row.cost = k.cost;
	ps_err err = overview_md_add(md, project, name, &row);
	free(title);
	return err;
}

/* The row's value (title NULL: the session has no row). */
static ps_err overview_md_value(const struct sessionsmd_row *row, struct buf *value)
{
	struct overview_md_kept k;
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
	return buf_put(value, &k, sizeof k) || (k.listed && buf_put(value, row->title, k.title_len)) ? PS_ERR_NOMEM
												      : PS_OK;
}

static ps_err overview_md_derive(struct psfs *fs, const char *project, const char *name, int child,
				 const struct stat *st, struct ps_session *s, const struct sessioninfo *listing,
				 struct buf *value, int *keep)
{
	double cost = 0;
	uint64_t messages = 0;
	(void)fs;
	(void)project;
	(void)name;
	*keep = overview_session_is(s, st);
	if (!s->have_header)
		return overview_md_value(NULL, value);
	ps_err err = usage_totals(s, &cost, &messages);
	if (err == PS_ERR_NOTSESSION)
		return overview_md_value(NULL, value);
	if (err)
		return err;
	if (child) {
		/* A subagent's session has no row: its cost is its value
		 * (listed: it is a session, counted in its parent's row). */
		struct overview_md_kept k;
		memset(&k, 0, sizeof k);
		k.listed = 1;
		k.cost = cost;
		return buf_put(value, &k, sizeof k) ? PS_ERR_NOMEM : PS_OK;
	}
	/* What pi's list shows of it: its title and last activity (read
	 * without the message text a search keeps: a store's first
	 * sessions.md then writes no search texts to the disk cache). */
	struct sessionsmd_row row = { 0 };
	struct sessioninfo *loaded = NULL;
	const struct sessioninfo *info = listing;
	if (!info && !(err = sessioninfo_load_listing(s->path, &loaded)))
		info = loaded;
	if (!err) {
		size_t first_len = 0;
		const char *first = sessioninfo_first_message(info, &first_len);
		row.title = title_line(info->name, first, first_len, OVERVIEW_TITLE_MAX);
		row.created_ms = info->created_ms;
		row.modified_ms = info->modified_ms;
		/* The info read the file as listed too. */
		*keep = *keep && info->dev == st->st_dev && info->ino == st->st_ino &&
			info->size == (uint64_t)st->st_size &&
			info->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	}
	sessioninfo_free(loaded);
	if (err) {
		*keep = 0;
		return err == PS_ERR_NOMEM ? err : PS_OK; /* gone meanwhile: no value */
	}
	if (!row.title)
		return PS_ERR_NOMEM;
	row.messages = messages;
	row.branches = s->n_branches;
	row.cost = cost;
	err = overview_md_value(&row, value);
	free((char *)row.title);
	return err;
}

static int overview_md_newest_first(const void *a, const void *b)
{
	const struct overview_md_row *x = a, *y = b;
	if (x->modified_ms != y->modified_ms)
		return x->modified_ms > y->modified_ms ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static ps_err overview_build_md(struct psfs *fs, const char *project, struct overview_list *list, struct buf *out)
{
	struct overview_md md = { fs, project != NULL, NULL, 0, 0, -1 };
	ps_err err = overview_each(fs, list, 'm', 1, overview_md_derive, overview_md_use, &md);
	if (!err) {
		if (md.n > 1) /* (rows is NULL when there are none) */
			qsort(md.rows, md.n, sizeof *md.rows, overview_md_newest_first);
		err = sessionsmd_header(out, md.n);
	}
	for (size_t i = 0; !err && i < md.n; i++)
		err = sessionsmd_row(out, &md.rows[i].row);
	overview_md_rows_free(&md);
	return err;
}

static int overview_file_of(const char *name);

/* overview_build from the sessions list holds (with its items), which
 * it uses up. */
static int overview_build_listed(struct psfs *fs, const char *name, const char *project, struct overview_list *list,
				 char **buf, size_t *len)
{
	struct buf out = BUF_INIT;
	ps_err err;
	switch (overview_file_of(name)) {
	case OVERVIEW_MD: err = overview_build_md(fs, project, list, &out); break;
	case OVERVIEW_DAILY: err = overview_build_days(fs, USAGEDAYS_DAILY, project, list, &out); break;
	case OVERVIEW_MONTHLY: err = overview_build_days(fs, USAGEDAYS_MONTHLY, project, list, &out); break;
	case OVERVIEW_DAILY_MODELS: err = overview_build_days(fs, USAGEDAYS_DAILY_MODELS, project, list, &out); break;
	case OVERVIEW_SVG: err = overview_build_days(fs, USAGEDAYS_SVG, project, list, &out); break;
	default: err = overview_build_csv(fs, list, &out); break;
	}
	if (err || buf_finish(&out)) {
		buf_free(&out);
		return -psfs_errno(err ? err : PS_ERR_NOMEM);
	}
	*buf = out.data ? out.data : strdup("");
	*len = out.len;
	return *buf ? 0 : -ENOMEM;
}

int overview_build(struct psfs *fs, const char *name, const char *project, char **buf, size_t *len)
{
	struct overview_list list;
	ps_err err = overviewlist_make(fs, project, 1, &list);
	if (err)
		return -psfs_errno(err);
	int res = overview_build_listed(fs, name, project, &list, buf, len);
	overviewlist_free(&list);
	return res;
}

/* --- their sizes, without building them at every stat ------------------------------ */

static int overview_file_of(const char *name)
{
	for (size_t i = 0; i < OVERVIEW_N_FILES; i++)
		if (strcmp(name, overview_names[i]) == 0)
			return (int)i;
	return OVERVIEW_CSV;
}

int overview_size(struct psfs *fs, const char *name, const char *project, size_t *len)
{
	struct overview_list list;
	char *text = NULL;
	int file = overview_file_of(name), res;
	ps_err err = overviewlist_make(fs, project, 1, &list);

	if (err)
		return -psfs_errno(err);
	if (overview_memo_length(fs->overview, overview_names[file], project, &list.key, len)) {
		res = 0;
		goto out;
	}
	/* Kept under the listing it was built from: a session that changes
	 * meanwhile changes the listing of every later stat and open, so
	 * what was read of it is never taken for the file as listed. */
	if ((text = overview_memo_disk_text(fs->overview, overview_names[file], project, &list.key, len))) {
		res = 0;
	} else {
		res = overview_build_listed(fs, name, project, &list, &text, len);
		if (!res)
			overview_memo_disk_keep(fs->overview, overview_names[file], project, &list.key, text, *len);
	}
	if (!res)
		overview_memo_keep(fs->overview, overview_names[file], project, &list.key, *len, &text);
out:
	free(text);
	overviewlist_free(&list);
	return res;
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
	const char *name = overview_name(p), *project = p->depth == 2 ? p->project : NULL;
	int file = overview_file_of(name), res;
	struct overview_list listing;
	char *keep = NULL;
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	ps_err err = overviewlist_make(fs, project, 0, &listing);
	if (err)
		return -psfs_errno(err);
	if ((*data = overview_memo_text(fs->overview, overview_names[file], project, &listing.key, len))) {
		res = 0;
		goto out;
	}
	if ((*data = overview_memo_disk_text(fs->overview, overview_names[file], project, &listing.key, len))) {
		res = 0;
	} else {
		overviewlist_free(&listing);
		if ((err = overviewlist_make(fs, project, 1, &listing)))
			return -psfs_errno(err);
		res = overview_build_listed(fs, name, project, &listing, data, len);
		if (!res)
			overview_memo_disk_keep(fs->overview, overview_names[file], project, &listing.key, *data, *len);
	}
	/* Kept for the next open, as a stat keeps what it built. */
	if (!res && (keep = malloc(*len ? *len : 1))) {
		memcpy(keep, *data, *len);
		overview_memo_keep(fs->overview, overview_names[file], project, &listing.key, *len, &keep);
	}
out:
	free(keep);
	overviewlist_free(&listing);
	return res;
}
