/* Unit tests of parse_entry_md(): the round trip through render_entry()
 * over every golden render case and every line of the fixtures, each
 * rule that needs more than a file and its original (the why buffer, NUL
 * bytes, invalid UTF-8, huge inputs), line endings, new files, and byte
 * sequences that must be refused without harm.  The refusals of a file and
 * its original are data: tests/golden/parse/refused-* (run by
 * tests/golden/run.sh), one case a rule. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "helpers.h"
#include "suites.h"
#include "parse.h"
#include "render.h"
#include "rewrite.h"

#define NOW 1767323045678LL
/* The refusal of a file whose first line is "---" and no other is. */
#define UNTERMINATED                                                                                    \
	"line 1: the front matter has no closing \"---\" line (a file whose first line is \"---\" starts " \
	"with front matter: a text that starts with such a line needs the front matter above it)"

static json_t *load(const char *json)
{
	json_error_t jerr;
	json_t *v = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	ck_assert_msg(v != NULL, "bad test JSON: %s: %s", jerr.text, json);
	return v;
}

static char *render(const json_t *e, size_t *len)
{
	char *md = render_entry(e, NULL, len);
	ck_assert_ptr_nonnull(md);
	return md;
}

/* e without what the appender fills in. */
static json_t *expected_of(const json_t *e)
{
	json_t *want = json_deep_copy(e);
	ck_assert_ptr_nonnull(want);
	if (json_is_object(want)) {
		json_object_del(want, "id");
		json_object_del(want, "parentId");
		json_object_del(want, "timestamp");
	}
	return want;
}

static void assert_equal(const json_t *got, const json_t *want, const char *what)
{
	if (!json_equal(got, want)) {
		char *g = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);
		char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
		ck_abort_msg("%s:\n got  %.600s\n want %.600s", what, g ? g : "NULL", w ? w : "NULL");
	}
}

/* parse(render(e), e) == e less id/parentId/timestamp, also when the file
 * lost its final newline -- unless it ends with a blank line: then the
 * file less one newline is the rendering of the text less one newline
 * (docs: Exact bytes), and reads as that. */
static void roundtrip(const json_t *e, const char *what)
{
	size_t len;
	char *md = render(e, &len);
	char why[512];
	json_t *want = expected_of(e), *got = NULL;

	int strips = len < 2 || md[len - 2] != '\n' ? 2 : 1;
	for (int strip = 0; strip < strips; strip++) {
		ps_err err = parse_entry_md_at(md, len - (size_t)strip, e, NULL, NOW, &got, why, sizeof why);
		ck_assert_msg(err == PS_OK, "%s%s: refused: %s\n%.800s", what, strip ? " (no final newline)" : "",
			      why, md);
		assert_equal(got, want, what);
		json_decref(got);
	}
	json_decref(want);
	free(md);
}

/* Parses md (an edit of original_json when not NULL) and compares. */
static void expect_ok(const char *md, const char *original_json, const char *want_json)
{
	json_t *orig = original_json ? load(original_json) : NULL, *want = load(want_json), *got = NULL;
	char why[512] = "";
	ps_err err = parse_entry_md_at(md, strlen(md), orig, NULL, NOW, &got, why, sizeof why);
	ck_assert_msg(err == PS_OK, "refused: %s\n%s", why, md);
	assert_equal(got, want, md);
	json_decref(got);
	json_decref(want);
	json_decref(orig);
}

/* Parses n bytes of md; it must be refused with exactly want_why. */
static void expect_refused_n(const char *md, size_t n, const json_t *orig, const char *want_why)
{
	json_t *got = (json_t *)1;
	char why[512];
	memset(why, 'x', sizeof why);
	ps_err err = parse_entry_md_at(md, n, orig, NULL, NOW, &got, why, sizeof why);
	ck_assert_msg(err == PS_ERR_INVALID, "accepted (%d): %.300s", (int)err, md);
	ck_assert_ptr_null(got);
	ck_assert_ptr_null(strchr(why, '\n'));
	ck_assert_str_eq(why, want_why);
}

/* md, an edit of orig shown as the file name: refused with want_why. */
static void expect_refused_named(const char *md, const json_t *orig, const char *name, const char *want_why)
{
	json_t *got = (json_t *)1;
	char why[512];
	ps_err err = parse_entry_md_at(md, strlen(md), orig, name, NOW, &got, why, sizeof why);
	ck_assert_msg(err == PS_ERR_INVALID, "accepted (%d): %.300s", (int)err, md);
	ck_assert_ptr_null(got);
	ck_assert_str_eq(why, want_why);
}

/* s with the first occurrence of from replaced by to (which must occur). */
static char *replace(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	ck_assert_msg(at != NULL, "\"%s\" not in the file", from);
	size_t head = (size_t)(at - s), fl = strlen(from), tl = strlen(to);
	char *out = malloc(strlen(s) - fl + tl + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, s, head);
	memcpy(out + head, to, tl);
	strcpy(out + head + tl, at + fl);
	return out;
}

/* Renders original, replaces from by to, expects want. */
static void edit_ok(const char *original_json, const char *from, const char *to, const char *want_json)
{
	json_t *orig = load(original_json);
	char *md = render(orig, NULL);
	char *edited = replace(md, from, to);
	expect_ok(edited, original_json, want_json);
	free(edited);
	free(md);
	json_decref(orig);
}

/* ---- round trip ------------------------------------------------------ */

START_TEST(test_roundtrip_golden)
{
	glob_t g;
	ck_assert_int_eq(glob("tests/golden/render/*/input.json", 0, NULL, &g), 0);
	ck_assert_uint_ge(g.gl_pathc, 30);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		json_error_t jerr;
		json_t *e = json_load_file(g.gl_pathv[i], JSON_ALLOW_NUL, &jerr);
		ck_assert_msg(e != NULL, "%s: %s", g.gl_pathv[i], jerr.text);
		roundtrip(e, g.gl_pathv[i]);
		json_decref(e);
	}
	globfree(&g);
}
END_TEST

START_TEST(test_roundtrip_fixtures)
{
	glob_t g;
	size_t entries = 0;
	ck_assert_int_eq(glob("tests/data/fixtures/*.jsonl", 0, NULL, &g), 0);
	ck_assert_uint_ge(g.gl_pathc, 3);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");
		char *line = NULL, what[600];
		size_t cap = 0;
		ssize_t n;
		int lineno = 0;
		ck_assert_ptr_nonnull(f);
		while ((n = getline(&line, &cap, f)) > 0) {
			json_error_t jerr;
			lineno++;
			json_t *e = json_loadb(line, (size_t)n, JSON_ALLOW_NUL, &jerr);
			ck_assert_msg(e != NULL, "%s:%d: %s", g.gl_pathv[i], lineno, jerr.text);
			snprintf(what, sizeof what, "%s:%d", g.gl_pathv[i], lineno);
			roundtrip(e, what);
			json_decref(e);
			entries++;
		}
		free(line);
		fclose(f);
	}
	globfree(&g);
	ck_assert_uint_ge(entries, 2000);
}
END_TEST

/* The corner cases of test_render.c, and more, read back. */
START_TEST(test_roundtrip_corners)
{
	static const char *const cases[] = {
		"{}",
		"[1, \"a\"]",
		"null",
		"\"just a string\"",
		"{\"type\":\"message\"}",
		"{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}", /* no message: one scope */
		"{\"type\":\"message\",\"message\":{}}",
		"{\"type\":\"message\",\"message\":\"text\"}",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"\"}}",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[]}}",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\"}]}}",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\"},"
		"{\"type\":\"text\",\"text\":\"\"},{\"type\":\"thinking\",\"thinking\":\"\\n\\n\"}]}}",
		"{\"type\":\"custom_message\",\"content\":\"a\\n\"}",
		"{\"type\":\"custom_message\",\"content\":\"\\n\\n\\n\"}",
		"{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},"
		"{\"type\":\"thinking\",\"thinking\":\"y\\n\"},{\"type\":\"text\",\"text\":\"z\"}]}}",
		"{\"type\":\"message\",\"id\":\"i1\",\"extra\":true,\"message\":{\"id\":\"m\",\"role\":\"user\","
		"\"content\":\"hi\",\"timestamp\":5,\"message\":{\"x\":1},\"type\":\"t\"}}",
		"{\"type\":\"message\",\"note\":\"n\\u0000m\",\"message\":{\"role\":\"user\",\"content\":\"a\\u0000b\"}}",
		"{\"type\":\"x\",\"k\":\"\\u0000\",\"sections\":{\"a\":\"\\u0000\"}}",
		"{\"type\":\"custom_message\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
		"{\"type\":\"text\",\"text\":\"<!-- pi:text -->\"}]}",
		"{\"type\":\"x\",\"summary\":\"<!-- pi:a -->\\n<!-- pi1:b -->\\n<!-- pi3:c\"}",
		"{\"a\":\"true\",\"b\":\"-1.5e3\",\"c\":\"2026-01-01T00:00:00Z\",\"d\":\" x\",\"e\":\"{x\",\"f\":\"a: b\","
		"\"g\":\"\",\"h\":\"line\\nbreak\",\"i\":\"0123\",\"j\":0.1,\"k\":-2,\"l\":1e300,\"m\":null,"
		"\"content\":7,\"replacement\":\"blocks\",\"odd key\":1,\"\\u00fcn\\u00ef\":\"\\u00fc\",\"n\":\"1e999\","
		"\"o\":3.0,\"p\":-0.0,\"q\":1e21,\"r\":123456789012345678,\"s\":\"x:\",\"t\":\"string\","
		"\"u\":\"\\r\",\"v\":\"a\\r\\nb\",\"w\":9007199254740993,\"x\":5e-324}",
		"{\"type\":\"custom_message\",\"content\":[{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"},"
		"{\"type\":\"image\",\"data\":\"AAA=\",\"mimeType\":\"image/png\",\"bytes\":1},"
		"{\"type\":\"image\",\"data\":\"AA==\"},{\"type\":\"image\",\"data\":\"\"},{\"type\":\"image\",\"data\":5},"
		"{\"type\":\"image\"},{\"type\":\"image\",\"bytes\":\"x\"}]}",
		"{\"type\":\"message\",\"message\":{\"role\":\"bashExecution\",\"command\":\"ls\",\"output\":\"\","
		"\"exitCode\":null,\"sections\":{\"a\":\"x\",\"b\":null,\"c d\":{\"e\":[]}}}}",
		"{\"type\":\"message\",\"message\":{\"role\":\"system\",\"content\":\"\",\"sections\":{}}}",
		"{\"type\":\"context_edit\",\"replacement\":{\"content\":\"\"}}",
		"{\"type\":\"context_edit\",\"replacement\":{\"content\":[]}}",
		"{\"type\":\"context_edit\",\"replacement\":{\"content\":\"x\",\"y\":1}}",
		"{\"type\":\"context_edit\",\"content\":null,\"replacement\":{\"content\":[{\"type\":\"text\",\"text\":\"r\"}]}}",
		"{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c\","
		"\"name\":\"n\"},{\"type\":\"toolCall\",\"id\":\"c -->\",\"name\":\"n\\\" x=1\",\"arguments\":[]},"
		"{\"type\":\"toolCall\",\"arguments\":{}},{\"type\":\"toolCall\",\"arguments\":\"\"}]}}",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"---\\ntitle: x\\n---\\n\"}}",
		"{\"type\":\"x\",\"content\":\"\\r\\n\\r\\n\"}",
		"{\"entry\":{\"a\":1},\"message\":\"m\",\"pi\":2,\"type\":\"message\"}",
		"{\"type\":\"message\",\"message\":{\"role\":\"u\",\"entry\":1,\"pi\":2,\"message.x\":3,\"entry.y\":4}}",
		"{\"type\":\"context_edit\",\"replacement\":{\"content\":[{\"type\":\"image\",\"data\":\"AAAA\"},"
		"{\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"}]}}",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"image\\u0000\","
		"\"data\":\"AAAA\"},{\"type\":\"image\",\"data\":\"AA==\",\"x\":[1]},{\"type\":\"image\",\"data\":\"!\"}]}}",
	};
	char what[64];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *e = load(cases[i]);
		snprintf(what, sizeof what, "corner case %zu", i);
		roundtrip(e, what);
		json_decref(e);
	}
}
END_TEST

/* Many marker tags in use, and deep but legal JSON. */
START_TEST(test_roundtrip_tags_and_depth)
{
	char *text = malloc(64 * 24 + 64);
	ck_assert_ptr_nonnull(text);
	size_t n = (size_t)sprintf(text, "<!-- pi:x\n");
	for (int i = 1; i < 64; i++)
		n += (size_t)sprintf(text + n, "<!-- pi%d:x\n", i);
	json_t *e = json_pack("{s:s, s:[{s:s, s:s%}]}", "type", "custom_message", "content", "type", "thinking",
			      "thinking", text, n);
	ck_assert_ptr_nonnull(e);
	roundtrip(e, "64 tags");
	json_decref(e);
	free(text);

	/* 1000 levels: under jansson's limit, so it must come back */
	char deep[2100];
	memset(deep, '[', 1000);
	memset(deep + 1000, ']', 1000);
	deep[2000] = '\0';
	json_t *v = load(deep);
	e = json_pack("{s:s, s:O}", "type", "x", "deep", v);
	roundtrip(e, "deep");
	json_decref(e);
	json_decref(v);
}
END_TEST

/* ---- line endings ---------------------------------------------------- */

START_TEST(test_newlines)
{
	/* without the final newline: as if it were there */
	expect_ok("---\ntype: x\ncontent: string\n---\nabc", NULL, "{\"type\":\"x\",\"content\":\"abc\"}");
	expect_ok("---\ntype: x\ncontent: string\n---\nabc\n", NULL, "{\"type\":\"x\",\"content\":\"abc\"}");
	expect_ok("---\ntype: x\ncontent: string\n---\nabc\n\n", NULL, "{\"type\":\"x\",\"content\":\"abc\\n\"}");
	expect_ok("---\ntype: x\n---", NULL, "{\"type\":\"x\"}");
	expect_ok("---\ntype: x\nsummary: 1\n---\n<!-- pi:json d -->\n```json\n[]\n```", NULL,
		  "{\"type\":\"x\",\"summary\":1,\"d\":[]}");
	/* CRLF everywhere: read as LF */
	expect_ok("---\r\ntype: x\r\ncontent: string\r\n---\r\na\r\nb\r\n", NULL,
		  "{\"type\":\"x\",\"content\":\"a\\nb\"}");
	expect_ok("---\r\ntype: x\r\ncontent: string\r\n---\r\na\r\nb", NULL, "{\"type\":\"x\",\"content\":\"a\\nb\"}");
	expect_ok("hello\r\nworld\r\n", NULL,
		  "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hello\\nworld\","
		  "\"timestamp\":1767323045678}}");
	/* mixed: byte for byte, so a "\r" in a text survives */
	expect_ok("---\ntype: x\ncontent: string\n---\na\r\nb\r\n", NULL, "{\"type\":\"x\",\"content\":\"a\\r\\nb\\r\"}");
	expect_ok("a\r\nb\n", NULL,
		  "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\\r\\nb\","
		  "\"timestamp\":1767323045678}}");
	/* the blank line before a marker deleted: the text ends there */
	expect_ok("---\ntype: x\ncontent: blocks\n---\nabc\n<!-- pi:text -->\ndef\n<!-- pi:thinking -->\n<!-- pi:text -->\n",
		  NULL,
		  "{\"type\":\"x\",\"content\":[{\"type\":\"text\",\"text\":\"abc\"},{\"type\":\"text\",\"text\":\"def\"},"
		  "{\"type\":\"thinking\",\"thinking\":\"\"},{\"type\":\"text\",\"text\":\"\"}]}");
	/* extra blank lines after JSON and empty payloads, blank front matter lines */
	expect_ok("---\ntype: x\n\ncontent: blocks\n---\n<!-- pi:block -->\n```json\n1\n```\n\n\n\n"
		  "<!-- pi:toolCall id=\"a\" -->\n\n\n<!-- pi:json k -->\n```json\n{}\n```\n\n\n", NULL,
		  "{\"type\":\"x\",\"content\":[1,{\"type\":\"toolCall\",\"id\":\"a\"}],\"k\":{}}");
	/* "NAME:" with the blank stripped by an editor */
	expect_ok("---\ntype: x\nnote:\n---\n", NULL, "{\"type\":\"x\",\"note\":\"\"}");
}
END_TEST

START_TEST(test_is_front_matter)
{
	ck_assert_int_eq(parse_is_front_matter("---\ntype: x\n---\n", 16), 1);
	ck_assert_int_eq(parse_is_front_matter("---\n", 4), 1);
	ck_assert_int_eq(parse_is_front_matter("---", 3), 1);
	ck_assert_int_eq(parse_is_front_matter("---\r\ntype: x\r\n---\r\n", 19), 1);
	ck_assert_int_eq(parse_is_front_matter("---\r\ntype: x\n---\n", 17), 0);
	ck_assert_int_eq(parse_is_front_matter("--- \n", 5), 0);
	ck_assert_int_eq(parse_is_front_matter("----\n", 5), 0);
	ck_assert_int_eq(parse_is_front_matter("hello\n", 6), 0);
	ck_assert_int_eq(parse_is_front_matter("", 0), 0);
	ck_assert_int_eq(parse_is_front_matter(NULL, 0), 0);
	ck_assert_int_eq(parse_is_front_matter("---\nx", 3), 1); /* len is what counts */
	/* first bytes that may still become front matter, and those that cannot */
	const char *may[] = { "", "-", "--", "---", "---\n", "---\ntype", "---\r", "---\r\n", "---\rx" };
	const char *cannot[] = { "x", "-x", "--\n", "----", "--- ", "\n---\n", "new text\n", "hello" };
	for (size_t i = 0; i < sizeof may / sizeof may[0]; i++)
		ck_assert_msg(parse_may_be_front_matter(may[i], strlen(may[i])), "%s", may[i]);
	for (size_t i = 0; i < sizeof cannot / sizeof cannot[0]; i++) {
		ck_assert_msg(!parse_may_be_front_matter(cannot[i], strlen(cannot[i])), "%s", cannot[i]);
		ck_assert_int_eq(parse_is_front_matter(cannot[i], strlen(cannot[i])), 0);
	}
	ck_assert_int_eq(parse_may_be_front_matter(NULL, 0), 1);
}
END_TEST

/* ---- new files ------------------------------------------------------- */

START_TEST(test_new_plain)
{
	static const char user_hi[] =
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1767323045678}}";
	expect_ok("hi", NULL, user_hi);
	expect_ok("hi\n", NULL, user_hi);
	expect_ok("hi\n\n", NULL,
		  "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\\n\",\"timestamp\":1767323045678}}");
	expect_ok("  -- not front matter\n---\n", NULL,
		  "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"  -- not front matter\\n---\","
		  "\"timestamp\":1767323045678}}");
	expect_ok("<!-- pi:text -->\nmarkers mean nothing here\n", NULL,
		  "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"<!-- pi:text -->\\nmarkers mean "
		  "nothing here\",\"timestamp\":1767323045678}}");

	/* NUL is text like any other character */
	json_t *got = NULL;
	char why[256];
	ck_assert_int_eq(parse_entry_md_at("a\0b\n", 4, NULL, NULL, NOW, &got, why, sizeof why), PS_OK);
	const json_t *content = json_object_get(json_object_get(got, "message"), "content");
	ck_assert_uint_eq(json_string_length(content), 3);
	ck_assert_mem_eq(json_string_value(content), "a\0b", 3);
	json_decref(got);

	/* the real clock */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	long long before = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	ck_assert_int_eq(parse_entry_md("hi", 2, NULL, NULL, &got, why, sizeof why), PS_OK);
	clock_gettime(CLOCK_REALTIME, &ts);
	long long after = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	json_int_t t = json_integer_value(json_object_get(json_object_get(got, "message"), "timestamp"));
	ck_assert_int_ge(t, before);
	ck_assert_int_le(t, after);
	json_decref(got);
}
END_TEST

START_TEST(test_new_front_matter)
{
	/* a message gets the time; id, parentId and timestamp are dropped */
	expect_ok("---\ntype: message\nid: abc\nparentId: def\ntimestamp: 2026-01-01T00:00:00.000Z\nrole: user\n"
		  "content: string\n---\nhello\n",
		  NULL, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hello\",\"timestamp\":1767323045678}}");
	expect_ok("---\ntype: message\nrole: assistant\ncontent: blocks\nmessage.timestamp: 5\n---\n"
		  "<!-- pi:thinking -->\nhm\n\n<!-- pi:text -->\nyes\n",
		  NULL,
		  "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\","
		  "\"thinking\":\"hm\"},{\"type\":\"text\",\"text\":\"yes\"}],\"timestamp\":5}}");
	/* any entry type */
	expect_ok("---\ntype: custom\ncustomType: my-ext\n---\n<!-- pi:json data -->\n```json\n{\"a\": [1, 2.5]}\n```\n",
		  NULL, "{\"type\":\"custom\",\"customType\":\"my-ext\",\"data\":{\"a\":[1,2.5]}}");
	expect_ok("---\ntype: compaction\nfirstKeptEntryId: a1\ntokensBefore: 10\n---\n<!-- pi:summary -->\nshort\n",
		  NULL, "{\"type\":\"compaction\",\"firstKeptEntryId\":\"a1\",\"tokensBefore\":10,\"summary\":\"short\"}");
	/* {"type":"message"} with keys but no message object: two scopes, a
	 * new file cannot mean anything else */
	expect_ok("---\ntype: message\nrole: user\n---\n", NULL,
		  "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"timestamp\":1767323045678}}");
	expect_ok("---\ntype: message\n---\n", NULL, "{\"type\":\"message\"}");
}
END_TEST

/* ---- edits ----------------------------------------------------------- */

static const char toolresult[] =
	"{\"type\":\"message\",\"id\":\"128263f4\",\"parentId\":\"8a6d4fb1\",\"timestamp\":\"2026-11-29T19:11:31.181Z\","
	"\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"call_4\",\"toolName\":\"bash\",\"content\":"
	"[{\"type\":\"text\",\"text\":\"tool-output-4\\n\"}],\"isError\":false,\"durationMs\":22,"
	"\"timestamp\":1795979491181}}";

static const char custom_msg[] =
	"{\"type\":\"custom_message\",\"customType\":\"reminder\",\"content\":\"Remember.\",\"display\":true,"
	"\"id\":\"c1000002\",\"parentId\":\"c1000001\",\"timestamp\":\"2026-01-02T03:05:01.000Z\"}";

static const char assistant[] =
	"{\"type\":\"message\",\"id\":\"8a6d4fb1\",\"parentId\":\"7bfd5a82\",\"timestamp\":\"2026-11-29T19:11:31.155Z\","
	"\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"call_4\",\"name\":\"bash\","
	"\"arguments\":{\"command\":\"echo hi\"}}],\"api\":\"openai-completions\",\"provider\":\"fake\","
	"\"model\":\"fake-1\",\"usage\":{\"input\":100,\"output\":10},\"stopReason\":\"toolUse\","
	"\"timestamp\":1795979491088}}";

START_TEST(test_edit_identity)
{
	/* moved to a JSON block with the same value: no change */
	edit_ok(custom_msg, "customType: reminder\ncontent: string\ndisplay: true\n---\nRemember.\n",
		"content: string\ndisplay: true\n---\nRemember.\n\n<!-- pi:json customType -->\n```json\n"
		"\"reminder\"\n```\n",
		"{\"type\":\"custom_message\",\"customType\":\"reminder\",\"content\":\"Remember.\",\"display\":true}");
	/* the whole front matter removed: the file is the new text
	 * (test_rewrite), but not when it is blank */
	json_t *orig = load(toolresult);
	expect_refused_n("\n\n", 2, orig, "empty file: nothing to append");
	json_decref(orig);
}
END_TEST

/* ---- rewrites without front matter (rewrite.h) ----------------------- */

static const char two_texts[] =
	"{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-01-02T03:04:05.678Z\","
	"\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"A\"},"
	"{\"type\":\"toolCall\",\"id\":\"c\",\"name\":\"ls\",\"arguments\":{}},{\"type\":\"text\",\"text\":\"B\"}],"
	"\"timestamp\":1}}";

START_TEST(test_rewrite)
{
	/* one text: replaced, less one final newline; the rest kept */
	expect_ok("Forget it.\n", custom_msg,
		  "{\"type\":\"custom_message\",\"customType\":\"reminder\",\"content\":\"Forget it.\",\"display\":true}");
	expect_ok("edited", toolresult,
		  "{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"call_4\",\"toolName\":"
		  "\"bash\",\"content\":[{\"type\":\"text\",\"text\":\"edited\"}],\"isError\":false,\"durationMs\":22,"
		  "\"timestamp\":1795979491181}}");
	/* the same text again: the original less what the appender fills
	 * (commit_edit then appends nothing) */
	expect_ok("tool-output-4\n\n", toolresult,
		  "{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"call_4\",\"toolName\":"
		  "\"bash\",\"content\":[{\"type\":\"text\",\"text\":\"tool-output-4\\n\"}],\"isError\":false,"
		  "\"durationMs\":22,\"timestamp\":1795979491181}}");
	/* CRLF throughout reads as LF; NUL bytes are text */
	expect_ok("a\r\nb\r\n", custom_msg,
		  "{\"type\":\"custom_message\",\"customType\":\"reminder\",\"content\":\"a\\nb\",\"display\":true}");
	json_t *orig = load(custom_msg), *got = NULL, *want = load(
		"{\"type\":\"custom_message\",\"customType\":\"reminder\",\"content\":\"x\\u0000y\",\"display\":true}");
	char why[512];
	ck_assert_int_eq(parse_entry_md_at("x\0y\n", 4, orig, NULL, NOW, &got, why, sizeof why), PS_OK);
	assert_equal(got, want, "NUL in a rewrite");
	json_decref(got);
	json_decref(want);
	/* a first line "---" is front matter, whatever follows */
	expect_refused_n("---\nnot front matter\n", 21, orig, UNTERMINATED);
	expect_refused_n("---\n---\nx\n", 10, orig,
			 "line 2: front matter field \"type\" cannot be removed (was custom_message)");
	/* refused: no text, several texts; and with no why buffer */
	json_decref(orig);
	orig = load(two_texts);
	got = (json_t *)1;
	ck_assert_int_eq(parse_entry_md_at("C\n", 2, orig, NULL, NOW, &got, NULL, 0), PS_ERR_INVALID);
	ck_assert_ptr_null(got);
	json_decref(orig);
	/* rewrite_check() says the same before any text is there */
	orig = load(toolresult);
	ck_assert_int_eq(rewrite_check(orig, why, sizeof why), PS_OK);
	ck_assert_str_eq(why, "");
	json_decref(orig);
	orig = load(two_texts);
	ck_assert_int_eq(rewrite_check(orig, why, sizeof why), PS_ERR_INVALID);
	ck_assert_str_eq(why, "the file has no front matter, so it would replace the entry's text, but this assistant "
			      "message has 2 texts (2 text blocks): write the whole file back, front matter and markers "
			      "included, to say which one changes");
	ck_assert_int_eq(rewrite_check(orig, NULL, 0), PS_ERR_INVALID);
	json_decref(orig);
	orig = load("\"not an object\"");
	ck_assert_int_eq(rewrite_check(orig, why, sizeof why), PS_ERR_INVALID);
	json_decref(orig);
}
END_TEST

START_TEST(test_edit_allowed)
{
	/* unchanged: the original less what the appender fills */
	edit_ok(toolresult, "tool-output-4", "tool-output-4",
		"{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"call_4\",\"toolName\":\"bash\","
		"\"content\":[{\"type\":\"text\",\"text\":\"tool-output-4\\n\"}],\"isError\":false,\"durationMs\":22,"
		"\"timestamp\":1795979491181}}");
	/* text changed, metadata changed, a line removed (its field goes) */
	edit_ok(toolresult, "tool-output-4\n\n", "edited\n",
		"{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"call_4\",\"toolName\":\"bash\","
		"\"content\":[{\"type\":\"text\",\"text\":\"edited\"}],\"isError\":false,\"durationMs\":22,"
		"\"timestamp\":1795979491181}}");
	edit_ok(toolresult, "isError: false\ndurationMs: 22\nmessage.timestamp: 1795979491181\n", "isError: true\n",
		"{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"call_4\",\"toolName\":\"bash\","
		"\"content\":[{\"type\":\"text\",\"text\":\"tool-output-4\\n\"}],\"isError\":true}}");
	edit_ok(assistant, "model: fake-1\nusage: {\"input\":100,\"output\":10}\n", "model: fake-2\n",
		"{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\","
		"\"id\":\"call_4\",\"name\":\"bash\",\"arguments\":{\"command\":\"echo hi\"}}],"
		"\"api\":\"openai-completions\",\"provider\":\"fake\",\"model\":\"fake-2\",\"stopReason\":\"toolUse\","
		"\"timestamp\":1795979491088}}");
	/* tool call arguments and a new text block */
	edit_ok(assistant, "\"echo hi\"\n}\n```\n", "\"echo bye\",\n  \"timeout\": 5\n}\n```\n\n<!-- pi:text -->\nsure\n",
		"{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\","
		"\"id\":\"call_4\",\"name\":\"bash\",\"arguments\":{\"command\":\"echo bye\",\"timeout\":5}},"
		"{\"type\":\"text\",\"text\":\"sure\"}],\"api\":\"openai-completions\",\"provider\":\"fake\","
		"\"model\":\"fake-1\",\"usage\":{\"input\":100,\"output\":10},\"stopReason\":\"toolUse\","
		"\"timestamp\":1795979491088}}");
	/* content string stays a string; display may change */
	edit_ok(custom_msg, "display: true\n---\nRemember.\n", "display: false\n---\nForget it.\n",
		"{\"type\":\"custom_message\",\"customType\":\"reminder\",\"content\":\"Forget it.\",\"display\":false}");
	/* "content: string" may become blocks */
	edit_ok(custom_msg, "content: string\ndisplay: true\n---\nRemember.\n", "content: blocks\n---\nA\n\n<!-- pi:text -->\nB\n",
		"{\"type\":\"custom_message\",\"customType\":\"reminder\",\"content\":[{\"type\":\"text\",\"text\":\"A\"},"
		"{\"type\":\"text\",\"text\":\"B\"}]}");
}
END_TEST

START_TEST(test_edit_images)
{
	static const char img[] =
		"{\"type\":\"message\",\"id\":\"u2\",\"parentId\":\"u1\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\","
		"\"content\":[{\"type\":\"text\",\"text\":\"look\"},{\"type\":\"image\",\"data\":\"AAAAAA==\","
		"\"mimeType\":\"image/png\"},{\"type\":\"image\",\"data\":\"R0lGODlhAQABAAAAACw=\",\"mimeType\":\"image/gif\"}],"
		"\"timestamp\":1}}";
	static const char png[] = "<!-- pi:image mimeType=\"image/png\" bytes=4 -->\n![image 1](entry.images/1.png)\n";
	static const char gif[] = "<!-- pi:image mimeType=\"image/gif\" bytes=14 -->\n![image 2](entry.images/2.gif)\n";
	static const char both[] =
		"<!-- pi:image mimeType=\"image/png\" bytes=4 -->\n![image 1](entry.images/1.png)\n\n"
		"<!-- pi:image mimeType=\"image/gif\" bytes=14 -->\n![image 2](entry.images/2.gif)\n";
	char swapped[512];
	snprintf(swapped, sizeof swapped, "%s\n%s", gif, png);

	/* the text changes, the images keep their data */
	edit_ok(img, "look\n", "look again\n",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look again\"},"
		"{\"type\":\"image\",\"data\":\"AAAAAA==\",\"mimeType\":\"image/png\"},{\"type\":\"image\","
		"\"data\":\"R0lGODlhAQABAAAAACw=\",\"mimeType\":\"image/gif\"}],\"timestamp\":1}}");
	/* an image goes with its marker and link: the last, or the first (the
	 * link says which one stays) */
	edit_ok(img, "\n\n<!-- pi:image mimeType=\"image/gif\" bytes=14 -->\n![image 2](entry.images/2.gif)\n", "\n",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look\"},"
		"{\"type\":\"image\",\"data\":\"AAAAAA==\",\"mimeType\":\"image/png\"}],\"timestamp\":1}}");
	edit_ok(img, "<!-- pi:image mimeType=\"image/png\" bytes=4 -->\n![image 1](entry.images/1.png)\n\n", "",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look\"},"
		"{\"type\":\"image\",\"data\":\"R0lGODlhAQABAAAAACw=\",\"mimeType\":\"image/gif\"}],\"timestamp\":1}}");
	/* moved with their links: reordered */
	edit_ok(img, both, swapped,
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look\"},"
		"{\"type\":\"image\",\"data\":\"R0lGODlhAQABAAAAACw=\",\"mimeType\":\"image/gif\"},"
		"{\"type\":\"image\",\"data\":\"AAAAAA==\",\"mimeType\":\"image/png\"}],\"timestamp\":1}}");
	/* a text may hold the link of an image that is still shown */
	edit_ok(img, "look\n", "look\n![image 1](entry.images/1.png)\n",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
		"\"look\\n![image 1](entry.images/1.png)\"},{\"type\":\"image\",\"data\":\"AAAAAA==\",\"mimeType\":"
		"\"image/png\"},{\"type\":\"image\",\"data\":\"R0lGODlhAQABAAAAACw=\",\"mimeType\":\"image/gif\"}],"
		"\"timestamp\":1}}");
	/* a changed mimeType is the marker's (the link keeps the file's name) */
	edit_ok(img, "mimeType=\"image/gif\"", "mimeType=\"image/webp\"",
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look\"},"
		"{\"type\":\"image\",\"data\":\"AAAAAA==\",\"mimeType\":\"image/png\"},{\"type\":\"image\","
		"\"data\":\"R0lGODlhAQABAAAAACw=\",\"mimeType\":\"image/webp\"}],\"timestamp\":1}}");
	/* extra blank lines after the link are fine */
	edit_ok(img, "1.png)\n", "1.png)\n\n\n", "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":["
		"{\"type\":\"text\",\"text\":\"look\"},{\"type\":\"image\",\"data\":\"AAAAAA==\",\"mimeType\":\"image/png\"},"
		"{\"type\":\"image\",\"data\":\"R0lGODlhAQABAAAAACw=\",\"mimeType\":\"image/gif\"}],\"timestamp\":1}}");
}
END_TEST

/* The links are relative to the entry file's name: the parser must be
 * given the name the file was rendered with, and refuses another's. */
START_TEST(test_edit_images_named)
{
	static const char name[] = "0004-toolResult-read.a%2Fb.md";
	json_t *orig = load("{\"type\":\"message\",\"id\":\"a/b\",\"message\":{\"role\":\"toolResult\",\"toolName\":\"read\","
			    "\"content\":[{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"}]}}");
	size_t len;
	char *md = render_entry(orig, name, &len);
	json_t *got = NULL, *want = expected_of(orig);
	char why[512] = "";
	ck_assert_ptr_nonnull(md);
	ck_assert_ptr_nonnull(strstr(md, "\n![image 1](0004-toolResult-read.a%252Fb.images/1.png)\n"));
	ck_assert_int_eq(parse_entry_md_at(md, len, orig, name, NOW, &got, why, sizeof why), PS_OK);
	assert_equal(got, want, "named round trip");
	json_decref(got);
	got = NULL;
	expect_refused_named(md, orig, "0005-toolResult-read.a%2Fb.md",
			     "line 9: \"![image 1](0004-toolResult-read.a%252Fb.images/1.png)\" is not the link of one of "
			     "this entry's images (image 1 is ![image 1](0005-toolResult-read.a%252Fb.images/1.png)); "
			     "images cannot be added through the Markdown file; append a .json entry instead");
	/* a text line equal to its own image's link is kept when the image is
	 * shown too (the lost-link rule never refuses an unedited file) */
	json_t *odd = load("{\"type\":\"custom_message\",\"content\":[{\"type\":\"text\",\"text\":"
			   "\"![image 1](entry.images/1.png)\"},{\"type\":\"image\",\"data\":\"AAAA\"}]}");
	roundtrip(odd, "a text that is its image's link");
	json_decref(odd);
	json_decref(want);
	json_decref(orig);
	free(md);
}
END_TEST

/* ---- malformed input ------------------------------------------------- */

START_TEST(test_bad_bytes)
{
	expect_refused_n("---\ntype: x\ncontent: string\n---\nok\nbad \xff byte\n", 41, NULL,
			 "line 6: invalid UTF-8 (byte 0xff): an entry holds text only");
	expect_refused_n("hi \xc0\xaf", 5, NULL, "line 1: invalid UTF-8 (byte 0xc0): an entry holds text only");
	expect_refused_n("\xed\xa0\x80", 3, NULL, "line 1: invalid UTF-8 (byte 0xed): an entry holds text only");
	expect_refused_n("\xf4\x90\x80\x80", 4, NULL, "line 1: invalid UTF-8 (byte 0xf4): an entry holds text only");
	expect_refused_n("ab\ncd\xe2\x82", 7, NULL, "line 2: invalid UTF-8 (byte 0xe2): an entry holds text only");
	/* NUL: a raw one in JSON is refused, in a text or bare value kept */
	expect_refused_n("---\ntype: x\nv: \"a\0\"\n---\n", 23, NULL,
			 "line 3: bad JSON value: control character 0x0 near '\"a'");
	json_t *got = NULL;
	char why[200];
	ck_assert_int_eq(parse_entry_md_at("---\ntype: x\nv: a\0b\n---\n", 22, NULL, NULL, NOW, &got, why, sizeof why), PS_OK);
	ck_assert_uint_eq(json_string_length(json_object_get(got, "v")), 3);
	json_decref(got);
	/* 10000 levels of nesting: refused by jansson's depth limit, no crash */
	size_t depth = 10000, n = 0;
	char *deep = malloc(2 * depth + 64);
	ck_assert_ptr_nonnull(deep);
	n += (size_t)sprintf(deep, "---\ntype: x\nv: ");
	memset(deep + n, '[', depth);
	n += depth;
	memset(deep + n, ']', depth);
	n += depth;
	memcpy(deep + n, "\n---\n", 5);
	n += 5;
	ck_assert_int_eq(parse_entry_md_at(deep, n, NULL, NULL, NOW, &got, why, sizeof why), PS_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(why, "line 3: bad JSON value: maximum parsing depth reached"));
	free(deep);
}
END_TEST

/* Every truncation and many one-byte changes of real files: refused or
 * parsed, never a crash (the ASan and valgrind runs watch this test). */
START_TEST(test_no_crash)
{
	static const char *const files[] = {
		"unknown-blocks-and-keys", "marker-lookalike", "system-sections", "user-image",
		"compaction-system-message", "toolresult",
	};
	static const char subst[] = { '\n', '\0', '"', '<', '\\', ' ', '{', (char)0xff, '-', ':' };
	char why[128];
	size_t parses = 0, ok = 0;

	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		size_t len;
		char path[256];
		snprintf(path, sizeof path, "tests/golden/render/%s/expected.md", files[f]);
		char *text = helper_slurp(path, &len);
		snprintf(path, sizeof path, "tests/golden/render/%s/input.json", files[f]);
		json_error_t jerr;
		json_t *orig = json_load_file(path, JSON_ALLOW_NUL, &jerr); /* the entry it shows */
		ck_assert_msg(orig != NULL, "%s: %s", path, jerr.text);
		char *copy = malloc(len);
		ck_assert_ptr_nonnull(copy);
		for (size_t cut = 0; cut <= len; cut++) {
			for (int with = 0; with < 2; with++) {
				json_t *got = NULL;
				ps_err err = parse_entry_md_at(text, cut, with ? orig : NULL, NULL, NOW, &got, why, sizeof why);
				ck_assert(err == PS_OK || err == PS_ERR_INVALID);
				ck_assert((err == PS_OK) == (got != NULL));
				ok += err == PS_OK;
				parses++;
				json_decref(got);
			}
		}
		for (size_t at = 0; at < len; at++) {
			for (size_t s = 0; s < sizeof subst; s++) {
				json_t *got = NULL;
				memcpy(copy, text, len);
				copy[at] = subst[s];
				ps_err err = parse_entry_md_at(copy, len, orig, NULL, NOW, &got, why, sizeof why);
				ck_assert(err == PS_OK || err == PS_ERR_INVALID);
				ok += err == PS_OK;
				parses++;
				json_decref(got);
			}
		}
		free(copy);
		free(text);
		json_decref(orig);
	}
	ck_assert_uint_gt(ok, 0);
	ck_assert_uint_gt(parses, ok);
}
END_TEST

START_TEST(test_why_buffer)
{
	json_t *got = NULL;
	char why[8];
	/* truncated but terminated */
	memset(why, 'x', sizeof why);
	ck_assert_int_eq(parse_entry_md_at("---\n", 4, NULL, NULL, NOW, &got, why, sizeof why), PS_ERR_INVALID);
	ck_assert_str_eq(why, "line 1:");
	ck_assert_int_eq(parse_entry_md_at("---\n", 4, NULL, NULL, NOW, &got, why, 1), PS_ERR_INVALID);
	ck_assert_str_eq(why, "");
	ck_assert_int_eq(parse_entry_md_at("---\n", 4, NULL, NULL, NOW, &got, NULL, 0), PS_ERR_INVALID);
	ck_assert_int_eq(parse_entry_md_at(NULL, 0, NULL, NULL, NOW, &got, NULL, 0), PS_ERR_INVALID);
	ck_assert_int_eq(parse_entry_md_at(NULL, 3, NULL, NULL, NOW, &got, NULL, 0), PS_ERR_INVALID);
	ck_assert_int_eq(parse_entry_md_at("x", 1, NULL, NULL, NOW, NULL, NULL, 0), PS_ERR_INVALID);
}
END_TEST

/* 100 MB: a plain new file and an edited text, no quadratic step. */
START_TEST(test_huge)
{
	size_t n = 100u << 20;
	static const char head[] = "---\ntype: custom_message\ncontent: string\n---\n";
	char *big = malloc(sizeof head - 1 + n + 1);
	char why[256];
	json_t *got = NULL;
	ck_assert_ptr_nonnull(big);
	memcpy(big, head, sizeof head - 1);
	char *text = big + sizeof head - 1;
	for (size_t i = 0; i < n; i++)
		text[i] = (i % 80 == 79) ? '\n' : (char)('a' + i % 26);
	text[n] = '\n';

	ck_assert_int_eq(parse_entry_md_at(text, n, NULL, NULL, NOW, &got, why, sizeof why), PS_OK);
	const json_t *c = json_object_get(json_object_get(got, "message"), "content");
	/* the file less its final newline */
	ck_assert_uint_eq(json_string_length(c), text[n - 1] == '\n' ? n - 1 : n);
	json_decref(got);

	ck_assert_int_eq(parse_entry_md_at(big, sizeof head - 1 + n + 1, NULL, NULL, NOW, &got, why, sizeof why), PS_OK);
	c = json_object_get(got, "content");
	ck_assert_uint_eq(json_string_length(c), n);
	ck_assert(memcmp(json_string_value(c), text, n) == 0);
	json_decref(got);
	free(big);
}
END_TEST

Suite *parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("parse");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_roundtrip_golden);
	tcase_add_test(tc, test_roundtrip_fixtures);
	tcase_add_test(tc, test_roundtrip_corners);
	tcase_add_test(tc, test_roundtrip_tags_and_depth);
	tcase_add_test(tc, test_newlines);
	tcase_add_test(tc, test_is_front_matter);
	tcase_add_test(tc, test_new_plain);
	tcase_add_test(tc, test_new_front_matter);
	tcase_add_test(tc, test_edit_identity);
	tcase_add_test(tc, test_edit_allowed);
	tcase_add_test(tc, test_rewrite);
	tcase_add_test(tc, test_edit_images);
	tcase_add_test(tc, test_edit_images_named);
	tcase_add_test(tc, test_bad_bytes);
	tcase_add_test(tc, test_no_crash);
	tcase_add_test(tc, test_why_buffer);
	tcase_add_test(tc, test_huge);
	suite_add_tcase(s, tc);
	return s;
}
