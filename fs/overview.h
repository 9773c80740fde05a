/* The files every folder of the mount has about its sessions: usage.csv
 * (one row per session, what it cost: for programs), sessions.md (a
 * table, last active first: for people) and the usage over time
 * (usage-daily.csv, usage-monthly.csv, usage-daily-models.csv, usage.svg), at the root over the whole store
 * and in each project folder over its own sessions (docs/layout.md).
 * Each is built for its caller, over the sessions it may read (caller.h),
 * at open, and read with direct_io.
 *
 * Their size without building them on every stat: the length is kept with
 * the listing it was built from (every session file's project, name,
 * device, inode, size, modification and change time, the things by which
 * the store tells that a session changed, of the files the caller may
 * read); a stat lists the sessions again (readdir and a stat per file, no
 * file opened) and, when the listing is the same, answers with the length
 * kept.
 *
 * Each session's row is kept too (filememo.h: by the file's place and
 * stat stamp, 16 MiB at most), so a build after the first acquires,
 * indexes and reads only the sessions that changed: without it a file
 * over more sessions than the session cache holds (256) read the whole
 * store on every build, and a first cat of one built it twice (its size,
 * then its text).
 *
 * Ownership: the memo (overviewmemo.h) is made and freed by main.c;
 * texts returned are new and the caller's.  Thread-safe. */
#ifndef PSFS_OVERVIEW_H
#define PSFS_OVERVIEW_H

#include <stddef.h>
#include "pisessionfs.h"

#define OVERVIEW_USAGE_CSV "usage.csv"
#define OVERVIEW_SESSIONS_MD "sessions.md"
/* Usage over time (usagedays.h): per day, per month, per day and model,
 * and a picture of the cost per day. */
#define OVERVIEW_USAGE_DAILY "usage-daily.csv"
#define OVERVIEW_USAGE_MONTHLY "usage-monthly.csv"
#define OVERVIEW_USAGE_DAILY_MODELS "usage-daily-models.csv"
#define OVERVIEW_USAGE_SVG "usage.svg"
/* The i-th of the files' names (all of the above), NULL past the last. */
const char *overview_file_name(size_t i);
/* A title's length in sessions.md, in bytes (title.h). */
#define OVERVIEW_TITLE_MAX 80

/* The text of the overview file name (OVERVIEW_*) of one project folder,
 * or of the whole store when project is NULL (*buf new).  0 or -errno. */
int overview_build(struct psfs *fs, const char *name, const char *project, char **buf, size_t *len);
/* Its length, as above (the memo). */
int overview_size(struct psfs *fs, const char *name, const char *project, size_t *len);

/* The gate for the FUSE operations (as views.h is for the views): the
 * store's files at the mount root, and each project directory's.  p is
 * the path as psfs_split split it. */
int overview_owns(const struct psfs_path *p);
/* Whether name is one of the files (a name the root keeps for them). */
int overview_is_name(const char *name);
/* Attributes; root: the store directory's (owner, times).  0 or -errno. */
int overview_getattr(struct psfs *fs, const struct psfs_path *p, const struct stat *root, struct stat *st);
/* The names the files add to a listing of the root or of a project
 * directory (dir: that directory, split). */
void overview_readdir(const struct psfs_path *dir, void *buf, fuse_fill_dir_t filler);
/* Opens one: its text built now (*data new, the caller frees it).
 * 0, -EACCES for writing, or -errno as overview_build fails. */
int overview_open(struct psfs *fs, const struct psfs_path *p, int flags, char **data, size_t *len);

/* What they keep between calls (the memo, struct psfs's overview):
 * overviewmemo.h. */

#endif
