/* How the views spell names (viewname.h): escaping what a file name
 * cannot hold, the names of before, and by-cwd's paths. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "escape.h"
#include "viewname.h"

/* Names shown to people are the strings as they are: only what a file
 * name cannot hold or a listing should not show is written %XX, as labels
 * are (escape_typed_name, docs/layout.md "Escaping").  limit leaves room
 * for a suffix. */
char *views_escape_max(const char *s, size_t limit)
{
	return escape_typed_name(s, strlen(s), limit);
}

char *views_escape(const char *s)
{
	return views_escape_max(s, NAME_MAX);
}

/* The names of before (every '%' and control character escaped, cut at
 * 200 bytes): they keep resolving, as paths once shown keep working. */
char *views_escape_before(const char *s)
{
	struct buf b = BUF_INIT;
	int all_dots = 1;
	for (const char *p = s; *p; p++)
		all_dots &= *p == '.';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int bad = *p < 0x20 || *p == 0x7f || *p == '/' || *p == '%' || (all_dots && *p == '.');
		if (bad ? buf_printf(&b, "%%%02X", *p) : buf_putc(&b, (char)*p)) {
			buf_free(&b);
			return NULL;
		}
	}
	if (buf_finish(&b)) {
		buf_free(&b);
		return NULL;
	}
	if (b.len > 200)
		b.data[200] = '\0';
	return b.data;
}

/* by-cwd shows a cwd's components as names: each escaped like by-name
 * (so "." , ".." and control characters cannot be names), empty ones
 * dropped.  Returns a new "home/u/proj" (no leading slash), or NULL. */
static char *views_cwd_key(const char *cwd)
{
	struct buf b = BUF_INIT;
	int bad = 0;
	while (*cwd && !bad) {
		size_t n = strcspn(cwd, "/");
		if (n) {
			char *part = strndup(cwd, n);
			char *esc = part ? views_escape(part) : NULL;
			bad = !esc || (b.len && buf_putc(&b, '/')) || buf_puts(&b, esc);
			free(part);
			free(esc);
		}
		cwd += n;
		while (*cwd == '/')
			cwd++;
	}
	if (bad || buf_finish(&b)) {
		buf_free(&b);
		return NULL;
	}
	return b.data ? b.data : strdup("");
}

/* One component of a by-cwd path as it is listed: the same when it is,
 * else escaped now from a name it had before or typed with control
 * characters (paths once shown keep working).  New string, or NULL. */
static char *views_cwd_component(const char *comp)
{
	size_t n;
	char *str = escape_typed_string(comp, &n);
	if (!str && n == (size_t)-1)
		return NULL;
	if (!str) {
		/* Before, every %XX was an escape and '%' always one. */
		char *before;
		if (!(str = strdup(comp)))
			return NULL;
		n = 0;
		for (const char *p = comp; *p; p++) {
			unsigned hi, lo;
			if (p[0] == '%' && sscanf(p + 1, "%1X%1X", &hi, &lo) == 2) {
				str[n++] = (char)(hi * 16 + lo);
				p += 2;
			} else {
				str[n++] = *p;
			}
		}
		str[n] = '\0';
		if (!(before = views_escape_before(str))) {
			free(str);
			return NULL;
		}
		int was = strlen(str) == n && strcmp(before, comp) == 0;
		free(before);
		if (!was) {
			free(str);
			return strdup(comp);
		}
	}
	char *name = views_escape(str);
	free(str);
	return name;
}

/* A by-cwd path (no leading slash) with each component as it is listed. */
char *views_cwd_normalize(const char *path)
{
	struct buf b = BUF_INIT;
	int bad = 0;
	while (*path && !bad) {
		size_t n = strcspn(path, "/");
		char *part = strndup(path, n);
		char *name = part ? views_cwd_component(part) : NULL;
		bad = !name || (b.len && buf_putc(&b, '/')) || buf_puts(&b, name);
		free(part);
		free(name);
		path += n;
		while (*path == '/')
			path++;
	}
	if (bad || buf_finish(&b)) {
		buf_free(&b);
		return NULL;
	}
	return b.data ? b.data : strdup("");
}

/* Replaces each session's cwd in a snapshot by its by-cwd key. */
int views_cwd_keys(struct catalog_session *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *key = views_cwd_key(items[i].cwd);
		if (!key)
			return -ENOMEM;
		free(items[i].cwd);
		items[i].cwd = key;
	}
	return 0;
}

/* by-cwd: is dir (a path like "home/u/proj", "" for by-cwd itself) a
 * prefix of the session's cwd, component by component? */
int views_cwd_under(const char *cwd, const char *dir)
{
	while (*cwd == '/')
		cwd++;
	size_t n = strlen(dir);
	if (!n)
		return *cwd != '\0';
	return strncmp(cwd, dir, n) == 0 && (cwd[n] == '\0' || cwd[n] == '/');
}

int views_cwd_is(const char *cwd, const char *dir)
{
	while (*cwd == '/')
		cwd++;
	size_t n = strlen(cwd);
	while (n && cwd[n - 1] == '/')
		n--;
	return strlen(dir) == n && strncmp(cwd, dir, n) == 0;
}

int views_depth(const char *dir)
{
	int d = *dir ? 1 : 0;
	for (const char *p = dir; *p; p++)
		d += *p == '/';
	return d;
}
