/* Starting a session file the way pi's SessionManager.newSession starts
 * one (pi 1.6.0, dist/core/session-manager.js): <timestamp>_<uuid v7>.jsonl
 * holding the version 3 header.  For `mkdir PROJECT/NAME` (docs/layout.md
 * "Starting a session"); its parts (the stamp, the header line, the
 * O_EXCL write) are shared with forking (sessionfork.h). */
#ifndef PS_SESSIONNEW_H
#define PS_SESSIONNEW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ps_error.h"

/* A candidate entry id as pi's generateId draws one: the first 8 hex
 * digits of a random UUID (the caller retries on a collision). */
void sessionnew_short_id(char out[9]);

/* What names a new session, all of one clock reading: the header's
 * timestamp as new Date().toISOString() writes it, the session id (a
 * UUID v7 of that millisecond) and the file's stem, pi's
 * `${timestamp.replace(/[:.]/g, "-")}_${id}`. */
struct sessionnew_stamp {
	char iso[32];
	char id[37];
	char stem[96];
};

/* Fills st from the current time. */
void sessionnew_stamp(struct sessionnew_stamp *st);

/* The header line JSON.stringify writes for pi's header object:
 * {"type":"session","version":3,"id":ID,"timestamp":ISO,"cwd":CWD} and,
 * when parent is not NULL, "parentSession":PARENT before the closing
 * brace; then a newline.  cwd and parent are borrowed; *line is new
 * (*len without the NUL).  PS_ERR_INVALID when cwd or parent is not UTF-8
 * text, PS_ERR_NOMEM. */
ps_err sessionnew_header(const struct sessionnew_stamp *st, const char *cwd, const char *parent, char **line,
			 size_t *len);

/* sessionnew_write of the file st names, and *stem (new) that name, on
 * success only: what every way of making a session file ends with. */
ps_err sessionnew_write_named(int dirfd, const struct sessionnew_stamp *st, const char *text, size_t len, mode_t mode,
			      uid_t uid, gid_t gid, char **stem);

/* Makes the file in the directory dirfd: the header
 * {"type":"session","version":3,"id":ID,"timestamp":ISO,"cwd":CWD} and a
 * newline, in one write, fsynced; created with O_EXCL and mode & 0666,
 * owned by uid/gid when the daemon may give it away (-1: as it is).
 * *stem is new: the file's name without .jsonl.  PS_ERR_INVALID for a cwd
 * that is not UTF-8 text, PS_ERR_NOMEM, or the file system's error (then
 * nothing is left behind). */
ps_err sessionnew_create(int dirfd, const char *cwd, mode_t mode, uid_t uid, gid_t gid, char **stem);

/* The project folder pi's getDefaultSessionDir keeps a cwd's sessions in:
 * `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`, for a cwd
 * already resolved (absolute, no "." or ".." or trailing '/').  cwd is
 * borrowed; a new string, or NULL without memory.  "/" gives "----". */
char *sessionnew_folder_name(const char *cwd);

#endif
