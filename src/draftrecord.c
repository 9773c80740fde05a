/* The durable record of an fsynced draft (draftrecord.h). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "draftrecord.h"
#include "recover.h"

struct draftrecord {
	char *path;
	int fd; /* holds flock(LOCK_EX) while the draft lives */
};

static ps_err draftrecord_errno(int e)
{
	switch (e) {
	case ENOSPC:
	case EDQUOT:
		return PS_ERR_NOSPACE;
	case EROFS:
	case EACCES:
	case EPERM:
		return PS_ERR_STORE_READONLY;
	case ENOMEM:
		return PS_ERR_NOMEM;
	default:
		return PS_ERR_IO;
	}
}

static int draftrecord_write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The header line (new), NULL without memory. */
static char *draftrecord_header(const char *mount_path, uid_t uid, gid_t gid, size_t len)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	if (!gmtime_r(&now, &tm) || !strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm))
		strcpy(stamp, "?");
	json_t *o = json_pack("{s:s, s:I, s:I, s:s, s:I}", "path", mount_path, "uid", (json_int_t)uid, "gid",
			      (json_int_t)gid, "time", stamp, "len", (json_int_t)len);
	char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return line;
}

ps_err draftrecord_save(struct draftrecord **rec, const char *dir, const char *mount_path, uid_t uid, gid_t gid,
			const char *data, size_t len)
{
	char *header = draftrecord_header(mount_path, uid, gid, len), *path = NULL;
	ps_err err = PS_OK;
	int fd = -1, dfd = -1;
	if (!header || asprintf(&path, "%s/" DRAFTRECORD_PREFIX "XXXXXX", dir) < 0) {
		path = NULL;
		err = PS_ERR_NOMEM;
		goto out;
	}
	/* Written under a name of its own, locked from the start, then put
	 * in place of the earlier record in one rename. */
	if ((fd = recover_create_locked(path)) < 0 || draftrecord_write_all(fd, header, strlen(header)) != 0 ||
	    draftrecord_write_all(fd, "\n", 1) != 0 || draftrecord_write_all(fd, data ? data : "", len) != 0 ||
	    fsync(fd) != 0 || (*rec && rename(path, (*rec)->path) != 0)) {
		err = draftrecord_errno(errno);
		if (fd >= 0)
			unlink(path);
		goto out;
	}
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd); /* the name, too, survives a power loss */
		close(dfd);
	}
	if (*rec) {
		close((*rec)->fd); /* its inode was replaced; the new one is locked */
		(*rec)->fd = fd;
	} else {
		struct draftrecord *r = malloc(sizeof *r);
		if (!r) {
			unlink(path);
			err = PS_ERR_NOMEM;
			goto out;
		}
		r->path = path;
		r->fd = fd;
		path = NULL;
		*rec = r;
	}
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	free(path);
	free(header);
	return err;
}

void draftrecord_end(struct draftrecord *rec, int keep)
{
	if (!rec)
		return;
	if (!keep)
		unlink(rec->path);
	close(rec->fd);
	free(rec->path);
	free(rec);
}

ps_err draftrecord_read(const char *path, char **mount_path, uid_t *uid, gid_t *gid, char **time, char **data,
			size_t *len)
{
	FILE *f = fopen(path, "re");
	char *all = NULL, *nl;
	size_t size = 0;
	ps_err err = PS_OK;
	json_t *o = NULL;
	*mount_path = *data = *time = NULL;
	if (!f)
		return draftrecord_errno(errno);
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || !(all = malloc((size_t)st.st_size + 1)) ||
	    (size = fread(all, 1, (size_t)st.st_size, f)) != (size_t)st.st_size) {
		err = all ? PS_ERR_IO : PS_ERR_NOMEM;
		goto out;
	}
	all[size] = '\0';
	json_int_t u, g, want;
	const char *p, *t;
	if (!(nl = memchr(all, '\n', size)) || !(o = json_loadb(all, (size_t)(nl - all), 0, NULL)) ||
	    json_unpack(o, "{s:s, s:I, s:I, s:s, s:I}", "path", &p, "uid", &u, "gid", &g, "time", &t, "len", &want) !=
		    0) {
		err = PS_ERR_INVALID;
		goto out;
	}
	*len = size - (size_t)(nl + 1 - all);
	if (want < 0 || (size_t)want != *len) {
		err = PS_ERR_TOOBIG; /* cut short: its writer died writing it */
		goto out;
	}
	if (!(*mount_path = strdup(p)) || !(*time = strdup(t)) || !(*data = malloc(*len + 1))) {
		free(*mount_path);
		free(*time);
		*mount_path = *time = NULL;
		err = PS_ERR_NOMEM;
		goto out;
	}
	memcpy(*data, nl + 1, *len);
	(*data)[*len] = '\0';
	*uid = (uid_t)u;
	*gid = (gid_t)g;
out:
	json_decref(o);
	free(all);
	fclose(f);
	return err;
}
