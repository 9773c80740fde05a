/* Forking a whole session the way pi 1.6.0's SessionManager.forkFrom
 * (sourcePath, targetCwd, sessionDir) does (dist/core/session-manager.js):
 * every entry of the source, all branches, copied into a new session
 * file whose header has the target's cwd (docs/layout.md "Forking a
 * whole session into another project").  The source file is only read. */
#ifndef PS_SESSIONFORKFROM_H
#define PS_SESSIONFORKFROM_H

#include <sys/types.h>
#include "ps_error.h"

/* Reads the file open at srcfd (from offset 0, to its end) as pi's
 * loadEntriesFromFile does: lines split at '\n' (the last one without
 * its newline too), decoded as Node decodes UTF-8, each parsed with
 * JSON.parse's leniency (jsonline.h); lines that do not parse and values
 * JavaScript calls falsy (null, false, 0, "") left out; no migration,
 * whatever the version.  The first value kept must be an object with
 * "type":"session" and a string "id", else PS_ERR_NOTSESSION (pi's
 * "source session file is empty or invalid").
 *
 * Makes <timestamp>_<uuid v7>.jsonl (sessionnew.h) in the directory
 * dirfd holding the header {"type":"session","version":3,"id":NEW,
 * "timestamp":NOW,"cwd":CWD,"parentSession":PARENT}, then every value
 * kept but those with "type":"session", in file order, each as
 * JSON.stringify writes it; if name is not NULL, then a session_info
 * entry as pi's appendSessionInfo(name) appends it to the session
 * forkFrom returns (sessionfork_session_info), whose parentId is the
 * "id" of the last line copied (null when none is, left out when that
 * line has none).  CWD is cwd resolved as path.resolve does; cwd NULL
 * takes the source header's cwd (which must then be an absolute path).
 * All in one write, with O_EXCL, mode & 0666, owned by uid/gid as
 * sessionnew_write does, fsynced.
 *
 * cwd and parent_path must be absolute UTF-8 paths (else PS_ERR_INVALID,
 * as for a name that is not UTF-8).  Unlike pi, a source without its
 * final newline is not given one.  On success *stem is new (the file's
 * name without .jsonl).  Errors, with nothing written: PS_ERR_NOTSESSION,
 * PS_ERR_INVALID, PS_ERR_NOMEM, or the file system's error reading the
 * source or making the file. */
ps_err sessionforkfrom_create(int srcfd, int dirfd, const char *cwd, const char *parent_path, const char *name,
			      mode_t mode, uid_t uid, gid_t gid, char **stem);

#endif
