/* usage_json() and the CSV rows: an exact expected summary of a hand-made
 * session holding every kind of usage (and things that look like usage but
 * are not), and, over the fixtures, totals equal to an independent sum
 * computed here from the raw lines with jansson. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glob.h>
#include <jansson.h>
#include "helpers.h"
#include "jsonout.h"
#include "suites.h"
#include "usage.h"

#define E(id, parent, ts, rest) \
	"{\"type\":" rest ",\"id\":\"" id "\",\"parentId\":" parent ",\"timestamp\":\"2026-01-0" ts "Z\"}\n"
#define U(in, out, cr, cw, tt, cost) \
	"{\"input\":" #in ",\"output\":" #out ",\"cacheRead\":" #cr ",\"cacheWrite\":" #cw ",\"totalTokens\":" #tt \
	",\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":" #cost "}}"

static const char usage_session[] =
	HDR
	E("a", "null", "1T00:00:01.000", "\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}")
	E("b", "\"a\"", "1T00:00:02.000", "\"message\",\"message\":{\"role\":\"assistant\",\"content\":[],"
	  "\"provider\":\"anthropic\",\"model\":\"claude-x\",\"usage\":" U(10, 5, 100, 20, 135, 0.1) ",\"stopReason\":\"stop\"}")
	E("c", "\"b\"", "1T00:00:03.000", "\"message\",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"t\","
	  "\"toolName\":\"agent\",\"content\":[],\"isError\":false,\"usage\":" U(1, 1, 0, 0, 2, 0.2) "}")
	E("d", "\"c\"", "1T00:00:04.000", "\"message\",\"message\":{\"role\":\"assistant\",\"content\":[],"
	  "\"provider\":\"openai\",\"model\":\"gpt-5\",\"responseModel\":\"gpt-5-2025\",\"usage\":" U(3, 2, 4, 0, 9, 0.3) "}")
	E("e", "\"d\"", "1T00:00:05.000", "\"compaction\",\"summary\":\"s\",\"firstKeptEntryId\":\"d\",\"tokensBefore\":9,"
	  "\"usage\":" U(1000, 50, 0, 0, 1050, 0.01))
	E("f", "\"a\"", "1T00:00:06.000", "\"branch_summary\",\"fromId\":\"e\",\"summary\":\"s\","
	  "\"usage\":{\"input\":200,\"output\":10,\"totalTokens\":210,\"cost\":{\"total\":0.02}}")
	/* The latest timestamp is not the last line's. */
	E("g", "\"f\"", "2T10:00:00.500", "\"usage\",\"kind\":\"cache_warm\",\"provider\":\"anthropic\",\"model\":\"claude-x\","
	  "\"usage\":" U(5000, 1, 0, 5000, 10001, 0.033765))
	E("h", "\"g\"", "1T00:00:08.000", "\"custom\",\"customType\":\"x\",\"data\":{},\"usage\":" U(999, 999, 999, 999, 999, 9))
	E("i", "\"h\"", "1T00:00:09.000", "\"message\",\"message\":{\"role\":\"custom\",\"customType\":\"x\",\"content\":\"c\","
	  "\"display\":true,\"usage\":" U(999, 999, 999, 999, 999, 9) "}")
	E("j", "\"i\"", "1T00:00:09.000", "\"message\",\"message\":{\"role\":\"assistant\",\"content\":[],"
	  "\"provider\":\"anthropic\",\"model\":\"claude-x\",\"stopReason\":\"aborted\"}")
	E("k", "\"j\"", "1T00:00:09.000", "\"message\",\"message\":{\"role\":\"assistant\",\"content\":[],"
	  "\"provider\":\"google\",\"model\":\"gemini\",\"usage\":{\"input\":\"7\",\"cost\":{\"total\":\"x\"}}}")
	E("l", "\"k\"", "1T00:00:09.000", "\"message\",\"message\":{\"role\":\"bashExecution\",\"command\":\"ls\","
	  "\"output\":\"\",\"exitCode\":0,\"cancelled\":false,\"truncated\":false}")
	E("m", "\"l\"", "1T00:00:09.000", "\"model_change\",\"provider\":\"p\",\"modelId\":\"m\"")
	E("n", "\"m\"", "1T00:00:09.000", "\"session_info\",\"name\":\"  Fix \\\"auth\\\", now \"")
	E("o", "\"n\"", "1T00:00:09.000", "\"message\",\"message\":{\"role\":\"user\",\"content\":\"x\","
	  "\"usage\":" U(999, 999, 999, 999, 999, 9) "}");

static const char usage_expected[] =
	"{\n"
	"  \"total\": {\n"
	"    \"input\": 6214,\n"
	"    \"output\": 69,\n"
	"    \"cacheRead\": 104,\n"
	"    \"cacheWrite\": 5020,\n"
	"    \"totalTokens\": 11407,\n"
	"    \"cost\": 0.6637650000000002\n"
	"  },\n"
	"  \"byModel\": [\n"
	"    {\n"
	"      \"provider\": \"anthropic\",\n"
	"      \"model\": \"claude-x\",\n"
	"      \"input\": 5010,\n"
	"      \"output\": 6,\n"
	"      \"cacheRead\": 100,\n"
	"      \"cacheWrite\": 5020,\n"
	"      \"totalTokens\": 10136,\n"
	"      \"cost\": 0.13376500000000002\n"
	"    },\n"
	"    {\n"
	"      \"provider\": null,\n"
	"      \"model\": null,\n"
	"      \"input\": 1201,\n"
	"      \"output\": 61,\n"
	"      \"cacheRead\": 0,\n"
	"      \"cacheWrite\": 0,\n"
	"      \"totalTokens\": 1262,\n"
	"      \"cost\": 0.23\n"
	"    },\n"
	"    {\n"
	"      \"provider\": \"openai\",\n"
	"      \"model\": \"gpt-5-2025\",\n"
	"      \"input\": 3,\n"
	"      \"output\": 2,\n"
	"      \"cacheRead\": 4,\n"
	"      \"cacheWrite\": 0,\n"
	"      \"totalTokens\": 9,\n"
	"      \"cost\": 0.3\n"
	"    },\n"
	"    {\n"
	"      \"provider\": \"google\",\n"
	"      \"model\": \"gemini\",\n"
	"      \"input\": 0,\n"
	"      \"output\": 0,\n"
	"      \"cacheRead\": 0,\n"
	"      \"cacheWrite\": 0,\n"
	"      \"totalTokens\": 0,\n"
	"      \"cost\": 0\n"
	"    }\n"
	"  ],\n"
	"  \"messages\": 9,\n"
	"  \"assistantMessages\": 4\n"
	"}\n";

/* The index's fast path (usage_entry_fast: the usage members read alone)
 * against the parsed lines: the same file with an escaped key put in each
 * line after the header, which sends every line to the parser. */
static const char usage_tricky[] =
	/* duplicates: the last usage, provider, model and message win */
	E("k", "\"j\"", "3T00:00:01.000", "\"message\",\"message\":{\"role\":\"assistant\",\"usage\":" U(1, 1, 1, 1, 1, 1)
	  ",\"content\":[{\"type\":\"text\",\"text\":\"\\\"usage\\\":{\\\"input\\\":7}\"}],\"provider\":\"p1\",\"model\":\"m1\","
	  "\"usage\":" U(2, 2, 2, 2, 2, 2) ",\"provider\":\"p2\"}")
	E("l", "\"k\"", "3T00:00:02.000", "\"message\",\"message\":{\"role\":\"assistant\",\"model\":\"gone\",\"usage\":"
	  U(50, 0, 0, 0, 50, 5) "},\"message\":{\"role\":\"assistant\",\"content\":[],\"model\":\"m\\u00e9\",\"responseModel\":7,"
	  "\"usage\":" U(3, 0, 0, 0, 3, 0.5) "}")
	/* usage nested deeper is not the message's; usage that is no object is none */
	E("m", "\"l\"", "3T00:00:03.000", "\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\","
	  "\"arguments\":{\"usage\":" U(9, 9, 9, 9, 9, 9) "}}],\"usage\":[1,2]}")
	E("n", "\"m\"", "3T00:00:04.000", "\"message\",\"message\":{\"role\":\"toolResult\",\"toolName\":\"bash\",\"content\":[],"
	  "\"usage\":{\"input\":\"12\",\"output\":null,\"cost\":{\"total\":true},\"totalTokens\":1e3}}")
	/* a message that is no object, a role that is no string, top-level usage of a message */
	E("o", "\"n\"", "3T00:00:05.000", "\"message\",\"message\":\"text\",\"usage\":" U(8, 8, 8, 8, 8, 8))
	E("p", "\"o\"", "3T00:00:06.000", "\"message\",\"message\":{\"role\":5,\"usage\":" U(8, 8, 8, 8, 8, 8) "}")
	E("q", "\"p\"", "3T00:00:07.000", "\"usage\",\"usage\":" U(4, 4, 4, 4, 4, 0.25) ",\"model\":{\"x\":1},\"provider\":\"p3\","
	  "\"message\":{\"usage\":" U(8, 8, 8, 8, 8, 8) "}")
	E("r", "\"q\"", "3T00:00:08.000", "\"compaction\",\"summary\":\"" "0123456789012345678901234567890123456789"
	  "\",\"usage\":{\"input\":1,\"note\":\"" "a long member, so that the usage members exceed the small buffer "
	  "a long member, so that the usage members exceed the small buffer a long member, so that the usage "
	  "members exceed the small buffer a long member, so that the usage members exceed the small buffer "
	  "a long member, so that the usage members exceed the small buffer a long member, so that the usage "
	  "members exceed the small buffer a long member, so that the usage members exceed the small buffer\","
	  "\"cost\":{\"total\":0.125}},\"provider\":\"ignored\"")
	/* invalid UTF-8 in the usage members: the fast parser declines, the line decides */
	E("s", "\"r\"", "3T00:00:09.000", "\"message\",\"message\":{\"role\":\"assistant\",\"content\":[],\"model\":\"bad\xff\","
	  "\"usage\":" U(6, 0, 0, 0, 6, 0.75) "}")
	E("t", "\"s\"", "3T00:00:10.000", "\"assistant\",\"usage\":" U(8, 8, 8, 8, 8, 8));

static char *usage_parsed_variant(const char *text)
{
	size_t n = strlen(text);
	char *out = malloc(n * 2 + 1), *o = out;
	ck_assert_ptr_nonnull(out);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
		if (p != text && *p == '{') {
			memcpy(o, "{\"\\u0078\":0,", 12);
			o += 12;
			p++;
			len--;
		}
		memcpy(o, p, len);
		o += len;
		p += len;
	}
	*o = '\0';
	return out;
}

static char *usage_of_text(const char *text)
{
	char *path = helper_write(text), *buf;
	size_t len;
	struct ps_session *s = helper_open(path);
	ck_assert_int_eq(usage_json(s, &buf, &len), PS_OK);
	session_free(s);
	unlink(path);
	free(path);
	return buf;
}

START_TEST(test_usage_fast_path_as_parsed)
{
	size_t n = strlen(usage_session) + strlen(usage_tricky);
	char *text = malloc(n + 1);
	ck_assert_ptr_nonnull(text);
	strcpy(text, usage_session);
	strcat(text, usage_tricky);
	char *variant = usage_parsed_variant(text);
	char *fast = usage_of_text(text), *parsed = usage_of_text(variant);
	ck_assert_str_eq(fast, parsed);
	/* The index classed the plain lines for the fast path, and the
	 * variant's for the parser. */
	char *paths[2] = { helper_write(text), helper_write(variant) };
	for (int v = 0; v < 2; v++) {
		struct ps_session *s = helper_open(paths[v]);
		uint32_t b = session_find(s, "b", 1), h = session_find(s, "h", 1);
		ck_assert_uint_eq((s->entries[b].flags & PS_ENTRY_USAGE_MASK) >> PS_ENTRY_USAGE_SHIFT,
				  v ? PS_USAGE_UNKNOWN : PS_USAGE_ASSISTANT);
		ck_assert_uint_eq(s->entries[b].usage != PS_NIL, !v);
		ck_assert_uint_eq((s->entries[h].flags & PS_ENTRY_USAGE_MASK) >> PS_ENTRY_USAGE_SHIFT,
				  v ? PS_USAGE_UNKNOWN : PS_USAGE_NONE);
		session_free(s);
		unlink(paths[v]);
		free(paths[v]);
	}
	free(fast);
	free(parsed);
	free(variant);
	free(text);
}
END_TEST

START_TEST(test_usage_every_kind)
{
	char *path = helper_write(usage_session);
	struct ps_session *s = helper_open(path);
	char *buf;
	size_t len;
	ck_assert_int_eq(s->n_entries, 15);
	ck_assert_int_eq(usage_json(s, &buf, &len), PS_OK);
	ck_assert_uint_eq(len, strlen(buf));
	ck_assert_str_eq(buf, usage_expected);
	free(buf);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* The totals kept in the session continue over appended entries and come
 * out exactly as a pass over the whole file. */
START_TEST(test_usage_continues_after_append)
{
	const char *cut = strstr(usage_session, "\"id\":\"e\"");
	ck_assert_ptr_nonnull(cut);
	while (cut > usage_session && cut[-1] != '\n')
		cut--;
	char *first = strndup(usage_session, (size_t)(cut - usage_session));
	char *path = helper_write(first);
	struct ps_session *s = helper_open(path);
	char *buf;
	size_t len;
	ck_assert_int_eq(usage_json(s, &buf, &len), PS_OK);
	ck_assert_str_ne(buf, usage_expected);
	free(buf);
	helper_append(path, cut);
	ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
	ck_assert_int_eq(s->n_entries, 15);
	ck_assert_int_eq(usage_json(s, &buf, &len), PS_OK);
	ck_assert_str_eq(buf, usage_expected);
	free(buf);
	session_free(s);
	unlink(path);
	free(path);
	free(first);
}
END_TEST

START_TEST(test_usage_csv)
{
	char *path = helper_write(usage_session);
	struct ps_session *s = helper_open(path);
	struct buf b = BUF_INIT;
	ck_assert_int_eq(usage_csv_header(&b), PS_OK);
	ck_assert_int_eq(usage_csv_row(s, "--p--", "2026-01-01T00-00-00-000Z_sess-1", &b), PS_OK);
	ck_assert_int_eq(usage_csv_row(s, "odd,\"dir\"\nname", NULL, &b), PS_OK);
	ck_assert_int_eq(buf_finish(&b), 0);
	ck_assert_str_eq(b.data,
			 "project,session,id,name,cwd,start,lastActivity,messages,input,output,cacheRead,cacheWrite,cost\n"
			 "--p--,2026-01-01T00-00-00-000Z_sess-1,sess-1,\"Fix \"\"auth\"\", now\",/p,"
			 "2026-01-01T00:00:00.000Z,2026-01-02T10:00:00.500Z,9,6214,69,104,5020,0.66\n"
			 "\"odd,\"\"dir\"\"\nname\",,sess-1,\"Fix \"\"auth\"\", now\",/p,"
			 "2026-01-01T00:00:00.000Z,2026-01-02T10:00:00.500Z,9,6214,69,104,5020,0.66\n");
	buf_free(&b);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* usage.csv's cost in cents as ccusage prints costs (Intl.NumberFormat,
 * two fraction digits): the number as JavaScript writes it, rounded half
 * away from zero.  The expected texts are node's. */
START_TEST(test_usage_cost_cents)
{
	static const struct { double d; const char *text; } cases[] = {
		{ 30.330197699999985, "30.33" }, { 0, "0.00" }, { -0.0, "0.00" }, { 0.004, "0.00" },
		{ 0.005, "0.01" },
		{ 0.125, "0.13" },   /* a tie: away from zero, where %.2f rounds to even */
		{ 0.375, "0.38" }, { 1.005, "1.01" }, /* the double is 1.00499999999999989... */
		{ 9.995, "10.00" }, { 9.996, "10.00" }, { 1e-7, "0.00" }, { 0.0049999, "0.00" }, { 5e-3, "0.01" }, { 99.999, "100.00" }, { 0.6637650000000002, "0.66" },
		{ -0.125, "-0.13" }, { -0.001, "-0.00" }, { 1234567.891, "1234567.89" },
		{ 1e20, "100000000000000000000.00" }, { 0.994999, "0.99" }, { 0.995, "1.00" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[USAGE_COST_TEXT];
		usage_cost_text(cases[i].d, text);
		ck_assert_msg(strcmp(text, cases[i].text) == 0, "%.17g: got %s, want %s", cases[i].d, text, cases[i].text);
	}
}
END_TEST

/* A double of one of seven kinds, from the xorshift state x: any bits,
 * prices, token counts, thirds, costs of up to 10,000 dollars with 7
 * decimals, whole and half cents of both signs, and ties as written. */
#define TEST_DOUBLE_KINDS 7
static double test_double(uint64_t *x, int kind)
{
	double d;
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	switch (kind) {
	case 0: memcpy(&d, x, sizeof d); return d;
	case 1: return (double)(*x % 100000000) / 1e6;
	case 2: return (double)(*x % 10000000);
	case 3: return (double)(int64_t)*x / 3.0;
	case 4: return (double)(*x % 100000000000ULL) / 1e7;
	case 5: return (double)(*x % 2000000) / 1000.0 - 1000;
	default: return (double)(*x % 1000000) / 200.0 + 0.005;
	}
}

/* The cents of a cost away from a tie, read from d*100, are the cents of
 * JavaScript's digits of it: random costs of every size (any bits folded
 * below two million), and the cases around half a cent. */
START_TEST(test_usage_cost_quick_as_exact)
{
	uint64_t x = 0x243F6A8885A308D3ULL;
	for (int i = 0; i < 210000; i++) {
		double d = test_double(&x, i % TEST_DOUBLE_KINDS);
		if (!isfinite(d))
			continue;
		if (i % TEST_DOUBLE_KINDS == 0)
			d = fmod(fabs(d), 2e6) * (x & 1 ? -1 : 1);
		char quick[USAGE_COST_TEXT], exact[USAGE_COST_TEXT];
		usage_cost_text(d, quick);
		usage_cost_text_exact(d, exact);
		ck_assert_msg(strcmp(quick, exact) == 0, "%.17g: quick %s, exact %s", d, quick, exact);
	}
}
END_TEST

/* The fewest digits that read back, found by halving the precision, are
 * the fewest found by counting up from one digit (as before); integers,
 * written without printf's search, are their plain digits. */
START_TEST(test_usage_numbers_shortest)
{
	uint64_t x = 0x9E3779B97F4A7C15ULL;
	for (int i = 0; i < 140000; i++) {
		double d = test_double(&x, i % TEST_DOUBLE_KINDS);
		if (!isfinite(d))
			continue;
		char got[40], want[40];
		int prec;
		for (prec = 0; prec < 16; prec++) {
			snprintf(want, sizeof want, "%.*e", prec, d);
			if (strtod(want, NULL) == d)
				break;
		}
		snprintf(want, sizeof want, "%.*e", prec, d);
		jsonout_shortest_e(d, got);
		ck_assert_msg(strcmp(got, want) == 0, "%.17g: got %s, want %s", d, got, want);
	}
	static const struct { double d; const char *text; } ints[] = {
		{ 1, "1" }, { -1, "-1" }, { 6495, "6495" }, { 1e15, "1000000000000000" },
		{ 9007199254740991.0, "9007199254740991" }, { 9007199254740992.0, "9007199254740992" },
		{ -9007199254740993.0, "-9007199254740992" }, { 1e21, "1e+21" }, { 1.5, "1.5" }, { 0.1, "0.1" },
	};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		char text[32];
		jsonout_number(ints[i].d, text);
		ck_assert_msg(strcmp(text, ints[i].text) == 0, "%.17g: got %s, want %s", ints[i].d, text, ints[i].text);
	}
}
END_TEST

/* A session with nothing in it: zeros, an empty byModel, empty name and
 * last activity. */
START_TEST(test_usage_empty_session)
{
	char *path = helper_write(HDR);
	struct ps_session *s = helper_open(path);
	struct buf b = BUF_INIT;
	char *buf;
	size_t len;
	ck_assert_int_eq(usage_json(s, &buf, &len), PS_OK);
	ck_assert_str_eq(buf, "{\n  \"total\": {\n    \"input\": 0,\n    \"output\": 0,\n    \"cacheRead\": 0,\n"
			      "    \"cacheWrite\": 0,\n    \"totalTokens\": 0,\n    \"cost\": 0\n  },\n"
			      "  \"byModel\": [],\n  \"messages\": 0,\n  \"assistantMessages\": 0\n}\n");
	free(buf);
	ck_assert_int_eq(usage_csv_row(s, "p", "f", &b), PS_OK);
	ck_assert_int_eq(buf_finish(&b), 0);
	ck_assert_str_eq(b.data, "p,f,sess-1,,/p,2026-01-01T00:00:00.000Z,,0,0,0,0,0,0.00\n");
	buf_free(&b);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* An entry whose type is a message role's name is no message: the index
 * classes it by its type, as the parser would (kind alone, "user" either
 * way, cannot tell). */
START_TEST(test_usage_type_named_like_a_role)
{
	char *path = helper_write(HDR
		"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\","
		"\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n"
		"{\"type\":\"user\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"2026-01-01T00:00:02.000Z\"}\n"
		"{\"type\":\"system\",\"id\":\"c\",\"parentId\":\"b\",\"timestamp\":\"2026-01-01T00:00:03.000Z\"}\n");
	struct ps_session *s = helper_open(path);
	double cost;
	uint64_t messages;
	ck_assert_int_eq(usage_totals(s, &cost, &messages), PS_OK);
	ck_assert_uint_eq(messages, 1);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_usage_not_session)
{
	char *path = helper_write("not json\n");
	struct ps_session *s = helper_open(path);
	struct buf b = BUF_INIT;
	char *buf = (char *)1;
	size_t len;
	ck_assert_int_eq(usage_json(s, &buf, &len), PS_ERR_NOTSESSION);
	ck_assert_ptr_null(buf);
	ck_assert_int_eq(buf_puts(&b, "keep"), 0);
	ck_assert_int_eq(usage_csv_row(s, "p", "f", &b), PS_ERR_NOTSESSION);
	ck_assert_uint_eq(b.len, 4);
	buf_free(&b);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* JSON.stringify(Infinity) is null; jansson cannot hold it. */
START_TEST(test_usage_overflow_is_null)
{
	char *path = helper_write(HDR E("a", "null", "1T00:00:01.000", "\"usage\",\"provider\":\"p\",\"model\":\"m\","
					"\"usage\":{\"input\":1e308,\"cost\":{\"total\":1}}")
				      E("b", "\"a\"", "1T00:00:02.000", "\"usage\",\"provider\":\"p\",\"model\":\"m\","
					"\"usage\":{\"input\":1e308,\"cost\":{\"total\":1}}"));
	struct ps_session *s = helper_open(path);
	char *buf;
	size_t len;
	ck_assert_int_eq(usage_json(s, &buf, &len), PS_OK);
	json_t *v = json_loads(buf, 0, NULL);
	ck_assert_ptr_nonnull(v);
	ck_assert(json_is_null(json_object_get(json_object_get(v, "total"), "input")));
	ck_assert_double_eq(json_number_value(json_object_get(json_object_get(v, "total"), "cost")), 2);
	json_decref(v);
	free(buf);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* ---- the fixtures against an independent sum ---------------------------- */

struct indep_row {
	char key[256];
	double v[6];
};

struct indep {
	double total[6];
	struct indep_row rows[16];
	size_t n_rows;
	double messages, assistant;
};

static double field(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* pi 1.6.0's getSessionStats() rules, restated from the spec and pi's
 * source rather than from usage.c. */
static void indep_add(struct indep *a, const json_t *u, const json_t *provider, const json_t *model)
{
	double v[6] = {
		field(u, "input"), field(u, "output"), field(u, "cacheRead"), field(u, "cacheWrite"),
		field(u, "totalTokens"), field(json_object_get(u, "cost"), "total"),
	};
	char key[256];
	size_t i;
	if (!json_is_object(u))
		return;
	snprintf(key, sizeof key, "%s\x01%s", json_is_string(provider) ? json_string_value(provider) : "\x02",
		 json_is_string(model) ? json_string_value(model) : "\x02");
	for (i = 0; i < a->n_rows && strcmp(a->rows[i].key, key) != 0; i++)
		;
	if (i == a->n_rows) {
		ck_assert_uint_lt(a->n_rows, 16);
		memset(&a->rows[i], 0, sizeof a->rows[i]);
		strcpy(a->rows[i].key, key);
		a->n_rows++;
	}
	for (int k = 0; k < 6; k++) {
		a->total[k] += v[k];
		a->rows[i].v[k] += v[k];
	}
}

static void indep_sum(const char *file, struct indep *a)
{
	FILE *f = fopen(file, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int first = 1;
	memset(a, 0, sizeof *a);
	ck_assert_ptr_nonnull(f);
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *e = json_loadb(line, (size_t)n, 0, NULL);
		if (first) {
			first = 0;
			json_decref(e);
			continue;
		}
		ck_assert_ptr_nonnull(e);
		const char *type = json_string_value(json_object_get(e, "type"));
		if (type && strcmp(type, "usage") == 0)
			indep_add(a, json_object_get(e, "usage"), json_object_get(e, "provider"), json_object_get(e, "model"));
		if (type && (strcmp(type, "compaction") == 0 || strcmp(type, "branch_summary") == 0))
			indep_add(a, json_object_get(e, "usage"), NULL, NULL);
		if (type && strcmp(type, "message") == 0) {
			const json_t *m = json_object_get(e, "message");
			const char *role = json_string_value(json_object_get(m, "role"));
			a->messages++;
			if (role && strcmp(role, "toolResult") == 0)
				indep_add(a, json_object_get(m, "usage"), NULL, NULL);
			if (role && strcmp(role, "assistant") == 0) {
				const json_t *model = json_object_get(m, "responseModel");
				a->assistant++;
				indep_add(a, json_object_get(m, "usage"), json_object_get(m, "provider"),
					  json_is_string(model) ? model : json_object_get(m, "model"));
			}
		}
		json_decref(e);
	}
	free(line);
	fclose(f);
}

static const char *const sum_keys[6] = { "input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost" };

static void check_sums(const json_t *obj, const double *want, const char *file)
{
	for (int k = 0; k < 6; k++) {
		const json_t *v = json_object_get(obj, sum_keys[k]);
		ck_assert_msg(json_is_number(v), "%s: %s missing", file, sum_keys[k]);
		/* Same additions in the same (file) order: equal to the bit. */
		ck_assert_msg(json_number_value(v) == want[k], "%s: %s is %.17g, want %.17g", file, sum_keys[k],
			      json_number_value(v), want[k]);
	}
}

START_TEST(test_usage_fixtures_match_independent_sum)
{
	glob_t g;
	ck_assert_int_eq(glob("tests/data/fixtures/*.jsonl", 0, NULL, &g), 0);
	ck_assert_uint_ge(g.gl_pathc, 3);
	for (size_t f = 0; f < g.gl_pathc; f++) {
		const char *file = g.gl_pathv[f];
		struct indep want;
		struct ps_session *s = helper_open(file);
		char *buf;
		size_t len;
		indep_sum(file, &want);
		ck_assert_msg(want.total[5] > 0 && want.assistant > 0, "%s: the fixture has no usage", file);
		ck_assert_int_eq(usage_json(s, &buf, &len), PS_OK);
		json_t *got = json_loads(buf, 0, NULL);
		ck_assert_ptr_nonnull(got);
		check_sums(json_object_get(got, "total"), want.total, file);
		ck_assert(json_number_value(json_object_get(got, "messages")) == want.messages);
		ck_assert(json_number_value(json_object_get(got, "assistantMessages")) == want.assistant);
		const json_t *rows = json_object_get(got, "byModel");
		ck_assert_uint_eq(json_array_size(rows), want.n_rows);
		for (size_t i = 0; i < want.n_rows; i++) {
			const json_t *row = json_array_get(rows, i);
			const json_t *p = json_object_get(row, "provider"), *m = json_object_get(row, "model");
			char key[256];
			snprintf(key, sizeof key, "%s\x01%s", json_is_string(p) ? json_string_value(p) : "\x02",
				 json_is_string(m) ? json_string_value(m) : "\x02");
			ck_assert_str_eq(key, want.rows[i].key);
			check_sums(row, want.rows[i].v, file);
		}
		json_decref(got);
		free(buf);

		/* The CSV row carries the same totals, in the same form. */
		struct buf b = BUF_INIT;
		char tail[256], num[USAGE_COST_TEXT];
		ck_assert_int_eq(usage_csv_row(s, "proj", "sess", &b), PS_OK);
		ck_assert_int_eq(buf_finish(&b), 0);
		snprintf(tail, sizeof tail, ",%.0f", want.messages);
		for (int k = 0; k < 6; k++) {
			if (k == 4)
				continue; /* totalTokens is not a CSV column */
			if (k == 5)
				usage_cost_text(want.total[k], num); /* cents, as ccusage */
			else
				jsonout_number(want.total[k], num);
			strcat(tail, ",");
			strcat(tail, num);
		}
		strcat(tail, "\n");
		ck_assert_uint_ge(b.len, strlen(tail));
		ck_assert_str_eq(b.data + b.len - strlen(tail), tail);
		buf_free(&b);
		session_free(s);
	}
	globfree(&g);
}
END_TEST

Suite *usage_suite(void)
{
	Suite *s = suite_create("usage");
	TCase *tc = tcase_create("usage");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_usage_every_kind);
	tcase_add_test(tc, test_usage_fast_path_as_parsed);
	tcase_add_test(tc, test_usage_type_named_like_a_role);
	tcase_add_test(tc, test_usage_continues_after_append);
	tcase_add_test(tc, test_usage_csv);
	tcase_add_test(tc, test_usage_cost_cents);
	tcase_add_test(tc, test_usage_numbers_shortest);
	tcase_add_test(tc, test_usage_cost_quick_as_exact);
	tcase_add_test(tc, test_usage_empty_session);
	tcase_add_test(tc, test_usage_not_session);
	tcase_add_test(tc, test_usage_overflow_is_null);
	tcase_add_test(tc, test_usage_fixtures_match_independent_sum);
	suite_add_tcase(s, tc);
	return s;
}
