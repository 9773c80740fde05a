/* The mount table (mountinfo.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mountinfo.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void mountinfo_unescape(char *s)
{
	char *d = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* A line's fields: the fifth is the mount point; after the optional
 * fields and "-", the type and the source.  1 when the line has them. */
static int mountinfo_parse(char *line, char **mount_point, char **fstype, char **source)
{
	char *save = NULL, *field[5] = { 0 }, *tok;
	int i = 0;
	line[strcspn(line, "\n")] = '\0';
	for (tok = strtok_r(line, " ", &save); tok && i < 5; tok = strtok_r(NULL, " ", &save))
		field[i++] = tok;
	if (i < 5)
		return 0;
	while ((tok = strtok_r(NULL, " ", &save)) && strcmp(tok, "-") != 0)
		; /* the options and optional fields */
	*fstype = tok ? strtok_r(NULL, " ", &save) : NULL;
	*source = *fstype ? strtok_r(NULL, " ", &save) : NULL;
	if (!*source)
		return 0;
	mountinfo_unescape(field[4]);
	mountinfo_unescape(*source);
	*mount_point = field[4];
	return 1;
}

#define MOUNTINFO_SELF "/proc/self/mountinfo"

int mountinfo_each(mountinfo_fn fn, void *ctx)
{
	return mountinfo_each_in(MOUNTINFO_SELF, fn, ctx);
}

int mountinfo_each_in(const char *file, mountinfo_fn fn, void *ctx)
{
	FILE *f = fopen(file, "re");
	char *line = NULL, *mp, *type, *src;
	size_t cap = 0;
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		if (mountinfo_parse(line, &mp, &type, &src) && fn(ctx, mp, type, src))
			break;
	free(line);
	fclose(f);
	return 0;
}

struct mountinfo_cover {
	const char *path;
	size_t best;    /* the length of the longest mount point over path so far */
	int remote;
};

static int mountinfo_type_is_remote(const char *fstype)
{
	static const char *const remote[] = { "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs",
					      "afs", "ncpfs", "lustre", NULL };
	if (strcmp(fstype, "fuse") == 0 || strncmp(fstype, "fuse.", 5) == 0 || strcmp(fstype, "fuseblk") == 0)
		return 1;
	for (size_t i = 0; remote[i]; i++)
		if (strcmp(fstype, remote[i]) == 0)
			return 1;
	return 0;
}

static int mountinfo_cover_step(void *ctx, const char *mount_point, const char *fstype, const char *source)
{
	struct mountinfo_cover *c = ctx;
	size_t n = strlen(mount_point);
	(void)source;
	/* "/" covers everything; "/a" covers "/a" and "/a/...", not "/ab". */
	if (n == 1 && mount_point[0] == '/')
		n = 0;
	else if (strncmp(c->path, mount_point, n) != 0 || (c->path[n] != '\0' && c->path[n] != '/'))
		return 0;
	if (n >= c->best) { /* equal: a later mount covers an earlier one */
		c->best = n;
		c->remote = mountinfo_type_is_remote(fstype);
	}
	return 0;
}

int mountinfo_is_remote(const char *path)
{
	return mountinfo_is_remote_in(MOUNTINFO_SELF, path);
}

int mountinfo_is_remote_in(const char *file, const char *path)
{
	struct mountinfo_cover c = { path, 0, 0 };
	if (path[0] != '/' || mountinfo_each_in(file, mountinfo_cover_step, &c) != 0)
		return 0;
	return c.remote;
}
