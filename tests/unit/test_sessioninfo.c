/* sessioninfo.c: pi's SessionInfo of a file, and the same info reached by
 * extending an old one as the file grows (append-only stores). */
#include <math.h>
#include <string.h>
#include "helpers.h"
#include "infohelpers.h"
#include "sessioninfo.h"
#include "session.h"
#include "suites.h"

#define HEADER "{\"type\":\"session\",\"version\":3,\"id\":\"S1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n"
#define USER(id, text, ts) "{\"type\":\"message\",\"id\":\"" id "\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\"," \
	"\"message\":{\"role\":\"user\",\"content\":\"" text "\",\"timestamp\":" #ts "}}\n"

static struct sessioninfo *load(const char *path)
{
	struct sessioninfo *info;
	ck_assert_int_eq(sessioninfo_load(path, &info), PS_OK);
	return info;
}

START_TEST(test_fields)
{
	char *path = helper_write(HEADER USER("a1", "Hello ΟΔΟΣ", 1767225601000)
		"{\"type\":\"message\",\"id\":\"a2\",\"parentId\":\"a1\",\"timestamp\":\"2026-01-01T00:00:02.000Z\","
		"\"message\":{\"role\":\"toolResult\",\"toolName\":\"bash\",\"content\":[{\"type\":\"text\",\"text\":\"SECRET\"}]}}\n"
		"{\"type\":\"message\",\"id\":\"a3\",\"parentId\":\"a2\",\"timestamp\":\"2026-01-01T00:00:03.000Z\","
		"\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"one\"},{\"type\":\"thinking\",\"thinking\":\"no\"},"
		"{\"type\":\"text\",\"text\":42}],\"timestamp\":1767225603000}}\n"
		"{\"type\":\"session_info\",\"id\":\"a4\",\"parentId\":\"a3\",\"timestamp\":\"2026-01-01T00:00:04.000Z\",\"name\":\"  My name \\u3000\"}\n");
	struct sessioninfo *info = load(path);
	size_t n;
	ck_assert_int_eq(info->is_session, 1);
	ck_assert_str_eq(info->id, "S1");
	ck_assert_str_eq(info->cwd, "/w");
	ck_assert_str_eq(info->name, "My name");
	ck_assert_uint_eq(info->message_count, 3); /* the tool result counts, its text does not */
	ck_assert_double_eq(info->modified_ms, 1767225603000.0);
	ck_assert_str_eq(info->text.data, "Hello ΟΔΟΣ one 42");
	ck_assert_str_eq(info->lower.data, "hello οδος one 42");
	ck_assert_int_eq(memcmp(sessioninfo_first_message(info, &n), "Hello ΟΔΟΣ", strlen("Hello ΟΔΟΣ")), 0);
	ck_assert_uint_eq(n, strlen("Hello ΟΔΟΣ"));
	ck_assert_uint_gt(sessioninfo_bytes(info), info->text.len + info->lower.len);
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_not_sessions)
{
	/* pi's reader: the first JSON value must be the header; a message
	 * without its message, or a name that is no string, makes it throw. */
	const char *cases[] = {
		"",
		"{\"type\":\"message\"}\n" HEADER,
		"42\n" HEADER,
		HEADER "{\"type\":\"message\",\"id\":\"x\"}\n",
		HEADER "{\"type\":\"session_info\",\"name\":5}\n",
		HEADER USER("a", "x", 1) "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":null}}\n",
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *path = helper_write(cases[i]);
		struct sessioninfo *info = load(path);
		ck_assert_msg(!info->is_session, "case %zu", i);
		sessioninfo_free(info);
		unlink(path);
		free(path);
	}
	/* Blank, bad and falsy lines before the header are skipped. */
	char *path = helper_write("\n  \n{bad\nnull\n0\n\"\"\n" HEADER);
	struct sessioninfo *info = load(path);
	ck_assert_int_eq(info->is_session, 1);
	ck_assert_str_eq(sessioninfo_first_message(info, &(size_t){ 0 }), "(no messages)");
	ck_assert_double_eq(info->modified_ms, 1767225600000.0); /* the header's time */
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_name_cleared)
{
	char *path = helper_write(HEADER "{\"type\":\"session_info\",\"name\":\"first\"}\n"
					 "{\"type\":\"session_info\",\"name\":\"  \"}\n");
	struct sessioninfo *info = load(path);
	ck_assert_ptr_null(info->name);
	helper_append(path, "{\"type\":\"session_info\",\"name\":\"again\"}\n");
	ck_assert_int_eq(sessioninfo_refresh(info, NULL), PS_OK);
	ck_assert_str_eq(info->name, "again");
	helper_append(path, "{\"type\":\"session_info\",\"name\":null}\n");
	ck_assert_int_eq(sessioninfo_refresh(info, NULL), PS_OK);
	ck_assert_ptr_null(info->name);
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_line_ends)
{
	/* readline: \r\n and a lone \r end lines too; a last line without a
	 * line break counts. */
	char *path = helper_write("{\"type\":\"session\",\"id\":\"S\",\"timestamp\":\"2026-01-01T00:00:00.000Z\"}\r\n"
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\",\"timestamp\":5}}\r"
		"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"b\",\"timestamp\":7}}");
	struct sessioninfo *info = load(path);
	ck_assert_int_eq(info->is_session, 1);
	ck_assert_str_eq(info->text.data, "a b");
	ck_assert_double_eq(info->modified_ms, 7.0);
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

/* After every step of appends (whole lines, half lines, a line finished
 * later, CR LF split across two appends), the extended info equals a fresh
 * one. */
START_TEST(test_incremental)
{
	const char *steps[] = {
		USER("a1", "first ONE", 100),
		"{\"type\":\"message\",\"id\":\"a2\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"ΣΟΦΙΑ\"}],\"timestamp\":300}}",
		"\n",
		"{\"type\":\"session_info\",\"name\":\"Named",
		"\"}\r",
		"\n" USER("a3", "third", 200),
		"{\"type\":\"message\",\"id\":\"a4\",\"message\":{\"role\":\"user\",\"content\":\"half",
		" done\",\"timestamp\":400}}\n",
	};
	char *path = helper_write(HEADER);
	struct sessioninfo *info = load(path);
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		helper_append(path, steps[i]);
		int changed;
		ck_assert_int_eq(sessioninfo_refresh(info, &changed), PS_OK);
		ck_assert_int_eq(changed, 1);
		struct sessioninfo *fresh = load(path);
		helper_assert_same_info(info, fresh);
		sessioninfo_free(fresh);
		ck_assert_int_eq(sessioninfo_refresh(info, &changed), PS_OK);
		ck_assert_int_eq(changed, 0); /* nothing new: nothing read */
	}
	ck_assert_str_eq(info->text.data, "first ONE ΣΟΦΙΑ third half done");
	ck_assert_str_eq(info->name, "Named");
	ck_assert_double_eq(info->modified_ms, 400.0);
	/* A rewrite (not an append) is read whole. */
	helper_rewrite(path, HEADER USER("b1", "replaced text here", 50));
	ck_assert_int_eq(sessioninfo_refresh(info, NULL), PS_OK);
	struct sessioninfo *fresh = load(path);
	helper_assert_same_info(info, fresh);
	ck_assert_str_eq(info->text.data, "replaced text here");
	sessioninfo_free(fresh);
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

/* The fast path (user and assistant messages read from the scanner's spans)
 * against the jansson path, line by line: equal infos, and the fast path
 * taken (1) or declined (0) where expected. */
#define FAST_MSG(role, rest) "{\"type\":\"message\",\"timestamp\":\"2026-01-01T00:00:05Z\",\"message\":{\"role\":\"" role "\"," rest "}}"
static const struct { const char *line; int fast; } fast_cases[] = {
	{ FAST_MSG("user", "\"content\":\"plain\""), 1 },
	{ FAST_MSG("user", "\"content\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude00 \\u0000 z\""), 1 },
	{ FAST_MSG("user", "\"content\":\"lone \\ud800 \\udc00 \\ud800\\ud800\\udc00 \\udbff\\u0041 end\\ud83d\""), 1 },
	{ FAST_MSG("assistant", "\"content\":[{\"type\":\"text\",\"text\":\"one\"},{\"type\":\"thinking\",\"thinking\":\"t\\\"}]\"},"
			   "{\"type\":\"toolCall\",\"arguments\":{\"a\":[1,{\"b\":\"]}\"},[]],\"c\":-1.5e-7}},{\"type\":\"text\",\"text\":\"two\"}],"
			   "\"timestamp\":1767225600123"), 1 },
	{ FAST_MSG("user", "\"content\":[1,\"s\",true,[{\"type\":\"text\",\"text\":\"nested\"}],{},{\"type\":\"image\",\"data\":\"AA\"},"
		      "{\"type\":\"text\",\"text\":\"kept\"}]"), 1 },
	{ FAST_MSG("user", "\"content\":[{\"type\":\"text\",\"text\":\"\"},{\"type\":\"text\"},{\"type\":\"text\",\"text\":null},{\"text\":\"x\"}]"), 1 },
	{ FAST_MSG("user", "\"content\":[]"), 1 },
	{ FAST_MSG("user", "\"content\":\"\""), 1 },
	{ FAST_MSG("user", "\"content\":\"first\",\"content\":[{\"type\":\"text\",\"text\":\"2\",\"text\":\"3\",\"type\":\"text\"}]"), 1 },
	{ FAST_MSG("user", "\"content\":\"ts\",\"timestamp\":-0"), 1 },
	{ FAST_MSG("user", "\"content\":\"ts\",\"timestamp\":123456789012345678901234567890"), 1 },
	{ FAST_MSG("user", "\"content\":\"ts\",\"timestamp\":\"2026-01-01T00:00:09Z\""), 1 },
	{ FAST_MSG("user", "\"content\":\"\\u0130STANBUL \\u03a3\\u039f\\u03a3 \xc3\x89T\xc3\x89 \xce\xa3\""), 1 },
	{ " { \"type\" : \"message\" , \"message\" : { \"role\" : \"user\" , \"content\" : [ { \"type\" : \"text\" , "
	  "\"text\" : \"spaced\" } , 7 ] , \"timestamp\" : 5 } } ", 1 },
	{ "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"no entry time\"}}", 1 },
	{ "{\"type\":\"message\",\"timestamp\":null,\"message\":{\"role\":\"user\",\"content\":\"null time\"}}", 1 },
	{ "{\"type\":\"message\",\"message\":{\"role\":\"user\"}}", 1 },
	/* Declined: the jansson path decides. */
	{ FAST_MSG("assistant", "\"content\":[{\"type\":\"text\",\"text\":5},{\"type\":\"text\",\"text\":[1,null,[2]]},{\"type\":\"text\",\"text\":{}}]"), 0 },
	{ FAST_MSG("user", "\"content\":[{\"type\":\"text\",\"text\":-0.0},{\"type\":\"text\",\"text\":1e21},{\"type\":\"text\",\"text\":false}]"), 0 },
	{ FAST_MSG("user", "\"content\":[null,{\"type\":\"text\",\"text\":\"x\"}]"), 0 },
	{ FAST_MSG("user", "\"content\":null"), 0 },
	{ FAST_MSG("user", "\"content\":{\"type\":\"text\",\"text\":\"obj\"}"), 0 },
	{ FAST_MSG("user", "\"content\":42"), 0 },
	{ FAST_MSG("user", "\"content\":[{\"t\\u0065xt\":\"esc key\",\"type\":\"text\"}]"), 0 },
	{ FAST_MSG("user", "\"content\":[{\"type\":\"t\\u0065xt\",\"text\":\"esc type\"}]"), 0 },
	{ FAST_MSG("user", "\"c\\u006fntent\":\"esc\",\"content\":\"plain\""), 0 },
	{ FAST_MSG("us\\u0065r", "\"content\":\"escaped role\""), 0 },
	{ FAST_MSG("user", "\"content\":\"x\",\"usage\":{\"big\":1E+309}"), 0 },
	{ FAST_MSG("user", "\"content\":\"x\",\"args\":{\"k\\u0000\":1}"), 0 },
	{ FAST_MSG("user", "\"content\":\"bad \xff\xc3 utf8\""), 0 },
	{ "{\"type\":\"message\",\"timestamp\":\"2026-01-0\\u0031T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"esc time\"}}", 0 },
	{ "{\"type\":\"message\",\"timestamp\":1767225600000,\"message\":{\"role\":\"user\",\"content\":\"num entry time\"}}", 0 },
	{ "{\"type\":\"message\",\"timestamp\":true,\"message\":{\"role\":\"user\",\"content\":\"x\"}}", 0 },
};

static void assert_fast_same(const char *body, size_t len, int want_fast, const char *what)
{
	(void)len; /* no NUL in the bodies */
	char *path = helper_write(body);
	struct sessioninfo *fast, *ref;
	ck_assert_int_eq(sessioninfo_load(path, &fast), PS_OK);
	ck_assert_int_eq(sessioninfo_load_jansson(path, &ref), PS_OK);
	ck_assert_msg(ref->fast_messages == 0, "%s", what);
	if (want_fast >= 0)
		ck_assert_msg((fast->fast_messages > 0) == want_fast, "fast path %s: %s",
			      want_fast ? "declined" : "taken", what);
	helper_assert_same_info(fast, ref);
	ck_assert_int_eq(isnan(fast->created_ms), isnan(ref->created_ms));
	/* sessions.md's reading, without the search text, lists the same. */
	struct sessioninfo *listing;
	ck_assert_int_eq(sessioninfo_load_listing(path, &listing), PS_OK);
	helper_assert_same_listing(listing, ref);
	ck_assert_uint_le(listing->text.len, ref->text.len);
	ck_assert_uint_eq(listing->lower.len, 0);
	sessioninfo_free(listing);
	sessioninfo_free(fast);
	sessioninfo_free(ref);
	unlink(path);
	free(path);
}

START_TEST(test_fast_path)
{
	struct buf all = BUF_INIT;
	ck_assert_int_eq(buf_puts(&all, HEADER), 0);
	for (size_t i = 0; i < sizeof fast_cases / sizeof *fast_cases; i++) {
		struct buf b = BUF_INIT;
		ck_assert_int_eq(buf_printf(&b, HEADER "%s\n", fast_cases[i].line), 0);
		assert_fast_same(b.data, b.len, fast_cases[i].fast, fast_cases[i].line);
		/* CRLF: the line ends before the \r. */
		b.len = 0;
		ck_assert_int_eq(buf_printf(&b, HEADER "%s\r\n%s\r\n", fast_cases[i].line, fast_cases[i].line), 0);
		assert_fast_same(b.data, b.len, fast_cases[i].fast, fast_cases[i].line);
		buf_free(&b);
		ck_assert_int_eq(buf_printf(&all, "%s\n", fast_cases[i].line), 0);
	}
	/* All in one file: the joins, firstMessage and the latest time. */
	assert_fast_same(all.data, all.len, -1, "all cases");
	buf_free(&all);
}
END_TEST

START_TEST(test_fast_path_huge_line)
{
	/* A 6 MB line: text with escapes and a multi-byte character across
	 * every boundary of the reader's 1 MiB chunks, and a tool call as big. */
	struct buf b = BUF_INIT;
	ck_assert_int_eq(buf_puts(&b, HEADER "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":["
				      "{\"type\":\"toolCall\",\"arguments\":{\"x\":\""), 0);
	for (int i = 0; i < 300000; i++)
		ck_assert_int_eq(buf_puts(&b, "\\\"}]{[\\n"), 0);
	ck_assert_int_eq(buf_puts(&b, "\"}},{\"type\":\"text\",\"text\":\""), 0);
	for (int i = 0; i < 300000; i++)
		ck_assert_int_eq(buf_puts(&b, i % 3 ? "Ab\xce\xa3\\u00C9\\n" : "\\ud83d\\ude00Z"), 0);
	ck_assert_int_eq(buf_puts(&b, "\"}]}}\n"), 0);
	ck_assert_int_eq(buf_finish(&b), 0); /* helper_write takes a C string */
	assert_fast_same(b.data, b.len, 1, "huge line");
	buf_free(&b);
}
END_TEST

/* --- the listing read from the index's lines (session_open_observed) ---------- */

static ps_err observed_line(void *ctx, const char *line, size_t len, const struct scan_result *r)
{
	return sessioninfo_listing_line(ctx, line, len, r);
}

/* The listing built from the lines the index read equals
 * sessioninfo_load_listing's, unless the index says its lines are not
 * pi's (a \r, a last line without \n), which must be so then.  Returns
 * whether it was compared. */
static int assert_observed_same(const char *path, const char *what)
{
	struct sessioninfo *want, *got;
	struct ps_session *s;
	ck_assert_int_eq(sessioninfo_load_listing(path, &want), PS_OK);
	ck_assert_int_eq(sessioninfo_listing_new(&got), PS_OK);
	struct session_observer obs = { observed_line, got, 0 };
	ck_assert_int_eq(session_open_observed(path, &obs, &s), PS_OK);
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	int c, last = '\n', has_cr = 0;
	while ((c = getc(f)) != EOF) {
		has_cr |= c == '\r';
		last = c;
	}
	fclose(f);
	ck_assert_msg(obs.unusable == (has_cr || last != '\n'), "%s: unusable %d, \\r %d, last line ends %d", what,
		      obs.unusable, has_cr, last == '\n');
	if (!obs.unusable) {
		ck_assert_int_eq(sessioninfo_listing_end(got, s->path, s->dev, s->ino, s->size, s->mtime_ns), PS_OK);
		helper_assert_same_listing(got, want);
		ck_assert_int_eq(got->size, want->size);
		ck_assert_int_eq(got->mtime_ns, want->mtime_ns);
	}
	session_free(s);
	sessioninfo_free(got);
	sessioninfo_free(want);
	return !obs.unusable;
}

static int assert_observed_text(const char *text, const char *what)
{
	char *path = helper_write(text);
	int compared = assert_observed_same(path, what);
	unlink(path);
	free(path);
	return compared;
}

START_TEST(test_listing_observed)
{
	static const char *const files[] = {
		"tests/data/fixtures/pi-1.6.0-v3-branched.jsonl",
		"tests/data/fixtures/pi-v1-before-compaction.jsonl",
		"tests/data/fixtures/pi-v1-large-session.jsonl",
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		ck_assert(assert_observed_same(files[i], files[i]));
	static const char *const texts[] = {
		"",
		"{\"type\":\"message\"}\n" HEADER,
		"42\n" HEADER,
		"\n  \n{bad\nnull\n0\n\"\"\n" HEADER USER("a", "first", 3),
		HEADER "{\"type\":\"message\",\"id\":\"x\"}\n" USER("a", "x", 1),
		HEADER "{\"type\":\"session_info\",\"name\":5}\n",
		HEADER USER("a", "x", 1) "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":null}}\n",
		HEADER "{\"type\":\"session_info\",\"name\":\"first\"}\n{\"type\":\"session_info\",\"name\":\"  \"}\n",
		HEADER "{\"type\":\"session_info\",\"n\\u0061me\":\" esc \"}\n" USER("a", "hi", 2) "{\"ty\\u0070e\":\"message\","
		"\"message\":{\"role\":\"assistant\",\"content\":\"later\",\"timestamp\":9}}\n",
		/* pi's reader splits where the index does not: the listing is read apart */
		HEADER USER("a", "x", 1) "\r\n",
		HEADER "{\"type\":\"message\",\r\"message\":{\"role\":\"user\",\"content\":\"cr\"}}\n" USER("a", "x", 1),
		HEADER USER("a", "x", 1) "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"cut\"}}",
	};
	int compared = 0;
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		compared += assert_observed_text(texts[i], texts[i]);
	ck_assert_int_eq(compared, (int)(sizeof texts / sizeof texts[0]) - 3);
	/* Every line of the fast path's cases, alone and all in one file. */
	struct buf all = BUF_INIT;
	ck_assert_int_eq(buf_puts(&all, HEADER), 0);
	for (size_t i = 0; i < sizeof fast_cases / sizeof *fast_cases; i++) {
		struct buf b = BUF_INIT;
		ck_assert_int_eq(buf_printf(&b, HEADER "%s\n", fast_cases[i].line), 0);
		ck_assert(assert_observed_text(b.data, fast_cases[i].line));
		buf_free(&b);
		ck_assert_int_eq(buf_printf(&all, "%s\n", fast_cases[i].line), 0);
	}
	ck_assert(assert_observed_text(all.data, "all cases"));
	buf_free(&all);
}
END_TEST

/* A listing reads the messages it keeps no text of by their shape alone:
 * their bytes (invalid UTF-8 above all) change nothing pi lists. */
START_TEST(test_listing_ignores_text_bytes)
{
	static const char *const texts[] = {
		HEADER USER("a", "first", 1) USER("b", "bad \xff byte", 9),
		HEADER USER("a", "first", 1) "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":"
		"[{\"type\":\"text\",\"text\":\"x\xc3\"},{\"type\":\"text\",\"text\":\"\\ud800\"}],\"timestamp\":12}}\n",
		HEADER USER("a", "\xfe first", 1) USER("b", "second", 5),
		HEADER USER("a", "first", 1) "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[null],\"timestamp\":3}}\n",
	};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		char *path = helper_write(texts[i]);
		struct sessioninfo *listing, *ref;
		ck_assert_int_eq(sessioninfo_load_listing(path, &listing), PS_OK);
		ck_assert_int_eq(sessioninfo_load_jansson(path, &ref), PS_OK);
		helper_assert_same_listing(listing, ref);
		sessioninfo_free(listing);
		sessioninfo_free(ref);
		unlink(path);
		free(path);
	}
}
END_TEST

START_TEST(test_sort_stable)
{
	struct sessioninfo a = { .modified_ms = 5 }, b = { .modified_ms = 9 }, c = { .modified_ms = 5 }, d = { .modified_ms = 7 };
	struct sessioninfo *v[] = { &a, &b, &c, &d };
	sessioninfo_sort(v, 4);
	ck_assert_ptr_eq(v[0], &b);
	ck_assert_ptr_eq(v[1], &d);
	ck_assert_ptr_eq(v[2], &a); /* ties keep the order given */
	ck_assert_ptr_eq(v[3], &c);
}
END_TEST

Suite *sessioninfo_suite(void)
{
	Suite *s = suite_create("sessioninfo");
	TCase *tc = tcase_create("core");
	/* Only to catch a hang: the random rounds are bounded by count, and
	 * take 10 s under ASan on a loaded machine (Check's default is 4). */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_not_sessions);
	tcase_add_test(tc, test_name_cleared);
	tcase_add_test(tc, test_line_ends);
	tcase_add_test(tc, test_incremental);
	tcase_add_test(tc, test_sort_stable);
	tcase_add_test(tc, test_fast_path);
	tcase_add_test(tc, test_fast_path_huge_line);
	tcase_add_test(tc, test_listing_observed);
	tcase_add_test(tc, test_listing_ignores_text_bytes);
	suite_add_tcase(s, tc);
	return s;
}
