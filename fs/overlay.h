/* In-memory files and directories that live beside the real tree: editors'
 * side files (swap files, 4913 probes, backups, sed's temporaries), files
 * being written that are not entries yet, entry files an editor renamed
 * away while saving, and pending branches made with mkdir.  None of them
 * ever reaches a session file by itself; the write path (file.c,
 * namespace.c, commit.c) decides what becomes an entry.  The overlay is
 * the namespace of these names only: a file's content is a draft
 * (draft.h), which its open handles share. */
#ifndef PSFS_OVERLAY_H
#define PSFS_OVERLAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include "draft.h"

enum overlay_kind {
	OVERLAY_FILE,     /* a scratch file: data is its content */
	OVERLAY_SYMLINK,  /* a scratch symlink (emacs's .#f lock): data is the target */
	OVERLAY_HIDDEN,   /* an entry file renamed away: the path looks absent */
	OVERLAY_BRANCH,   /* a pending branch made by mkdir NNNN~name */
	OVERLAY_CWD,      /* a directory made by mkdir under by-cwd/ (cwdnew.h): link is
			   * NULL until a file made in it starts a session, then that
			   * session's "/PROJECT/STEM", which the path stands for */
	OVERLAY_SAVED,    /* a new file that became an entry: its name still answers
			   * (stat, read, chmod, utimes; an open for writing starts a
			   * new file) until `expires`, so the calls that follow a save
			   * (install's chmod, rsync's utimes, the shell's next
			   * `> same.md`) find it; never listed */
	OVERLAY_ALIAS,    /* the name libfuse gave an open entry file replaced or
			   * removed (.fuse_hidden…): edit_of is the entry's path,
			   * which its stat and open answer for; never listed.  When
			   * libfuse removes it, it answers until `expires`: a rename
			   * refused after libfuse hid its target leaves the kernel's
			   * name of the entry on this one until its cache times out */
};

struct overlay_node {
	enum overlay_kind kind;
	char *path;           /* full mount path */
	struct draft *draft;  /* FILE, SAVED: the content (a reference of the node's) */
	char *link;           /* SYMLINK: the target */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	struct timespec mtime;
	unsigned opens;       /* open handles: a file is freed at unlink only when 0 */
	int unlinked;
	char *edit_of;        /* path of the entry file this content would replace */
	char *fork_id;        /* BRANCH: id of the entry the branch starts after ("" for a new root) */
	char *label;          /* BRANCH: the label its first entry gets */
	uint64_t serial;      /* unique per node: tells a node from a later one at the same path */
	int temporary;        /* FILE: made the way mkstemp makes files (O_RDWR|O_CREAT|O_EXCL,
			       * mode 0600): an entry only once renamed into place */
	struct timespec expires; /* SAVED: CLOCK_MONOTONIC time its name stops answering */
	char *backing;        /* FILE in rejected/: a file of the store that keeps the same text
			       * (a recovered draft's record), removed when the user removes this */
};

/* Ownership: a struct overlay (struct psfs's overlay, made by main.c)
 * owns its nodes and their names, links and labels, and a reference to
 * each node's draft; overlay_free frees every node still in it (those
 * removed while an open handle held them are freed by overlay_put).
 * Every function below that takes the overlay reads or changes its
 * namespace; the node-only ones change just the node.  Both kinds are
 * called with the overlay locked, except overlay_new and overlay_free. */
struct overlay;

/* A new overlay, empty (NULL when out of memory). */
struct overlay *overlay_new(void);
/* Frees ov and every node in it; no handle may hold one.  ov may be NULL. */
void overlay_free(struct overlay *ov);
void overlay_lock(struct overlay *ov);
void overlay_unlock(struct overlay *ov);

/* Lookups and changes: call with the overlay locked.  Returned nodes are
 * borrowed and valid while the lock is held (or while an open handle holds
 * the node). */
struct overlay_node *overlay_get(struct overlay *ov, const char *path);
/* Turns a FILE into a SAVED name for `seconds` (a SAVED node found by
 * overlay_get past its time is removed there); overlay_saved_keep pushes
 * its end back, so that it outlives what the kernel cached of it. */
void overlay_saved(struct overlay_node *node, double seconds);
void overlay_saved_keep(struct overlay_node *node, double seconds);
struct overlay_node *overlay_add(struct overlay *ov, const char *path, enum overlay_kind kind, mode_t mode);
/* Removes a node from the namespace; it is freed when no handle holds it. */
void overlay_remove(struct overlay *ov, struct overlay_node *node);
/* Moves a node to another path, replacing what was there. */
int overlay_rename(struct overlay *ov, struct overlay_node *node, const char *to);
/* Drops an open handle's hold (node->opens); a node removed meanwhile is
 * freed at the last. */
void overlay_put(struct overlay_node *node);
/* A FILE's content becomes a new draft holding a copy of data (a SYMLINK's
 * target: data).  The node must be one no handle holds yet: the overlay
 * lock is held, so no draft's lock may be taken.  0 or -ENOMEM. */
int overlay_set_data(struct overlay_node *node, const char *data, size_t len);
/* The node's content draft, with a reference for the caller (draft_put);
 * NULL for nodes without one. */
struct draft *overlay_draft(struct overlay_node *node);
/* Sets the node's modification time to now. */
void overlay_touch(struct overlay_node *node);

/* The first node whose name inside dir starts with prefix, or NULL. */
struct overlay_node *overlay_find_prefix(struct overlay *ov, const char *dir, const char *prefix);

/* Calls fill for each node directly inside dir (HIDDEN and SAVED nodes excluded). */
void overlay_list(struct overlay *ov, const char *dir,
		  void (*fill)(void *ctx, const char *name, const struct overlay_node *node), void *ctx);
/* Whether any visible node lies inside dir (for rmdir of pending branches). */
int overlay_has_children(struct overlay *ov, const char *dir);
/* Whether a file written at the name of an entry an editor moved aside
 * (f after `mv f f~`) holds the entry's new text.  Overlay locked. */
int overlay_rewrites_entry(const struct overlay_node *node);

void overlay_stat(const struct overlay_node *node, struct stat *st);

#endif
