/* What the store-wide files (overview.h) keep between calls, so that a
 * stat and the open after it build a file once, and an unchanged file
 * is not built again:
 *   - each file's length, with the listing it was built from (the
 *     sessions' names and stat stamps), for 16 files (the store's and a
 *     few projects'), the least recently used going first;
 *   - the text of the newest of them, for the opens that follow;
 *   - each file's last text on disk, across mounts (listingmemo.h), when
 *     a disk cache is set;
 *   - each session's rows (filememo.h), at most OVERVIEW_ROWS_BUDGET.
 * A file is named by its name (OVERVIEW_*, a static string) and project
 * (NULL: the whole store).  Thread-safe. */
#ifndef PSFS_OVERVIEWMEMO_H
#define PSFS_OVERVIEWMEMO_H

#include <stddef.h>
#include "buf.h"

#define OVERVIEW_ROWS_BUDGET ((size_t)16 << 20)

struct overview_memo;
struct diskmemo;
struct filememo;

/* A new, empty memo (NULL when out of memory), and its end. */
struct overview_memo *overview_memo_new(void);
void overview_memo_free(struct overview_memo *memo);
/* Keeps the session rows and each file's last text on disk too
 * (borrowed, outlives the memo), so another mount finds them. */
void overview_memo_set_disk(struct overview_memo *memo, struct diskmemo *disk);
/* The session rows memo, which the catalog shares (filememo.h); NULL
 * for no memo. */
struct filememo *overview_memo_rows(struct overview_memo *memo);

/* 1 and *len when file of project was kept as of exactly listing. */
int overview_memo_length(struct overview_memo *memo, const char *file, const char *project, const struct buf *listing,
			 size_t *len);
/* Keeps len for listing and the text it is the length of; takes both
 * (*listing emptied, *text NULL after; text may be NULL).  Only the
 * newest text is kept. */
void overview_memo_keep(struct overview_memo *memo, const char *file, const char *project, struct buf *listing,
			size_t len, char **text);
/* A copy (new) of the kept text of file as of listing, or NULL. */
char *overview_memo_text(struct overview_memo *memo, const char *file, const char *project, const struct buf *listing,
			 size_t *len);
/* The text kept on disk for file as of listing (new), or NULL; and
 * keeping one there (text borrowed). */
char *overview_memo_disk_text(struct overview_memo *memo, const char *file, const char *project,
			      const struct buf *listing, size_t *len);
void overview_memo_disk_keep(struct overview_memo *memo, const char *file, const char *project,
			     const struct buf *listing, const char *text, size_t len);

#endif
