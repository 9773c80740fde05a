#include "helpers.h"
#include "suites.h"
#include "escape.h"
#include "layout.h"

struct listing {
	char names[64][256];
	int n;
};

static int collect(void *ctx, const char *name, const struct layout_node *node)
{
	struct listing *l = ctx;
	(void)node;
	ck_assert_int_lt(l->n, 64);
	snprintf(l->names[l->n++], sizeof l->names[0], "%s", name);
	return 0;
}

static int listed(const struct listing *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0)
			return 1;
	return 0;
}

static struct listing list_dir(const struct ps_session *s, const char *rel)
{
	struct listing l = { .n = 0 };
	struct layout_node node;
	ck_assert_int_eq(layout_resolve(s, rel, &node), PS_OK);
	ck_assert_int_eq(layout_list(s, &node, collect, &l), PS_OK);
	return l;
}

#define LABEL(id, parent, target, label) \
	"{\"type\":\"label\",\"id\":\"" id "\",\"parentId\":\"" parent "\",\"timestamp\":\"t\",\"targetId\":\"" target "\",\"label\":\"" label "\"}\n"

START_TEST(test_layout_names_and_resolve)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "1") MSG("b", "\"a\"", "assistant", "2")
		"{\"type\":\"message\",\"id\":\"c\",\"parentId\":\"b\",\"timestamp\":\"t\",\"message\":{\"role\":\"toolResult\",\"toolName\":\"my/tool.x\",\"content\":[]}}\n"
		MSG("d", "\"a\"", "assistant", "fork"));
	struct ps_session *s = helper_open(path);
	struct listing root = list_dir(s, "");
	ck_assert(listed(&root, "0001-user.a.md"));
	ck_assert(listed(&root, "0002-assistant.b.md"));
	ck_assert(listed(&root, "0003-toolResult-my%2Ftool%2Ex.c.md"));
	ck_assert(listed(&root, "0002~d"));
	ck_assert(listed(&root, "context.json"));
	ck_assert(listed(&root, "leaf"));
	struct listing branch = list_dir(s, "0002~d");
	ck_assert_int_eq(branch.n, 2); /* the entry, context.json */
	ck_assert(listed(&branch, "0002-assistant.d.md"));
	ck_assert(listed(&branch, "context.json"));
	/* What repeats every entry answers by name but is not listed. */
	ck_assert(!listed(&branch, "transcript.md"));
	ck_assert(!listed(&root, "entries"));
	ck_assert(listed(&root, "transcript.md"));
	/* The whole tree is drawn once, in the session directory. */
	ck_assert(listed(&root, "tree.txt"));
	struct layout_node hidden;
	ck_assert_int_eq(layout_resolve(s, "entries", &hidden), PS_OK);
	ck_assert_int_eq(hidden.kind, LAYOUT_ENTRIES_DIR);
	ck_assert_int_eq(layout_resolve(s, "0002~d/transcript.md", &hidden), PS_OK);
	ck_assert_int_eq(hidden.kind, LAYOUT_TRANSCRIPT);
	ck_assert_int_eq(layout_resolve(s, "tree.txt", &hidden), PS_OK);
	ck_assert_int_eq(hidden.kind, LAYOUT_TREE_TXT);
	ck_assert_int_eq(layout_resolve(s, "0002~d/tree.txt", &hidden), PS_ERR_NOENT);

	struct layout_node node;
	ck_assert_int_eq(layout_resolve(s, "0002~d/0002-assistant.d.md", &node), PS_OK);
	ck_assert_int_eq(node.kind, LAYOUT_ENTRY);
	ck_assert_int_eq(node.entry, 3);
	/* Right id, wrong directory, depth or kind: not found. */
	ck_assert_int_eq(layout_resolve(s, "0002-assistant.d.md", &node), PS_ERR_NOENT);
	ck_assert_int_eq(layout_resolve(s, "0003-assistant.b.md", &node), PS_ERR_NOENT);
	ck_assert_int_eq(layout_resolve(s, "0002-user.b.md", &node), PS_ERR_NOENT);
	ck_assert_int_eq(layout_resolve(s, "0002~b", &node), PS_ERR_NOENT);
	ck_assert_int_eq(layout_resolve(s, "0002~d/context.json/x", &node), PS_ERR_NOTDIR);
	ck_assert_int_eq(layout_resolve(s, "0002~d/leaf", &node), PS_ERR_NOENT);
	char *leaf;
	ck_assert_int_eq(layout_resolve(s, "leaf", &node), PS_OK);
	leaf = layout_symlink_target(s, &node);
	ck_assert_str_eq(leaf, "0002~d/0002-assistant.d.md");
	free(leaf);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_layout_label_names_branch)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "1") MSG("b", "\"a\"", "user", "2")
		MSG("c", "\"a\"", "user", "3") MSG("d", "\"a\"", "user", "4")
		LABEL("l1", "d", "c", "try/2") LABEL("l2", "l1", "d", "try/2") LABEL("l3", "l2", "b", "main"));
	struct ps_session *s = helper_open(path);
	struct listing root = list_dir(s, "");
	/* c takes the label name; d, a later branch with the same label, keeps its id. */
	ck_assert(listed(&root, "0002~try%2F2"));
	ck_assert(listed(&root, "0002~d"));
	ck_assert(!listed(&root, "0002~c"));
	struct layout_node node;
	ck_assert_int_eq(layout_resolve(s, "0002~c/0002-user.c.md", &node), PS_OK);
	ck_assert_int_eq(layout_resolve(s, "0002~try%2F2/0002-user.c.md", &node), PS_OK);
	struct listing labels = list_dir(s, "labels");
	ck_assert_int_eq(labels.n, 3);
	ck_assert(listed(&labels, "try%2F2"));
	ck_assert(listed(&labels, "try%2F2~d"));
	ck_assert(listed(&labels, "main"));
	ck_assert_int_eq(layout_resolve(s, "labels/main", &node), PS_OK);
	char *target = layout_symlink_target(s, &node);
	ck_assert_str_eq(target, "../0002-user.b.md");
	free(target);
	ck_assert_int_eq(layout_resolve(s, "labels/try%2F2", &node), PS_OK);
	target = layout_symlink_target(s, &node);
	ck_assert_str_eq(target, "../0002~try%2F2/0002-user.c.md");
	free(target);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_layout_extra_roots_and_entries_dir)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "1") MSG("r", "null", "user", "2")
				  MSG("o", "\"gone\"", "user", "3") MSG("a", "\"a\"", "user", "dup"));
	struct ps_session *s = helper_open(path);
	struct listing root = list_dir(s, "");
	ck_assert(listed(&root, "0001~r"));
	ck_assert(listed(&root, "0001~o"));
	struct listing entries = list_dir(s, "entries");
	ck_assert(listed(&entries, "a.json"));
	ck_assert(listed(&entries, "a~2.json"));
	ck_assert(listed(&entries, "r.json"));
	struct layout_node node;
	ck_assert_int_eq(layout_resolve(s, "entries/a~2.json", &node), PS_OK);
	ck_assert_int_eq(node.entry, 0);
	ck_assert_int_eq(layout_resolve(s, "entries/a.json", &node), PS_OK);
	ck_assert_int_eq(node.entry, 3);
	ck_assert_int_eq(layout_resolve(s, "entries/a~5.json", &node), PS_ERR_NOENT);
	ck_assert_int_eq(layout_resolve(s, "entries/a~02.json", &node), PS_ERR_NOENT);
	/* The earlier duplicate is still a file of its own in the tree. */
	ck_assert_int_eq(layout_resolve(s, "0001-user.a.md", &node), PS_OK);
	ck_assert_int_eq(node.entry, 0);
	ck_assert_int_eq(layout_resolve(s, "0002-user.a.md", &node), PS_OK);
	ck_assert_int_eq(node.entry, 3);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_layout_escape_roundtrip)
{
	static const char *const raw[] = { "abc-_9", "a/b", "..", ".", "%", "~x", "new\nline", "é" };
	for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
		char *esc = escape_name(raw[i], strlen(raw[i]));
		ck_assert_ptr_null(strchr(esc, '/'));
		ck_assert_ptr_null(strchr(esc, '.'));
		size_t n = escape_unname(esc);
		ck_assert_int_eq(n, strlen(raw[i]));
		ck_assert_mem_eq(esc, raw[i], n);
		free(esc);
	}
	/* One string, one name: lower-case hex and escaped plain bytes are refused. */
	char a[] = "%2f", b[] = "%41", c[] = "a.b", d[] = "%4";
	ck_assert_int_eq(escape_unname(a), (size_t)-1);
	ck_assert_int_eq(escape_unname(b), (size_t)-1);
	ck_assert_int_eq(escape_unname(c), (size_t)-1);
	ck_assert_int_eq(escape_unname(d), (size_t)-1);
}
END_TEST

/* Names as typed (labels, branch names, views): kept but for '/',
 * control characters, "." and "..", '%' before two upper-case hex digits,
 * a name that reads like a cut one; one name per string, and a typed
 * name reads back as its string. */
START_TEST(test_layout_typed_names)
{
	static const struct { const char *raw, *name; } cases[] = {
		{ "my label", "my label" }, { "café ☕", "café ☕" }, { "a/b", "a%2Fb" }, { ".", "%2E" },
		{ "..", "%2E%2E" }, { "...", "..." }, { ".hidden", ".hidden" }, { "100%", "100%" },
		{ "50%off", "50%off" }, { "a%2Fb", "a%252Fb" }, { "%41", "%2541" }, { "%4", "%4" },
		{ "%%41", "%%2541" }, { "%/", "%%2F" }, { "tab\there", "tab%09here" }, { "v1~old", "v1~old" },
		{ "x~h0123456789abcdef", "x%7Eh0123456789abcdef" }, { "x~h0123456789ABCDEF", "x~h0123456789ABCDEF" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *name = escape_typed_name(cases[i].raw, strlen(cases[i].raw), 255);
		ck_assert_str_eq(name, cases[i].name);
		size_t n;
		char *back = escape_typed_string(name, &n);
		ck_assert_ptr_nonnull(back);
		ck_assert_str_eq(back, cases[i].raw);
		free(back);
		free(name);
	}
	/* Other spellings name no string; a typed tab is its escape. */
	static const char *const none[] = { "%41", "%2E.", "%2Eab", "tab%09here%41", "x~h0123456789abcdef" };
	for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
		size_t n;
		char *back = escape_typed_string(none[i], &n);
		ck_assert_msg(!back && n == 0, "%s names a string", none[i]);
	}
	size_t n;
	char *tab = escape_typed_string("a\tb", &n);
	ck_assert_str_eq(tab, "a\tb");
	free(tab);
	/* Long names are cut at a whole character, marked, and stay unique. */
	char long_a[600], long_b[600];
	for (int i = 0; i < 299; i++) {
		memcpy(long_a + 2 * i, "\xc3\xa9", 2);
		memcpy(long_b + 2 * i, "\xc3\xa9", 2);
	}
	memcpy(long_a + 598, "a", 2);
	memcpy(long_b + 598, "b", 2);
	char *cut_a = escape_typed_name(long_a, strlen(long_a), 255);
	char *cut_b = escape_typed_name(long_b, strlen(long_b), 255);
	ck_assert_uint_le(strlen(cut_a), 255);
	ck_assert(escape_typed_shortened(cut_a));
	ck_assert_str_ne(cut_a, cut_b);
	size_t body = strlen(cut_a) - 18;
	ck_assert_uint_eq(body % 2, 0); /* whole two-byte characters */
	free(cut_a);
	free(cut_b);
}
END_TEST

/* labels/ and branch names: as typed; a clash takes ~<id> and keeps it
 * resolving when the clash goes; a literal label holding '~' never takes
 * another entry's name; the names of before resolve. */
START_TEST(test_layout_typed_labels)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "1") MSG("b", "\"a\"", "assistant", "2")
		MSG("c", "\"a\"", "assistant", "fork") MSG("d", "\"b\"", "user", "3")
		LABEL("l1", "d", "c", "my idea") LABEL("l2", "l1", "a", "x") LABEL("l3", "l2", "b", "x~d")
		LABEL("l4", "l3", "d", "x"));
	struct ps_session *s = helper_open(path);
	struct listing root = list_dir(s, "");
	ck_assert(listed(&root, "0002~my idea"));
	struct listing labels = list_dir(s, "labels");
	ck_assert_int_eq(labels.n, 4);
	ck_assert(listed(&labels, "my idea"));
	ck_assert(listed(&labels, "x"));
	ck_assert(listed(&labels, "x~d"));    /* b's own label, typed so */
	ck_assert(listed(&labels, "x~d~L5")); /* d's second x: x~d is taken */
	struct layout_node node;
	ck_assert_int_eq(layout_resolve(s, "labels/x~d", &node), PS_OK);
	ck_assert_int_eq(node.entry, 1);
	ck_assert_int_eq(layout_resolve(s, "labels/x~d~L5", &node), PS_OK);
	ck_assert_int_eq(node.entry, 3);
	ck_assert_int_eq(layout_resolve(s, "labels/x", &node), PS_OK);
	ck_assert_int_eq(node.entry, 0);
	/* The names of before, and aliases that may be listed later. */
	ck_assert_int_eq(layout_resolve(s, "0002~my%20idea", &node), PS_OK);
	ck_assert_int_eq(layout_resolve(s, "labels/my%20idea", &node), PS_OK);
	ck_assert_int_eq(node.entry, 2);
	ck_assert_int_eq(layout_resolve(s, "labels/%78", &node), PS_ERR_NOENT);
	ck_assert_int_eq(layout_resolve(s, "0002~my%2520idea", &node), PS_ERR_NOENT);
	ps_err err;
	char *label = layout_typed_label("my%20idea", &err);
	ck_assert_str_eq(label, "my idea");
	free(label);
	ck_assert_ptr_null(layout_typed_label("%41", &err));
	ck_assert_int_eq(err, PS_OK);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_layout_not_a_session)
{
	char *path = helper_write("garbage\n");
	struct ps_session *s = helper_open(path);
	struct listing root = list_dir(s, "");
	ck_assert_int_eq(root.n, 2);
	ck_assert(listed(&root, "session.jsonl"));
	ck_assert(listed(&root, "error"));
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* Ids and labels too long for a file name are shortened with a hash and
 * still resolve; no listed name reaches the kernel's 255-byte limit. */
START_TEST(test_layout_long_names)
{
	char id[2001], label[4097], text[16384];
	memset(id, 'i', sizeof id - 1);
	id[sizeof id - 1] = '\0';
	memset(label, 'L', sizeof label - 1);
	label[sizeof label - 1] = '\0';
	snprintf(text, sizeof text, HDR MSG("a", "null", "user", "1") MSG("b", "\"a\"", "user", "2")
		 "{\"type\":\"message\",\"id\":\"%s\",\"parentId\":\"a\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n"
		 "{\"type\":\"label\",\"id\":\"l\",\"parentId\":\"%s\",\"timestamp\":\"t\",\"targetId\":\"%s\",\"label\":\"%s\"}\n",
		 id, id, id, label);
	char *path = helper_write(text);
	struct ps_session *s = helper_open(path);
	ck_assert_int_eq(s->n_entries, 4);
	struct listing root = list_dir(s, "");
	int branches = 0;
	for (int i = 0; i < root.n; i++) {
		ck_assert_int_le(strlen(root.names[i]), 255);
		if (strncmp(root.names[i], "0002~", 5) == 0) {
			branches++;
			char rel[600];
			snprintf(rel, sizeof rel, "%s", root.names[i]);
			struct listing inside = list_dir(s, rel);
			ck_assert_int_eq(inside.n, 3); /* the entry, the label entry, context.json */
			for (int k = 0; k < inside.n; k++) {
				char sub[1200];
				struct layout_node node;
				snprintf(sub, sizeof sub, "%s/%s", rel, inside.names[k]);
				ck_assert_int_le(strlen(inside.names[k]), 255);
				ck_assert_int_eq(layout_resolve(s, sub, &node), PS_OK);
			}
		}
	}
	ck_assert_int_eq(branches, 1);
	struct listing labels = list_dir(s, "labels");
	ck_assert_int_eq(labels.n, 1);
	ck_assert_int_le(strlen(labels.names[0]), 255);
	struct listing entries = list_dir(s, "entries");
	for (int i = 0; i < entries.n; i++) {
		char rel[600];
		struct layout_node node;
		ck_assert_int_le(strlen(entries.names[i]), 255);
		snprintf(rel, sizeof rel, "entries/%s", entries.names[i]);
		ck_assert_int_eq(layout_resolve(s, rel, &node), PS_OK);
	}
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

Suite *layout_suite(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("layout");
	tcase_add_test(tc, test_layout_names_and_resolve);
	tcase_add_test(tc, test_layout_label_names_branch);
	tcase_add_test(tc, test_layout_extra_roots_and_entries_dir);
	tcase_add_test(tc, test_layout_escape_roundtrip);
	tcase_add_test(tc, test_layout_typed_names);
	tcase_add_test(tc, test_layout_typed_labels);
	tcase_add_test(tc, test_layout_not_a_session);
	tcase_add_test(tc, test_layout_long_names);
	suite_add_tcase(s, tc);
	return s;
}
