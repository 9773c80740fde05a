/* jparse.h: the fast path accepts the common case and builds what jansson
 * builds; everything doubtful it declines (jansson then decides).  Its
 * keeping form (jparse_object_keep) declines the same and builds the same
 * of what it keeps. */
#include <string.h>
#include "helpers.h"
#include "jparse.h"
#include "suites.h"

/* text must be accepted, and equal jansson's reading of it to the bit. */
static void accepts_whole(const char *text, size_t len)
{
	json_t *fast = NULL;
	json_error_t error;
	ck_assert_msg(jparse_object(text, len, &fast) == JPARSE_OK, "declined: %.*s", (int)len, text);
	json_t *slow = json_loadb(text, len, JSON_ALLOW_NUL, &error);
	ck_assert_ptr_nonnull(slow);
	char *a = json_dumps(fast, JSON_COMPACT | JSON_REAL_PRECISION(17));
	char *b = json_dumps(slow, JSON_COMPACT | JSON_REAL_PRECISION(17));
	ck_assert_str_eq(a, b);
	ck_assert(json_equal(fast, slow));
	free(a);
	free(b);
	json_decref(fast);
	json_decref(slow);
}

static void declines_whole(const char *text, size_t len)
{
	json_t *fast = (json_t *)1;
	ck_assert_msg(jparse_object(text, len, &fast) == JPARSE_DECLINED, "accepted: %.*s", (int)len, text);
	ck_assert_ptr_null(fast);
}


/* jparse_object_keep with usage.c's members: declines what jparse_object
 * declines, and builds what it builds of those members. */
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

static void keeps_alike(const char *text, size_t len)
{
	json_t *full = NULL, *kept = NULL;
	enum jparse_result a = jparse_object(text, len, &full), b = jparse_object_keep(text, len, &keep_usage, &kept);
	ck_assert_msg(a == b, "%d vs %d: %.*s", a, b, (int)len, text);
	if (a != JPARSE_OK) {
		ck_assert_ptr_null(kept);
		return;
	}
	json_t *want = json_object();
	const char *key;
	json_t *v;
	json_object_foreach(full, key, v) {
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
	char *x = json_dumps(want, JSON_COMPACT | JSON_REAL_PRECISION(17));
	char *y = json_dumps(kept, JSON_COMPACT | JSON_REAL_PRECISION(17));
	ck_assert_str_eq(x, y);
	free(x);
	free(y);
	json_decref(want);
	json_decref(full);
	json_decref(kept);
}

static void accepts(const char *text, size_t len)
{
	keeps_alike(text, len);
	accepts_whole(text, len);
}

static void declines(const char *text, size_t len)
{
	keeps_alike(text, len);
	declines_whole(text, len);
}

#define ACCEPTS(lit) accepts(lit, sizeof(lit) - 1)
#define DECLINES(lit) declines(lit, sizeof(lit) - 1)

START_TEST(test_jparse_common)
{
	ACCEPTS("{}");
	ACCEPTS(" \t\r\n{ \"a\" : [ 1 , -2 , 0 , -0 , 1.5 , -0.0 , 1e3 , 2E-2 , 1e-400 , true , false , null ] } \n");
	ACCEPTS("{\"s\":\"plain text, \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80\"}");
	ACCEPTS("{\"e\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t \\u00e9 \\u001b[0m \\ud83d\\ude00 \\u0000 end\"}");
	ACCEPTS("{\"k\\u00e9y\":{\"nested\":{\"deep\":[[[]]]}},\"x\":\"\"}");
	/* A repeated key keeps its first place and takes the last value. */
	ACCEPTS("{\"a\":1,\"b\":2,\"a\":3}");
	ACCEPTS("{\"n\":123456789012345678,\"m\":-123456789012345678}");
	ACCEPTS("{\"r\":0.1000000000000000055511151231257827,\"big\":1.7976931348623157e308}");
}
END_TEST

START_TEST(test_jparse_declines)
{
	DECLINES("");
	DECLINES("[1]");
	DECLINES("\"s\"");
	DECLINES("{\"a\":1} x");
	DECLINES("{\"a\":1,}");
	DECLINES("{\"a\":01}");
	DECLINES("{\"a\":1.}");
	DECLINES("{\"a\":.5}");
	DECLINES("{\"a\":+1}");
	DECLINES("{\"a\":tru}");
	DECLINES("{\"a\":\"\t\"}");                   /* a raw control character */
	DECLINES("{\"a\":\"\xe2\x82\"}");             /* invalid UTF-8: jansson's retry replaces it */
	DECLINES("{\"a\":\"\\ud83d\"}");              /* lone surrogates: jansson's retry maps them */
	DECLINES("{\"a\":\"\\ude00x\"}");
	DECLINES("{\"a\":\"\\x\"}");
	DECLINES("{\"k\\u0000\":1}");                  /* jansson takes no NUL in a key */
	DECLINES("{\"a\":1234567890123456789}");       /* may not fit 64 bits */
	DECLINES("{\"a\":1e400}");                     /* beyond the doubles */
	DECLINES("{\"a\":1\0}");
}
END_TEST

START_TEST(test_jparse_depth)
{
	/* jansson's limit is 2048 levels, the top object included. */
	for (int n = 2046; n <= 2048; n++) {
		size_t len = (size_t)n * 2 + 16;
		char *text = malloc(len);
		ck_assert_ptr_nonnull(text);
		int o = sprintf(text, "{\"v\":");
		for (int i = 0; i < n - 1; i++)
			text[o++] = '[';
		for (int i = 0; i < n - 1; i++)
			text[o++] = ']';
		text[o++] = '}';
		if (n <= 2048)
			accepts(text, (size_t)o);
		free(text);
	}
	char *text = malloc(5000);
	int o = sprintf(text, "{\"v\":");
	for (int i = 0; i < 2048; i++)
		text[o++] = '[';
	for (int i = 0; i < 2048; i++)
		text[o++] = ']';
	text[o++] = '}';
	declines(text, (size_t)o);
	free(text);
}
END_TEST

START_TEST(test_jparse_keep)
{
	/* What is skipped is read all the same: a doubtful byte anywhere
	 * declines the line, skipped or not. */
	ACCEPTS("{\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
		"\"text\":\"x\\n\\u00e9\"}],\"usage\":{\"input\":1,\"cost\":{\"total\":0.5}},\"model\":\"m\"}}");
	DECLINES("{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":\"\xe2\x82\"}}");
	DECLINES("{\"type\":\"message\",\"message\":{\"content\":[1e400]}}");
	DECLINES("{\"type\":\"message\",\"message\":{\"content\":[01]}}");
	DECLINES("{\"type\":\"message\",\"message\":{\"content\":{\"k\\u0000\":1}}}");
	DECLINES("{\"type\":\"message\",\"other\":\"\\ud83d\"}");
	DECLINES("{\"type\":\"message\",\"other\":[1,],\"message\":{}}");
	DECLINES("{\"type\":\"message\",\"other\":{\"a\" 1}}");
	DECLINES("{\"type\":\"message\",\"other\":tru}");
	/* Skipped strings are checked, not decoded (jparse_skip_string):
	 * the same verdicts as decoding them. */
	ACCEPTS("{\"other\":\"\\u0000 nul in a value\",\"x\":{\"\\u00e9\\ud83d\\ude00\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}}");
	ACCEPTS("{\"other\":\"\xc3\xa9\\n\xe2\x82\xac\"}");
	DECLINES("{\"other\":\"\xe2\\n\x82\xac\"}");          /* a sequence cut by an escape */
	DECLINES("{\"other\":\"\xe2\x82\\u20ac\"}");
	DECLINES("{\"other\":{\"\\u0000\":1}}");                 /* NUL in a skipped key */
	DECLINES("{\"other\":\"\\ud83d\\u0041\"}");             /* a high surrogate, then no low one */
	DECLINES("{\"other\":\"\\u12\"}");
	DECLINES("{\"other\":\"\\\0\"}");
	DECLINES("{\"other\":\"open}");
	/* Repeated members: the last value, in the first place. */
	ACCEPTS("{\"message\":{\"role\":\"user\"},\"x\":1,\"message\":{\"role\":\"assistant\",\"role\":\"toolResult\"}}");
	/* A message that is no object is kept whole; so is what the kept
	 * members hold, however deep. */
	ACCEPTS("{\"message\":[{\"content\":1}],\"usage\":{\"content\":[{\"deep\":{}}]}}");
	ACCEPTS("{\"message\":\"text\",\"type\":null}");
	/* Depth counts through skipped members as through built ones. */
	for (int n = 2046; n <= 2049; n++) {
		char *text = malloc((size_t)n * 2 + 64);
		ck_assert_ptr_nonnull(text);
		int o = sprintf(text, "{\"message\":{\"content\":");
		for (int i = 0; i < n - 2; i++)
			text[o++] = '[';
		for (int i = 0; i < n - 2; i++)
			text[o++] = ']';
		text[o++] = '}';
		text[o++] = '}';
		keeps_alike(text, (size_t)o);
		free(text);
	}
}
END_TEST

Suite *jparse_suite(void)
{
	Suite *s = suite_create("jparse");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_jparse_common);
	tcase_add_test(tc, test_jparse_declines);
	tcase_add_test(tc, test_jparse_depth);
	tcase_add_test(tc, test_jparse_keep);
	suite_add_tcase(s, tc);
	return s;
}
