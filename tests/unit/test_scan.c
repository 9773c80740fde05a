#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include <jansson.h>
#include "scan.h"

static int field_is(const struct scan_field *f, const char *s)
{
	return f->kind == SCAN_STRING && f->len == strlen(s) && memcmp(f->ptr, s, f->len) == 0;
}

static ps_err scan_str(const char *line, struct scan_result *r)
{
	return scan_line(line, strlen(line), r);
}

START_TEST(test_scan_fields)
{
	struct scan_result r;
	const char *line = "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,"
			   "\"message\":{\"content\":[{\"type\":\"text\",\"role\":\"x\"}],\"role\":\"toolResult\",\"toolName\":\"bash\"}}";
	ck_assert_int_eq(scan_str(line, &r), PS_OK);
	ck_assert(field_is(&r.type, "message"));
	ck_assert(field_is(&r.id, "a1"));
	ck_assert_int_eq(r.parent_id.kind, SCAN_NULL);
	/* "role" inside content must not be taken for the message's role. */
	ck_assert(field_is(&r.role, "toolResult"));
	ck_assert(field_is(&r.tool_name, "bash"));
}
END_TEST

/* A null among the content array's own elements (pi throws on it), not
 * deeper, not in another array, and the last "content" counts. */
START_TEST(test_scan_content_null_element)
{
	static const struct { const char *content; int null_element; } cases[] = {
		{ "[{\"type\":\"text\",\"text\":\"a\"}, null]", 1 },
		{ "[ null ]", 1 },
		{ "[1,\"null\",[null],{\"a\":null}]", 0 },
		{ "{\"a\":[null]}", 0 },
		{ "[null],\"content\":[]", 0 },
		{ "[],\"content\":[true,null]", 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct scan_result r;
		char line[256];
		snprintf(line, sizeof line, "{\"type\":\"message\",\"x\":[null],\"message\":{\"role\":\"user\",\"content\":%s}}",
			 cases[i].content);
		ck_assert_int_eq(scan_str(line, &r), PS_OK);
		ck_assert_msg(r.content.null_element == cases[i].null_element, "%s", line);
	}
}
END_TEST

START_TEST(test_scan_last_duplicate_key_wins)
{
	struct scan_result r;
	ck_assert_int_eq(scan_str("{\"id\":\"a\",\"id\":\"b\"}", &r), PS_OK);
	ck_assert(field_is(&r.id, "b"));
	ck_assert_int_eq(scan_str("{\"id\":\"a\",\"id\":5}", &r), PS_OK);
	ck_assert_int_eq(r.id.kind, SCAN_OTHER);
}
END_TEST

START_TEST(test_scan_escapes_flagged)
{
	struct scan_result r;
	ck_assert_int_eq(scan_str("{\"id\":\"a\\u0062\"}", &r), PS_OK);
	ck_assert(r.id.escaped);
	ck_assert_int_eq(scan_str("{\"\\u0069d\":\"x\"}", &r), PS_OK);
	ck_assert(r.key_escaped);
}
END_TEST

START_TEST(test_scan_rejects_invalid)
{
	static const char *const bad[] = {
		"", "   ", "[1,2]", "\"str\"", "42", "{", "{\"a\":}", "{\"a\":1,}", "{\"a\" 1}",
		"{\"a\":tru}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":-}", "{\"a\":\"x\ty\"}",
		"{\"a\":\"\\x\"}", "{\"a\":\"\\u12G4\"}", "{\"a\":[1 2]}", "{\"a\":1} x", "{'a':1}",
		"{\"a\":{\"b\":[}}", "{\"a\":\"unterminated}",
	};
	struct scan_result r;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(scan_str(bad[i], &r) == PS_ERR_INVALID, "accepted: %s", bad[i]);
}
END_TEST

START_TEST(test_scan_accepts_valid)
{
	static const char *const good[] = {
		"{}", " {} \r", "{\"a\":[]}", "{\"a\":{}}", "{\"a\":-0.5e+10}", "{\"a\":[1,{\"b\":[true,false,null]}]}",
		"{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\"}", "{\"a\":\"\xc3\xa9\"}", "{\"a\":\"\xff\xfe\"}",
		"{\"n\":123456789012345678901234567890}",
	};
	struct scan_result r;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		ck_assert_msg(scan_str(good[i], &r) == PS_OK, "rejected: %s", good[i]);
}
END_TEST

/* Nesting as deep as jansson allows is accepted; one level more is not, and
 * 100,000 levels neither crash nor recurse. */
/* Lines with an image block are flagged (only those are parsed to count
 * images); the word alone, in text or a MIME type, is not a block. */
START_TEST(test_scan_maybe_image)
{
	static const struct {
		const char *line;
		int flagged;
	} cases[] = {
		{ "{\"type\":\"message\",\"message\":{\"content\":[{\"type\":\"image\",\"data\":\"AA==\"}]}}", 1 },
		{ "{\"type\":\"custom_message\",\"content\":[{\"data\":\"x\",\"type\" : \"image\"}]}", 1 },
		{ "{\"type\":\"message\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"\\\"image\\\" image\"}]}}", 0 },
		{ "{\"type\":\"message\",\"message\":{\"content\":[{\"mimeType\":\"image/png\",\"type\":\"text\"}]}}", 0 },
		{ "{\"type\":\"image\"}", 0 }, /* a top-level type is the entry's */
		{ "{\"a\":[{\"type\":\"imag\\u0065\"}]}", 1 }, /* escaped: might be */
		{ "{\"a\":[{\"typ\\u0065\":\"text\"}]}", 1 },
		{ "{\"a\":[{\"type\":[\"image\"]}]}", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct scan_result r;
		ck_assert_msg(scan_str(cases[i].line, &r) == PS_OK, "case %zu", i);
		ck_assert_msg(r.maybe_image == cases[i].flagged, "case %zu: %s", i, cases[i].line);
	}
}
END_TEST

START_TEST(test_scan_depth)
{
	struct scan_result r;
	size_t depth = 100000;
	char *line = malloc(depth * 2 + 16);
	for (size_t levels = SCAN_MAX_DEPTH - 1; levels <= SCAN_MAX_DEPTH + 1; levels++) {
		size_t o = 0;
		o += (size_t)sprintf(line, "{\"a\":");
		for (size_t i = 0; i < levels - 1; i++)
			line[o++] = '[';
		for (size_t i = 0; i < levels - 1; i++)
			line[o++] = ']';
		line[o++] = '}';
		ck_assert_int_eq(scan_line(line, o, &r), levels <= SCAN_MAX_DEPTH ? PS_OK : PS_ERR_INVALID);
		/* The renderer must agree, or a shown entry could not be read. */
		json_t *v = json_loadb(line, o, 0, NULL);
		ck_assert_int_eq(v != NULL, levels <= SCAN_MAX_DEPTH);
		json_decref(v);
	}
	size_t o = (size_t)sprintf(line, "{\"a\":");
	memset(line + o, '[', depth);
	o += depth;
	ck_assert_int_eq(scan_line(line, o, &r), PS_ERR_INVALID);
	free(line);
}
END_TEST

START_TEST(test_scan_message_content)
{
	struct scan_result r;
	const char *line = "{\"message\":{\"content\":\"old\",\"timestamp\":1},"
			   "\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\"}],\"timestamp\":-2.5e3}}";
	ck_assert_int_eq(scan_str(line, &r), PS_OK);
	ck_assert_int_eq(r.content.kind, SCAN_OTHER);
	ck_assert_int_eq((int)r.content.len, (int)strlen("[{\"type\":\"text\"}]"));
	ck_assert(!memcmp(r.content.ptr, "[{", 2));
	ck_assert_int_eq(r.msg_time.kind, SCAN_OTHER);
	ck_assert_int_eq((int)r.msg_time.len, 6);
	ck_assert(!r.maybe_unreadable);
	/* A later "message" without content forgets the earlier one's. */
	ck_assert_int_eq(scan_str("{\"message\":{\"content\":\"x\"},\"message\":{}}", &r), PS_OK);
	ck_assert_int_eq(r.content.kind, SCAN_ABSENT);
	ck_assert_int_eq(r.msg_time.kind, SCAN_ABSENT);
}
END_TEST

START_TEST(test_scan_maybe_unreadable)
{
	static const char *const unsure[] = {
		"{\"a\":1e400}", "{\"a\":[{\"b\":-1E+309}]}", "{\"a\":0.5e999}", "{\"x\\u0000\":1}",
		"{\"a\":{\"b\":{\"\\u0000\":1}}}", "{\"a\":[{\"\\\\u0000\":1}]}",
	};
	static const char *const sure[] = {
		"{\"a\":1e299}", "{\"a\":1.5e-400}", "{\"a\":123456789012345678901234567890}",
		"{\"a\":\"\\u0000\"}", "{\"\\u0041\":1}", "{\"a\":1e-99999}",
	};
	struct scan_result r;
	for (size_t i = 0; i < sizeof unsure / sizeof *unsure; i++) {
		ck_assert_msg(scan_str(unsure[i], &r) == PS_OK && r.maybe_unreadable, "%s", unsure[i]);
		/* The flag is conservative: jansson does refuse these. */
		json_error_t e;
		json_t *v = json_loads(unsure[i], JSON_ALLOW_NUL, &e);
		ck_assert_msg(v == NULL || i == 5, "%s", unsure[i]);
		json_decref(v);
	}
	for (size_t i = 0; i < sizeof sure / sizeof *sure; i++)
		ck_assert_msg(scan_str(sure[i], &r) == PS_OK && !r.maybe_unreadable, "%s", sure[i]);
}
END_TEST

Suite *scan_suite(void)
{
	Suite *s = suite_create("scan");
	TCase *tc = tcase_create("scan");
	tcase_add_test(tc, test_scan_fields);
	tcase_add_test(tc, test_scan_last_duplicate_key_wins);
	tcase_add_test(tc, test_scan_content_null_element);
	tcase_add_test(tc, test_scan_escapes_flagged);
	tcase_add_test(tc, test_scan_rejects_invalid);
	tcase_add_test(tc, test_scan_accepts_valid);
	tcase_add_test(tc, test_scan_depth);
	tcase_add_test(tc, test_scan_maybe_image);
	tcase_add_test(tc, test_scan_message_content);
	tcase_add_test(tc, test_scan_maybe_unreadable);
	suite_add_tcase(s, tc);
	return s;
}
