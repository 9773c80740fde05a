/* The session store: project directories, session files, and a bounded
 * cache of indexed sessions shared by the daemon's threads.
 *
 * Locking: the store's own lock guards the cache map only and is never held
 * while a file is read; each cached session has a lock of its own, held by
 * whoever acquired it.  Two readers of different sessions never wait for
 * each other. */
#ifndef PS_STORE_H
#define PS_STORE_H

#include <stddef.h>
#include <sys/stat.h>
#include "session.h"

struct ps_store;

/* The longest project path, with its NUL: wherever a project is taken it
 * may be a path of folders below the store ("PROJECT/STEM/RUN/run-0", a
 * subagent's session folder: family.h), not only one name. */
#define STORE_PROJECT_MAX 1024

/* A session acquired from the store: locked, refreshed, and kept in the
 * cache until released. */
struct store_ref {
	struct ps_session *session; /* borrowed, valid until store_release */
	void *slot;                 /* private */
};

/* root is copied.  max_sessions bounds the cache (0 = default, 256). */
ps_err store_open(const char *root, size_t max_sessions, struct ps_store **out);
void store_free(struct ps_store *store);
const char *store_root(const struct ps_store *store);

/* Calls fill for each project directory (directories, and symlinks to
 * directories: pi follows them too) or each session file (regular files
 * named *.jsonl, passed without the suffix; never symlinks).  Stops when
 * fill returns non-zero.
 *
 * Wherever a project is taken, "" names the store root itself: the
 * session files that lie directly in it (a flat store, as pi writes with
 * --session-dir or $PI_CODING_AGENT_SESSION_DIR). */
typedef int (*store_fill_fn)(void *ctx, const char *name, const struct stat *st);
ps_err store_list_projects(struct ps_store *store, store_fill_fn fill, void *ctx);

/* The store is its path, as pi finds it: a store directory replaced by
 * another (a restore from a backup, a sync tool) or moved away and back
 * is followed, and while the path leads to no directory the store holds
 * nothing (every lookup is PS_ERR_NOENT).  store_follow_root looks at
 * the path once and switches to the directory there now; one caller at a
 * time (the daemon's watcher), any number of readers meanwhile. */
enum store_root_change {
	STORE_ROOT_SAME,     /* as before (also: still gone) */
	STORE_ROOT_GONE,     /* no directory at the path any more */
	STORE_ROOT_BACK,     /* the same directory again, after it was gone */
	STORE_ROOT_BACK_NEW, /* another directory, after the store was gone */
	STORE_ROOT_REPLACED, /* another directory, with no gap seen between */
};
/* old_name (may be NULL) hears each name the directory left behind
 * held, as it holds them now (a directory moved away keeps its names; one
 * removed has none left), so the caller can drop what it shows of them. */
enum store_root_change store_follow_root(struct ps_store *store, store_fill_fn old_name, void *ctx);

/* Whether the project folder is a symlink in the store (followed, as pi
 * follows it): a session reached through it and through its target is
 * listed by the views under its real folder only. */
int store_project_is_link(const struct ps_store *store, const char *project);
ps_err store_list_sessions(struct ps_store *store, const char *project, store_fill_fn fill, void *ctx);
/* Calls each(ctx, project, name, st) for every session file of project,
 * or of the whole store when project is NULL: the real project folders,
 * then the symlinked ones, then the files in the store itself (project
 * ""), each file once (by device and inode: one reached through a link and
 * its target is met under its real folder).  Stops when each returns
 * non-zero.  PS_ERR_NOMEM, or the listing's error. */
typedef int (*store_each_fn)(void *ctx, const char *project, const char *name, const struct stat *st);
ps_err store_each_session(struct ps_store *store, const char *project, store_each_fn each, void *ctx);

/* The same names, but st is NULL wherever the directory entry already
 * told the type (no stat per file: for listings that need names only). */
ps_err store_list_project_names(struct ps_store *store, store_fill_fn fill, void *ctx);
ps_err store_list_session_names(struct ps_store *store, const char *project, store_fill_fn fill, void *ctx);

/* The folders in a project directory (never through a symlink), st
 * NULL: where a session's family folder may be (family.h). */
ps_err store_list_folders(struct ps_store *store, const char *project, store_fill_fn fill, void *ctx);

/* A descriptor of a project directory ("" the store itself), for making a
 * session file in it: PS_OK with *fd (the caller closes it), or the error. */
ps_err store_open_project(struct ps_store *store, const char *project, int *fd);

/* lstat of a project directory or a session file, with the same filters. */
ps_err store_stat_project(struct ps_store *store, const char *project, struct stat *st);
ps_err store_stat_session(struct ps_store *store, const char *project, const char *session, struct stat *st);

/* Acquires a session: opened and indexed on first use, refreshed against
 * the file on every acquire (so a store without inotify still updates).
 * On success *out holds the locked session; release it soon. */
ps_err store_acquire(struct ps_store *store, const char *project, const char *session, struct store_ref *out);
/* Acquires only if the session is cached already (PS_ERR_NOENT if not). */
ps_err store_acquire_cached(struct ps_store *store, const char *project, const char *session, struct store_ref *out);
void store_release(struct ps_store *store, struct store_ref *ref);
/* A skim of the session's file (session_open_skim: what the views'
 * catalog reads, at a fraction of an index's cost), the store's own
 * session never: *out is new and the caller's, released with
 * session_free.  PS_ERR_NOENT for a name the store does not show. */
ps_err store_open_skim(struct ps_store *store, const char *project, const char *session, struct ps_session **out);
/* The session's file indexed anew, telling obs each line as it is read
 * (session_open_observed), the store's own session never: *out is new and
 * the caller's.  PS_ERR_NOENT for a name the store does not show. */
struct session_observer;
ps_err store_open_observed(struct ps_store *store, const char *project, const char *session,
			   struct session_observer *obs, struct ps_session **out);

/* How far the change notifier has told the kernel about a session: the
 * entries and the index generation it last invalidated for.  Guarded by
 * the session lock (hold the ref); borrowed. */
struct store_notice {
	uint32_t entries;
	uint64_t generation;
	uint64_t labels;       /* session_labels_digest: labels name forks */
};
struct store_notice *store_notice(struct store_ref *ref);

/* Number of cached sessions, for tests and the cache bound. */
size_t store_cached(struct ps_store *store);

#endif
