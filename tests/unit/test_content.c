/* content.c: a generated file's size, memoized between stats, must stay the
 * length of its content as the session grows (a stale size makes readers
 * stop early or read NULs). */
#include <glob.h>
#include "helpers.h"
#include "layout.h"
#include "content.h"
#include "suites.h"

/* Every generated file (context.json, transcript.md, usage.json, tree.txt) of every
 * tree directory: its size, asked twice and as known, is its content's
 * length; with path, the content is also what a session opened afresh
 * shows (the kept one goes through the memoized sizes and the stash). */
static void check_generated(struct ps_session *kept, const char *path)
{
	static const enum layout_kind kinds[] = { LAYOUT_CONTEXT, LAYOUT_TRANSCRIPT, LAYOUT_USAGE, LAYOUT_TREE_TXT };
	struct ps_session *fresh = path ? helper_open(path) : NULL;
	if (fresh)
		ck_assert_uint_eq(kept->n_branches, fresh->n_branches);
	/* The branches, then the session directory. */
	for (uint32_t b = 0; b <= kept->n_branches; b++) {
		for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
			struct layout_node node = { .kind = kinds[k], .branch = b < kept->n_branches ? b : 0,
						    .session_root = b == kept->n_branches };
			uint64_t size = 0, again = 0, known = 0;
			char *text = NULL, *want = NULL;
			size_t len = 0, want_len = 0;
			ck_assert_int_eq(content_size(kept, &node, &size), PS_OK);
			ck_assert_int_eq(content_size(kept, &node, &again), PS_OK);
			ck_assert_uint_eq(size, again);
			ck_assert_int_eq(content_size_known(kept, &node, &known), 1);
			ck_assert_uint_eq(size, known);
			ck_assert_int_eq(content_build(kept, &node, &text, &len), PS_OK);
			ck_assert_uint_eq(size, len);
			if (fresh) {
				ck_assert_int_eq(content_build(fresh, &node, &want, &want_len), PS_OK);
				ck_assert_uint_eq(len, want_len);
				ck_assert(memcmp(text, want, len) == 0);
			}
			free(text);
			free(want);
		}
	}
	if (fresh)
		session_free(fresh);
}

START_TEST(test_view_follows_growth)
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
		check_generated(s, NULL);
		helper_append(path, line);
		ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
		check_generated(s, path);
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

/* Context texts are kept within the budget over all sessions; past it,
 * they are still served, just not kept, and a freed session gives its
 * bytes back. */
START_TEST(test_view_context_budget)
{
	const char *path = "tests/data/fixtures/pi-1.6.0-v3-branched.jsonl";
	size_t before = content_contexts_held();
	content_set_context_budget(before + 25000);
	struct ps_session *a = helper_open(path), *b = helper_open(path);
	for (int round = 0; round < 2; round++) {
		for (uint32_t br = 0; br < a->n_branches; br++) {
			struct layout_node node = { .kind = LAYOUT_CONTEXT, .branch = br };
			char *x = NULL, *y = NULL;
			size_t xl = 0, yl = 0;
			ck_assert_int_eq(content_build(a, &node, &x, &xl), PS_OK);
			ck_assert_int_eq(content_build(b, &node, &y, &yl), PS_OK);
			ck_assert_uint_eq(xl, yl);
			ck_assert(memcmp(x, y, xl) == 0);
			ck_assert_uint_le(content_contexts_held(), before + 25000);
			free(x);
			free(y);
		}
	}
	ck_assert_uint_gt(content_contexts_held(), before);
	session_free(a);
	session_free(b);
	ck_assert_uint_eq(content_contexts_held(), before);
	content_set_context_budget(CONTENT_CONTEXT_BUDGET);
}
END_TEST

/* A file rewritten in place with other text is indexed anew: no size
 * remembered from the old text may survive. */
START_TEST(test_view_sizes_after_rebuild)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "first words") MSG("b", "\"a\"", "user", "x"));
	struct ps_session *s = helper_open(path);
	check_generated(s, NULL);
	helper_rewrite(path, HDR MSG("a", "null", "user", "other, much longer first words") MSG("b", "\"a\"", "user", "y"));
	ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
	ck_assert_uint_gt(s->generation, 1);
	check_generated(s, path);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* Sized in batches off the lock (as the sizer threads do), every entry
 * file has the size a stat rendering it alone finds. */
static void check_batches(const char *path)
{
	struct ps_session *batched = helper_open(path), *alone = helper_open(path);
	struct content_batch b = { 0 };
	uint32_t next = 0, taken = 0;

	while (next < batched->n_entries) {
		ck_assert_int_eq(content_batch_take(batched, &next, batched->n_entries, 4096, &b), PS_OK);
		taken += b.n;
		content_batch_render(&b);
		content_batch_keep(batched, &b);
		content_batch_clear(&b);
	}
	ck_assert_uint_eq(taken, batched->version >= 3 ? batched->n_entries : 0);
	for (uint32_t e = 0; e < alone->n_entries; e++) {
		struct layout_node node = { .kind = LAYOUT_ENTRY, .entry = e, .branch = alone->entries[e].branch };
		uint64_t size;
		ck_assert_int_eq(content_size(alone, &node, &size), PS_OK);
		if (batched->version >= 3)
			ck_assert_uint_eq(batched->entries[e].md_size, size + 1);
	}
	session_free(batched);
	session_free(alone);
}

START_TEST(test_view_batches_size_as_stat_does)
{
	glob_t g;
	ck_assert_int_eq(glob("docs/examples/store/*/*.jsonl", 0, NULL, &g), 0);
	ck_assert_uint_gt(g.gl_pathc, 1);
	for (size_t i = 0; i < g.gl_pathc; i++)
		check_batches(g.gl_pathv[i]);
	globfree(&g);
	check_batches("tests/data/fixtures/pi-1.6.0-v3-branched.jsonl");
	check_batches("tests/data/fixtures/pi-v1-large-session.jsonl");
}
END_TEST

/* A line the scanner takes and jansson cannot decode (a number beyond the
 * doubles) is left to the stat, which shows it as unreadable: the batch
 * keeps no size for it, and sizes the lines around it. */
START_TEST(test_view_batch_leaves_unreadable)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "before")
		"{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"n\":1e400,"
		"\"message\":{\"role\":\"user\",\"content\":\"x\",\"timestamp\":1}}\n"
		MSG("c", "\"b\"", "user", "after"));
	struct ps_session *s = helper_open(path);
	struct content_batch b = { 0 };
	uint32_t next = 0;
	ck_assert_uint_eq(s->n_entries, 3);
	ck_assert_int_eq(content_batch_take(s, &next, s->n_entries, 4096, &b), PS_OK);
	ck_assert_uint_eq(b.n, 3);
	content_batch_render(&b);
	content_batch_keep(s, &b);
	content_batch_clear(&b);
	ck_assert_uint_ne(s->entries[0].md_size, 0);
	ck_assert_uint_eq(s->entries[1].md_size, 0);
	ck_assert_uint_ne(s->entries[2].md_size, 0);
	struct layout_node node = { .kind = LAYOUT_ENTRY, .entry = 1, .branch = s->entries[1].branch };
	uint64_t size;
	char *text;
	size_t len;
	ck_assert_int_eq(content_size(s, &node, &size), PS_OK);
	ck_assert_int_eq(content_build(s, &node, &text, &len), PS_OK);
	ck_assert_uint_eq(size, len);
	ck_assert_ptr_nonnull(strstr(text, "unreadable: true"));
	free(text);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* A batch taken before the file was rewritten keeps nothing. */
START_TEST(test_view_batch_after_rebuild)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "first words"));
	struct ps_session *s = helper_open(path);
	struct content_batch b = { 0 };
	uint32_t next = 0;
	ck_assert_int_eq(content_batch_take(s, &next, s->n_entries, 4096, &b), PS_OK);
	ck_assert_uint_eq(b.n, 1);
	content_batch_render(&b);
	helper_rewrite(path, HDR MSG("a", "null", "user", "other, much longer first words"));
	ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
	content_batch_keep(s, &b);
	content_batch_clear(&b);
	ck_assert_uint_eq(s->entries[0].md_size, 0);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

Suite *content_suite(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("sizes");
	tcase_add_test(tc, test_view_follows_growth);
	tcase_add_test(tc, test_view_sizes_after_rebuild);
	tcase_add_test(tc, test_view_context_budget);
	tcase_add_test(tc, test_view_batches_size_as_stat_does);
	tcase_add_test(tc, test_view_batch_after_rebuild);
	tcase_add_test(tc, test_view_batch_leaves_unreadable);
	suite_add_tcase(s, tc);
	return s;
}
