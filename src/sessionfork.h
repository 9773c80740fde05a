/* Forking a session the way pi's /fork does: pi 1.6.0's
 * SessionManager.createBranchedSession(leafId) (dist/core/session-manager.js)
 * writes a new session file beside the source holding the path from the
 * root to one entry, labels re-made at its end (docs/layout.md "Forking a
 * session").  The source file is only read. */
#ifndef PS_SESSIONFORK_H
#define PS_SESSIONFORK_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "ps_error.h"
#include "session.h"

/* Makes <timestamp>_<uuid v7>.jsonl (sessionnew.h) in the directory dirfd:
 *   the header {"type":"session","version":3,"id":NEW,"timestamp":NOW,
 *     "cwd":CWD,"parentSession":PARENT}, CWD being the source header's cwd
 *     as pi resolves it (path.resolve: "//", "." and ".." folded), PARENT
 *     being parent_path as given;
 *   the entries from the root to entry `leaf` (an index into s->entries),
 *     label entries left out, each re-serialised as JSON.stringify writes
 *     the parsed line (migrated to version 3 as pi migrates it in memory,
 *     session_load_entry) with only "parentId" changed, to the previous
 *     entry kept (null for the first), and a compaction's
 *     "firstKeptEntryId" that named a left-out label moved to the entry
 *     kept after that label;
 *   one label entry per live label (the latest label entry of each target,
 *     in the order pi's Map holds them) whose target is on that path: its
 *     label and timestamp, a new 8-hex id, chained after the last entry;
 *   if name is not NULL, a session_info entry as pi's appendSessionInfo
 *     (name) appends it: the name with each run of CR/LF as one space and
 *     trimmed as String#trim does, a new id, the current time, last.
 * All in one write, with O_EXCL, mode & 0666, owned by uid/gid as
 * sessionnew_write does, fsynced.  Unlike pi (which waits until the path
 * holds a user or assistant message) the file is always written.
 *
 * s is borrowed and only read: the caller brings it up to date
 * (session_refresh) and holds whatever lock guards it.  parent_path (an
 * absolute path, UTF-8) and name (UTF-8, may be NULL) are borrowed.  On
 * success *stem is new (the file's name without .jsonl; the caller frees
 * it).  Errors, with nothing written: PS_ERR_NOTSESSION (s has no
 * header), PS_ERR_NOENT (no entry `leaf`), PS_ERR_INVALID (the source's
 * cwd is not an absolute path, parent_path is not absolute or either is
 * not UTF-8 text, name is not UTF-8 text, or an entry of the path cannot
 * be parsed any more), PS_ERR_IO (the source file changed under the
 * index), PS_ERR_NOMEM, or the file system's error from making the file. */
ps_err sessionfork_create(const struct ps_session *s, uint32_t leaf, int dirfd, const char *parent_path,
			  const char *name, mode_t mode, uid_t uid, gid_t gid, char **stem);

struct buf;

/* The session_info line pi's appendSessionInfo(name) writes, and a
 * newline, onto out: {"type":"session_info","id":ID,"parentId":PARENT,
 * "timestamp":NOW,"name":...}, the name with each run of CR/LF as one
 * space and trimmed as String#trim does; parent NULL leaves "parentId"
 * out (JSON.stringify drops an undefined leafId).  All borrowed.
 * PS_ERR_INVALID when name is not UTF-8 text, PS_ERR_NOMEM. */
ps_err sessionfork_session_info(struct buf *out, const char *id, const json_t *parent, const char *name);

/* Node's path.resolve(base, path) on POSIX: path when it is absolute, else
 * base "/" path, with empty and "." components dropped and ".." taking
 * the one before it (never above "/"), and no trailing "/".  base must be
 * absolute when path is not (else NULL).  Returns a new string, or NULL
 * when memory runs out. */
char *sessionfork_resolve(const char *base, const char *path);

#endif
