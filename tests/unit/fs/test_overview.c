/* overview.c (the front end's usage.csv and sessions.md): the gate, the
 * size answered from the memo (fs->overview) equal to the text's, again
 * after a session grew, and each caller's own rows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "caller.h"
#include "mount.h"
#include "overview.h"
#include "route.h"
#include "suites.h"

static struct test_mount m;

static void overview_fixture(void)
{
	static const char *const a[] = { "first question" };
	static const char *const b[] = { "second question", "and more" };
	test_mount_dir(&m, "overview");
	test_mount_session(&m, "--w-alpha--", "s-a", "01900000-0000-7000-8000-0000000000a1", "Alpha", 10, a, 1);
	test_mount_session(&m, "--w-beta--", "s-b", "01900000-0000-7000-8000-0000000000b1", "", 20, b, 2);
	test_mount_session(&m, "", "flat", "01900000-0000-7000-8000-0000000000c1", "", 30, a, 1);
	test_mount_open(&m);
	psfs_caller_act_for(0, 0);
}

static void overview_cleanup(void)
{
	psfs_caller_act_for_done();
	test_mount_close(&m);
}

/* The size overview_size answers and the text's own length agree. */
static size_t sized(const char *name, const char *project)
{
	size_t size = 0, len = 0;
	char *text = NULL;
	ck_assert_int_eq(overview_size(&m.fs, name, project, &size), 0);
	ck_assert_int_eq(overview_build(&m.fs, name, project, &text, &len), 0);
	ck_assert_uint_eq(size, len);
	ck_assert_uint_eq(strlen(text), len);
	free(text);
	return size;
}

static char *built(const char *name, const char *project)
{
	size_t len;
	char *text = NULL;
	ck_assert_int_eq(overview_build(&m.fs, name, project, &text, &len), 0);
	return text;
}

START_TEST(test_overview_gate)
{
	struct psfs_path p;
	ck_assert(overview_is_name(OVERVIEW_USAGE_CSV));
	ck_assert(overview_is_name(OVERVIEW_SESSIONS_MD));
	ck_assert(!overview_is_name("usage.json"));
	const char *yes[] = { "/usage.csv", "/sessions.md", "/--w-alpha--/usage.csv", "/--w-beta--/sessions.md" };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		ck_assert_int_eq(route_split(&m.fs, yes[i], &p), 0);
		ck_assert_msg(overview_owns(&p), "%s", yes[i]);
	}
	const char *no[] = { "/", "/--w-alpha--", "/--w-alpha--/s-a/usage.json", "/--w-alpha--/s-a/usage.csv",
			     "/flat/usage.csv" };
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		ck_assert_int_eq(route_split(&m.fs, no[i], &p), 0);
		ck_assert_msg(!overview_owns(&p), "%s", no[i]);
	}
}
END_TEST

START_TEST(test_overview_size_follows_the_store)
{
	size_t whole = sized(OVERVIEW_USAGE_CSV, NULL);
	size_t alpha = sized(OVERVIEW_USAGE_CSV, "--w-alpha--");
	ck_assert_uint_gt(whole, alpha);
	size_t md = sized(OVERVIEW_SESSIONS_MD, NULL);
	/* Asked again: the memo answers, the same. */
	ck_assert_uint_eq(sized(OVERVIEW_USAGE_CSV, NULL), whole);
	ck_assert_uint_eq(sized(OVERVIEW_SESSIONS_MD, NULL), md);
	/* A new session in alpha: both of alpha's and the store's change. */
	static const char *const c[] = { "a much longer question than the others were" };
	test_mount_session(&m, "--w-alpha--", "s-c", "01900000-0000-7000-8000-0000000000a3", "Gamma", 50, c, 1);
	ck_assert_uint_gt(sized(OVERVIEW_USAGE_CSV, "--w-alpha--"), alpha);
	ck_assert_uint_gt(sized(OVERVIEW_USAGE_CSV, NULL), whole);
	ck_assert_uint_gt(sized(OVERVIEW_SESSIONS_MD, NULL), md);
	/* The other project's stays as it was. */
	char *beta = built(OVERVIEW_SESSIONS_MD, "--w-beta--");
	ck_assert_ptr_null(strstr(beta, "Gamma"));
	free(beta);
}
END_TEST

START_TEST(test_overview_rows_are_the_callers)
{
	char path[512];
	snprintf(path, sizeof path, "%s/--w-beta--/s-b.jsonl", m.root);
	ck_assert_int_eq(chmod(path, 0600), 0);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	char *all = built(OVERVIEW_USAGE_CSV, NULL);
	size_t all_size = sized(OVERVIEW_USAGE_CSV, NULL);
	ck_assert_ptr_nonnull(strstr(all, "s-b"));
	/* Someone who may not read s-b gets no row of it, and the size of
	 * what it gets, not the memo's of another caller. */
	psfs_caller_act_for(st.st_uid + 4242, st.st_gid + 4242);
	char *theirs = built(OVERVIEW_USAGE_CSV, NULL);
	ck_assert_ptr_null(strstr(theirs, "s-b"));
	ck_assert_ptr_nonnull(strstr(theirs, "s-a"));
	size_t their_size = sized(OVERVIEW_USAGE_CSV, NULL);
	ck_assert_uint_eq(their_size, strlen(theirs));
	ck_assert_uint_lt(their_size, all_size);
	free(theirs);
	free(all);
}
END_TEST

/* Built again, the text comes from the rows kept per session, the same
 * bytes; a session rewritten is read again, the others are not. */
START_TEST(test_overview_rows_kept)
{
	const char *names[] = { OVERVIEW_USAGE_CSV, OVERVIEW_SESSIONS_MD };
	for (size_t i = 0; i < 2; i++) {
		for (int scoped = 0; scoped < 2; scoped++) {
			const char *project = scoped ? "--w-alpha--" : NULL;
			char *first = built(names[i], project), *again = built(names[i], project);
			ck_assert_str_eq(first, again);
			free(first);
			free(again);
		}
	}
	char *before = built(OVERVIEW_SESSIONS_MD, NULL);
	char *csv_before = built(OVERVIEW_USAGE_CSV, NULL);
	static const char *const a[] = { "first question", "and another" };
	test_mount_session(&m, "--w-alpha--", "s-a", "01900000-0000-7000-8000-0000000000a1", "Renamed", 10, a, 2);
	char *after = built(OVERVIEW_SESSIONS_MD, NULL);
	char *csv_after = built(OVERVIEW_USAGE_CSV, NULL);
	ck_assert_ptr_nonnull(strstr(before, "Alpha"));
	ck_assert_ptr_null(strstr(after, "Alpha"));
	ck_assert_ptr_nonnull(strstr(after, "Renamed"));
	ck_assert_ptr_nonnull(strstr(csv_after, "Renamed"));
	ck_assert_ptr_null(strstr(csv_after, "Alpha"));
	ck_assert_ptr_nonnull(strstr(csv_before, "Alpha"));
	/* The untouched sessions' rows are as they were. */
	ck_assert_ptr_nonnull(strstr(after, "second question"));
	free(before);
	free(after);
	free(csv_before);
	free(csv_after);
}
END_TEST

Suite *overview_fs_suite(void)
{
	Suite *s = suite_create("overview (fs)");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, overview_fixture, overview_cleanup);
	tcase_add_test(tc, test_overview_gate);
	tcase_add_test(tc, test_overview_size_follows_the_store);
	tcase_add_test(tc, test_overview_rows_are_the_callers);
	tcase_add_test(tc, test_overview_rows_kept);
	suite_add_tcase(s, tc);
	return s;
}
