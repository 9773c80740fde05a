/* route.c: a mount path split into project / session / the rest, and
 * resolved inside a session, for a struct psfs made here (no FUSE
 * session: the route_* forms take the mount). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "catalog.h"
#include "helpers.h"
#include "pisessionfs.h"
#include "route.h"
#include "store.h"
#include "suites.h"

static char root[64];
static struct psfs fs;

#define HDR_OF(id) \
	"{\"type\":\"session\",\"version\":3,\"id\":\"" id "\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n"
#define NAMED(id, parent, name) \
	"{\"type\":\"session_info\",\"id\":\"" id "\",\"parentId\":" parent \
	",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"name\":\"" name "\"}\n"

static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void mount_store(void)
{
	memset(&fs, 0, sizeof fs);
	ck_assert_int_eq(store_open(root, 16, &fs.store), PS_OK);
	ck_assert_int_eq(catalog_new(fs.store, &fs.catalog), PS_OK);
}

/* A project "proj" with a session s1 and one named "mine" (s2), and a
 * session file lying directly in the store (flat). */
static void route_fixture(void)
{
	char p[512];
	helper_tmpdir(root, "route");
	snprintf(p, sizeof p, "%s/proj", root);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	put("proj/s1.jsonl", HDR_OF("id-s1") MSG("a1", "null", "user", "hi"));
	put("proj/s2.jsonl", HDR_OF("id-s2") MSG("b1", "null", "user", "hi") NAMED("b2", "\"b1\"", "mine"));
	put("flat.jsonl", HDR_OF("id-flat") MSG("c1", "null", "user", "hi"));
	mount_store();
}

static void route_cleanup(void)
{
	catalog_free(fs.catalog);
	store_free(fs.store);
	helper_rmtree(root);
}

START_TEST(test_route_split_depths)
{
	struct psfs_path p;
	ck_assert_int_eq(route_split(&fs, "/", &p), 0);
	ck_assert_int_eq(p.depth, 0);
	ck_assert_str_eq(p.rest, "");
	ck_assert_int_eq(route_split(&fs, "/proj", &p), 0);
	ck_assert_int_eq(p.depth, 1);
	ck_assert_str_eq(p.project, "proj");
	ck_assert_int_eq(route_split(&fs, "/proj/s1", &p), 0);
	ck_assert_int_eq(p.depth, 2);
	ck_assert_str_eq(p.project, "proj");
	ck_assert_str_eq(p.session, "s1");
	ck_assert_str_eq(p.rest, "");
	ck_assert_str_eq(p.link_to, "");
	/* Extra slashes are no names; rest points into the path. */
	const char *path = "//proj//s1//0001-user.a1.md";
	ck_assert_int_eq(route_split(&fs, path, &p), 0);
	ck_assert_int_eq(p.depth, 3);
	ck_assert_str_eq(p.session, "s1");
	ck_assert_str_eq(p.rest, "0001-user.a1.md");
	ck_assert_ptr_eq(p.rest, path + strlen("//proj//s1//"));
	ck_assert_int_eq(route_split(&fs, "/proj/s1/labels/x", &p), 0);
	ck_assert_str_eq(p.rest, "labels/x");
}
END_TEST

START_TEST(test_route_split_too_long)
{
	struct psfs_path p;
	char path[NAME_MAX + 16];
	memset(path, 'a', sizeof path - 1);
	path[0] = '/';
	path[sizeof path - 1] = '\0';
	ck_assert_int_eq(route_split(&fs, path, &p), -ENAMETOOLONG);
	char in_project[NAME_MAX + 32];
	snprintf(in_project, sizeof in_project, "/proj/%s", path + 1);
	ck_assert_int_eq(route_split(&fs, in_project, &p), -ENAMETOOLONG);
	/* NAME_MAX itself is a name. */
	path[NAME_MAX + 1] = '\0';
	ck_assert_int_eq(route_split(&fs, path, &p), 0);
	ck_assert_int_eq(p.depth, 1);
}
END_TEST

START_TEST(test_route_split_flat_session)
{
	struct psfs_path p;
	/* A session file of the store root is a session at depth 2, project "". */
	ck_assert_int_eq(route_split(&fs, "/flat", &p), 0);
	ck_assert_int_eq(p.depth, 2);
	ck_assert_str_eq(p.project, "");
	ck_assert_str_eq(p.session, "flat");
	ck_assert_int_eq(route_split(&fs, "/flat/leaf", &p), 0);
	ck_assert_int_eq(p.depth, 3);
	ck_assert_str_eq(p.session, "flat");
	ck_assert_str_eq(p.rest, "leaf");
	/* No such file: a project name, whether or not the project exists. */
	ck_assert_int_eq(route_split(&fs, "/nothing/x", &p), 0);
	ck_assert_int_eq(p.depth, 2);
	ck_assert_str_eq(p.project, "nothing");
	ck_assert_str_eq(p.session, "x");
}
END_TEST

START_TEST(test_route_root_names_kept)
{
	/* Names the mount root keeps are never a flat session's, even when
	 * a session file of that name lies in the store. */
	put("by-id.jsonl", HDR_OF("id-v"));
	put("search.jsonl", HDR_OF("id-q"));
	put("usage.csv.jsonl", HDR_OF("id-u"));
	put(".pisessionfs.jsonl", HDR_OF("id-j"));
	const char *kept[] = { "by-id", "by-name", "by-cwd", "recent", "search", "usage.csv", "sessions.md",
			       "usage-daily.csv", "usage-monthly.csv", "usage-daily-models.csv", "usage.svg",
			       ".pisessionfs" };
	for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
		struct psfs_path p;
		ck_assert_msg(!route_root_name_free(&fs, kept[i]), "%s is free", kept[i]);
		ck_assert_int_eq(route_split(&fs, kept[i], &p), 0);
		ck_assert_int_eq(p.depth, 1);
		ck_assert_str_eq(p.project, kept[i]);
	}
	/* A project directory's name is not free either. */
	ck_assert(!route_root_name_free(&fs, "proj"));
	ck_assert(route_root_name_free(&fs, "flat"));
	ck_assert(route_root_name_free(&fs, "new-one"));
}
END_TEST

START_TEST(test_route_split_typed_name)
{
	struct psfs_path p;
	/* A session answers to its name (catalog.h) where no file has it. */
	ck_assert_int_eq(route_split(&fs, "/proj/mine", &p), 0);
	ck_assert_int_eq(p.depth, 2);
	ck_assert_str_eq(p.session, "s2");
	ck_assert_str_eq(p.link_to, "");
	ck_assert_int_eq(route_split(&fs, "/proj/mine/leaf", &p), 0);
	ck_assert_str_eq(p.session, "s2");
	ck_assert_str_eq(p.rest, "leaf");
	/* The file's own name wins over any session's name. */
	ck_assert_int_eq(route_split(&fs, "/proj/s1", &p), 0);
	ck_assert_str_eq(p.session, "s1");
}
END_TEST

START_TEST(test_route_store_is_flat)
{
	/* Session files in the root: flat. */
	ck_assert(route_store_is_flat(&fs));
	route_cleanup();
	/* Only a project: not flat. */
	char p[512];
	helper_tmpdir(root, "route");
	snprintf(p, sizeof p, "%s/proj", root);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	put("proj/s1.jsonl", HDR_OF("id-s1"));
	mount_store();
	ck_assert(!route_store_is_flat(&fs));
	route_cleanup();
	/* Nothing at all: flat (mkdir NAME at the root starts a session). */
	helper_tmpdir(root, "route");
	mount_store();
	ck_assert(route_store_is_flat(&fs));
}
END_TEST

START_TEST(test_route_locate)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	ck_assert_int_eq(route_locate(&fs, "/proj/s1/leaf", &p, &ref, &node), 0);
	ck_assert_int_eq(node.kind, LAYOUT_LEAF);
	store_release(fs.store, &ref);
	ck_assert_int_eq(route_locate(&fs, "/proj/s1", &p, &ref, &node), 0);
	ck_assert_int_eq(node.kind, LAYOUT_TREE_DIR);
	store_release(fs.store, &ref);
	ck_assert_int_eq(route_locate(&fs, "/flat/session.jsonl", &p, &ref, &node), 0);
	ck_assert_int_eq(node.kind, LAYOUT_RAW);
	store_release(fs.store, &ref);
	/* Nothing held on failure. */
	ck_assert_int_eq(route_locate(&fs, "/proj/s1/no-such-name", &p, &ref, &node), -ENOENT);
	ck_assert_int_eq(route_locate(&fs, "/proj/gone/leaf", &p, &ref, &node), -ENOENT);
	ck_assert_int_eq(route_locate(&fs, "/proj", &p, &ref, &node), -EINVAL);
	ck_assert_int_eq(route_locate(&fs, "/", &p, &ref, &node), -EINVAL);
}
END_TEST

START_TEST(test_route_dirname_and_hidden)
{
	const char *name;
	char *dir = psfs_dirname("/a/b/name.md", &name);
	ck_assert_str_eq(dir, "/a/b");
	ck_assert_str_eq(name, "name.md");
	free(dir);
	dir = psfs_dirname("/top", &name);
	ck_assert_str_eq(dir, "/");
	ck_assert_str_eq(name, "top");
	free(dir);
	ck_assert(psfs_is_fuse_hidden("/p/s/.fuse_hidden0000001a00000002"));
	ck_assert(psfs_is_fuse_hidden(".fuse_hidden1"));
	ck_assert(!psfs_is_fuse_hidden("/p/.fuse_hidden/x.md"));
	ck_assert(!psfs_is_fuse_hidden("/p/s/0001-user.a1.md"));
}
END_TEST

Suite *route_suite(void)
{
	Suite *s = suite_create("route");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, route_fixture, route_cleanup);
	tcase_add_test(tc, test_route_split_depths);
	tcase_add_test(tc, test_route_split_too_long);
	tcase_add_test(tc, test_route_split_flat_session);
	tcase_add_test(tc, test_route_root_names_kept);
	tcase_add_test(tc, test_route_split_typed_name);
	tcase_add_test(tc, test_route_store_is_flat);
	tcase_add_test(tc, test_route_locate);
	tcase_add_test(tc, test_route_dirname_and_hidden);
	suite_add_tcase(s, tc);
	return s;
}
