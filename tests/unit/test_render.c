/* Unit tests of render_entry(): the edge cases the golden files do not show
 * well (NULL, NUL bytes, huge texts, exact bytes around texts).  The
 * format itself is pinned down by tests/golden/render/. */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "suites.h"
#include "render.h"

/* Renders the entry given as JSON text; the result must equal want. */
static void render_check(const char *json, const char *want)
{
	json_error_t jerr;
	json_t *v = json_loads(json, JSON_ALLOW_NUL, &jerr);
	ck_assert_msg(v != NULL, "bad test JSON: %s", jerr.text);
	size_t len = 0;
	char *s = render_entry(v, NULL, &len);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(len, strlen(s));
	ck_assert_str_eq(s, want);
	free(s);
	json_decref(v);
}

START_TEST(test_null_entry)
{
	size_t len = 99;
	char *s = render_entry(NULL, NULL, &len);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(len, 8);
	ck_assert_str_eq(s, "---\n---\n");
	free(s);
	/* len may be NULL too */
	s = render_entry(NULL, NULL, NULL);
	ck_assert_ptr_nonnull(s);
	free(s);
}
END_TEST

START_TEST(test_not_an_object)
{
	render_check("[1, \"a\"]", "---\n---\n<!-- pi:value -->\n```json\n[\n  1,\n  \"a\"\n]\n```\n");
}
END_TEST

START_TEST(test_empty_object)
{
	render_check("{}", "---\n---\n");
}
END_TEST

START_TEST(test_unknown_type)
{
	render_check("{\"zeta\":{\"k\":[]},\"type\":\"brand_new\",\"id\":\"ab\",\"n\":1.0,"
		     "\"s\":\"12\",\"t\":\"hello world\",\"u\":{\"input\":1}}",
		     "---\n"
		     "type: brand_new\n"
		     "id: ab\n"
		     "n: 1.0\n"
		     "s: \"12\"\n"
		     "t: hello world\n"
		     "---\n"
		     "<!-- pi:json zeta -->\n"
		     "```json\n{\n  \"k\": []\n}\n```\n"
		     "\n"
		     "<!-- pi:json u -->\n"
		     "```json\n{\n  \"input\": 1\n}\n```\n"
		     /* only "usage" objects go to the front matter */
		     );
}
END_TEST

START_TEST(test_empty_content)
{
	/* "" is no body at all; [] likewise, told apart by the descriptor */
	render_check("{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"\"}}",
		     "---\ntype: message\nrole: user\ncontent: string\n---\n");
	render_check("{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[]}}",
		     "---\ntype: message\nrole: user\ncontent: blocks\n---\n");
	/* one empty text block: its terminator is there */
	render_check("{\"type\":\"message\",\"message\":{\"role\":\"user\","
		     "\"content\":[{\"type\":\"text\",\"text\":\"\"}]}}",
		     "---\ntype: message\nrole: user\ncontent: blocks\n---\n\n");
	/* an empty message object keeps one scope */
	render_check("{\"type\":\"message\",\"message\":{}}",
		     "---\ntype: message\n---\n<!-- pi:json message -->\n```json\n{}\n```\n");
}
END_TEST

START_TEST(test_text_bytes)
{
	/* exactly one "\n" after every text, one blank line between items */
	render_check("{\"type\":\"custom_message\",\"content\":\"a\\n\"}",
		     "---\ntype: custom_message\ncontent: string\n---\na\n\n");
	render_check("{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":"
		     "[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"thinking\",\"thinking\":\"y\\n\"},"
		     "{\"type\":\"text\",\"text\":\"z\"}]}}",
		     "---\ntype: message\nrole: assistant\ncontent: blocks\n---\n"
		     "x\n\n<!-- pi:thinking -->\ny\n\n\n<!-- pi:text -->\nz\n");
}
END_TEST

START_TEST(test_scopes)
{
	render_check("{\"type\":\"message\",\"id\":\"i1\",\"extra\":true,"
		     "\"message\":{\"id\":\"m\",\"role\":\"user\",\"content\":\"hi\",\"timestamp\":5}}",
		     "---\ntype: message\nid: i1\nrole: user\nmessage.id: m\ncontent: string\n"
		     "message.timestamp: 5\nentry.extra: true\n---\nhi\n");
}
END_TEST

START_TEST(test_nul_byte)
{
	json_t *e = json_pack("{s:s, s:s%, s:{s:s, s:s%}}", "type", "message", "note", "n\0m", (size_t)3,
			      "message", "role", "user", "content", "a\0b", (size_t)3);
	ck_assert_ptr_nonnull(e);
	size_t len = 0;
	char *s = render_entry(e, NULL, &len);
	ck_assert_ptr_nonnull(s);
	static const char want[] = "---\ntype: message\nrole: user\ncontent: string\n"
				   "entry.note: \"n\\u0000m\"\n---\na\0b\n";
	ck_assert_uint_eq(len, sizeof want - 1);
	ck_assert_mem_eq(s, want, sizeof want - 1);
	ck_assert_int_eq(s[len], '\0');
	free(s);
	json_decref(e);
}
END_TEST

START_TEST(test_huge_text)
{
	size_t n = 16u << 20;
	char *big = malloc(n);
	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < n; i++)
		big[i] = (char)('a' + i % 26);
	big[n / 2] = '\n';
	json_t *e = json_pack("{s:s, s:s%}", "type", "custom_message", "content", big, n);
	ck_assert_ptr_nonnull(e);
	size_t len = 0;
	char *s = render_entry(e, NULL, &len);
	ck_assert_ptr_nonnull(s);
	static const char head[] = "---\ntype: custom_message\ncontent: string\n---\n";
	ck_assert_uint_eq(len, sizeof head - 1 + n + 1);
	ck_assert_mem_eq(s, head, sizeof head - 1);
	ck_assert(memcmp(s + sizeof head - 1, big, n) == 0);
	ck_assert_int_eq(s[len - 1], '\n');
	free(s);
	json_decref(e);
	free(big);
}
END_TEST

START_TEST(test_marker_lookalike)
{
	/* a text line that starts like a marker moves the markers to pi1;
	 * the same string not at a line start does not */
	render_check("{\"type\":\"custom_message\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
		     "{\"type\":\"text\",\"text\":\"<!-- pi:text -->\"}]}",
		     "---\npi.marker: pi1\ntype: custom_message\ncontent: blocks\n---\n"
		     "a\n\n<!-- pi1:text -->\n<!-- pi:text -->\n");
	render_check("{\"type\":\"custom_message\",\"content\":\"x <!-- pi:text -->\"}",
		     "---\ntype: custom_message\ncontent: string\n---\nx <!-- pi:text -->\n");
	render_check("{\"type\":\"x\",\"summary\":\"<!-- pi:a -->\\n<!-- pi1:b -->\\n<!-- pi3:c\"}",
		     "---\npi.marker: pi2\ntype: x\n---\n<!-- pi2:summary -->\n"
		     "<!-- pi:a -->\n<!-- pi1:b -->\n<!-- pi3:c\n");
}
END_TEST

START_TEST(test_all_tags_taken)
{
	/* 0..63 all used: the tag after the largest one seen */
	char *text = malloc(64 * 24 + 64);
	ck_assert_ptr_nonnull(text);
	size_t n = (size_t)sprintf(text, "<!-- pi:x\n");
	for (int i = 1; i < 64; i++)
		n += (size_t)sprintf(text + n, "<!-- pi%d:x\n", i);
	n += (size_t)sprintf(text + n, "<!-- pi70:x\n");
	json_t *e = json_pack("{s:s%}", "summary", text, n);
	ck_assert_ptr_nonnull(e);
	char *s = render_entry(e, NULL, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(strstr(s, "pi.marker: pi71\n"));
	ck_assert_ptr_nonnull(strstr(s, "\n<!-- pi71:summary -->\n"));
	free(s);
	json_decref(e);
	free(text);
}
END_TEST

START_TEST(test_front_values)
{
	render_check("{\"a\":\"true\",\"b\":\"-1.5e3\",\"c\":\"2026-01-01T00:00:00Z\",\"d\":\" x\","
		     "\"e\":\"{x\",\"f\":\"a: b\",\"g\":\"\",\"h\":\"line\\nbreak\",\"i\":\"0123\","
		     "\"j\":0.1,\"k\":-2,\"l\":1e300,\"m\":null,\"content\":7,\"replacement\":\"blocks\","
		     "\"odd key\":1,\"ünï\":\"ü\"}",
		     "---\n"
		     "a: \"true\"\n"
		     "b: \"-1.5e3\"\n"
		     "c: 2026-01-01T00:00:00Z\n"
		     "d: \" x\"\n"
		     "e: \"{x\"\n"
		     "f: \"a: b\"\n"
		     "g: \"\"\n"
		     "h: \"line\\nbreak\"\n"
		     "i: 0123\n"
		     "j: 0.1\n"
		     "k: -2\n"
		     "l: 1e+300\n"
		     "m: null\n"
		     "content: 7\n"
		     "replacement: \"blocks\"\n"
		     "\"odd key\": 1\n"
		     "\"ünï\": ü\n"
		     "---\n");
}
END_TEST

START_TEST(test_images)
{
	render_check("{\"type\":\"custom_message\",\"content\":["
		     "{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"},"
		     "{\"type\":\"image\",\"data\":\"AAA=\",\"mimeType\":\"image/png\",\"bytes\":1},"
		     "{\"type\":\"image\",\"data\":\"AA==\"},"
		     "{\"type\":\"image\",\"data\":\"\"},"
		     "{\"type\":\"image\",\"data\":5}]}",
		     "---\ntype: custom_message\ncontent: blocks\n---\n"
		     "<!-- pi:image mimeType=\"image/png\" bytes=3 -->\n![image 1](entry.images/1.png)\n\n"
		     "<!-- pi:image mimeType=\"image/png\" \"bytes\"=1 bytes=2 -->\n![image 2](entry.images/2.png)\n\n"
		     "<!-- pi:image bytes=1 -->\n![image 3](entry.images/3.bin)\n\n"
		     "<!-- pi:image bytes=0 -->\n![image 4](entry.images/4.bin)\n\n"
		     "<!-- pi:image data=5 -->\n");
	/* Only messages and custom messages have image files: elsewhere an
	 * image is its marker alone. */
	render_check("{\"type\":\"context_edit\",\"replacement\":{\"content\":["
		     "{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"}]}}",
		     "---\ntype: context_edit\nreplacement: blocks\n---\n"
		     "<!-- pi:image mimeType=\"image/png\" bytes=3 -->\n");
	render_check("{\"type\":\"future\",\"content\":[{\"type\":\"image\",\"data\":\"AAAA\"}]}",
		     "---\ntype: future\ncontent: blocks\n---\n<!-- pi:image bytes=3 -->\n");
	/* "image\0x" is no image (nor numbered as one); the next one is 1 */
	render_check("{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":["
		     "{\"type\":\"image\\u0000x\",\"data\":\"AAAA\"},{\"type\":\"image\",\"data\":\"AAAA\","
		     "\"mimeType\":\"image/jpeg\"}]}}",
		     "---\ntype: message\nrole: user\ncontent: blocks\n---\n<!-- pi:block -->\n```json\n{\n"
		     "  \"type\": \"image\\u0000x\",\n  \"data\": \"AAAA\"\n}\n```\n\n"
		     "<!-- pi:image mimeType=\"image/jpeg\" bytes=3 -->\n![image 1](entry.images/1.jpg)\n");
}
END_TEST

/* The links are relative to the file name given, written as a URL: the
 * %XX escapes of a name come out as %25XX. */
START_TEST(test_image_links_named)
{
	json_t *v = json_loads("{\"type\":\"custom_message\",\"content\":[{\"type\":\"image\",\"data\":\"AAAA\","
			       "\"mimeType\":\"image/gif\"}]}", 0, NULL);
	ck_assert_ptr_nonnull(v);
	char *s = render_entry(v, "0003-custom_message.a%2Fb~h0123456789abcdef.md", NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "---\ntype: custom_message\ncontent: blocks\n---\n<!-- pi:image mimeType=\"image/gif\" "
			 "bytes=3 -->\n![image 1](0003-custom_message.a%252Fb~h0123456789abcdef.images/1.gif)\n");
	free(s);
	json_decref(v);
}
END_TEST

START_TEST(test_sections_and_fields)
{
	render_check("{\"type\":\"message\",\"message\":{\"role\":\"bashExecution\",\"command\":\"ls\","
		     "\"output\":\"\",\"exitCode\":null,\"sections\":{\"a\":\"x\",\"b\":null}}}",
		     "---\ntype: message\nrole: bashExecution\nexitCode: null\n---\n"
		     "<!-- pi:command -->\nls\n\n<!-- pi:output -->\n\n\n"
		     "<!-- pi:section a -->\nx\n\n<!-- pi:section b value=null -->\n");
}
END_TEST

Suite *render_suite(void)
{
	Suite *s = suite_create("render");
	TCase *tc = tcase_create("render");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_null_entry);
	tcase_add_test(tc, test_not_an_object);
	tcase_add_test(tc, test_empty_object);
	tcase_add_test(tc, test_unknown_type);
	tcase_add_test(tc, test_empty_content);
	tcase_add_test(tc, test_text_bytes);
	tcase_add_test(tc, test_scopes);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_huge_text);
	tcase_add_test(tc, test_marker_lookalike);
	tcase_add_test(tc, test_all_tags_taken);
	tcase_add_test(tc, test_front_values);
	tcase_add_test(tc, test_images);
	tcase_add_test(tc, test_image_links_named);
	tcase_add_test(tc, test_sections_and_fields);
	suite_add_tcase(s, tc);
	return s;
}
