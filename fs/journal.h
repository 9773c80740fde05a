/* What the user is told when a write is refused or something goes wrong:
 * a line on the daemon's stderr, the same line in MOUNT/.pisessionfs/log,
 * and the rejected text kept as MOUNT/.pisessionfs/rejected/<n>-<name>. */
#ifndef PSFS_JOURNAL_H
#define PSFS_JOURNAL_H

#include <stddef.h>

#define JOURNAL_NAME ".pisessionfs"
#define JOURNAL_DIR "/" JOURNAL_NAME
#define JOURNAL_LOG JOURNAL_DIR "/log"
#define JOURNAL_REJECTED JOURNAL_DIR "/rejected"

void journal_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Keeps data as a rejected file and logs why; path is the mount path the
 * user wrote to.  The latest 64 texts are kept, and no more bytes of them
 * than the budget: older ones are dropped first, and a text larger than
 * the budget is kept cut to it, ending in a note that says so. */
void journal_reject(const char *path, const char *data, size_t len, const char *why);

/* The budget of the rejected texts (-o rejected_kept=MIB), at least 1 MiB;
 * set before the mount. */
#define JOURNAL_REJECTED_DEFAULT_BUDGET ((size_t)64 << 20)
void journal_set_rejected_budget(size_t bytes);

/* A copy of the log (new buffer); *len its length. */
char *journal_snapshot(size_t *len);
size_t journal_size(void);

#endif
