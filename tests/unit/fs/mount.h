/* Shared by the front end's unit tests: a store in a temporary directory
 * and a struct psfs over it, made as main.c makes one, without FUSE. */
#ifndef PSFS_TEST_MOUNT_H
#define PSFS_TEST_MOUNT_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <check.h>
#include "catalog.h"
#include "helpers.h"
#include "infocache.h"
#include "journal.h"
#include "overlay.h"
#include "overview.h"
#include "overviewmemo.h"
#include "pisessionfs.h"
#include "searchdir.h"
#include "sessionops.h"
#include "store.h"

struct test_mount {
	char root[64];
	struct psfs fs;
};

/* A session file STEM in PROJECT ("" for the store root) with id, its
 * user messages (activity at SECONDS past 2026-01-01), and a name when
 * not "". */
static inline void test_mount_session(struct test_mount *m, const char *project, const char *stem, const char *id,
				      const char *name, int seconds, const char *const *texts, size_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", m->root, project);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%s%s%s.jsonl", m->root, project, *project ? "/" : "", stem);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"type\":\"session\",\"version\":3,\"id\":\"%s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\","
		   "\"cwd\":\"/w/%s\"}\n", id, project);
	char parent[32] = "null";
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "{\"type\":\"message\",\"id\":\"m%zu\",\"parentId\":%s,\"timestamp\":\"2026-01-01T00:00:01.000Z\","
			   "\"message\":{\"role\":\"user\",\"content\":\"%s\",\"timestamp\":%lld}}\n",
			i + 1, parent, texts[i], 1767225600000LL + seconds * 1000LL + (long long)i + 1);
		snprintf(parent, sizeof parent, "\"m%zu\"", i + 1);
	}
	if (*name)
		fprintf(f, "{\"type\":\"session_info\",\"id\":\"n1\",\"parentId\":%s,"
			   "\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"name\":\"%s\"}\n", parent, name);
	fclose(f);
}

static inline void test_mount_dir(struct test_mount *m, const char *what)
{
	memset(m, 0, sizeof *m);
	helper_tmpdir(m->root, what);
}

/* The mount's state over the store written so far; its journal's lines
 * go to stderr too, which is sent to /dev/null. */
static inline void test_mount_open(struct test_mount *m)
{
	int null = open("/dev/null", O_WRONLY);
	ck_assert_int_ge(null, 0);
	ck_assert_int_eq(dup2(null, STDERR_FILENO), STDERR_FILENO);
	close(null);
	ck_assert_int_eq(store_open(m->root, 16, &m->fs.store), PS_OK);
	ck_assert_int_eq(catalog_new(m->fs.store, &m->fs.catalog), PS_OK);
	ck_assert_int_eq(infocache_new(SEARCH_CACHE_DEFAULT, &m->fs.infos), PS_OK);
	ck_assert_ptr_nonnull(m->fs.overlay = overlay_new());
	ck_assert_ptr_nonnull(m->fs.sessionops = sessionops_state_new());
	ck_assert_ptr_nonnull(m->fs.journal = journal_new(JOURNAL_REJECTED_DEFAULT_BUDGET, m->fs.overlay, "/mnt"));
	ck_assert_ptr_nonnull(m->fs.search = search_results_new(SEARCH_VERDICTS_SHARE(SEARCH_CACHE_DEFAULT)));
	ck_assert_ptr_nonnull(m->fs.overview = overview_memo_new());
}

static inline void test_mount_close(struct test_mount *m)
{
	overview_memo_free(m->fs.overview);
	search_results_free(m->fs.search);
	journal_free(m->fs.journal);
	overlay_free(m->fs.overlay);
	sessionops_state_free(m->fs.sessionops);
	infocache_free(m->fs.infos);
	catalog_free(m->fs.catalog);
	store_free(m->fs.store);
	helper_rmtree(m->root);
	memset(&m->fs, 0, sizeof m->fs);
}

#endif
