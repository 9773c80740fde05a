/* An LD_PRELOAD shim that makes one allocation fail, for tests/alloc/run.sh.
 *
 *   FAILMALLOC_AT=N      the Nth allocation (malloc, calloc, realloc with a
 *                        size, counted from this library's start-up) returns
 *                        NULL with errno ENOMEM; the others succeed
 *   FAILMALLOC_REPORT=F  at exit, write the number of allocations to F
 *   FAILMALLOC_TRACE=1   print the failed allocation's call stack on stderr
 *
 * glibc lets a program replace malloc, and its own functions (strdup,
 * asprintf, stdio) then allocate through the replacement too; jansson
 * allocates with malloc.  Allocations made before this library's
 * constructor (the dynamic loader's) are neither counted nor failed.
 *
 * jansson 2.14's own loader corrupts its heap or trips an assertion when
 * an allocation inside json_load* fails (its strbuffer code), which no
 * caller can handle; so an allocation made under json_loadb, json_loads,
 * json_loadf or json_load_file is not failed: the failure moves to the next
 * allocation outside them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static unsigned long failmalloc_count, failmalloc_at;
static int failmalloc_ready, failmalloc_done, failmalloc_busy;

/* Whether jansson's loader is on the stack. */
static int failmalloc_in_loader(void)
{
	void *frames[128];
	int n = backtrace(frames, 128);
	for (int i = 0; i < n; i++) {
		Dl_info info;
		if (dladdr(frames[i], &info) && info.dli_sname && strncmp(info.dli_sname, "json_load", 9) == 0)
			return 1;
	}
	return 0;
}

__attribute__((constructor)) static void failmalloc_init(void)
{
	const char *at = getenv("FAILMALLOC_AT");
	void *warm[1];
	failmalloc_at = at ? strtoul(at, NULL, 10) : 0;
	backtrace(warm, 1); /* loads what backtrace needs now, not mid-test */
	failmalloc_ready = 1;
}

__attribute__((destructor)) static void failmalloc_report(void)
{
	const char *path = getenv("FAILMALLOC_REPORT");
	if (!path)
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	char line[32];
	int n = snprintf(line, sizeof line, "%lu\n", failmalloc_count);
	if (n > 0 && write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}

static int failmalloc_fails(void)
{
	if (!failmalloc_ready || failmalloc_busy)
		return 0;
	if (++failmalloc_count < failmalloc_at || !failmalloc_at || failmalloc_done)
		return 0;
	failmalloc_busy = 1;
	int skip = failmalloc_in_loader();
	failmalloc_busy = 0;
	if (skip)
		return 0;
	failmalloc_done = 1;
	if (getenv("FAILMALLOC_TRACE")) {
		void *frames[32];
		failmalloc_busy = 1;
		backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
		failmalloc_busy = 0;
	}
	return 1;
}

void *malloc(size_t n)
{
	if (failmalloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	if (failmalloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	if (n && failmalloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}
