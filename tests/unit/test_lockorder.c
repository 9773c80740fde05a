/* The lock order's check (src/lockorder.h): in the builds that assert it
 * (the sanitized ones), a lock taken out of order aborts, naming both,
 * and PSFS_LOCKORDER_EDGES records the order instead; in every build the
 * wrappers lock and unlock. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lockorder.h"
#include "suites.h"

START_TEST(test_lockorder_wraps_the_mutex)
{
	pthread_mutex_t catalog = PTHREAD_MUTEX_INITIALIZER, store = PTHREAD_MUTEX_INITIALIZER;
	lockorder_lock(&catalog, LOCK_CATALOG);
	lockorder_lock(&store, LOCK_STORE);
	ck_assert_int_eq(pthread_mutex_trylock(&store), EBUSY);
	lockorder_unlock(&store, LOCK_STORE);
	lockorder_unlock(&catalog, LOCK_CATALOG);
	ck_assert_int_eq(pthread_mutex_trylock(&catalog), 0);
	pthread_mutex_unlock(&catalog);
}
END_TEST

#ifdef PSFS_LOCKORDER
/* In order, sessions nested (a fork): nothing fires. */
START_TEST(test_lockorder_in_order)
{
	pthread_mutex_t draft = PTHREAD_MUTEX_INITIALIZER, s1 = PTHREAD_MUTEX_INITIALIZER,
			s2 = PTHREAD_MUTEX_INITIALIZER, journal = PTHREAD_MUTEX_INITIALIZER;
	lockorder_lock(&draft, LOCK_DRAFT);
	lockorder_lock(&s1, LOCK_SESSION);
	lockorder_lock(&s2, LOCK_SESSION);
	lockorder_lock(&journal, LOCK_JOURNAL);
	lockorder_unlock(&journal, LOCK_JOURNAL);
	lockorder_unlock(&s2, LOCK_SESSION);
	lockorder_unlock(&s1, LOCK_SESSION);
	lockorder_unlock(&draft, LOCK_DRAFT);
	/* Dropped: the store may be taken, then the catalog again after it. */
	lockorder_lock(&s1, LOCK_STORE);
	lockorder_unlock(&s1, LOCK_STORE);
	lockorder_lock(&s1, LOCK_CATALOG);
	lockorder_unlock(&s1, LOCK_CATALOG);
}
END_TEST

/* The catalog is before the store: taking it under the store aborts. */
START_TEST(test_lockorder_out_of_order_aborts)
{
	pthread_mutex_t catalog = PTHREAD_MUTEX_INITIALIZER, store = PTHREAD_MUTEX_INITIALIZER;
	lockorder_lock(&store, LOCK_STORE);
	lockorder_lock(&catalog, LOCK_CATALOG);
}
END_TEST

/* Two drafts at once: a level other than the session's is taken once. */
START_TEST(test_lockorder_twice_aborts)
{
	pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
	lockorder_lock(&a, LOCK_DRAFT);
	lockorder_lock(&b, LOCK_DRAFT);
}
END_TEST

/* PSFS_LOCKORDER_EDGES: the same out-of-order pair is written down, once,
 * and nothing aborts. */
START_TEST(test_lockorder_edges_recorded)
{
	char path[] = "/tmp/lockorder-edges.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	setenv("PSFS_LOCKORDER_EDGES", path, 1);
	pthread_mutex_t catalog = PTHREAD_MUTEX_INITIALIZER, store = PTHREAD_MUTEX_INITIALIZER;
	for (int i = 0; i < 2; i++) {
		lockorder_lock(&store, LOCK_STORE);
		lockorder_lock(&catalog, LOCK_CATALOG);
		lockorder_unlock(&catalog, LOCK_CATALOG);
		lockorder_unlock(&store, LOCK_STORE);
	}
	char text[256] = "";
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	unlink(path);
	text[n] = '\0';
	ck_assert_str_eq(text, "store -> catalog\n");
}
END_TEST
#endif

Suite *lockorder_suite(void)
{
	Suite *s = suite_create("lockorder");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_lockorder_wraps_the_mutex);
#ifdef PSFS_LOCKORDER
	tcase_add_test(tc, test_lockorder_in_order);
	tcase_add_test(tc, test_lockorder_edges_recorded);
	/* An abort is the test's pass only in a process of its own. */
	const char *fork_mode = getenv("CK_FORK");
	if (!fork_mode || strcmp(fork_mode, "no") != 0) {
		tcase_add_test_raise_signal(tc, test_lockorder_out_of_order_aborts, SIGABRT);
		tcase_add_test_raise_signal(tc, test_lockorder_twice_aborts, SIGABRT);
	}
#endif
	suite_add_tcase(s, tc);
	return s;
}
