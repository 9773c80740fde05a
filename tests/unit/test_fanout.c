/* fanout.c: every item done exactly once, on several threads at once
 * where asked, and a stop asked on the caller's thread ends it early with
 * every started item finished. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "fanout.h"
#include "suites.h"

#define N_ITEMS 1000

struct count_ctx {
	atomic_int done[N_ITEMS];
	atomic_int running, most_at_once;
	pthread_t caller;
	atomic_int on_other_threads;
	size_t stop_after;   /* stop once this many stop calls were made (0: never) */
	size_t stop_calls;   /* the caller's thread only */
	int stop_off_thread; /* stop was called on another thread */
	int slow;            /* each item takes 200 us: the caller's thread takes some */
	int wait_for_two;    /* the first items wait for a second thread (test_fanout_parallel) */
	pthread_mutex_t lock; /* with two_seen: wakes the items waiting for a second thread */
	pthread_cond_t two_seen;
};

static void count_item(void *ctx, size_t i)
{
	struct count_ctx *c = ctx;
	int now = atomic_fetch_add(&c->running, 1) + 1;
	int most = atomic_load(&c->most_at_once);
	while (now > most && !atomic_compare_exchange_weak(&c->most_at_once, &most, now))
		;
	if (now >= 2) {
		pthread_mutex_lock(&c->lock);
		pthread_cond_broadcast(&c->two_seen);
		pthread_mutex_unlock(&c->lock);
	}
	if (!pthread_equal(pthread_self(), c->caller))
		atomic_fetch_add(&c->on_other_threads, 1);
	/* The first items wait for a second thread, so that two threads are
	 * seen at once even on a loaded machine; asleep on a condition, not
	 * spinning (a spin takes the core the second thread needs).  The 10 s
	 * bound only ends a wait for a thread that never comes: the test then
	 * fails on most_at_once. */
	if (i < 4 && c->wait_for_two) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 10;
		pthread_mutex_lock(&c->lock);
		while (atomic_load(&c->most_at_once) < 2)
			if (pthread_cond_timedwait(&c->two_seen, &c->lock, &until) != 0)
				break;
		pthread_mutex_unlock(&c->lock);
	}
	if (c->slow)
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	atomic_fetch_add(&c->done[i], 1);
	atomic_fetch_sub(&c->running, 1);
}

static int count_stop(void *ctx)
{
	struct count_ctx *c = ctx;
	if (!pthread_equal(pthread_self(), c->caller))
		c->stop_off_thread = 1;
	return c->stop_after && ++c->stop_calls >= c->stop_after;
}

static struct count_ctx *count_new(void)
{
	struct count_ctx *c = calloc(1, sizeof *c);
	ck_assert_ptr_nonnull(c);
	c->caller = pthread_self();
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->two_seen, NULL);
	return c;
}

static void count_free(struct count_ctx *c)
{
	pthread_cond_destroy(&c->two_seen);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

START_TEST(test_fanout_each_once)
{
	static const unsigned threads[] = { 1, 2, 4, FANOUT_MAX_THREADS, 0 };
	static const size_t sizes[] = { 0, 1, 3, N_ITEMS };
	for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
		for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
			struct count_ctx *c = count_new();
			ck_assert_int_eq(fanout_run(sizes[z], threads[t], count_item, count_stop, c), 0);
			for (size_t i = 0; i < N_ITEMS; i++)
				ck_assert_int_eq(atomic_load(&c->done[i]), i < sizes[z] ? 1 : 0);
			ck_assert_int_eq(atomic_load(&c->running), 0);
			ck_assert_int_eq(c->stop_off_thread, 0);
			count_free(c);
		}
	}
}
END_TEST

START_TEST(test_fanout_parallel)
{
	struct count_ctx *c = count_new();
	c->wait_for_two = 1;
	ck_assert_int_eq(fanout_run(N_ITEMS, 2, count_item, NULL, c), 0);
	ck_assert_int_eq(atomic_load(&c->most_at_once), 2);
	ck_assert_int_gt(atomic_load(&c->on_other_threads), 0);
	count_free(c);

	/* One thread: the caller does it all. */
	c = count_new();
	ck_assert_int_eq(fanout_run(N_ITEMS, 1, count_item, NULL, c), 0);
	ck_assert_int_eq(atomic_load(&c->most_at_once), 1);
	ck_assert_int_eq(atomic_load(&c->on_other_threads), 0);
	count_free(c);
	ck_assert_uint_ge(fanout_threads(0), 1);
	ck_assert_uint_eq(fanout_threads(1000), FANOUT_MAX_THREADS);
}
END_TEST

START_TEST(test_fanout_stop)
{
	struct count_ctx *c = count_new();
	c->stop_after = 10;
	c->slow = 1;
	ck_assert_int_eq(fanout_run(N_ITEMS, 2, count_item, count_stop, c), 1);
	size_t done = 0;
	for (size_t i = 0; i < N_ITEMS; i++) {
		ck_assert_int_le(atomic_load(&c->done[i]), 1);
		done += (size_t)atomic_load(&c->done[i]);
	}
	ck_assert_uint_lt(done, N_ITEMS);
	ck_assert_int_eq(atomic_load(&c->running), 0); /* all started ones finished */
	ck_assert_int_eq(c->stop_off_thread, 0);
	count_free(c);
}
END_TEST

Suite *fanout_suite(void)
{
	Suite *s = suite_create("fanout");
	TCase *tc = tcase_create("fanout");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_fanout_each_once);
	tcase_add_test(tc, test_fanout_parallel);
	tcase_add_test(tc, test_fanout_stop);
	suite_add_tcase(s, tc);
	return s;
}
