/* Derived values on disk, by key and stat stamp (diskmemo.h), in SQLite:
 * a made-for-the-job embedded store, rather than a file format of our own.
 *
 * Written without syncs.  A first search of a large store keeps hundreds
 * of megabytes of text here, and with a sync at each commit that took
 * longer than reading the store.  So the database runs with
 * synchronous=OFF, which survives the daemon's crash (what it wrote is in
 * the system's page cache) but not the system's: before the first
 * unsynced write of a mount, a marker naming this boot (the kernel's
 * boot_id) is committed with a full sync, and it is removed, in a fully
 * synced commit that flushes everything before it, when the mount closes
 * the database.  A database that still holds the marker of another boot
 * may have been torn by a crash of the system, and is made again.
 *
 * In WAL mode: a rollback journal would write the new pages once, not
 * twice, but its writer locks readers out once its cache spills, until
 * it commits, and a second mount of the store (or a daemon started while
 * another's batch is open) then waited a second per read: writes through
 * the mount hung (tests/stress/t_kill9). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cachedir.h"
#include "diskmemo.h"
#include "lockorder.h"

/* Puts per transaction at most: a build of a 5,000-session store commits
 * a few times, not 5,000 times. */
#define DISKMEMO_BATCH 2000

/* The layout of the tables; a database with another is made again. */
#define DISKMEMO_SCHEMA "3" /* 3: 16 KiB pages, auto_vacuum=INCREMENTAL so that a trim gives room back */

/* A value no mount used for this many days is dropped when a mount
 * opens the database: the rows of sessions deleted or moved away do not
 * pile up. */
#define DISKMEMO_KEEP_DAYS 30

/* A kept value with its stamp, the day it was last seen and its row. */
#define DISKMEMO_GET_SQL "SELECT dev, ino, size, mtime, ctime, value, seen, rowid FROM kept WHERE key = ?1"

/* Reading connections at most: one per reading thread of a machine
 * like this one, and a few more. */
#define DISKMEMO_READERS 8

struct diskmemo_reader {
	sqlite3 *db;         /* NULL: not open */
	sqlite3_stmt *get;
	unsigned gen;        /* the database's generation it was opened on */
	int busy;            /* lent to a get */
};

struct diskmemo {
	pthread_mutex_t lock;
	sqlite3 *db;                 /* NULL: disabled */
	sqlite3_stmt *get, *put, *drop, *touch, *has;
	int64_t today;               /* days since the epoch, at open */
	char *path;
	int in_batch;
	unsigned batched;
	char boot[64];               /* this boot's id; "": unknown (then every commit syncs) */
	int marked;                  /* the unsynced marker is committed (see the top) */
	/* Days to set as seen, applied at the next flush: a touch made at
	 * once would open a batch, and a get while one is open must go
	 * through the writing connection (see readers). */
	sqlite3_int64 *touches;
	size_t n_touches, cap_touches;
	/* Connections that only read, for gets while no batch is open, so that a
	 * search's threads read the kept texts at once instead of one after
	 * another under the lock (a remount's first search reads hundreds of
	 * megabytes here).  A connection sees only what was committed: with
	 * a batch open, gets use the writing one, which sees its own puts. */
	pthread_mutex_t pool_lock;   /* taken after lock, never before */
	struct diskmemo_reader readers[DISKMEMO_READERS];
	unsigned gen;                /* bumped when the database is made again or closed */
	diskmemo_note_fn note;
	void *note_ctx;
	int hold;                    /* the lock that says a mount uses it (cachedir_hold), or -1 */
	uint64_t max;                /* the cache directory's bound (diskmemo_set_bound); 0: none */
	uint64_t budget;             /* the bytes of it this database may take */
};

static void diskmemo_notef(struct diskmemo *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void diskmemo_notef(struct diskmemo *m, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (m->note)
		m->note(m->note_ctx, msg);
}

/* mkdir -p with mode 0700 for what is made (the XDG base directory
 * specification's mode for a cache directory it makes). */
static int diskmemo_mkdirs(const char *dir)
{
	char *p = strdup(dir);
	if (!p)
		return -1;
	for (char *s = p + 1;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0700) != 0 && errno != EEXIST) {
				free(p);
				return -1;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return 0;
}

static void diskmemo_reader_close(struct diskmemo_reader *r)
{
	sqlite3_finalize(r->get);
	sqlite3_close(r->db);
	r->get = NULL;
	r->db = NULL;
}

/* Under the lock: the readers of this database go (those lent now are
 * closed when given back: their generation is old). */
static void diskmemo_readers_drop(struct diskmemo *m)
{
	lockorder_lock(&m->pool_lock, LOCK_DISK_POOL);
	m->gen++;
	for (size_t i = 0; i < DISKMEMO_READERS; i++)
		if (!m->readers[i].busy)
			diskmemo_reader_close(&m->readers[i]);
	lockorder_unlock(&m->pool_lock, LOCK_DISK_POOL);
}

static void diskmemo_close(struct diskmemo *m)
{
	diskmemo_readers_drop(m);
	m->n_touches = 0; /* rows of a database that goes (the last flush applied the rest) */
	if (m->db && m->in_batch)
		sqlite3_exec(m->db, "COMMIT", NULL, NULL, NULL);
	/* A checkpoint with a full sync flushes the database file, and with
	 * it every page an unsynced checkpoint wrote; only then is the
	 * marker removed, in a synced commit. */
	if (m->db && m->marked)
		sqlite3_exec(m->db,
			     "PRAGMA synchronous=FULL; PRAGMA wal_checkpoint(FULL); DELETE FROM meta WHERE k = 'unsynced'",
			     NULL, NULL, NULL);
	m->marked = 0;
	m->in_batch = 0;
	m->batched = 0;
	sqlite3_finalize(m->get);
	sqlite3_finalize(m->put);
	sqlite3_finalize(m->drop);
	sqlite3_finalize(m->touch);
	sqlite3_finalize(m->has);
	m->get = m->put = m->drop = m->touch = NULL;
	sqlite3_close(m->db);
	m->db = NULL;
}

/* The database's meta value k, or NULL (new). */
static char *diskmemo_meta(sqlite3 *db, const char *k)
{
	sqlite3_stmt *st = NULL;
	char *v = NULL;
	if (sqlite3_prepare_v2(db, "SELECT v FROM meta WHERE k = ?1", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, k, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		v = strdup(t ? (const char *)t : "");
	}
	sqlite3_finalize(st);
	return v;
}

/* This boot's id into m->boot, or "" where the kernel does not tell it. */
static void diskmemo_read_boot(struct diskmemo *m)
{
	m->boot[0] = '\0';
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return;
	if (!fgets(m->boot, sizeof m->boot, f))
		m->boot[0] = '\0';
	m->boot[strcspn(m->boot, "\n")] = '\0';
	fclose(f);
}

/* Outside a batch: the marker of unsynced writes, committed with a full
 * sync before the first of them.  0, or an SQLite error. */
static int diskmemo_mark(struct diskmemo *m)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_exec(m->db, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(m->db, "INSERT OR REPLACE INTO meta(k, v) VALUES ('unsynced', ?1)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, m->boot, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(m->db);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(m->db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		m->marked = 1;
	return rc;
}

/* Opens m->path as the database for this store and format: 0, or -1 with
 * why it cannot be used in why. */
static int diskmemo_try(struct diskmemo *m, const char *store_path, const char *format, char *why, size_t why_size)
{
	int fd = open(m->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(why, why_size, "cannot be opened (%s)", strerror(errno));
		return -1;
	}
	close(fd);
	int rc = sqlite3_open_v2(m->path, &m->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	char *have_schema = NULL, *have_format = NULL, *have_store = NULL, *unsynced = NULL;
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(m->db, 1000);
		rc = sqlite3_exec(m->db,
				  /* 16 KiB pages (set before the first table): a search text
				   * of megabytes is read in few overflow pages, not thousands
				   * (4 KiB made a remount's search of the bench's 2 GB store
				   * 25% slower), and a session's values do not each round up
				   * to 64 KiB (which took a store of 500 small sessions 33 MB
				   * of cache where 16 KiB takes 25 MB, searched as fast). */
				  "PRAGMA page_size=16384; PRAGMA auto_vacuum=INCREMENTAL;"
				  "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
				  /* The log checkpointed every 256 pages (4 MiB), and cut back
				   * to 8 MiB after: at SQLite's default of 1,000 pages of
				   * 64 KiB it grew to 64 MiB and more while mounted. */
				  "PRAGMA wal_autocheckpoint=256; PRAGMA journal_size_limit=8388608;"
				  "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);"
				  "CREATE TABLE IF NOT EXISTS kept(key BLOB PRIMARY KEY, dev INTEGER, ino INTEGER,"
				  " size INTEGER, mtime INTEGER, ctime INTEGER, seen INTEGER, value BLOB NOT NULL);",
				  NULL, NULL, NULL);
	}
	if (rc == SQLITE_OK) {
		have_schema = diskmemo_meta(m->db, "schema");
		have_format = diskmemo_meta(m->db, "format");
		have_store = diskmemo_meta(m->db, "store");
		if (!have_schema && !have_format && !have_store) {
			sqlite3_stmt *st = NULL;
			rc = sqlite3_prepare_v2(m->db, "INSERT INTO meta(k, v) VALUES ('schema', ?1), ('format', ?2), ('store', ?3)",
						-1, &st, NULL);
			if (rc == SQLITE_OK) {
				sqlite3_bind_text(st, 1, DISKMEMO_SCHEMA, -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 2, format, -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 3, store_path, -1, SQLITE_STATIC);
				rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(m->db);
			}
			sqlite3_finalize(st);
		} else if (!have_schema || strcmp(have_schema, DISKMEMO_SCHEMA) != 0 || !have_format ||
			   strcmp(have_format, format) != 0) {
			snprintf(why, why_size, "from another version (%s)", have_format ? have_format : "none");
			rc = -1;
		} else if (!have_store || strcmp(have_store, store_path) != 0) {
			snprintf(why, why_size, "made for another store (%s)", have_store ? have_store : "none");
			rc = -1;
		} else if ((unsynced = diskmemo_meta(m->db, "unsynced")) && strcmp(unsynced, m->boot) != 0) {
			snprintf(why, why_size, "written without a sync before the system restarted (it may be torn)");
			rc = -1;
		}
	}
	if (rc == SQLITE_OK) {
		sqlite3_stmt *st = NULL;
		rc = sqlite3_prepare_v2(m->db, "DELETE FROM kept WHERE seen < ?1", -1, &st, NULL);
		if (rc == SQLITE_OK) {
			sqlite3_bind_int64(st, 1, m->today - DISKMEMO_KEEP_DAYS);
			rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(m->db);
		}
		sqlite3_finalize(st);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(m->db,
					DISKMEMO_GET_SQL,
					-1, &m->get, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(m->db,
					"INSERT OR REPLACE INTO kept(key, dev, ino, size, mtime, ctime, seen, value)"
					" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?8, ?7)",
					-1, &m->put, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(m->db, "UPDATE kept SET seen = ?1 WHERE rowid = ?2", -1, &m->touch, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(m->db, "DELETE FROM kept WHERE key = ?1", -1, &m->drop, NULL);
	if (rc == SQLITE_OK) /* the stamp only: its columns come before the value's pages */
		rc = sqlite3_prepare_v2(m->db, "SELECT dev, ino, size, mtime, ctime FROM kept WHERE key = ?1", -1,
					&m->has, NULL);
	if (rc > 0)
		snprintf(why, why_size, "unusable (%s)", m->db ? sqlite3_errmsg(m->db) : sqlite3_errstr(rc));
	free(have_schema);
	free(have_format);
	free(have_store);
	free(unsynced);
	if (rc == SQLITE_OK && m->boot[0])
		rc = sqlite3_exec(m->db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		diskmemo_close(m);
		return -1;
	}
	return 0;
}

static void diskmemo_unlink(const char *path)
{
	static const char *const tails[] = { "", "-wal", "-shm", "-journal" };
	char p[4096];
	for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++)
		if (snprintf(p, sizeof p, "%s%s", path, tails[i]) < (int)sizeof p)
			unlink(p);
}

ps_err diskmemo_open(const char *dir, const char *store_path, const char *format, diskmemo_note_fn note,
		     void *note_ctx, struct diskmemo **out)
{
	struct diskmemo *m = calloc(1, sizeof *m);
	*out = NULL;
	if (!m)
		return PS_ERR_NOMEM;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->pool_lock, NULL);
	m->today = (int64_t)time(NULL) / 86400;
	m->note = note;
	m->note_ctx = note_ctx;
	m->hold = -1;
	diskmemo_read_boot(m);
	*out = m;
	if (diskmemo_mkdirs(dir) != 0) {
		diskmemo_notef(m, "the cache directory %s cannot be made (%s): every mount reads the store afresh",
			       dir, strerror(errno));
		return PS_ERR_IO;
	}
	if (!(m->path = cachedir_db_path(dir, store_path)))
		return PS_ERR_NOMEM;
	/* Held from before the first open: a sweep by another mount or
	 * `pisession cache clear` leaves a database in use alone. */
	m->hold = cachedir_hold(m->path);
	char why[1024];
	if (diskmemo_try(m, store_path, format, why, sizeof why) == 0)
		return PS_OK;
	diskmemo_notef(m, "the cache %s was %s: made again", m->path, why);
	diskmemo_unlink(m->path);
	if (diskmemo_try(m, store_path, format, why, sizeof why) == 0)
		return PS_OK;
	diskmemo_notef(m, "the cache %s %s: every mount reads the store afresh", m->path, why);
	free(m->path);
	m->path = NULL;
	cachedir_release(m->hold);
	m->hold = -1;
	return PS_ERR_IO;
}

void diskmemo_free(struct diskmemo *m)
{
	if (!m)
		return;
	diskmemo_flush(m);
	diskmemo_close(m);
	cachedir_release(m->hold); /* after SQLite is done with the files */
	free(m->touches);
	free(m->path);
	pthread_mutex_destroy(&m->pool_lock);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

const char *diskmemo_path(const struct diskmemo *m)
{
	return m && m->db ? m->path : NULL;
}

/* Under the lock, after a failed step: a database found corrupt while
 * mounted is dropped and made again, so the next build fills it anew. */
static void diskmemo_failed(struct diskmemo *m, int rc)
{
	if ((rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_NOTADB)
		return; /* busy (another mount's write) or full: this value is not kept */
	char *store = diskmemo_meta(m->db, "store"), *format = diskmemo_meta(m->db, "format");
	char why[1024];
	diskmemo_notef(m, "the cache %s is corrupt (%s): made again", m->path, sqlite3_errstr(rc));
	diskmemo_close(m);
	diskmemo_unlink(m->path);
	if (!store || !format || diskmemo_try(m, store, format, why, sizeof why) != 0)
		diskmemo_notef(m, "the cache %s cannot be made again: this mount goes on without it", m->path);
	free(store);
	free(format);
}

/* Under the lock: the open batch, begun where none is. */
static void diskmemo_begin(struct diskmemo *m)
{
	if (!m->in_batch && m->boot[0] && !m->marked && diskmemo_mark(m) != SQLITE_OK)
		sqlite3_exec(m->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL); /* no marker: sync each commit */
	if (!m->in_batch && sqlite3_exec(m->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK)
		m->in_batch = 1;
}

/* Under the lock, after a change in the batch: committed every
 * DISKMEMO_BATCH changes. */
static void diskmemo_batched(struct diskmemo *m)
{
	if (m->in_batch && ++m->batched >= DISKMEMO_BATCH) {
		if (sqlite3_exec(m->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
			sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
		m->in_batch = 0;
		m->batched = 0;
	}
}

static int diskmemo_same(sqlite3_stmt *st, const struct filestamp *s)
{
	return (uint64_t)sqlite3_column_int64(st, 0) == s->dev && (uint64_t)sqlite3_column_int64(st, 1) == s->ino &&
	       (uint64_t)sqlite3_column_int64(st, 2) == s->size && sqlite3_column_int64(st, 3) == s->mtime_ns &&
	       sqlite3_column_int64(st, 4) == s->ctime_ns;
}

/* Under the lock: what a get found to do to the kept row.  A touch
 * waits for the next flush (diskmemo_apply_touches); a stale value is
 * dropped now, in the open batch. */
static void diskmemo_after_get(struct diskmemo *m, const char *key, size_t key_len, sqlite3_int64 touch, int stale)
{
	if (touch && m->db) {
		if (m->n_touches == m->cap_touches) {
			size_t cap = m->cap_touches ? 2 * m->cap_touches : 256;
			sqlite3_int64 *t = realloc(m->touches, cap * sizeof *t);
			if (t) {
				m->touches = t;
				m->cap_touches = cap;
			}
		}
		if (m->n_touches < m->cap_touches)
			m->touches[m->n_touches++] = touch; /* else it is seen again next mount */
	}
	if (stale && m->db) {
		diskmemo_begin(m);
		sqlite3_bind_blob(m->drop, 1, key, (int)key_len, SQLITE_STATIC);
		int rc = sqlite3_step(m->drop);
		sqlite3_reset(m->drop);
		if (rc != SQLITE_DONE)
			diskmemo_failed(m, rc);
	}
}

/* Runs the get statement st for key: 1 with the value appended to out,
 * 0, -1 when out cannot grow; *touch the row to mark seen today (0:
 * none), *stale when a value of another stamp is kept, *rc the step's. */
static int diskmemo_select(struct diskmemo *m, sqlite3_stmt *st, const char *key, size_t key_len,
			   const struct filestamp *stamp, struct buf *out, sqlite3_int64 *touch, int *stale, int *rc)
{
	int found = 0;
	*touch = 0;
	*stale = 0;
	sqlite3_bind_blob(st, 1, key, (int)key_len, SQLITE_STATIC);
	*rc = sqlite3_step(st);
	if (*rc == SQLITE_ROW) {
		if (diskmemo_same(st, stamp)) {
			const void *v = sqlite3_column_blob(st, 5);
			size_t n = (size_t)sqlite3_column_bytes(st, 5);
			found = buf_put(out, v ? v : "", n) ? -1 : 1;
			if (sqlite3_column_int64(st, 6) != m->today)
				*touch = sqlite3_column_int64(st, 7);
		} else {
			*stale = 1;
		}
	}
	sqlite3_reset(st);
	return found;
}

/* A reading connection lent for one get, opened where none is idle
 * yet; NULL when none can be had (the get then takes the lock). */
static struct diskmemo_reader *diskmemo_reader_take(struct diskmemo *m)
{
	struct diskmemo_reader *r = NULL;
	unsigned gen;
	lockorder_lock(&m->pool_lock, LOCK_DISK_POOL);
	for (int open = 1; !r && open >= 0; open--) /* an open one first */
		for (size_t i = 0; !r && i < DISKMEMO_READERS; i++)
			if (!m->readers[i].busy && (m->readers[i].db != NULL) == open)
				r = &m->readers[i];
	if (r)
		r->busy = 1;
	gen = m->gen;
	lockorder_unlock(&m->pool_lock, LOCK_DISK_POOL);
	if (!r)
		return NULL;
	if (r->db && r->gen != gen)
		diskmemo_reader_close(r);
	if (!r->db) {
		r->gen = gen;
		/* Read-write, though it only reads: a WAL reader maps the
		 * shared-memory index, which a read-only open may not set up. */
		if (sqlite3_open_v2(m->path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
		    sqlite3_busy_timeout(r->db, 1000) != SQLITE_OK ||
		    /* A small page cache each: a value is read once, and eight
		     * caches of SQLite's default 2 MB would add to the peak. */
		    sqlite3_exec(r->db, "PRAGMA cache_size=-512", NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_prepare_v2(r->db,
				       DISKMEMO_GET_SQL,
				       -1, &r->get, NULL) != SQLITE_OK) {
			diskmemo_reader_close(r);
			lockorder_lock(&m->pool_lock, LOCK_DISK_POOL);
			r->busy = 0;
			lockorder_unlock(&m->pool_lock, LOCK_DISK_POOL);
			return NULL;
		}
	}
	return r;
}

static void diskmemo_reader_give(struct diskmemo *m, struct diskmemo_reader *r)
{
	lockorder_lock(&m->pool_lock, LOCK_DISK_POOL);
	if (r->gen != m->gen)
		diskmemo_reader_close(r);
	r->busy = 0;
	lockorder_unlock(&m->pool_lock, LOCK_DISK_POOL);
}

int diskmemo_get(struct diskmemo *m, const char *key, size_t key_len, const struct filestamp *stamp,
		 struct buf *out)
{
	int found = 0, stale = 0, rc = SQLITE_DONE;
	sqlite3_int64 touch = 0;
	struct diskmemo_reader *r = NULL;
	if (!m)
		return 0;
	lockorder_lock(&m->lock, LOCK_DISK_MEMO);
	if (!m->db)
		goto out;
	if (!m->in_batch && (r = diskmemo_reader_take(m))) {
		/* Nothing uncommitted: read on a connection of its own. */
		lockorder_unlock(&m->lock, LOCK_DISK_MEMO);
		found = diskmemo_select(m, r->get, key, key_len, stamp, out, &touch, &stale, &rc);
		diskmemo_reader_give(m, r);
		lockorder_lock(&m->lock, LOCK_DISK_MEMO);
		if (!m->db)
			goto out;
		if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
			rc = SQLITE_DONE; /* a commit held it past the timeout: not kept, as far as it knows */
	} else {
		found = diskmemo_select(m, m->get, key, key_len, stamp, out, &touch, &stale, &rc);
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		diskmemo_failed(m, rc);
		goto out;
	}
	diskmemo_after_get(m, key, key_len, touch, stale);
out:
	lockorder_unlock(&m->lock, LOCK_DISK_MEMO);
	return found;
}

int diskmemo_has_prefix(struct diskmemo *m, const char *prefix, size_t len)
{
	int found = 0;
	sqlite3_stmt *st = NULL;
	if (!m)
		return 0;
	lockorder_lock(&m->lock, LOCK_DISK_MEMO);
	/* The keys that start with prefix sort from prefix on, before any
	 * key that does not (a blob compares bytewise, shorter first). */
	if (m->db && sqlite3_prepare_v2(m->db, "SELECT key FROM kept WHERE key >= ?1 ORDER BY key LIMIT 1", -1, &st,
					NULL) == SQLITE_OK) {
		sqlite3_bind_blob(st, 1, prefix, (int)len, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW) {
			const void *k = sqlite3_column_blob(st, 0);
			found = (size_t)sqlite3_column_bytes(st, 0) >= len && k && memcmp(k, prefix, len) == 0;
		}
	}
	sqlite3_finalize(st);
	lockorder_unlock(&m->lock, LOCK_DISK_MEMO);
	return found;
}

int diskmemo_has(struct diskmemo *m, const char *key, size_t key_len, const struct filestamp *stamp)
{
	int found = 0;
	if (!m)
		return 0;
	lockorder_lock(&m->lock, LOCK_DISK_MEMO);
	if (m->db) {
		sqlite3_bind_blob(m->has, 1, key, (int)key_len, SQLITE_STATIC);
		int rc = sqlite3_step(m->has);
		found = rc == SQLITE_ROW && diskmemo_same(m->has, stamp);
		sqlite3_reset(m->has);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			diskmemo_failed(m, rc);
	}
	lockorder_unlock(&m->lock, LOCK_DISK_MEMO);
	return found;
}

void diskmemo_put(struct diskmemo *m, const char *key, size_t key_len, const struct filestamp *stamp,
		  const void *data, size_t len)
{
	if (!m || len > INT32_MAX)
		return;
	lockorder_lock(&m->lock, LOCK_DISK_MEMO);
	if (!m->db)
		goto out;
	diskmemo_begin(m);
	sqlite3_bind_blob(m->put, 1, key, (int)key_len, SQLITE_STATIC);
	sqlite3_bind_int64(m->put, 2, (sqlite3_int64)stamp->dev);
	sqlite3_bind_int64(m->put, 3, (sqlite3_int64)stamp->ino);
	sqlite3_bind_int64(m->put, 4, (sqlite3_int64)stamp->size);
	sqlite3_bind_int64(m->put, 5, stamp->mtime_ns);
	sqlite3_bind_int64(m->put, 6, stamp->ctime_ns);
	sqlite3_bind_blob(m->put, 7, len ? data : "", (int)len, SQLITE_STATIC);
	sqlite3_bind_int64(m->put, 8, m->today);
	int rc = sqlite3_step(m->put);
	sqlite3_reset(m->put);
	sqlite3_clear_bindings(m->put);
	if (rc != SQLITE_DONE) {
		diskmemo_failed(m, rc);
		goto out;
	}
	diskmemo_batched(m);
out:
	lockorder_unlock(&m->lock, LOCK_DISK_MEMO);
}

/* Under the lock: the rows gets found as seen today, marked so in the
 * batch (which the caller commits). */
static void diskmemo_apply_touches(struct diskmemo *m)
{
	size_t n = m->n_touches;
	m->n_touches = 0; /* (diskmemo_failed may close the database) */
	for (size_t i = 0; m->db && i < n; i++) {
		diskmemo_begin(m);
		sqlite3_bind_int64(m->touch, 1, m->today);
		sqlite3_bind_int64(m->touch, 2, m->touches[i]);
		int rc = sqlite3_step(m->touch);
		sqlite3_reset(m->touch);
		if (rc != SQLITE_DONE) {
			diskmemo_failed(m, rc);
			break;
		}
	}
}

/* An integer PRAGMA's value, or -1. */
static int64_t diskmemo_pragma(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The bytes the database's live pages take (its free pages go back to
 * the file system at the next incremental vacuum). */
static int64_t diskmemo_used(sqlite3 *db)
{
	int64_t pages = diskmemo_pragma(db, "PRAGMA page_count"), free_pages = diskmemo_pragma(db, "PRAGMA freelist_count"),
		size = diskmemo_pragma(db, "PRAGMA page_size");
	return pages < 0 || free_pages < 0 || size < 0 ? -1 : (pages - free_pages) * size;
}

/* cachedir_sweep of the directory the database is in, for need bytes of
 * its own within max: the room it leaves. */
static uint64_t diskmemo_sweep_max(struct diskmemo *m, uint64_t max, uint64_t need)
{
	char *dir = strdup(m->path), *slash = dir ? strrchr(dir, '/') : NULL;
	if (!slash) {
		free(dir);
		return max;
	}
	*slash = '\0';
	uint64_t room = cachedir_sweep(dir, m->path, max, need, time(NULL), m->note, m->note_ctx);
	free(dir);
	return room;
}

/* Under the lock, no batch open: past its budget, the values seen least
 * recently go (the oldest day first, the largest first within a day:
 * search texts before the rows of sessions.md) until it takes
 * seven eighths of it, and the pages they took go back to the file
 * system.  A value dropped is derived again from its file when next
 * asked for, and kept again, so a store whose values exceed the budget
 * keeps those in use. */
static void diskmemo_trim(struct diskmemo *m)
{
	int64_t used = m->max && m->db ? diskmemo_used(m->db) : -1;
	if (used < 0 || (uint64_t)used <= m->budget)
		return;
	/* Other stores' databases no mount uses give way first. */
	m->budget = diskmemo_sweep_max(m, m->max, (uint64_t)used);
	if ((uint64_t)used <= m->budget)
		return;
	int64_t before = used, dropped = 0;
	uint64_t target = m->budget / 8 * 7;
	sqlite3_stmt *order = NULL, *del = NULL;
	if (sqlite3_prepare_v2(m->db, "SELECT rowid, length(value) + length(key) FROM kept ORDER BY seen, length(value) DESC",
			       -1, &order, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(m->db, "DELETE FROM kept WHERE rowid = ?1", -1, &del, NULL) != SQLITE_OK)
		goto out;
	/* The values' bytes stand for their pages: a round may fall short
	 * (rows share pages), so a few rounds, each over what is left. */
	for (int round = 0; round < 4 && (uint64_t)used > target; round++) {
		int64_t over = used - (int64_t)target, freed = 0, *rows = NULL;
		size_t n = 0, cap = 0;
		while (freed < over && sqlite3_step(order) == SQLITE_ROW) {
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				int64_t *grown = realloc(rows, ncap * sizeof *rows);
				if (!grown)
					break;
				rows = grown;
				cap = ncap;
			}
			rows[n++] = sqlite3_column_int64(order, 0);
			freed += sqlite3_column_int64(order, 1);
		}
		sqlite3_reset(order);
		sqlite3_exec(m->db, "BEGIN", NULL, NULL, NULL);
		for (size_t i = 0; i < n; i++) {
			sqlite3_bind_int64(del, 1, rows[i]);
			if (sqlite3_step(del) == SQLITE_DONE)
				dropped += sqlite3_changes(m->db);
			sqlite3_reset(del);
		}
		sqlite3_exec(m->db, "COMMIT", NULL, NULL, NULL);
		free(rows);
		if (!n || (used = diskmemo_used(m->db)) < 0)
			break;
	}
	sqlite3_exec(m->db, "PRAGMA incremental_vacuum; PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	diskmemo_notef(m, "the cache %s took %.1f MB, more than its %.1f MB share of -o cache_max: dropped the %" PRId64
		       " values used least recently (%.1f MB now)",
		       m->path, before / 1e6, m->budget / 1e6, dropped, diskmemo_used(m->db) / 1e6);
out:
	sqlite3_finalize(order);
	sqlite3_finalize(del);
}

void diskmemo_set_bound(struct diskmemo *m, uint64_t max_bytes)
{
	if (!m || !m->path || !max_bytes)
		return;
	/* The directory is looked at without the lock: gets go on. */
	uint64_t budget = diskmemo_sweep_max(m, max_bytes, 0);
	lockorder_lock(&m->lock, LOCK_DISK_MEMO);
	m->max = max_bytes;
	m->budget = budget;
	lockorder_unlock(&m->lock, LOCK_DISK_MEMO);
}

void diskmemo_flush(struct diskmemo *m)
{
	if (!m)
		return;
	lockorder_lock(&m->lock, LOCK_DISK_MEMO);
	diskmemo_apply_touches(m);
	if (m->db && m->in_batch) {
		int rc = sqlite3_exec(m->db, "COMMIT", NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
			m->in_batch = 0;
			diskmemo_failed(m, rc);
		}
	}
	m->in_batch = 0;
	m->batched = 0;
	diskmemo_trim(m);
	lockorder_unlock(&m->lock, LOCK_DISK_MEMO);
}

long diskmemo_count(struct diskmemo *m)
{
	long n = -1;
	if (!m)
		return -1;
	lockorder_lock(&m->lock, LOCK_DISK_MEMO);
	sqlite3_stmt *st = NULL;
	if (m->db && sqlite3_prepare_v2(m->db, "SELECT count(*) FROM kept", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	lockorder_unlock(&m->lock, LOCK_DISK_MEMO);
	return n;
}
