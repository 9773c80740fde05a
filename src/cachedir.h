/* The cache directory as a whole: the databases of every store that was
 * mounted (diskmemo.h keeps one of them), which mounts use them, how much
 * room they take, and their removal (docs/layout.md "The cache kept across
 * mounts").  Used by the daemon at mount, off its critical path, and by
 * `pisession cache`.
 *
 * A database is store-HASH.sqlite (with SQLite's -wal, -shm and -journal
 * beside it) and store-HASH.lock: a mount holds a shared flock(2) on the
 * lock file for as long as it is mounted, so a database whose lock can be
 * taken exclusively is in use by no mount, and only such a database is
 * ever removed (under that lock).  The lock file's modification time is
 * when a mount last opened or closed the database.  A separate file, not
 * the database itself: closing any descriptor of a database drops the
 * POSIX locks SQLite holds on it.
 *
 * Ownership: what cachedir_list gives is new (cachedir_list_free); paths
 * passed in are borrowed. */
#ifndef PS_CACHEDIR_H
#define PS_CACHEDIR_H

#include <stdint.h>
#include <time.h>

/* The default size of the whole cache directory, in MiB (-o cache_max):
 * a quarter of a 4 GB store, about what a laptop spares for a cache. */
#define CACHEDIR_DEFAULT_MAX_MIB 1024
/* A database whose store is gone is removed once no mount used it for
 * this long. */
#define CACHEDIR_UNUSED_DAYS 30

/* The directory the cache is in by default: $XDG_CACHE_HOME/pisessionfs
 * (an absolute XDG_CACHE_HOME only, as the spec says), else
 * HOME/.cache/pisessionfs; home may be NULL.  New string, or NULL when
 * neither is known or out of memory. */
char *cachedir_default(const char *home);

/* The path of the database for the store at store_path in dir (new). */
char *cachedir_db_path(const char *dir, const char *store_path);

/* Takes the shared lock that says a mount uses the database at db_path
 * (its lock file, made where missing, touched): the descriptor to keep
 * open while mounted, or -1 (errno).  Waits while a removal holds it. */
int cachedir_hold(const char *db_path);
/* Touches the lock file (the database's last use) and closes fd. */
void cachedir_release(int fd);

struct cachedir_db {
	char *path;        /* store-HASH.sqlite */
	char *store;       /* the store it was made for; NULL: not readable */
	uint64_t bytes;    /* the database with its -wal, -shm and -journal */
	time_t used;       /* last opened or closed by a mount */
	int in_use;        /* a mount holds it now */
	int store_exists;  /* the store is a directory now */
};

/* The databases in dir, least recently used first: 0, or -1 (errno; a
 * missing dir is 0 databases).  cachedir_list_free frees them. */
int cachedir_list(const char *dir, struct cachedir_db **out, size_t *n);
void cachedir_list_free(struct cachedir_db *dbs, size_t n);

/* Removes the database at db_path and its lock file, unless a mount uses
 * it: 0, 1 when in use (nothing removed), -1 (errno). */
int cachedir_remove(const char *db_path);

/* Told what a sweep removed and why (borrowed text). */
typedef void (*cachedir_note_fn)(void *ctx, const char *what);

/* What a mount does at start, and again when its own database own_path
 * (never removed; may be NULL) needs more room: removes each database
 * whose store no longer exists and that no mount used for
 * CACHEDIR_UNUSED_DAYS days before now; then, while the others and
 * own_need bytes (or what own_path takes, if more) would take more than
 * max_bytes, the databases no mount uses, least recently used first.
 * Each removal is told to note.  Returns the room left for own_path
 * within max_bytes (what the other databases leave), at least
 * max_bytes / 8. */
uint64_t cachedir_sweep(const char *dir, const char *own_path, uint64_t max_bytes, uint64_t own_need, time_t now,
			cachedir_note_fn note, void *ctx);

#endif
