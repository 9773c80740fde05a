/* The entry cache: hits only for the exact (serial, generation, index),
 * least recently used trees go first, the bound holds, and shared loads
 * through a session see a rewrite of the file, never a stale tree. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "entrycache.h"
#include "helpers.h"
#include "suites.h"

static void entrycache_reset(void)
{
	entrycache_set_limit(ENTRYCACHE_DEFAULT_BYTES);
	entrycache_clear();
}

START_TEST(test_entrycache_exact_key)
{
	entrycache_reset();
	json_t *v = json_pack("{s:i}", "n", 1);
	entrycache_put(7, 1, 3, v, 100);
	json_t *got = entrycache_get(7, 1, 3);
	ck_assert_ptr_eq(got, v);
	ck_assert_int_eq(v->refcount, 3); /* ours, the cache's, got */
	json_decref(got);
	ck_assert_ptr_null(entrycache_get(8, 1, 3));
	ck_assert_ptr_null(entrycache_get(7, 2, 3));
	ck_assert_ptr_null(entrycache_get(7, 1, 4));
	entrycache_clear();
	ck_assert_int_eq(v->refcount, 1);
	json_decref(v);
}
END_TEST

START_TEST(test_entrycache_lru_and_bound)
{
	enum { N = 16 };
	const size_t cost = ENTRYCACHE_COST(1000);
	json_t *v[N + 2];
	entrycache_reset();
	entrycache_set_limit(N * cost); /* exactly N items */
	for (int i = 0; i < N; i++) {
		v[i] = json_integer(i);
		entrycache_put(1, 1, (uint32_t)i, v[i], 1000);
	}
	json_t *t = entrycache_get(1, 1, 0); /* 0 becomes the newest */
	ck_assert_ptr_eq(t, v[0]);
	json_decref(t);
	v[N] = json_integer(N);
	entrycache_put(1, 1, N, v[N], 1000);
	struct entrycache_stats st;
	entrycache_stats(&st);
	ck_assert_uint_eq(st.bytes, N * cost);
	ck_assert_uint_eq(st.count, N);
	ck_assert_ptr_null(entrycache_get(1, 1, 1)); /* the least recently used went */
	for (uint32_t i = 0; i <= N; i++) {
		if (i == 1)
			continue;
		t = entrycache_get(1, 1, i);
		ck_assert_ptr_eq(t, v[i]);
		json_decref(t);
	}
	/* A line over an eighth of the bound is not kept at all. */
	v[N + 1] = json_integer(N + 1);
	entrycache_put(1, 1, N + 1, v[N + 1], N * cost / 8);
	ck_assert_ptr_null(entrycache_get(1, 1, N + 1));
	entrycache_set_limit(0);
	entrycache_stats(&st);
	ck_assert_uint_eq(st.count, 0);
	ck_assert_uint_eq(st.bytes, 0);
	for (int i = 0; i < N + 2; i++) {
		ck_assert_int_eq(v[i]->refcount, 1);
		json_decref(v[i]);
	}
	entrycache_reset();
}
END_TEST

START_TEST(test_entrycache_session_sees_rewrite)
{
	entrycache_reset();
	char *path = helper_write(HDR MSG("a", "null", "user", "first"));
	struct ps_session *s = helper_open(path), *t = helper_open(path);
	json_t *x, *y, *z;
	ck_assert_int_eq(session_load_entry_shared(s, 0, &x), PS_OK);
	ck_assert_int_eq(session_load_entry_shared(s, 0, &y), PS_OK);
	ck_assert_ptr_eq(x, y); /* parsed once */
	json_decref(y);
	/* Another session object of the same file has its own trees. */
	ck_assert_int_eq(session_load_entry_shared(t, 0, &z), PS_OK);
	ck_assert_ptr_ne(x, z);
	json_decref(z);
	/* Rewritten in place: the index is rebuilt and the old tree is not
	 * returned for the same index. */
	helper_rewrite(path, HDR MSG("b", "null", "user", "second, longer than the first"));
	ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
	ck_assert_int_eq(session_load_entry_shared(s, 0, &y), PS_OK);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(y, "message"), "content")),
			 "second, longer than the first");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(x, "message"), "content")), "first");
	json_decref(x);
	json_decref(y);
	session_free(s);
	session_free(t);
	entrycache_clear();
	unlink(path);
	free(path);
}
END_TEST

/* Threads that share, evict and drop trees at once: the sanitized run of
 * the unit tests checks this for races on the lists and reference counts. */
static void *entrycache_hammer(void *arg)
{
	uintptr_t seed = (uintptr_t)arg;
	for (int i = 0; i < 20000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t idx = (uint32_t)(seed >> 33) % 64;
		json_t *t = entrycache_get(1, 1, idx);
		if (!t) {
			t = json_pack("{s:i}", "idx", (int)idx);
			entrycache_put(1, 1, idx, t, 300);
		}
		ck_assert_int_eq(json_integer_value(json_object_get(t, "idx")), idx);
		json_decref(t);
	}
	return NULL;
}

START_TEST(test_entrycache_threads)
{
	entrycache_reset();
	entrycache_set_limit(16 * ENTRYCACHE_COST(300)); /* 16 of 64: constant eviction */
	pthread_t th[4];
	for (uintptr_t i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, entrycache_hammer, (void *)(i + 1)), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	struct entrycache_stats st;
	entrycache_stats(&st);
	ck_assert_uint_le(st.bytes, 16 * ENTRYCACHE_COST(300));
	ck_assert_uint_gt(st.hits, 0);
	entrycache_reset();
}
END_TEST

Suite *entrycache_suite(void)
{
	Suite *s = suite_create("entrycache");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_entrycache_exact_key);
	tcase_add_test(tc, test_entrycache_lru_and_bound);
	tcase_add_test(tc, test_entrycache_session_sees_rewrite);
	tcase_add_test(tc, test_entrycache_threads);
	suite_add_tcase(s, tc);
	return s;
}
