#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "catalog.h"
#include "fanout.h"
#include "filememo.h"
#include "fileset.h"
#include "lockorder.h"
#include "sessioninfo.h"
#include "title.h"

struct ps_catalog {
	struct ps_store *store;
	unsigned threads;     /* a scan's reads (fanout.h) */
	pthread_mutex_t lock;
	/* A scan reads the sessions it finds changed without the lock, so
	 * that lookups go on meanwhile (a cold store: seconds); a second
	 * caller that would scan waits for the first's. */
	pthread_cond_t scan_done;
	int scanning;
	struct catalog_session *items;
	size_t n, cap;
	int64_t scanned_ns;
	/* "project/stem" -> index in items: a scan finds each of thousands
	 * of files in the table without comparing it with all the others.
	 * Built anew when sessions leave the table (their indexes move). */
	struct strpool keys;
	struct strmap index;
	int index_partial;    /* memory ran out building it: look the slow way */
	/* Names the mount just committed (catalog_renamed), applied at the
	 * next use of the table.  A leaf lock of its own: the committer
	 * holds its session, and the catalog's lock is held while it
	 * acquires sessions, so the committer must not wait for that one. */
	pthread_mutex_t pending_lock;
	struct catalog_pending *pending;
	/* What the watcher heard change since (catalog_changed), under the
	 * same leaf lock: a lookup of a name no session has re-reads these,
	 * not the store, when the watcher hears everything (watched). */
	struct catalog_pending *changed;
	int changed_all;     /* heard a change it cannot name (an overflow) */
	int watched;
	struct filememo *memo; /* borrowed: what catalog_read derived, by file stamp */
	uint64_t version;      /* bumps whenever what a snapshot copies changes */
};

struct catalog_pending {
	char *project, *stem, *name, *title;
	struct catalog_pending *next;
};

/* "project/stem" into key (neither holds a '/'); 0, or -1 when too long. */
static int catalog_key(const char *project, const char *stem, char key[2 * NAME_MAX + 2])
{
	return snprintf(key, 2 * NAME_MAX + 2, "%s/%s", project, stem) < 2 * NAME_MAX + 2 ? 0 : -1;
}

static ps_err catalog_index_add(struct ps_catalog *cat, size_t i)
{
	char key[2 * NAME_MAX + 2];
	uint32_t off;
	if (catalog_key(cat->items[i].project, cat->items[i].stem, key))
		return PS_OK; /* found by no lookup: catalog_find compares then */
	ps_err err = strpool_add(&cat->keys, key, strlen(key), &off);
	if (!err)
		err = strmap_put(&cat->index, &cat->keys, off, (uint32_t)i);
	if (err)
		cat->index_partial = 1;
	return err;
}

static ps_err catalog_index_rebuild(struct ps_catalog *cat)
{
	ps_err err = PS_OK;
	strmap_free(&cat->index);
	strpool_free(&cat->keys);
	cat->index_partial = 0;
	for (size_t i = 0; !err && i < cat->n; i++)
		err = catalog_index_add(cat, i);
	return err;
}

static int64_t catalog_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

ps_err catalog_new(struct ps_store *store, struct ps_catalog **out)
{
	struct ps_catalog *cat = calloc(1, sizeof *cat);
	if (!cat)
		return PS_ERR_NOMEM;
	cat->store = store;
	pthread_mutex_init(&cat->lock, NULL);
	pthread_cond_init(&cat->scan_done, NULL);
	pthread_mutex_init(&cat->pending_lock, NULL);
	*out = cat;
	return PS_OK;
}

void catalog_expire(struct ps_catalog *cat)
{
	lockorder_lock(&cat->lock, LOCK_CATALOG);
	cat->scanned_ns = 0;
	lockorder_unlock(&cat->lock, LOCK_CATALOG);
}

void catalog_session_clear(struct catalog_session *c)
{
	free(c->project);
	free(c->stem);
	free(c->id);
	free(c->cwd);
	free(c->name);
	free(c->title);
	memset(c, 0, sizeof *c);
}

void catalog_set_threads(struct ps_catalog *cat, unsigned threads)
{
	cat->threads = threads;
}

void catalog_set_memo(struct ps_catalog *cat, struct filememo *memo)
{
	cat->memo = memo;
}

void catalog_free(struct ps_catalog *cat)
{
	if (!cat)
		return;
	for (size_t i = 0; i < cat->n; i++)
		catalog_session_clear(&cat->items[i]);
	free(cat->items);
	strmap_free(&cat->index);
	strpool_free(&cat->keys);
	while (cat->changed) {
		struct catalog_pending *p = cat->changed;
		cat->changed = p->next;
		free(p->project);
		free(p->stem);
		free(p);
	}
	while (cat->pending) {
		struct catalog_pending *p = cat->pending;
		cat->pending = p->next;
		free(p->project);
		free(p->stem);
		free(p->name);
		free(p->title);
		free(p);
	}
	pthread_mutex_destroy(&cat->pending_lock);
	pthread_mutex_destroy(&cat->lock);
	pthread_cond_destroy(&cat->scan_done);
	free(cat);
}

/* The title pi's list shows: name, else pi's firstMessage (the text of
 * the first user message that has any, in file order), else "(no
 * messages)".  New string, NULL when memory runs out. */
static char *catalog_title(const struct ps_session *s, const char *name)
{
	struct buf first = BUF_INIT;
	for (uint32_t e = 0; !(name && *name) && e < s->n_entries; e++) {
		if (strcmp(session_str(s, s->entries[e].kind), "user") != 0)
			continue;
		json_t *entry = NULL;
		if (session_load_entry_shared(s, e, &entry) != PS_OK)
			continue;
		int got = sessioninfo_message_text(json_object_get(entry, "message"), &first);
		json_decref(entry);
		if (got)
			break; /* found, or out of memory: the title says "(no messages)" */
	}
	char *title = title_line(name, first.data, first.len, CATALOG_TITLE_MAX);
	buf_free(&first);
	return title;
}

static struct catalog_session *catalog_find(struct ps_catalog *cat, const char *project, const char *stem);

/* Under the lock: takes in the names committed since (catalog_renamed),
 * oldest first. */
static void catalog_apply_pending(struct ps_catalog *cat)
{
	lockorder_lock(&cat->pending_lock, LOCK_CATALOG_PENDING);
	struct catalog_pending *p = cat->pending, *rev = NULL;
	cat->pending = NULL;
	lockorder_unlock(&cat->pending_lock, LOCK_CATALOG_PENDING);
	while (p) { /* pushed newest first: reverse */
		struct catalog_pending *next = p->next;
		p->next = rev;
		rev = p;
		p = next;
	}
	while (rev) {
		struct catalog_pending *next = rev->next;
		struct catalog_session *c = catalog_find(cat, rev->project, rev->stem);
		if (c) {
			free(c->name);
			free(c->title);
			c->name = rev->name;
			c->title = rev->title;
			rev->name = rev->title = NULL;
			c->gen++;
			cat->version++;
		}
		free(rev->project);
		free(rev->stem);
		free(rev->name);
		free(rev->title);
		free(rev);
		rev = next;
	}
}

/* What catalog_read derives, as kept in the memo: 'k', then the key of
 * the overview rows ("project/stem"); the value is the fork flag, then
 * id, cwd, name and title, each ended by a NUL. */
static int catalog_memo_key(const struct catalog_session *c, char *key, size_t size, size_t *len)
{
	int n = snprintf(key, size, "k%s/%s", c->project, c->stem);
	if (n < 0 || (size_t)n >= size)
		return 0;
	*len = (size_t)n;
	return 1;
}

/* The fields as kept for the file with this stamp: 1, else 0. */
static int catalog_read_kept(struct ps_catalog *cat, struct catalog_session *c, const struct filestamp *stamp)
{
	char key[2 * NAME_MAX + 4];
	size_t key_len;
	struct buf got = BUF_INIT;
	if (!catalog_memo_key(c, key, sizeof key, &key_len) ||
	    filememo_get(cat->memo, key, key_len, stamp, &got) != 1) {
		buf_free(&got);
		return 0;
	}
	char *field[4] = { NULL };
	const char *p = got.data + 1, *end = got.data + got.len;
	int ok = got.len >= 1;
	for (int i = 0; ok && i < 4; i++) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		ok = nul && (field[i] = strdup(p)) != NULL;
		p = nul ? nul + 1 : end;
	}
	if (ok) {
		c->fork = got.data[0] == '1';
		c->id = field[0];
		c->cwd = field[1];
		c->name = field[2];
		c->title = field[3];
	} else {
		for (int i = 0; i < 4; i++)
			free(field[i]);
	}
	buf_free(&got);
	return ok;
}

static void catalog_read_keep(struct ps_catalog *cat, const struct catalog_session *c,
			      const struct filestamp *stamp)
{
	char key[2 * NAME_MAX + 4];
	size_t key_len;
	struct buf val = BUF_INIT;
	if (catalog_memo_key(c, key, sizeof key, &key_len) && !buf_putc(&val, c->fork ? '1' : '0') &&
	    !buf_put(&val, c->id, strlen(c->id) + 1) && !buf_put(&val, c->cwd, strlen(c->cwd) + 1) &&
	    !buf_put(&val, c->name, strlen(c->name) + 1) && !buf_put(&val, c->title, strlen(c->title) + 1))
		(void)filememo_put(cat->memo, key, key_len, stamp, val.data, val.len);
	buf_free(&val);
}

/* Reads a session's id, cwd and name: the name needs the whole file (the
 * latest session_info wins), which is what the index does anyway.  What
 * was read of the file as listed (st) is kept in the memo, and taken from
 * it while the file has that stamp: another mount's reading too. */
static void catalog_read(struct ps_catalog *cat, struct catalog_session *c, const struct stat *st)
{
	struct store_ref ref;
	struct filestamp stamp;
	int same = 0;
	free(c->id);
	free(c->cwd);
	free(c->name);
	free(c->title);
	c->id = c->cwd = c->name = c->title = NULL;
	c->fork = 0;
	filestamp_of(st, &stamp);
	if (catalog_read_kept(cat, c, &stamp))
		return;
	/* A session the store holds indexed is brought up to date by reading
	 * what was appended; any other is skimmed, not indexed whole: the
	 * catalog needs its header, name and first user message only. */
	struct ps_session *skim = NULL;
	int held = store_acquire_cached(cat->store, c->project, c->stem, &ref) == PS_OK;
	if (held || store_open_skim(cat->store, c->project, c->stem, &skim) == PS_OK) {
		struct ps_session *s = held ? ref.session : skim;
		char *line = NULL;
		size_t len;
		same = s->dev == st->st_dev && s->ino == st->st_ino && s->size == (uint64_t)st->st_size &&
		       s->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
		if (s->have_header) {
			c->id = strdup(session_str(s, s->session_id));
			if (session_read_header(s, &line, &len) == PS_OK) {
				json_t *h = session_parse_line(line, len);
				const char *cwd = json_string_value(json_object_get(h, "cwd"));
				c->cwd = strdup(cwd ? cwd : "");
				json_decref(h);
				free(line);
			} else {
				same = 0;
			}
			c->name = strdup(s->name == PS_NIL ? "" : session_str(s, s->name));
			c->fork = s->parent_session != PS_NIL;
			c->title = catalog_title(s, c->name);
		}
		if (held)
			store_release(cat->store, &ref);
		session_free(skim);
	}
	if (!c->id)
		c->id = strdup("");
	if (!c->cwd)
		c->cwd = strdup("");
	if (!c->name)
		c->name = strdup("");
	if (!c->title)
		c->title = title_line(NULL, NULL, 0, CATALOG_TITLE_MAX);
	if (same && c->id && c->cwd && c->name && c->title)
		catalog_read_keep(cat, c, &stamp);
}

/* A session a scan found changed, read after the scan let go of the lock. */
struct catalog_read_later {
	struct catalog_session got; /* project and stem, then what was read */
	struct stat st;             /* the file as listed */
	unsigned gen;               /* the table's entry's, when listed */
	int fresh;                  /* still that file after the read */
};

struct catalog_walk {
	struct ps_catalog *cat;
	const char *project;
	ps_err err;
	struct fileset files; /* the session files met: one reached twice is listed once */
	int links;  /* this pass lists the symlinked project folders (else the real ones) */
	int later;  /* changed sessions go to reads[] rather than being read at once */
	struct catalog_read_later *reads;
	size_t n_reads, cap_reads;
};

/* Queues c (listed as st) to be read without the lock: 0 or -1. */
static int catalog_read_queue(struct catalog_walk *w, const struct catalog_session *c, const struct stat *st)
{
	if (w->n_reads == w->cap_reads) {
		size_t cap = w->cap_reads ? 2 * w->cap_reads : 64;
		struct catalog_read_later *reads = realloc(w->reads, cap * sizeof *reads);
		if (!reads)
			return -1;
		w->reads = reads;
		w->cap_reads = cap;
	}
	struct catalog_read_later *r = &w->reads[w->n_reads];
	memset(r, 0, sizeof *r);
	r->got.project = strdup(c->project);
	r->got.stem = strdup(c->stem);
	if (!r->got.project || !r->got.stem) {
		catalog_session_clear(&r->got);
		return -1;
	}
	r->st = *st;
	r->gen = c->gen;
	w->n_reads++;
	return 0;
}

static struct catalog_session *catalog_find(struct ps_catalog *cat, const char *project, const char *stem)
{
	char key[2 * NAME_MAX + 2];
	if (!cat->index_partial && !catalog_key(project, stem, key)) {
		uint32_t i = strmap_get(&cat->index, &cat->keys, key, strlen(key));
		return i == PS_NIL ? NULL : &cat->items[i];
	}
	for (size_t i = 0; i < cat->n; i++)
		if (!strcmp(cat->items[i].stem, stem) && !strcmp(cat->items[i].project, project))
			return &cat->items[i];
	return NULL;
}

static int catalog_on_session(void *ctx, const char *name, const struct stat *st)
{
	struct catalog_walk *w = ctx;
	struct ps_catalog *cat = w->cat;
	int64_t mtime = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	int met = fileset_meet(&w->files, st->st_dev, st->st_ino);
	if (met < 0) {
		w->err = PS_ERR_NOMEM;
		return 1;
	}
	if (met)
		return 0; /* the same file, reached through a linked project */
	struct catalog_session *c = catalog_find(cat, w->project, name);
	if (!c) {
		if (cat->n == cat->cap) {
			size_t cap = cat->cap ? cat->cap * 2 : 64;
			struct catalog_session *items = realloc(cat->items, cap * sizeof *items);
			if (!items) {
				w->err = PS_ERR_NOMEM;
				return 1;
			}
			cat->items = items;
			cat->cap = cap;
		}
		c = &cat->items[cat->n++];
		memset(c, 0, sizeof *c);
		c->project = strdup(w->project);
		c->stem = strdup(name);
		if (!c->project || !c->stem) {
			w->err = PS_ERR_NOMEM;
			return 1;
		}
		c->size = UINT64_MAX;
		cat->version++;
		if ((w->err = catalog_index_add(cat, cat->n - 1)))
			return 1;
	}
	c->seen = 1;
	if (c->buried || c->mode != st->st_mode || c->uid != st->st_uid || c->gid != st->st_gid)
		cat->version++;
	c->buried = 0;
	/* chmod and chown change no size or mtime: taken at every scan. */
	c->mode = st->st_mode;
	c->uid = st->st_uid;
	c->gid = st->st_gid;
	if (c->size != (uint64_t)st->st_size || c->mtime_ns != mtime) {
		if (w->later) {
			if (catalog_read_queue(w, c, st)) {
				w->err = PS_ERR_NOMEM;
				return 1;
			}
			return 0;
		}
		c->size = (uint64_t)st->st_size;
		c->mtime_ns = mtime;
		catalog_read(cat, c, st);
		c->gen++;
		cat->version++;
	}
	return 0;
}

/* The scan's reads, without the lock (held on entry and on return): each
 * queued session read, then what was read taken into the table where its
 * entry did not change meanwhile (a commit's name, an add: newer than
 * this read); its stamp only where the file did not change either, so
 * that the next scan reads again what it did not take or took half. */
static void catalog_read_one(void *ctx, size_t i)
{
	struct catalog_walk *w = ctx;
	struct catalog_read_later *r = &w->reads[i];
	struct stat now;
	catalog_read(w->cat, &r->got, &r->st);
	r->fresh = store_stat_session(w->cat->store, r->got.project, r->got.stem, &now) == PS_OK &&
		   now.st_dev == r->st.st_dev && now.st_ino == r->st.st_ino && now.st_size == r->st.st_size &&
		   now.st_mtim.tv_sec == r->st.st_mtim.tv_sec && now.st_mtim.tv_nsec == r->st.st_mtim.tv_nsec;
}

static void catalog_read_queued(struct ps_catalog *cat, struct catalog_walk *w)
{
	lockorder_unlock(&cat->lock, LOCK_CATALOG);
	/* A first scan reads every session: on all cores (each read only
	 * fills its own queue entry). */
	(void)fanout_run(w->n_reads, cat->threads, catalog_read_one, NULL, w);
	filememo_flush(cat->memo);
	lockorder_lock(&cat->lock, LOCK_CATALOG);
	for (size_t i = 0; i < w->n_reads; i++) {
		struct catalog_read_later *r = &w->reads[i];
		struct catalog_session *c = catalog_find(cat, r->got.project, r->got.stem);
		if (c && c->gen == r->gen) {
			free(c->id);
			free(c->cwd);
			free(c->name);
			free(c->title);
			c->id = r->got.id;
			c->cwd = r->got.cwd;
			c->name = r->got.name;
			c->title = r->got.title;
			c->fork = r->got.fork;
			r->got.id = r->got.cwd = r->got.name = r->got.title = NULL;
			/* A file that changed while it was read (pi appending
			 * to it) is shown as read, and read again next time. */
			if (r->fresh) {
				c->size = (uint64_t)r->st.st_size;
				c->mtime_ns = (int64_t)r->st.st_mtim.tv_sec * 1000000000 + r->st.st_mtim.tv_nsec;
			}
			c->gen++;
			cat->version++;
		}
		catalog_session_clear(&r->got);
	}
	free(w->reads);
	w->reads = NULL;
	w->n_reads = w->cap_reads = 0;
}

static int catalog_on_project(void *ctx, const char *name, const struct stat *st)
{
	struct catalog_walk *w = ctx;
	(void)st;
	/* Real folders first, so a session reached both ways is listed under
	 * the folder that holds it. */
	if (store_project_is_link(w->cat->store, name) != w->links)
		return 0;
	w->project = name;
	store_list_sessions(w->cat->store, name, catalog_on_session, w);
	return w->err != PS_OK;
}

/* Brings the table up to date with the store; called, and returning, with
 * the lock held, which it lets go of while it reads sessions. */
static ps_err catalog_scan(struct ps_catalog *cat)
{
	struct catalog_walk w = { cat, NULL, PS_OK, FILESET_INIT, 0, 1, NULL, 0, 0 };
	if (cat->scanning) { /* another's scan: as fresh as this one would be */
		while (cat->scanning)
			pthread_cond_wait(&cat->scan_done, &cat->lock);
		return PS_OK;
	}
	cat->scanning = 1;
	for (size_t i = 0; i < cat->n; i++)
		cat->items[i].seen = 0;
	if (cat->index_partial)
		catalog_index_rebuild(cat); /* else still partial: the slow way again */
	/* The session files that lie directly in the store (project ""), then
	 * the real project folders, then the symlinked ones. */
	w.project = "";
	ps_err err = store_list_sessions(cat->store, "", catalog_on_session, &w);
	if (!err)
		err = w.err;
	for (w.links = 0; !err && w.links < 2; w.links++) {
		err = store_list_projects(cat->store, catalog_on_project, &w);
		if (!err)
			err = w.err;
	}
	fileset_free(&w.files);
	catalog_read_queued(cat, &w);
	/* Sessions gone from the store go from the table, but for those in
	 * the trash whose rm -r is under way (store_bury): their names must
	 * resolve until its last rmdir, though no view lists them. */
	size_t before = cat->n;
	for (size_t i = 0; i < cat->n;) {
		struct stat st;
		if (!cat->items[i].seen &&
		    store_stat_session(cat->store, cat->items[i].project, cat->items[i].stem, &st) == PS_OK) {
			cat->version += !cat->items[i].buried;
			cat->items[i++].buried = 1;
		} else if (!cat->items[i].seen) {
			catalog_session_clear(&cat->items[i]);
			cat->items[i] = cat->items[--cat->n];
		} else {
			i++;
		}
	}
	if (cat->n != before) {
		cat->version++;
		ps_err rebuilt = catalog_index_rebuild(cat);
		if (!err)
			err = rebuilt;
	}
	cat->scanning = 0;
	pthread_cond_broadcast(&cat->scan_done);
	return err;
}

/* Under the lock: reads (when `read`: after a scan, the scan has) and
 * frees what the watcher heard change, a session or a whole project. */
static void catalog_read_changed(struct ps_catalog *cat, struct catalog_pending *changed, int read)
{
	while (changed) {
		struct catalog_pending *next = changed->next;
		struct catalog_walk w = { cat, changed->project, PS_OK, FILESET_INIT, 0, 0, NULL, 0, 0 };
		struct stat st;
		if (read && !changed->stem)
			store_list_sessions(cat->store, changed->project, catalog_on_session, &w);
		else if (read && store_stat_session(cat->store, changed->project, changed->stem, &st) == PS_OK)
			catalog_on_session(&w, changed->stem, &st);
		fileset_free(&w.files);
		free(changed->project);
		free(changed->stem);
		free(changed);
		changed = next;
	}
}

/* Under the lock: the table as fresh as the views need it.  The store is
 * scanned at most once a second; within that second, what the watcher
 * heard change is read at once, so that an append shows in recent/ and
 * the other views right away, at the cost of reading what changed. */
static ps_err catalog_freshen(struct ps_catalog *cat)
{
	int64_t now = catalog_now_ns();
	if (!cat->scanned_ns || now - cat->scanned_ns > 1000000000) {
		ps_err err = catalog_scan(cat);
		cat->scanned_ns = now;
		return err;
	}
	lockorder_lock(&cat->pending_lock, LOCK_CATALOG_PENDING);
	struct catalog_pending *changed = cat->watched && !cat->changed_all ? cat->changed : NULL;
	if (changed)
		cat->changed = NULL;
	lockorder_unlock(&cat->pending_lock, LOCK_CATALOG_PENDING);
	catalog_read_changed(cat, changed, 1);
	return PS_OK;
}

static int catalog_newest_first(const void *a, const void *b)
{
	const struct catalog_session *x = a, *y = b;
	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns > y->mtime_ns ? -1 : 1;
	/* Then the file name, descending: pi's SessionManager.listAll() order
	 * (localeCompare; the same for pi's <timestamp>_<uuid> names), which
	 * search/ keeps where pi's `modified` ties. */
	int c = strcmp(y->stem, x->stem);
	return c ? c : strcmp(x->project, y->project);
}

void catalog_snapshot_free(struct catalog_session *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		catalog_session_clear(&items[i]);
	free(items);
}

ps_err catalog_snapshot(struct ps_catalog *cat, struct catalog_session **out, size_t *n)
{
	uint64_t version = UINT64_MAX;
	return catalog_snapshot_since(cat, &version, out, n);
}

ps_err catalog_snapshot_since(struct ps_catalog *cat, uint64_t *version, struct catalog_session **out, size_t *n)
{
	ps_err err = PS_OK;
	lockorder_lock(&cat->lock, LOCK_CATALOG);
	catalog_apply_pending(cat);
	err = catalog_freshen(cat);
	if (!err && cat->version == *version) {
		lockorder_unlock(&cat->lock, LOCK_CATALOG);
		*out = NULL;
		*n = 0;
		return PS_OK;
	}
	*version = cat->version;
	struct catalog_session *copy = calloc(cat->n ? cat->n : 1, sizeof *copy);
	if (!copy)
		err = PS_ERR_NOMEM;
	size_t count = 0;
	for (size_t i = 0; copy && i < cat->n; i++) {
		const struct catalog_session *c = &cat->items[i];
		if (c->buried)
			continue;
		copy[count++] = (struct catalog_session){
			strdup(c->project), strdup(c->stem), strdup(c->id ? c->id : ""), strdup(c->cwd ? c->cwd : ""),
			strdup(c->name ? c->name : ""), strdup(c->title ? c->title : ""), c->mtime_ns, c->size,
			c->mode, c->uid, c->gid, 1, c->fork, 0, 0,
		};
		const struct catalog_session *got = &copy[count - 1];
		if (!got->project || !got->stem || !got->id || !got->cwd || !got->name || !got->title)
			err = PS_ERR_NOMEM;
	}
	lockorder_unlock(&cat->lock, LOCK_CATALOG);
	if (err) {
		if (copy)
			catalog_snapshot_free(copy, count);
		return err;
	}
	qsort(copy, count, sizeof *copy, catalog_newest_first);
	*out = copy;
	*n = count;
	return PS_OK;
}

/* Under the lock: the newest session of project with that name, or NULL. */
static const struct catalog_session *catalog_named(const struct ps_catalog *cat, const char *project, const char *name)
{
	const struct catalog_session *best = NULL;
	for (size_t i = 0; i < cat->n; i++) {
		const struct catalog_session *c = &cat->items[i];
		if (c->name && strcmp(c->name, name) == 0 && strcmp(c->project, project) == 0 &&
		    (!best || c->mtime_ns > best->mtime_ns))
			best = c;
	}
	return best;
}

void catalog_set_watched(struct ps_catalog *cat, int watched)
{
	lockorder_lock(&cat->pending_lock, LOCK_CATALOG_PENDING);
	cat->watched = watched;
	lockorder_unlock(&cat->pending_lock, LOCK_CATALOG_PENDING);
}

void catalog_changed(struct ps_catalog *cat, const char *project, const char *stem)
{
	lockorder_lock(&cat->pending_lock, LOCK_CATALOG_PENDING);
	if (!project) {
		cat->changed_all = 1;
		goto out;
	}
	for (struct catalog_pending *p = cat->changed; p; p = p->next)
		if (strcmp(p->project, project) == 0 &&
		    ((!p->stem && !stem) || (p->stem && stem && strcmp(p->stem, stem) == 0)))
			goto out; /* heard already */
	struct catalog_pending *p = calloc(1, sizeof *p);
	if (p && (p->project = strdup(project)) && (!stem || (p->stem = strdup(stem)))) {
		p->next = cat->changed;
		cat->changed = p;
	} else {
		if (p)
			free(p->project);
		free(p);
		cat->changed_all = 1; /* out of memory: the slow way */
	}
out:
	lockorder_unlock(&cat->pending_lock, LOCK_CATALOG_PENDING);
}

/* Under the lock, on a lookup of a name no session has: brings the table
 * up to date.  Where the watcher hears every change, only the sessions
 * (and projects) it heard change are read again, so a loop of lookups
 * of names nobody has (stat PROJECT/x$RANDOM) never reads the store
 * directory; elsewhere (a remote store, no watcher) the whole store is
 * scanned, at most once a second.  1 when anything was read. */
static int catalog_refresh_for_miss(struct ps_catalog *cat)
{
	int64_t now = catalog_now_ns();
	lockorder_lock(&cat->pending_lock, LOCK_CATALOG_PENDING);
	int watched = cat->watched, all = cat->changed_all;
	struct catalog_pending *changed = NULL;
	int scan = !cat->scanned_ns || !watched || all;
	if (scan && cat->scanned_ns && now - cat->scanned_ns <= 1000000000) {
		lockorder_unlock(&cat->pending_lock, LOCK_CATALOG_PENDING);
		return 0; /* scanned within the second */
	}
	if (watched) { /* what was heard is read now, by itself or in the scan */
		changed = cat->changed;
		cat->changed = NULL;
		if (scan)
			cat->changed_all = 0;
	}
	lockorder_unlock(&cat->pending_lock, LOCK_CATALOG_PENDING);
	if (scan) {
		catalog_scan(cat);
		cat->scanned_ns = now;
	}
	int read = scan || changed != NULL;
	catalog_read_changed(cat, changed, !scan);
	return read;
}

int catalog_name_to_stem(struct ps_catalog *cat, const char *project, const char *name, char stem[256])
{
	struct stat st;
	int found = 0;
	/* The hot path (every call of the mount under a project): a session
	 * file's own name, known to the table or to the directory, costs a
	 * hash lookup or a stat, never a scan. */
	lockorder_lock(&cat->lock, LOCK_CATALOG);
	catalog_apply_pending(cat);
	int known = catalog_find(cat, project, name) != NULL;
	lockorder_unlock(&cat->lock, LOCK_CATALOG);
	/* Dot names (.git, .hg, .DS_Store: what shells, prompts and file
	 * managers probe in every directory) are never a session's name
	 * here: they must not cost a scan. */
	if (known || name[0] == '.' || store_stat_session(cat->store, project, name, &st) == PS_OK)
		return 0;
	lockorder_lock(&cat->lock, LOCK_CATALOG);
	catalog_apply_pending(cat);
	const struct catalog_session *c = catalog_named(cat, project, name);
	if (!c && catalog_refresh_for_miss(cat))
		c = catalog_named(cat, project, name);
	if (c && strlen(c->stem) < 256) {
		memcpy(stem, c->stem, strlen(c->stem) + 1);
		found = c->fork ? 2 : 1;
	}
	lockorder_unlock(&cat->lock, LOCK_CATALOG);
	return found;
}

void catalog_renamed(struct ps_catalog *cat, const char *project, const char *stem, const struct ps_session *s,
		     const char *name)
{
	struct catalog_pending *p = calloc(1, sizeof *p);
	if (!p)
		return; /* the next scan learns it */
	p->project = strdup(project);
	p->stem = strdup(stem);
	p->name = strdup(name);
	p->title = catalog_title(s, name);
	if (!p->project || !p->stem || !p->name || !p->title) {
		free(p->project);
		free(p->stem);
		free(p->name);
		free(p->title);
		free(p);
		return;
	}
	lockorder_lock(&cat->pending_lock, LOCK_CATALOG_PENDING);
	p->next = cat->pending;
	cat->pending = p;
	lockorder_unlock(&cat->pending_lock, LOCK_CATALOG_PENDING);
}

ps_err catalog_add(struct ps_catalog *cat, const char *project, const char *stem)
{
	struct stat st;
	ps_err err = store_stat_session(cat->store, project, stem, &st);
	if (err)
		return err;
	struct catalog_walk w = { cat, project, PS_OK, FILESET_INIT, 0, 0, NULL, 0, 0 };
	lockorder_lock(&cat->lock, LOCK_CATALOG);
	catalog_apply_pending(cat);
	catalog_on_session(&w, stem, &st);
	lockorder_unlock(&cat->lock, LOCK_CATALOG);
	fileset_free(&w.files);
	return w.err;
}

char *catalog_project_cwd(struct ps_catalog *cat, const char *project)
{
	char *cwd = NULL;
	lockorder_lock(&cat->lock, LOCK_CATALOG);
	catalog_apply_pending(cat);
	catalog_freshen(cat);
	const struct catalog_session *best = NULL;
	for (size_t i = 0; i < cat->n; i++) {
		const struct catalog_session *c = &cat->items[i];
		if (c->cwd && *c->cwd && strcmp(c->project, project) == 0 && (!best || c->mtime_ns > best->mtime_ns))
			best = c;
	}
	if (best)
		cwd = strdup(best->cwd);
	lockorder_unlock(&cat->lock, LOCK_CATALOG);
	return cwd;
}
