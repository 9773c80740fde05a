#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "fileset.h"
#include "lockorder.h"
#include "store.h"

#define STORE_DEFAULT_SESSIONS 256

struct store_slot {
	char *key;                 /* "project/session" */
	struct ps_session *session;
	pthread_mutex_t lock;
	unsigned refs;             /* guarded by the store lock */
	uint64_t used;             /* LRU clock, guarded by the store lock */
	struct store_notice notice; /* guarded by lock */
	int gone;                  /* the file was found missing: drop at release */
	struct store_slot *next;   /* hash chain */
};

/* Descriptors of store directories the path no longer leads to, kept
 * open a while: a handler may have loaded one just before the swap.  A
 * handler holds it for one system call, and the watcher swaps at most
 * twice a second, so the oldest of these is long unused. */
#define STORE_RETIRED_FDS 8

struct ps_store {
	char *root;
	/* The store directory the path leads to now, or -1 while there is
	 * none (store_follow_root).  Loaded once per use, without the lock. */
	_Atomic int root_fd;
	dev_t root_dev;   /* of the directory root_fd is, or was last */
	ino_t root_ino;
	int retired[STORE_RETIRED_FDS];
	size_t n_retired; /* the watcher's own: only store_follow_root and store_free touch these */
	size_t max_sessions;
	pthread_mutex_t lock;
	struct store_slot **table;
	size_t table_size, count;
	uint64_t clock;
};

static int store_name_ok(const char *name)
{
	return name && *name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !strchr(name, '/');
}

/* A project path: names joined by '/', each a name of the store's
 * (a subagent run's folder, "PROJECT/STEM/RUN/run-0", is one: family.h),
 * at most STORE_PROJECT_MAX - 1 bytes. */
static int store_project_path_ok(const char *project)
{
	if (!project || !*project || strlen(project) >= STORE_PROJECT_MAX)
		return 0;
	for (const char *p = project;;) {
		size_t n = strcspn(p, "/");
		char name[NAME_MAX + 1];
		if (!n || n > NAME_MAX)
			return 0;
		memcpy(name, p, n);
		name[n] = '\0';
		if (!store_name_ok(name))
			return 0;
		if (!p[n])
			return 1;
		p += n + 1;
	}
}

/* A session's directory: a project path, or "" for the store root (a
 * flat store: pi's --session-dir). */
static int store_project_ok(const char *project)
{
	return project && (!*project || store_project_path_ok(project));
}

/* "project/session.jsonl", or "session.jsonl" at the store root. */
static int store_session_rel(const char *project, const char *session, char *rel, size_t size)
{
	if (!store_project_ok(project) || !store_name_ok(session))
		return 0;
	return (size_t)snprintf(rel, size, "%s%s%s.jsonl", project, *project ? "/" : "", session) < size;
}

ps_err store_open_skim(struct ps_store *store, const char *project, const char *session, struct ps_session **out)
{
	char rel[PATH_MAX], path[PATH_MAX * 2];
	if (!store_session_rel(project, session, rel, sizeof rel))
		return PS_ERR_NOENT;
	snprintf(path, sizeof path, "%s/%s", store->root, rel);
	return session_open_skim(path, out);
}

ps_err store_open_observed(struct ps_store *store, const char *project, const char *session,
			   struct session_observer *obs, struct ps_session **out)
{
	char rel[PATH_MAX], path[PATH_MAX * 2];
	if (!store_session_rel(project, session, rel, sizeof rel))
		return PS_ERR_NOENT;
	snprintf(path, sizeof path, "%s/%s", store->root, rel);
	return session_open_observed(path, obs, out);
}

ps_err store_open(const char *root, size_t max_sessions, struct ps_store **out)
{
	struct ps_store *st = calloc(1, sizeof *st);
	if (!st)
		return PS_ERR_NOMEM;
	st->root = strdup(root);
	st->max_sessions = max_sessions ? max_sessions : STORE_DEFAULT_SESSIONS;
	st->table_size = 1024;
	st->table = calloc(st->table_size, sizeof *st->table);
	pthread_mutex_init(&st->lock, NULL);
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat sb;
	st->root_fd = fd;
	if (!st->root || !st->table || fd < 0 || fstat(fd, &sb) != 0) {
		ps_err err = fd < 0 && st->root && st->table
			? (errno == ENOENT || errno == ENOTDIR ? PS_ERR_NOENT : PS_ERR_IO) : PS_ERR_NOMEM;
		store_free(st);
		return err;
	}
	st->root_dev = sb.st_dev;
	st->root_ino = sb.st_ino;
	*out = st;
	return PS_OK;
}

void store_free(struct ps_store *st)
{
	if (!st)
		return;
	for (size_t i = 0; st->table && i < st->table_size; i++) {
		for (struct store_slot *sl = st->table[i], *next; sl; sl = next) {
			next = sl->next;
			session_free(sl->session);
			pthread_mutex_destroy(&sl->lock);
			free(sl->key);
			free(sl);
		}
	}
	if (st->root_fd >= 0)
		close(st->root_fd);
	for (size_t i = 0; i < st->n_retired; i++)
		close(st->retired[i]);
	pthread_mutex_destroy(&st->lock);
	free(st->table);
	free(st->root);
	free(st);
}

const char *store_root(const struct ps_store *st)
{
	return st->root;
}

/* The store directory now, for one system call: -1 with errno ENOENT
 * while the path leads to none. */
static int store_dirfd(const struct ps_store *st)
{
	int fd = st->root_fd;
	if (fd < 0)
		errno = ENOENT;
	return fd;
}

static void store_retire_fd(struct ps_store *st, int fd)
{
	if (fd < 0)
		return;
	if (st->n_retired == STORE_RETIRED_FDS) {
		close(st->retired[0]);
		memmove(st->retired, st->retired + 1, (STORE_RETIRED_FDS - 1) * sizeof st->retired[0]);
		st->n_retired--;
	}
	st->retired[st->n_retired++] = fd;
}

static int store_session_file(const char *name, size_t *stem);

/* Each name in the store directory dir: project folders as they are,
 * session files without ".jsonl". */
static void store_tell_names(int dir, store_fill_fn fill, void *ctx)
{
	int fd = dup(dir);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		char name[NAME_MAX + 1];
		size_t stem = strlen(de->d_name);
		if (!store_name_ok(de->d_name))
			continue;
		store_session_file(de->d_name, &stem);
		memcpy(name, de->d_name, stem);
		name[stem] = '\0';
		if (fill(ctx, name, NULL))
			break;
	}
	closedir(d);
}

enum store_root_change store_follow_root(struct ps_store *st, store_fill_fn old_name, void *ctx)
{
	struct stat sb;
	int now = st->root_fd;
	if (stat(st->root, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		if (now < 0)
			return STORE_ROOT_SAME;
		st->root_fd = -1;
		if (old_name)
			store_tell_names(now, old_name, ctx);
		store_retire_fd(st, now);
		return STORE_ROOT_GONE;
	}
	int same = sb.st_dev == st->root_dev && sb.st_ino == st->root_ino;
	if (now >= 0 && same)
		return STORE_ROOT_SAME;
	int fd = open(st->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat opened;
	if (fd < 0 || fstat(fd, &opened) != 0) {
		if (fd >= 0)
			close(fd);
		return STORE_ROOT_SAME; /* changing right now: the next look tells */
	}
	same = opened.st_dev == st->root_dev && opened.st_ino == st->root_ino;
	st->root_dev = opened.st_dev;
	st->root_ino = opened.st_ino;
	st->root_fd = fd;
	if (now >= 0 && old_name)
		store_tell_names(now, old_name, ctx);
	store_retire_fd(st, now);
	if (now >= 0)
		return STORE_ROOT_REPLACED;
	return same ? STORE_ROOT_BACK : STORE_ROOT_BACK_NEW;
}

static ps_err store_errno(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
	case ELOOP:
		return PS_ERR_NOENT;
	case ENOMEM:
		return PS_ERR_NOMEM;
	default:
		return PS_ERR_IO;
	}
}

ps_err store_stat_project(struct ps_store *st, const char *project, struct stat *sb)
{
	if (!store_project_path_ok(project))
		return PS_ERR_NOENT;
	/* A symlinked project directory is followed, as pi's listAll does
	 * (docs/security.md); a loop is ELOOP, so not a project. */
	int root = store_dirfd(st);
	if (root < 0 || fstatat(root, project, sb, 0) != 0)
		return store_errno(errno);
	return S_ISDIR(sb->st_mode) ? PS_OK : PS_ERR_NOENT;
}

static int store_session_file(const char *name, size_t *stem)
{
	size_t n = strlen(name);
	if (n <= 6 || strcmp(name + n - 6, ".jsonl") != 0)
		return 0;
	*stem = n - 6;
	return 1;
}

ps_err store_stat_session(struct ps_store *st, const char *project, const char *session, struct stat *sb)
{
	char rel[PATH_MAX];
	if (!store_session_rel(project, session, rel, sizeof rel))
		return PS_ERR_NOENT;
	/* The session file itself is never a symlink: it is what appends go
	 * to.  Its project is a directory, or a symlink to one. */
	int root = store_dirfd(st);
	if (root < 0 || fstatat(root, rel, sb, AT_SYMLINK_NOFOLLOW) != 0) {
		int e = errno;
		return store_errno(e);
	}
	if (*project) {
		struct stat pb;
		ps_err err = store_stat_project(st, project, &pb);
		if (err)
			return err;
	}
	return S_ISREG(sb->st_mode) ? PS_OK : PS_ERR_NOENT;
}

/* What store_list lists: session files (by stem), project folders
 * (symlinks to folders followed, as pi follows them), or a project's own
 * folders (never through a symlink: where a family folder may be). */
enum store_listing { STORE_LIST_PROJECTS, STORE_LIST_SESSIONS, STORE_LIST_FOLDERS };

static ps_err store_list(struct ps_store *st, const char *dir, enum store_listing what, int need_stat,
			 store_fill_fn fill, void *ctx)
{
	int sessions = what == STORE_LIST_SESSIONS, follow = what == STORE_LIST_PROJECTS;
	/* A project may be a symlink to a directory (store_stat_project). */
	int root = store_dirfd(st);
	if (root < 0 && strcmp(dir, ".") == 0)
		return PS_OK; /* the store gone: it holds nothing */
	int fd = root < 0 ? -1 : openat(root, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return store_errno(errno);
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return PS_ERR_NOMEM;
	}
	struct dirent *de;
	struct stat sb;
	unsigned char want = sessions ? DT_REG : DT_DIR;
	while ((de = readdir(d))) {
		size_t stem = 0;
		const struct stat *stp = NULL;
		if (!store_name_ok(de->d_name))
			continue;
		if (sessions && !store_session_file(de->d_name, &stem))
			continue;
		/* The directory entry's type is the lstat type where the file
		 * system fills it in: a 5,000-session listing then costs no
		 * stat per file. */
		/* Where the type is known, a folder listing passes over
		 * the files and a session listing over the folders
		 * without a stat: only a project may be a symlink that is
		 * followed. */
		if (!need_stat && !follow && de->d_type != DT_UNKNOWN && de->d_type != want)
			continue;
		if (need_stat || de->d_type != want) {
			/* Session files as they are (never through a symlink),
			 * project directories followed. */
			if (fstatat(dirfd(d), de->d_name, &sb, follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0)
				continue; /* removed meanwhile */
			if (sessions ? !S_ISREG(sb.st_mode) : !S_ISDIR(sb.st_mode))
				continue;
			stp = &sb;
		}
		if (sessions) {
			char name[NAME_MAX + 1];
			memcpy(name, de->d_name, stem);
			name[stem] = '\0';
			if (fill(ctx, name, stp))
				break;
		} else if (fill(ctx, de->d_name, stp)) {
			break;
		}
	}
	closedir(d);
	return PS_OK;
}

static ps_err store_list_in(struct ps_store *st, const char *project, int need_stat, store_fill_fn fill, void *ctx)
{
	if (!store_project_ok(project))
		return PS_ERR_NOENT;
	return store_list(st, *project ? project : ".", STORE_LIST_SESSIONS, need_stat, fill, ctx);
}

ps_err store_list_projects(struct ps_store *st, store_fill_fn fill, void *ctx)
{
	return store_list(st, ".", STORE_LIST_PROJECTS, 1, fill, ctx);
}

int store_project_is_link(const struct ps_store *st, const char *project)
{
	struct stat link;
	int root = store_dirfd(st);
	return store_project_ok(project) && *project && root >= 0 && fstatat(root, project, &link, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISLNK(link.st_mode);
}

ps_err store_list_sessions(struct ps_store *st, const char *project, store_fill_fn fill, void *ctx)
{
	return store_list_in(st, project, 1, fill, ctx);
}

ps_err store_list_project_names(struct ps_store *st, store_fill_fn fill, void *ctx)
{
	return store_list(st, ".", STORE_LIST_PROJECTS, 0, fill, ctx);
}

ps_err store_list_session_names(struct ps_store *st, const char *project, store_fill_fn fill, void *ctx)
{
	return store_list_in(st, project, 0, fill, ctx);
}

static size_t store_hash(const char *key)
{
	return (size_t)strpool_hash(key, strlen(key));
}

static struct store_slot **store_find_link(struct ps_store *st, const char *key)
{
	struct store_slot **link = &st->table[store_hash(key) & (st->table_size - 1)];
	while (*link && strcmp((*link)->key, key) != 0)
		link = &(*link)->next;
	return link;
}

static void store_unlink_slot(struct ps_store *st, struct store_slot *victim)
{
	struct store_slot **link = store_find_link(st, victim->key);
	*link = victim->next;
	st->count--;
}

static void store_free_slot(struct store_slot *sl)
{
	session_free(sl->session);
	pthread_mutex_destroy(&sl->lock);
	free(sl->key);
	free(sl);
}

/* Under the store lock: drops least recently used idle sessions until
 * the cache is within its bound.  Returns the slots to free outside it. */
static struct store_slot *store_evict(struct ps_store *st)
{
	struct store_slot *freed = NULL;
	while (st->count > st->max_sessions) {
		struct store_slot *victim = NULL;
		for (size_t i = 0; i < st->table_size; i++)
			for (struct store_slot *sl = st->table[i]; sl; sl = sl->next)
				if (!sl->refs && (!victim || sl->used < victim->used))
					victim = sl;
		if (!victim)
			break;
		store_unlink_slot(st, victim);
		victim->next = freed;
		freed = victim;
	}
	return freed;
}

static ps_err store_get(struct ps_store *st, const char *project, const char *session, int create,
			struct store_ref *out)
{
	char key[PATH_MAX];
	struct store_slot *sl, *freed = NULL;

	/* The key is "project/session", "/session" at the store root. */
	if (!store_project_ok(project) || !store_name_ok(session))
		return PS_ERR_NOENT;
	if ((size_t)snprintf(key, sizeof key, "%s/%s", project, session) >= sizeof key)
		return PS_ERR_NOENT;
	lockorder_lock(&st->lock, LOCK_STORE);
	sl = *store_find_link(st, key);
	if (!sl && create) {
		sl = calloc(1, sizeof *sl);
		if (sl)
			sl->key = strdup(key);
		if (!sl || !sl->key) {
			free(sl);
			lockorder_unlock(&st->lock, LOCK_STORE);
			return PS_ERR_NOMEM;
		}
		pthread_mutex_init(&sl->lock, NULL);
		struct store_slot **link = &st->table[store_hash(key) & (st->table_size - 1)];
		sl->next = *link;
		*link = sl;
		st->count++;
	}
	if (sl) {
		sl->refs++;
		sl->used = ++st->clock;
		struct store_slot *evicted = store_evict(st);
		while (evicted) {
			struct store_slot *next = evicted->next;
			evicted->next = freed;
			freed = evicted;
			evicted = next;
		}
	}
	lockorder_unlock(&st->lock, LOCK_STORE);
	while (freed) {
		struct store_slot *next = freed->next;
		store_free_slot(freed);
		freed = next;
	}
	if (!sl)
		return PS_ERR_NOENT;

	lockorder_lock(&sl->lock, LOCK_SESSION);
	ps_err err;
	if (!sl->session) {
		char path[PATH_MAX * 2];
		snprintf(path, sizeof path, "%s/%s.jsonl", st->root, *project ? key : session);
		struct stat sb;
		err = store_stat_session(st, project, session, &sb);
		if (!err)
			err = session_open(path, &sl->session);
		if (!err)
			sl->session->store_root = st->root;
		/* The kernel may hold names shown from an index this slot
		 * replaced (evicted meanwhile): the first change re-announces
		 * every branch (entries 0), but a first index is no rebuild. */
		if (!err) {
			sl->notice.generation = sl->session->generation;
			sl->notice.labels = session_labels_digest(sl->session);
		}
	} else {
		err = session_refresh(sl->session, NULL);
	}
	sl->gone = err == PS_ERR_NOENT;
	out->slot = sl;
	out->session = sl->session;
	if (err) {
		store_release(st, out);
		out->session = NULL;
	}
	return err;
}

ps_err store_acquire(struct ps_store *st, const char *project, const char *session, struct store_ref *out)
{
	return store_get(st, project, session, 1, out);
}

ps_err store_acquire_cached(struct ps_store *st, const char *project, const char *session, struct store_ref *out)
{
	return store_get(st, project, session, 0, out);
}

struct store_notice *store_notice(struct store_ref *ref)
{
	return &((struct store_slot *)ref->slot)->notice;
}

void store_release(struct ps_store *st, struct store_ref *ref)
{
	struct store_slot *sl = ref->slot;
	int drop = 0;
	/* A session whose file is gone is dropped, not kept as a ghost. */
	if (!sl->session || sl->gone)
		drop = 1;
	lockorder_unlock(&sl->lock, LOCK_SESSION);
	lockorder_lock(&st->lock, LOCK_STORE);
	sl->refs--;
	if (drop && !sl->refs)
		store_unlink_slot(st, sl);
	else
		drop = 0;
	lockorder_unlock(&st->lock, LOCK_STORE);
	if (drop)
		store_free_slot(sl);
	ref->slot = NULL;
	ref->session = NULL;
}

size_t store_cached(struct ps_store *st)
{
	lockorder_lock(&st->lock, LOCK_STORE);
	size_t n = st->count;
	lockorder_unlock(&st->lock, LOCK_STORE);
	return n;
}

struct store_each {
	struct ps_store *store;
	const char *project;
	store_each_fn each;
	void *ctx;
	struct fileset met;
	int links;   /* this pass lists the symlinked project folders */
	int stopped;
	ps_err err;
};

static int store_each_file(void *ctx, const char *name, const struct stat *st)
{
	struct store_each *w = ctx;
	int met = fileset_meet(&w->met, st->st_dev, st->st_ino);
	if (met < 0)
		w->err = PS_ERR_NOMEM;
	else if (!met && w->each(w->ctx, w->project, name, st))
		w->stopped = 1;
	return w->err || w->stopped;
}

static int store_each_project(void *ctx, const char *name, const struct stat *st)
{
	struct store_each *w = ctx;
	(void)st;
	if (store_project_is_link(w->store, name) != w->links)
		return 0;
	w->project = name;
	ps_err err = store_list_sessions(w->store, name, store_each_file, w);
	if (err == PS_ERR_NOMEM)
		w->err = err; /* a folder gone meanwhile is passed over */
	return w->err || w->stopped;
}

ps_err store_each_session(struct ps_store *store, const char *project, store_each_fn each, void *ctx)
{
	struct store_each w = { store, project, each, ctx, FILESET_INIT, 0, 0, PS_OK };
	ps_err err = PS_OK;
	if (project) {
		err = store_list_sessions(store, project, store_each_file, &w);
	} else {
		for (; !err && !w.err && !w.stopped && w.links < 2; w.links++)
			err = store_list_projects(store, store_each_project, &w);
		w.project = "";
		if (!err && !w.err && !w.stopped)
			err = store_list_sessions(store, "", store_each_file, &w);
	}
	fileset_free(&w.met);
	return err ? err : w.err;
}

ps_err store_list_folders(struct ps_store *st, const char *project, store_fill_fn fill, void *ctx)
{
	if (!store_project_path_ok(project))
		return PS_ERR_NOENT;
	return store_list(st, project, STORE_LIST_FOLDERS, 0, fill, ctx);
}

ps_err store_open_project(struct ps_store *st, const char *project, int *fd)
{
	struct stat sb;
	if (*project) {
		ps_err err = store_stat_project(st, project, &sb);
		if (err)
			return err;
	}
	int root = store_dirfd(st);
	*fd = root < 0 ? -1 : openat(root, *project ? project : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return *fd < 0 ? store_errno(errno) : PS_OK;
}
