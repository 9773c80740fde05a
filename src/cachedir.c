/* The cache directory as a whole (cachedir.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cachedir.h"
#include "fnv.h"
#include "mountinfo.h"

/* SQLite's files beside a database, and the lock file's suffix. */
static const char *const cachedir_tails[] = { "", "-wal", "-shm", "-journal" };
#define CACHEDIR_N_TAILS (sizeof cachedir_tails / sizeof cachedir_tails[0])

char *cachedir_default(const char *home)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	char *dir = NULL;
	int n = -1;
	if (xdg && xdg[0] == '/') /* the spec: a relative one is ignored */
		n = asprintf(&dir, "%s/pisessionfs", xdg);
	else if (home && *home)
		n = asprintf(&dir, "%s/.cache/pisessionfs", home);
	return n < 0 ? NULL : dir;
}

char *cachedir_db_path(const char *dir, const char *store_path)
{
	uint64_t h = fnv1a_add_str(FNV1A_BASIS, store_path);
	char *path = NULL;
	return asprintf(&path, "%s/store-%016" PRIx64 ".sqlite", dir, h) < 0 ? NULL : path;
}

/* store-HASH.sqlite -> store-HASH.lock (new), NULL when out of memory. */
static char *cachedir_lock_path(const char *db_path)
{
	size_t len = strlen(db_path);
	const char *ext = len > 7 && strcmp(db_path + len - 7, ".sqlite") == 0 ? db_path + len - 7 : db_path + len;
	char *p = NULL;
	return asprintf(&p, "%.*s.lock", (int)(ext - db_path), db_path) < 0 ? NULL : p;
}

/* Opens path's lock file and takes the lock how (LOCK_SH, or LOCK_EX |
 * LOCK_NB), on the file that has the name now (a removal may have
 * unlinked the one opened): the descriptor, -1 (errno; EWOULDBLOCK: in
 * use).  create: make it where missing. */
static int cachedir_lock(const char *lock_path, int how, int create)
{
	for (int tries = 0; tries < 8; tries++) {
		int fd = open(lock_path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0600);
		if (fd < 0)
			return -1;
		struct stat held, named;
		if (flock(fd, how) != 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (fstat(fd, &held) == 0 && stat(lock_path, &named) == 0 && held.st_ino == named.st_ino &&
		    held.st_dev == named.st_dev)
			return fd;
		close(fd); /* removed while we waited: the name is a new file, or none */
		if (!create) {
			errno = ENOENT;
			return -1;
		}
	}
	errno = EAGAIN;
	return -1;
}

int cachedir_hold(const char *db_path)
{
	char *lock_path = cachedir_lock_path(db_path);
	if (!lock_path) {
		errno = ENOMEM;
		return -1;
	}
	int fd = cachedir_lock(lock_path, LOCK_SH, 1);
	free(lock_path);
	if (fd >= 0)
		futimens(fd, NULL);
	return fd;
}

void cachedir_release(int fd)
{
	if (fd < 0)
		return;
	futimens(fd, NULL);
	close(fd);
}

/* The store a database was made for (new), NULL when it cannot be read. */
static char *cachedir_db_store(const char *db_path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char *store = NULL;
	/* Read-write, though it only reads: a read-only connection to a
	 * database in WAL mode leaves its -wal and -shm files behind. */
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK) {
		sqlite3_busy_timeout(db, 1000);
		if (sqlite3_prepare_v2(db, "SELECT v FROM meta WHERE k = 'store'", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			store = strdup((const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return store;
}

static int cachedir_by_use(const void *a, const void *b)
{
	const struct cachedir_db *x = a, *y = b;
	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* 1 when name is store-HASH.sqlite. */
static int cachedir_is_db(const char *name)
{
	size_t len = strlen(name);
	return len > 13 && strncmp(name, "store-", 6) == 0 && strcmp(name + len - 7, ".sqlite") == 0;
}

/* Fills d for the database at path (taking path): 0, or -1 (ENOMEM). */
static int cachedir_db_read(struct cachedir_db *d, char *path)
{
	struct stat st;
	memset(d, 0, sizeof *d);
	d->path = path;
	for (size_t i = 0; i < CACHEDIR_N_TAILS; i++) {
		char *p = NULL;
		if (asprintf(&p, "%s%s", path, cachedir_tails[i]) < 0)
			return -1;
		if (stat(p, &st) == 0) {
			d->bytes += (uint64_t)st.st_blocks * 512 > (uint64_t)st.st_size ? (uint64_t)st.st_blocks * 512
											 : (uint64_t)st.st_size;
			if (i == 0)
				d->used = st.st_mtime;
		}
		free(p);
	}
	char *lock_path = cachedir_lock_path(path);
	if (!lock_path)
		return -1;
	if (stat(lock_path, &st) == 0 && st.st_mtime > d->used)
		d->used = st.st_mtime;
	int fd = cachedir_lock(lock_path, LOCK_EX | LOCK_NB, 0);
	if (fd >= 0)
		close(fd);
	else
		d->in_use = errno == EWOULDBLOCK;
	free(lock_path);
	d->store = cachedir_db_store(path);
	/* A store on a network or FUSE file system is taken to be there: a
	 * stat of it waits as long as the server does (forever, for an sshfs
	 * whose link died), and made the sweep's thread, and with it the
	 * daemon, impossible to kill. */
	d->store_exists = d->store && d->store[0] == '/' &&
			  (mountinfo_is_remote(d->store) || (stat(d->store, &st) == 0 && S_ISDIR(st.st_mode)));
	return 0;
}

int cachedir_list(const char *dir, struct cachedir_db **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	struct cachedir_db *dbs = NULL;
	size_t count = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!cachedir_is_db(e->d_name))
			continue;
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct cachedir_db *grown = realloc(dbs, ncap * sizeof *dbs);
			if (!grown)
				goto nomem;
			dbs = grown;
			cap = ncap;
		}
		char *path = NULL;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			goto nomem;
		if (cachedir_db_read(&dbs[count], path) != 0) {
			count++;
			goto nomem;
		}
		count++;
	}
	closedir(d);
	qsort(dbs, count, sizeof *dbs, cachedir_by_use);
	*out = dbs;
	*n = count;
	return 0;
nomem:
	closedir(d);
	cachedir_list_free(dbs, count);
	errno = ENOMEM;
	return -1;
}

void cachedir_list_free(struct cachedir_db *dbs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(dbs[i].path);
		free(dbs[i].store);
	}
	free(dbs);
}

int cachedir_remove(const char *db_path)
{
	char *lock_path = cachedir_lock_path(db_path);
	if (!lock_path) {
		errno = ENOMEM;
		return -1;
	}
	/* No lock file (a database of an older version, or one whose lock
	 * was removed by hand): made, so that a mount opening it now waits. */
	int fd = cachedir_lock(lock_path, LOCK_EX | LOCK_NB, 1);
	if (fd < 0) {
		int e = errno;
		free(lock_path);
		if (e == EWOULDBLOCK)
			return 1;
		errno = e;
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < CACHEDIR_N_TAILS; i++) {
		char *p = NULL;
		if (asprintf(&p, "%s%s", db_path, cachedir_tails[i]) < 0) {
			rc = -1;
			errno = ENOMEM;
			break;
		}
		if (unlink(p) != 0 && errno != ENOENT)
			rc = -1;
		free(p);
	}
	/* The lock file last, still locked: a mount waiting on it then finds
	 * the name gone and makes a new one (cachedir_lock). */
	unlink(lock_path);
	close(fd);
	free(lock_path);
	return rc;
}

static void cachedir_notef(cachedir_note_fn note, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void cachedir_notef(cachedir_note_fn note, void *ctx, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	if (!note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	note(ctx, msg);
}

static const char *cachedir_day(time_t t, char *buf, size_t size)
{
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d", &tm))
		snprintf(buf, size, "%lld", (long long)t);
	return buf;
}

uint64_t cachedir_sweep(const char *dir, const char *own_path, uint64_t max_bytes, uint64_t own_need, time_t now,
			cachedir_note_fn note, void *ctx)
{
	struct cachedir_db *dbs;
	size_t n;
	uint64_t total = 0, others = 0;
	char day[32];
	if (cachedir_list(dir, &dbs, &n) != 0)
		return max_bytes;
	/* The own database counts as what it takes or needs, the larger. */
	uint64_t own_bytes = 0;
	for (size_t i = 0; i < n; i++) {
		if (own_path && strcmp(dbs[i].path, own_path) == 0)
			own_bytes = dbs[i].bytes;
		else
			total += dbs[i].bytes;
	}
	total += own_need > own_bytes ? own_need : own_bytes;
	/* First the databases of stores that are gone, unused for a month;
	 * then, over the size, any unused one, the least recently used first
	 * (the list's order).  dbs[i].bytes = 0 marks one removed. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			struct cachedir_db *d = &dbs[i];
			if (!d->bytes || d->in_use || (own_path && strcmp(d->path, own_path) == 0))
				continue;
			int abandoned = !d->store_exists && now - d->used > (time_t)CACHEDIR_UNUSED_DAYS * 86400;
			if (pass == 0 ? !abandoned : total <= max_bytes)
				continue;
			if (cachedir_remove(d->path) != 0)
				continue;
			total -= d->bytes;
			if (pass == 0)
				cachedir_notef(note, ctx,
					       "removed the cache %s (%.1f MB) of %s, a store that no longer exists, "
					       "unused since %s",
					       d->path, d->bytes / 1e6, d->store ? d->store : "an unknown store",
					       cachedir_day(d->used, day, sizeof day));
			else
				cachedir_notef(note, ctx,
					       "removed the cache %s (%.1f MB) of %s, unused since %s, to keep the cache "
					       "directory within -o cache_max=%" PRIu64 " MiB",
					       d->path, d->bytes / 1e6, d->store ? d->store : "an unknown store",
					       cachedir_day(d->used, day, sizeof day), max_bytes >> 20);
			d->bytes = 0;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!own_path || strcmp(dbs[i].path, own_path) != 0)
			others += dbs[i].bytes;
	cachedir_list_free(dbs, n);
	uint64_t room = others < max_bytes ? max_bytes - others : 0;
	return room < max_bytes / 8 ? max_bytes / 8 : room;
}
