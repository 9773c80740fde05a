/* journal.c: the log as each caller reads it back, and the rejected
 * texts kept within their budget (at most 64, no more bytes than the
 * budget, the oldest dropped first, one larger than it cut to it).  The
 * caller is set with psfs_caller_act_for, as a release does; the texts
 * are overlay files (overlay.h), freed after each test. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "caller.h"
#include "draft.h"
#include "journal.h"
#include "overlay.h"
#include "suites.h"

static struct overlay *ov;
static struct journal *j;

static void journal_fixture(void)
{
	/* Every line goes to stderr too: not into the test's output. */
	int null = open("/dev/null", O_WRONLY);
	ck_assert_int_ge(null, 0);
	ck_assert_int_eq(dup2(null, STDERR_FILENO), STDERR_FILENO);
	close(null);
	ov = overlay_new();
	ck_assert_ptr_nonnull(ov);
	j = journal_new(JOURNAL_REJECTED_DEFAULT_BUDGET, ov, "/mnt");
	ck_assert_ptr_nonnull(j);
	psfs_caller_act_for(1000, 1000);
}

static void journal_cleanup(void)
{
	journal_free(j);
	j = NULL;
	overlay_free(ov);
	ov = NULL;
	psfs_caller_act_for_done();
}

/* The log as uid reads it (new string). */
static char *log_as(uid_t uid, size_t *len)
{
	psfs_caller_act_for(uid, uid);
	char *text = journal_snapshot(j, len);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(strlen(text), *len);
	ck_assert_uint_eq(journal_size(j), *len);
	return text;
}

/* A copy of an overlay file's content (overlay locked): the one place
 * here that reads a node's text, so the only one to follow a change of
 * how the overlay holds it. */
static char *node_text(const struct overlay_node *node, size_t len)
{
	char *copy = malloc(len + 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, node->draft->data, len);
	copy[len] = '\0';
	return copy;
}

/* A copy of the rejected text kept at rejected/name, or NULL; its
 * owner and mode into *out. */
static char *kept(const char *name, size_t *len, struct stat *out)
{
	char path[256];
	char *copy = NULL;
	snprintf(path, sizeof path, JOURNAL_REJECTED "/%s", name);
	overlay_lock(ov);
	struct overlay_node *node = overlay_get(ov, path);
	if (node) {
		struct stat st;
		overlay_stat(node, &st);
		*len = (size_t)st.st_size;
		copy = node_text(node, *len);
		if (out)
			*out = st;
	}
	overlay_unlock(ov);
	return copy;
}

struct kept_sum {
	size_t count, bytes;
};

static void kept_count(void *ctx, const char *name, const struct overlay_node *node)
{
	struct kept_sum *sum = ctx;
	struct stat st;
	(void)name;
	overlay_stat(node, &st);
	sum->count++;
	sum->bytes += (size_t)st.st_size;
}

static struct kept_sum kept_all(void)
{
	struct kept_sum sum = { 0, 0 };
	overlay_lock(ov);
	overlay_list(ov, JOURNAL_REJECTED, kept_count, &sum);
	overlay_unlock(ov);
	return sum;
}

START_TEST(test_journal_lines_are_their_callers)
{
	size_t len;
	journal_log_in(j, "mine %d", 7);
	psfs_caller_act_for(1001, 1001);
	journal_log_in(j, "theirs");
	char *text = log_as(1000, &len);
	/* "<UTC stamp> line\n", the owner not shown. */
	ck_assert_uint_eq(len, strlen("2026-01-01T00:00:00Z mine 7\n"));
	ck_assert_int_eq(text[4], '-');
	ck_assert_int_eq(text[10], 'T');
	ck_assert_int_eq(text[19], 'Z');
	ck_assert_str_eq(text + 20, " mine 7\n");
	free(text);
	text = log_as(1001, &len);
	ck_assert_str_eq(text + 20, " theirs\n");
	free(text);
	text = log_as(1002, &len);
	ck_assert_uint_eq(len, 0);
	free(text);
	/* Root reads every line. */
	text = log_as(0, &len);
	ck_assert_ptr_nonnull(strstr(text, " mine 7\n"));
	ck_assert_ptr_nonnull(strstr(text, " theirs\n"));
	free(text);
	/* No journal: stderr only. */
	journal_log_in(NULL, "to stderr alone");
}
END_TEST

START_TEST(test_journal_log_keeps_the_latest)
{
	char line[256];
	memset(line, 'x', 199);
	line[199] = '\0';
	for (int i = 0; i < 3000; i++)
		journal_log_in(j, "%04d %s", i, line);
	size_t len;
	char *text = log_as(0, &len);
	/* At most 256 KiB, whole lines dropped from the front. */
	ck_assert_uint_le(len, 256u << 10);
	ck_assert_uint_gt(len, 200u << 10);
	ck_assert_int_eq(text[len - 1], '\n');
	ck_assert_int_eq(text[4], '-');
	ck_assert_ptr_null(strstr(text, "Z 0000 "));
	ck_assert_ptr_nonnull(strstr(text, "Z 2999 "));
	free(text);
}
END_TEST

START_TEST(test_journal_reject_keeps_the_text)
{
	struct stat st;
	size_t len;
	journal_reject_in(j, "/proj/s1/new.md", "some text", 9, "no front matter");
	char *text = kept("1-new.md", &len, &st);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "some text");
	/* The writer's own, for the writer alone. */
	ck_assert_int_eq(st.st_mode & 07777, 0400);
	ck_assert_uint_eq(st.st_uid, 1000);
	ck_assert_uint_eq(st.st_gid, 1000);
	free(text);
	text = log_as(1000, &len);
	/* Both named by their real paths, the mount's /mnt before them. */
	ck_assert_ptr_nonnull(strstr(text, "refused /mnt/proj/s1/new.md: no front matter (your text is kept in "
					   "/mnt/.pisessionfs/rejected/1-new.md)\n"));
	free(text);
	/* Numbered on: the second refusal of the same name is kept too. */
	journal_reject_in(j, "/proj/s1/new.md", "again", 5, "still not");
	text = kept("2-new.md", &len, NULL);
	ck_assert_str_eq(text, "again");
	free(text);
	ck_assert_uint_eq(kept_all().count, 2);
}
END_TEST

START_TEST(test_journal_reject_within_the_budget)
{
	journal_free(j);
	j = journal_new(1000, ov, "/mnt");
	char a[600], b[600];
	memset(a, 'a', sizeof a);
	memset(b, 'b', sizeof b);
	journal_reject_in(j, "/p/s/a.md", a, sizeof a, "why");
	journal_reject_in(j, "/p/s/b.md", b, sizeof b, "why");
	size_t len;
	/* Both do not fit: the older one goes. */
	ck_assert_ptr_null(kept("1-a.md", &len, NULL));
	char *text = kept("2-b.md", &len, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(len, sizeof b);
	free(text);
	struct kept_sum sum = kept_all();
	ck_assert_uint_eq(sum.count, 1);
	ck_assert_uint_le(sum.bytes, 1000);
	/* Two that fit together stay together. */
	journal_reject_in(j, "/p/s/c.md", "c", 1, "why");
	sum = kept_all();
	ck_assert_uint_eq(sum.count, 2);
	ck_assert_uint_eq(sum.bytes, sizeof b + 1);
}
END_TEST

START_TEST(test_journal_reject_cuts_to_the_budget)
{
	journal_free(j);
	j = journal_new(1000, ov, "/mnt");
	char big[5000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)('a' + i % 26);
	journal_reject_in(j, "/p/s/big.md", big, sizeof big, "too big");
	size_t len;
	char *text = kept("1-big.md", &len, NULL);
	ck_assert_ptr_nonnull(text);
	/* No more than the budget (the note's own digits may leave a byte
	 * of it unused): a head of the text, then a note that says so. */
	ck_assert_uint_le(len, 1000);
	ck_assert_uint_ge(len, 998);
	char *note = strstr(text, "\n[pisessionfs: the text was cut here: ");
	ck_assert_ptr_nonnull(note);
	size_t head = (size_t)(note - text);
	ck_assert_int_eq(memcmp(text, big, head), 0);
	char want[128];
	snprintf(want, sizeof want, "\n[pisessionfs: the text was cut here: %zu of its 5000 bytes are kept]\n", head);
	ck_assert_str_eq(note, want);
	free(text);
	text = log_as(1000, &len);
	snprintf(want, sizeof want, "cut to its first %zu of 5000 bytes", head);
	ck_assert_ptr_nonnull(strstr(text, want));
	free(text);
	/* A budget below the note's room is raised to the least there is. */
	journal_free(j);
	overlay_free(ov);
	ck_assert_ptr_nonnull(ov = overlay_new());
	j = journal_new(10, ov, "/mnt");
	journal_reject_in(j, "/p/s/big.md", big, sizeof big, "too big");
	text = kept("1-big.md", &len, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_le(len, JOURNAL_REJECTED_MIN_BUDGET);
	ck_assert_uint_ge(len, JOURNAL_REJECTED_MIN_BUDGET - 2);
	free(text);
}
END_TEST

START_TEST(test_journal_reject_keeps_64)
{
	for (int i = 1; i <= 70; i++) {
		char path[64];
		snprintf(path, sizeof path, "/p/s/t%d.md", i);
		journal_reject_in(j, path, "x", 1, "why");
	}
	ck_assert_uint_eq(kept_all().count, 64);
	size_t len;
	ck_assert_ptr_null(kept("6-t6.md", &len, NULL));
	char *text = kept("7-t7.md", &len, NULL);
	ck_assert_ptr_nonnull(text);
	free(text);
	text = kept("70-t70.md", &len, NULL);
	ck_assert_ptr_nonnull(text);
	free(text);
}
END_TEST

START_TEST(test_journal_gate)
{
	struct stat like = { 0 }, st;
	like.st_uid = 1000;
	like.st_gid = 1000;
	ck_assert(journal_owns(JOURNAL_DIR));
	ck_assert(journal_owns(JOURNAL_LOG));
	ck_assert(journal_owns(JOURNAL_REJECTED "/1-x.md"));
	ck_assert(!journal_owns("/.pisessionfsx"));
	ck_assert(!journal_owns("/proj"));
	journal_log_in(j, "one line");
	ck_assert_int_eq(journal_getattr(j, JOURNAL_LOG, &like, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_size, (off_t)journal_size(j));
	ck_assert_int_gt(st.st_size, 0);
	ck_assert_int_eq(journal_getattr(j, JOURNAL_REJECTED, &like, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_uid, 1000);
	ck_assert_int_eq(journal_getattr(j, JOURNAL_DIR "/other", &like, &st), -ENOENT);
	char *data = NULL;
	size_t len;
	ck_assert_int_eq(journal_open_in(j, JOURNAL_LOG, O_WRONLY, &data, &len), -EACCES);
	ck_assert_int_eq(journal_open_in(j, JOURNAL_DIR, O_RDONLY, &data, &len), -EISDIR);
	ck_assert_int_eq(journal_open_in(j, JOURNAL_LOG, O_RDONLY, &data, &len), 0);
	ck_assert_uint_eq(len, journal_size(j));
	ck_assert_ptr_nonnull(strstr(data, " one line\n"));
	free(data);
}
END_TEST

Suite *journal_suite(void)
{
	Suite *s = suite_create("journal");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, journal_fixture, journal_cleanup);
	tcase_add_test(tc, test_journal_lines_are_their_callers);
	tcase_add_test(tc, test_journal_log_keeps_the_latest);
	tcase_add_test(tc, test_journal_reject_keeps_the_text);
	tcase_add_test(tc, test_journal_reject_within_the_budget);
	tcase_add_test(tc, test_journal_reject_cuts_to_the_budget);
	tcase_add_test(tc, test_journal_reject_keeps_64);
	tcase_add_test(tc, test_journal_gate);
	suite_add_tcase(s, tc);
	return s;
}
