/* Starting a session file the way pi's SessionManager.newSession starts
 * one (pi 1.6.0, dist/core/session-manager.js): <timestamp>_<uuid v7>.jsonl
 * holding the version 3 header.  For `mkdir PROJECT/NAME` (docs/layout.md
 * "Starting a session"). */
#ifndef PS_SESSIONNEW_H
#define PS_SESSIONNEW_H

#include <stdint.h>
#include <sys/types.h>
#include "ps_error.h"

/* A UUID v7 (RFC 9562: 48 bits of Unix milliseconds, the version, random
 * bits), as pi's session ids are: lower-case, 36 characters and a NUL. */
void sessionnew_uuid7(int64_t ms, char out[37]);

/* Makes the file in the directory dirfd: the header
 * {"type":"session","version":3,"id":ID,"timestamp":ISO,"cwd":CWD} and a
 * newline, in one write, fsynced; created with O_EXCL and mode & 0666,
 * owned by uid/gid when the daemon may give it away (-1: as it is).
 * *stem is new: the file's name without .jsonl.  PS_ERR_INVALID for a cwd
 * that is not UTF-8 text, PS_ERR_NOMEM, or the file system's error (then
 * nothing is left behind). */
ps_err sessionnew_create(int dirfd, const char *cwd, mode_t mode, uid_t uid, gid_t gid, char **stem);

#endif
