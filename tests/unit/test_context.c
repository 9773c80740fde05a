/* context_build() and jstext_iso_to_ms(): pi 1.6.0's buildSessionContext()
 * rules, one small hand-written path per rule.  Expected JSON is compared as
 * compact text, so key order and integer-vs-real matter as they do for pi.
 * JSON in this file uses ' for " to stay readable; q() swaps them back. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "context.h"
#include "jstext.h"
#include "suites.h"

/* New string: s with every ' turned into ". */
static char *q(const char *s)
{
	char *out = strdup(s);

	ck_assert_ptr_nonnull(out);
	for (char *p = out; *p; p++)
		if (*p == '\'')
			*p = '"';
	return out;
}

/* New reference: the parsed JSON of a q()-style string. */
static json_t *load(const char *s)
{
	char *text = q(s);
	json_error_t err;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &err);

	ck_assert_msg(v != NULL, "bad test JSON: %s: %s", err.text, text);
	free(text);
	return v;
}

/* Builds the context of the entries array `entries` (a root-to-leaf path)
 * and checks its compact JSON against `expected`; also checks the input was
 * left untouched. */
static void check_ctx(const char *entries, const char *expected)
{
	json_t *path = load(entries);
	char *before = json_dumps(path, JSON_COMPACT);
	size_t n = json_array_size(path);
	json_t **list = calloc(n + 1, sizeof *list);
	json_t *ctx;
	char *got, *after, *want = q(expected);

	ck_assert_ptr_nonnull(before);
	ck_assert_ptr_nonnull(list);
	for (size_t i = 0; i < n; i++)
		list[i] = json_array_get(path, i);
	ctx = context_build(list, n);
	ck_assert_ptr_nonnull(ctx);
	got = json_dumps(ctx, JSON_COMPACT);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	json_decref(ctx);
	after = json_dumps(path, JSON_COMPACT);
	ck_assert_ptr_nonnull(after);
	ck_assert_str_eq(after, before);
	free(after);
	free(got);
	free(want);
	free(before);
	free(list);
	json_decref(path);
}

/* Entry fragments shared by several tests. */
#define U1 "{'type':'message','id':'u1','parentId':null,'timestamp':'2024-12-03T14:00:00.000Z','message':{'role':'user','content':'one','timestamp':1}}"
#define A1 "{'type':'message','id':'a1','parentId':'u1','timestamp':'2024-12-03T14:00:01.000Z','message':{'role':'assistant','content':[{'type':'text','text':'r1'}],'provider':'anthropic','model':'claude','usage':{'input':3,'cost':{'total':0.5}},'timestamp':2}}"
#define U2 "{'type':'message','id':'u2','parentId':'a1','timestamp':'2024-12-03T14:00:02.000Z','message':{'role':'user','content':'two','timestamp':3}}"
#define A2 "{'type':'message','id':'a2','parentId':'u2','timestamp':'2024-12-03T14:00:03.000Z','message':{'role':'assistant','content':[{'type':'text','text':'r2'}],'provider':'anthropic','model':'claude','timestamp':4}}"
#define MU1 "{'role':'user','content':'one','timestamp':1}"
#define MA1 "{'role':'assistant','content':[{'type':'text','text':'r1'}],'provider':'anthropic','model':'claude','usage':{'input':3,'cost':{'total':0.5}},'timestamp':2}"
#define MU2 "{'role':'user','content':'two','timestamp':3}"
#define MA2 "{'role':'assistant','content':[{'type':'text','text':'r2'}],'provider':'anthropic','model':'claude','timestamp':4}"
#define CLAUDE "'model':{'provider':'anthropic','modelId':'claude'}"
/* 2024-12-03T14:10:00.000Z */
#define T10 "1733235000000"

START_TEST(test_empty_path)
{
	json_t *ctx = context_build(NULL, 0);
	char *got;

	ck_assert_ptr_nonnull(ctx);
	got = json_dumps(ctx, JSON_COMPACT);
	ck_assert_str_eq(got, "{\"messages\":[],\"thinkingLevel\":\"off\",\"model\":null}");
	free(got);
	json_decref(ctx);
}
END_TEST

START_TEST(test_messages_copied_verbatim)
{
	/* numbers stay integers or reals as stored; key order is kept */
	check_ctx("[" U1 "," A1 "," U2 "]",
		  "{'messages':[" MU1 "," MA1 "," MU2 "],'thinkingLevel':'off'," CLAUDE "}");
}
END_TEST

START_TEST(test_model_from_assistant_vs_model_change)
{
	/* the later of model_change and assistant message wins */
	check_ctx("[{'type':'model_change','id':'m','parentId':null,'timestamp':'x','provider':'openai','modelId':'gpt'}," A1 "]",
		  "{'messages':[" MA1 "],'thinkingLevel':'off'," CLAUDE "}");
	check_ctx("[" U1 "," A1 ",{'type':'model_change','id':'m','parentId':'a1','timestamp':'x','provider':'openai','modelId':'gpt'}]",
		  "{'messages':[" MU1 "," MA1 "],'thinkingLevel':'off','model':{'provider':'openai','modelId':'gpt'}}");
	/* undefined fields vanish from the model object */
	check_ctx("[{'type':'message','id':'a','parentId':null,'timestamp':'x','message':{'role':'assistant','content':[],'model':'m'}}]",
		  "{'messages':[{'role':'assistant','content':[],'model':'m'}],'thinkingLevel':'off','model':{'modelId':'m'}}");
}
END_TEST

START_TEST(test_model_null_when_none)
{
	check_ctx("[" U1 "]", "{'messages':[" MU1 "],'thinkingLevel':'off','model':null}");
}
END_TEST

START_TEST(test_thinking_level)
{
	check_ctx("[{'type':'thinking_level_change','id':'t','parentId':null,'timestamp':'x','thinkingLevel':'high'}]",
		  "{'messages':[],'thinkingLevel':'high','model':null}");
	/* the last change wins; one without a level makes it undefined */
	check_ctx("[{'type':'thinking_level_change','id':'t','parentId':null,'timestamp':'x','thinkingLevel':'high'},"
		  "{'type':'thinking_level_change','id':'t2','parentId':'t','timestamp':'x'}]",
		  "{'messages':[],'model':null}");
}
END_TEST

START_TEST(test_settings_scan_full_path)
{
	/* settings come from before the compaction too */
	check_ctx("[{'type':'thinking_level_change','id':'t','parentId':null,'timestamp':'x','thinkingLevel':'low'}," A1 ","
		  "{'type':'compaction','id':'c','parentId':'a1','timestamp':'2024-12-03T14:10:00.000Z','summary':'s','tokensBefore':9}]",
		  "{'messages':[{'role':'compactionSummary','summary':'s','tokensBefore':9,'timestamp':" T10 "}],'thinkingLevel':'low'," CLAUDE "}");
}
END_TEST

START_TEST(test_null_content_normalised)
{
	check_ctx("[{'type':'message','id':'s','parentId':null,'timestamp':'x','message':{'role':'system','content':null,'sections':{}}},"
		  "{'type':'message','id':'u','parentId':'s','timestamp':'x','message':{'role':'user','timestamp':1}},"
		  "{'type':'message','id':'a','parentId':'u','timestamp':'x','message':{'role':'assistant','content':null,'provider':'p'}},"
		  "{'type':'message','id':'r','parentId':'a','timestamp':'x','message':{'role':'toolResult','toolCallId':'c'}},"
		  "{'type':'message','id':'b','parentId':'r','timestamp':'x','message':{'role':'bashExecution','command':'ls'}}]",
		  "{'messages':[{'role':'system','content':'','sections':{}},"
		  "{'role':'user','timestamp':1,'content':[]},"
		  "{'role':'assistant','content':[],'provider':'p'},"
		  "{'role':'toolResult','toolCallId':'c','content':[]},"
		  "{'role':'bashExecution','command':'ls'}],"
		  "'thinkingLevel':'off','model':{'provider':'p'}}");
}
END_TEST

START_TEST(test_custom_message)
{
	check_ctx("[{'type':'custom_message','id':'c','parentId':null,'timestamp':'2024-12-03T14:10:00.000Z','customType':'ext','display':false}]",
		  "{'messages':[{'role':'custom','customType':'ext','content':[],'display':false,'timestamp':" T10 "}],'thinkingLevel':'off','model':null}");
	check_ctx("[{'type':'custom_message','id':'c','parentId':null,'timestamp':'2024-12-03T14:10:00.000Z','details':{'k':1},'content':'hi','customType':'ext'}]",
		  "{'messages':[{'role':'custom','customType':'ext','content':'hi','details':{'k':1},'timestamp':" T10 "}],'thinkingLevel':'off','model':null}");
	/* plain custom entries and labels are not context */
	check_ctx("[{'type':'custom','id':'c','parentId':null,'timestamp':'x','customType':'ext','data':{}},"
		  "{'type':'label','id':'l','parentId':'c','timestamp':'x','targetId':'c','label':'x'}]",
		  "{'messages':[],'thinkingLevel':'off','model':null}");
}
END_TEST

START_TEST(test_branch_summary)
{
	check_ctx("[{'type':'branch_summary','id':'b','parentId':null,'timestamp':'2024-12-03T14:10:00.000Z','fromId':'f','summary':''}]",
		  "{'messages':[],'thinkingLevel':'off','model':null}");
	check_ctx("[{'type':'branch_summary','id':'b','parentId':null,'timestamp':'2024-12-03T14:10:00.000Z','summary':'went left','fromId':'f'}]",
		  "{'messages':[{'role':'branchSummary','summary':'went left','fromId':'f','timestamp':" T10 "}],'thinkingLevel':'off','model':null}");
}
END_TEST

START_TEST(test_bad_timestamp_is_null)
{
	check_ctx("[{'type':'branch_summary','id':'b','parentId':null,'timestamp':'yesterday','summary':'s'},"
		  "{'type':'branch_summary','id':'c','parentId':'b','summary':'t'},"
		  "{'type':'branch_summary','id':'d','parentId':'c','timestamp':1733235000000.7,'summary':'u'},"
		  "{'type':'branch_summary','id':'e','parentId':'d','timestamp':null,'summary':'v'}]",
		  "{'messages':[{'role':'branchSummary','summary':'s','timestamp':null},"
		  "{'role':'branchSummary','summary':'t','timestamp':null},"
		  "{'role':'branchSummary','summary':'u','timestamp':" T10 "},"
		  "{'role':'branchSummary','summary':'v','timestamp':0}],'thinkingLevel':'off','model':null}");
}
END_TEST

#define SYS "{'type':'message','id':'s','parentId':null,'timestamp':'x','message':{'role':'system','content':'prompt'}}"
#define U1S "{'type':'message','id':'u1','parentId':'s','timestamp':'x','message':{'role':'user','content':'one','timestamp':1}}"

START_TEST(test_no_compaction_keeps_system)
{
	check_ctx("[" SYS "," U1S "]",
		  "{'messages':[{'role':'system','content':'prompt'}," MU1 "],'thinkingLevel':'off','model':null}");
}
END_TEST

START_TEST(test_compaction_first_kept)
{
	/* kept range from firstKeptEntryId, system message skipped, the
	 * compaction's own systemMessage before its summary */
	check_ctx("[" U1 "," A1 "," SYS "," U2 "," A2 ","
		  "{'type':'compaction','id':'c','parentId':'a2','timestamp':'2024-12-03T14:10:00.000Z','summary':'sum','firstKeptEntryId':'a1','tokensBefore':500,"
		  "'systemMessage':{'role':'system','content':'fresh'}},"
		  "{'type':'message','id':'u3','parentId':'c','timestamp':'x','message':{'role':'user','content':'three'}}]",
		  "{'messages':[{'role':'system','content':'fresh'},"
		  "{'role':'compactionSummary','summary':'sum','tokensBefore':500,'timestamp':" T10 "},"
		  MA1 "," MU2 "," MA2 ",{'role':'user','content':'three'}],'thinkingLevel':'off'," CLAUDE "}");
}
END_TEST

START_TEST(test_compaction_first_kept_missing)
{
	/* a firstKeptEntryId not on the path keeps nothing before it */
	check_ctx("[" U1 "," A1 ",{'type':'compaction','id':'c','parentId':'a1','timestamp':'2024-12-03T14:10:00.000Z','summary':'sum','firstKeptEntryId':'gone','tokensBefore':1}]",
		  "{'messages':[{'role':'compactionSummary','summary':'sum','tokensBefore':1,'timestamp':" T10 "}],'thinkingLevel':'off'," CLAUDE "}");
}
END_TEST

START_TEST(test_older_compaction_in_kept_range)
{
	/* only the newest compaction (index 0) speaks; the older one inside
	 * its kept range contributes nothing, not even a summary */
	check_ctx("[" U1 ",{'type':'compaction','id':'c1','parentId':'u1','timestamp':'x','summary':'old','firstKeptEntryId':'u1','tokensBefore':1,'systemMessage':{'role':'system','content':'old'}},"
		  "{'type':'message','id':'u2','parentId':'c1','timestamp':'x','message':" MU2 "},"
		  "{'type':'compaction','id':'c2','parentId':'u2','timestamp':'2024-12-03T14:10:00.000Z','summary':'new','firstKeptEntryId':'c1','tokensBefore':2}]",
		  "{'messages':[{'role':'compactionSummary','summary':'new','tokensBefore':2,'timestamp':" T10 "}," MU2 "],'thinkingLevel':'off','model':null}");
}
END_TEST

START_TEST(test_compaction_retained_tail)
{
	/* a checkpoint: nothing before it, firstKeptEntryId ignored, the tail
	 * after the summary, later entries as usual */
	check_ctx("[" SYS "," U1S "," A1 ","
		  "{'type':'compaction','id':'c','parentId':'a1','timestamp':'2024-12-03T14:10:00.000Z','summary':'sum','firstKeptEntryId':'u1','tokensBefore':7,"
		  "'systemMessage':{'role':'system','content':'fresh'},'retainedTail':[" MU2 "," MA2 "]},"
		  "{'type':'message','id':'u3','parentId':'c','timestamp':'x','message':{'role':'user','content':'three'}}]",
		  "{'messages':[{'role':'system','content':'fresh'},"
		  "{'role':'compactionSummary','summary':'sum','tokensBefore':7,'timestamp':" T10 "},"
		  MU2 "," MA2 ",{'role':'user','content':'three'}],'thinkingLevel':'off'," CLAUDE "}");
	/* an empty tail is still a checkpoint; a non-array one is ignored */
	check_ctx("[" U1 ",{'type':'compaction','id':'c','parentId':'u1','timestamp':'x','summary':'s','firstKeptEntryId':'u1','retainedTail':[]}]",
		  "{'messages':[{'role':'compactionSummary','summary':'s','timestamp':null}],'thinkingLevel':'off','model':null}");
	check_ctx("[" U1 ",{'type':'compaction','id':'c','parentId':'u1','timestamp':'x','summary':'s','firstKeptEntryId':'u1','retainedTail':null}]",
		  "{'messages':[{'role':'compactionSummary','summary':'s','timestamp':null}," MU1 "],'thinkingLevel':'off','model':null}");
}
END_TEST

#define EDIT(id, parent, target, repl) \
	"{'type':'context_edit','id':'" id "','parentId':'" parent "','timestamp':'x','targetId':'" target "','replacement':" repl "}"

START_TEST(test_context_edit_replace)
{
	/* string content stays a string for users, becomes a text part for
	 * assistants; the latest edit of a target wins */
	check_ctx("[" U1 "," A1 "," EDIT("e1", "a1", "u1", "{'content':'first'}") ","
		  EDIT("e2", "e1", "u1", "{'content':'ONE'}") "," EDIT("e3", "e2", "a1", "{'content':'R1'}") "]",
		  "{'messages':[{'role':'user','content':'ONE','timestamp':1},"
		  "{'role':'assistant','content':[{'type':'text','text':'R1'}],'provider':'anthropic','model':'claude','usage':{'input':3,'cost':{'total':0.5}},'timestamp':2}],"
		  "'thinkingLevel':'off'," CLAUDE "}");
}
END_TEST

START_TEST(test_context_edit_null_drops)
{
	check_ctx("[" U1 "," A1 "," U2 "," EDIT("e", "u2", "a1", "null") "]",
		  "{'messages':[" MU1 "," MU2 "],'thinkingLevel':'off'," CLAUDE "}");
}
END_TEST

START_TEST(test_context_edit_roles)
{
	/* toolResult gets a text part, custom keeps the string, system and
	 * branch summaries are left alone, no content means undefined */
	check_ctx("[{'type':'message','id':'r','parentId':null,'timestamp':'x','message':{'role':'toolResult','toolCallId':'c','content':[]}},"
		  "{'type':'custom_message','id':'m','parentId':'r','timestamp':'x','customType':'t','content':'c'},"
		  SYS ",{'type':'branch_summary','id':'b','parentId':'s','timestamp':'x','summary':'s'},"
		  "{'type':'message','id':'u','parentId':'b','timestamp':'x','message':{'role':'user','content':'gone','x':1}},"
		  EDIT("e1", "u", "r", "{'content':'T'}") "," EDIT("e2", "e1", "m", "{'content':'M'}") ","
		  EDIT("e3", "e2", "s", "{'content':'S'}") "," EDIT("e4", "e3", "b", "{'content':'B'}") ","
		  EDIT("e5", "e4", "u", "{}") "]",
		  "{'messages':[{'role':'toolResult','toolCallId':'c','content':[{'type':'text','text':'T'}]},"
		  "{'role':'custom','customType':'t','content':'M','timestamp':null},"
		  "{'role':'system','content':'prompt'},"
		  "{'role':'branchSummary','summary':'s','timestamp':null},"
		  "{'role':'user','x':1}],'thinkingLevel':'off','model':null}");
}
END_TEST

START_TEST(test_context_edit_outside_context_ignored)
{
	/* an edit before the compaction's kept range is not a context entry,
	 * so it does not apply; array content replaces as given */
	check_ctx("[" U1 "," EDIT("e1", "u1", "u2", "null") "," U2 ","
		  "{'type':'compaction','id':'c','parentId':'u2','timestamp':'x','summary':'s','firstKeptEntryId':'u2'},"
		  EDIT("e2", "c", "u2", "{'content':[{'type':'text','text':'x'}]}") "]",
		  "{'messages':[{'role':'compactionSummary','summary':'s','timestamp':null},"
		  "{'role':'user','content':[{'type':'text','text':'x'}],'timestamp':3}],'thinkingLevel':'off','model':null}");
}
END_TEST

START_TEST(test_result_shares_input_values)
{
	/* copied values are the stored ones: integers stay integers */
	json_t *entry = load(U1);
	json_t *ctx = context_build(&entry, 1);
	json_t *msg;

	ck_assert_ptr_nonnull(ctx);
	msg = json_array_get(json_object_get(ctx, "messages"), 0);
	ck_assert_ptr_eq(msg, json_object_get(entry, "message"));
	ck_assert(json_is_integer(json_object_get(msg, "timestamp")));
	json_decref(ctx);
	ck_assert_int_eq(entry->refcount, 1);
	ck_assert_int_eq(json_object_get(entry, "message")->refcount, 1);
	json_decref(entry);
}
END_TEST

static double iso(const char *s, int want_ok)
{
	int ok = -1;
	double ms = jstext_iso_to_ms(s, &ok);

	ck_assert_msg(ok == want_ok, "%s: ok=%d", s, ok);
	return ms;
}

/* The form pi writes is read at fixed places (jstext_iso_canonical); the
 * same instant spelled "+00:00" takes the general parser: both agree, bit
 * for bit, over every field's range, valid or not. */
START_TEST(test_iso_canonical_as_general)
{
	unsigned seed = 20261203;
	for (int i = 0; i < 20000; i++) {
		char a[64], b[64];
		int f[7];
		static const int limit[7] = { 10000, 14, 33, 25, 61, 61, 1000 };
		for (int k = 0; k < 7; k++) {
			seed = seed * 1103515245u + 12345u;
			f[k] = (int)((seed >> 8) % (unsigned)limit[k]);
		}
		snprintf(a, sizeof a, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", f[0], f[1], f[2], f[3], f[4], f[5], f[6]);
		snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%03d+00:00", f[0], f[1], f[2], f[3], f[4], f[5], f[6]);
		int ok_a = -1, ok_b = -1;
		double ms_a = jstext_iso_to_ms(a, &ok_a), ms_b = jstext_iso_to_ms(b, &ok_b);
		ck_assert_msg(ok_a == ok_b, "%s: ok %d, as %s: %d", a, ok_a, b, ok_b);
		ck_assert_msg(!ok_a || memcmp(&ms_a, &ms_b, sizeof ms_a) == 0, "%s: %.17g, as %s: %.17g", a, ms_a, b, ms_b);
	}
}
END_TEST

START_TEST(test_iso_utc_forms)
{
	ck_assert(iso("2024-12-03T14:00:00.000Z", 1) == 1733234400000.0);
	ck_assert(iso("2024-12-03T14:00:00Z", 1) == 1733234400000.0);
	ck_assert(iso("2024-12-03T14:00Z", 1) == 1733234400000.0);
	ck_assert(iso("2024-12-03t14:00:00.000z", 1) == 1733234400000.0);
	ck_assert(iso("2024-12-03T14:00:00.5Z", 1) == 1733234400500.0);
	ck_assert(iso("2024-12-03T14:00:00.12Z", 1) == 1733234400120.0);
	ck_assert(iso("2024-12-03T14:00:00.123999Z", 1) == 1733234400123.0);
	/* V8 skips leading zeros of the fraction before taking 9 digits */
	ck_assert(iso("2024-12-03T14:00:00.0090000001Z", 1) == 1733234400090.0);
	ck_assert(iso("1970-01-01T00:00:00.000Z", 1) == 0.0);
	ck_assert(iso("1969-12-31T23:59:59.999Z", 1) == -1.0);
}
END_TEST

START_TEST(test_iso_offsets)
{
	ck_assert(iso("2024-12-03T15:00:00.000+01:00", 1) == 1733234400000.0);
	ck_assert(iso("2024-12-03T08:30:00-05:30", 1) == 1733234400000.0);
	ck_assert(iso("2024-12-03T08:30:00-0530", 1) == 1733234400000.0);
	ck_assert(iso("2024-12-03T14:00:00+23:59", 1) == 1733234400000.0 - 86340000.0);
	iso("2024-12-03T14:00:00+24:00", 0);
	iso("2024-12-03T14:00:00+05", 0);
	iso("2024-12-03T14:00:00+5:00", 0);
}
END_TEST

START_TEST(test_iso_date_only)
{
	/* date-only forms are UTC whatever the time zone */
	ck_assert(iso("2024-12-03", 1) == 1733184000000.0);
	ck_assert(iso("2024-12", 1) == 1733011200000.0);
	ck_assert(iso("2024", 1) == 1704067200000.0);
	/* day 30 of February rolls over as V8's MakeDay does */
	ck_assert(iso("2024-02-30", 1) == 1709251200000.0);
	ck_assert(iso("2024-12-03T24:00:00Z", 1) == 1733270400000.0);
	ck_assert(iso("+002024-12-03", 1) == 1733184000000.0);
	ck_assert(iso("-000001-01-01T00:00:00Z", 1) == -62198755200000.0);
	ck_assert(iso("+275760-09-13T00:00:00.000Z", 1) == 8.64e15);
	ck_assert(iso("-271821-04-20T00:00:00.000Z", 1) == -8.64e15);
}
END_TEST

START_TEST(test_iso_invalid)
{
	/* NaN to V8 as well */
	static const char *const bad[] = {
		"", "garbage", "2024-12-03T14:00:00.000Z ", "2024-13-01",
		"2024-00-01", "2024-12-32", "24-12-03", "2024-12-03T25:00Z",
		"2024-12-03T24:00:01Z", "2024-12-03T24:00:00.001Z", "2024-12-03T14:60Z",
		"2024-12-03T14:00:60Z", "2024-12-03T14:00:00.Z", "2024-12-03T14Z",
		"2024-12-03T14:00:00UTC", "2024-12-03T14:00:00Zx", "2024-12-03Tx14:00Z",
		"2024-12-03T14:00:00+24:00", "2024-12-03T14:00:00+05",
		"2024-12-03T14:00:00+5:00", "+275760-09-13T00:00:00.001Z",
		"-271821-04-19T23:59:59.999Z", "1733234400000",
	};
	/* V8's legacy fallback parser accepts these; we deliberately do not,
	 * except a space for the T, which the differential test met */
	static const char *const legacy[] = {
		" 2024-12-03", "2024-1-03", "2024-12-3",
		"2024-", "-000000-01-01", "+2024-01-01",
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		iso(bad[i], 0);
	for (size_t i = 0; i < sizeof legacy / sizeof legacy[0]; i++)
		iso(legacy[i], 0);
	iso(NULL, 0);
	ck_assert(iso("2024-12-03 14:00:00Z", 1) == 1733234400000.0);
	ck_assert(iso("2024-12-03 14:00:00.5Z", 1) == 1733234400500.0);
	ck_assert(iso("2024-12-03 14:00:00+02:00", 1) == 1733227200000.0);
}
END_TEST

/* Local-time forms depend on TZ; POSIX TZ strings need no zone files. */
static char *saved_tz;

static void tz_setup(void)
{
	const char *tz = getenv("TZ");

	saved_tz = tz ? strdup(tz) : NULL;
}

static void tz_teardown(void)
{
	if (saved_tz)
		setenv("TZ", saved_tz, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved_tz);
	saved_tz = NULL;
}

static void use_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

START_TEST(test_iso_local_time)
{
	use_tz("UTC0");
	ck_assert(iso("2024-12-03T14:00:00", 1) == 1733234400000.0);
	ck_assert(iso("2024-12-03T14:00", 1) == 1733234400000.0);
	use_tz("XXX-02");
	ck_assert(iso("2024-12-03T14:00:00", 1) == 1733227200000.0);
	/* date-only stays UTC */
	ck_assert(iso("2024-12-03", 1) == 1733184000000.0);
	use_tz("EST5EDT,M3.2.0,M11.1.0");
	ck_assert(iso("2024-12-03T14:00:00", 1) == 1733252400000.0);
	/* a skipped time takes the offset from before the jump, a repeated
	 * one its first occurrence (V8 with ICU's LOCAL_FORMER) */
	ck_assert(iso("2024-03-10T02:30:00", 1) == 1710055800000.0);
	ck_assert(iso("2024-11-03T01:30:00", 1) == 1730611800000.0);
}
END_TEST

Suite *context_suite(void)
{
	Suite *s = suite_create("context");
	TCase *build = tcase_create("build");
	TCase *dates = tcase_create("iso");

	tcase_add_test(build, test_empty_path);
	tcase_add_test(build, test_messages_copied_verbatim);
	tcase_add_test(build, test_model_from_assistant_vs_model_change);
	tcase_add_test(build, test_model_null_when_none);
	tcase_add_test(build, test_thinking_level);
	tcase_add_test(build, test_settings_scan_full_path);
	tcase_add_test(build, test_null_content_normalised);
	tcase_add_test(build, test_custom_message);
	tcase_add_test(build, test_branch_summary);
	tcase_add_test(build, test_bad_timestamp_is_null);
	tcase_add_test(build, test_no_compaction_keeps_system);
	tcase_add_test(build, test_compaction_first_kept);
	tcase_add_test(build, test_compaction_first_kept_missing);
	tcase_add_test(build, test_older_compaction_in_kept_range);
	tcase_add_test(build, test_compaction_retained_tail);
	tcase_add_test(build, test_context_edit_replace);
	tcase_add_test(build, test_context_edit_null_drops);
	tcase_add_test(build, test_context_edit_roles);
	tcase_add_test(build, test_context_edit_outside_context_ignored);
	tcase_add_test(build, test_result_shares_input_values);
	suite_add_tcase(s, build);

	tcase_add_checked_fixture(dates, tz_setup, tz_teardown);
	tcase_add_test(dates, test_iso_utc_forms);
	tcase_add_test(dates, test_iso_canonical_as_general);
	tcase_add_test(dates, test_iso_offsets);
	tcase_add_test(dates, test_iso_date_only);
	tcase_add_test(dates, test_iso_invalid);
	tcase_add_test(dates, test_iso_local_time);
	suite_add_tcase(s, dates);
	return s;
}
