#include "helpers.h"
#include "suites.h"

static uint32_t find(const struct ps_session *s, const char *id)
{
	return session_find(s, id, strlen(id));
}

START_TEST(test_session_linear_and_fork)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "hi") MSG("b", "\"a\"", "assistant", "yo")
				  MSG("c", "\"b\"", "user", "more") MSG("d", "\"b\"", "user", "other"));
	struct ps_session *s = helper_open(path);
	ck_assert_int_eq(s->n_entries, 4);
	ck_assert_int_eq(s->n_branches, 2);
	ck_assert_int_eq(s->entries[find(s, "c")].branch, 0);
	ck_assert_int_eq(s->entries[find(s, "d")].branch, 1);
	ck_assert_int_eq(s->entries[find(s, "d")].depth, 3);
	ck_assert_int_eq(s->branches[0].tip, find(s, "c"));
	ck_assert_int_eq(s->branches[1].parent, 0);
	ck_assert_int_eq(session_leaf(s), find(s, "d"));
	ck_assert_int_eq(s->n_problems, 0);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_session_incremental_append_keeps_indices)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "hi"));
	struct ps_session *s = helper_open(path);
	uint64_t gen = s->generation;
	int changed;
	/* A half-written line is not indexed until its newline arrives. */
	helper_append(path, "{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\"");
	ck_assert_int_eq(session_refresh(s, &changed), PS_OK);
	ck_assert_int_eq(s->n_entries, 1);
	helper_append(path, ",\"timestamp\":\"x\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n");
	ck_assert_int_eq(session_refresh(s, &changed), PS_OK);
	ck_assert(changed);
	ck_assert_int_eq(s->n_entries, 2);
	ck_assert_int_eq(s->generation, gen);
	ck_assert_int_eq(s->entries[1].parent, 0);
	ck_assert_int_eq(session_refresh(s, &changed), PS_OK);
	ck_assert(!changed);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_session_shrink_rebuilds)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "hi") MSG("b", "\"a\"", "user", "x"));
	struct ps_session *s = helper_open(path);
	uint64_t gen = s->generation;
	helper_rewrite(path, HDR MSG("z", "null", "user", "new"));
	ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
	ck_assert_int_ne(s->generation, gen);
	ck_assert_int_eq(s->n_entries, 1);
	ck_assert_int_eq(find(s, "a"), PS_NIL);
	ck_assert_int_eq(find(s, "z"), 0);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* A cycle needs a forward reference; forward references make orphans. */
START_TEST(test_session_cycles_and_orphans)
{
	char *path = helper_write(HDR MSG("a", "\"b\"", "user", "1") MSG("b", "\"a\"", "user", "2")
				  MSG("c", "\"c\"", "user", "self") MSG("d", "\"missing\"", "user", "orphan"));
	struct ps_session *s = helper_open(path);
	ck_assert_int_eq(s->n_entries, 4);
	ck_assert_int_eq(s->entries[find(s, "a")].parent, PS_NIL);
	ck_assert_int_eq(s->entries[find(s, "b")].parent, find(s, "a"));
	ck_assert_int_eq(s->entries[find(s, "c")].parent, PS_NIL);
	ck_assert_int_eq(s->entries[find(s, "d")].parent, PS_NIL);
	ck_assert_int_eq(s->entries[find(s, "c")].depth, 1);
	ck_assert_int_eq(s->n_branches, 3); /* a's chain, c, d */
	ck_assert_int_eq(s->n_problems, 3);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_session_duplicate_ids)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "1") MSG("a", "\"a\"", "user", "2")
				  MSG("c", "\"a\"", "user", "3"));
	struct ps_session *s = helper_open(path);
	ck_assert_int_eq(s->n_entries, 3);
	ck_assert_int_eq(find(s, "a"), 1);
	ck_assert_int_eq(s->entries[1].prev_same_id, 0);
	ck_assert_int_eq(s->entries[1].parent, 0);
	ck_assert_int_eq(s->entries[2].parent, 1);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_session_skips_bad_lines)
{
	char *path = helper_write(HDR "not json\n\n   \n[1,2]\n" MSG("a", "null", "user", "1")
				  "{\"type\":\"message\",\"parentId\":null}\n"
				  "{\"type\":\"session\",\"id\":\"again\"}\n"
				  "{\"type\":\"message\",\"id\":\"\",\"parentId\":null}\n");
	struct ps_session *s = helper_open(path);
	ck_assert(s->have_header);
	ck_assert_int_eq(s->n_entries, 1);
	ck_assert_int_eq(s->n_problems, 5);
	ck_assert_int_eq(s->problems[0].line, 2);
	ck_assert_int_eq(s->problems[1].line, 5);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_session_not_a_session)
{
	static const char *const files[] = { "", "\n", MSG("a", "null", "user", "no header"), "garbage\n" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char *path = helper_write(files[i]);
		struct ps_session *s = helper_open(path);
		ck_assert(!s->have_header);
		ck_assert_ptr_nonnull(s->not_session);
		ck_assert_int_eq(s->n_entries, 0);
		session_free(s);
		unlink(path);
		free(path);
	}
}
END_TEST

START_TEST(test_session_labels_and_name)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "1")
		"{\"type\":\"label\",\"id\":\"l1\",\"parentId\":\"a\",\"timestamp\":\"t\",\"targetId\":\"a\",\"label\":\"first\"}\n"
		"{\"type\":\"session_info\",\"id\":\"n1\",\"parentId\":\"l1\",\"timestamp\":\"t\",\"name\":\"  My name \\n\"}\n"
		"{\"type\":\"label\",\"id\":\"l2\",\"parentId\":\"n1\",\"timestamp\":\"t\",\"targetId\":\"nope\",\"label\":\"x\"}\n");
	struct ps_session *s = helper_open(path);
	ck_assert_str_eq(session_str(s, s->entries[0].label), "first");
	ck_assert_str_eq(session_str(s, s->name), "My name");
	ck_assert_int_eq(s->n_labeled, 1);
	helper_append(path, "{\"type\":\"label\",\"id\":\"l3\",\"parentId\":\"l2\",\"timestamp\":\"t\",\"targetId\":\"a\"}\n"
			    "{\"type\":\"session_info\",\"id\":\"n2\",\"parentId\":\"l3\",\"timestamp\":\"t\",\"name\":\" \"}\n");
	ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
	ck_assert_int_eq(s->entries[0].label, PS_NIL);
	ck_assert_int_eq(s->name, PS_NIL);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* What session_open_skim promises: the header, the name and the user
 * entries (offsets and kinds, in file order) of session_open, whatever
 * escapes spell them. */
static void check_skim_like_open(const char *path)
{
	struct ps_session *full = helper_open(path), *skim = NULL;
	ck_assert_int_eq(session_open_skim(path, &skim), PS_OK);
	ck_assert_int_eq(skim->have_header, full->have_header);
	if (full->have_header) {
		ck_assert_str_eq(session_str(skim, skim->session_id), session_str(full, full->session_id));
		ck_assert_int_eq(skim->header_off, full->header_off);
		ck_assert_int_eq(skim->parent_session == PS_NIL, full->parent_session == PS_NIL);
	}
	ck_assert_int_eq(skim->name == PS_NIL, full->name == PS_NIL);
	if (full->name != PS_NIL)
		ck_assert_str_eq(session_str(skim, skim->name), session_str(full, full->name));
	uint32_t j = 0;
	for (uint32_t i = 0; i < full->n_entries; i++) {
		if (strcmp(session_str(full, full->entries[i].kind), "user") != 0)
			continue;
		while (j < skim->n_entries && strcmp(session_str(skim, skim->entries[j].kind), "user") != 0)
			j++;
		ck_assert_uint_lt(j, skim->n_entries);
		ck_assert_uint_eq(skim->entries[j].off, full->entries[i].off);
		j++;
	}
	while (j < skim->n_entries)
		ck_assert_str_ne(session_str(skim, skim->entries[j++].kind), "user");
	ck_assert_uint_le(skim->n_entries, full->n_entries);
	session_free(skim);
	session_free(full);
}

START_TEST(test_session_skim)
{
	/* Names set, cleared and set again; a user message whose role and a
	 * session_info whose type are escapes; "user" and "session_info" in
	 * text that is neither; a line the scanner refuses. */
	char *path = helper_write(HDR
		"{\"type\":\"session_info\",\"id\":\"n0\",\"parentId\":null,\"timestamp\":\"t\",\"name\":\"early\"}\n"
		MSG("a", "\"n0\"", "assistant", "the \\\"user\\\" said session_info")
		"{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"t\",\"message\":{\"role\":\"us\\u0065r\",\"content\":\"escaped\"}}\n"
		MSG("c", "\"b\"", "user", "plain")
		"{\"type\":\"session_info\",\"id\":\"n1\",\"parentId\":\"c\",\"timestamp\":\"t\",\"name\":\"  \"}\n"
		"{\"type\":\"session_info\",\"id\":\"\",\"parentId\":\"c\",\"timestamp\":\"t\",\"name\":\"no id: no entry\"}\n"
		"{not json \"user\"}\n"
		"{\"type\":\"session\\u005finfo\",\"id\":\"n2\",\"parentId\":\"c\",\"timestamp\":\"t\",\"name\":\"late\"}\n"
		MSG("d", "\"n2\"", "toolResult", "user session_info"));
	check_skim_like_open(path);
	struct ps_session *skim = NULL;
	ck_assert_int_eq(session_open_skim(path, &skim), PS_OK);
	ck_assert_str_eq(session_str(skim, skim->name), "late");
	ck_assert_uint_lt(skim->n_entries, 9); /* the assistant and tool lines were not indexed */
	session_free(skim);
	unlink(path);
	free(path);
	/* Version 1 (ids from line numbers), and a file that is no session. */
	path = helper_write("{\"type\":\"session\",\"id\":\"v1\",\"timestamp\":\"t\",\"cwd\":\"/p\"}\n"
			    "{\"type\":\"message\",\"timestamp\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"a\"}}\n"
			    "{\"type\":\"message\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"b\"}}\n");
	check_skim_like_open(path);
	helper_rewrite(path, "\n{\"type\":\"message\"}\n{\"type\":\"session_info\",\"id\":\"x\",\"name\":\"n\"}\n");
	check_skim_like_open(path);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_session_v1_stable_ids)
{
	const char *text = "{\"type\":\"session\",\"id\":\"v1-sess\",\"timestamp\":\"t\",\"cwd\":\"/p\"}\n"
		"{\"type\":\"message\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n"
		"{\"type\":\"message\",\"timestamp\":\"t\",\"message\":{\"role\":\"hookMessage\",\"content\":\"b\"}}\n"
		"{\"type\":\"compaction\",\"timestamp\":\"t\",\"summary\":\"s\",\"firstKeptEntryIndex\":2,\"tokensBefore\":1}\n";
	char *path = helper_write(text);
	struct ps_session *s = helper_open(path), *again = helper_open(path);
	ck_assert_int_eq(s->version, 1);
	ck_assert_int_eq(s->n_entries, 3);
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_int_eq(strlen(session_str(s, s->entries[i].id)), 8);
		ck_assert_str_eq(session_str(s, s->entries[i].id), session_str(again, again->entries[i].id));
		ck_assert_int_eq(s->entries[i].parent, i ? i - 1 : PS_NIL);
	}
	ck_assert_str_eq(session_str(s, s->entries[1].kind), "custom");
	json_t *comp;
	ck_assert_int_eq(session_load_entry(s, 2, &comp), PS_OK);
	ck_assert_str_eq(json_string_value(json_object_get(comp, "firstKeptEntryId")), session_str(s, s->entries[1].id));
	ck_assert_ptr_null(json_object_get(comp, "firstKeptEntryIndex"));
	ck_assert_str_eq(json_string_value(json_object_get(comp, "parentId")), session_str(s, s->entries[1].id));
	json_decref(comp);
	json_t *hook;
	ck_assert_int_eq(session_load_entry(s, 1, &hook), PS_OK);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(hook, "message"), "role")), "custom");
	json_decref(hook);
	session_free(s);
	session_free(again);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_session_parse_line_like_pi)
{
	/* Invalid UTF-8 decodes with U+FFFD; huge integers become reals; NUL
	 * escapes are kept. */
	const char bad_utf8[] = "{\"t\":\"a\xff" "b\"}";
	json_t *v = session_parse_line(bad_utf8, sizeof bad_utf8 - 1);
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(json_string_value(json_object_get(v, "t")), "a\xef\xbf\xbd" "b");
	json_decref(v);
	const char *big = "{\"n\":123456789012345678901234567890}";
	v = session_parse_line(big, strlen(big));
	ck_assert_ptr_nonnull(v);
	ck_assert(json_is_real(json_object_get(v, "n")));
	json_decref(v);
	const char *nul = "{\"t\":\"a\\u0000b\"}";
	v = session_parse_line(nul, strlen(nul));
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(json_string_length(json_object_get(v, "t")), 3);
	json_decref(v);
	ck_assert_ptr_null(session_parse_line("[1]", 3));
}
END_TEST

Suite *session_suite(void)
{
	Suite *s = suite_create("session");
	TCase *tc = tcase_create("session");
	tcase_add_test(tc, test_session_linear_and_fork);
	tcase_add_test(tc, test_session_incremental_append_keeps_indices);
	tcase_add_test(tc, test_session_shrink_rebuilds);
	tcase_add_test(tc, test_session_cycles_and_orphans);
	tcase_add_test(tc, test_session_duplicate_ids);
	tcase_add_test(tc, test_session_skips_bad_lines);
	tcase_add_test(tc, test_session_not_a_session);
	tcase_add_test(tc, test_session_labels_and_name);
	tcase_add_test(tc, test_session_v1_stable_ids);
	tcase_add_test(tc, test_session_skim);
	tcase_add_test(tc, test_session_parse_line_like_pi);
	suite_add_tcase(s, tc);
	return s;
}
