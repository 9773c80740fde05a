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
#include "pisessionfs.h"
#include "watch.h"
#include <fuse_lowlevel.h>
#include "layout.h"
#include "buf.h"
#include "overview.h"
#include "views.h"

/* The same for the root and the projects: the root holds session files
 * too (a flat store), and a symlinked project may be the root itself, one
 * watch whose events then count for both names. */
#define WATCH_MASK (IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | \
		    IN_ONLYDIR | IN_MASK_ADD)

struct watch_dir {
	int wd;
	char *name; /* project name; NULL for the store root */
};

static struct {
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
} watch = { .fd = -1, .wake = { -1, -1 }, .queue_lock = PTHREAD_MUTEX_INITIALIZER };

void psfs_watch_queue(const char *path)
{
	if (!watch.running)
		return;
	char *copy = strdup(path);
	if (!copy)
		return;
	pthread_mutex_lock(&watch.queue_lock);
	if (watch.queued == watch.queue_cap) {
		size_t cap = watch.queue_cap ? watch.queue_cap * 2 : 16;
		char **q = realloc(watch.queue, cap * sizeof *q);
		if (!q) {
			pthread_mutex_unlock(&watch.queue_lock);
			free(copy);
			return;
		}
		watch.queue = q;
		watch.queue_cap = cap;
	}
	watch.queue[watch.queued++] = copy;
	pthread_mutex_unlock(&watch.queue_lock);
	ssize_t w = write(watch.wake[1], "q", 1);
	(void)w;
}

static void watch_drain_queue(void)
{
	pthread_mutex_lock(&watch.queue_lock);
	char **q = watch.queue;
	size_t n = watch.queued;
	watch.queue = NULL;
	watch.queued = watch.queue_cap = 0;
	pthread_mutex_unlock(&watch.queue_lock);
	for (size_t i = 0; i < n; i++) {
		fuse_invalidate_path(watch.fs->fuse, q[i]);
		free(q[i]);
	}
	free(q);
}

static void watch_add(const char *project)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", store_root(watch.fs->store), project ? project : "");
	/* A symlinked project is followed (store.h): its directory is
	 * watched, under every name that leads to it. */
	int wd = inotify_add_watch(watch.fd, path, WATCH_MASK);
	if (wd < 0)
		return; /* gone meanwhile, or out of watches: timeouts still apply */
	for (size_t i = 0; i < watch.n; i++) {
		if (watch.dirs[i].wd == wd && (project && watch.dirs[i].name ? strcmp(watch.dirs[i].name, project) == 0
						 : !project && !watch.dirs[i].name))
			return;
	}
	if (watch.n == watch.cap) {
		size_t cap = watch.cap ? watch.cap * 2 : 16;
		struct watch_dir *d = realloc(watch.dirs, cap * sizeof *d);
		if (!d)
			return;
		watch.dirs = d;
		watch.cap = cap;
	}
	watch.dirs[watch.n].wd = wd;
	watch.dirs[watch.n].name = project ? strdup(project) : NULL;
	watch.n++;
}

static void watch_forget(int wd)
{
	for (size_t i = 0; i < watch.n;) {
		if (watch.dirs[i].wd == wd) {
			free(watch.dirs[i].name);
			watch.dirs[i] = watch.dirs[--watch.n];
		} else {
			i++;
		}
	}
}

static int watch_add_project(void *ctx, const char *name, const struct stat *st)
{
	(void)ctx;
	(void)st;
	watch_add(name);
	return 0;
}

static void watch_invalidate(const char *fmt, const char *a, const char *b, const char *c)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof path, fmt, a, b, c);
	/* ENOENT only means the kernel holds nothing for this path. */
	fuse_invalidate_path(watch.fs->fuse, path);
}

/* Drops a name at the mount root and every name the kernel holds below
 * it, for changes that make names vanish: invalidating an inode leaves its
 * name cached until the entry timeout, so `test -e` of a fork renamed by a
 * new label would still succeed.  The high-level API knows no node id but
 * the root's, hence a whole project (or view) at a time; such changes
 * (a rewrite, a relabel, a deletion) are rare next to appends. */
static void watch_forget_tree(const char *name)
{
	/* ENOENT only means the kernel holds nothing there. */
	fuse_lowlevel_notify_inval_entry(fuse_get_session(watch.fs->fuse), FUSE_ROOT_ID, name, strlen(name));
}

/* What an append changes: the session directory's generated files, the
 * context.json and transcript.md of every branch that grew (one path per
 * branch, not per entry: a session first seen may have a million new
 * entries, nearly all in one branch), and the views at the root. */
static void watch_session_changed(const char *project, const char *session)
{
	/* The session directory in the mount: "/project/session", or
	 * "/session" for a session file in the store root. */
	char sdir[PATH_MAX];
	snprintf(sdir, sizeof sdir, "/%s%s%s", project, *project ? "/" : "", session);
	static const char *const roots[] = {
		"context.json", "transcript.md", "usage.json", "leaf", "name", "labels", "problems",
		"session.jsonl", "entries", "header.json",
	};
	static const char *const views[] = { "by-id", "by-name", "by-cwd", "recent" };
	struct store_ref ref;
	char **dirs = NULL;
	unsigned char *grew = NULL;
	size_t n_dirs = 0;

	watch_invalidate("%s%s%s", sdir, "", "");
	if (*project) {
		watch_invalidate("/%s/%s%s", project, OVERVIEW_USAGE_CSV, "");
		watch_invalidate("/%s/%s%s", project, OVERVIEW_SESSIONS_MD, "");
	}
	watch_invalidate("/%s%s%s", OVERVIEW_USAGE_CSV, "", "");
	watch_invalidate("/%s%s%s", OVERVIEW_SESSIONS_MD, "", "");
	/* A new name, a new session or a newer one reorders these. */
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
		watch_forget_tree(views[i]);
	if (store_acquire_cached(watch.fs->store, project, session, &ref) == PS_OK) {
		struct ps_session *s = ref.session;
		struct store_notice *told = store_notice(&ref);
		uint64_t labels = session_labels_digest(s);
		if (told->generation != s->generation || told->labels != labels) {
			/* Rewritten (entry names may have gone, or now show
			 * other text) or relabeled (forks renamed). */
			watch_forget_tree(*project ? project : session);
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
		store_release(watch.fs->store, &ref);
	}
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
		watch_invalidate("%s/%s%s", sdir, roots[i], "");
	for (size_t i = 0; i < n_dirs; i++) {
		static const char *const generated[] = { "context.json", "transcript.md" };
		char path[PATH_MAX];
		watch_invalidate("%s/%s%s", sdir, dirs[i], "");
		for (size_t g = 0; g < sizeof generated / sizeof generated[0]; g++) {
			snprintf(path, sizeof path, "%s/%s", dirs[i], generated[g]);
			watch_invalidate("%s/%s%s", sdir, path, "");
		}
		free(dirs[i]);
	}
	free(dirs);
	free(grew);
}

/* An event in one watched directory: the store root (project NULL) or a
 * project. */
static void watch_event_in(const char *project, const struct inotify_event *ev)
{
	size_t n = strlen(ev->name);
	int session_file = n > 6 && strcmp(ev->name + n - 6, ".jsonl") == 0;
	if (!project && !session_file) {
		if (!(ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)))
			return;
		/* A project directory came or went. */
		if (ev->mask & (IN_CREATE | IN_MOVED_TO))
			watch_add(ev->name);
		if (ev->mask & (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
			watch_forget_tree(ev->name);
		watch_invalidate("/%s%s%s", ev->name, "", "");
		return;
	}
	if (!session_file)
		return;
	char session[NAME_MAX + 1];
	memcpy(session, ev->name, n - 6);
	session[n - 6] = '\0';
	/* A session gone or replaced by a rename: its names go with it. */
	if (ev->mask & (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)) {
		watch_forget_tree(project ? project : session);
		if (!project)
			watch_invalidate("/%s%s%s", session, "", "");
	}
	watch_session_changed(project ? project : "", session);
}

static void watch_event(const struct inotify_event *ev)
{
	if (ev->mask & IN_IGNORED) {
		watch_forget(ev->wd);
		return;
	}
	if (!ev->len)
		return;
	/* One directory may be watched under several names (a symlinked
	 * project): the event counts for each.  Names are copied first, as
	 * watch_add may move the table. */
	char **names = calloc(watch.n ? watch.n : 1, sizeof *names);
	int *is_root = calloc(watch.n ? watch.n : 1, sizeof *is_root);
	size_t found = 0;
	for (size_t i = 0; names && is_root && i < watch.n; i++) {
		if (watch.dirs[i].wd != ev->wd)
			continue;
		is_root[found] = !watch.dirs[i].name;
		names[found] = watch.dirs[i].name ? strdup(watch.dirs[i].name) : NULL;
		if (is_root[found] || names[found])
			found++;
	}
	for (size_t i = 0; i < found; i++) {
		watch_event_in(is_root[i] ? NULL : names[i], ev);
		free(names[i]);
	}
	free(names);
	free(is_root);
}

static void *watch_main(void *arg)
{
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	(void)arg;
	for (;;) {
		struct pollfd pfd[2] = { { watch.fd, POLLIN, 0 }, { watch.wake[0], POLLIN, 0 } };
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents) {
			char c[64];
			ssize_t got = read(watch.wake[0], c, sizeof c);
			if (got <= 0 || memchr(c, 'x', (size_t)got))
				break;
			watch_drain_queue();
			continue;
		}
		ssize_t len = read(watch.fd, buf, sizeof buf);
		if (len <= 0)
			continue;
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			watch_event(ev);
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

int psfs_watch_hears_all(void)
{
	return watch.running && !watch.remote;
}

int psfs_watch_start(struct psfs *fs)
{
	watch.fs = fs;
	watch.remote = watch_store_is_remote(store_root(fs->store));
	watch.fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (watch.fd < 0)
		return -1;
	if (pipe2(watch.wake, O_CLOEXEC) != 0) {
		close(watch.fd);
		watch.fd = -1;
		return -1;
	}
	watch_add(NULL);
	store_list_projects(fs->store, watch_add_project, NULL);
	if (pthread_create(&watch.thread, NULL, watch_main, NULL) != 0) {
		psfs_watch_stop();
		return -1;
	}
	watch.running = 1;
	return 0;
}

void psfs_watch_stop(void)
{
	if (watch.running) {
		ssize_t w = write(watch.wake[1], "x", 1);
		(void)w;
		pthread_join(watch.thread, NULL);
		watch.running = 0;
	}
	for (size_t i = 0; i < watch.n; i++)
		free(watch.dirs[i].name);
	free(watch.dirs);
	for (size_t i = 0; i < watch.queued; i++)
		free(watch.queue[i]);
	free(watch.queue);
	watch.queue = NULL;
	watch.queued = watch.queue_cap = 0;
	watch.dirs = NULL;
	watch.n = watch.cap = 0;
	for (int i = 0; i < 2; i++) {
		if (watch.wake[i] >= 0)
			close(watch.wake[i]);
		watch.wake[i] = -1;
	}
	if (watch.fd >= 0)
		close(watch.fd);
	watch.fd = -1;
}
