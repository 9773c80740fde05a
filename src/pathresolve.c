/* path.resolve without symlinks (pathresolve.h). */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pathresolve.h"

char *path_resolve(const char *path)
{
	char *cwd = path[0] == '/' ? NULL : getcwd(NULL, 0);
	if (path[0] != '/' && !cwd)
		return NULL;
	size_t cap = (cwd ? strlen(cwd) : 0) + strlen(path) + 3;
	char *joined = malloc(cap), *out = malloc(cap);
	if (!joined || !out) {
		free(joined);
		free(out);
		free(cwd);
		return NULL;
	}
	strcpy(joined, cwd ? cwd : "");
	strcat(joined, "/");
	strcat(joined, path);
	free(cwd);
	/* Each name in turn: "." skipped, ".." drops the last one kept (never
	 * above the root). */
	size_t len = 0;
	for (const char *p = joined; *p;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 0)
			break;
		if (n == 1 && p[0] == '.') {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--; /* the slash before it */
		} else {
			out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p += n;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	free(joined);
	return out;
}

const char *path_home(void)
{
	const char *home = getenv("HOME");
	if (home && *home)
		return home;
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
}
