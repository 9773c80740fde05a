/* usagedays.c (usage over time): the day of each usage (UTC, an entry
 * without a timestamp on the latest day before it), dates across leap
 * years, months and the epoch, the CSV files' rows, a blob that is not
 * one, and the SVG's escaping of model names. */
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "suites.h"
#include "usagedays.h"

#define A(id, ts, model, input, cost)                                                                              \
	"{\"type\":\"message\",\"id\":\"" id "\",\"parentId\":null" ts ",\"message\":{\"role\":\"assistant\","     \
	"\"content\":[],\"provider\":\"p\",\"model\":\"" model "\",\"usage\":{\"input\":" #input ",\"output\":1,"   \
	"\"cacheRead\":2,\"cacheWrite\":3,\"totalTokens\":" #input ",\"cost\":{\"total\":" #cost "}}}}\n"
#define T(iso) ",\"timestamp\":\"" iso "\""

/* The text of file over the sessions (NULL-terminated). */
static char *days_of(enum usagedays_file file, const char *const *texts)
{
	struct usagedays *t;
	struct buf out = BUF_INIT, blob = BUF_INIT;
	ck_assert_int_eq(usagedays_new(&t), PS_OK);
	for (size_t i = 0; texts[i]; i++) {
		char *path = helper_write(texts[i]);
		struct ps_session *s = helper_open(path);
		blob.len = 0;
		ck_assert_int_eq(usagedays_session_blob(s, &blob), PS_OK);
		ck_assert_int_eq(usagedays_add(t, blob.data, blob.len), PS_OK);
		session_free(s);
		unlink(path);
		free(path);
	}
	ck_assert_int_eq(usagedays_write(t, file, "a <title> & more", &out), PS_OK);
	ck_assert_int_eq(buf_finish(&out), 0);
	usagedays_free(t);
	buf_free(&blob);
	return out.data;
}

static const char *const sessions[] = {
	HDR A("a", T("2024-02-29T23:59:59.999Z"), "m1", 10, 0.5)
	    /* no timestamp: the day of the entry before it */
	    A("b", "", "m2", 20, 0.25)
	    A("c", T("2024-03-01T00:00:00.000Z"), "m1", 30, 1)
	    A("d", T("1969-12-31T12:00:00.000Z"), "a<&\\\"b", 1, 0.125),
	HDR A("e", T("2025-01-01T00:00:00.000Z"), "m1", 5, 2)
	    A("f", T("2024-12-31T23:00:00.000Z"), "m1", 6, 0.001),
	/* usage before any timestamp: undated */
	HDR A("g", "", "m3", 7, 0.01),
	NULL,
};

START_TEST(test_usagedays_daily)
{
	char *text = days_of(USAGEDAYS_DAILY, sessions);
	ck_assert_str_eq(text, "date,modelsUsed,inputTokens,outputTokens,cacheCreationTokens,cacheReadTokens,totalTokens,totalCost\n"
			       "1969-12-31,\"a<&\"\"b\",1,1,3,2,1,0.13\n"
			       "2024-02-29,m1;m2,30,2,6,4,30,0.75\n"
			       "2024-03-01,m1,30,1,3,2,30,1.00\n"
			       "2024-12-31,m1,6,1,3,2,6,0.00\n"
			       "2025-01-01,m1,5,1,3,2,5,2.00\n"
			       ",m3,7,1,3,2,7,0.01\n");
	free(text);
}
END_TEST

START_TEST(test_usagedays_monthly_and_models)
{
	char *text = days_of(USAGEDAYS_MONTHLY, sessions);
	ck_assert_str_eq(text, "month,modelsUsed,inputTokens,outputTokens,cacheCreationTokens,cacheReadTokens,totalTokens,totalCost\n"
			       "1969-12,\"a<&\"\"b\",1,1,3,2,1,0.13\n"
			       "2024-02,m1;m2,30,2,6,4,30,0.75\n"
			       "2024-03,m1,30,1,3,2,30,1.00\n"
			       "2024-12,m1,6,1,3,2,6,0.00\n"
			       "2025-01,m1,5,1,3,2,5,2.00\n"
			       ",m3,7,1,3,2,7,0.01\n");
	free(text);
	text = days_of(USAGEDAYS_DAILY_MODELS, sessions);
	ck_assert_str_eq(text, "date,modelName,inputTokens,outputTokens,cacheCreationTokens,cacheReadTokens,totalTokens,cost\n"
			       "1969-12-31,\"a<&\"\"b\",1,1,3,2,1,0.13\n"
			       "2024-02-29,m1,10,1,3,2,10,0.50\n"
			       "2024-02-29,m2,20,1,3,2,20,0.25\n"
			       "2024-03-01,m1,30,1,3,2,30,1.00\n"
			       "2024-12-31,m1,6,1,3,2,6,0.00\n"
			       "2025-01-01,m1,5,1,3,2,5,2.00\n"
			       ",m3,7,1,3,2,7,0.01\n");
	free(text);
}
END_TEST

START_TEST(test_usagedays_svg)
{
	char *text = days_of(USAGEDAYS_SVG, sessions);
	ck_assert_ptr_nonnull(strstr(text, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	ck_assert_ptr_nonnull(strstr(text, "a &lt;title&gt; &amp; more, total $3.89</text>"));
	ck_assert_ptr_nonnull(strstr(text, ">a&lt;&amp;&quot;b $0.13</text>"));
	ck_assert_ptr_null(strstr(text, "a<&"));
	/* five dated days: a bar of one model each, but one of two */
	size_t rects = 0;
	for (const char *p = strstr(text, "<g id=\"bars\""); (p = strstr(p + 1, "<rect "));)
		rects++;
	ck_assert_uint_eq(rects, 6 + 3); /* the bars' 6 and the legend's 3 (m3 is undated) */
	ck_assert_str_eq(text + strlen(text) - 7, "</svg>\n");
	free(text);
	const char *const none[] = { NULL };
	text = days_of(USAGEDAYS_SVG, none);
	ck_assert_ptr_nonnull(strstr(text, ">no usage</text>"));
	free(text);
}
END_TEST

START_TEST(test_usagedays_bad_blob)
{
	struct usagedays *t;
	ck_assert_int_eq(usagedays_new(&t), PS_OK);
	ck_assert_int_eq(usagedays_add(t, "short", 5), PS_ERR_INVALID);
	ck_assert_int_eq(usagedays_add(t, "", 0), PS_OK);
	usagedays_free(t);
}
END_TEST

Suite *usagedays_suite(void)
{
	Suite *s = suite_create("usagedays");
	TCase *tc = tcase_create("usagedays");
	tcase_add_test(tc, test_usagedays_daily);
	tcase_add_test(tc, test_usagedays_monthly_and_models);
	tcase_add_test(tc, test_usagedays_svg);
	tcase_add_test(tc, test_usagedays_bad_blob);
	suite_add_tcase(s, tc);
	return s;
}
