/* The change watcher (watch.c): one thread that follows the store with
 * inotify and tells the kernel what changed, so that it may keep names,
 * attributes and pages long.  Started and stopped by main.c around
 * fuse_loop; the kernel is told from this thread only, never from a
 * handler (libfuse's doc/README.notifications).  The watcher owns its
 * queue and its watches. */
#ifndef PSFS_WATCH_H
#define PSFS_WATCH_H

#include "pisessionfs.h"

int psfs_watch_start(struct psfs *fs);
void psfs_watch_stop(void);
/* Whether the watcher hears every change to the store: it runs, and the
 * store is on a local file system.  Only then may the kernel keep names
 * and attributes long (psfs_init). */
int psfs_watch_hears_all(void);
/* Asks the watcher thread to invalidate a path: what a handler uses when
 * its own write changed what the kernel has cached. */
void psfs_watch_queue(const char *path);

#endif
