/* search.c, jsregex.c, jscase.c: pi's /resume query language, its match
 * decision, JavaScript's toLowerCase, and the entry-text rule. */
#include <ctype.h>
#include <string.h>
#include "buf.h"
#include "bytefind.h"
#include "helpers.h"
#include "jscase.h"
#include "needleset.h"
#include "infohelpers.h"
#include "search.h"
#include "searchmemo.h"
#include "sessioninfo.h"
#include "suites.h"

static struct sessioninfo *info_of(const char *name, const char *cwd, const char *text, char **path)
{
	struct buf b = BUF_INIT;
	json_t *h = json_pack("{s:s,s:s,s:s,s:s}", "type", "session", "id", "0193-ABCD", "timestamp", "2026-01-01T00:00:00Z", "cwd", cwd);
	json_t *m = json_pack("{s:s,s:{s:s,s:s,s:i}}", "type", "message", "message", "role", "user", "content", text, "timestamp", 5);
	char *hs = json_dumps(h, JSON_COMPACT), *ms = json_dumps(m, JSON_COMPACT);
	buf_printf(&b, "%s\n%s\n", hs, ms);
	if (name) {
		json_t *n = json_pack("{s:s,s:s}", "type", "session_info", "name", name);
		char *ns = json_dumps(n, JSON_COMPACT);
		buf_printf(&b, "%s\n", ns);
		free(ns);
		json_decref(n);
	}
	buf_finish(&b);
	*path = helper_write(b.data);
	struct sessioninfo *info;
	ck_assert_int_eq(sessioninfo_load(*path, &info), PS_OK);
	ck_assert_int_eq(info->is_session, 1);
	buf_free(&b);
	free(hs);
	free(ms);
	json_decref(h);
	json_decref(m);
	return info;
}

static int matches(const char *query, const struct sessioninfo *info)
{
	struct search_query *q;
	char *why;
	int m;
	ck_assert_msg(search_query_parse(query, &q, &why) == PS_OK, "%s: %s", query, why ? why : "");
	ck_assert_int_eq(search_query_matches(q, info, &m), PS_OK);
	search_query_free(q);
	return m;
}

static int marks(const char *query, const char *text)
{
	struct search_query *q;
	char *why;
	int m;
	ck_assert_int_eq(search_query_parse(query, &q, &why), PS_OK);
	ck_assert_int_eq(search_text_matches(q, text, strlen(text), &m), PS_OK);
	search_query_free(q);
	return m;
}

static char *invalid(const char *query)
{
	struct search_query *q = NULL;
	char *why = NULL;
	ck_assert_msg(search_query_parse(query, &q, &why) == PS_ERR_INVALID, "%s parsed", query);
	ck_assert_ptr_null(q);
	ck_assert_ptr_nonnull(why);
	return why;
}

static void lower_is(const char *in, const char *want)
{
	struct buf b = BUF_INIT;
	ck_assert_int_eq(jscase_lower(in, strlen(in), &b), 0);
	buf_finish(&b);
	ck_assert_str_eq(b.data ? b.data : "", want);
	buf_free(&b);
}

START_TEST(test_lower)
{
	lower_is("Hello WORLD", "hello world");
	lower_is("ÀÉÎÕÜ Straße ẞ", "àéîõü straße ß");
	lower_is("ДОБРО Привет", "добро привет");
	/* Final_Sigma and the one unconditional full mapping. */
	lower_is("ΟΔΟΣ ΣΟΦΙΑ Σ ΑΣ' ΑΣ.Β", "οδος σοφια σ ας' ασ.β");
	lower_is("İ", "i\xcc\x87");
	lower_is("日本語 😀", "日本語 😀");
}
END_TEST

START_TEST(test_tokens_and_phrases)
{
	char *path;
	struct sessioninfo *info = info_of("Deploy the Parser", "/home/user/web-app", "we fixed the  MIGRATION\tscript today", &path);
	ck_assert(matches("", info));
	ck_assert(matches("   ", info));
	ck_assert(matches("migration", info));
	ck_assert(matches("MIGRATION deploy", info)); /* all tokens, any fields */
	ck_assert(!matches("migration zebra", info));
	ck_assert(matches("\"migration script\"", info)); /* white space runs are one space */
	ck_assert(matches("\"the   migration\"", info));
	ck_assert(!matches("\"migration today\"", info));
	ck_assert(matches("abcd", info)); /* the id, lowercased */
	ck_assert(matches("\"\" deploy", info)); /* an empty phrase is skipped */
	/* Unbalanced: white space words, the quote part of the token. */
	ck_assert(!matches("\"migration script", info));
	ck_assert(matches("migration \"", info) == 0);
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_fuzzy)
{
	char *path;
	struct sessioninfo *info = info_of("Refactor search", "/tmp/deploy-v2", "nothing scattered here", &path);
	ck_assert(matches("rfsrch", info)); /* a subsequence of the name */
	ck_assert(matches("tmpdpl", info));  /* of the cwd */
	ck_assert(!matches("ntsh", info));   /* never of the message text */
	ck_assert(matches("2v", info));      /* digits+letters swapped: v2 */
	ck_assert(!matches("2x", info));
	ck_assert(matches("RFS", info));     /* case-insensitive */
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_unicode)
{
	char *path;
	struct sessioninfo *info = info_of("ΟΔΟΣ", "/srv", "Привет СТРАННЫЙ мир, naïve CAFÉ", &path);
	ck_assert(matches("οδος", info));
	ck_assert(matches("ΟΔΟΣ", info));
	ck_assert(matches("странный", info));
	ck_assert(matches("café NAÏVE", info));
	ck_assert(matches("re:странный", info)); /* caseless beyond ASCII */
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_regex)
{
	char *path;
	struct sessioninfo *info = info_of(NULL, "/w", "Line one\nline TWO\u00a0end", &path);
	ck_assert(matches("re:one$", info) == 0);  /* $ is the very end only */
	ck_assert(matches("re:end$", info));
	ck_assert(matches("re:two\\send", info)); /* \s is JavaScript's */
	ck_assert(!matches("re:one.line", info)); /* . stops at line ends */
	ck_assert(matches("re:one[^]line", info));
	ck_assert(!matches("re:\\Aline", info));  /* \A is the letter A */
	ck_assert(matches("re:(?<w>l)ine \\k<w>?", info));
	ck_assert(matches("re:\\u004cine", info));
	ck_assert(!matches("re:[]", info));
	ck_assert(matches("re:  TWO  ", info)); /* the pattern is trimmed */
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_regex_errors)
{
	const struct { const char *q, *why; } cases[] = {
		{ "re:", "Empty regex" },
		{ "re:   ", "Empty regex" },
		{ "re:(", "Unterminated group" },
		{ "re:a)", "Unmatched ')'" },
		{ "re:[a", "Unterminated character class" },
		{ "re:*a", "Nothing to repeat" },
		{ "re:a++", "Nothing to repeat" },
		{ "re:a{2}{3}", "Nothing to repeat" },
		{ "re:a{3,2}", "numbers out of order" },
		{ "re:[z-a]", "Range out of order" },
		{ "re:(?i)a", "Invalid group" },
		{ "re:(?>a)", "Invalid group" },
		{ "re:(?<=a)*", "Invalid quantifier" },
		{ "re:\\", "\\ at end of pattern" },
		{ "re:(?<a>x)(?<a>y)", "Duplicate capture group name" },
		{ "re:(?<x>a)\\k<y>", "Invalid named capture referenced" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *why = invalid(cases[i].q);
		ck_assert_msg(strstr(why, cases[i].why), "%s: %s", cases[i].q, why);
		free(why);
	}
	/* What JavaScript's Annex B accepts. */
	const char *ok[] = { "re:a{", "re:}", "re:]", "re:(?=a)*", "re:\\k", "re:[\\d-z]", "re:\\8", "re:x{,3}", "re:\\cJ" };
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		struct search_query *q;
		char *why;
		ck_assert_msg(search_query_parse(ok[i], &q, &why) == PS_OK, "%s: %s", ok[i], why ? why : "");
		search_query_free(q);
	}
}
END_TEST

START_TEST(test_hostile_regex)
{
	/* Catastrophic backtracking gives up instead of hanging the daemon. */
	char *path;
	char text[4096];
	memset(text, 'a', sizeof text - 2);
	text[sizeof text - 2] = '!';
	text[sizeof text - 1] = 0;
	struct sessioninfo *info = info_of(NULL, "/w", text, &path);
	struct search_query *q;
	char *why;
	int m;
	ck_assert_int_eq(search_query_parse("re:^(a|a)*$", &q, &why), PS_OK);
	ps_err err = search_query_matches(q, info, &m);
	ck_assert(err == PS_ERR_TOOBIG || (err == PS_OK && !m));
	search_query_free(q);
	sessioninfo_free(info);
	unlink(path);
	free(path);
}
END_TEST

/* The matcher tries a long subject chunk by chunk of start positions
 * (regex_test): the answer is the one a single pcre2_match gives, across
 * a chunk's edge too (a multibyte character there, a lookbehind, ^). */
static int marks_in(const char *query, const char *text, struct search_budget *b, ps_err *err)
{
	struct search_query *q;
	char *why;
	int m = 0;
	ck_assert_int_eq(search_query_parse(query, &q, &why), PS_OK);
	*err = search_text_matches_in(q, text, strlen(text), b, &m);
	search_query_free(q);
	return m;
}

START_TEST(test_regex_chunks)
{
	static char text[20000];
	struct search_budget b;
	ps_err err;
	memset(text, 'a', 4095);
	strcpy(text + 4095, "\xc3\xa9z"); /* é across the first chunk's edge */
	memset(text + 4098, 'a', 9000);
	strcpy(text + 13098, "xyz");
	search_budget_init(&b, 1000000000LL, NULL, NULL);
	ck_assert(marks_in("re:\xc3\xa9z", text, &b, &err) && err == PS_OK);
	ck_assert(marks_in("re:(?<=a)xyz", text, &b, &err) && err == PS_OK);
	ck_assert(marks_in("re:a{9000}xyz", text, &b, &err) && err == PS_OK);
	ck_assert(!marks_in("re:^xyz", text, &b, &err) && err == PS_OK);
	ck_assert(marks_in("re:^a", text, &b, &err) && err == PS_OK);
	ck_assert(!marks_in("re:b", text, &b, &err) && err == PS_OK);
	/* A spent budget stops the matching: PS_ERR_COSTLY. */
	search_budget_init(&b, 0, NULL, NULL);
	b.spent_ns = 1;
	marks_in("re:[a ]*[#%]", text, &b, &err);
	ck_assert_int_eq(err, PS_ERR_COSTLY);
}
END_TEST

START_TEST(test_entry_text_rule)
{
	ck_assert(marks("deploy", "We DEPLOYED it"));
	ck_assert(!marks("dpl", "We deployed it"));           /* fuzzy alone marks nothing */
	ck_assert(marks("zebra deploy", "deploy only"));        /* any token */
	ck_assert(marks("\"foo bar\"", "x FOO \n\t bar y"));    /* phrases across white space */
	ck_assert(!marks("\"foo bar\"", "foobar"));
	ck_assert(marks("re:dep.oy", "deploy"));
	ck_assert(!marks("", "anything"));
	ck_assert(marks("\"foo", "say \"foo"));                /* unbalanced: the quote is kept */
}
END_TEST

/* bytefind against memmem: every needle length up to 20 over random text
 * of a small alphabet (so partial matches abound), at every offset of the
 * haystack's end, where the sixteen-byte blocks give way to the tail. */
START_TEST(test_bytefind_like_memmem)
{
	char hay[300], needle[24];
	unsigned seed = 12345;
	for (int round = 0; round < 2000; round++) {
		size_t hn = (size_t)(rand_r(&seed) % sizeof hay), nn = 1 + (size_t)(rand_r(&seed) % 20);
		for (size_t i = 0; i < hn; i++)
			hay[i] = "ab\"\\u"[rand_r(&seed) % 5];
		if (hn >= nn && rand_r(&seed) % 2) {
			size_t at = (size_t)rand_r(&seed) % (hn - nn + 1);
			memcpy(needle, hay + at, nn); /* one that is there */
		} else {
			for (size_t i = 0; i < nn; i++)
				needle[i] = "ab\"\\u"[rand_r(&seed) % 5];
		}
		for (size_t from = 0; from <= hn; from += 1 + from / 4) {
			const char *want = memmem(hay + from, hn - from, needle, nn);
			ck_assert_ptr_eq(bytefind(hay + from, hay + hn, needle, nn), want);
		}
	}
	ck_assert_ptr_eq(bytefind(hay, hay, "", 0), hay);
}
END_TEST

/* Whether needle k of texts stands at p (the reference for needleset). */
static int stands_slowly(const char *p, const char *end, const char *text, size_t len, int caseless)
{
	if ((size_t)(end - p) < len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((caseless ? tolower((unsigned char)p[i]) : (unsigned char)p[i]) != (unsigned char)text[i])
			return 0;
	return 1;
}

/* needleset_find against a search position by position: sets of one to
 * five needles, caseless or not, of one to twelve bytes, over text where
 * letters come in both cases beside the bytes that pass the caseless
 * filter too (b | 0x20 is a letter's: '@', '[', 0x01, 0xC1...) and
 * non-ASCII bytes, which equal only themselves; at every offset of the
 * text's end, where the blocks give way to the tail. */
START_TEST(test_needleset_like_slow_search)
{
	static const char alphabet[] = "aAbB@[\x01\xc1\xe1.\\u";
	char hay[300], texts[5][16];
	const char *ptrs[5];
	size_t lens[5];
	int caseless[5];
	unsigned seed = 777;
	for (int round = 0; round < 3000; round++) {
		size_t hn = (size_t)(rand_r(&seed) % sizeof hay), n = 1 + (size_t)(rand_r(&seed) % 5);
		for (size_t i = 0; i < hn; i++)
			hay[i] = alphabet[rand_r(&seed) % (sizeof alphabet - 1)];
		for (size_t k = 0; k < n; k++) {
			lens[k] = 1 + (size_t)(rand_r(&seed) % 12);
			caseless[k] = rand_r(&seed) % 2;
			if (hn >= lens[k] && rand_r(&seed) % 2)
				memcpy(texts[k], hay + (size_t)rand_r(&seed) % (hn - lens[k] + 1), lens[k]);
			else
				for (size_t i = 0; i < lens[k]; i++)
					texts[k][i] = alphabet[rand_r(&seed) % (sizeof alphabet - 1)];
			for (size_t i = 0; caseless[k] && i < lens[k]; i++)
				texts[k][i] = (char)tolower((unsigned char)texts[k][i]);
			ptrs[k] = texts[k];
		}
		struct needleset set;
		ck_assert_int_eq(needleset_init(&set, ptrs, lens, caseless, n), 0);
		for (size_t from = 0; from <= hn; from += 1 + from / 4) {
			const char *want = NULL;
			size_t want_k = 0, got_k = SIZE_MAX;
			for (const char *p = hay + from; !want && p < hay + hn; p++)
				for (size_t k = 0; k < n && !want; k++)
					if (stands_slowly(p, hay + hn, texts[k], lens[k], caseless[k]))
						want = p, want_k = k;
			const char *got = needleset_find(&set, hay + from, hay + hn, &got_k);
			ck_assert_ptr_eq(got, want);
			if (want)
				ck_assert_uint_eq(got_k, want_k);
		}
	}
	const char *s = "say KUBERNETES.TS or session_info", *kube = "kubernetes.ts", *info = "session_info";
	const char *two[] = { info, kube };
	size_t two_lens[] = { 12, 13 }, which = 9;
	int two_caseless[] = { 0, 1 };
	struct needleset set;
	ck_assert_int_eq(needleset_init(&set, two, two_lens, two_caseless, 2), 0);
	ck_assert_ptr_eq(needleset_find(&set, s, s + strlen(s), &which), s + 4);
	ck_assert_uint_eq(which, 1);
	ck_assert_int_eq(needleset_init(&set, two, two_lens, two_caseless, 0), -1);
}
END_TEST

static int skim_stops; /* skims made whole reads (search_query_skim_enough) */

/* What a skim of the session file text says of query: -1 when the query
 * gives no needles, 1 when it rules the session out, else 0; *whole is
 * whether the whole file's info matches.  A skim that rules out a session
 * that matches fails the test. */
static int skim_says(const char *text, const char *query, int *whole)
{
	struct search_query *q;
	struct sessioninfo_needle *needles;
	struct sessioninfo *skim = NULL, *info = NULL;
	char *why, *path = helper_write(text);
	size_t n;
	int says = -1;
	ck_assert_msg(search_query_parse(query, &q, &why) == PS_OK, "%s: %s", query, why ? why : "");
	ck_assert_int_eq(sessioninfo_load(path, &info), PS_OK);
	ck_assert_int_eq(search_query_matches(q, info, whole), PS_OK);
	ck_assert_int_eq(search_query_skim_needles(q, &needles, &n), 0);
	if (n) {
		ck_assert_int_eq(sessioninfo_load_skim(path, needles, n, NULL, NULL, &skim), PS_OK);
		says = search_query_rules_out(q, skim);
		ck_assert_msg(!(says && *whole), "a skim for %s ruled out a session that matches:\n%s", query, text);
		/* Made a whole read once every token was seen in the text, it
		 * rules out what a skim read to the end rules out. */
		struct search_skim_seen seen = { q, 0 };
		sessioninfo_free(skim);
		ck_assert_int_eq(sessioninfo_load_skim(path, needles, n, search_query_skim_enough, &seen, &skim), PS_OK);
		int whole_says = search_query_rules_out(q, skim);
		ck_assert_msg(!(whole_says && *whole), "a skim made whole for %s ruled out a match:\n%s", query, text);
		ck_assert_int_ge(whole_says, says);
		if (skim->skim_proven) {
			/* Then it is sessioninfo_load_listing's info, and the
			 * whole file matches if pi lists it. */
			int match = 0;
			ck_assert_int_eq(search_query_matches(q, info, &match), PS_OK);
			ck_assert_msg(match == info->is_session, "a skim proved %s wrongly:\n%s", query, text);
			ck_assert_int_eq(whole_says, !info->is_session);
			helper_assert_same_listing(skim, info);
		}
		if (skim->skim_whole) { /* then it is sessioninfo_load's info */
			size_t a, b;
			const char *fa = sessioninfo_first_message(skim, &a), *fb = sessioninfo_first_message(info, &b);
			ck_assert_int_eq(skim->is_session, info->is_session);
			ck_assert_str_eq(skim->id, info->id);
			ck_assert_str_eq(skim->cwd, info->cwd);
			ck_assert(!skim->name == !info->name && (!skim->name || !strcmp(skim->name, info->name)));
			ck_assert(skim->modified_ms == info->modified_ms || (skim->modified_ms != skim->modified_ms &&
									     info->modified_ms != info->modified_ms));
			ck_assert_uint_eq(skim->message_count, info->message_count);
			ck_assert(a == b && !memcmp(fa, fb, a));
			ck_assert(skim->text.len == info->text.len && !memcmp(skim->text.data, info->text.data, info->text.len));
			ck_assert(skim->lower.len == info->lower.len &&
				  !memcmp(skim->lower.data, info->lower.data, info->lower.len));
		}
		skim_stops += skim->skim_whole || skim->skim_proven;
	}
	sessioninfo_free(skim);
	sessioninfo_free(info);
	free(needles);
	search_query_free(q);
	unlink(path);
	free(path);
	return says;
}

#define SKIM_HEADER "{\"type\":\"session\",\"version\":3,\"id\":\"sess-1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/home/u/proj\"}"
#define SKIM_USER(text) "{\"type\":\"message\",\"id\":\"u1\",\"message\":{\"role\":\"user\",\"content\":\"" text "\",\"timestamp\":5}}"
#define SKIM_TOOL(text) "{\"type\":\"message\",\"id\":\"t1\",\"message\":{\"role\":\"toolResult\",\"content\":[{\"type\":\"text\",\"text\":\"" text "\"}]}}"

/* The places a plain token hides from a raw substring search, and the
 * lines a skim must read besides the ones holding the token. */
START_TEST(test_skim_rules_out)
{
	int whole;
	/* In a tool result only: ruled out; in a user message: not. */
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_TOOL("kubernetes.ts failed") "\n" SKIM_USER("hello") "\n",
				   "kubernetes.ts", &whole), 1);
	skim_stops = 0;
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_TOOL("x") "\n" SKIM_USER("see KUBERNETES.TS") "\n",
				   "kubernetes.ts", &whole), 0);
	ck_assert(whole);
	ck_assert_int_eq(skim_stops, 1); /* seen in the text: read whole at once */
	/* Past the first megabyte, where the skim no longer holds the file's
	 * start: it reads it again, whole. */
	struct buf big = BUF_INIT;
	buf_puts(&big, SKIM_HEADER "\n" SKIM_TOOL("x"));
	for (int i = 0; i < 3; i++) {
		buf_puts(&big, "\n{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"content\":\"");
		for (int k = 0; k < 600 * 1024; k++)
			buf_putc(&big, 'x');
		buf_puts(&big, "\"}}");
	}
	buf_puts(&big, "\n" SKIM_USER("kubernetes at last") "\n");
	buf_finish(&big);
	ck_assert_int_eq(skim_says(big.data, "kubernetes", &whole), 0);
	ck_assert(whole);
	ck_assert_int_eq(skim_stops, 2);
	buf_free(&big);
	/* Spelled by an escape, by the Kelvin sign (lowercase k), by U+0130
	 * (lowercase i and U+0307), with a slash written \/. */
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("\\u006bubernetes") "\n", "kubernetes", &whole), 0);
	ck_assert(whole);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("\xe2\x84\xaaubernetes") "\n", "kubernetes", &whole), 0);
	ck_assert(whole);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("X\xc4\xb0") "\n", "xi", &whole), 0);
	ck_assert(whole);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("src\\/main") "\n", "src/main", &whole), 0);
	ck_assert(whole);
	/* An escape of a control character spells no letter: ruled out. */
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("\\u001b[0m") "\n", "kubernetes", &whole), 1);
	/* The name (the latest), the id, the cwd (also as a subsequence). */
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("x") "\n{\"type\":\"session_info\",\"name\":\"Kube\"}\n"
				   "{\"type\":\"session_info\",\"name\":\"k8s work\"}\n", "k8s", &whole), 0);
	ck_assert(whole);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("x") "\n{\"type\":\"session_info\",\"name\":\"Kube\"}\n"
				   "{\"type\":\"session_info\",\"name\":\"k8s work\"}\n", "kube", &whole), 1);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("x") "\n", "sess-1", &whole), 0);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("x") "\n", "hup", &whole), 0);
	ck_assert(whole);
	/* Every token must match: one found nowhere rules out. */
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("alpha") "\n", "alpha zzz", &whole), 1);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("alpha zzz") "\n", "alpha zzz", &whole), 0);
	/* Lines before the header, lone \r and \r\n breaks, a last line
	 * without a break. */
	ck_assert_int_eq(skim_says("not json\n" SKIM_HEADER "\r" SKIM_TOOL("kubernetes") "\r\n" SKIM_USER("kubernetes"),
				   "kubernetes", &whole), 0);
	ck_assert(whole);
	ck_assert_int_eq(skim_says("not json\n" SKIM_HEADER "\r" SKIM_TOOL("kubernetes") "\r\n" SKIM_USER("x"),
				   "kubernetes", &whole), 1);
	/* A file pi does not list: no header (ruled out), or a message pi's
	 * code throws on, on a line the skim does not read (not ruled out:
	 * the whole file tells). */
	ck_assert_int_eq(skim_says(SKIM_USER("kubernetes") "\n", "kubernetes", &whole), 1);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("kubernetes") "\n{\"type\":\"message\",\"message\":null}\n",
				   "kubernetes", &whole), 0);
	ck_assert(!whole);
	/* What a skim cannot rule out gives no needles. */
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("x") "\n", "re:kube", &whole), -1);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("x") "\n", "\"two words\"", &whole), -1);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("x") "\n", "caf\xc3\xa9", &whole), -1);
	ck_assert_int_eq(skim_says(SKIM_HEADER "\n" SKIM_USER("x") "\n", "caf\xc3\xa9 zzz", &whole), 1);
	/* Plain tokens alone, all seen: proven, read on as a listing; with a
	 * token a skim cannot test, read whole. */
	const char *queries[] = { "kubernetes", "kubernetes caf\xc3\xa9" };
	for (int i = 0; i < 2; i++) {
		struct search_query *q;
		struct sessioninfo_needle *needles;
		struct sessioninfo *skim;
		char *why, *path = helper_write(SKIM_HEADER "\n" SKIM_USER("kubernetes caf\xc3\xa9") "\n" SKIM_TOOL("x") "\n");
		size_t n;
		ck_assert_int_eq(search_query_parse(queries[i], &q, &why), PS_OK);
		ck_assert_int_eq(search_query_skim_needles(q, &needles, &n), 0);
		struct search_skim_seen seen = { q, 0 };
		ck_assert_int_eq(sessioninfo_load_skim(path, needles, n, search_query_skim_enough, &seen, &skim), PS_OK);
		ck_assert_int_eq(skim->skim_proven, i == 0);
		ck_assert_int_eq(skim->skim_whole, i == 1);
		ck_assert_uint_eq(skim->message_count, 2);
		ck_assert_uint_eq(skim->lower.len, i == 0 ? 0 : strlen("kubernetes caf\xc3\xa9"));
		sessioninfo_free(skim);
		free(needles);
		search_query_free(q);
		unlink(path);
		free(path);
	}
}
END_TEST

/* Random sessions of pieces that hide letters (escapes, U+212A, U+0130,
 * tool results, names, line breaks of every kind) against random
 * queries: a skim never rules out a session that matches, and does rule
 * out some. */
START_TEST(test_skim_random)
{
	static const char *const words[] = { "ab", "AB", "a\\u0062", "\xe2\x84\xaa", "k", "\xc4\xb0", "i", "x\\/y", "x/y",
					     "\\u001b", "\\n", " ", "zq", "Q" };
	static const char *const queries[] = { "ab", "k", "ki", "x/y", "zq ab", "bq", "i", "kab", "q" };
	static const char *const breaks[] = { "\n", "\r\n", "\r" };
	unsigned seed = 4242;
	int ruled_out = 0;
	for (int round = 0; round < 400; round++) {
		struct buf b = BUF_INIT;
		buf_puts(&b, SKIM_HEADER "\n");
		int lines = 1 + rand_r(&seed) % 5;
		for (int l = 0; l < lines; l++) {
			struct buf text = BUF_INIT;
			int n = rand_r(&seed) % 4;
			for (int w = 0; w < n; w++)
				buf_puts(&text, words[rand_r(&seed) % (sizeof words / sizeof *words)]);
			buf_finish(&text);
			const char *t = text.data ? text.data : "";
			switch (rand_r(&seed) % 4) {
			case 0:
				buf_printf(&b, SKIM_USER("%s"), t);
				break;
			case 1:
				buf_printf(&b, SKIM_TOOL("%s"), t);
				break;
			case 2:
				buf_printf(&b, "{\"type\":\"session_info\",\"name\":\"%s\"}", t);
				break;
			default:
				buf_printf(&b, "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":"
					       "\"text\",\"text\":\"%s\"}],\"timestamp\":7}}",
					   t);
			}
			buf_puts(&b, breaks[rand_r(&seed) % 3]);
			buf_free(&text);
		}
		buf_finish(&b);
		int whole;
		ruled_out += skim_says(b.data, queries[rand_r(&seed) % (sizeof queries / sizeof *queries)], &whole) == 1;
		buf_free(&b);
	}
	ck_assert_int_gt(ruled_out, 50);
}
END_TEST

/* Appends code point c as UTF-8. */
static void put_utf8(struct buf *b, uint32_t c)
{
	char u[4];
	size_t n = c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
	if (n == 2)
		u[0] = (char)(0xC0 | c >> 6);
	else if (n == 3)
		u[0] = (char)(0xE0 | c >> 12), u[1] = (char)(0x80 | ((c >> 6) & 0x3F));
	else
		u[0] = (char)(0xF0 | c >> 18), u[1] = (char)(0x80 | ((c >> 12) & 0x3F)), u[2] = (char)(0x80 | ((c >> 6) & 0x3F));
	u[n - 1] = (char)(0x80 | (c & 0x3F));
	ck_assert_int_eq(buf_put(b, u, n), 0);
}

/* Whether the lowercase of code points [from, to) holds an ASCII byte. */
static int lowers_into_ascii(uint32_t from, uint32_t to)
{
	struct buf in = BUF_INIT, out = BUF_INIT;
	for (uint32_t c = from; c < to; c++)
		if (c < 0xD800 || c > 0xDFFF)
			put_utf8(&in, c);
	ck_assert_int_eq(jscase_lower(in.data ? in.data : "", in.len, &out), 0);
	int ascii = 0;
	for (size_t i = 0; i < out.len; i++)
		ascii |= (unsigned char)out.data[i] < 0x80;
	buf_free(&in);
	buf_free(&out);
	return ascii;
}

/* The skim's rule rests on this: JavaScript's toLowerCase (jscase.h)
 * turns no character beyond ASCII into ASCII, but for U+0130 and
 * U+212A, whose bytes it looks for.  Blocks of code points at a time,
 * and one at a time in a block that has any. */
START_TEST(test_lower_into_ascii)
{
	for (uint32_t block = 0x80; block <= 0x10FFFF; block += 1024) {
		uint32_t end = block + 1024 > 0x110000 ? 0x110000 : block + 1024;
		if (!lowers_into_ascii(block, end))
			continue;
		for (uint32_t c = block; c < end; c++)
			ck_assert_msg(!lowers_into_ascii(c, c + 1) || c == 0x130 || c == 0x212A,
				      "U+%04X lowercases into ASCII", (unsigned)c);
	}
	ck_assert(lowers_into_ascii(0x130, 0x131) && lowers_into_ascii(0x212A, 0x212B));
}
END_TEST

/* The verdicts of recent queries: found only for the stamp they were
 * made with; a query's new table replaces its old one, which a holder of
 * a reference still reads; the oldest goes beyond the memo's size. */
START_TEST(test_searchmemo)
{
	struct searchmemo *m = searchmemo_new(2, SIZE_MAX);
	struct filestamp a = { 1, 2, 3, 4, 5 }, b = a;
	struct search_verdict v = { a, 1, "id-1", "A title", 42 }, got;
	b.size++;
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_null(searchmemo_get(m, "", "q"));
	struct search_verdicts *t = search_verdicts_new("", "q");
	ck_assert_int_eq(search_verdicts_add(t, "p/s1", 4, &v), PS_OK);
	v.match = 0, v.id = v.title = NULL;
	ck_assert_int_eq(search_verdicts_add(t, "p/s2", 4, &v), PS_OK);
	searchmemo_keep(m, t);
	struct search_verdicts *held = searchmemo_get(m, "", "q");
	ck_assert_ptr_nonnull(held);
	ck_assert_int_eq(search_verdicts_find(held, "p/s1", 4, &a, &got), 1);
	ck_assert_int_eq(got.match, 1);
	ck_assert_str_eq(got.id, "id-1");
	ck_assert_str_eq(got.title, "A title");
	ck_assert(got.modified_ms == 42);
	ck_assert_int_eq(search_verdicts_find(held, "p/s1", 4, &b, &got), 0); /* the file changed */
	ck_assert_int_eq(search_verdicts_find(held, "p/s2", 4, &a, &got), 1);
	ck_assert_int_eq(got.match, 0);
	ck_assert_ptr_null(got.id);
	ck_assert_int_eq(search_verdicts_find(held, "p/s3", 4, &a, &got), 0);
	ck_assert_ptr_null(searchmemo_get(m, "p", "q")); /* another scope */

	/* Replaced: the holder still reads the old table. */
	searchmemo_keep(m, search_verdicts_new("", "q"));
	ck_assert_int_eq(search_verdicts_find(held, "p/s1", 4, &a, &got), 1);
	search_verdicts_put(held);
	held = searchmemo_get(m, "", "q");
	ck_assert_int_eq(search_verdicts_find(held, "p/s1", 4, &a, &got), 0);
	search_verdicts_put(held);

	/* Two more queries: the oldest ("q") goes. */
	searchmemo_keep(m, search_verdicts_new("", "r"));
	searchmemo_keep(m, search_verdicts_new("", "s"));
	ck_assert_ptr_null(searchmemo_get(m, "", "q"));
	held = searchmemo_get(m, "", "r");
	ck_assert_ptr_nonnull(held);
	search_verdicts_put(held);
	searchmemo_free(m);
}
END_TEST

/* A table of n verdicts for query. */
static struct search_verdicts *memo_table(const char *query, size_t n)
{
	struct search_verdicts *t = search_verdicts_new("", query);
	struct search_verdict v = { { 1, 2, 3, 4, 5 }, 0, NULL, NULL, 0 };
	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < n; i++) {
		char key[32];
		int len = snprintf(key, sizeof key, "p/s%zu", i);
		ck_assert_int_eq(search_verdicts_add(t, key, (size_t)len, &v), PS_OK);
	}
	return t;
}

/* The memo's budget is a cap: the oldest tables go while the kept ones
 * hold more, and a table larger than the whole budget is not kept. */
START_TEST(test_searchmemo_budget)
{
	struct searchmemo *probe = searchmemo_new(8, SIZE_MAX);
	searchmemo_keep(probe, memo_table("q", 1000));
	size_t one = searchmemo_bytes(probe);
	searchmemo_free(probe);
	ck_assert_uint_gt(one, 1000 * 16); /* a stamp per verdict at least */

	struct searchmemo *m = searchmemo_new(8, 2 * one + one / 2);
	searchmemo_keep(m, memo_table("q", 1000));
	searchmemo_keep(m, memo_table("r", 1000));
	ck_assert_uint_eq(searchmemo_bytes(m), 2 * one);
	searchmemo_keep(m, memo_table("s", 1000)); /* three do not fit: "q" goes */
	ck_assert_uint_le(searchmemo_bytes(m), 2 * one + one / 2);
	struct search_verdicts *held = searchmemo_get(m, "", "q");
	ck_assert_ptr_null(held);
	ck_assert_ptr_nonnull(held = searchmemo_get(m, "", "r"));
	search_verdicts_put(held);
	ck_assert_ptr_nonnull(held = searchmemo_get(m, "", "s"));
	search_verdicts_put(held);

	/* Larger than the budget alone: not kept, the others stay. */
	searchmemo_keep(m, memo_table("big", 3000));
	ck_assert_ptr_null(searchmemo_get(m, "", "big"));
	ck_assert_ptr_nonnull(held = searchmemo_get(m, "", "s"));
	search_verdicts_put(held);
	ck_assert_uint_le(searchmemo_bytes(m), 2 * one + one / 2);
	searchmemo_free(m);

	/* A budget of nothing keeps nothing (-o search_cache=0). */
	m = searchmemo_new(8, 0);
	searchmemo_keep(m, memo_table("q", 1));
	ck_assert_ptr_null(searchmemo_get(m, "", "q"));
	ck_assert_uint_eq(searchmemo_bytes(m), 0);
	searchmemo_free(m);
}
END_TEST

Suite *search_suite(void)
{
	Suite *s = suite_create("search");
	TCase *tc = tcase_create("core");
	/* test_lower_into_ascii lowercases every code point: seconds under
	 * the sanitizers, on a busy machine more. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_lower);
	tcase_add_test(tc, test_bytefind_like_memmem);
	tcase_add_test(tc, test_needleset_like_slow_search);
	tcase_add_test(tc, test_skim_rules_out);
	tcase_add_test(tc, test_skim_random);
	tcase_add_test(tc, test_lower_into_ascii);
	tcase_add_test(tc, test_searchmemo);
	tcase_add_test(tc, test_searchmemo_budget);
	tcase_add_test(tc, test_tokens_and_phrases);
	tcase_add_test(tc, test_fuzzy);
	tcase_add_test(tc, test_unicode);
	tcase_add_test(tc, test_regex);
	tcase_add_test(tc, test_regex_errors);
	tcase_add_test(tc, test_hostile_regex);
	tcase_add_test(tc, test_regex_chunks);
	tcase_add_test(tc, test_entry_text_rule);
	suite_add_tcase(s, tc);
	return s;
}
