/* family.c: which sessions below a parent's folder are its children and
 * what they are called (start order, agent, run, index; the header's
 * time when the file's name has none), which artifacts go with which
 * run (a single run's have no index), that no symlink below the project
 * is followed and a child's own family folder is not its parent's, that
 * the artifact listing is kept while its folder is unchanged, that a
 * project path names a child's folder in the store, and the lookups by
 * header (parentSession, id) and store-wide by id and name; that a
 * member knows whether a family of its own lies beside it, and that a
 * family kept on disk is given to a later mount while its folders are
 * unchanged, its bytes read back whole or refused. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "diskmemo.h"
#include "dirlist.h"
#include "familydisk.h"
#include "familysearch.h"
#include "helpers.h"
#include "store.h"
#include "suites.h"

static char root[64];

static void mk(const char *rel)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	ck_assert_int_eq(mkdir(p, 0755), 0);
}

static void put(const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

#define CHILD_HDR(id, ts) "{\"type\":\"session\",\"version\":3,\"id\":\"" id "\",\"timestamp\":\"" ts "\",\"cwd\":\"/w\"}\n"
#define P "proj"
#define S "2026-01-01T00-00-00-000Z_parent"

static void family_fixture(void)
{
	helper_tmpdir(root, "family");
	mk(P);
	put(P "/" S ".jsonl", HDR);
	mk(P "/" S);
	mk(P "/" S "/run1");
	mk(P "/" S "/run1/run-0");
	mk(P "/" S "/run1/run-1");
	/* pi-subagents names a run's file session.jsonl: the header's time */
	put(P "/" S "/run1/run-0/session.jsonl", CHILD_HDR("c0", "2026-01-01T00:00:05.000Z"));
	put(P "/" S "/run1/run-1/session.jsonl", CHILD_HDR("c1", "2026-01-01T00:00:04.000Z"));
	mk(P "/" S "/forks");
	put(P "/" S "/forks/2026-01-01T00-00-09-000Z_fork1234abcd.jsonl",
	    "{\"type\":\"session\",\"version\":3,\"id\":\"f1\",\"timestamp\":\"2026-01-01T00:00:09.000Z\","
	    "\"cwd\":\"/w\",\"parentSession\":\"/x/" S ".jsonl\"}\n");
	/* a child's own subagent: its folder beside it is its family */
	mk(P "/" S "/run1/run-0/session");
	mk(P "/" S "/run1/run-0/session/g");
	mk(P "/" S "/run1/run-0/session/g/run-0");
	put(P "/" S "/run1/run-0/session/g/run-0/session.jsonl", CHILD_HDR("g0", "2026-01-01T00:00:06.000Z"));
	/* a run folder with artifacts only */
	mk(P "/" S "/async1");
	mk(P "/subagent-artifacts");
	put(P "/subagent-artifacts/run1_scout_0_output.md", "zero\n");
	put(P "/subagent-artifacts/run1_scout_0_meta.json", "{}\n");
	put(P "/subagent-artifacts/run1_scout_0.jsonl", "{}\n");
	put(P "/subagent-artifacts/run1_my_agent_1_input.md", "one\n");
	put(P "/subagent-artifacts/async1_reviewer_output.md", "async\n");
	put(P "/subagent-artifacts/other_scout_0_output.md", "another parent's\n");
	/* never followed: a symlink to a folder holding a session */
	char p[512], t[512];
	mk("elsewhere");
	put("elsewhere/2026-01-01T00-00-01-000Z_out.jsonl", HDR);
	snprintf(t, sizeof t, "%s/elsewhere", root);
	snprintf(p, sizeof p, "%s/" P "/" S "/linked", root);
	ck_assert_int_eq(symlink(t, p), 0);
}

static void family_cleanup(void)
{
	helper_rmtree(root);
}

START_TEST(test_family_members)
{
	struct ps_store *st;
	struct family_cache *cache = family_cache_new();
	struct family *fam = NULL;
	int art = 0;
	ck_assert_ptr_nonnull(cache);
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	for (int round = 0; round < 2; round++) { /* the second from the kept artifact listing */
		ck_assert_int_eq(family_read(st, cache, P, S, &fam), PS_OK);
		ck_assert_uint_eq(fam->n, 4);
		/* in start order; run-1 started first */
		ck_assert_str_eq(fam->members[0].name, "2026-01-01T00-00-04-000Z_my_agent_run1_1");
		ck_assert_str_eq(fam->members[1].name, "2026-01-01T00-00-05-000Z_scout_run1_0");
		ck_assert_str_eq(fam->members[2].name, "2026-01-01T00-00-09-000Z_fork_fork1234");
		ck_assert_int_eq(fam->members[2].kind, FAMILY_FORK);
		ck_assert_str_eq(fam->members[1].dir, P "/" S "/run1/run-0");
		ck_assert_str_eq(fam->members[1].stem, "session");
		ck_assert_str_eq(fam->members[1].artifact[FAMILY_OUTPUT], P "/subagent-artifacts/run1_scout_0_output.md");
		ck_assert_ptr_null(fam->members[1].artifact[FAMILY_INPUT]);
		/* the async run: artifacts only, no index, so run-0, named by
		 * its artifact's time */
		ck_assert_ptr_null(fam->members[3].stem);
		ck_assert_str_eq(fam->members[3].agent, "reviewer");
		ck_assert_ptr_nonnull(strstr(fam->members[3].name, "_reviewer_async1_0"));
		ck_assert_uint_eq(fam->n_artifacts, 5); /* the event stream too */
		ck_assert_str_eq(fam->folder, P "/" S);
		const struct family_member *m = family_find(fam, "2026-01-01T00-00-05-000Z_scout_run1_0.output.md", &art);
		ck_assert_ptr_eq(m, &fam->members[1]);
		ck_assert_int_eq(art, FAMILY_OUTPUT);
		ck_assert_ptr_eq(family_find(fam, "2026-01-01T00-00-05-000Z_scout_run1_0", &art), &fam->members[1]);
		ck_assert_int_eq(art, -1);
		ck_assert_ptr_null(family_find(fam, "2026-01-01T00-00-05-000Z_scout_run1_0.input.md", &art));
		ck_assert_ptr_null(family_find(fam, fam->members[3].name, &art)); /* no directory of its own */
		family_free(fam);
	}
	/* the child's own family; the child as a session of the store */
	ck_assert_int_eq(family_read(st, cache, P "/" S "/run1/run-0", "session", &fam), PS_OK);
	ck_assert_uint_eq(fam->n, 1);
	ck_assert_str_eq(fam->members[0].name, "2026-01-01T00-00-06-000Z_run_g_0");
	family_free(fam);
	struct store_ref ref;
	ck_assert_int_eq(store_acquire(st, P "/" S "/run1/run-0", "session", &ref), PS_OK);
	store_release(st, &ref);
	ck_assert_int_ne(store_acquire(st, P "/" S "/../" S "/run1/run-0", "session", &ref), PS_OK);
	/* no family: empty */
	ck_assert_int_eq(family_read(st, cache, "elsewhere", "2026-01-01T00-00-01-000Z_out", &fam), PS_OK);
	ck_assert_uint_eq(fam->n, 0);
	ck_assert_ptr_null(fam->folder);
	family_free(fam);
	store_free(st);
	family_cache_free(cache);
}
END_TEST

/* The cache gives a family again while its folders are as they were, and
 * reads it anew when a run comes; a child's append changes nothing kept. */
START_TEST(test_family_kept)
{
	struct ps_store *st;
	struct family_cache *cache = family_cache_new();
	struct family *a = NULL, *b = NULL;
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	ck_assert_int_eq(family_read(st, cache, P, S, &a), PS_OK);
	ck_assert_int_eq(family_read(st, cache, P, S, &b), PS_OK);
	ck_assert_ptr_eq(a, b);
	family_free(b);
	put(P "/" S "/run1/run-0/session.jsonl", CHILD_HDR("c0", "2026-01-01T00:00:05.000Z") "{\"x\":1}\n");
	ck_assert_int_eq(family_read(st, cache, P, S, &b), PS_OK);
	ck_assert_ptr_eq(a, b);
	family_free(b);
	mk(P "/" S "/run2");
	mk(P "/" S "/run2/run-0");
	put(P "/" S "/run2/run-0/session.jsonl", CHILD_HDR("c9", "2026-01-01T00:00:07.000Z"));
	ck_assert_int_eq(family_read(st, cache, P, S, &b), PS_OK);
	ck_assert_ptr_ne(a, b);
	ck_assert_uint_eq(b->n, a->n + 1);
	ck_assert_uint_eq(a->n, 4); /* the old reading is unchanged, still the caller's */
	family_free(a);
	family_free(b);
	/* an artifact added: read anew too */
	ck_assert_int_eq(family_read(st, cache, P, S, &a), PS_OK);
	put(P "/subagent-artifacts/run2_late_0_output.md", "late\n");
	ck_assert_int_eq(family_read(st, cache, P, S, &b), PS_OK);
	ck_assert_ptr_ne(a, b);
	const struct family_member *late = NULL;
	for (size_t i = 0; i < b->n; i++)
		if (b->members[i].run_id && !strcmp(b->members[i].run_id, "run2"))
			late = &b->members[i];
	ck_assert_ptr_nonnull(late);
	ck_assert_str_eq(late->agent, "late");
	family_free(a);
	family_free(b);
	store_free(st);
	family_cache_free(cache);
}
END_TEST

/* Whether a folder of its own lies beside each member's file. */
START_TEST(test_family_has_family)
{
	struct ps_store *st;
	struct family *fam = NULL;
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	ck_assert_int_eq(family_read(st, NULL, P, S, &fam), PS_OK);
	ck_assert_uint_eq(fam->n, 4);
	for (size_t i = 0; i < fam->n; i++)
		ck_assert_int_eq(fam->members[i].has_family, i == 1); /* run1/run-0's session/ */
	family_free(fam);
	store_free(st);
}
END_TEST

static void family_note_ignore(void *ctx, const char *what)
{
	(void)ctx, (void)what;
}

static struct diskmemo *family_disk_open(const char *dir)
{
	struct diskmemo *m = NULL;
	ck_assert_int_eq(diskmemo_open(dir, root, "family test 1", family_note_ignore, NULL, &m), PS_OK);
	return m;
}

/* A later mount (another cache) is given the family kept on disk while
 * its folders are as they were: a child's header rewritten in place
 * (which no walk would miss) shows it came from there; a new run folder
 * makes it read anew. */
START_TEST(test_family_disk)
{
	char dir[600];
	struct ps_store *st;
	struct family *a = NULL, *b = NULL;
	snprintf(dir, sizeof dir, "%s/cache", root);
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	struct diskmemo *disk = family_disk_open(dir);
	struct family_cache *cache = family_cache_new();
	family_cache_set_disk(cache, disk);
	ck_assert_int_eq(family_read(st, cache, P, S, &a), PS_OK);
	ck_assert_uint_eq(a->n, 4);
	family_cache_free(cache);
	diskmemo_free(disk);
	put(P "/" S "/run1/run-1/session.jsonl", CHILD_HDR("c1", "2026-01-01T00:00:08.000Z"));

	disk = family_disk_open(dir);
	cache = family_cache_new();
	family_cache_set_disk(cache, disk);
	ck_assert_int_eq(family_read(st, cache, P, S, &b), PS_OK);
	ck_assert_ptr_ne(a, b);
	ck_assert_uint_eq(b->n, a->n);
	for (size_t i = 0; i < a->n; i++) {
		ck_assert_str_eq(b->members[i].name, a->members[i].name);
		ck_assert_int_eq(b->members[i].has_family, a->members[i].has_family);
		ck_assert_int_eq(b->members[i].index, a->members[i].index);
		ck_assert_int_eq(b->members[i].kind, a->members[i].kind);
		for (int k = 0; k < FAMILY_ARTIFACT_KINDS; k++)
			ck_assert_pstr_eq(b->members[i].artifact[k], a->members[i].artifact[k]);
	}
	ck_assert_uint_eq(b->n_artifacts, a->n_artifacts);
	ck_assert_str_eq(b->folder, a->folder);
	family_free(b);
	family_cache_free(cache);

	/* without the disk, the walk names run-1 by its new header */
	ck_assert_int_eq(family_read(st, NULL, P, S, &b), PS_OK);
	ck_assert_str_eq(b->members[0].name, "2026-01-01T00-00-05-000Z_scout_run1_0");
	family_free(b);

	mk(P "/" S "/run2");
	cache = family_cache_new();
	family_cache_set_disk(cache, disk);
	ck_assert_int_eq(family_read(st, cache, P, S, &b), PS_OK);
	ck_assert_str_eq(b->members[1].name, "2026-01-01T00-00-08-000Z_my_agent_run1_1");
	family_free(b);
	family_cache_free(cache);
	diskmemo_free(disk);
	family_free(a);
	store_free(st);
}
END_TEST

/* The bytes give back what was kept, and any cut or damaged copy is
 * refused or read within its bounds (ASan watches), never past them. */
START_TEST(test_family_disk_bytes)
{
	struct ps_store *st;
	struct family *fam = NULL, *back = NULL;
	struct family_sig sigs[2] = { { "stem", 12, { 34, 56 } }, { "subagent-artifacts", 0, { 0, 0 } } }, *got = NULL;
	size_t n = 0;
	struct buf bytes = BUF_INIT;
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	ck_assert_int_eq(family_read(st, NULL, P, S, &fam), PS_OK);
	ck_assert_int_eq(familydisk_encode(fam, sigs, 2, &bytes), 0);
	ck_assert_int_eq(familydisk_decode(bytes.data, bytes.len, &back, &got, &n), PS_OK);
	ck_assert_uint_eq(back->n, fam->n);
	ck_assert_pstr_eq(back->members[3].stem, NULL);
	ck_assert_str_eq(back->members[1].dir, fam->members[1].dir);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(got[1].rel, "subagent-artifacts");
	ck_assert_uint_eq(got[0].ino, 12);
	ck_assert_int_eq(got[0].mtime.tv_nsec, 56);
	family_free(back);
	for (size_t i = 0; i < n; i++)
		free(got[i].rel);
	free(got);
	for (size_t cut = 0; cut < bytes.len; cut++) {
		char *copy = malloc(cut ? cut : 1);
		memcpy(copy, bytes.data, cut);
		ck_assert_int_eq(familydisk_decode(copy, cut, &back, &got, &n), PS_ERR_INVALID);
		ck_assert_ptr_null(back);
		free(copy);
	}
	for (size_t at = 0; at < bytes.len; at++) {
		char *copy = malloc(bytes.len);
		memcpy(copy, bytes.data, bytes.len);
		copy[at] ^= (char)0xa5;
		if (familydisk_decode(copy, bytes.len, &back, &got, &n) == PS_OK) {
			family_free(back);
			for (size_t i = 0; i < n; i++)
				free(got[i].rel);
			free(got);
		}
		free(copy);
	}
	buf_free(&bytes);
	family_free(fam);
	store_free(st);
}
END_TEST

static int family_may_all(void *ctx, const struct stat *st)
{
	(void)ctx, (void)st;
	return 1;
}

START_TEST(test_family_lookups)
{
	struct ps_store *st;
	char *v = NULL;
	ck_assert_int_eq(store_open(root, 0, &st), PS_OK);
	ck_assert_int_eq(family_header_parent(st, P "/" S "/forks", "2026-01-01T00-00-09-000Z_fork1234abcd", &v), PS_OK);
	ck_assert_str_eq(v, "/x/" S ".jsonl");
	free(v);
	ck_assert_int_eq(family_header_parent(st, P, S, &v), PS_OK);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(family_search_store(st, NULL, 0, "g0", family_may_all, NULL, &v), PS_OK);
	ck_assert_str_eq(v, P "/" S "/subagents/2026-01-01T00-00-05-000Z_scout_run1_0/subagents/"
			    "2026-01-01T00-00-06-000Z_run_g_0");
	free(v);
	ck_assert_int_eq(family_search_store(st, NULL, 0, "nope", family_may_all, NULL, &v), PS_ERR_NOENT);
	store_free(st);
}
END_TEST

/* dirlist.c, the walk's reader: every entry once with its type, past
 * one buffer's worth, a symlink never taken for what it points at. */
START_TEST(test_dirlist)
{
	char p[512], name[128];
	mk("dl");
	put("dl/a.jsonl", "x");
	mk("dl/a");
	snprintf(p, sizeof p, "%s/dl/link", root);
	ck_assert_int_eq(symlink("a", p), 0);
	/* 300 names of 100 bytes: several reads of the 8 KiB buffer. */
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "dl/%03d%0*d", i, 96, 0);
		put(name, "");
	}
	snprintf(p, sizeof p, "%s/dl", root);
	int fd = open(p, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	struct dirlist list = DIRLIST_INIT;
	ck_assert_int_eq(dirlist_read(fd, &list), PS_OK);
	ck_assert_uint_eq(list.n, 303);
	ck_assert(dirlist_has(&list, "a.jsonl", DIRLIST_FILE));
	ck_assert(dirlist_has(&list, "a", DIRLIST_DIR));
	ck_assert(!dirlist_has(&list, "a", DIRLIST_FILE));
	ck_assert(dirlist_has(&list, "link", DIRLIST_OTHER));
	ck_assert(!dirlist_has(&list, "link", DIRLIST_DIR));
	ck_assert(!dirlist_has(&list, ".", DIRLIST_DIR) && !dirlist_has(&list, "..", DIRLIST_DIR));
	snprintf(name, sizeof name, "%03d%0*d", 299, 96, 0);
	ck_assert(dirlist_has(&list, name, DIRLIST_FILE));
	/* Read again from the end: empty, not an error. */
	ck_assert_int_eq(dirlist_read(fd, &list), PS_OK);
	ck_assert_uint_eq(list.n, 0);
	dirlist_free(&list);
	ck_assert_ptr_null(list.entries);
	close(fd);
}
END_TEST

Suite *family_suite(void)
{
	Suite *s = suite_create("family");
	TCase *tc = tcase_create("family");
	tcase_add_checked_fixture(tc, family_fixture, family_cleanup);
	tcase_add_test(tc, test_family_members);
	tcase_add_test(tc, test_dirlist);
	tcase_add_test(tc, test_family_lookups);
	tcase_add_test(tc, test_family_kept);
	tcase_add_test(tc, test_family_has_family);
	tcase_add_test(tc, test_family_disk);
	tcase_add_test(tc, test_family_disk_bytes);
	suite_add_tcase(s, tc);
	return s;
}
