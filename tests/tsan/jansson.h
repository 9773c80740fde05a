/* jansson.h as the ThreadSanitizer build sees it (Makefile: SANITIZE=thread
 * puts tests/tsan first on the include path).
 *
 * Why: the entry cache shares parsed trees between threads
 * (src/entrycache.h), which jansson allows: its reference counts change
 * atomically.  But its inline json_incref and json_decref first read the
 * count plainly (to compare it with the count of trees never freed), and
 * the decrement that frees a tree only releases, never acquires.  On
 * x86-64 both are harmless, yet in the C11 model they are races, and
 * ThreadSanitizer reports them whenever two threads drop one shared tree
 * (it did once the cache evicted often: t_concurrency, a 1 MiB cache).
 * Here the same functions read the count atomically and the last
 * decrement acquires too, so the sanitizer checks our threads against a
 * correct protocol instead of silencing every report with these frames.
 * The production build uses jansson.h unchanged. */
#ifndef PSFS_TSAN_JANSSON_H
#define PSFS_TSAN_JANSSON_H

/* jansson's own inline functions that touch a count, renamed out of the
 * way (left unused). */
#define json_incref psfs_jansson_plain_incref
#define json_decref psfs_jansson_plain_decref
#define json_decrefp psfs_jansson_plain_decrefp
#define json_object_set psfs_jansson_plain_object_set
#define json_object_setn psfs_jansson_plain_object_setn
#define json_object_set_nocheck psfs_jansson_plain_object_set_nocheck
#define json_object_setn_nocheck psfs_jansson_plain_object_setn_nocheck
#define json_object_iter_set psfs_jansson_plain_object_iter_set
#define json_object_update_new psfs_jansson_plain_object_update_new
#define json_object_update_existing_new psfs_jansson_plain_object_update_existing_new
#define json_object_update_missing_new psfs_jansson_plain_object_update_missing_new
#define json_array_set psfs_jansson_plain_array_set
#define json_array_append psfs_jansson_plain_array_append
#define json_array_insert psfs_jansson_plain_array_insert
#include_next <jansson.h>
#undef json_incref
#undef json_decref
#undef json_decrefp
#undef json_object_set
#undef json_object_setn
#undef json_object_set_nocheck
#undef json_object_setn_nocheck
#undef json_object_iter_set
#undef json_object_update_new
#undef json_object_update_existing_new
#undef json_object_update_missing_new
#undef json_array_set
#undef json_array_append
#undef json_array_insert

static inline json_t *json_incref(json_t *json)
{
	if (json && __atomic_load_n(&json->refcount, __ATOMIC_RELAXED) != (size_t)-1)
		__atomic_add_fetch(&json->refcount, 1, __ATOMIC_RELAXED);
	return json;
}

static inline void json_decref(json_t *json)
{
	if (json && __atomic_load_n(&json->refcount, __ATOMIC_RELAXED) != (size_t)-1 &&
	    __atomic_sub_fetch(&json->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		json_delete(json);
}

static inline void json_decrefp(json_t **json)
{
	if (json) {
		json_decref(*json);
		*json = NULL;
	}
}

static inline int json_object_set(json_t *object, const char *key, json_t *value)
{
	return json_object_set_new(object, key, json_incref(value));
}

static inline int json_object_setn(json_t *object, const char *key, size_t key_len, json_t *value)
{
	return json_object_setn_new(object, key, key_len, json_incref(value));
}

static inline int json_object_set_nocheck(json_t *object, const char *key, json_t *value)
{
	return json_object_set_new_nocheck(object, key, json_incref(value));
}

static inline int json_object_setn_nocheck(json_t *object, const char *key, size_t key_len, json_t *value)
{
	return json_object_setn_new_nocheck(object, key, key_len, json_incref(value));
}

static inline int json_object_iter_set(json_t *object, void *iter, json_t *value)
{
	return json_object_iter_set_new(object, iter, json_incref(value));
}

static inline int json_object_update_new(json_t *object, json_t *other)
{
	int ret = json_object_update(object, other);
	json_decref(other);
	return ret;
}

static inline int json_object_update_existing_new(json_t *object, json_t *other)
{
	int ret = json_object_update_existing(object, other);
	json_decref(other);
	return ret;
}

static inline int json_object_update_missing_new(json_t *object, json_t *other)
{
	int ret = json_object_update_missing(object, other);
	json_decref(other);
	return ret;
}

static inline int json_array_set(json_t *array, size_t ind, json_t *value)
{
	return json_array_set_new(array, ind, json_incref(value));
}

static inline int json_array_append(json_t *array, json_t *value)
{
	return json_array_append_new(array, json_incref(value));
}

static inline int json_array_insert(json_t *array, size_t ind, json_t *value)
{
	return json_array_insert_new(array, ind, json_incref(value));
}

#endif
