/* A draft: the text of one file being written, and everything that
 * decides when it becomes entries (docs/layout.md, "When a write is
 * committed").  Every descriptor of one open file shares one draft (the
 * kernel gives dup()ed and fork()ed descriptors one file handle), and an
 * in-memory file of the overlay (a new NAME.md, a side file) holds its
 * content as a draft too, so every open of that name shares it.
 *
 * What a draft is written over (its target) and its commit state are
 * guarded by its lock; its text too.  Lock order (docs/architecture.md):
 * a draft's lock is taken before a session's (store_acquire), which is
 * taken before the overlay's and the journal's; nothing that holds the
 * overlay lock takes a draft's.  draft_size is the one read without the
 * lock (a stat of an in-memory file under the overlay lock).
 *
 * Its fields are read by the handlers and written only by draft.c's
 * functions below, so that each change of state is one named step.
 *
 * Ownership: draft_new returns a new draft with one reference; each
 * holder (a handle, an overlay node) takes its own with draft_get and
 * drops it with draft_put; the last put frees it. */
#ifndef PSFS_DRAFT_H
#define PSFS_DRAFT_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "store.h"

enum draft_target {
	DRAFT_OVERLAY, /* an in-memory file: what it means is decided by its path when committed */
	DRAFT_EDIT,    /* an entry file: `entry` of the index (serial, generation) */
	DRAFT_REVISE,  /* an entry appended by an earlier commit of this draft: by `id` */
	DRAFT_NAME,    /* the session's `name` */
	DRAFT_LOADOUT, /* the session's `loadout.json` */
	DRAFT_RAW,     /* session.jsonl: lines after `raw_base` */
};

/* Bytes a draft may hold: a write past it is EFBIG. */
#define DRAFT_MAX ((size_t)256 << 20)

struct draft {
	pthread_mutex_t lock;
	unsigned refs;          /* atomic */
	enum draft_target target;
	char *data;             /* len bytes and a NUL; may be NULL when len is 0 */
	size_t len;
	size_t size;            /* len, for draft_size (atomic) */
	int dirty;              /* written since the last commit */
	int truncated;          /* emptied by O_TRUNC, not written since */
	int refused;            /* refused at a write: the rest is refused too */
	int committed;          /* committed at least once */
	int failed;             /* its last commit failed and kept it (ENOSPC, ENOMEM): the error
				 * was reported, so only an explicit close retries */
	/* The session it is written into (EDIT, REVISE, NAME, RAW). */
	char project[STORE_PROJECT_MAX];
	char session[NAME_MAX + 1];
	uint32_t entry;         /* EDIT */
	uint64_t serial;        /* EDIT: the index the entry number is of */
	uint64_t generation;
	char id[128];           /* REVISE: the entry the next commit edits */
	uint64_t raw_base;      /* RAW: the file's size before these bytes */
	/* The durable copy of its text that the last fsync() made, until a
	 * commit appends or refuses it (draftrecord.h); NULL: none. */
	struct draftrecord *record;
};

/* A new, empty draft with one reference; NULL without memory. */
struct draft *draft_new(enum draft_target target);
/* A new draft holding a copy of data (one reference); NULL without memory. */
struct draft *draft_new_with(const char *data, size_t len);
struct draft *draft_get(struct draft *d);
void draft_put(struct draft *d);

void draft_lock(struct draft *d);
void draft_unlock(struct draft *d);

/* Length of the text, read without the lock. */
size_t draft_size(const struct draft *d);

/* Locked: writes size bytes at off (growing the text with NULs as a
 * file does), marks it dirty.  size, or -EFBIG / -ENOMEM. */
int draft_write(struct draft *d, const char *buf, size_t size, size_t off);
/* Locked: cuts or grows the text to size, marks it dirty.  0 or -errno. */
int draft_truncate(struct draft *d, size_t size);
/* Before the draft is shared: what it is written into, and where in it
 * (EDIT: entry of the index serial/generation; RAW: the file's size). */
void draft_bind(struct draft *d, const char *project, const char *session, uint32_t entry, uint64_t serial,
		uint64_t generation, uint64_t raw_base);
/* Locked: empties the text for an open with O_TRUNC; emptied: it counts
 * as emptied (an entry's rewrite that stays empty is refused), else it
 * is just empty until written. */
void draft_empty(struct draft *d, int emptied);
/* Locked: the text was kept once (refused, or the session gone): emptied,
 * nothing left to commit. */
void draft_discard(struct draft *d);
/* Locked: RAW: the lines held were appended (later ones go after them),
 * or refused; either way they leave the draft. */
void draft_raw_done(struct draft *d, int appended);
/* Locked: refused at a write: the rest of what is written is refused too. */
void draft_refuse(struct draft *d);
/* Locked: what the draft is now written over (an edit of `name` or
 * `loadout.json` found at the path of a file put aside). */
void draft_retarget(struct draft *d, enum draft_target target);
/* Locked: the text becomes data (malloc'd, len bytes; the draft takes it). */
void draft_adopt(struct draft *d, char *data, size_t len);
/* Locked: copies up to size bytes at off into buf; how many. */
size_t draft_read(const struct draft *d, char *buf, size_t size, size_t off);

/* Locked: after a commit that appended `id` (NULL: nothing appended),
 * later text is a revision of that entry. */
void draft_committed(struct draft *d, const char *project, const char *session, const char *id);
/* Locked: after a commit point that answered res: a full disk or no
 * memory keeps the text and marks it failed (only an explicit close
 * retries); once nothing is left to commit, the record an fsync() made
 * goes. */
void draft_after_commit(struct draft *d, int res);
/* Locked: fsync(): the whole text made durable as the draft's record in
 * dir (draftrecord.h), naming path and its writer. */
ps_err draft_save_record(struct draft *d, const char *dir, const char *path, uid_t uid, gid_t gid);

#endif
