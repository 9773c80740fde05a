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

void sessionnew_uuid7(int64_t ms, char out[37])
{
	uuid_t u;
	uuid_generate_random(u);
	for (int i = 0; i < 6; i++)
		u[i] = (unsigned char)((uint64_t)ms >> (40 - 8 * i));
	u[6] = (unsigned char)(0x70 | (u[6] & 0x0f));
	u[8] = (unsigned char)(0x80 | (u[8] & 0x3f));
	uuid_unparse_lower(u, out);
}

static ps_err sessionnew_errno(int e)
{
	return e == ENOENT ? PS_ERR_NOENT : e == ENOSPC || e == EDQUOT ? PS_ERR_NOSPACE
	       : e == EACCES || e == EPERM || e == EROFS ? PS_ERR_STORE_READONLY : PS_ERR_IO;
}

ps_err sessionnew_create(int dirfd, const char *cwd, mode_t mode, uid_t uid, gid_t gid, char **stem)
{
	struct timespec ts;
	struct tm tm;
	char iso[32], id[37], name[96];
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(iso + n, sizeof iso - n, ".%03dZ", (int)(ms % 1000));
	sessionnew_uuid7(ms, id);
	/* pi's file name: the timestamp with ':' and '.' as '-'. */
	snprintf(name, sizeof name, "%s_%s", iso, id);
	for (char *p = name; *p && *p != '_'; p++)
		if (*p == ':' || *p == '.')
			*p = '-';

	json_t *h = json_object();
	if (!h || json_object_set_new(h, "type", json_string("session")) ||
	    json_object_set_new(h, "version", json_integer(3)) || json_object_set_new(h, "id", json_string(id)) ||
	    json_object_set_new(h, "timestamp", json_string(iso))) {
		json_decref(h);
		return PS_ERR_NOMEM;
	}
	json_t *c = json_string(cwd);
	if (!c || json_object_set_new(h, "cwd", c)) {
		json_decref(h);
		return c ? PS_ERR_NOMEM : PS_ERR_INVALID;
	}
	char *line = NULL;
	size_t len = 0;
	ps_err err = jsonout_compact(h, &line, &len);
	json_decref(h);
	char *file = NULL, *text = NULL;
	if (!err && (asprintf(&file, "%s.jsonl", name) < 0 || asprintf(&text, "%s\n", line) < 0))
		err = PS_ERR_NOMEM;
	free(line);
	if (err)
		goto out;
	int fd = openat(dirfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0666);
	if (fd < 0) {
		err = sessionnew_errno(errno);
		goto out;
	}
	if (uid != (uid_t)-1 && geteuid() == 0 && fchown(fd, uid, gid) != 0)
		err = sessionnew_errno(errno);
	size_t want = strlen(text);
	if (!err && (write(fd, text, want) != (ssize_t)want || fsync(fd) != 0))
		err = sessionnew_errno(errno ? errno : EIO);
	if (close(fd) != 0 && !err)
		err = sessionnew_errno(errno);
	if (err) {
		unlinkat(dirfd, file, 0); /* nothing half made is left */
		goto out;
	}
	if (!(*stem = strdup(name)))
		err = PS_ERR_NOMEM;
out:
	free(file);
	free(text);
	return err;
}
