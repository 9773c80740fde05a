#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>
#include <jansson.h>
#include "jsonout.h"
#include "sessionnew.h"

/* A UUID v7 (RFC 9562: 48 bits of Unix milliseconds, the version, random
 * bits), as pi's session ids are: lower-case, 36 characters and a NUL. */
static void sessionnew_uuid7(int64_t ms, char out[37])
{
	uuid_t u;
	uuid_generate_random(u);
	for (int i = 0; i < 6; i++)
		u[i] = (unsigned char)((uint64_t)ms >> (40 - 8 * i));
	u[6] = (unsigned char)(0x70 | (u[6] & 0x0f));
	u[8] = (unsigned char)(0x80 | (u[8] & 0x3f));
	uuid_unparse_lower(u, out);
}

void sessionnew_short_id(char out[9])
{
	uuid_t u;
	char text[37];
	uuid_generate_random(u);
	uuid_unparse_lower(u, text);
	memcpy(out, text, 8);
	out[8] = '\0';
}

static ps_err sessionnew_errno(int e)
{
	return e == ENOENT ? PS_ERR_NOENT : e == ENOSPC || e == EDQUOT ? PS_ERR_NOSPACE
	       : e == EACCES || e == EPERM || e == EROFS ? PS_ERR_STORE_READONLY : PS_ERR_IO;
}

void sessionnew_stamp(struct sessionnew_stamp *st)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(st->iso, sizeof st->iso, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(st->iso + n, sizeof st->iso - n, ".%03dZ", (int)(ms % 1000));
	sessionnew_uuid7(ms, st->id);
	/* pi's file name: the timestamp with ':' and '.' as '-'. */
	snprintf(st->stem, sizeof st->stem, "%s_%s", st->iso, st->id);
	for (char *p = st->stem; *p && *p != '_'; p++)
		if (*p == ':' || *p == '.')
			*p = '-';
}

static int sessionnew_set_text(json_t *h, const char *key, const char *text, ps_err *err)
{
	json_t *v = json_string(text);
	if (!v) {
		*err = PS_ERR_INVALID;
		return -1;
	}
	if (json_object_set_new(h, key, v)) {
		*err = PS_ERR_NOMEM;
		return -1;
	}
	return 0;
}

ps_err sessionnew_header(const struct sessionnew_stamp *st, const char *cwd, const char *parent, char **line,
			 size_t *len)
{
	ps_err err = PS_ERR_NOMEM;
	char *text = NULL;
	size_t n = 0;
	json_t *h = json_object();
	if (!h || json_object_set_new(h, "type", json_string("session")) ||
	    json_object_set_new(h, "version", json_integer(3)) || json_object_set_new(h, "id", json_string(st->id)) ||
	    json_object_set_new(h, "timestamp", json_string(st->iso)))
		goto out;
	if (sessionnew_set_text(h, "cwd", cwd, &err) || (parent && sessionnew_set_text(h, "parentSession", parent, &err)))
		goto out;
	err = jsonout_compact(h, &text, &n);
	if (err)
		goto out;
	char *nl = realloc(text, n + 2);
	if (!nl) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	nl[n] = '\n';
	nl[n + 1] = '\0';
	*line = nl;
	*len = n + 1;
	text = NULL;
out:
	free(text);
	json_decref(h);
	return err;
}

/* Creates <stem>.jsonl in the directory dirfd holding text[0..len): with
 * O_EXCL and mode & 0666, owned by uid/gid when the daemon may give it
 * away (-1: as it is), written in one write() and fsynced.  stem and text
 * are borrowed.  On an error (the file system's, as a ps_err) nothing is
 * left behind. */
static ps_err sessionnew_write(int dirfd, const char *stem, const char *text, size_t len, mode_t mode,
			       uid_t uid, gid_t gid)
{
	char *file = NULL;
	ps_err err = PS_OK;
	if (asprintf(&file, "%s.jsonl", stem) < 0)
		return PS_ERR_NOMEM;
	int fd = openat(dirfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0666);
	if (fd < 0) {
		err = sessionnew_errno(errno);
		free(file);
		return err;
	}
	if (uid != (uid_t)-1 && geteuid() == 0 && fchown(fd, uid, gid) != 0)
		err = sessionnew_errno(errno);
	if (!err) {
		ssize_t w;
		errno = 0;
		do
			w = write(fd, text, len);
		while (w < 0 && errno == EINTR);
		/* One write: a short one (a full disk) is an error, not a retry. */
		if (w != (ssize_t)len || fsync(fd) != 0)
			err = sessionnew_errno(errno ? errno : EIO);
	}
	if (close(fd) != 0 && !err)
		err = sessionnew_errno(errno);
	if (err)
		unlinkat(dirfd, file, 0); /* nothing half made is left */
	free(file);
	return err;
}

ps_err sessionnew_create(int dirfd, const char *cwd, mode_t mode, uid_t uid, gid_t gid, char **stem)
{
	struct sessionnew_stamp st;
	char *text = NULL;
	size_t len = 0;
	sessionnew_stamp(&st);
	ps_err err = sessionnew_header(&st, cwd, NULL, &text, &len);
	if (!err)
		err = sessionnew_write_named(dirfd, &st, text, len, mode, uid, gid, stem);
	free(text);
	return err;
}

ps_err sessionnew_write_named(int dirfd, const struct sessionnew_stamp *st, const char *text, size_t len, mode_t mode,
			      uid_t uid, gid_t gid, char **stem)
{
	char *made = strdup(st->stem);
	if (!made)
		return PS_ERR_NOMEM;
	ps_err err = sessionnew_write(dirfd, st->stem, text, len, mode, uid, gid);
	if (err)
		free(made);
	else
		*stem = made;
	return err;
}

char *sessionnew_folder_name(const char *cwd)
{
	if (*cwd == '/' || *cwd == '\\')
		cwd++;
	size_t n = strlen(cwd);
	char *name = malloc(n + 5);
	if (!name)
		return NULL;
	memcpy(name, "--", 2);
	for (size_t i = 0; i < n; i++)
		name[2 + i] = cwd[i] == '/' || cwd[i] == '\\' || cwd[i] == ':' ? '-' : cwd[i];
	memcpy(name + 2 + n, "--", 3);
	return name;
}
