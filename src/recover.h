/* Crash safety of the mount's own writes to the store.
 *
 * A fatal signal (kill -9, the OOM killer) can stop the daemon inside its
 * one write() of an entry: the kernel copies a large write page by page and
 * gives up between pages, so the session file is left ending in a prefix of
 * the line.  Nothing was acknowledged (close() never returned), so that
 * prefix may go; but it must be told from anybody else's bytes.  Before
 * each append the daemon therefore records an *intent* beside the session
 * file, in its project directory:
 *
 *     .pisessionfs-intent.<inode of the session file>.XXXXXX
 *
 * holding the session file's name and inode, the offset the write starts
 * at, its length, a hash of every 4 KiB piece of it (at the file's 4 KiB
 * boundaries, where the kernel stops), its first bytes and where its
 * newlines are.  The writer holds flock(LOCK_EX) on the record while the
 * append is under way and removes it when the append is done, so a record
 * whose lock can be taken belongs to a dead writer.  Recovery (at start-up,
 * and before appending to a file whose last line is unterminated) takes the
 * file back to the recorded offset only if the file ends, right there, in
 * an exact prefix of what was being written; otherwise it leaves the file
 * as it is.  Records are not fsynced: they survive the death of the
 * process, not a power loss.
 *
 * A version 1/2 migration writes a temporary file beside the session
 * (NAME.jsonl.pisessionfs-migrate-XXXXXX), locked the same way until it is
 * renamed over the session; recovery removes those whose writer is dead.
 *
 * Records and temporary files never end in .jsonl: pi and the mount do not
 * read them.  Everything here is best effort against a store that cannot
 * be written (read-only, another user's files): such a store is left as
 * it is. */
#ifndef PS_RECOVER_H
#define PS_RECOVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include "ps_error.h"

#define RECOVER_INTENT_PREFIX ".pisessionfs-intent."
#define RECOVER_MIGRATE_INFIX ".pisessionfs-migrate-"
/* The record of an fsynced draft (draftrecord.h): PREFIX and 6 letters. */
#define RECOVER_DRAFT_PREFIX ".pisessionfs-draft."

/* An append under way, recorded. */
struct recover_intent;

/* Records that `len` bytes of `data` are about to be appended to the
 * session file at `session_path` (`st`: its fstat) at offset `start`.
 * On PS_OK *out is the locked record, to be ended with recover_intent_end.
 * When the record cannot be made (the directory is read-only, the disk is
 * full) *out is NULL and the error says why (PS_ERR_STORE_READONLY,
 * PS_ERR_NOSPACE, PS_ERR_IO): the caller may append unprotected.
 * PS_ERR_NOMEM: nothing was made. */
ps_err recover_intent_begin(const char *session_path, const struct stat *st, uint64_t start,
			    const char *data, size_t len, struct recover_intent **out);

/* Ends an append: the record is removed, unless `keep` (the write failed
 * half-way and could not be taken back: recovery will).  Frees `it`; NULL
 * is a no-op. */
void recover_intent_end(struct recover_intent *it, int keep);

/* Creates a file from `template` (mkostemp: ends in XXXXXX, rewritten)
 * holding flock(LOCK_EX) on it, so that recovery leaves it alone while
 * this process lives.  Returns the descriptor (O_CLOEXEC), or -1 with
 * errno set. */
int recover_create_locked(char *template);

/* What recovery did, for the log. */
enum recover_what {
	RECOVER_TRUNCATED,    /* the file was taken back to `offset`, `bytes` removed */
	RECOVER_LEFT,         /* an unfinished append whose bytes could not be told from
			       * others' (`why`): the file was left as it is */
	RECOVER_UNFIXABLE,    /* the file could not be changed (`why`); the record is kept */
	RECOVER_TEMP_REMOVED, /* a dead migration's temporary file was removed */
	RECOVER_DRAFT,        /* the record of a draft a dead daemon had fsynced and never
			       * appended (draftrecord.h): `path`, left in place */
};

struct recover_event {
	enum recover_what what;
	const char *path;     /* the session file, or the temporary file */
	uint64_t offset, bytes;
	const char *why;      /* static text, or NULL */
};

typedef void (*recover_report_fn)(void *ctx, const struct recover_event *ev);

/* Before an append: if the file at `session_path` ends in an unterminated
 * line, repairs what dead writers' records there explain.  Cheap when the
 * file ends with a newline (one open, fstat and pread).  `report` may be
 * NULL. */
ps_err recover_session(const char *session_path, recover_report_fn report, void *ctx);

/* Before a migration of `session_path`: removes the temporary files of
 * earlier migrations of it whose writers are dead. */
void recover_migrations(const char *session_path, recover_report_fn report, void *ctx);

/* At start-up: every record, draft record and migration temporary file in every project
 * directory of the store (real directories only, one level, as the store
 * is).  Returns PS_ERR_NOENT/PS_ERR_IO only when the root cannot be read;
 * a project directory that cannot be read is skipped. */
ps_err recover_store(const char *root, recover_report_fn report, void *ctx);

#endif
