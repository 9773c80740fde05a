/* catalog.c: the table the navigation views read.  Every session file of
 * the store once (projects and the flat root), its id, cwd and latest
 * name, newest activity first; a file that is not a session is listed with
 * an empty id; changes to the store show at a later snapshot. */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include "catalog.h"
#include "helpers.h"
#include "store.h"
#include "suites.h"

static char root[64];

static void put_at(const char *rel, const char *text, time_t mtime)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	struct timespec t[2] = { { mtime, 0 }, { mtime, 0 } };
	ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

#define HDR_OF(id, cwd) \
	"{\"type\":\"session\",\"version\":3,\"id\":\"" id "\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"" cwd "\"}\n"
#define NAME(id, parent, name) \
	"{\"type\":\"session_info\",\"id\":\"" id "\",\"parentId\":" parent ",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"name\":\"" name "\"}\n"

static void catalog_fixture(void)
{
	helper_tmpdir(root, "catalog");
	char p[512];
	snprintf(p, sizeof p, "%s/proj", root);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	put_at("proj/old.jsonl", HDR_OF("id-old", "/w/old") MSG("a1", "null", "user", "hi"), 1000000000);
	put_at("proj/named.jsonl",
	       HDR_OF("id-named", "/w/named") MSG("a1", "null", "user", "hi") NAME("n1", "\"a1\"", "first")
		       NAME("n2", "\"n1\"", "Second name"),
	       1000000300);
	put_at("proj/junk.jsonl", "not json\n", 1000000100);
	put_at("flat.jsonl", HDR_OF("id-flat", "/w/flat"), 1000000200);
}

static void catalog_cleanup(void)
{
	helper_rmtree(root);
}

START_TEST(test_catalog_table)
{
	struct ps_store *st;
	struct ps_catalog *cat;
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	ck_assert_int_eq(catalog_new(st, &cat), PS_OK);
	struct catalog_session *items;
	size_t n;
	ck_assert_int_eq(catalog_snapshot(cat, &items, &n), PS_OK);
	ck_assert_uint_eq(n, 4);
	/* newest activity first */
	ck_assert_str_eq(items[0].stem, "named");
	ck_assert_str_eq(items[1].stem, "flat");
	ck_assert_str_eq(items[2].stem, "junk");
	ck_assert_str_eq(items[3].stem, "old");
	for (size_t i = 1; i < n; i++)
		ck_assert_int_ge(items[i - 1].mtime_ns, items[i].mtime_ns);
	/* the latest session_info names it */
	ck_assert_str_eq(items[0].project, "proj");
	ck_assert_str_eq(items[0].id, "id-named");
	ck_assert_str_eq(items[0].cwd, "/w/named");
	ck_assert_str_eq(items[0].name, "Second name");
	/* the flat root is project "" */
	ck_assert_str_eq(items[1].project, "");
	ck_assert_str_eq(items[1].id, "id-flat");
	ck_assert_str_eq(items[1].name, "");
	/* not a session: listed, with nothing to say */
	ck_assert_str_eq(items[2].id, "");
	ck_assert_str_eq(items[2].cwd, "");
	ck_assert_int_eq(items[3].mtime_ns, (int64_t)1000000000 * 1000000000);
	catalog_snapshot_free(items, n);
	catalog_free(cat);
	store_free(st);
}
END_TEST

/* A snapshot taken while the store changes: at most a second later it
 * shows the change (polled, never a fixed sleep). */
static int catalog_wait_for(struct ps_catalog *cat, int (*ok)(struct catalog_session *, size_t))
{
	for (int i = 0; i < 100; i++) {
		struct catalog_session *items;
		size_t n;
		ck_assert_int_eq(catalog_snapshot(cat, &items, &n), PS_OK);
		int done = ok(items, n);
		catalog_snapshot_free(items, n);
		if (done)
			return 1;
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int renamed_and_gone(struct catalog_session *items, size_t n)
{
	int renamed = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(items[i].stem, "old"))
			return 0;
		if (!strcmp(items[i].stem, "named") && !strcmp(items[i].name, "Third"))
			renamed = 1;
	}
	return renamed && n == 3;
}

START_TEST(test_catalog_follows_changes)
{
	struct ps_store *st;
	struct ps_catalog *cat;
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	ck_assert_int_eq(catalog_new(st, &cat), PS_OK);
	struct catalog_session *items;
	size_t n;
	ck_assert_int_eq(catalog_snapshot(cat, &items, &n), PS_OK);
	catalog_snapshot_free(items, n);

	char path[512];
	snprintf(path, sizeof path, "%s/proj/named.jsonl", root);
	helper_append(path, NAME("n3", "\"n2\"", "Third"));
	snprintf(path, sizeof path, "%s/proj/old.jsonl", root);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_msg(catalog_wait_for(cat, renamed_and_gone), "the catalog did not follow the store");
	catalog_free(cat);
	store_free(st);
}
END_TEST

Suite *catalog_suite(void)
{
	Suite *s = suite_create("catalog");
	TCase *tc = tcase_create("catalog");
	tcase_add_checked_fixture(tc, catalog_fixture, catalog_cleanup);
	tcase_add_test(tc, test_catalog_table);
	tcase_add_test(tc, test_catalog_follows_changes);
	suite_add_tcase(s, tc);
	return s;
}
