/* Shared by the front end's unit tests: a store in a temporary directory
 * and a struct psfs over it, made as the daemon makes one (psfs_new),
 * without FUSE. */
#ifndef PSFS_TEST_MOUNT_H
#define PSFS_TEST_MOUNT_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <check.h>
#include "helpers.h"
#include "pisessionfs.h"
#include "store.h"

struct test_mount {
	char root[64];
	char cache_dir[4];      /* "off": nothing kept across tests */
	char mountpoint[8];
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
	memcpy(m->cache_dir, "off", sizeof "off");
	memcpy(m->mountpoint, "/mnt", sizeof "/mnt");
}

/* The mount's state over the store written so far, made as the daemon
 * makes it (psfs_new) with no cache directory; its journal's lines go to
 * stderr too, which is sent to /dev/null. */
static inline void test_mount_open(struct test_mount *m)
{
	int null = open("/dev/null", O_WRONLY);
	ck_assert_int_ge(null, 0);
	ck_assert_int_eq(dup2(null, STDERR_FILENO), STDERR_FILENO);
	close(null);
	psfs_config_defaults(&m->fs.cfg);
	m->fs.cfg.store = m->root;
	m->fs.cfg.cache_sessions = 16;
	m->fs.cfg.cache_dir = m->cache_dir;
	m->fs.mountpoint = m->mountpoint;
	ck_assert_int_eq(psfs_new(&m->fs), 0);
}

static inline void test_mount_close(struct test_mount *m)
{
	psfs_free(&m->fs);
	helper_rmtree(m->root);
	memset(&m->fs, 0, sizeof m->fs);
}

#endif
