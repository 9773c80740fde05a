/* view.c: a generated file's size, memoized between stats, must stay the
 * length of its content as the session grows (a stale size makes readers
 * stop early or read NULs). */
#include "helpers.h"
#include "layout.h"
#include "view.h"
#include "suites.h"

static void check_sizes(struct ps_session *s)
{
	static const enum layout_kind kinds[] = { LAYOUT_CONTEXT, LAYOUT_TRANSCRIPT, LAYOUT_USAGE };
	/* Every tree directory (branches, then the session directory). */
	for (uint32_t b = 0; b <= s->n_branches; b++) {
		for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
			struct layout_node node = { .kind = kinds[k], .branch = b < s->n_branches ? b : 0,
						    .session_root = b == s->n_branches };
			uint64_t size = 0, again = 0, known = 0;
			char *text = NULL;
			size_t len = 0;
			ck_assert_int_eq(view_size(s, &node, &size), PS_OK);
			ck_assert_int_eq(view_size(s, &node, &again), PS_OK);
			ck_assert_uint_eq(size, again);
			ck_assert_int_eq(view_size_known(s, &node, &known), 1);
			ck_assert_uint_eq(size, known);
			ck_assert_int_eq(view_content(s, &node, &text, &len), PS_OK);
			ck_assert_uint_eq(size, len);
			free(text);
		}
	}
}

START_TEST(test_view_sizes_follow_growth)
{
	FILE *in = fopen("tests/data/fixtures/pi-1.6.0-v3-branched.jsonl", "r");
	char *line = NULL;
	size_t cap = 0;
	char *path = NULL;
	struct ps_session *s = NULL;
	unsigned appends = 0;

	ck_assert_ptr_nonnull(in);
	while (getline(&line, &cap, in) > 0) {
		if (!path) {
			path = helper_write(line);
			s = helper_open(path);
			continue;
		}
		/* Sizes taken before the append, checked after it. */
		check_sizes(s);
		helper_append(path, line);
		ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
		check_sizes(s);
		appends++;
	}
	ck_assert_uint_gt(appends, 5);
	ck_assert_uint_gt(s->n_branches, 1);
	free(line);
	fclose(in);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* A file rewritten in place with other text is indexed anew: no size
 * remembered from the old text may survive. */
START_TEST(test_view_sizes_after_rebuild)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "first words") MSG("b", "\"a\"", "user", "x"));
	struct ps_session *s = helper_open(path);
	check_sizes(s);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(HDR MSG("a", "null", "user", "other, much longer first words") MSG("b", "\"a\"", "user", "y"), f);
	fclose(f);
	ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
	ck_assert_uint_gt(s->generation, 1);
	check_sizes(s);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

Suite *view_suite(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("sizes");
	tcase_add_test(tc, test_view_sizes_follow_growth);
	tcase_add_test(tc, test_view_sizes_after_rebuild);
	suite_add_tcase(s, tc);
	return s;
}
