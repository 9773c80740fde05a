/* title.c, sessionsmd.c and infocache.c: the titles the views and
 * sessions.md show, sessions.md's rows, and the infos search/ keeps
 * within its budget, and the rows filememo.c keeps per session file. */
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include "buf.h"
#include "filememo.h"
#include "helpers.h"
#include "infocache.h"
#include "sessionsmd.h"
#include "suites.h"
#include "title.h"

static void title_is(const char *name, const char *first, size_t max, const char *want)
{
	char *t = title_line(name, first, first ? strlen(first) : 0, max);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t, want);
	free(t);
}

START_TEST(test_title_line)
{
	title_is("Named", "first message", 48, "Named");
	title_is("", "first message", 48, "first message");
	title_is(NULL, NULL, 48, "(no messages)");
	/* Control characters read as spaces, white space runs as one. */
	title_is(NULL, "  line one\n\n\tline  two\x7f ", 48, "line one line two");
	/* Cut at a character's start, ending in an ellipsis. */
	title_is(NULL, "abcdefghijklmnop", 10, "abcdefg\xe2\x80\xa6");
	title_is(NULL, "ab\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8, "ab\xc3\xa9\xe2\x80\xa6");
	title_is(NULL, "word word word", 10, "word wo\xe2\x80\xa6");
	title_is(NULL, "abc      defghijk", 10, "abc def\xe2\x80\xa6");
	title_is(NULL, "abcdef ghijk", 10, "abcdef\xe2\x80\xa6"); /* no space before the ellipsis */
	/* A title of nothing but white space is empty, never NULL. */
	title_is(NULL, " \n ", 48, "");
}
END_TEST

START_TEST(test_sessionsmd_row)
{
	struct buf b = BUF_INIT;
	struct sessionsmd_row row = {
		"a | b \\ c", 1767225600000.0, 1767229200000.0, 12, 3, 30.330197699999985, "--p q--/2026_x", 0, 0,
	};
	ck_assert_int_eq(sessionsmd_header(&b, 1), PS_OK);
	ck_assert_int_eq(sessionsmd_row(&b, &row), PS_OK);
	ck_assert_int_eq(buf_finish(&b), 0);
	ck_assert_ptr_nonnull(strstr(b.data, "1 session, last active first"));
	ck_assert_ptr_nonnull(strstr(b.data,
		"| a \\| b \\\\ c | 2026-01-01 00:00 | 2026-01-01 01:00 | 12 | 3 | $30.33 | [2026_x](--p%20q--/2026_x/) |\n"));
	buf_free(&b);
	/* A parent's cost cell says what its subagents' sessions add. */
	row.subagent_sessions = 1;
	row.subagent_cost = 0.004;
	ck_assert_int_eq(sessionsmd_row(&b, &row), PS_OK);
	buf_finish(&b);
	ck_assert_ptr_nonnull(strstr(b.data, "| 12 | 3 | $30.33 (1 subagent session: $30.33 in all) | [2026_x]"));
	buf_free(&b);
	row.subagent_sessions = 4;
	row.subagent_cost = 1.77;
	ck_assert_int_eq(sessionsmd_row(&b, &row), PS_OK);
	buf_finish(&b);
	ck_assert_ptr_nonnull(strstr(b.data, "| $30.33 (4 subagent sessions: $32.10 in all) |"));
	buf_free(&b);
	row.subagent_sessions = 0;
	/* A time that is no date is a question mark. */
	row.created_ms = NAN;
	ck_assert_int_eq(sessionsmd_row(&b, &row), PS_OK);
	buf_finish(&b);
	ck_assert_ptr_nonnull(strstr(b.data, "| ? | 2026-01-01 01:00 |"));
	buf_free(&b);
	/* Times as strftime's "%Y-%m-%d %H:%M" writes them, at the ends of
	 * the four-digit years and past them; the odd bytes of a directory
	 * escaped one by one. */
	static const struct { double ms; const char *text; } times[] = {
		{ 0, "| 1970-01-01 00:00 |" }, { -1, "| 1969-12-31 23:59 |" },
		{ 253402300799000.0, "| 9999-12-31 23:59 |" }, { 253402300800000.0, "| 10000-01-01 00:00 |" },
		{ -62167219200000.0, "| 0-01-01 00:00 |" }, { -30610224000000.0, "| 1000-01-01 00:00 |" },
		{ 951782400000.0 + 59 * 60000.0, "| 2000-02-29 00:59 |" },
	};
	row.dir = "p/\xc3\xa9 %|x";
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
		row.created_ms = times[i].ms;
		ck_assert_int_eq(sessionsmd_row(&b, &row), PS_OK);
		buf_finish(&b);
		ck_assert_msg(strstr(b.data, times[i].text) != NULL, "%.0f: %s", times[i].ms, b.data);
		ck_assert_ptr_nonnull(strstr(b.data, "[\xc3\xa9 %\\|x](p/%C3%A9%20%25%7Cx/) |"));
		buf_free(&b);
	}
}
END_TEST

static char *info_file(const char *text)
{
	struct buf b = BUF_INIT;
	buf_printf(&b, "{\"type\":\"session\",\"version\":3,\"id\":\"i\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/w\"}\n"
		       "{\"type\":\"message\",\"id\":\"u\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\","
		       "\"content\":\"%s\",\"timestamp\":5}}\n", text);
	buf_finish(&b);
	char *path = helper_write(b.data);
	buf_free(&b);
	return path;
}

START_TEST(test_infocache_budget)
{
	char *a = info_file("alpha alpha alpha"), *b = info_file("beta");
	struct infocache *c;
	const struct sessioninfo *info;
	size_t n;
	ck_assert_int_eq(infocache_new(1, &c), PS_OK);
	/* While locked, what was lent stays, whatever the budget. */
	infocache_lock(c);
	ck_assert_int_eq(infocache_get(c, a, &info), PS_OK);
	ck_assert_ptr_nonnull(strstr(info->text.data, "alpha"));
	ck_assert_int_eq(infocache_get(c, b, &info), PS_OK);
	ck_assert_ptr_nonnull(strstr(info->text.data, "beta"));
	infocache_unlock(c);
	/* Past the budget at unlock: dropped, oldest first, all here. */
	ck_assert_uint_eq(infocache_bytes(c, &n), 0);
	ck_assert_uint_eq(n, 0);
	infocache_free(c);

	ck_assert_int_eq(infocache_new(1 << 20, &c), PS_OK);
	infocache_lock(c);
	ck_assert_int_eq(infocache_get(c, a, &info), PS_OK);
	infocache_unlock(c);
	size_t kept = infocache_bytes(c, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_gt(kept, 0);
	/* An append is read on the next get. */
	helper_append(a, "{\"type\":\"session_info\",\"id\":\"n\",\"parentId\":\"u\",\"timestamp\":\"t\",\"name\":\"Renamed\"}\n");
	infocache_lock(c);
	ck_assert_int_eq(infocache_get(c, a, &info), PS_OK);
	ck_assert_str_eq(info->name, "Renamed");
	/* A file gone: its info is dropped, the error said. */
	unlink(b);
	ck_assert_int_ne(infocache_get(c, b, &info), PS_OK);
	infocache_unlock(c);
	ck_assert_uint_eq(infocache_bytes(c, &n) > 0, 1);
	ck_assert_uint_eq(n, 1);
	infocache_free(c);
	unlink(a);
	free(a);
	free(b);
}
END_TEST

/* The rows kept per session file: found by key and stamp, dropped when
 * the stamp changed, the least recently used first past the budget. */
static struct filestamp stamp_n(uint64_t n)
{
	struct stat st;
	struct filestamp out;
	memset(&st, 0, sizeof st);
	st.st_dev = 1;
	st.st_ino = n;
	st.st_size = (off_t)(100 + n);
	st.st_mtim.tv_sec = (time_t)n;
	st.st_ctim.tv_nsec = (long)n;
	filestamp_of(&st, &out);
	return out;
}

static int memo_has(struct filememo *m, const char *key, uint64_t n, const char *want)
{
	struct buf got = BUF_INIT;
	struct filestamp st = stamp_n(n);
	int found = filememo_get(m, key, strlen(key), &st, &got);
	if (found == 1) {
		ck_assert_uint_eq(got.len, strlen(want));
		ck_assert(!got.len || memcmp(got.data, want, got.len) == 0);
	}
	buf_free(&got);
	return found;
}

START_TEST(test_filememo)
{
	struct filememo *m;
	char key[32], val[32];
	size_t count;
	ck_assert_int_eq(filememo_new(64 << 10, &m), PS_OK);
	struct filestamp s1 = stamp_n(1), s2 = stamp_n(2);
	ck_assert_int_eq(memo_has(m, "a", 1, ""), 0);
	ck_assert_int_eq(filememo_put(m, "a", 1, &s1, "row a", 5), PS_OK);
	ck_assert_int_eq(filememo_put(m, "b", 1, &s1, "", 0), PS_OK);
	ck_assert_int_eq(memo_has(m, "a", 1, "row a"), 1);
	ck_assert_int_eq(memo_has(m, "b", 1, ""), 1);
	/* Another stamp: not found, and the old value is gone. */
	ck_assert_int_eq(memo_has(m, "a", 2, ""), 0);
	ck_assert_int_eq(memo_has(m, "a", 1, ""), 0);
	ck_assert_int_eq(filememo_put(m, "a", 1, &s2, "row a2", 6), PS_OK);
	ck_assert_int_eq(memo_has(m, "a", 2, "row a2"), 1);
	filememo_bytes(m, &count);
	ck_assert_uint_eq(count, 2);
	/* Many more than fit: the budget holds, the latest are kept, and a
	 * value used lately outlives older ones. */
	for (uint64_t i = 0; i < 5000; i++) {
		struct filestamp st = stamp_n(i);
		snprintf(key, sizeof key, "k%llu", (unsigned long long)i);
		snprintf(val, sizeof val, "v%llu", (unsigned long long)i);
		ck_assert_int_eq(filememo_put(m, key, strlen(key), &st, val, strlen(val)), PS_OK);
		if (i % 100 == 0)
			ck_assert_int_eq(memo_has(m, "k0", 0, "v0"), 1);
	}
	ck_assert_uint_le(filememo_bytes(m, &count), 64 << 10);
	ck_assert_uint_gt(count, 100);
	ck_assert_uint_lt(count, 5000);
	ck_assert_int_eq(memo_has(m, "k4999", 4999, "v4999"), 1);
	ck_assert_int_eq(memo_has(m, "k0", 0, "v0"), 1);
	ck_assert_int_eq(memo_has(m, "k1", 1, "v1"), 0);
	ck_assert_int_eq(memo_has(m, "a", 2, ""), 0);
	filememo_free(m);
	/* None at all: nothing kept, nothing found. */
	ck_assert_int_eq(filememo_put(NULL, "a", 1, &s1, "x", 1), PS_OK);
	ck_assert_int_eq(memo_has(NULL, "a", 1, "x"), 0);
}
END_TEST

Suite *overview_suite(void)
{
	Suite *s = suite_create("overview");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_title_line);
	tcase_add_test(tc, test_sessionsmd_row);
	tcase_add_test(tc, test_infocache_budget);
	tcase_add_test(tc, test_filememo);
	suite_add_tcase(s, tc);
	return s;
}
