/* overlay.c: the namespace of the in-memory files over an overlay made
 * here (add, get, remove, rename, what a listing shows, pending
 * branches' children, prefixes), saved names that stop answering at
 * their time, a file's content as a draft, and a removed node that an
 * open handle holds, freed only at its last overlay_put.  Whether a node
 * was freed shows in its draft's references: the node holds one. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "draft.h"
#include "overlay.h"
#include "suites.h"

static struct overlay *ov;

static void overlay_fixture(void)
{
	ov = overlay_new();
	ck_assert_ptr_nonnull(ov);
}

static void overlay_cleanup(void)
{
	overlay_free(ov);
	ov = NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* A listing: the names overlay_list gave, each between spaces, and how
 * many there were. */
struct names {
	char text[512];
	unsigned count;
};

static void add_name(void *ctx, const char *name, const struct overlay_node *node)
{
	struct names *n = ctx;
	ck_assert_ptr_nonnull(node);
	ck_assert_uint_lt(strlen(n->text) + strlen(name) + 2, sizeof n->text);
	strcat(n->text, name);
	strcat(n->text, " ");
	n->count++;
}

/* The listing of dir (overlay locked). */
static struct names listing(const char *dir)
{
	struct names n = { " ", 0 };
	overlay_list(ov, dir, add_name, &n);
	return n;
}

/* Whether a listing holds name. */
static int listed(const struct names *n, const char *name)
{
	char word[256];
	snprintf(word, sizeof word, " %s ", name);
	return strstr(n->text, word) != NULL;
}

START_TEST(test_overlay_add_get_remove)
{
	overlay_lock(ov);
	struct overlay_node *a = overlay_add(ov, "/p/s/a.md", OVERLAY_FILE, 0644);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->kind, OVERLAY_FILE);
	ck_assert_str_eq(a->path, "/p/s/a.md");
	ck_assert_uint_eq(a->mode, 0644);
	ck_assert_uint_eq(a->opens, 0);
	ck_assert(!a->unlinked);
	/* A file starts empty, its content a draft of its own. */
	ck_assert_ptr_nonnull(a->draft);
	ck_assert_uint_eq(draft_size(a->draft), 0);
	ck_assert_ptr_eq(overlay_get(ov, "/p/s/a.md"), a);
	ck_assert_ptr_null(overlay_get(ov, "/p/s/a"));
	ck_assert_ptr_null(overlay_get(ov, "/p/s/a.md/"));
	ck_assert_ptr_null(overlay_get(ov, "/nothing"));

	/* Serials tell nodes apart, a later one at the same path too. */
	struct overlay_node *b = overlay_add(ov, "/p/s/b.md", OVERLAY_FILE, 0600);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_ne(b->serial, a->serial);
	uint64_t old_serial = a->serial;
	struct draft *held = overlay_draft(a);
	ck_assert_uint_eq(held->refs, 2);
	struct overlay_node *a2 = overlay_add(ov, "/p/s/a.md", OVERLAY_FILE, 0600);
	ck_assert_ptr_nonnull(a2);
	ck_assert_uint_ne(a2->serial, old_serial);
	ck_assert_uint_ne(a2->serial, b->serial);
	ck_assert_ptr_eq(overlay_get(ov, "/p/s/a.md"), a2);
	/* The replaced node, held by nothing, was freed: its reference of
	 * the draft went with it. */
	ck_assert_uint_eq(held->refs, 1);
	draft_put(held);

	/* Nodes without content have no draft. */
	struct overlay_node *br = overlay_add(ov, "/p/s/0001~fix", OVERLAY_BRANCH, 0755);
	ck_assert_ptr_nonnull(br);
	ck_assert_ptr_null(br->draft);
	ck_assert_ptr_null(overlay_draft(br));
	struct stat st;
	overlay_stat(br, &st);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0755);
	ck_assert_uint_eq(st.st_nlink, 2);

	overlay_remove(ov, a2);
	ck_assert_ptr_null(overlay_get(ov, "/p/s/a.md"));
	ck_assert_ptr_eq(overlay_get(ov, "/p/s/b.md"), b);
	ck_assert_ptr_eq(overlay_get(ov, "/p/s/0001~fix"), br);
	overlay_remove(ov, b);
	overlay_remove(ov, br);
	ck_assert_ptr_null(overlay_get(ov, "/p/s/b.md"));
	ck_assert_ptr_null(overlay_get(ov, "/p/s/0001~fix"));
	overlay_unlock(ov);
}
END_TEST

START_TEST(test_overlay_rename)
{
	overlay_lock(ov);
	struct overlay_node *a = overlay_add(ov, "/p/s/.a.md.swp", OVERLAY_FILE, 0600);
	struct overlay_node *b = overlay_add(ov, "/p/s/a.md", OVERLAY_FILE, 0600);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	uint64_t serial = a->serial;
	struct draft *held = overlay_draft(b);
	/* Onto another node's path: that one is replaced (and freed, held
	 * by nothing); the moved node keeps its serial. */
	ck_assert_int_eq(overlay_rename(ov, a, "/p/s/a.md"), 0);
	ck_assert_str_eq(a->path, "/p/s/a.md");
	ck_assert_uint_eq(a->serial, serial);
	ck_assert_ptr_null(overlay_get(ov, "/p/s/.a.md.swp"));
	ck_assert_ptr_eq(overlay_get(ov, "/p/s/a.md"), a);
	ck_assert_uint_eq(held->refs, 1);
	draft_put(held);
	/* Onto a free path, and onto its own. */
	ck_assert_int_eq(overlay_rename(ov, a, "/p/t/b.md"), 0);
	ck_assert_ptr_null(overlay_get(ov, "/p/s/a.md"));
	ck_assert_ptr_eq(overlay_get(ov, "/p/t/b.md"), a);
	ck_assert_int_eq(overlay_rename(ov, a, "/p/t/b.md"), 0);
	ck_assert_ptr_eq(overlay_get(ov, "/p/t/b.md"), a);
	ck_assert(!a->unlinked);
	overlay_unlock(ov);
}
END_TEST

START_TEST(test_overlay_list)
{
	overlay_lock(ov);
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/new.md", OVERLAY_FILE, 0644));
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/.#new.md", OVERLAY_SYMLINK, 0777));
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/0001~fix", OVERLAY_BRANCH, 0755));
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/0001~fix/0002.md", OVERLAY_FILE, 0644));
	/* What a listing never shows: an entry put aside, a saved name, an
	 * alias, and libfuse's name for a file removed while open. */
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/0003.md", OVERLAY_HIDDEN, 0644));
	struct overlay_node *saved = overlay_add(ov, "/p/s/saved.md", OVERLAY_FILE, 0644);
	ck_assert_ptr_nonnull(saved);
	overlay_saved(saved, 60);
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/alias", OVERLAY_ALIAS, 0644));
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/.fuse_hidden0000000100000001", OVERLAY_FILE, 0644));
	/* Elsewhere: another session, one whose name starts the same, the root. */
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/t/other.md", OVERLAY_FILE, 0644));
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/ss/x.md", OVERLAY_FILE, 0644));
	ck_assert_ptr_nonnull(overlay_add(ov, "/top", OVERLAY_FILE, 0644));

	struct names n = listing("/p/s");
	ck_assert_uint_eq(n.count, 3);
	ck_assert(listed(&n, "new.md"));
	ck_assert(listed(&n, ".#new.md"));
	ck_assert(listed(&n, "0001~fix"));
	n = listing("/p/s/0001~fix");
	ck_assert_uint_eq(n.count, 1);
	ck_assert(listed(&n, "0002.md"));
	n = listing("/");
	ck_assert_uint_eq(n.count, 1);
	ck_assert(listed(&n, "top"));
	n = listing("/p");
	ck_assert_uint_eq(n.count, 0);
	n = listing("/p/t");
	ck_assert_uint_eq(n.count, 1);
	ck_assert(listed(&n, "other.md"));
	/* Not listed, but found by name. */
	ck_assert_ptr_eq(overlay_get(ov, "/p/s/saved.md"), saved);
	ck_assert_ptr_nonnull(overlay_get(ov, "/p/s/0003.md"));
	ck_assert_ptr_nonnull(overlay_get(ov, "/p/s/alias"));
	overlay_unlock(ov);
}
END_TEST

START_TEST(test_overlay_has_children)
{
	overlay_lock(ov);
	struct overlay_node *br = overlay_add(ov, "/p/s/0001~fix", OVERLAY_BRANCH, 0755);
	ck_assert_ptr_nonnull(br);
	ck_assert(!overlay_has_children(ov, "/p/s/0001~fix"));
	/* A sibling whose name starts the same is no child. */
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/0001~fixed/x.md", OVERLAY_FILE, 0644));
	ck_assert(!overlay_has_children(ov, "/p/s/0001~fix"));
	/* Nor is what a listing does not show. */
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/0001~fix/0002.md", OVERLAY_HIDDEN, 0644));
	ck_assert(!overlay_has_children(ov, "/p/s/0001~fix"));
	struct overlay_node *child = overlay_add(ov, "/p/s/0001~fix/0003.md", OVERLAY_FILE, 0644);
	ck_assert_ptr_nonnull(child);
	ck_assert(overlay_has_children(ov, "/p/s/0001~fix"));
	ck_assert(overlay_has_children(ov, "/p/s"));
	ck_assert(overlay_has_children(ov, "/p"));
	/* Deeper down counts too. */
	ck_assert_int_eq(overlay_rename(ov, child, "/p/s/0001~fix/0004~more/0005.md"), 0);
	ck_assert(overlay_has_children(ov, "/p/s/0001~fix"));
	overlay_remove(ov, child);
	ck_assert(!overlay_has_children(ov, "/p/s/0001~fix"));
	ck_assert(!overlay_has_children(ov, "/q"));
	overlay_unlock(ov);
}
END_TEST

START_TEST(test_overlay_find_prefix)
{
	overlay_lock(ov);
	struct overlay_node *br = overlay_add(ov, "/p/s/0002~fix", OVERLAY_BRANCH, 0755);
	ck_assert_ptr_nonnull(br);
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/0003~gone", OVERLAY_HIDDEN, 0755));
	ck_assert_ptr_eq(overlay_find_prefix(ov, "/p/s/", "0002~"), br);
	ck_assert_ptr_eq(overlay_find_prefix(ov, "/p/s/", "0002~fix"), br);
	ck_assert_ptr_eq(overlay_find_prefix(ov, "/p/s/", ""), br);
	ck_assert_ptr_null(overlay_find_prefix(ov, "/p/s/", "0002~fixes"));
	ck_assert_ptr_null(overlay_find_prefix(ov, "/p/s/", "0001~"));
	/* What a listing does not show is not found either. */
	ck_assert_ptr_null(overlay_find_prefix(ov, "/p/s/", "0003~"));
	ck_assert_ptr_null(overlay_find_prefix(ov, "/p/t/", "0002~"));
	overlay_remove(ov, br);
	ck_assert_ptr_null(overlay_find_prefix(ov, "/p/s/", "0002~"));
	overlay_unlock(ov);
}
END_TEST

START_TEST(test_overlay_saved_expires)
{
	overlay_lock(ov);
	struct overlay_node *a = overlay_add(ov, "/p/s/a.md", OVERLAY_FILE, 0644);
	ck_assert_ptr_nonnull(a);
	a->temporary = 1;
	struct draft *held = overlay_draft(a);
	overlay_saved(a, 0.005);
	ck_assert_int_eq(a->kind, OVERLAY_SAVED);
	ck_assert(!a->temporary);
	/* A saved name's content still answers, until its time. */
	ck_assert_ptr_nonnull(a->draft);
	struct overlay_node *b = overlay_add(ov, "/p/s/b.md", OVERLAY_FILE, 0644);
	ck_assert_ptr_nonnull(b);
	overlay_saved(b, 0.005);
	/* Kept: its end pushed back; a shorter keep does not bring it forward. */
	overlay_saved_keep(b, 60);
	overlay_saved_keep(b, 0.001);
	struct overlay_node *c = overlay_add(ov, "/p/s/c.md", OVERLAY_FILE, 0644);
	ck_assert_ptr_nonnull(c);
	overlay_saved(c, 60);
	overlay_unlock(ov);

	sleep_ms(30);
	overlay_lock(ov);
	/* Past its time the name is gone, and the node with it. */
	ck_assert_ptr_null(overlay_get(ov, "/p/s/a.md"));
	ck_assert_uint_eq(held->refs, 1);
	ck_assert_ptr_eq(overlay_get(ov, "/p/s/b.md"), b);
	ck_assert_ptr_eq(overlay_get(ov, "/p/s/c.md"), c);
	/* A new save starts its time afresh. */
	overlay_saved(c, 0);
	ck_assert_ptr_null(overlay_get(ov, "/p/s/c.md"));
	overlay_unlock(ov);
	draft_put(held);
}
END_TEST

START_TEST(test_overlay_file_content)
{
	char buf[16];
	struct stat st;
	overlay_lock(ov);
	struct overlay_node *a = overlay_add(ov, "/p/s/new.md", OVERLAY_FILE, 0640);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(overlay_set_data(a, "hello", 5), 0);
	struct draft *first = overlay_draft(a);
	ck_assert_ptr_nonnull(first);
	ck_assert_ptr_eq(first, a->draft);
	ck_assert_uint_eq(first->refs, 2);
	overlay_stat(a, &st);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_int_eq(st.st_size, 5);
	ck_assert_int_eq(st.st_blocks, 1);
	ck_assert_uint_eq(st.st_nlink, 1);
	/* New content is a new draft; whoever held the old one keeps it. */
	ck_assert_int_eq(overlay_set_data(a, "bye", 3), 0);
	struct draft *second = overlay_draft(a);
	ck_assert_ptr_ne(second, first);
	ck_assert_uint_eq(first->refs, 1);
	overlay_stat(a, &st);
	ck_assert_int_eq(st.st_size, 3);
	/* A symlink's data is its target, and it has no draft. */
	struct overlay_node *l = overlay_add(ov, "/p/s/.#new.md", OVERLAY_SYMLINK, 0777);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(overlay_set_data(l, "user@host.1234:5678", 19), 0);
	ck_assert_str_eq(l->link, "user@host.1234:5678");
	ck_assert_ptr_null(overlay_draft(l));
	overlay_stat(l, &st);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(st.st_size, 19);
	overlay_unlock(ov);

	/* Drafts are read with the overlay unlocked (the lock order). */
	draft_lock(first);
	ck_assert_uint_eq(draft_read(first, buf, sizeof buf, 0), 5);
	ck_assert_int_eq(memcmp(buf, "hello", 5), 0);
	draft_unlock(first);
	draft_lock(second);
	ck_assert_uint_eq(draft_read(second, buf, sizeof buf, 0), 3);
	ck_assert_int_eq(memcmp(buf, "bye", 3), 0);
	/* The node's content and an opener's draft are one: a write shows
	 * in the node's size. */
	ck_assert_int_eq(draft_write(second, "!", 1, 3), 1);
	draft_unlock(second);
	overlay_lock(ov);
	overlay_stat(a, &st);
	ck_assert_int_eq(st.st_size, 4);
	overlay_unlock(ov);
	draft_put(first);
	draft_put(second);
}
END_TEST

START_TEST(test_overlay_open_node_outlives_remove)
{
	overlay_lock(ov);
	struct overlay_node *a = overlay_add(ov, "/p/s/.a.md.swp", OVERLAY_FILE, 0600);
	ck_assert_ptr_nonnull(a);
	/* As psfs_open_overlay holds it. */
	a->opens++;
	struct draft *held = overlay_draft(a);
	ck_assert_uint_eq(held->refs, 2);
	overlay_remove(ov, a);
	ck_assert_ptr_null(overlay_get(ov, "/p/s/.a.md.swp"));
	ck_assert(a->unlinked);
	/* Still whole for its handle. */
	ck_assert_str_eq(a->path, "/p/s/.a.md.swp");
	ck_assert_uint_eq(held->refs, 2);
	/* A new node may take the name meanwhile. */
	struct overlay_node *b = overlay_add(ov, "/p/s/.a.md.swp", OVERLAY_FILE, 0600);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(b, a);
	ck_assert_uint_eq(held->refs, 2);
	overlay_put(a);
	ck_assert_uint_eq(held->refs, 1);
	draft_put(held);

	/* A node held and put while still named stays. */
	b->opens += 2;
	held = overlay_draft(b);
	overlay_put(b);
	overlay_put(b);
	ck_assert_ptr_eq(overlay_get(ov, "/p/s/.a.md.swp"), b);
	ck_assert_uint_eq(held->refs, 2);
	/* Replaced while held (an editor's rename over it): freed at the put. */
	b->opens++;
	struct overlay_node *c = overlay_add(ov, "/p/s/c.md", OVERLAY_FILE, 0600);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(overlay_rename(ov, c, "/p/s/.a.md.swp"), 0);
	ck_assert(b->unlinked);
	ck_assert_uint_eq(held->refs, 2);
	overlay_put(b);
	ck_assert_uint_eq(held->refs, 1);
	draft_put(held);
	overlay_unlock(ov);
}
END_TEST

START_TEST(test_overlay_free_frees_its_nodes)
{
	overlay_lock(ov);
	struct overlay_node *a = overlay_add(ov, "/p/s/a.md", OVERLAY_FILE, 0600);
	ck_assert_ptr_nonnull(a);
	struct draft *held = overlay_draft(a);
	ck_assert_ptr_nonnull(overlay_add(ov, "/p/s/0001~x", OVERLAY_BRANCH, 0755));
	overlay_unlock(ov);
	overlay_free(ov);
	ov = NULL;
	ck_assert_uint_eq(held->refs, 1);
	draft_put(held);
	/* Two overlays are two namespaces. */
	struct overlay *one = overlay_new(), *two = overlay_new();
	ck_assert_ptr_nonnull(one);
	ck_assert_ptr_nonnull(two);
	overlay_lock(one);
	ck_assert_ptr_nonnull(overlay_add(one, "/x", OVERLAY_FILE, 0600));
	overlay_unlock(one);
	overlay_lock(two);
	ck_assert_ptr_null(overlay_get(two, "/x"));
	overlay_unlock(two);
	overlay_free(one);
	overlay_free(two);
	overlay_free(NULL);
}
END_TEST

Suite *overlay_suite(void)
{
	Suite *s = suite_create("overlay");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, overlay_fixture, overlay_cleanup);
	tcase_add_test(tc, test_overlay_add_get_remove);
	tcase_add_test(tc, test_overlay_rename);
	tcase_add_test(tc, test_overlay_list);
	tcase_add_test(tc, test_overlay_has_children);
	tcase_add_test(tc, test_overlay_find_prefix);
	tcase_add_test(tc, test_overlay_saved_expires);
	tcase_add_test(tc, test_overlay_file_content);
	tcase_add_test(tc, test_overlay_open_node_outlives_remove);
	tcase_add_test(tc, test_overlay_free_frees_its_nodes);
	suite_add_tcase(s, tc);
	return s;
}
