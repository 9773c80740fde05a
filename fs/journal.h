/* What the user is told when a write is refused or something goes wrong:
 * a line on the daemon's stderr, the same line in MOUNT/.pisessionfs/log,
 * and the rejected text kept as MOUNT/.pisessionfs/rejected/<n>-<name>. */
#ifndef PSFS_JOURNAL_H
#define PSFS_JOURNAL_H

#include <stddef.h>
#include <sys/stat.h>
#include "pisessionfs.h"

#define JOURNAL_NAME ".pisessionfs"
#define JOURNAL_DIR "/" JOURNAL_NAME
#define JOURNAL_LOG JOURNAL_DIR "/log"
#define JOURNAL_REJECTED JOURNAL_DIR "/rejected"

/* Ownership: the journal (struct psfs's journal) owns the log and the
 * numbering of the rejected texts; the texts themselves are in-memory
 * files of the overlay (overlay.h) it is given, which the journal adds
 * and drops within its budget.  Thread-safe. */
struct journal;
struct overlay;

/* The budget of the rejected texts (-o rejected_kept=MIB, at least 1 MiB
 * there); journal_new takes no less than the minimum, room for the note
 * that ends a text cut to it. */
#define JOURNAL_REJECTED_DEFAULT_BUDGET ((size_t)64 << 20)
#define JOURNAL_REJECTED_MIN_BUDGET ((size_t)256)
/* A new journal, empty (NULL when out of memory), keeping the rejected
 * texts in ov, which it borrows: ov must outlive it, as must mountpoint
 * (borrowed; the absolute path the mount is on, which the log names so
 * that a kept text's path can be opened as it stands).  journal_free
 * frees it (the rejected texts stay in the overlay: overlay_free frees
 * them). */
struct journal *journal_new(size_t rejected_budget, struct overlay *ov, const char *mountpoint);
void journal_free(struct journal *j);

/* A line on stderr and in the log, as the caller's (psfs_caller_get): it
 * alone (and root) reads it back.  j may be NULL: stderr only. */
void journal_log_in(struct journal *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Keeps data as a rejected file and logs why; path is the mount path the
 * user wrote to.  The file and the line belong to the caller
 * (psfs_caller_get): mode 0400, its owner, and listed to it alone.  The
 * latest 64 texts are kept, and no more bytes of them than the budget:
 * older ones are dropped first, and a text larger than the budget is
 * kept cut to it, ending in a note that says so. */
void journal_reject_in(struct journal *j, const char *path, const char *data, size_t len, const char *why);

/* At start-up: the draft a dead daemon had fsynced (record: its file,
 * draftrecord.h), shown in rejected/ as its writer's, with a log line; the
 * record is removed when that file is (the store keeps the text until
 * the user has it). */
void journal_recover_draft(struct journal *j, const char *record);

/* A copy of the log as the caller may read it (new buffer): the lines
 * about its own writes and calls (root: every line); *len its length.
 * journal_size: that length. */
char *journal_snapshot(struct journal *j, size_t *len);
size_t journal_size(struct journal *j);

/* The gate of MOUNT/.pisessionfs/ for the FUSE operations, as views.h
 * is for the views.  The rejected texts themselves are in-memory files
 * (overlay.h), found before the gate is asked. */
/* Whether path is the journal directory or inside it. */
int journal_owns(const char *path);
/* Attributes of the journal, its log and rejected/: owner and times
 * of like (the store directory's).  0 or -ENOENT. */
int journal_getattr(struct journal *j, const char *path, const struct stat *like, struct stat *st);
/* The names the journal adds to a listing of path (those of rejected/
 * are the overlay's).  0, -ENOTDIR or -ENOENT. */
int journal_readdir(const char *path, void *buf, fuse_fill_dir_t filler);
/* Opens the log: a snapshot taken now (*data new, the caller frees it).
 * 0, -EACCES for writing, -EISDIR, -ENOENT or -ENOMEM. */
int journal_open_in(struct journal *j, const char *path, int flags, char **data, size_t *len);

/* The same for a FUSE handler, in the journal of the mount whose request
 * the thread serves (fuse_get_context()); outside a request a line goes
 * to stderr only and a text is not kept, so code that runs outside one
 * (main.c, the watcher, the sizers) takes the _in forms. */
void journal_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void journal_reject(const char *path, const char *data, size_t len, const char *why);
/* path, a path inside the mount ("/PROJECT/SESSION/..."), as the user can
 * open it: the mount's absolute path before it, for the log lines, which
 * name real paths.  Borrowed: one of four buffers of the calling thread,
 * so a line may name up to four paths; each stays valid until the fourth
 * next call on the thread.  path itself outside a request or when it does
 * not fit. */
const char *journal_path(const char *path);
int journal_open(const char *path, int flags, char **data, size_t *len);

#endif
