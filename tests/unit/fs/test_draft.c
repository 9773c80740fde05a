/* draft.c: a file being written, as a file system holds it (writes at
 * offsets, holes, truncation, O_TRUNC), and the state that decides its
 * commit points: dirty after a write, truncated-only after O_TRUNC, a
 * commit that makes later text a revision, a failure only a write
 * clears, and references that free it once. */
#include <errno.h>
#include <string.h>
#include "draft.h"
#include "suites.h"

START_TEST(test_draft_writes_like_a_file)
{
	struct draft *d = draft_new(DRAFT_OVERLAY);
	char buf[32];
	ck_assert_ptr_nonnull(d);
	draft_lock(d);
	ck_assert_int_eq(draft_write(d, "hello", 5, 0), 5);
	ck_assert_int_eq(draft_write(d, "J", 1, 0), 1);
	/* A write past the end leaves a hole of NULs, as a file does. */
	ck_assert_int_eq(draft_write(d, "!", 1, 7), 1);
	ck_assert_uint_eq(d->len, 8);
	ck_assert_uint_eq(draft_size(d), 8);
	ck_assert_uint_eq(draft_read(d, buf, sizeof buf, 0), 8);
	ck_assert_int_eq(memcmp(buf, "Jello\0\0!", 8), 0);
	ck_assert_uint_eq(draft_read(d, buf, 3, 6), 2);
	ck_assert_uint_eq(draft_read(d, buf, 3, 8), 0);
	ck_assert_uint_eq(draft_read(d, buf, 3, 100), 0);
	ck_assert_int_eq(draft_truncate(d, 2), 0);
	ck_assert_uint_eq(draft_size(d), 2);
	ck_assert_int_eq(draft_truncate(d, 4), 0);
	ck_assert_uint_eq(draft_read(d, buf, sizeof buf, 0), 4);
	ck_assert_int_eq(memcmp(buf, "Je\0\0", 4), 0);
	ck_assert_int_eq(draft_write(d, "x", 1, DRAFT_MAX), -EFBIG);
	ck_assert_int_eq(draft_write(d, "x", 1, (size_t)-1), -EFBIG);
	draft_unlock(d);
	draft_put(d);
}
END_TEST

/* The other transitions the handlers ask of a draft (file.c writes no
 * field of it itself). */
START_TEST(test_draft_transitions)
{
	struct draft *d = draft_new(DRAFT_RAW);
	draft_bind(d, "proj", "sess", 7, 2, 3, 100);
	draft_lock(d);
	ck_assert_str_eq(d->project, "proj");
	ck_assert_str_eq(d->session, "sess");
	ck_assert(d->entry == 7 && d->serial == 2 && d->generation == 3 && d->raw_base == 100);
	/* session.jsonl: appended lines move the base, refused ones do not. */
	draft_write(d, "line\n", 5, 0);
	draft_raw_done(d, 1);
	ck_assert(d->raw_base == 105 && d->len == 0 && !d->dirty && !d->truncated);
	draft_write(d, "bad\n", 4, 0);
	draft_raw_done(d, 0);
	ck_assert(d->raw_base == 105 && d->len == 0 && !d->dirty);
	/* A full disk keeps the text and marks it failed; a success does not. */
	draft_write(d, "x", 1, 0);
	draft_after_commit(d, -ENOSPC);
	ck_assert(d->failed && d->dirty && d->len == 1);
	draft_discard(d);
	ck_assert(!d->dirty && !d->truncated && d->len == 0);
	draft_after_commit(d, -ENOSPC);
	ck_assert(d->failed); /* unchanged: nothing dirty to mark */
	/* Emptied by an open that is no rewrite: empty, not "emptied". */
	draft_write(d, "y", 1, 0);
	draft_empty(d, 0);
	ck_assert(d->len == 0 && !d->truncated);
	draft_refuse(d);
	ck_assert(d->refused && !d->dirty && !d->truncated);
	draft_retarget(d, DRAFT_NAME);
	ck_assert_int_eq(d->target, DRAFT_NAME);
	draft_unlock(d);
	draft_put(d);
}
END_TEST

START_TEST(test_draft_commit_state)
{
	struct draft *d = draft_new(DRAFT_OVERLAY);
	draft_lock(d);
	ck_assert(!d->dirty && !d->truncated && !d->committed);
	/* O_TRUNC empties it without a change to commit at a close. */
	draft_write(d, "old", 3, 0);
	d->dirty = 0;
	draft_empty(d, 1);
	ck_assert(!d->dirty && d->truncated);
	ck_assert_uint_eq(draft_size(d), 0);
	ck_assert_int_eq(draft_write(d, "a", 1, 0), 1);
	ck_assert(d->dirty && !d->truncated);
	/* A commit that appended an entry: later text revises it. */
	draft_committed(d, "proj", "sess", "abcd1234");
	ck_assert(!d->dirty && d->committed);
	ck_assert_int_eq(d->target, DRAFT_REVISE);
	ck_assert_str_eq(d->id, "abcd1234");
	ck_assert_str_eq(d->project, "proj");
	ck_assert_str_eq(d->session, "sess");
	/* A failure reported to the writer is cleared by new text only. */
	d->failed = 1;
	d->dirty = 1;
	ck_assert_int_eq(draft_truncate(d, 0), 0);
	ck_assert(!d->failed);
	d->failed = 1;
	draft_write(d, "b", 1, 0);
	ck_assert(!d->failed);
	draft_unlock(d);
	draft_put(d);
	/* A commit that appended nothing keeps the target (one draft
	 * locked at a time: src/lockorder.h). */
	struct draft *n = draft_new(DRAFT_NAME);
	draft_lock(n);
	draft_committed(n, "p", "s", NULL);
	ck_assert_int_eq(n->target, DRAFT_NAME);
	draft_unlock(n);
	draft_put(n);
}
END_TEST

START_TEST(test_draft_references)
{
	struct draft *d = draft_new_with("text", 4);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(draft_size(d), 4);
	ck_assert(!d->dirty);
	ck_assert_ptr_eq(draft_get(d), d);
	draft_put(d);
	draft_lock(d);
	char *mine = strdup("adopted");
	draft_adopt(d, mine, 7);
	ck_assert_uint_eq(draft_size(d), 7);
	ck_assert_str_eq(d->data, "adopted");
	draft_unlock(d);
	draft_put(d); /* the last reference: LeakSanitizer and valgrind check it is freed */
	draft_put(NULL);
}
END_TEST

Suite *draft_suite(void)
{
	Suite *s = suite_create("draft");
	TCase *tc = tcase_create("draft");
	tcase_add_test(tc, test_draft_writes_like_a_file);
	tcase_add_test(tc, test_draft_commit_state);
	tcase_add_test(tc, test_draft_transitions);
	tcase_add_test(tc, test_draft_references);
	suite_add_tcase(s, tc);
	return s;
}
