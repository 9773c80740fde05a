/* Committing a file of the overlay as an entry (commitfile.c). */
#ifndef PSFS_COMMITFILE_H
#define PSFS_COMMITFILE_H

#include <stdint.h>
#include "draft.h"

/* Commits the in-memory file at `at`, whose draft d the caller holds
 * locked, as the name `as` (commitfile.c has the contract): 0 or -errno,
 * nothing appended on error; *appended (if given) set when appended. */
int psfs_commit_file(const char *at, const char *as, uint64_t serial, struct draft *d, int *appended);
/* How long the name of a file that became an entry keeps answering,
 * seconds. */
double psfs_saved_grace(void);

#endif
