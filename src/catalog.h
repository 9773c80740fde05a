/* What the navigation views at the mount root need to know of every
 * session: id, name, working directory, start and last activity.  Kept as
 * a small table beside the store's bounded cache of full indexes, and
 * brought up to date (at most once a second) by re-reading only the
 * session files whose size or time changed.  Thread-safe. */
#ifndef PS_CATALOG_H
#define PS_CATALOG_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

#define CATALOG_TITLE_MAX 48

struct catalog_session {
	char *project;   /* store directory; "" for a session file in the store root */
	char *stem;      /* file name without .jsonl */
	char *id;        /* the header's id ("" if not a session) */
	char *cwd;       /* the header's cwd ("" if none) */
	char *name;      /* display name ("" if none) */
	char *title;     /* as pi's list shows it: the name, else the first user
			  * message, on one line, at most CATALOG_TITLE_MAX bytes
			  * (title.h) */
	int64_t mtime_ns;/* last activity: the file's modification time */
	uint64_t size;
	/* The file's owner and mode: the views show a session only to
	 * callers who may read its file (docs/security.md). */
	uint32_t mode, uid, gid;
	int seen;        /* private: found by the current scan */
	int fork;        /* the header names a parentSession (pi's /fork made it) */
	int buried;      /* private: in the trash, its rm -r under way (resolves, not listed) */
	unsigned gen;    /* private: counts the changes of its fields in the table (a
			  * scan's read, made without the lock, is dropped when they
			  * changed meanwhile) */
};

struct ps_catalog;

ps_err catalog_new(struct ps_store *store, struct ps_catalog **out);
void catalog_free(struct ps_catalog *cat);
/* Keeps what is read of each session in memo (filememo.h; borrowed,
 * outlives the catalog; NULL keeps nothing), and reads it back while the
 * file is unchanged. */
struct filememo;
void catalog_set_memo(struct ps_catalog *cat, struct filememo *memo);
/* How many threads a scan reads the changed sessions on (fanout.h; 0,
 * the default: one per core). */
void catalog_set_threads(struct ps_catalog *cat, unsigned threads);
/* The next snapshot or lookup scans the store again (it was replaced). */
void catalog_expire(struct ps_catalog *cat);

/* A consistent copy of the table (new array of new strings; free with
 * catalog_snapshot_free), sorted by last activity, newest first.  Scans the
 * store first unless it did so within the last second.  Ties: the file
 * name descending, as pi's SessionManager.listAll() orders them. */
ps_err catalog_snapshot(struct ps_catalog *cat, struct catalog_session **out, size_t *n);
void catalog_snapshot_free(struct catalog_session *items, size_t n);
/* catalog_snapshot, unless the table is still what it was at *version (a
 * version an earlier call set): then *out is NULL and nothing is copied.
 * *version is set to the table's.  A table starts at version 0, so pass
 * UINT64_MAX the first time. */
ps_err catalog_snapshot_since(struct ps_catalog *cat, uint64_t *version, struct catalog_session **out, size_t *n);

/* The session of project named name (its display name), when no session
 * file of project is called name: its file's name (stem) into stem, and
 * 1, or 2 when that session is a fork (its header names a parentSession);
 * 0 when name is a file's or no session's name (the newest such session
 * wins).  So `mkdir PROJECT/NAME` and `ln -s ENTRY PROJECT/NAME` keep
 * resolving as typed.  When name is neither, reads again what the
 * watcher heard change (catalog_changed), or, with no watcher that hears
 * everything, scans the store when the table is over a second old. */
int catalog_name_to_stem(struct ps_catalog *cat, const char *project, const char *name, char stem[256]);

/* The cwd of project's most recently active session that has one (new
 * string), or NULL (none, or out of memory). */
char *catalog_project_cwd(struct ps_catalog *cat, const char *project);

/* Takes the session file project/stem into the table now (made by the
 * mount: the next lookup must know it without waiting for a scan). */
ps_err catalog_add(struct ps_catalog *cat, const char *project, const char *stem);
/* The mount committed name as the session project/stem's name (s, held
 * by the caller, is that session after the commit): the table learns it
 * at its next use, without reading the session or waiting for a scan, so
 * by-name/ and a lookup of the name under the project know it as soon as
 * the write that named it returns.  Takes no lock but a leaf one: safe
 * with a session held. */
void catalog_renamed(struct ps_catalog *cat, const char *project, const char *stem, const struct ps_session *s,
		     const char *name);
/* Whether a watcher hears every change of the store (fs/watch.c): then a
 * lookup of a name no session has reads only what catalog_changed named,
 * not the whole store. */
void catalog_set_watched(struct ps_catalog *cat, int watched);
/* The watcher heard session file project/stem change (made, written,
 * renamed, removed); stem NULL: any of project's (a new project folder);
 * project NULL: anything (events were lost).  Takes a leaf lock only. */
void catalog_changed(struct ps_catalog *cat, const char *project, const char *stem);
/* Frees one item's strings (one a caller drops from its copy) and zeroes it. */
void catalog_session_clear(struct catalog_session *c);

#endif
