#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "buf.h"
#include "trash.h"

/* What a failed rename or write means to the caller.  EXDEV is told
 * apart by trash_into: the next trash may still be reachable. */
static ps_err trash_errno(int e)
{
	switch (e) {
	case ENOENT: return PS_ERR_NOENT;
	case ENOMEM: return PS_ERR_NOMEM;
	case ENOSPC: case EDQUOT: return PS_ERR_NOSPACE;
	case EACCES: case EPERM: case EROFS: return PS_ERR_STORE_READONLY;
	default: return PS_ERR_IO;
	}
}

char *trash_home_dir(const char *xdg_data_home, const char *home)
{
	char *dir = NULL;
	if (xdg_data_home && xdg_data_home[0] == '/') {
		if (asprintf(&dir, "%s/Trash", xdg_data_home) < 0)
			return NULL;
	} else if (home && home[0] == '/') {
		if (asprintf(&dir, "%s/.local/share/Trash", home) < 0)
			return NULL;
	}
	return dir;
}

/* mkdir -p of an absolute path, the missing directories 0700 (the
 * specification's advice for a trash nobody else should read). */
static int trash_mkdirs(const char *dir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = c;
		if (!c)
			return 0;
	}
}

/* The specification's Path: bytes other than unreserved characters and
 * '/' percent-encoded (RFC 2396), as trash-cli and GLib write it. */
static int trash_encode(struct buf *out, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			    strchr("-_.~/", *p);
		char esc[3] = { '%', hex[*p >> 4], hex[*p & 15] };
		if (plain ? buf_putc(out, (char)*p) : buf_put(out, esc, 3))
			return -1;
	}
	return 0;
}

/* The n-th name tried for base: base itself, then stem_n.ext (".jsonl"
 * kept last, so that the trashed file still reads as a session). */
static int trash_name(const char *base, unsigned n, char *out, size_t size)
{
	if (n == 1)
		return snprintf(out, size, "%s", base) < (int)size ? 0 : -1;
	const char *dot = strrchr(base, '.');
	size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	return snprintf(out, size, "%.*s_%u%s", (int)stem, base, n, base + stem) < (int)size ? 0 : -1;
}

/* Writes the info file of name in info_fd (made with O_EXCL): 0 when
 * made, 1 when the name is taken, -1 with errno. */
static int trash_write_info(int info_fd, const char *name, const char *text, size_t len)
{
	char file[NAME_MAX + 16];
	if (snprintf(file, sizeof file, "%s.trashinfo", name) >= (int)sizeof file) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = openat(info_fd, file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return errno == EEXIST ? 1 : -1;
	ssize_t w = write(fd, text, len);
	int e = errno;
	int synced = w == (ssize_t)len && fsync(fd) == 0;
	if (!synced && w == (ssize_t)len)
		e = errno;
	if (close(fd) != 0 && synced) {
		synced = 0;
		e = errno;
	}
	if (!synced) {
		unlinkat(info_fd, file, 0);
		errno = w >= 0 && w < (ssize_t)len ? ENOSPC : e;
		return -1;
	}
	return 0;
}

static void trash_drop_info(int info_fd, const char *name)
{
	char file[NAME_MAX + 16];
	snprintf(file, sizeof file, "%s.trashinfo", name);
	unlinkat(info_fd, file, 0);
}

/* Renames path to files/NAME of the trash directory dir, its info file
 * naming orig (the Path to restore to).  Returns PS_OK, or the error
 * with *cross set when the trash is on another file system. */
static ps_err trash_into(const char *dir, const char *path, const char *orig, time_t now, char **trashed,
			 int *cross)
{
	char files[PATH_MAX], info[PATH_MAX], name[NAME_MAX + 1], date[32];
	struct buf text = BUF_INIT;
	struct tm tm;
	int files_fd = -1, info_fd = -1;
	ps_err err = PS_OK;
	const char *base = strrchr(path, '/') + 1;

	*cross = 0;
	if (snprintf(files, sizeof files, "%s/files", dir) >= (int)sizeof files ||
	    snprintf(info, sizeof info, "%s/info", dir) >= (int)sizeof info)
		return PS_ERR_INVALID;
	if (trash_mkdirs(files) != 0 || trash_mkdirs(info) != 0)
		return trash_errno(errno);
	if ((files_fd = open(files, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0 ||
	    (info_fd = open(info, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		err = trash_errno(errno);
		goto out;
	}
	localtime_r(&now, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
	if (buf_puts(&text, "[Trash Info]\nPath=") || trash_encode(&text, orig) ||
	    buf_printf(&text, "\nDeletionDate=%s\n", date)) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	err = PS_ERR_IO;
	for (unsigned n = 1; n <= 10000; n++) {
		struct stat st;
		if (trash_name(base, n, name, sizeof name) != 0) {
			err = PS_ERR_INVALID;
			break;
		}
		int made = trash_write_info(info_fd, name, text.data, text.len);
		if (made < 0) {
			err = trash_errno(errno);
			break;
		}
		if (made > 0)
			continue;
		if (fstatat(files_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			trash_drop_info(info_fd, name);
			continue;
		}
		int r = renameat2(AT_FDCWD, path, files_fd, name, RENAME_NOREPLACE);
		/* File systems without RENAME_NOREPLACE (sshfs): the name was
		 * free a moment ago, and its info file holds it. */
		if (r != 0 && errno == EINVAL)
			r = renameat(AT_FDCWD, path, files_fd, name);
		if (r != 0) {
			int e = errno;
			trash_drop_info(info_fd, name);
			if (e == EEXIST)
				continue;
			*cross = e == EXDEV;
			err = trash_errno(e);
			break;
		}
		fsync(files_fd);
		err = asprintf(trashed, "%s/%s", files, name) < 0 ? (*trashed = NULL, PS_ERR_NOMEM) : PS_OK;
		break;
	}
out:
	if (files_fd >= 0)
		close(files_fd);
	if (info_fd >= 0)
		close(info_fd);
	buf_free(&text);
	return err;
}

/* The mount point of the file system that holds dir: the last directory
 * on the way up with dir's device.  New string, or NULL. */
static char *trash_topdir(const char *dir)
{
	char *top = strdup(dir);
	struct stat st, up;
	if (!top || stat(top, &st) != 0) {
		free(top);
		return NULL;
	}
	for (;;) {
		char *slash = strrchr(top, '/');
		if (!slash || slash == top) {
			if (stat("/", &up) == 0 && up.st_dev == st.st_dev)
				strcpy(top, "/");
			return top;
		}
		*slash = '\0';
		if (stat(top, &up) != 0 || up.st_dev != st.st_dev) {
			*slash = '/';
			return top;
		}
	}
}

/* Whether dir is a directory of uid's own, no symlink: made 0700 when
 * missing.  0, or -1 with errno (EACCES for one that is not so). */
static int trash_own_dir(const char *dir, uid_t uid)
{
	struct stat st;
	if (lstat(dir, &st) != 0) {
		if (errno != ENOENT || mkdir(dir, 0700) != 0 || lstat(dir, &st) != 0)
			return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != uid) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

/* The trash of a file system's top directory, per the specification:
 * $topdir/.Trash/$uid when .Trash is a real directory (no symlink) with
 * the sticky bit and $uid in it is the user's own real directory, else
 * $topdir/.Trash-$uid, which must be the user's own real directory (made
 * 0700 when missing): a trash another user planted (a symlink, a
 * directory of theirs) on a shared volume is never used.  New string, or
 * NULL with *err set. */
static char *trash_volume_dir(const char *top, uid_t uid, ps_err *err)
{
	char *dir = NULL;
	struct stat st;
	const char *sep = strcmp(top, "/") == 0 ? "" : "/";
	*err = PS_ERR_NOMEM;
	if (asprintf(&dir, "%s%s.Trash", top, sep) < 0)
		return NULL;
	if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX)) {
		char *own = NULL;
		int r = asprintf(&own, "%s/%u", dir, (unsigned)uid);
		free(dir);
		if (r < 0)
			return NULL;
		if (trash_own_dir(own, uid) == 0)
			return own;
		free(own);
	} else {
		free(dir);
	}
	if (asprintf(&dir, "%s%s.Trash-%u", top, sep, (unsigned)uid) < 0)
		return NULL;
	if (trash_own_dir(dir, uid) != 0) {
		*err = trash_errno(errno);
		free(dir);
		return NULL;
	}
	return dir;
}

ps_err trash_put(const char *path, const char *home_trash, uid_t uid, time_t now, char **trashed)
{
	struct stat st, home;
	int cross = 1;
	ps_err err = PS_ERR_IO;

	*trashed = NULL;
	if (!path || path[0] != '/' || !strrchr(path, '/')[1])
		return PS_ERR_INVALID;
	if (lstat(path, &st) != 0)
		return trash_errno(errno);
	/* The home trash takes what a rename reaches (the same file system);
	 * a trash that does not exist yet is made and tried. */
	if (home_trash && (stat(home_trash, &home) != 0 || home.st_dev == st.st_dev))
		err = trash_into(home_trash, path, path, now, trashed, &cross);
	if (!cross)
		return err;
	/* The volume's top directory is found on the real path: a store
	 * reached through a symlink (kept in the path, as pi keeps it) may
	 * be on another file system than the link. */
	char *shown_dir = strndup(path, (size_t)(strrchr(path, '/') - path));
	char *dir = shown_dir ? realpath(*shown_dir ? shown_dir : "/", NULL) : NULL;
	char *real = dir ? malloc(strlen(dir) + strlen(strrchr(path, '/')) + 1) : NULL;
	char *top = real ? trash_topdir(dir) : NULL;
	err = PS_ERR_NOMEM;
	if (real)
		strcat(strcpy(real, strcmp(dir, "/") ? dir : ""), strrchr(path, '/'));
	char *volume = top ? trash_volume_dir(top, uid, &err) : NULL;
	if (volume) {
		/* Relative to the top directory, as the specification
		 * recommends there (the volume may be mounted elsewhere). */
		size_t n = strcmp(top, "/") == 0 ? 1 : strlen(top) + 1;
		err = trash_into(volume, path, real + n, now, trashed, &cross);
	}
	free(volume);
	free(top);
	free(real);
	free(dir);
	free(shown_dir);
	return err;
}

/* The Path of an info file's text, percent-decoded: new, or NULL. */
static char *trash_info_path(const char *text)
{
	const char *p = strstr(text, "\nPath=");
	if (!p)
		return NULL;
	p += strlen("\nPath=");
	size_t n = strcspn(p, "\n");
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned hi, lo;
		if (p[i] == '%' && i + 2 < n && sscanf(p + i + 1, "%1x%1x", &hi, &lo) == 2) {
			*o++ = (char)(hi << 4 | lo);
			i += 2;
		} else {
			*o++ = p[i];
		}
	}
	*o = '\0';
	return out;
}

ps_err trash_take_back(const char *home_trash, trash_wanted_fn wanted, void *ctx, size_t *restored)
{
	char dir[PATH_MAX];
	*restored = 0;
	if (!home_trash || (size_t)snprintf(dir, sizeof dir, "%s/info", home_trash) >= sizeof dir)
		return PS_OK;
	int info_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (info_fd < 0)
		return errno == ENOENT ? PS_OK : trash_errno(errno);
	snprintf(dir, sizeof dir, "%s/files", home_trash);
	int files_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = files_fd >= 0 ? fdopendir(dup(info_fd)) : NULL;
	ps_err err = d || files_fd < 0 ? PS_OK : PS_ERR_NOMEM;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name), sl = strlen(".trashinfo");
		char text[PATH_MAX * 3 + 128], name[NAME_MAX + 1];
		struct stat sb;
		if (n <= sl || strcmp(de->d_name + n - sl, ".trashinfo") != 0)
			continue;
		int fd = openat(info_fd, de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		ssize_t got = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (got <= 0)
			continue;
		text[got] = '\0';
		char *orig = trash_info_path(text);
		snprintf(name, sizeof name, "%.*s", (int)(n - sl), de->d_name);
		/* Back where it was, never over anything that is there now. */
		if (orig && wanted(ctx, orig) && lstat(orig, &sb) != 0 && errno == ENOENT &&
		    renameat(files_fd, name, AT_FDCWD, orig) == 0) {
			unlinkat(info_fd, de->d_name, 0);
			(*restored)++;
		}
		free(orig);
	}
	if (d)
		closedir(d);
	if (files_fd >= 0)
		close(files_fd);
	close(info_fd);
	return err;
}
