/* Shared by the unit tests: session files written to a temporary directory. */
#ifndef PS_TEST_HELPERS_H
#define PS_TEST_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <check.h>
#include "session.h"

/* Writes text to a new temporary file; returns its path (static buffer per
 * call site is not needed: the caller frees). */
static inline char *helper_write(const char *text)
{
	char *path = strdup("/tmp/pisessionfs-unit-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	size_t n = strlen(text);
	ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
	close(fd);
	return path;
}

static inline void helper_append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Rewrites the file in place with text (what pi's migration does): the
 * session is indexed anew at its next refresh. */
static inline void helper_rewrite(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* The whole file, NUL-terminated (caller frees); *len without the NUL. */
static inline char *helper_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *data = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(data);
	ck_assert_uint_eq(fread(data, 1, (size_t)n, f), (size_t)n);
	data[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return data;
}

/* A new temporary directory (dir: at least 40 bytes), and its removal. */
static inline void helper_tmpdir(char *dir, const char *what)
{
	sprintf(dir, "/tmp/pisessionfs-%s-XXXXXX", what);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static inline void helper_rmtree(const char *dir)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static inline struct ps_session *helper_open(const char *path)
{
	struct ps_session *s = NULL;
	ck_assert_int_eq(session_open(path, &s), PS_OK);
	return s;
}

#define HDR "{\"type\":\"session\",\"version\":3,\"id\":\"sess-1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n"
#define MSG(id, parent, role, text) \
	"{\"type\":\"message\",\"id\":\"" id "\",\"parentId\":" parent ",\"timestamp\":\"2026-01-01T00:00:01.000Z\"," \
	"\"message\":{\"role\":\"" role "\",\"content\":\"" text "\",\"timestamp\":1}}\n"

#endif
