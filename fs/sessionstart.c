/* Starting a session (sessionstart.h): mkdir PROJECT/NAME, as pi's /new,
 * and the first file of a directory made under by-cwd/ (docs/layout.md
 * "Starting a session", "Starting a session in a new directory"). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "caller.h"
#include "catalog.h"
#include "commit.h"
#include "journal.h"
#include "jstext.h"
#include "ops_internal.h"
#include "sessionnew.h"
#include "sessionstart.h"
#include "watch.h"

/* The cwd a new session of project gets: that of its most recently
 * active session, else the folder's name read back as pi makes it
 * (--home-u-proj-- from /home/u/proj: every '-' read as '/', which a
 * path with dashes of its own does not survive; docs/layout.md).  New
 * string, NULL without memory. */
static char *psfs_new_session_cwd(struct psfs *fs, const char *project)
{
	char *cwd = catalog_project_cwd(fs->catalog, project);
	size_t n = strlen(project);
	if (cwd || !*project)
		return cwd ? cwd : strdup("/");
	if (n > 4 && strncmp(project, "--", 2) == 0 && strcmp(project + n - 2, "--") == 0) {
		if (asprintf(&cwd, "/%.*s", (int)(n - 4), project + 2) < 0)
			return NULL;
		for (char *p = cwd; *p; p++)
			if (*p == '-')
				*p = '/';
		return cwd;
	}
	return strdup("/");
}

/* Starts the session NAME with that cwd in the folder project (open as
 * fd), for the request path; *stem new on success.  0 or -errno, logged. */
static int psfs_session_begin(const char *path, const char *project, int fd, const char *name, const char *cwd,
			      mode_t mode, char **stem)
{
	struct psfs *fs = psfs_self();
	struct psfs_caller who;
	struct store_ref ref;
	char *name_path = NULL;
	ps_err err;
	int res;

	psfs_caller_get(&who);
	err = sessionnew_create(fd, cwd, mode | 0600, who.uid, who.gid, stem);
	if (err) {
		journal_log("refused mkdir %s: the session file could not be made: %s", journal_path(path),
			    ps_strerror(err));
		return -psfs_errno(err);
	}
	/* The name as `echo NAME > name` gives it: pi's appendSessionInfo. */
	if ((err = store_acquire(fs->store, project, *stem, &ref)))
		return -psfs_errno(err);
	if (asprintf(&name_path, "/%s%s%s/name", project, *project ? "/" : "", *stem) < 0)
		name_path = NULL;
	res = name_path ? commit_name(&ref, name_path, name, strlen(name)) : -ENOMEM;
	store_release(fs->store, &ref);
	free(name_path);
	if (!res)
		catalog_add(fs->catalog, project, *stem);
	journal_log("mkdir %s: started the session %s%s%s (cwd %s)%s", journal_path(path), project, *project ? "/" : "",
		    *stem,
		    cwd, res ? ", but naming it failed" : "");
	return res;
}

/* mkdir PROJECT/NAME: a new session, as pi's /new starts one, named NAME
 * (its session_info), which resolves as typed from then on (psfs_split).
 * At the root, the same in a flat store. */
int psfs_session_start(const char *path, const struct psfs_path *parent, const char *name, mode_t mode)
{
	struct psfs *fs = psfs_self();
	char *stem = NULL, *cwd = NULL;
	int fd = -1, res;
	ps_err err;

	if (!jstext_utf8_valid(name, strlen(name))) {
		journal_log("refused mkdir %s: a session's name is UTF-8 text", journal_path(path));
		return -EINVAL;
	}
	if ((err = store_open_project(fs->store, parent->project, &fd)))
		return -psfs_errno(err);
	if (!(cwd = psfs_new_session_cwd(fs, parent->project))) {
		res = -ENOMEM;
		goto out;
	}
	res = psfs_session_begin(path, parent->project, fd, name, cwd, mode, &stem);
	if (!res)
		psfs_watch_queue(path);
out:
	if (fd >= 0)
		close(fd);
	free(stem);
	free(cwd);
	return res;
}

/* The folder pi keeps cwd's sessions in, opened (*fd) and named
 * (*project, new), made in the store when it is not there yet: as the
 * caller, who must be allowed to write there (*made then says so).  0 or
 * -errno, logged, with nothing made. */
static int psfs_cwd_folder(const char *path, const char *cwd, mode_t mode, char **project, int *fd, int *made)
{
	struct psfs *fs = psfs_self();
	struct psfs_caller who;
	struct stat dir;
	int root = -1, res = 0;
	ps_err err;

	psfs_caller_get(&who);
	if (!(*project = sessionnew_folder_name(cwd)))
		return -ENOMEM;
	if (strlen(*project) > NAME_MAX) {
		journal_log("refused starting a session in %s: pi's folder name for %s is longer than a file name may be",
			    journal_path(path), cwd);
		res = -ENAMETOOLONG;
		goto out;
	}
	if ((err = store_open_project(fs->store, "", &root))) {
		res = -psfs_errno(err);
		goto out;
	}
	if (fstatat(root, *project, &dir, 0) != 0) {
		if (errno != ENOENT) {
			res = -errno;
			goto out;
		}
		if (fstat(root, &dir) != 0 || !psfs_caller_may_write_in(&who, &dir)) {
			journal_log("refused starting a session in %s: the folder %s would be made in the store, where you "
				    "may not write", journal_path(path), *project);
			res = -EACCES;
			goto out;
		}
		if (mkdirat(root, *project, (mode & 0777) | 0700) == 0) {
			*made = 1;
		} else if (errno != EEXIST) { /* EEXIST: made meanwhile, by pi or another mount */
			res = -errno;
			journal_log("refused starting a session in %s: the folder %s could not be made: %s",
				    journal_path(path),
				    *project, strerror(errno));
			goto out;
		}
		/* pi's mkdirSync makes it its own user's; so for the caller. */
		if (*made && geteuid() == 0 && fchownat(root, *project, who.uid, who.gid, AT_SYMLINK_NOFOLLOW) != 0) {
			res = -errno;
			unlinkat(root, *project, AT_REMOVEDIR);
			goto out;
		}
	} else if (!S_ISDIR(dir.st_mode) || !psfs_caller_may_write_in(&who, &dir)) {
		journal_log("refused starting a session in %s: you may not write in its folder %s", journal_path(path),
			    *project);
		res = S_ISDIR(dir.st_mode) ? -EACCES : -ENOTDIR;
		goto out;
	}
	if ((err = store_open_project(fs->store, *project, fd))) {
		res = -psfs_errno(err);
		if (*made)
			unlinkat(root, *project, AT_REMOVEDIR);
	}
out:
	if (root >= 0)
		close(root);
	if (res) {
		free(*project);
		*project = NULL;
	}
	return res;
}

/* Removes the folder psfs_cwd_folder made, if it is still empty. */
static void psfs_cwd_folder_unmake(const char *project)
{
	int root;
	if (store_open_project(psfs_self()->store, "", &root))
		return;
	unlinkat(root, project, AT_REMOVEDIR);
	close(root);
}

int psfs_session_start_cwd(const char *path, const char *cwd, const char *name, mode_t mode, char **session)
{
	char *project = NULL, *stem = NULL;
	int fd = -1, res, made = 0;

	*session = NULL;
	if (!jstext_utf8_valid(name, strlen(name)) || !jstext_utf8_valid(cwd, strlen(cwd))) {
		journal_log("refused starting a session in %s: a session's name and cwd are UTF-8 text",
			    journal_path(path));
		return -EINVAL;
	}
	if ((res = psfs_cwd_folder(path, cwd, mode, &project, &fd, &made)))
		return res;
	res = psfs_session_begin(path, project, fd, name, cwd, mode, &stem);
	/* A session file that could not be made leaves no folder behind (one
	 * that was made but not named stays: it is a session). */
	if (res && !stem && made)
		psfs_cwd_folder_unmake(project);
	if (!res && asprintf(session, "/%s/%s", project, stem) < 0) {
		*session = NULL;
		res = -ENOMEM;
	}
	if (!res)
		psfs_watch_queue(*session);
	close(fd);
	free(project);
	free(stem);
	return res;
}
