/* store.c: which names the store shows (projects are directories or links
 * to them, sessions are regular *.jsonl files, never links; "" is the flat
 * store root), that no name leaves the store, that an acquired session is
 * refreshed against its file, and that the cache keeps to its bound. */
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>
#include "helpers.h"
#include "pathresolve.h"
#include "store.h"
#include "suites.h"

struct names {
	char text[1024];
};

static int collect(void *ctx, const char *name, const struct stat *st)
{
	(void)st;
	struct names *n = ctx;
	strncat(n->text, name, sizeof n->text - strlen(n->text) - 2);
	strcat(n->text, ";");
	return 0;
}

static int has(const struct names *n, const char *name)
{
	char want[256];
	snprintf(want, sizeof want, ";%s;", name);
	char all[1100];
	snprintf(all, sizeof all, ";%s", n->text);
	return strstr(all, want) != NULL;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char root[64];

static void store_fixture(void)
{
	helper_tmpdir(root, "store");
	char p[512];
	snprintf(p, sizeof p, "%s/proj", root);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	put(p, "a.jsonl", HDR MSG("a1", "null", "user", "hi"));
	put(p, "notes.txt", "not a session\n");
	snprintf(p, sizeof p, "%s/proj/sub.jsonl", root);
	ck_assert_int_eq(mkdir(p, 0755), 0); /* a directory named like a session */
	snprintf(p, sizeof p, "%s/proj/link.jsonl", root);
	ck_assert_int_eq(symlink("a.jsonl", p), 0); /* never a session */
	snprintf(p, sizeof p, "%s/alias", root);
	ck_assert_int_eq(symlink("proj", p), 0); /* a project: pi follows it */
	put(root, "flat.jsonl", HDR);
	put(root, "stray.txt", "x\n");
}

static void store_cleanup(void)
{
	helper_rmtree(root);
}

START_TEST(test_store_lists)
{
	struct ps_store *st;
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	struct names projects = { "" }, sessions = { "" }, flat = { "" }, names = { "" };
	ck_assert_int_eq(store_list_projects(st, collect, &projects), PS_OK);
	ck_assert_msg(has(&projects, "proj") && has(&projects, "alias"), "%s", projects.text);
	ck_assert_msg(!has(&projects, "flat.jsonl") && !has(&projects, "stray.txt"), "%s", projects.text);

	ck_assert_int_eq(store_list_sessions(st, "proj", collect, &sessions), PS_OK);
	ck_assert_str_eq(sessions.text, "a;");
	ck_assert_int_eq(store_list_session_names(st, "proj", collect, &names), PS_OK);
	ck_assert_str_eq(names.text, "a;");
	ck_assert_int_eq(store_list_sessions(st, "", collect, &flat), PS_OK);
	ck_assert_str_eq(flat.text, "flat;");

	struct stat sb;
	ck_assert_int_eq(store_stat_session(st, "proj", "a", &sb), PS_OK);
	ck_assert_int_eq(store_stat_session(st, "proj", "link", &sb), PS_ERR_NOENT);
	ck_assert_int_eq(store_stat_session(st, "proj", "sub", &sb), PS_ERR_NOENT);
	ck_assert_int_eq(store_stat_session(st, "proj", "notes", &sb), PS_ERR_NOENT);
	ck_assert_int_eq(store_stat_project(st, "alias", &sb), PS_OK);
	ck_assert_int_eq(store_stat_project(st, "flat.jsonl", &sb), PS_ERR_NOENT);
	store_free(st);
}
END_TEST

START_TEST(test_store_names_stay_inside)
{
	struct ps_store *st;
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	struct stat sb;
	struct store_ref ref;
	/* ../<root name>/proj/a would reach a real session through the parent */
	char up[128];
	snprintf(up, sizeof up, "../%s/proj", strrchr(root, '/') + 1);
	ck_assert_int_ne(store_stat_project(st, "..", &sb), PS_OK);
	ck_assert_int_ne(store_stat_project(st, up, &sb), PS_OK);
	ck_assert_int_ne(store_stat_session(st, "proj", "../proj/a", &sb), PS_OK);
	ck_assert_int_ne(store_acquire(st, "..", "a", &ref), PS_OK);
	ck_assert_int_ne(store_acquire(st, "proj", "../../x", &ref), PS_OK);
	ck_assert_int_ne(store_acquire(st, "proj", ".", &ref), PS_OK);
	store_free(st);
}
END_TEST

START_TEST(test_store_acquire_refreshes)
{
	struct ps_store *st;
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	struct store_ref ref;
	ck_assert_int_eq(store_acquire_cached(st, "proj", "a", &ref), PS_ERR_NOENT);
	ck_assert_int_eq(store_acquire(st, "proj", "a", &ref), PS_OK);
	ck_assert_uint_eq(ref.session->n_entries, 1);
	store_release(st, &ref);

	char path[512];
	snprintf(path, sizeof path, "%s/proj/a.jsonl", root);
	helper_append(path, MSG("a2", "\"a1\"", "assistant", "hello"));
	ck_assert_int_eq(store_acquire_cached(st, "proj", "a", &ref), PS_OK);
	ck_assert_uint_eq(ref.session->n_entries, 2);
	store_release(st, &ref);
	ck_assert_uint_eq(store_cached(st), 1);
	store_free(st);
}
END_TEST

START_TEST(test_store_cache_bound)
{
	char p[512];
	snprintf(p, sizeof p, "%s/proj", root);
	put(p, "b.jsonl", HDR);
	put(p, "c.jsonl", HDR);
	struct ps_store *st;
	ck_assert_int_eq(store_open(root, 2, &st), PS_OK);
	const char *stems[] = { "a", "b", "c", "a", "b", "c" };
	for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++) {
		struct store_ref ref;
		ck_assert_int_eq(store_acquire(st, "proj", stems[i], &ref), PS_OK);
		ck_assert_ptr_nonnull(ref.session);
		ck_assert(ref.session->have_header);
		store_release(st, &ref);
		ck_assert_uint_le(store_cached(st), 2);
	}
	/* a session held is never evicted from under its holder */
	struct store_ref held, other;
	ck_assert_int_eq(store_acquire(st, "proj", "a", &held), PS_OK);
	ck_assert_int_eq(store_acquire(st, "proj", "b", &other), PS_OK);
	store_release(st, &other);
	ck_assert_int_eq(store_acquire(st, "proj", "c", &other), PS_OK);
	store_release(st, &other);
	ck_assert_uint_eq(held.session->n_entries, 1);
	store_release(st, &held);
	store_free(st);
}
END_TEST

/* The store's path as pi's path.resolve makes it: lexical, no symlink
 * followed (a symlink in the way stays in the path). */
START_TEST(test_path_resolve)
{
	static const char *const cases[][2] = {
		{ "/a/b/c", "/a/b/c" },       { "/a//b/./c/", "/a/b/c" }, { "/a/b/../c", "/a/c" },
		{ "/../..", "/" },            { "/", "/" },               { "/a/./../..", "/" },
		{ "/home/u/link/sessions", "/home/u/link/sessions" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = path_resolve(cases[i][0]);
		ck_assert_ptr_nonnull(got);
		ck_assert_str_eq(got, cases[i][1]);
		free(got);
	}
	char dir[64];
	helper_tmpdir(dir, "pathresolve");
	char link[PATH_MAX];
	snprintf(link, sizeof link, "%s/link", dir);
	ck_assert_int_eq(symlink("/usr", link), 0);
	char *cwd = getcwd(NULL, 0);
	ck_assert_int_eq(chdir(dir), 0);
	char *got = path_resolve("link/./share/../bin");
	char want[PATH_MAX];
	char *real_dir = getcwd(NULL, 0); /* the directory as getcwd gives it */
	snprintf(want, sizeof want, "%s/link/bin", real_dir);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(chdir(cwd), 0);
	free(got);
	free(real_dir);
	free(cwd);
	helper_rmtree(dir);
}
END_TEST

Suite *store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");
	tcase_add_checked_fixture(tc, store_fixture, store_cleanup);
	tcase_add_test(tc, test_store_lists);
	tcase_add_test(tc, test_store_names_stay_inside);
	tcase_add_test(tc, test_store_acquire_refreshes);
	tcase_add_test(tc, test_store_cache_bound);
	suite_add_tcase(s, tc);
	tc = tcase_create("path_resolve");
	tcase_add_test(tc, test_path_resolve);
	suite_add_tcase(s, tc);
	return s;
}
