/* searchdir.c: search/QUERY/ over a store, for a struct psfs made here:
 * the hits listed and kept for the lookups that follow (fs->search), the
 * entry links of a hit, and a query that is not one (logged in
 * fs->journal).  Acting as the test's own user (caller.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "caller.h"
#include "journal.h"
#include "mount.h"
#include "route.h"
#include "searchdir.h"
#include "suites.h"

static struct test_mount m;

static void searchdir_fixture(void)
{
	static const char *const a1[] = { "how do we deploy", "rollback plan please" };
	static const char *const a2[] = { "write the release notes", "mention the deploy fix" };
	static const char *const b1[] = { "unrelated question about tests" };
	test_mount_dir(&m, "searchdir");
	test_mount_session(&m, "--w-alpha--", "2026-01-01T00-00-00-000Z_a1", "01900000-0000-7000-8000-0000000000a1",
			   "Deploy the cluster", 30, a1, 2);
	test_mount_session(&m, "--w-alpha--", "2026-01-02T00-00-00-000Z_a2", "01900000-0000-7000-8000-0000000000a2",
			   "", 20, a2, 2);
	test_mount_session(&m, "--w-beta--", "2026-01-03T00-00-00-000Z_b1", "01900000-0000-7000-8000-0000000000b1", "",
			   40, b1, 1);
	test_mount_open(&m);
	psfs_caller_act_for(getuid(), getgid());
}

static void searchdir_cleanup(void)
{
	psfs_caller_act_for_done();
	test_mount_close(&m);
}

struct names {
	char text[1024];
	size_t n;
};

static int collect(void *buf, const char *name, const struct stat *st, off_t off, enum fuse_fill_dir_flags flags)
{
	struct names *names = buf;
	(void)st, (void)off, (void)flags;
	size_t used = strlen(names->text);
	snprintf(names->text + used, sizeof names->text - used, "%s%s", names->n++ ? "\n" : "", name);
	return 0;
}

static int list(const char *path, struct names *out)
{
	struct psfs_path p;
	memset(out, 0, sizeof *out);
	ck_assert_int_eq(route_split(&m.fs, path, &p), 0);
	ck_assert_msg(search_owns(path, &p), "%s is not a search's", path);
	return search_readdir(&m.fs, path, &p, out, collect);
}

START_TEST(test_search_owns)
{
	struct psfs_path p;
	const char *yes[] = { "/search", "/search/q", "/search/q/hit", "/--w-alpha--/search", "/--w-alpha--/search/q" };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		ck_assert_int_eq(route_split(&m.fs, yes[i], &p), 0);
		ck_assert_msg(search_owns(yes[i], &p), "%s", yes[i]);
	}
	const char *no[] = { "/", "/searchx", "/--w-alpha--", "/--w-alpha--/2026-01-01T00-00-00-000Z_a1" };
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		ck_assert_int_eq(route_split(&m.fs, no[i], &p), 0);
		ck_assert_msg(!search_owns(no[i], &p), "%s", no[i]);
	}
}
END_TEST

START_TEST(test_search_lists_hits_in_order)
{
	struct names names;
	ck_assert_int_eq(list("/search", &names), 0);
	ck_assert_str_eq(names.text, "");
	ck_assert_int_eq(list("/search/deploy", &names), 0);
	ck_assert_str_eq(names.text, "01-Deploy the cluster~000000a1\n02-write the release notes~000000a2");
	ck_assert_int_eq(list("/search/deploy release", &names), 0);
	ck_assert_str_eq(names.text, "01-write the release notes~000000a2");
	ck_assert_int_eq(list("/--w-beta--/search/deploy", &names), 0);
	ck_assert_str_eq(names.text, "");
	ck_assert_int_eq(list("/--w-beta--/search/unrelated", &names), 0);
	ck_assert_str_eq(names.text, "01-unrelated question about tests~000000b1");
}
END_TEST

START_TEST(test_search_hit_and_links)
{
	struct names names;
	struct psfs_path p;
	struct stat root = { 0 }, st;
	const char *hit = "/search/re:roll(back)? plan/01-Deploy the cluster~000000a1";
	ck_assert_int_eq(list("/search/re:roll(back)? plan", &names), 0);
	ck_assert_str_eq(names.text, "01-Deploy the cluster~000000a1");
	/* The hit kept from that listing answers its lookup. */
	ck_assert_int_eq(route_split(&m.fs, hit, &p), 0);
	ck_assert_int_eq(search_getattr(&m.fs, hit, &p, &root, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	/* Inside: the session, and the entry the expression found. */
	ck_assert_int_eq(list(hit, &names), 0);
	ck_assert_ptr_nonnull(strstr(names.text, "session"));
	ck_assert_ptr_nonnull(strstr(names.text, ".m2.md"));
	ck_assert_ptr_null(strstr(names.text, ".m1.md"));
	char link[1024], target[256];
	snprintf(link, sizeof link, "%s/session", hit);
	ck_assert_int_eq(route_split(&m.fs, link, &p), 0);
	ck_assert_int_eq(search_getattr(&m.fs, link, &p, &root, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(search_readlink(&m.fs, link, &p, target, sizeof target), 0);
	ck_assert_int_eq(st.st_size, (off_t)strlen(target));
	ck_assert_str_eq(target, "../../../--w-alpha--/2026-01-01T00-00-00-000Z_a1");
	/* A name that is no result. */
	const char *none = "/search/deploy/07-nothing~00000000";
	ck_assert_int_eq(route_split(&m.fs, none, &p), 0);
	ck_assert_int_eq(search_getattr(&m.fs, none, &p, &root, &st), -ENOENT);
}
END_TEST

START_TEST(test_search_invalid_query_is_logged)
{
	struct names names;
	ck_assert_int_eq(list("/search/re:(unclosed", &names), -EINVAL);
	size_t len;
	char *log = journal_snapshot(m.fs.journal, &len);
	ck_assert_ptr_nonnull(log);
	ck_assert_ptr_nonnull(strstr(log, "search re:(unclosed: Invalid regular expression"));
	free(log);
}
END_TEST

Suite *searchdir_suite(void)
{
	Suite *s = suite_create("searchdir");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, searchdir_fixture, searchdir_cleanup);
	tcase_add_test(tc, test_search_owns);
	tcase_add_test(tc, test_search_lists_hits_in_order);
	tcase_add_test(tc, test_search_hit_and_links);
	tcase_add_test(tc, test_search_invalid_query_is_logged);
	suite_add_tcase(s, tc);
	return s;
}
