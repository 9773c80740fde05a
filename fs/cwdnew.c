/* Starting a session for a directory that has no project folder yet:
 * directories kept in memory under by-cwd/ until the first file made in
 * one starts a session (cwdnew.h).  Why a file and not the mkdir: `mkdir
 * -p by-cwd/home/ana/newproj/NAME` makes every component the same way,
 * and only the one a file is written in is the session rather than a
 * step of its path. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "caller.h"
#include "cwdnew.h"
#include "escape.h"
#include "journal.h"
#include "lockorder.h"
#include "ops_internal.h"
#include "overlay.h"
#include "route.h"
#include "sessionops.h"
#include "sessionstart.h"
#include "views.h"

#define CWDNEW_ROOT "/by-cwd"

/* One start at a time: two files made at once in a new directory start
 * one session, not two. */
static pthread_mutex_t cwdnew_start_lock = PTHREAD_MUTEX_INITIALIZER;

int cwdnew_owns(const char *path)
{
	size_t n = strlen(CWDNEW_ROOT);
	return strncmp(path, CWDNEW_ROOT, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int cwdnew_visible(const struct overlay_node *node)
{
	struct psfs_caller who;
	psfs_caller_get(&who);
	return psfs_caller_is(&who, node->uid);
}

int cwdnew_alias(const char **path, char **alias)
{
	const char *p = *path;
	size_t n = strlen(CWDNEW_ROOT);
	char prefix[PATH_MAX];
	int res = 0;

	*alias = NULL;
	if (!cwdnew_owns(p) || !p[n] || strlen(p) >= sizeof prefix)
		return 0;
	overlay_lock(psfs_overlay());
	/* Each directory on the way down, shortest first: a started one's
	 * descendants are the session's. */
	for (size_t i = n + 1; p[i - 1] && !*alias; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		memcpy(prefix, p, i);
		prefix[i] = '\0';
		struct overlay_node *node = overlay_get(psfs_overlay(), prefix);
		if (!node || node->kind != OVERLAY_CWD || !node->link || !cwdnew_visible(node))
			continue;
		if (asprintf(alias, "%s%s", node->link, p + i) < 0) {
			*alias = NULL;
			res = -ENOMEM;
			break;
		}
	}
	overlay_unlock(psfs_overlay());
	if (*alias)
		*path = *alias;
	return res;
}

/* A component as it may be typed here: by-cwd's own name of some string
 * (escape.h), that string holding no '/'. */
static int cwdnew_name_ok(const char *name)
{
	size_t n;
	char *str = escape_typed_string(name, &n);
	int ok = str && !memchr(str, '/', n) && !memchr(str, '\0', n);
	free(str);
	if (!str && n == (size_t)-1)
		return -ENOMEM;
	return ok ? 0 : -EINVAL;
}

int cwdnew_mkdir(const char *path, const char *name, mode_t mode)
{
	struct psfs_caller who;
	struct stat st;
	int res = cwdnew_name_ok(name);

	if (res == -EINVAL)
		journal_log("refused mkdir %s: by-cwd/ writes a directory's name as it lists them ('%%' before two "
			    "upper-case hex digits as %%25, '/' as %%2F cannot be one)",
			    journal_path(path));
	if (res)
		return res;
	if (views_getattr(psfs_self(), path, &st) == 0)
		return -EEXIST;
	psfs_caller_get(&who);
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), path);
	if (node) {
		res = -EEXIST;
	} else if ((node = overlay_add(psfs_overlay(), path, OVERLAY_CWD, mode & 07777))) {
		node->uid = who.uid;
		node->gid = who.gid;
		overlay_touch(node);
	} else {
		res = -ENOMEM;
	}
	overlay_unlock(psfs_overlay());
	return res;
}

int cwdnew_rmdir(const char *path, int *res)
{
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), path);
	int ours = node && node->kind == OVERLAY_CWD && !node->link && cwdnew_visible(node);
	if (ours)
		*res = overlay_has_children(psfs_overlay(), path) ? -ENOTEMPTY : (overlay_remove(psfs_overlay(), node), 0);
	overlay_unlock(psfs_overlay());
	return ours;
}

/* The cwd a kept directory's parent path stands for: "/by-cwd/a/b" is
 * "/a/b", each component read back as by-cwd writes it; "/by-cwd" is
 * "/".  New string, or NULL without memory. */
static char *cwdnew_cwd_of(const char *parent)
{
	struct buf b = BUF_INIT;
	const char *p = parent + strlen(CWDNEW_ROOT);
	int bad = 0;
	while (*p == '/' && !bad) {
		p++;
		size_t n = strcspn(p, "/"), len;
		char *comp = strndup(p, n);
		char *str = comp ? escape_typed_string(comp, &len) : NULL;
		/* mkdir let only such names in (cwdnew_name_ok); a real by-cwd
		 * directory's are so too. */
		bad = !str || buf_putc(&b, '/') || buf_put(&b, str, len);
		free(comp);
		free(str);
		p += n;
	}
	if (!bad && !b.len)
		bad = buf_putc(&b, '/');
	if (bad || buf_finish(&b)) {
		buf_free(&b);
		return NULL;
	}
	return b.data;
}

int cwdnew_start(const char *path, int entry_name, char **alias, int *res)
{
	const char *file;
	char *dir = psfs_dirname(path, &file), *parent = NULL, *cwd = NULL, *session = NULL;
	const char *name;
	mode_t mode = 0;
	int ours = 0;

	*alias = NULL;
	if (!dir) {
		*res = -ENOMEM;
		return 1;
	}
	if (!cwdnew_owns(dir)) {
		free(dir);
		return 0;
	}
	lockorder_lock(&cwdnew_start_lock, LOCK_CWD_START);
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), dir);
	if (node && node->kind == OVERLAY_CWD && cwdnew_visible(node)) {
		ours = 1;
		mode = node->mode;
		if (node->link)
			session = strdup(node->link); /* started meanwhile */
		*res = node->link && !session ? -ENOMEM : 0;
		if (!node->link && overlay_has_children(psfs_overlay(), dir)) {
			journal_log("refused creating %s: a directory holding directories is a path to a cwd, not a "
				    "session (write the first file in the deepest one)",
				    journal_path(path));
			*res = -EPERM;
		}
	}
	overlay_unlock(psfs_overlay());
	if (!ours || *res || session)
		goto out;
	if (!entry_name) {
		journal_log("refused creating %s: a session holds entries (NAME.md, NAME.json); the first one made "
			    "here starts the session",
			    journal_path(path));
		*res = -EPERM;
		goto out;
	}
	if (!(parent = psfs_dirname(dir, &name)) || !(cwd = cwdnew_cwd_of(parent))) {
		*res = -ENOMEM;
		goto out;
	}
	if ((*res = psfs_session_start_cwd(dir, cwd, name, mode, &session)))
		goto out;
	overlay_lock(psfs_overlay());
	node = overlay_get(psfs_overlay(), dir);
	if (node && node->kind == OVERLAY_CWD && !node->link)
		node->link = strdup(session);
	*res = node && node->link ? 0 : -ENOMEM;
	overlay_unlock(psfs_overlay());
out:
	lockorder_unlock(&cwdnew_start_lock, LOCK_CWD_START);
	if (ours && !*res && asprintf(alias, "%s/%s", session, file) < 0) {
		*alias = NULL;
		*res = -ENOMEM;
	}
	free(session);
	free(cwd);
	free(parent);
	free(dir);
	return ours;
}

/* What a listing shows of the kept directories, gathered under the
 * overlay's lock and filled in after it (views_getattr takes sessions,
 * which come before the overlay in the lock order). */
struct cwdnew_kept {
	size_t n, cap;
	struct {
		char *name;
		struct stat st;
	} *dirs;
	int nomem;
};

static void cwdnew_keep_one(void *ctx, const char *name, const struct overlay_node *node)
{
	struct cwdnew_kept *k = ctx;
	if (node->kind != OVERLAY_CWD || !cwdnew_visible(node) || k->nomem)
		return;
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 8;
		void *dirs = realloc(k->dirs, cap * sizeof *k->dirs);
		if (!dirs) {
			k->nomem = 1;
			return;
		}
		k->dirs = dirs;
		k->cap = cap;
	}
	if (!(k->dirs[k->n].name = strdup(name))) {
		k->nomem = 1;
		return;
	}
	overlay_stat(node, &k->dirs[k->n].st);
	k->n++;
}

int cwdnew_readdir(struct psfs *fs, const char *dir, void *buf, fuse_fill_dir_t filler, int skip_listed)
{
	struct cwdnew_kept k = { 0 };
	overlay_lock(psfs_overlay());
	overlay_list(psfs_overlay(), dir, cwdnew_keep_one, &k);
	overlay_unlock(psfs_overlay());
	for (size_t i = 0; i < k.n; i++) {
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, k.dirs[i].name);
		if (!k.nomem && !(skip_listed && views_getattr(fs, path, &st) == 0))
			filler(buf, k.dirs[i].name, &k.dirs[i].st, 0, 0);
		free(k.dirs[i].name);
	}
	free(k.dirs);
	return k.nomem ? -ENOMEM : 0;
}
