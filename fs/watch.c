/* Follows the store with inotify and tells the kernel what changed, so a
 * listing or a cat right after pi appends shows the new state instead of
 * what the kernel cached.  Runs in its own thread: invalidating from inside
 * a handler can deadlock (libfuse's doc/README.notifications).  Without
 * inotify, or where it is silent (a store on NFS or a FUSE mount changed
 * by someone else: the watches are set up and never fire), the mount still
 * updates: every access re-checks the file, and the kernel's caches expire
 * after the timeout (tests/mount/t_nonotify.sh). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "caller.h"
#include "lockorder.h"
#include "pisessionfs.h"
#include "watch.h"
#include <fuse_lowlevel.h>
#include "layout.h"
#include "buf.h"
#include "overview.h"
#include "views.h"
#include "catalog.h"
#include "journal.h"
#include "family.h"
#include "trash.h"
#include <dirent.h>
#include <time.h>

/* The same for the root and the projects: the root holds session files
 * too (a flat store), and a symlinked project may be the root itself, one
 * watch whose events then count for both names. */
#define WATCH_MASK (IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | \
		    IN_ONLYDIR | IN_MASK_ADD)

struct watch_dir {
	int wd;
	char *name; /* project name; NULL for the store root; a family's folder: its project path */
	/* A folder of a session's family (family.h): the session's project
	 * and stem, and the mount path of its directory, whose subagents/
	 * shows what the folder holds.  NULL for the root and projects. */
	char *fam_project, *fam_stem, *fam_mount;
};

struct watch {
	struct psfs *fs;
	int fd;
	int wake[2];
	pthread_t thread;
	int running;
	int remote;         /* the store is on a file system inotify cannot follow */
	struct watch_dir *dirs;
	size_t n, cap;
	pthread_mutex_t queue_lock;
	char **queue;       /* paths handlers asked to invalidate */
	size_t queued, queue_cap;
	struct timespec looked; /* when the store's path was last looked at */
	/* Families whose folders are watched or asked for, "project/stem"
	 * (guarded by queue_lock): a handler asks once per family. */
	char **families;
	size_t n_families, cap_families;
};

/* A request of the queue that is no path: watch a family's folders. */
#define WATCH_FAMILY_MARK '\x01'
/* Families watched at most (inotify's watches are the user's, shared). */
#define WATCH_FAMILIES_MAX 4096

/* How often the store's path is looked at (one stat): a store directory
 * replaced or moved back shows within a second.  inotify cannot tell:
 * a new directory at the path sends nothing to the old one's watch. */
#define WATCH_ROOT_LOOK_MS 400

/* Asks the watcher thread to invalidate a path: what a handler uses when
 * its own write changed what the kernel has cached. */
static void watch_queue(struct watch *w, const char *path)
{
	if (!w || !w->running)
		return;
	char *copy = strdup(path);
	if (!copy)
		return;
	lockorder_lock(&w->queue_lock, LOCK_WATCH_QUEUE);
	if (w->queued == w->queue_cap) {
		size_t cap = w->queue_cap ? w->queue_cap * 2 : 16;
		char **q = realloc(w->queue, cap * sizeof *q);
		if (!q) {
			lockorder_unlock(&w->queue_lock, LOCK_WATCH_QUEUE);
			free(copy);
			return;
		}
		w->queue = q;
		w->queue_cap = cap;
	}
	w->queue[w->queued++] = copy;
	lockorder_unlock(&w->queue_lock, LOCK_WATCH_QUEUE);
	ssize_t n = write(w->wake[1], "q", 1);
	(void)n;
}

static void watch_family_add(struct watch *w, const char *request);
static void watch_family_changed(struct watch *w, const char *fam_project, const char *fam_stem, const char *mount,
				 const char *top, const char *dir, const char *stem);

static void watch_drain_queue(struct watch *w)
{
	lockorder_lock(&w->queue_lock, LOCK_WATCH_QUEUE);
	char **q = w->queue;
	size_t n = w->queued;
	w->queue = NULL;
	w->queued = w->queue_cap = 0;
	lockorder_unlock(&w->queue_lock, LOCK_WATCH_QUEUE);
	for (size_t i = 0; i < n; i++) {
		if (q[i][0] == WATCH_FAMILY_MARK)
			watch_family_add(w, q[i] + 1);
		else
			fuse_invalidate_path(w->fs->fuse, q[i]);
		free(q[i]);
	}
	free(q);
}

static struct watch_dir *watch_add_dir(struct watch *w, const char *project);

static void watch_add(struct watch *w, const char *project)
{
	watch_add_dir(w, project);
}

/* Watches a directory (project NULL: the store root): its entry in the
 * table, or NULL when it cannot be watched or was already, under that
 * name. */
static struct watch_dir *watch_add_dir(struct watch *w, const char *project)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", store_root(w->fs->store), project ? project : "");
	/* A symlinked project is followed (store.h): its directory is
	 * watched, under every name that leads to it. */
	int wd = inotify_add_watch(w->fd, path, WATCH_MASK);
	if (wd < 0)
		return NULL; /* gone meanwhile, or out of watches: timeouts still apply */
	for (size_t i = 0; i < w->n; i++) {
		if (w->dirs[i].wd == wd && (project && w->dirs[i].name ? strcmp(w->dirs[i].name, project) == 0
						 : !project && !w->dirs[i].name))
			return NULL;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		struct watch_dir *d = realloc(w->dirs, cap * sizeof *d);
		if (!d)
			return NULL;
		w->dirs = d;
		w->cap = cap;
	}
	memset(&w->dirs[w->n], 0, sizeof w->dirs[w->n]);
	w->dirs[w->n].wd = wd;
	w->dirs[w->n].name = project ? strdup(project) : NULL;
	return &w->dirs[w->n++];
}

static void watch_dir_clear(struct watch_dir *d)
{
	free(d->name);
	free(d->fam_project);
	free(d->fam_stem);
	free(d->fam_mount);
}

static void watch_forget(struct watch *w, int wd)
{
	for (size_t i = 0; i < w->n;) {
		if (w->dirs[i].wd == wd) {
			watch_dir_clear(&w->dirs[i]);
			w->dirs[i] = w->dirs[--w->n];
		} else {
			i++;
		}
	}
}

static int watch_add_project(void *ctx, const char *name, const struct stat *st)
{
	(void)st;
	watch_add(ctx, name);
	return 0;
}

static void watch_invalidate(struct watch *w, const char *fmt, const char *a, const char *b, const char *c)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof path, fmt, a, b, c);
	/* ENOENT only means the kernel holds nothing for this path. */
	fuse_invalidate_path(w->fs->fuse, path);
}

/* Drops a name at the mount root and every name the kernel holds below
 * it, for changes that make names vanish: invalidating an inode leaves its
 * name cached until the entry timeout, so `test -e` of a fork renamed by a
 * new label would still succeed.  The high-level API knows no node id but
 * the root's, hence a whole project (or view) at a time; such changes
 * (a rewrite, a relabel, a deletion) are rare next to appends. */
static void watch_forget_tree(struct watch *w, const char *name)
{
	/* ENOENT only means the kernel holds nothing there. */
	fuse_lowlevel_notify_inval_entry(fuse_get_session(w->fs->fuse), FUSE_ROOT_ID, name, strlen(name));
}

/* What an append changes: the session directory's generated files, the
 * context.json and transcript.md of every branch that grew (one path per
 * branch, not per entry: a session first seen may have a million new
 * entries, nearly all in one branch), and the views at the root. */
static void watch_session_changed_at(struct watch *w, const char *sdir, const char *top, const char *project,
				     const char *session);

static void watch_session_changed(struct watch *w, const char *project, const char *session)
{
	/* The session directory in the mount: "/project/session", or
	 * "/session" for a session file in the store root. */
	char sdir[PATH_MAX];
	snprintf(sdir, sizeof sdir, "/%s%s%s", project, *project ? "/" : "", session);
	watch_session_changed_at(w, sdir, project, project, session);
}

/* The same for a session shown at sdir (a subagent's: below its
 * parent's subagents/), in the project top of the mount root. */
static void watch_session_changed_at(struct watch *w, const char *sdir, const char *top, const char *project,
				     const char *session)
{
	static const char *const roots[] = {
		"context.json", "transcript.md", "tree.txt", "usage.json", "leaf", "name", "loadout.json", "labels", "problems",
		"session.jsonl", "entries", "header.json",
	};
	static const char *const views[] = { "by-id", "by-name", "by-cwd", "recent" };
	struct store_ref ref;
	char **dirs = NULL;
	unsigned char *grew = NULL;
	size_t n_dirs = 0;

	watch_invalidate(w, "%s%s%s", sdir, "", "");
	for (size_t i = 0; overview_file_name(i); i++) {
		if (*top)
			watch_invalidate(w, "/%s/%s%s", top, overview_file_name(i), "");
		watch_invalidate(w, "/%s%s%s", overview_file_name(i), "", "");
	}
	/* A new name, a new session or a newer one reorders these. */
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
		watch_forget_tree(w, views[i]);
	if (store_acquire_cached(w->fs->store, project, session, &ref) == PS_OK) {
		struct ps_session *s = ref.session;
		struct store_notice *told = store_notice(&ref);
		uint64_t labels = session_labels_digest(s);
		if (told->generation != s->generation || told->labels != labels) {
			/* Rewritten (entry names may have gone, or now show
			 * other text) or relabeled (forks renamed). */
			watch_forget_tree(w, *top ? top : session);
			told->generation = s->generation;
			told->labels = labels;
			told->entries = 0;
		}
		uint32_t *seen = &told->entries;
		if (*seen > s->n_entries)
			*seen = 0;
		grew = calloc(s->n_branches ? s->n_branches : 1, 1);
		dirs = calloc(s->n_branches ? s->n_branches : 1, sizeof *dirs);
		for (uint32_t e = *seen; grew && dirs && e < s->n_entries; e++) {
			uint32_t br = s->entries[e].branch;
			if (br == 0 || grew[br])
				continue;
			grew[br] = 1;
			char *path = layout_entry_path(s, e);
			char *slash = path ? strrchr(path, '/') : NULL;
			if (slash) {
				*slash = '\0';
				dirs[n_dirs++] = path;
			} else {
				free(path);
			}
		}
		*seen = s->n_entries;
		store_release(w->fs->store, &ref);
	}
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
		watch_invalidate(w, "%s/%s%s", sdir, roots[i], "");
	for (size_t i = 0; i < n_dirs; i++) {
		static const char *const generated[] = { "context.json", "transcript.md" };
		char path[PATH_MAX];
		watch_invalidate(w, "%s/%s%s", sdir, dirs[i], "");
		for (size_t g = 0; g < sizeof generated / sizeof generated[0]; g++) {
			snprintf(path, sizeof path, "%s/%s", dirs[i], generated[g]);
			watch_invalidate(w, "%s/%s%s", sdir, path, "");
		}
		free(dirs[i]);
	}
	free(dirs);
	free(grew);
}

/* What a session's rm -r put in the trash beside its file (sessionops.c):
 * its family folder, then the artifacts of the runs the folder holds. */
struct watch_take {
	char *folder;      /* STORE/PROJECT/STEM */
	char *artifacts;   /* STORE/PROJECT/subagent-artifacts/ */
	char **runs;       /* the run folders' names, once the folder is back */
	size_t n_runs;
};

static int watch_take_wanted(void *ctx, const char *orig)
{
	struct watch_take *t = ctx;
	if (!t->runs)
		return strcmp(orig, t->folder) == 0;
	size_t al = strlen(t->artifacts);
	if (strncmp(orig, t->artifacts, al) != 0 || strchr(orig + al, '/'))
		return 0;
	for (size_t i = 0; i < t->n_runs; i++) {
		size_t rl = strlen(t->runs[i]);
		if (strncmp(orig + al, t->runs[i], rl) == 0 && orig[al + rl] == '_')
			return 1;
	}
	return 0;
}

/* A session file came (restored from the trash: trash-restore renames it
 * back) without its family folder: the folder and its runs' artifacts
 * come back from the home trash with it, where they are there. */
static void watch_take_back_family(struct watch *w, const char *project, const char *stem)
{
	struct watch_take t = { 0 };
	struct stat sb;
	size_t folder_back = 0, artifacts_back = 0;
	const char *root = store_root(w->fs->store);
	if (!w->fs->trash_home || asprintf(&t.folder, "%s/%s/%s", root, project, stem) < 0)
		return;
	if (lstat(t.folder, &sb) == 0 || errno != ENOENT ||
	    trash_take_back(w->fs->trash_home, watch_take_wanted, &t, &folder_back) != PS_OK || !folder_back)
		goto out;
	DIR *d = asprintf(&t.artifacts, "%s/%s/%s/", root, project, FAMILY_ARTIFACTS_DIR) < 0 ? NULL : opendir(t.folder);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char **grown;
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !(grown = realloc(t.runs, (t.n_runs + 1) * sizeof *grown)))
			continue;
		t.runs = grown;
		if ((t.runs[t.n_runs] = strdup(de->d_name)))
			t.n_runs++;
	}
	if (d)
		closedir(d);
	if (!t.runs)
		t.runs = calloc(1, sizeof *t.runs);
	if (t.runs && t.artifacts)
		(void)trash_take_back(w->fs->trash_home, watch_take_wanted, &t, &artifacts_back);
	journal_log_in(w->fs->journal, "%s/%s came back: its subagents' folder %s and %zu of its runs' artifacts came back from the trash with it",
		       project, stem, t.folder, artifacts_back);
out:
	for (size_t i = 0; i < t.n_runs; i++)
		free(t.runs[i]);
	free(t.runs);
	free(t.folder);
	free(t.artifacts);
}

/* An event in one watched directory: the store root (project NULL) or a
 * project. */
static void watch_event_in(struct watch *w, const char *project, const struct inotify_event *ev)
{
	size_t n = strlen(ev->name);
	int session_file = n > 6 && strcmp(ev->name + n - 6, ".jsonl") == 0;
	if (!project && !session_file) {
		if (!(ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)))
			return;
		/* A project directory came or went. */
		if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
			watch_add(w, ev->name);
			/* Its files may have come before its watch. */
			catalog_changed(w->fs->catalog, ev->name, NULL);
		}
		if (ev->mask & (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
			watch_forget_tree(w, ev->name);
		watch_invalidate(w, "/%s%s%s", ev->name, "", "");
		return;
	}
	if (!session_file)
		return;
	char session[NAME_MAX + 1];
	memcpy(session, ev->name, n - 6);
	session[n - 6] = '\0';
	/* A session gone or replaced by a rename: its names go with it. */
	if (ev->mask & (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)) {
		watch_forget_tree(w, project ? project : session);
		if (!project)
			watch_invalidate(w, "/%s%s%s", session, "", "");
	}
	if (project && (ev->mask & (IN_CREATE | IN_MOVED_TO)))
		watch_take_back_family(w, project, session);
	if (ev->mask & (IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM))
		catalog_changed(w->fs->catalog, project ? project : "", session);
	watch_session_changed(w, project ? project : "", session);
}

/* Watches the folder dir (a project path) of the family of
 * project/stem shown at mount, and every folder below it, to the depth a
 * family's sessions may lie at (family.h). */
static void watch_family_dir(struct watch *w, const char *dir, const char *project, const char *stem,
			     const char *mount, int depth)
{
	struct watch_dir *d = watch_add_dir(w, dir);
	if (d) {
		d->fam_project = strdup(project);
		d->fam_stem = strdup(stem);
		d->fam_mount = strdup(mount);
	}
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", store_root(w->fs->store), dir);
	DIR *dd = depth < 4 ? opendir(path) : NULL;
	struct dirent *de;
	while (dd && (de = readdir(dd))) {
		char sub[PATH_MAX];
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name) < sizeof sub)
			watch_family_dir(w, sub, project, stem, mount, depth + 1);
	}
	if (dd)
		closedir(dd);
}

/* A request "project\x1fstem\x1fmount" (watch_family). */
static void watch_family_add(struct watch *w, const char *request)
{
	char *copy = strdup(request), *stem = copy ? strchr(copy, '\x1f') : NULL;
	char *mount = stem ? strchr(stem + 1, '\x1f') : NULL;
	if (mount) {
		*stem++ = '\0';
		*mount++ = '\0';
		char dir[PATH_MAX], top[NAME_MAX + 1];
		snprintf(top, sizeof top, "%.*s", (int)strcspn(copy, "/"), copy);
		if ((size_t)snprintf(dir, sizeof dir, "%s/%s", copy, stem) < sizeof dir) {
			watch_family_dir(w, dir, copy, stem, mount, 1);
			/* What changed between the handler's look and the
			 * watches: told once. */
			watch_family_changed(w, copy, stem, mount, top, dir, NULL);
		}
	}
	free(copy);
}

/* Tells the kernel that the family's children in dir (stem: that one
 * only; NULL: every child whose folder is dir or below it) changed. */
static void watch_family_changed(struct watch *w, const char *fam_project, const char *fam_stem, const char *mount,
				 const char *top, const char *dir, const char *stem)
{
	struct family *fam = NULL;
	size_t dl = strlen(dir);
	if (family_read(w->fs->store, w->fs->family, fam_project, fam_stem, &fam) != PS_OK)
		return;
	for (size_t i = 0; i < fam->n; i++) {
		const struct family_member *m = &fam->members[i];
		char sdir[PATH_MAX];
		if (!m->stem || (stem ? strcmp(m->dir, dir) != 0 || strcmp(m->stem, stem) != 0
				      : strncmp(m->dir, dir, dl) != 0 || (m->dir[dl] && m->dir[dl] != '/')))
			continue;
		snprintf(sdir, sizeof sdir, "%s/%s/%s", mount, SUBAGENTS_NAME, m->name);
		watch_session_changed_at(w, sdir, top, m->dir, m->stem);
	}
	family_free(fam);
}

/* An event in a folder of a family (d): a child's file grew, came or
 * went, a run's folder came. */
static void watch_event_in_family(struct watch *w, const struct watch_dir *d, const struct inotify_event *ev)
{
	char *dir = strdup(d->name), *fam_project = strdup(d->fam_project), *fam_stem = strdup(d->fam_stem);
	char *mount = strdup(d->fam_mount);
	size_t n = strlen(ev->name);
	char top[NAME_MAX + 1];
	if (!dir || !fam_project || !fam_stem || !mount)
		goto out;
	snprintf(top, sizeof top, "%.*s", (int)strcspn(fam_project, "/"), fam_project);
	if ((ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
		/* A new run's folder: watched first, then what it holds
		 * already is told, so that no append falls between the two. */
		char sub[PATH_MAX];
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dir, ev->name) < sizeof sub) {
			watch_family_dir(w, sub, fam_project, fam_stem, mount, 2);
			watch_family_changed(w, fam_project, fam_stem, mount, top, sub, NULL);
		}
	}
	watch_invalidate(w, "%s/%s%s", mount, SUBAGENTS_NAME, "");
	watch_invalidate(w, "%s/%s%s", mount, "usage.json", "");
	if (n > 6 && strcmp(ev->name + n - 6, ".jsonl") == 0) {
		char stem[NAME_MAX + 1];
		snprintf(stem, sizeof stem, "%.*s", (int)(n - 6), ev->name);
		watch_family_changed(w, fam_project, fam_stem, mount, top, dir, stem);
		if (ev->mask & (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
			watch_forget_tree(w, top);
	}
out:
	free(dir);
	free(fam_project);
	free(fam_stem);
	free(mount);
}

static void watch_event(struct watch *w, const struct inotify_event *ev)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		catalog_changed(w->fs->catalog, NULL, NULL); /* events lost: the next miss scans */
		return;
	}
	if (ev->mask & IN_IGNORED) {
		watch_forget(w, ev->wd);
		return;
	}
	if (!ev->len)
		return;
	/* One directory may be watched under several names (a symlinked
	 * project): the event counts for each.  Names are copied first, as
	 * watch_add may move the table. */
	char **names = calloc(w->n ? w->n : 1, sizeof *names);
	int *is_root = calloc(w->n ? w->n : 1, sizeof *is_root);
	size_t found = 0;
	for (size_t i = 0; names && is_root && i < w->n; i++) {
		if (w->dirs[i].wd != ev->wd)
			continue;
		if (w->dirs[i].fam_mount) {
			struct watch_dir d = w->dirs[i];
			watch_event_in_family(w, &d, ev);
			break; /* (watch_event_in_family copies what it needs: the table may move) */
		}
		is_root[found] = !w->dirs[i].name;
		names[found] = w->dirs[i].name ? strdup(w->dirs[i].name) : NULL;
		if (is_root[found] || names[found])
			found++;
	}
	for (size_t i = 0; i < found; i++) {
		watch_event_in(w, is_root[i] ? NULL : names[i], ev);
		free(names[i]);
	}
	free(names);
	free(is_root);
}

static int watch_forget_old_name(void *ctx, const char *name, const struct stat *st)
{
	(void)st;
	watch_forget_tree(ctx, name);
	return 0;
}

static long watch_ms_since(const struct timespec *then)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - then->tv_sec) * 1000 + (now.tv_nsec - then->tv_nsec) / 1000000;
}

/* The store directory replaced, gone or back (store_follow_root): the
 * watches move to the directory now at the path, and the kernel forgets
 * every name it holds from the old one, so the mount shows the new store
 * whole at once, not after the cache timeout. */
static void watch_follow_root(struct watch *w)
{
	clock_gettime(CLOCK_MONOTONIC, &w->looked);
	enum store_root_change change = store_follow_root(w->fs->store, watch_forget_old_name, w);
	const char *root = store_root(w->fs->store);
	static const char *const views[] = { "by-id", "by-name", "by-cwd", "recent", "search" };
	switch (change) {
	case STORE_ROOT_SAME:
		return;
	case STORE_ROOT_GONE:
		journal_log_in(w->fs->journal,
			       "the store %s is gone (removed or moved away): the mount shows no sessions until a "
			       "directory is there again, and follows it then",
			       root);
		break;
	case STORE_ROOT_BACK:
		journal_log_in(w->fs->journal, "the store %s is back (the same directory): showing it again", root);
		break;
	case STORE_ROOT_BACK_NEW:
		journal_log_in(w->fs->journal, "the store %s is back (a new directory): showing it", root);
		break;
	case STORE_ROOT_REPLACED:
		journal_log_in(w->fs->journal, "the store %s was replaced by another directory: showing the new one",
			       root);
		break;
	}
	/* The old directory's watches would report a store no longer shown. */
	for (size_t i = 0; i < w->n; i++) {
		if (w->dirs[i].name)
			watch_forget_tree(w, w->dirs[i].name);
		inotify_rm_watch(w->fd, w->dirs[i].wd);
		free(w->dirs[i].name);
	}
	w->n = 0;
	if (change != STORE_ROOT_GONE) {
		watch_add(w, NULL);
		store_list_projects(w->fs->store, watch_add_project, w);
	}
	catalog_expire(w->fs->catalog);
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
		watch_forget_tree(w, views[i]);
	for (size_t i = 0; overview_file_name(i); i++)
		watch_forget_tree(w, overview_file_name(i));
	fuse_invalidate_path(w->fs->fuse, "/");
}

static void *watch_main(void *arg)
{
	struct watch *w = arg;
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		struct pollfd pfd[2] = { { w->fd, POLLIN, 0 }, { w->wake[0], POLLIN, 0 } };
		int ready = poll(pfd, 2, WATCH_ROOT_LOOK_MS);
		if (ready < 0 && errno != EINTR)
			break;
		if (watch_ms_since(&w->looked) >= WATCH_ROOT_LOOK_MS)
			watch_follow_root(w);
		if (ready <= 0)
			continue;
		if (pfd[1].revents) {
			char c[64];
			ssize_t got = read(w->wake[0], c, sizeof c);
			if (got <= 0 || memchr(c, 'x', (size_t)got))
				break;
			watch_drain_queue(w);
			continue;
		}
		ssize_t len = read(w->fd, buf, sizeof buf);
		if (len <= 0)
			continue;
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			watch_event(w, ev);
			p += sizeof *ev + ev->len;
		}
	}
	return NULL;
}

/* File systems whose files can change without the local kernel seeing it
 * (other clients of a network file system, a FUSE daemon's own backing
 * store): inotify watches on them are set up and stay silent. */
static int watch_store_is_remote(const char *root)
{
	static const unsigned long remote[] = {
		0x6969,     /* NFS */
		0x517b,     /* SMB */
		0xfe534d42, /* SMB2 */
		0xff534d42, /* CIFS */
		0x65735546, /* FUSE */
		0x00c36400, /* Ceph */
		0x01021997, /* 9P */
		0x5346414f, /* AFS */
		0x73757245, /* Coda */
		0x01161970, /* GFS2 */
		0x0bd00bd0, /* Lustre */
		0x7461636f, /* OCFS2 */
	};
	struct statfs sf;
	if (statfs(root, &sf) != 0)
		return 1;
	for (size_t i = 0; i < sizeof remote / sizeof remote[0]; i++) {
		if ((unsigned long)sf.f_type == remote[i])
			return 1;
	}
	return 0;
}

int watch_hears_all(const struct watch *w)
{
	return w && w->running && !w->remote;
}

/* Stops the thread (when it runs) and frees what the watcher holds. */
static void watch_free(struct watch *w)
{
	if (w->running) {
		ssize_t n = write(w->wake[1], "x", 1);
		(void)n;
		pthread_join(w->thread, NULL);
		w->running = 0;
	}
	for (size_t i = 0; i < w->n; i++)
		watch_dir_clear(&w->dirs[i]);
	free(w->dirs);
	for (size_t i = 0; i < w->n_families; i++)
		free(w->families[i]);
	free(w->families);
	for (size_t i = 0; i < w->queued; i++)
		free(w->queue[i]);
	free(w->queue);
	for (int i = 0; i < 2; i++) {
		if (w->wake[i] >= 0)
			close(w->wake[i]);
	}
	if (w->fd >= 0)
		close(w->fd);
	pthread_mutex_destroy(&w->queue_lock);
	free(w);
}

struct watch *watch_start(struct psfs *fs)
{
	struct watch *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->fs = fs;
	w->wake[0] = w->wake[1] = -1;
	pthread_mutex_init(&w->queue_lock, NULL);
	w->remote = watch_store_is_remote(store_root(fs->store));
	w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (w->fd < 0 || pipe2(w->wake, O_CLOEXEC) != 0) {
		watch_free(w);
		return NULL;
	}
	watch_add(w, NULL);
	store_list_projects(fs->store, watch_add_project, w);
	clock_gettime(CLOCK_MONOTONIC, &w->looked);
	if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
		watch_free(w);
		return NULL;
	}
	w->running = 1;
	catalog_set_watched(fs->catalog, watch_hears_all(w));
	return w;
}

void watch_stop(struct watch *w)
{
	if (w)
		watch_free(w);
}

/* --- for a FUSE handler: the watcher of the mount it serves ---------------------- */

static struct watch *watch_of_request(void)
{
	struct fuse_context *ctx = psfs_context();
	struct psfs *fs = ctx && ctx->fuse ? ctx->private_data : NULL;
	return fs ? fs->watch : NULL;
}

int psfs_watch_hears_all(void)
{
	return watch_hears_all(watch_of_request());
}

void psfs_watch_queue(const char *path)
{
	watch_queue(watch_of_request(), path);
}

/* Asks the watcher to watch the family folder of project/stem (family.h)
 * and the folders below it, whose sessions the mount shows at mount (the
 * session directory's path: "/PROJECT/STEM"), so that a child's appends
 * reach the kernel as a session's do.  Once per family; lazily, from
 * the handlers that show a family. */
static void watch_family(struct watch *w, const char *project, const char *stem, const char *mount)
{
	char *key = NULL, *request = NULL;
	if (!w || !w->running || w->remote || !*project)
		return;
	if (asprintf(&key, "%s/%s", project, stem) < 0 ||
	    asprintf(&request, "%c%s\x1f%s\x1f%s", WATCH_FAMILY_MARK, project, stem, mount) < 0) {
		free(key);
		return;
	}
	lockorder_lock(&w->queue_lock, LOCK_WATCH_QUEUE);
	int known = w->n_families >= WATCH_FAMILIES_MAX;
	for (size_t i = 0; !known && i < w->n_families; i++)
		known = strcmp(w->families[i], key) == 0;
	if (!known && w->n_families == w->cap_families) {
		size_t cap = w->cap_families ? 2 * w->cap_families : 16;
		char **grown = realloc(w->families, cap * sizeof *grown);
		if (grown) {
			w->families = grown;
			w->cap_families = cap;
		} else {
			known = 1;
		}
	}
	if (!known)
		w->families[w->n_families++] = key, key = NULL;
	lockorder_unlock(&w->queue_lock, LOCK_WATCH_QUEUE);
	if (!known)
		watch_queue(w, request);
	free(key);
	free(request);
}

void psfs_watch_family(const char *project, const char *stem, const char *mount)
{
	watch_family(watch_of_request(), project, stem, mount);
}
