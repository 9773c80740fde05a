/* append.c: what reaches the session file.  One call appends exactly its
 * items, in one complete line each, hung where asked; a refused call leaves
 * the file byte-identical and says why; an index generation that no longer
 * holds writes nothing. */
#include <ctype.h>
#include <jansson.h>
#include <string.h>
#include "append.h"
#include "helpers.h"
#include "suites.h"

static json_t *user_message(const char *text)
{
	json_t *e = json_pack("{s:s,s:{s:s,s:s,s:i}}", "type", "message", "message", "role", "user", "content", text,
			      "timestamp", 1);
	ck_assert_ptr_nonnull(e);
	return e;
}

/* The last line of the file, parsed. */
static json_t *last_line(const char *path)
{
	size_t n;
	char *data = helper_slurp(path, &n);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(data[n - 1], '\n');
	data[n - 1] = '\0';
	char *nl = strrchr(data, '\n');
	json_t *v = json_loads(nl ? nl + 1 : data, 0, NULL);
	ck_assert_ptr_nonnull(v);
	free(data);
	return v;
}

static int is_hex_id(const char *id)
{
	if (!id || strlen(id) != 8)
		return 0;
	for (const char *p = id; *p; p++)
		if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p))
			return 0;
	return 1;
}

/* A session file and its index, for one test. */
struct fixture {
	char *path;
	struct ps_session *s;
};

static struct fixture fixture_open(const char *text)
{
	struct fixture f = { helper_write(text), NULL };
	f.s = helper_open(f.path);
	return f;
}

static void fixture_close(struct fixture *f)
{
	session_free(f->s);
	unlink(f->path);
	free(f->path);
}

/* The file holds exactly before[0..len): a refused call wrote nothing. */
static void assert_file_is(const char *path, const char *before, size_t len)
{
	size_t after_len;
	char *after = helper_slurp(path, &after_len);
	ck_assert_uint_eq(after_len, len);
	ck_assert_int_eq(memcmp(before, after, len), 0);
	free(after);
}

START_TEST(test_append_one_under_leaf)
{
	struct fixture f = fixture_open(HDR MSG("a1", "null", "user", "hi") MSG("a2", "\"a1\"", "assistant", "hello"));
	struct ps_session *s = f.s;
	const char *path = f.path;
	size_t before_len;
	char *before = helper_slurp(path, &before_len);
	json_t *e = user_message("next");
	struct append_item item = { .entry = e, .parent = APPEND_PARENT_LEAF, .ref = 0 };
	struct append_error err = { 0 };
	ck_assert_int_eq(append_items(s, s->generation, &item, 1, &err), PS_OK);

	/* exactly one line more, after the old bytes untouched */
	size_t after_len;
	char *after = helper_slurp(path, &after_len);
	ck_assert_uint_gt(after_len, before_len);
	ck_assert_int_eq(memcmp(before, after, before_len), 0);
	ck_assert_ptr_null(memchr(after + before_len, '\n', after_len - before_len - 1));
	ck_assert_int_eq(after[after_len - 1], '\n');

	json_t *line = last_line(path);
	const char *id = json_string_value(json_object_get(line, "id"));
	ck_assert_msg(is_hex_id(id), "id %s", id ? id : "(none)");
	ck_assert_str_eq(json_string_value(json_object_get(line, "parentId")), "a2");
	const char *ts = json_string_value(json_object_get(line, "timestamp"));
	ck_assert_ptr_nonnull(ts);
	ck_assert_uint_eq(strlen(ts), 24);
	ck_assert_int_eq(ts[10], 'T');
	ck_assert_int_eq(ts[23], 'Z');
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(line, "message"), "content")), "next");

	/* the index already holds it: it is the new leaf */
	ck_assert_uint_eq(s->n_entries, 3);
	ck_assert_str_eq(session_str(s, s->entries[session_leaf(s)].id), id);
	json_decref(line);
	json_decref(e);
	free(after);
	free(before);
	fixture_close(&f);
}
END_TEST

START_TEST(test_append_batch_chains)
{
	struct fixture f = fixture_open(HDR MSG("a1", "null", "user", "hi"));
	struct ps_session *s = f.s;
	const char *path = f.path;
	json_t *x = user_message("x"), *y = user_message("y");
	struct append_item items[2] = {
		{ .entry = x, .parent = APPEND_PARENT_UNDER, .ref = 0 },
		{ .entry = y, .parent = APPEND_PARENT_LEAF },
	};
	struct append_error err = { 0 };
	ck_assert_int_eq(append_items(s, s->generation, items, 2, &err), PS_OK);
	ck_assert_uint_eq(s->n_entries, 3);
	/* the second hangs under the first of the same write */
	ck_assert_uint_eq(s->entries[1].parent, 0);
	ck_assert_uint_eq(s->entries[2].parent, 1);
	json_t *second = last_line(path);
	ck_assert_str_eq(json_string_value(json_object_get(second, "parentId")), session_str(s, s->entries[1].id));
	ck_assert_str_ne(session_str(s, s->entries[1].id), session_str(s, s->entries[2].id));
	json_decref(second);
	json_decref(x);
	json_decref(y);
	fixture_close(&f);
}
END_TEST

START_TEST(test_append_sibling_of_edit)
{
	struct fixture f = fixture_open(HDR MSG("a1", "null", "user", "hi") MSG("a2", "\"a1\"", "assistant", "hello"));
	struct ps_session *s = f.s;
	const char *path = f.path;
	json_t *e = user_message("edited");
	struct append_item item = { .entry = e, .parent = APPEND_PARENT_SIBLING, .ref = 1 };
	struct append_error err = { 0 };
	ck_assert_int_eq(append_items(s, s->generation, &item, 1, &err), PS_OK);
	json_t *line = last_line(path);
	ck_assert_str_eq(json_string_value(json_object_get(line, "parentId")), "a1");
	ck_assert_uint_eq(s->n_branches, 2); /* a fork: the edit is a new branch */
	json_decref(line);
	json_decref(e);
	fixture_close(&f);
}
END_TEST

/* Refusals write nothing and say why. */
static void expect_refused(const char *entry_json, enum append_parent parent, uint32_t ref, const char *why_part)
{
	struct fixture f = fixture_open(HDR MSG("a1", "null", "user", "hi"));
	struct ps_session *s = f.s;
	const char *path = f.path;
	size_t before_len;
	char *before = helper_slurp(path, &before_len);
	json_t *e = json_loads(entry_json, 0, NULL);
	ck_assert_ptr_nonnull(e);
	struct append_item item = { .entry = e, .parent = parent, .ref = ref };
	struct append_error err = { 0 };
	ps_err code = append_items(s, s->generation, &item, 1, &err);
	ck_assert_int_ne(code, PS_OK);
	ck_assert_int_eq(err.code, code);
	ck_assert_msg(strstr(err.why, why_part) != NULL, "why: %s", err.why);
	assert_file_is(path, before, before_len);
	ck_assert_uint_eq(s->n_entries, 1);
	json_decref(e);
	free(before);
	fixture_close(&f);
}

START_TEST(test_append_refusals_leave_file)
{
	/* a parent the session does not have */
	expect_refused("{\"type\":\"message\",\"parentId\":\"nope\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}",
		       APPEND_PARENT_GIVEN, 0, "nope");
	/* an id already used */
	expect_refused("{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"a1\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}",
		       APPEND_PARENT_GIVEN, 0, "a1");
	/* not an entry: no type */
	expect_refused("{\"message\":{\"role\":\"user\",\"content\":\"x\"}}", APPEND_PARENT_LEAF, 0, "type");
}
END_TEST

START_TEST(test_append_stale_generation)
{
	struct fixture f = fixture_open(HDR MSG("a1", "null", "user", "hi"));
	struct ps_session *s = f.s;
	const char *path = f.path;
	uint64_t generation = s->generation;
	/* the file is replaced by a shorter one: the index is rebuilt at the
	 * re-read, and what the caller resolved no longer holds */
	helper_rewrite(path, HDR);
	size_t before_len;
	char *before = helper_slurp(path, &before_len);
	json_t *e = user_message("late");
	struct append_item item = { .entry = e, .parent = APPEND_PARENT_UNDER, .ref = 0 };
	struct append_error err = { 0 };
	ck_assert_int_eq(append_items(s, generation, &item, 1, &err), PS_ERR_IO);
	assert_file_is(path, before, before_len);
	json_decref(e);
	free(before);
	fixture_close(&f);
}
END_TEST

START_TEST(test_append_fresh_id_unused)
{
	struct fixture f = fixture_open(HDR MSG("a1", "null", "user", "hi"));
	struct ps_session *s = f.s;
	for (int i = 0; i < 100; i++) {
		char id[9];
		append_fresh_id(s, id);
		ck_assert_msg(is_hex_id(id), "id %s", id);
		ck_assert_uint_eq(session_find(s, id, strlen(id)), PS_NIL);
	}
	char now[32];
	append_now_iso(now);
	ck_assert_uint_eq(strlen(now), 24);
	ck_assert_int_eq(now[4], '-');
	ck_assert_int_eq(now[19], '.');
	ck_assert_int_eq(now[23], 'Z');
	fixture_close(&f);
}
END_TEST

START_TEST(test_append_big_line_off_fuse)
{
	/* The 32 KiB limit of a store on FUSE (sshfs: docs/shared-stores.md)
	 * is not a limit of a store on a local file system: 100 KiB go in one
	 * complete line. */
	struct fixture f = fixture_open(HDR MSG("a1", "null", "user", "hi"));
	struct ps_session *s = f.s;
	size_t big = 100 * 1024;
	char *text = malloc(big + 1);
	ck_assert_ptr_nonnull(text);
	memset(text, 'b', big);
	text[big] = '\0';
	json_t *e = user_message(text);
	struct append_item item = { .entry = e, .parent = APPEND_PARENT_LEAF, .ref = 0 };
	struct append_error err = { 0 };
	ck_assert_msg(append_items(s, s->generation, &item, 1, &err) == PS_OK, "refused: %s", err.why);
	json_t *line = last_line(f.path);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(line, "message"), "content")), text);
	ck_assert_str_eq(json_string_value(json_object_get(line, "parentId")), "a1");
	ck_assert_uint_eq(s->n_entries, 2);
	json_decref(line);
	json_decref(e);
	free(text);
	fixture_close(&f);
}
END_TEST

Suite *append_suite(void)
{
	Suite *s = suite_create("append");
	TCase *tc = tcase_create("append");
	tcase_add_test(tc, test_append_one_under_leaf);
	tcase_add_test(tc, test_append_batch_chains);
	tcase_add_test(tc, test_append_sibling_of_edit);
	tcase_add_test(tc, test_append_refusals_leave_file);
	tcase_add_test(tc, test_append_stale_generation);
	tcase_add_test(tc, test_append_fresh_id_unused);
	tcase_add_test(tc, test_append_big_line_off_fuse);
	suite_add_tcase(s, tc);
	return s;
}
