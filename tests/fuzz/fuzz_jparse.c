/* libFuzzer harness: the fast parser (jparse.h) against jansson.
 *
 * jparse_object() may decline anything, but what it accepts must be
 * exactly what json_loadb(JSON_ALLOW_NUL) reads from the same bytes: the
 * same values, the same key order (compared as jansson's own compact
 * encoding, reals to the last bit), and jansson must accept it too.  Also
 * counts how often it declines what jansson reads, so a change that makes
 * the fast path rare shows in the report.  jparse_object_keep (usage.c's
 * members) must decline exactly what jparse_object declines and build the
 * same of the members it keeps. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "fuzz_common.h"
#include "jparse.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long accepted, declined_readable;

static void jparse_report(void)
{
	fprintf(stderr, "fuzz_jparse: %lu accepted, %lu declined that jansson reads\n", accepted,
		declined_readable);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	atexit(jparse_report);
	return 0;
}

static const char *const keep_top[] = { "type", "message", "usage", "provider", "model", NULL };
static const char *const keep_msg[] = { "role", "responseModel", "model", "provider", "usage", NULL };
static const struct jparse_keep keep_usage = { keep_top, "message", keep_msg };

static int keep_named(const char *const *names, const char *key)
{
	for (; *names; names++)
		if (strcmp(*names, key) == 0)
			return 1;
	return 0;
}

/* The keeping form against the whole one (r and fast: jparse_object's). */
static void jparse_check_keep(const char *text, size_t size, enum jparse_result r, json_t *fast)
{
	json_t *kept = NULL;
	enum jparse_result k = jparse_object_keep(text, size, &keep_usage, &kept);
	if (k != r)
		fz_fail("jparse_object_keep says %d, jparse_object %d", (int)k, (int)r);
	if (r != JPARSE_OK)
		return;
	json_t *want = json_object();
	const char *key;
	json_t *v;
	json_object_foreach(fast, key, v) {
		if (!keep_named(keep_top, key))
			continue;
		if (strcmp(key, "message") == 0 && json_is_object(v)) {
			json_t *m = json_object(), *mv;
			const char *mk;
			json_object_foreach(v, mk, mv)
				if (keep_named(keep_msg, mk))
					json_object_set(m, mk, mv);
			json_object_set_new(want, key, m);
		} else {
			json_object_set(want, key, v);
		}
	}
	char *a = json_dumps(want, JSON_COMPACT | JSON_REAL_PRECISION(17));
	char *b = json_dumps(kept, JSON_COMPACT | JSON_REAL_PRECISION(17));
	if (!a || !b || strcmp(a, b) != 0)
		fz_fail("kept members differ:\n  whole %.300s\n  kept %.300s", a ? a : "?", b ? b : "?");
	free(a);
	free(b);
	json_decref(want);
	json_decref(kept);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	json_t *fast = NULL, *slow;
	json_error_t error;
	enum jparse_result r = jparse_object(text, size, &fast);
	jparse_check_keep(text, size, r, fast);

	slow = json_loadb(text, size, JSON_ALLOW_NUL, &error);
	if (r == JPARSE_NOMEM)
		fz_fail("jparse_object ran out of memory on %zu bytes", size);
	if (r == JPARSE_DECLINED) {
		if (fast)
			fz_fail("declined, yet *out is set");
		if (slow && json_is_object(slow))
			declined_readable++;
		json_decref(slow);
		return 0;
	}
	if (!fast)
		fz_fail("accepted, yet *out is NULL");
	if (!slow)
		fz_fail("accepted what jansson refuses: %s (line %d, column %d)", error.text, error.line, error.column);
	if (!json_equal(fast, slow))
		fz_fail("a value differs from jansson's");
	char *a = json_dumps(fast, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	char *b = json_dumps(slow, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	if (!a || !b)
		fz_fail("json_dumps failed");
	if (strcmp(a, b) != 0)
		fz_fail("encodings differ (key order or reals):\n  fast %.300s\n  jansson %.300s", a, b);
	free(a);
	free(b);
	accepted++;
	json_decref(fast);
	json_decref(slow);
	return 0;
}
