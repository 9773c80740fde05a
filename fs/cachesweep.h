/* The cache directory's bound at mount (diskmemo_set_bound), in a thread
 * of its own: looking at other stores' databases and removing some must
 * not delay the mount.  What it removes is logged (the disk memo's note
 * callback writes the log). */
#ifndef PSFS_CACHESWEEP_H
#define PSFS_CACHESWEEP_H

#include <stdint.h>

struct psfs;
struct cachesweep;

/* Starts bounding fs's cache directory to max_bytes: the sweep, or NULL
 * when no thread could be made (the directory is then not bounded). */
struct cachesweep *cachesweep_start(struct psfs *fs, uint64_t max_bytes);
/* Waits for the sweep and frees it; NULL is fine. */
void cachesweep_stop(struct cachesweep *s);

#endif
