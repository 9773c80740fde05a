/* The durable record of a draft that was fsynced (docs/layout.md,
 * "fsync"): fsync() on a file being written through the mount makes its
 * text durable without appending it, so that `write; fsync; write;
 * close` appends one message, and a daemon killed after the fsync loses
 * nothing.  The record lies beside the session file, in its project
 * directory of the store:
 *
 *     .pisessionfs-draft.XXXXXX
 *
 * one line of JSON ({"path": the file's path in the mount, "uid", "gid",
 * "time", "len": the text's bytes}) and then the text, written whole, fsynced, and renamed over the
 * draft's earlier record (with the directory fsynced), so a crash leaves
 * the latest fsynced text or the one before, never a mix.  The writing
 * daemon holds flock(LOCK_EX) on it for as long as the draft lives, and
 * removes it once the text was appended or refused; a record whose lock
 * can be taken is a dead daemon's: start-up recovery (recover.h) reports
 * it, and the daemon shows its text in rejected/.  The name never ends in
 * .jsonl: pi and the mount do not read it.
 *
 * Ownership: a struct draftrecord is owned by its draft (draftrecord_end
 * frees it); strings given out are new. */
#ifndef PS_DRAFTRECORD_H
#define PS_DRAFTRECORD_H

#include <stddef.h>
#include <sys/types.h>
#include "ps_error.h"
#include "recover.h"

#define DRAFTRECORD_PREFIX RECOVER_DRAFT_PREFIX

struct draftrecord;

/* Makes data (len bytes) the durable record of the draft written at
 * mount_path by uid:gid, in the directory dir: a new record when *rec is
 * NULL, else in place of *rec's text.  PS_OK once it is on the disk;
 * otherwise *rec is as it was and nothing new is left behind
 * (PS_ERR_NOSPACE, PS_ERR_STORE_READONLY, PS_ERR_IO, PS_ERR_NOMEM). */
ps_err draftrecord_save(struct draftrecord **rec, const char *dir, const char *mount_path, uid_t uid, gid_t gid,
			const char *data, size_t len);
/* Ends the draft's record: its file is removed unless keep (the text was
 * neither appended nor refused: the next start recovers it).  Frees rec;
 * NULL is fine. */
void draftrecord_end(struct draftrecord *rec, int keep);

/* Reads the record at path: PS_OK with *mount_path and *data (new; *data
 * holds *len bytes and a NUL), *uid, *gid and *time (new, ISO 8601).
 * PS_ERR_INVALID when it is not a record; PS_ERR_TOOBIG when it holds
 * less text than its header says (its writer was killed writing it,
 * before the fsync() returned: the draft's earlier record, if any, holds
 * what was fsynced last); PS_ERR_IO, PS_ERR_NOMEM. */
ps_err draftrecord_read(const char *path, char **mount_path, uid_t *uid, gid_t *gid, char **time, char **data,
			size_t *len);

#endif
