/* diskmemo.c: derived values kept on disk across mounts, and the rules
 * that make the cache never trusted over the file (another stamp misses; a
 * corrupt, foreign or unreadable database is made again, with a note);
 * infofreeze.c: a SessionInfo through the disk and back, extended by an
 * append exactly as the info it was frozen from. */
#include <fcntl.h>
#include <pthread.h>
#include <math.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <utime.h>
#include "cachedir.h"
#include "diskmemo.h"
#include "fnv.h"
#include "helpers.h"
#include "infohelpers.h"
#include "infocache.h"
#include "infokeeper.h"
#include "infofreeze.h"
#include "sessioninfo.h"
#include "strpool.h"
#include "suites.h"

static char notes[4096];

static void note(void *ctx, const char *what)
{
	(void)ctx;
	strncat(notes, what, sizeof notes - strlen(notes) - 2);
	strcat(notes, "\n");
}

static struct filestamp stamp_of_n(uint64_t n)
{
	struct stat st;
	struct filestamp out;
	memset(&st, 0, sizeof st);
	st.st_dev = 7;
	st.st_ino = n;
	st.st_size = (off_t)(1000 + n);
	st.st_mtim.tv_sec = (time_t)n;
	st.st_ctim.tv_nsec = (long)n;
	filestamp_of(&st, &out);
	return out;
}

static struct diskmemo *open_memo(const char *dir, const char *store, const char *format)
{
	struct diskmemo *m = NULL;
	notes[0] = '\0';
	(void)diskmemo_open(dir, store, format, note, NULL, &m);
	ck_assert_ptr_nonnull(m);
	return m;
}

/* 1 and the value, 0, or -1 (as diskmemo_get). */
static int memo_value(struct diskmemo *m, const char *key, uint64_t n, const char *want)
{
	struct buf got = BUF_INIT;
	struct filestamp st = stamp_of_n(n);
	int found = diskmemo_get(m, key, strlen(key), &st, &got);
	if (found == 1) {
		ck_assert_uint_eq(got.len, strlen(want));
		ck_assert(!got.len || memcmp(got.data, want, got.len) == 0);
	}
	buf_free(&got);
	return found;
}

START_TEST(test_diskmemo_across_opens)
{
	char dir[64], sub[128];
	helper_tmpdir(dir, "diskmemo");
	snprintf(sub, sizeof sub, "%s/a/b/pisessionfs", dir);
	struct diskmemo *m = open_memo(sub, "/store/one", "fmt 1");
	ck_assert_str_eq(notes, "");
	ck_assert_ptr_nonnull(diskmemo_path(m));
	struct stat st;
	ck_assert_int_eq(stat(sub, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700); /* made private */
	struct filestamp s1 = stamp_of_n(1);
	diskmemo_put(m, "a", 1, &s1, "row a", 5);
	diskmemo_put(m, "b", 1, &s1, "", 0);
	ck_assert_int_eq(memo_value(m, "a", 1, "row a"), 1);
	diskmemo_flush(m);
	ck_assert_int_eq(stat(diskmemo_path(m), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	diskmemo_free(m);

	/* Another daemon of the same store and version finds them. */
	m = open_memo(sub, "/store/one", "fmt 1");
	ck_assert_str_eq(notes, "");
	ck_assert_int_eq(memo_value(m, "a", 1, "row a"), 1);
	ck_assert_int_eq(memo_value(m, "b", 1, ""), 1);
	/* The file changed (another stamp): not found, and dropped. */
	ck_assert_int_eq(memo_value(m, "a", 2, ""), 0);
	ck_assert_int_eq(memo_value(m, "a", 1, ""), 0);
	ck_assert_int_eq(diskmemo_count(m), 1);
	/* Unflushed puts are committed when the memo is freed. */
	for (uint64_t i = 0; i < 2500; i++) {
		char key[16];
		struct filestamp s = stamp_of_n(i);
		snprintf(key, sizeof key, "k%llu", (unsigned long long)i);
		diskmemo_put(m, key, strlen(key), &s, key, strlen(key));
	}
	diskmemo_free(m);
	m = open_memo(sub, "/store/one", "fmt 1");
	ck_assert_int_eq(diskmemo_count(m), 2501);
	ck_assert_int_eq(memo_value(m, "k2499", 2499, "k2499"), 1);
	diskmemo_free(m);

	/* Values no mount used for over 30 days go when a mount opens it. */
	sqlite3 *db = NULL;
	m = open_memo(sub, "/store/one", "fmt 1");
	char *path = strdup(diskmemo_path(m));
	diskmemo_free(m);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "UPDATE kept SET seen = seen - 31 WHERE key = CAST('k7' AS BLOB)", NULL, NULL, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_changes(db), 1);
	sqlite3_close(db);
	free(path);
	m = open_memo(sub, "/store/one", "fmt 1");
	ck_assert_int_eq(diskmemo_count(m), 2500);
	ck_assert_int_eq(memo_value(m, "k7", 7, "k7"), 0);
	ck_assert_int_eq(memo_value(m, "k8", 8, "k8"), 1);
	diskmemo_free(m);

	/* Another store: a database of its own. */
	m = open_memo(sub, "/store/two", "fmt 1");
	ck_assert_str_eq(notes, "");
	ck_assert_int_eq(memo_value(m, "k1", 1, "k1"), 0);
	diskmemo_free(m);

	/* Another version of what is kept: made again, and said. */
	m = open_memo(sub, "/store/one", "fmt 2");
	ck_assert_ptr_nonnull(strstr(notes, "from another version (fmt 1)"));
	ck_assert_ptr_nonnull(strstr(notes, "made again"));
	ck_assert_int_eq(diskmemo_count(m), 0);
	ck_assert_int_eq(memo_value(m, "k1", 1, "k1"), 0);
	diskmemo_free(m);
	helper_rmtree(dir);
}
END_TEST

/* The first column of the first row sql (one ?1 bound to arg) gives on
 * the database at path, read by a connection of the test's own (new
 * string, or NULL when no row). */
static char *sql_value(const char *path, const char *sql, const char *arg)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char *v = NULL;
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* The meta value k of the database at path (new string), or NULL. */
static char *meta_of(const char *path, const char *k)
{
	return sql_value(path, "SELECT v FROM meta WHERE k = ?1", k);
}

/* Writes go unsynced behind a marker of this boot, committed with a sync
 * first and removed at a clean close; a database still marked by another
 * boot (the system went down before it was synced) is made again. */
START_TEST(test_diskmemo_unsynced_marker)
{
	char dir[64];
	helper_tmpdir(dir, "diskmemo");
	struct diskmemo *m = open_memo(dir, "/store/u", "fmt");
	char *path = strdup(diskmemo_path(m));
	char *none = meta_of(path, "unsynced");
	ck_assert_ptr_null(none); /* nothing written yet: nothing to mark */
	struct filestamp s1 = stamp_of_n(1);
	diskmemo_put(m, "a", 1, &s1, "row a", 5);
	char *marked = meta_of(path, "unsynced");
	ck_assert_ptr_nonnull(marked); /* committed before the put's batch */
	ck_assert_uint_gt(strlen(marked), 0);
	diskmemo_free(m);
	char *cleared = meta_of(path, "unsynced");
	ck_assert_ptr_null(cleared);

	/* Closed cleanly: kept, no note. */
	m = open_memo(dir, "/store/u", "fmt");
	ck_assert_str_eq(notes, "");
	ck_assert_int_eq(memo_value(m, "a", 1, "row a"), 1);
	diskmemo_free(m);

	/* Marked by this boot (the daemon died, the system did not): kept. */
	sqlite3 *db = NULL;
	char *sql = NULL;
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	ck_assert_int_ge(asprintf(&sql, "INSERT OR REPLACE INTO meta(k, v) VALUES ('unsynced', '%s')", marked), 0);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	free(sql);
	m = open_memo(dir, "/store/u", "fmt");
	ck_assert_str_eq(notes, "");
	ck_assert_int_eq(memo_value(m, "a", 1, "row a"), 1);
	diskmemo_free(m);

	/* Marked by another boot: it may be torn, so made again. */
	ck_assert_int_eq(sqlite3_exec(db, "INSERT OR REPLACE INTO meta(k, v) VALUES ('unsynced', 'another-boot')", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	m = open_memo(dir, "/store/u", "fmt");
	ck_assert_ptr_nonnull(strstr(notes, "before the system restarted"));
	ck_assert_ptr_nonnull(strstr(notes, "made again"));
	ck_assert_int_eq(memo_value(m, "a", 1, "row a"), 0);
	diskmemo_free(m);
	free(marked);
	free(path);
	helper_rmtree(dir);
}
END_TEST

/* seen of key in the database at path (-1 when no row). */
static long long seen_of(const char *path, const char *key)
{
	char *v = sql_value(path, "SELECT seen FROM kept WHERE key = CAST(?1 AS BLOB)", key);
	long long n = v ? atoll(v) : -1;
	free(v);
	return n;
}

#define READ_KEYS 300

struct reader_ctx {
	struct diskmemo *m;
	int found;
};

static void *read_all(void *arg)
{
	struct reader_ctx *c = arg;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < READ_KEYS; i++) {
			char key[16];
			snprintf(key, sizeof key, "r%d", i);
			struct buf got = BUF_INIT;
			struct filestamp st = stamp_of_n((uint64_t)i);
			if (diskmemo_get(c->m, key, strlen(key), &st, &got) == 1 && got.len == strlen(key) &&
			    !memcmp(got.data, key, got.len))
				c->found++;
			buf_free(&got);
		}
	}
	return NULL;
}

/* Gets while no batch is open read on connections of their own, several
 * threads at once, and find every committed value; a get right after a
 * put in the open batch still finds it (the writing connection answers
 * then); a value used today is marked seen at the next flush. */
START_TEST(test_diskmemo_parallel_gets)
{
	char dir[64];
	helper_tmpdir(dir, "diskmemo");
	struct diskmemo *m = open_memo(dir, "/store/p", "fmt");
	char *path = strdup(diskmemo_path(m));
	for (int i = 0; i < READ_KEYS; i++) {
		char key[16];
		snprintf(key, sizeof key, "r%d", i);
		struct filestamp st = stamp_of_n((uint64_t)i);
		diskmemo_put(m, key, strlen(key), &st, key, strlen(key));
	}
	diskmemo_flush(m);
	pthread_t t[4];
	struct reader_ctx c[4];
	for (int i = 0; i < 4; i++) {
		c[i].m = m;
		c[i].found = 0;
		ck_assert_int_eq(pthread_create(&t[i], NULL, read_all, &c[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(c[i].found, 3 * READ_KEYS);
	}

	/* Read your own writes, batch open. */
	struct filestamp s1 = stamp_of_n(1);
	diskmemo_put(m, "fresh", 5, &s1, "new value", 9);
	ck_assert_int_eq(memo_value(m, "fresh", 1, "new value"), 1);
	diskmemo_flush(m);

	/* A value last seen long ago is seen today after a get and a flush. */
	diskmemo_free(m);
	sqlite3 *db = NULL;
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "UPDATE kept SET seen = seen - 5 WHERE key = CAST('r7' AS BLOB)", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	long long before = seen_of(path, "r7");
	m = open_memo(dir, "/store/p", "fmt");
	ck_assert_int_eq(memo_value(m, "r7", 7, "r7"), 1);
	diskmemo_flush(m);
	ck_assert_int_eq(seen_of(path, "r7"), before + 5);
	diskmemo_free(m);
	free(path);
	helper_rmtree(dir);
}
END_TEST

START_TEST(test_diskmemo_corrupt_and_unusable)
{
	char dir[64];
	helper_tmpdir(dir, "diskmemo");
	struct diskmemo *m = open_memo(dir, "/store/c", "fmt");
	struct filestamp s1 = stamp_of_n(1);
	diskmemo_put(m, "a", 1, &s1, "row a", 5);
	char *path = strdup(diskmemo_path(m));
	diskmemo_free(m);

	/* Garbage where the database was: made again, with a note. */
	int fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(write(fd, "this is no SQLite database at all", 33), 33);
	close(fd);
	m = open_memo(dir, "/store/c", "fmt");
	ck_assert_ptr_nonnull(strstr(notes, "made again"));
	ck_assert_ptr_nonnull(diskmemo_path(m));
	ck_assert_int_eq(memo_value(m, "a", 1, "row a"), 0);
	diskmemo_put(m, "a", 1, &s1, "row a", 5);
	ck_assert_int_eq(memo_value(m, "a", 1, "row a"), 1);
	diskmemo_free(m);

	/* A directory where the database should be: no cache, said, and
	 * every get misses. */
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -f '%s'* && mkdir '%s'", path, path);
	ck_assert_int_eq(system(cmd), 0);
	m = open_memo(dir, "/store/c", "fmt");
	ck_assert_ptr_nonnull(strstr(notes, "every mount reads the store afresh"));
	ck_assert_ptr_null(diskmemo_path(m));
	diskmemo_put(m, "a", 1, &s1, "row a", 5);
	ck_assert_int_eq(memo_value(m, "a", 1, "row a"), 0);
	ck_assert_int_eq(diskmemo_count(m), -1);
	diskmemo_free(m);
	free(path);
	helper_rmtree(dir);

	/* None at all. */
	ck_assert_int_eq(memo_value(NULL, "a", 1, ""), 0);
	diskmemo_put(NULL, "a", 1, &s1, "x", 1);
	diskmemo_flush(NULL);
	diskmemo_free(NULL);
}
END_TEST

#define HEADER "{\"type\":\"session\",\"version\":3,\"id\":\"S1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n"
#define USER(id, text, ts) "{\"type\":\"message\",\"id\":\"" id "\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\"," \
	"\"message\":{\"role\":\"user\",\"content\":\"" text "\",\"timestamp\":" #ts "}}\n"
#define NAMED(id, name) "{\"type\":\"session_info\",\"id\":\"" id "\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"name\":\"" name "\"}\n"

static struct sessioninfo *through_bytes(const struct sessioninfo *info)
{
	struct buf b = BUF_INIT;
	struct sessioninfo *back = NULL;
	ck_assert_int_eq(infofreeze_put(info, &b), PS_OK);
	ck_assert_int_eq(infofreeze_take(info->path, b.data, b.len, &back), PS_OK);
	/* Any byte less, or a wrong magic, is refused, never misread. */
	for (size_t cut = 0; cut < b.len; cut += 1 + b.len / 97) {
		struct sessioninfo *bad = NULL;
		ck_assert_int_eq(infofreeze_take(info->path, b.data, cut, &bad), PS_ERR_INVALID);
		ck_assert_ptr_null(bad);
	}
	b.data[0] ^= 1;
	struct sessioninfo *bad = NULL;
	ck_assert_int_eq(infofreeze_take(info->path, b.data, b.len, &bad), PS_ERR_INVALID);
	buf_free(&b);
	return back;
}

/* A database made for store in dir, closed, last used days ago. */
static char *cache_db_aged(const char *dir, const char *store, int days)
{
	struct diskmemo *m = open_memo(dir, store, "fmt 1");
	struct filestamp s1 = stamp_of_n(1);
	char *path = strdup(diskmemo_path(m));
	diskmemo_put(m, "a", 1, &s1, "row a", 5);
	diskmemo_free(m);
	time_t t = time(NULL) - (time_t)days * 86400;
	struct utimbuf ut = { t, t };
	char lock[300];
	snprintf(lock, sizeof lock, "%.*s.lock", (int)(strlen(path) - 7), path);
	ck_assert_int_eq(utime(path, &ut), 0);
	ck_assert_int_eq(utime(lock, &ut), 0);
	return path;
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

START_TEST(test_cachedir_sweep_gone_stores)
{
	char dir[64], store[128], gone[128];
	helper_tmpdir(dir, "cachedir");
	snprintf(store, sizeof store, "%s/store", dir);
	snprintf(gone, sizeof gone, "%s/gone", dir);
	ck_assert_int_eq(mkdir(store, 0700), 0);
	snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/c");
	char *old_gone = cache_db_aged(dir, gone, 31);     /* removed */
	char *new_gone = cache_db_aged(dir, "/x/gone2", 10); /* used lately: kept */
	char *old_kept = cache_db_aged(dir, store, 40);    /* its store is there: kept */
	char *held_gone = cache_db_aged(dir, "/x/gone3", 60);
	int hold = cachedir_hold(held_gone);                /* a mount uses it: kept */
	ck_assert_int_ge(hold, 0);
	notes[0] = '\0';
	uint64_t room = cachedir_sweep(dir, NULL, (uint64_t)1 << 30, 0, time(NULL), note, NULL);
	ck_assert(!exists(old_gone));
	ck_assert(exists(new_gone) && exists(old_kept) && exists(held_gone));
	ck_assert_ptr_nonnull(strstr(notes, "a store that no longer exists, unused since"));
	ck_assert_ptr_nonnull(strstr(notes, gone));
	ck_assert_ptr_null(strstr(notes, "gone2"));
	ck_assert_uint_lt(room, (uint64_t)1 << 30); /* the others' bytes are not the mount's */
	/* `pisession cache clear` leaves the one in use alone. */
	ck_assert_int_eq(cachedir_remove(held_gone), 1);
	ck_assert(exists(held_gone));
	cachedir_release(hold);
	ck_assert_int_eq(cachedir_remove(held_gone), 0);
	ck_assert(!exists(held_gone));
	struct cachedir_db *dbs;
	size_t n;
	ck_assert_int_eq(cachedir_list(dir, &dbs, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(dbs[0].store, store); /* the least recently used first */
	ck_assert(dbs[0].store_exists && !dbs[0].in_use);
	ck_assert_str_eq(dbs[1].store, "/x/gone2");
	ck_assert(!dbs[1].store_exists);
	cachedir_list_free(dbs, n);
	free(old_gone);
	free(new_gone);
	free(old_kept);
	free(held_gone);
}
END_TEST

START_TEST(test_cachedir_sweep_over_the_bound)
{
	char dir[64];
	helper_tmpdir(dir, "cachedir");
	char *oldest = cache_db_aged(dir, "/s/1", 3), *middle = cache_db_aged(dir, "/s/2", 2),
	     *own = cache_db_aged(dir, "/s/own", 5);
	struct stat st;
	ck_assert_int_eq(stat(own, &st), 0);
	uint64_t one = (uint64_t)st.st_size;
	/* Room for two: the least recently used other goes, never the own. */
	notes[0] = '\0';
	uint64_t room = cachedir_sweep(dir, own, 2 * one + one / 2, 0, time(NULL), note, NULL);
	ck_assert(!exists(oldest) && exists(middle) && exists(own));
	ck_assert_ptr_nonnull(strstr(notes, "to keep the cache directory within -o cache_max=0 MiB"));
	ck_assert_uint_eq(room, 2 * one + one / 2 - one);
	/* Never less than an eighth of the bound for the mount itself. */
	room = cachedir_sweep(dir, own, one, 0, time(NULL), note, NULL);
	ck_assert(!exists(middle) && exists(own));
	ck_assert_uint_eq(room, one);
	free(oldest);
	free(middle);
	free(own);
}
END_TEST

START_TEST(test_diskmemo_budget)
{
	char dir[64];
	helper_tmpdir(dir, "diskmemo");
	char *other = cache_db_aged(dir, "/store/other", 1); /* no mount uses it */
	struct diskmemo *m = open_memo(dir, "/store/big", "fmt 1");
	diskmemo_set_bound(m, 2 << 20); /* room for both, for now */
	ck_assert(exists(other));
	static char value[100000];
	memset(value, 'x', sizeof value);
	char key[32];
	for (int i = 0; i < 60; i++) {
		struct filestamp st = stamp_of_n((uint64_t)i);
		snprintf(key, sizeof key, "k%d", i);
		/* Small rows and large texts, as sessions.md and search keep. */
		diskmemo_put(m, key, strlen(key), &st, value, i % 2 ? sizeof value : 10);
	}
	notes[0] = '\0';
	diskmemo_flush(m);
	/* Past the bound: the other database gives way first, then the
	 * values used least recently. */
	ck_assert(!exists(other));
	ck_assert_ptr_nonnull(strstr(notes, "to keep the cache directory within -o cache_max=2 MiB"));
	ck_assert_ptr_nonnull(strstr(notes, "more than its 2.1 MB share of -o cache_max: dropped the"));
	long left = diskmemo_count(m);
	ck_assert_int_lt(left, 60);
	/* The large values went first: every small one is still there. */
	for (int i = 0; i < 60; i += 2) {
		snprintf(key, sizeof key, "k%d", i);
		ck_assert_int_eq(memo_value(m, key, (uint64_t)i, "xxxxxxxxxx"), 1);
	}
	char *path = strdup(diskmemo_path(m));
	diskmemo_free(m);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_le(st.st_size, 2 << 20); /* the pages went back to the file system */
	free(path);
	free(other);
}
END_TEST

START_TEST(test_infofreeze_round_trip)
{
	char *path = helper_write(HEADER USER("u1", "Hello Ωorld", 1767225601000) NAMED("n1", "first") "{\"type\":\"mess");
	struct sessioninfo *info = NULL, *fresh = NULL;
	ck_assert_int_eq(sessioninfo_load(path, &info), PS_OK);
	struct sessioninfo *back = through_bytes(info);
	helper_assert_same_info(info, back);
	int changed = 1;
	ck_assert_int_eq(sessioninfo_refresh(back, &changed), PS_OK);
	ck_assert_int_eq(changed, 0); /* the file is as it was: nothing read */
	/* The cut line completed and more appended: the thawed info extends
	 * itself as the original does, and both equal a fresh load. */
	helper_append(path, "age\",\"id\":\"a1\",\"parentId\":\"u1\",\"timestamp\":\"2026-01-01T00:00:03.000Z\","
			    "\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Hi THERE\"}],"
			    "\"timestamp\":1767225603000}}\n" NAMED("n2", "second") USER("u2", "more", 1767225609000));
	ck_assert_int_eq(sessioninfo_refresh(back, &changed), PS_OK);
	ck_assert_int_eq(changed, 1);
	ck_assert_int_eq(sessioninfo_refresh(info, NULL), PS_OK);
	ck_assert_int_eq(sessioninfo_load(path, &fresh), PS_OK);
	helper_assert_same_info(fresh, info);
	helper_assert_same_info(fresh, back);
	ck_assert_str_eq(back->name, "second");
	ck_assert_uint_eq(back->message_count, 3);
	sessioninfo_free(back);
	back = through_bytes(fresh);
	helper_assert_same_info(fresh, back);
	sessioninfo_free(back);
	sessioninfo_free(fresh);
	sessioninfo_free(info);
	unlink(path);
	free(path);

	/* Not a session, and an empty file. */
	path = helper_write("{\"type\":\"message\"}\n");
	ck_assert_int_eq(sessioninfo_load(path, &info), PS_OK);
	back = through_bytes(info);
	helper_assert_same_info(info, back);
	sessioninfo_free(back);
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

/* What a new info cache (another mount's) on disk m gives of path. */
static void assert_cached_text(struct diskmemo *m, const char *path, const char *want)
{
	struct infocache *c = NULL;
	const struct sessioninfo *info;
	ck_assert_int_eq(infocache_new(1 << 20, &c), PS_OK);
	infocache_set_disk(c, m);
	infocache_lock(c);
	ck_assert_int_eq(infocache_get(c, path, &info), PS_OK);
	ck_assert_str_eq(info->text.data, want);
	ck_assert_str_eq(info->path, path);
	infocache_unlock(c);
	infocache_flush(c);
	infocache_free(c);
}

/* The infos a search reads are taken from disk by the next mount's cache
 * while their files are unchanged, and read again once one changed. */
START_TEST(test_infocache_disk)
{
	char dir[64];
	helper_tmpdir(dir, "infodisk");
	char *path = helper_write(HEADER USER("u1", "kept text", 1767225601000));
	struct diskmemo *m = open_memo(dir, "/s", "f");
	assert_cached_text(m, path, "kept text"); /* read, and kept */
	ck_assert_int_eq(diskmemo_count(m), 1);

	/* Another mount's cache takes the info from disk without reading
	 * the file: shown by a kept value swapped for another file's info
	 * under this file's stamp. */
	char *other = helper_write(HEADER USER("u1", "disk text", 1767225601000));
	struct sessioninfo *o = NULL;
	struct buf frozen = BUF_INIT, key = BUF_INIT;
	struct stat st;
	struct filestamp stamp;
	ck_assert_int_eq(sessioninfo_load(other, &o), PS_OK);
	ck_assert_int_eq(stat(path, &st), 0);
	o->dev = st.st_dev; /* as if read from this file */
	o->ino = st.st_ino;
	ck_assert_uint_eq(o->size, (uint64_t)st.st_size); /* texts of one length */
	o->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	ck_assert_int_eq(infofreeze_put(o, &frozen), PS_OK);
	filestamp_of(&st, &stamp);
	ck_assert_int_eq(buf_putc(&key, 'i') || buf_puts(&key, path), 0);
	diskmemo_put(m, key.data, key.len, &stamp, frozen.data, frozen.len);
	diskmemo_flush(m);
	assert_cached_text(m, path, "disk text");

	/* Bytes that are no frozen info under the right stamp (a bug, a
	 * disk error): the file is read, and what is kept is mended. */
	diskmemo_put(m, key.data, key.len, &stamp, "PSI2 not really", 15);
	diskmemo_flush(m);
	assert_cached_text(m, path, "kept text");
	assert_cached_text(m, path, "kept text");
	sessioninfo_free(o);
	buf_free(&frozen);
	buf_free(&key);
	unlink(other);
	free(other);

	/* The file changed while no mount looked: read again. */
	helper_append(path, USER("u2", "new words", 1767225602000));
	assert_cached_text(m, path, "kept text new words");
	diskmemo_free(m);
	unlink(path);
	free(path);
	helper_rmtree(dir);
}
END_TEST

/* The keeper: what the cache reads is not written at once but queued;
 * nothing is taken up while a search holds it; what is queued is kept
 * at its stop within the time allowed (none: left), and a path queued
 * twice is kept once. */
START_TEST(test_infokeeper)
{
	char dir[64];
	helper_tmpdir(dir, "keeper");
	char *a = helper_write(HEADER USER("u1", "text a", 1767225601000));
	char *b = helper_write(HEADER USER("u1", "text b", 1767225601000));
	char *gone = helper_write(HEADER);
	struct diskmemo *m = open_memo(dir, "/s", "f");
	struct infocache *c = NULL;
	struct infokeeper *k = NULL;
	const struct sessioninfo *info;
	size_t kept, left;
	ck_assert_int_eq(infocache_new(1 << 20, &c), PS_OK);
	infocache_set_disk(c, m);
	ck_assert_int_eq(infokeeper_start(c, 2, &k), PS_OK);
	ck_assert_ptr_nonnull(k);

	ck_assert_int_eq(infocache_disk_keeps_any(c), 0);
	diskmemo_put(m, "k-not-an-info", 13, &(struct filestamp){ 0 }, "x", 1);
	diskmemo_put(m, "h-not-either", 12, &(struct filestamp){ 0 }, "x", 1);
	diskmemo_flush(m);
	ck_assert_int_eq(infocache_disk_keeps_any(c), 0); /* keys around "i", none of it */
	infokeeper_hold(k);
	infocache_lock(c);
	ck_assert_int_eq(infocache_get(c, a, &info), PS_OK); /* read: queued, not written */
	infocache_unlock(c);
	infokeeper_add(k, b);
	infokeeper_add(k, b);
	unlink(gone);
	infokeeper_add(k, gone);
	usleep(100000);
	ck_assert_uint_eq(infokeeper_pending(k), 3); /* held: nothing taken up */
	infocache_flush(c);
	ck_assert_int_eq(diskmemo_count(m), 2); /* the two that are no infos */
	infokeeper_release(k);
	infokeeper_stop(k, 10000, &kept, &left);
	ck_assert_uint_eq(kept, 2); /* a from the cache, b from its file; gone is gone */
	ck_assert_uint_eq(left, 0);
	ck_assert_int_eq(diskmemo_count(m), 4);
	ck_assert_int_eq(infocache_disk_keeps_any(c), 1);
	infocache_free(c);
	assert_cached_text(m, b, "text b");

	/* No time at the stop, and held all along: all of it left. */
	ck_assert_int_eq(infocache_new(1 << 20, &c), PS_OK);
	infocache_set_disk(c, m);
	ck_assert_int_eq(infokeeper_start(c, 1, &k), PS_OK);
	infokeeper_hold(k);
	helper_append(a, USER("u2", "more", 1767225602000));
	infokeeper_add(k, a);
	infokeeper_stop(k, 0, &kept, &left);
	ck_assert_uint_eq(kept, 0);
	ck_assert_uint_eq(left, 1);
	/* The cache writes at once again after its keeper stopped. */
	infocache_lock(c);
	ck_assert_int_eq(infocache_get(c, a, &info), PS_OK);
	infocache_unlock(c);
	infocache_flush(c);
	infocache_free(c);
	ck_assert_int_eq(diskmemo_count(m), 4); /* a's new info replaced its old one */
	assert_cached_text(m, a, "text a more");

	/* A cache with no disk needs no keeper. */
	ck_assert_int_eq(infocache_new(1 << 20, &c), PS_OK);
	ck_assert_int_eq(infokeeper_start(c, 1, &k), PS_OK);
	ck_assert_ptr_null(k);
	infocache_free(c);
	diskmemo_free(m);
	unlink(a);
	unlink(b);
	free(a);
	free(b);
	free(gone);
	helper_rmtree(dir);
}
END_TEST

/* The one FNV-1a gives the published vectors; the two hashes whose values
 * leave the process keep them: a cache's file name (a remount finds its
 * database by it) and strpool_hash (~h names and version-1 ids shown to
 * the user are made with it). */
START_TEST(test_fnv_values_kept)
{
	ck_assert_uint_eq(fnv1a_add(FNV1A_BASIS, "", 0), 0xcbf29ce484222325ULL);
	ck_assert_uint_eq(fnv1a_add_str(FNV1A_BASIS, "a"), 0xaf63dc4c8601ec8cULL);
	ck_assert_uint_eq(fnv1a_add(fnv1a_add_str(FNV1A_BASIS, "foo"), "bar", 3), 0x85944171f73967e8ULL);
	ck_assert_uint_eq(strpool_hash("abc", 3), 0xe16801510db89efdULL);
	char *path = cachedir_db_path("/c", "/home/ana/.pi/agent/sessions");
	ck_assert_ptr_nonnull(path);
	ck_assert_str_eq(path, "/c/store-9790e787db5b2330.sqlite");
	free(path);
}
END_TEST

Suite *diskmemo_suite(void)
{
	Suite *s = suite_create("diskmemo");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_diskmemo_across_opens);
	tcase_add_test(tc, test_diskmemo_corrupt_and_unusable);
	tcase_add_test(tc, test_diskmemo_unsynced_marker);
	tcase_add_test(tc, test_diskmemo_parallel_gets);
	tcase_add_test(tc, test_cachedir_sweep_gone_stores);
	tcase_add_test(tc, test_cachedir_sweep_over_the_bound);
	tcase_add_test(tc, test_diskmemo_budget);
	tcase_add_test(tc, test_infofreeze_round_trip);
	tcase_add_test(tc, test_infocache_disk);
	tcase_add_test(tc, test_infokeeper);
	tcase_add_test(tc, test_fnv_values_kept);
	suite_add_tcase(s, tc);
	return s;
}
