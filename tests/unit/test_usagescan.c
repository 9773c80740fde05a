/* usagescan_members against jansson: what it reads equals what usage.c
 * reads from the same members parsed as one object, on chosen cases and
 * on random member lists; what it declines is only what it says it
 * declines. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "buf.h"
#include "suites.h"
#include "session.h"
#include "usagescan.h"

/* What usage.c reads from the members as a parsed object. */
struct usagescan_want {
	int has_usage;
	struct usage_sum sum;
	const char *provider, *model, *response_model; /* NULL: not a string */
};

static double want_num(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

static const char *want_name(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* NULL when the members are no object to pi's reader (session.h's, which
 * reads invalid UTF-8 as U+FFFD as pi does). */
static json_t *want_of(const char *text, size_t len, struct usagescan_want *w)
{
	struct buf b = BUF_INIT;
	ck_assert(!buf_putc(&b, '{') && !buf_put(&b, text, len) && !buf_putc(&b, '}'));
	json_t *obj = session_parse_line(b.data, b.len);
	buf_free(&b);
	memset(w, 0, sizeof *w);
	if (!obj)
		return NULL;
	const json_t *usage = json_object_get(obj, "usage");
	w->has_usage = json_is_object(usage);
	if (w->has_usage) {
		w->sum.input = want_num(usage, "input");
		w->sum.output = want_num(usage, "output");
		w->sum.cache_read = want_num(usage, "cacheRead");
		w->sum.cache_write = want_num(usage, "cacheWrite");
		w->sum.total_tokens = want_num(usage, "totalTokens");
		w->sum.cost = want_num(json_object_get(usage, "cost"), "total");
	}
	w->provider = want_name(obj, "provider");
	w->model = want_name(obj, "model");
	w->response_model = want_name(obj, "responseModel");
	return obj;
}

static void same_double(double got, double want, const char *text)
{
	/* Bit for bit: the sums must be pi's to the last digit. */
	ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "%.17g, want %.17g in %s", got, want, text);
}

static void same_name(const char *got, size_t len, const char *want, const json_t *obj, const char *key,
		      const char *text)
{
	if (!want) {
		ck_assert_msg(got == NULL, "%s: a name where none is, in %s", key, text);
		return;
	}
	ck_assert_msg(got != NULL, "%s: no name, in %s", key, text);
	ck_assert_uint_eq(len, json_string_length(json_object_get(obj, key)));
	ck_assert_msg(memcmp(got, want, len) == 0, "%s differs in %s", key, text);
}

/* 1 when read (and checked), 0 when declined. */
static int check_members(const char *text)
{
	size_t len = strlen(text);
	struct usagescan got;
	struct usagescan_want want;
	json_t *obj = want_of(text, len, &want);
	int read = usagescan_members(text, len, &got);
	if (!read) {
		json_decref(obj);
		return 0;
	}
	ck_assert_msg(obj != NULL, "read what pi refuses: %s", text);
	ck_assert_int_eq(got.has_usage, want.has_usage);
	if (want.has_usage) {
		same_double(got.sum.input, want.sum.input, text);
		same_double(got.sum.output, want.sum.output, text);
		same_double(got.sum.cache_read, want.sum.cache_read, text);
		same_double(got.sum.cache_write, want.sum.cache_write, text);
		same_double(got.sum.total_tokens, want.sum.total_tokens, text);
		same_double(got.sum.cost, want.sum.cost, text);
	}
	same_name(got.provider, got.provider_len, want.provider, obj, "provider", text);
	same_name(got.model, got.model_len, want.model, obj, "model", text);
	same_name(got.response_model, got.response_model_len, want.response_model, obj, "responseModel", text);
	json_decref(obj);
	return 1;
}

START_TEST(test_usagescan_cases)
{
	static const char *const read[] = {
		"\"usage\":{\"input\":10,\"output\":5,\"cacheRead\":0,\"cacheWrite\":2,\"totalTokens\":17,"
		"\"cost\":{\"input\":0.1,\"output\":0.2,\"total\":0.30000000000000004}}",
		"\"api\":\"x\",\"provider\":\"anthropic\",\"model\":\"claude\",\"usage\":{\"input\":1}",
		"\"model\":\"a\",\"responseModel\":\"b\",\"usage\":{}",
		"\"model\":\"a\",\"responseModel\":7",
		/* the last of a name wins, whatever came before */
		"\"usage\":{\"input\":1},\"usage\":5",
		"\"usage\":7,\"usage\":{\"input\":2,\"input\":\"3\"}",
		"\"usage\":{\"cost\":{\"total\":1},\"cost\":2}",
		"\"usage\":{\"cost\":{\"total\":1,\"total\":null}}",
		"\"provider\":\"p\",\"provider\":null",
		/* what lies between: skipped, but checked */
		"\"usage\":{\"input\":1},\"content\":[{\"type\":\"text\",\"text\":\"a\\\"b\\u00e9\\n\"},{\"x\":[1,2.5e3,true,false,null,{}]}],\"model\":\"m\"",
		" \"usage\" : { \"input\" : -0 , \"output\" : -1.5E-3 } , \"model\" : \"\xc3\xa9\" ",
		"\"usage\":{\"input\":123456789012345678,\"output\":1e300,"
		"\"totalTokens\":0.1234567890123456789,\"cacheRead\":9007199254740993.0}",
		"\"usage\":{\"cacheWrite\":1e-400,\"cost\":{\"total\":4.35e-05}}",
		"\"x\":{\"k\\u0041\":1},\"usage\":{\"y\":{\"in\\u0070ut\":1}}", /* escaped keys no name depends on */
		/* invalid UTF-8 in keys: pi reads U+FFFD there, so no name read */
		"\"\xff\":1,\"usage\":{\"in\xffput\":1,\"output\":2},\"mo\xc3" "del\":\"x\"",
	};
	static const char *const declined[] = {
		"", "\"usage\"", "\"usage\":", "\"usage\":{", "\"usage\":{\"input\":1,}", "\"usage\":{}}",
		"\"usage\":{},", ",\"usage\":{}", "\"usage\":{}\"model\":\"a\"", "\"usage\":01",
		"\"usage\":{\"input\":1.}", "\"usage\":{\"input\":+1}", "\"usage\":{\"input\":tru}",
		"\"model\":\"a\\u0041\"",          /* an escaped name: the caller decodes it */
		"\"model\":\"\xff\"",              /* invalid UTF-8 in a name */
		"\"mod\\u0065l\":\"a\"",           /* an escaped key could be a name */
		"\"usage\":{\"in\\u0070ut\":1}",
		"\"usage\":{\"input\":1234567890123456789}", /* jparse declines it too */
		"\"usage\":{\"input\":1e999}",     /* infinity: jansson refuses it */
		"\"x\":\"a\tb\"",                  /* a raw control character */
		"\"x\":\"\\x\"",
		"\"x\":\"\\u12g4\"",
	};
	for (size_t i = 0; i < sizeof read / sizeof read[0]; i++)
		ck_assert_msg(check_members(read[i]), "declined: %s", read[i]);
	for (size_t i = 0; i < sizeof declined / sizeof declined[0]; i++) {
		struct usagescan got;
		ck_assert_msg(!usagescan_members(declined[i], strlen(declined[i]), &got), "read: %s", declined[i]);
	}
}
END_TEST

/* --- random member lists ------------------------------------------------------ */

static unsigned usagescan_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) & 0x7fff;
}

static void put_ws(struct buf *b, unsigned *seed)
{
	static const char *const ws[] = { "", "", "", " ", "\n", "\t ", "\r\n" };
	ck_assert(!buf_puts(b, ws[usagescan_rand(seed) % 7]));
}

static void put_number(struct buf *b, unsigned *seed)
{
	char tmp[64];
	switch (usagescan_rand(seed) % 6) {
	case 0: snprintf(tmp, sizeof tmp, "%u", usagescan_rand(seed) * usagescan_rand(seed)); break;
	case 1: snprintf(tmp, sizeof tmp, "-%u", usagescan_rand(seed)); break;
	case 2: snprintf(tmp, sizeof tmp, "0.%06u", usagescan_rand(seed) * 31); break;
	case 3: snprintf(tmp, sizeof tmp, "%u.%u", usagescan_rand(seed), usagescan_rand(seed) * usagescan_rand(seed)); break;
	case 4: snprintf(tmp, sizeof tmp, "%ue%s%u", usagescan_rand(seed) % 100, usagescan_rand(seed) % 2 ? "-" : "",
			 usagescan_rand(seed) % 40); break;
	default: snprintf(tmp, sizeof tmp, "%.17g", (double)usagescan_rand(seed) / 1000.0 * usagescan_rand(seed)); break;
	}
	ck_assert(!buf_puts(b, tmp));
}

static void put_value(struct buf *b, unsigned *seed, int depth);

static void put_string(struct buf *b, unsigned *seed)
{
	static const char *const strings[] = {
		"\"\"", "\"anthropic\"", "\"claude-sonnet-4\"", "\"a\\\"b\"", "\"\\u00e9t\\u00e9\"", "\"\xc3\xa9\"",
		"\"tab\\tnew\\nline\\\\\"", "\"usage\"", "\"model\"",
	};
	ck_assert(!buf_puts(b, strings[usagescan_rand(seed) % 9]));
}

static void put_value(struct buf *b, unsigned *seed, int depth)
{
	unsigned k = usagescan_rand(seed) % (depth > 3 ? 5 : 7);
	switch (k) {
	case 0: put_number(b, seed); break;
	case 1: put_string(b, seed); break;
	case 2: ck_assert(!buf_puts(b, "true")); break;
	case 3: ck_assert(!buf_puts(b, "null")); break;
	case 4: ck_assert(!buf_puts(b, "false")); break;
	case 5: {
		unsigned n = usagescan_rand(seed) % 4;
		ck_assert(!buf_putc(b, '['));
		for (unsigned i = 0; i < n; i++) {
			if (i)
				ck_assert(!buf_putc(b, ','));
			put_ws(b, seed);
			put_value(b, seed, depth + 1);
			put_ws(b, seed);
		}
		ck_assert(!buf_putc(b, ']'));
		break;
	}
	default: {
		static const char *const keys[] = { "input", "output", "cacheRead", "cacheWrite", "totalTokens",
						    "cost", "total", "type", "text" };
		unsigned n = usagescan_rand(seed) % 5;
		ck_assert(!buf_putc(b, '{'));
		for (unsigned i = 0; i < n; i++) {
			if (i)
				ck_assert(!buf_putc(b, ','));
			put_ws(b, seed);
			ck_assert(!buf_printf(b, "\"%s\":", keys[usagescan_rand(seed) % 9]));
			put_ws(b, seed);
			put_value(b, seed, depth + 1);
		}
		ck_assert(!buf_putc(b, '}'));
		break;
	}
	}
}

START_TEST(test_usagescan_random)
{
	static const char *const names[] = { "usage", "provider", "model", "responseModel", "content", "api" };
	unsigned seed = 20261203u;
	size_t read = 0;
	for (int round = 0; round < 20000; round++) {
		struct buf b = BUF_INIT;
		unsigned n = 1 + usagescan_rand(&seed) % 5;
		for (unsigned i = 0; i < n; i++) {
			if (i)
				ck_assert(!buf_putc(&b, ','));
			put_ws(&b, &seed);
			ck_assert(!buf_printf(&b, "\"%s\":", names[usagescan_rand(&seed) % 6]));
			put_ws(&b, &seed);
			put_value(&b, &seed, 0);
			put_ws(&b, &seed);
		}
		/* Now and then one byte off: a truncated or broken list. */
		if (usagescan_rand(&seed) % 8 == 0 && b.len)
			b.len -= 1 + usagescan_rand(&seed) % b.len;
		ck_assert(!buf_finish(&b));
		read += (size_t)check_members(b.data ? b.data : "");
		buf_free(&b);
	}
	/* The generator writes nothing it should decline but broken lists. */
	ck_assert_uint_gt(read, 20000 * 3 / 4);
}
END_TEST

Suite *usagescan_suite(void)
{
	Suite *s = suite_create("usagescan");
	TCase *tc = tcase_create("usagescan");
	/* Only to catch a hang: the random rounds are bounded by count, and
	 * take 10 s under ASan on a loaded machine (Check's default is 4). */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_usagescan_cases);
	tcase_add_test(tc, test_usagescan_random);
	suite_add_tcase(s, tc);
	return s;
}
