#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"
#include "sessionparent.h"
#include "suites.h"
#include "trash.h"

START_TEST(test_trash_home_dir)
{
	char *d = trash_home_dir("/x/data", "/home/u");
	ck_assert_str_eq(d, "/x/data/Trash");
	free(d);
	/* A relative XDG_DATA_HOME is ignored, as the base directory spec asks. */
	d = trash_home_dir("rel/data", "/home/u");
	ck_assert_str_eq(d, "/home/u/.local/share/Trash");
	free(d);
	ck_assert_ptr_null(trash_home_dir(NULL, NULL));
	ck_assert_ptr_null(trash_home_dir("", "relative"));
}
END_TEST

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_trash_put_names_and_info)
{
	char dir[64], path[128], trash[128], got[256];
	helper_tmpdir(dir, "trash");
	snprintf(trash, sizeof trash, "%s/Trash", dir);
	snprintf(path, sizeof path, "%s/a b%%.jsonl", dir);
	write_file(path, "first\n");
	char *where = NULL;
	/* 2026-01-02T03:04:05 UTC, read back in local time below. */
	time_t when = 1767323045;
	ck_assert_int_eq(trash_put(path, trash, 1000, when, &where), PS_OK);
	snprintf(got, sizeof got, "%s/files/a b%%.jsonl", trash);
	ck_assert_str_eq(where, got);
	free(where);
	ck_assert_int_ne(access(path, F_OK), 0);
	size_t n;
	char *text = helper_slurp(got, &n);
	ck_assert_str_eq(text, "first\n");
	free(text);
	snprintf(got, sizeof got, "%s/info/a b%%.jsonl.trashinfo", trash);
	text = helper_slurp(got, &n);
	struct tm tm;
	char date[32], want[512];
	localtime_r(&when, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(want, sizeof want, "[Trash Info]\nPath=%s/a%%20b%%25.jsonl\nDeletionDate=%s\n", dir, date);
	ck_assert_str_eq(text, want);
	free(text);

	/* The same name again: the next free one, the first left alone. */
	write_file(path, "second\n");
	ck_assert_int_eq(trash_put(path, trash, 1000, when, &where), PS_OK);
	snprintf(got, sizeof got, "%s/files/a b%%_2.jsonl", trash);
	ck_assert_str_eq(where, got);
	free(where);
	text = helper_slurp(got, &n);
	ck_assert_str_eq(text, "second\n");
	free(text);
	/* An info file without its file still holds its name. */
	snprintf(got, sizeof got, "%s/info/a b%%_3.jsonl.trashinfo", trash);
	write_file(got, "[Trash Info]\n");
	write_file(path, "third\n");
	ck_assert_int_eq(trash_put(path, trash, 1000, when, &where), PS_OK);
	snprintf(got, sizeof got, "%s/files/a b%%_4.jsonl", trash);
	ck_assert_str_eq(where, got);
	free(where);
	helper_rmtree(dir);
}
END_TEST

START_TEST(test_trash_put_refusals)
{
	char dir[64], path[128], trash[128], info[160];
	char *where = (char *)1;
	helper_tmpdir(dir, "trash");
	snprintf(trash, sizeof trash, "%s/Trash", dir);
	snprintf(path, sizeof path, "%s/gone.jsonl", dir);
	ck_assert_int_eq(trash_put(path, trash, 1000, 0, &where), PS_ERR_NOENT);
	ck_assert_ptr_null(where);
	ck_assert_int_eq(trash_put("relative.jsonl", trash, 1000, 0, &where), PS_ERR_INVALID);
	/* A trash that cannot be made: the file stays, no info file is left. */
	write_file(path, "kept\n");
	snprintf(trash, sizeof trash, "%s/file-not-dir", dir);
	write_file(trash, "");
	ck_assert_int_ne(trash_put(path, trash, 1000, 0, &where), PS_OK);
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(info, sizeof info, "%s/info", trash);
	ck_assert_int_ne(access(info, F_OK), 0);
	helper_rmtree(dir);
}
END_TEST

/* A session whose header names parentSession, as if in store root. */
static int wanted_b(void *ctx, const char *orig)
{
	const char *dir = ctx;
	size_t n = strlen(dir);
	return strncmp(orig, dir, n) == 0 && orig[n] == '/' && orig[n + 1] == 'b';
}

/* trash_take_back: what was put in the trash comes back to its Path
 * (percent-decoded), its info file dropped; never over a file that is
 * there now; only what wanted names. */
START_TEST(test_trash_take_back)
{
	char dir[64], trash[128], a[128], b1[128], b2[128];
	char *where = NULL;
	size_t n = 0;
	helper_tmpdir(dir, "trash");
	snprintf(trash, sizeof trash, "%s/Trash", dir);
	snprintf(a, sizeof a, "%s/a.jsonl", dir);
	snprintf(b1, sizeof b1, "%s/b c%%.md", dir);
	snprintf(b2, sizeof b2, "%s/b2.md", dir);
	write_file(a, "a\n");
	write_file(b1, "b1\n");
	write_file(b2, "b2\n");
	ck_assert_int_eq(trash_take_back(trash, wanted_b, dir, &n), PS_OK); /* no trash yet */
	ck_assert_uint_eq(n, 0);
	const char *all[] = { a, b1, b2 };
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(trash_put(all[i], trash, 1000, 1767323045, &where), PS_OK);
		free(where);
	}
	write_file(b2, "new\n"); /* made again meanwhile: stays, and so does the trashed one */
	ck_assert_int_eq(trash_take_back(trash, wanted_b, dir, &n), PS_OK);
	ck_assert_uint_eq(n, 1);
	size_t len;
	char *text = helper_slurp(b1, &len);
	ck_assert_str_eq(text, "b1\n");
	free(text);
	text = helper_slurp(b2, &len);
	ck_assert_str_eq(text, "new\n");
	free(text);
	ck_assert_int_ne(access(a, F_OK), 0);
	char info[256];
	snprintf(info, sizeof info, "%s/info/b c%%.md.trashinfo", trash);
	ck_assert_int_ne(access(info, F_OK), 0);
	snprintf(info, sizeof info, "%s/info/b2.md.trashinfo", trash);
	ck_assert_int_eq(access(info, F_OK), 0);
	helper_rmtree(dir);
}
END_TEST

static char *parent_of(const char *root, const char *rel, const char *parent)
{
	char path[256], line[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	mkdir(path, 0700);
	*slash = '/';
	snprintf(line, sizeof line,
		 "{\"type\":\"session\",\"version\":3,\"id\":\"f\",\"timestamp\":\"2026-01-01T00:00:00.000Z\","
		 "\"cwd\":\"/x\",\"parentSession\":\"%s\"}\n", parent);
	write_file(path, line);
	struct ps_session *s = helper_open(path);
	s->store_root = root;
	char *target = sessionparent_target(s);
	session_free(s);
	return target;
}

START_TEST(test_sessionparent_targets)
{
	char root[64], parent[256];
	helper_tmpdir(root, "parent");
	struct {
		const char *rel, *parent_rel, *want;
	} cases[] = {
		{ "--p--/b.jsonl", "--p--/a.jsonl", "../a" },
		{ "--q--/b.jsonl", "--p--/a.jsonl", "../../--p--/a" },
		{ "b.jsonl", "--p--/a.jsonl", "../--p--/a" },
		{ "--q--/b.jsonl", "a.jsonl", "../../a" },
		{ "b.jsonl", "a.jsonl", "../a" },
		/* Never out of the store, never a name the mount cannot show. */
		{ "--p--/b.jsonl", "../a.jsonl", NULL },
		{ "--p--/b.jsonl", "--p--/x/a.jsonl", NULL },
		{ "--p--/b.jsonl", "--p--/a.txt", NULL },
		{ "--p--/b.jsonl", "../--p--/a.jsonl", NULL },
		{ "--p--/b.jsonl", "--p--/.jsonl", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(parent, sizeof parent, "%s/%s", root, cases[i].parent_rel);
		char *got = parent_of(root, cases[i].rel, parent);
		if (cases[i].want)
			ck_assert_msg(got && strcmp(got, cases[i].want) == 0, "case %zu: %s", i, got ? got : "NULL");
		else
			ck_assert_msg(!got, "case %zu: %s", i, got);
		free(got);
	}
	char *got = parent_of(root, "--p--/c.jsonl", "/etc/a.jsonl");
	ck_assert_ptr_null(got);
	helper_rmtree(root);
}
END_TEST

Suite *trash_suite(void)
{
	Suite *s = suite_create("trash");
	TCase *tc = tcase_create("trash");
	tcase_add_test(tc, test_trash_home_dir);
	tcase_add_test(tc, test_trash_put_names_and_info);
	tcase_add_test(tc, test_trash_put_refusals);
	tcase_add_test(tc, test_trash_take_back);
	tcase_add_test(tc, test_sessionparent_targets);
	suite_add_tcase(s, tc);
	return s;
}
