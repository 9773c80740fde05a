/* The change watcher (watch.c): one thread that follows the store with
 * inotify and tells the kernel what changed, so that it may keep names,
 * attributes and pages long.  Started and stopped by main.c around
 * fuse_loop (struct psfs's watch); the kernel is told from this thread
 * only, never from a handler (libfuse's doc/README.notifications).
 *
 * Ownership: the watcher owns its thread, its queue and its watches;
 * main.c owns the watcher (watch_start to watch_stop).  Every function
 * takes NULL for no watcher (inotify unavailable): it hears nothing. */
#ifndef PSFS_WATCH_H
#define PSFS_WATCH_H

#include "pisessionfs.h"

struct watch;

/* Starts watching fs's store (its root and every project): a new
 * watcher, or NULL when inotify or a thread is not to be had. */
struct watch *watch_start(struct psfs *fs);
/* Stops the thread and frees the watcher (NULL: nothing). */
void watch_stop(struct watch *w);
/* Whether the watcher hears every change to the store: it runs, and the
 * store is on a local file system.  Only then may the kernel keep names
 * and attributes long (psfs_init). */
int watch_hears_all(const struct watch *w);

void psfs_watch_family(const char *project, const char *stem, const char *mount);

/* The same for a FUSE handler, with the watcher of the mount whose
 * request the thread serves (fuse_get_context()). */
int psfs_watch_hears_all(void);
void psfs_watch_queue(const char *path);

#endif
