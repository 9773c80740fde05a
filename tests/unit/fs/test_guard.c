/* guard.c: a call run on a thread of its own for a store that answers,
 * quickly or slowly (guard_run waits past the bound while a statfs of the
 * store answers), and the guard freed by its last thread.  A store that
 * stops answering needs a frozen FUSE file system: tests/mount/
 * t_frozen_store.sh. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "guard.h"
#include "helpers.h"
#include "journal.h"
#include "overlay.h"
#include "suites.h"

struct test_job {
	struct guard_job job;
	long sleep_ms;
	int ran;
};

static int test_job_run(struct guard_job *job)
{
	struct test_job *t = (struct test_job *)job;
	struct timespec ts = { t->sleep_ms / 1000, (t->sleep_ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	t->ran = 1;
	return 42;
}

static void test_job_abandoned(struct guard_job *job, int res)
{
	(void)res;
	free(job);
}

static long test_ms_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

START_TEST(test_guard_answers)
{
	char root[64];
	helper_tmpdir(root, "guard");
	int null = open("/dev/null", O_WRONLY);
	ck_assert_int_eq(dup2(null, STDERR_FILENO), STDERR_FILENO);
	close(null);
	struct overlay *ov = overlay_new();
	struct journal *j = journal_new(JOURNAL_REJECTED_DEFAULT_BUDGET, ov, "/mnt");
	struct guard *g = guard_new(root, 0.2, j);
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(guard_available(g), 1);

	/* In time. */
	struct test_job *t = calloc(1, sizeof *t);
	t->job.run = test_job_run;
	t->job.abandoned = test_job_abandoned;
	int res = 0;
	ck_assert_int_eq(guard_run(g, &t->job, 0, &res), GUARD_DONE);
	ck_assert_int_eq(res, 42);
	ck_assert_int_eq(t->ran, 1);

	/* Past the bound (0.2 s) three times over, on a store that answers
	 * a statfs at once: slow, not gone; waited for. */
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	t->ran = 0;
	t->sleep_ms = 700;
	res = 0;
	ck_assert_int_eq(guard_run(g, &t->job, 0, &res), GUARD_DONE);
	ck_assert_int_eq(res, 42);
	ck_assert_int_ge(test_ms_since(&start), 700);
	ck_assert_int_eq(guard_available(g), 1);

	/* A release's kind of call, while the store answers: waited for too. */
	t->ran = 0;
	t->sleep_ms = 0;
	ck_assert_int_eq(guard_run(g, &t->job, 1, &res), GUARD_DONE);
	ck_assert_int_eq(t->ran, 1);
	free(t);

	guard_free(g); /* its probes may still be ending: the last frees it */
	guard_free(NULL);
	journal_free(j);
	overlay_free(ov);
	helper_rmtree(root);
}
END_TEST

Suite *guard_suite(void)
{
	Suite *s = suite_create("guard");
	TCase *tc = tcase_create("guard");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_guard_answers);
	suite_add_tcase(s, tc);
	return s;
}
