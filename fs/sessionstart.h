/* Starting a session: mkdir in a project, or the first file of a
 * directory made under by-cwd/ (sessionstart.c). */
#ifndef PSFS_SESSIONSTART_H
#define PSFS_SESSIONSTART_H

#include <sys/types.h>
#include "pisessionfs.h"

/* mkdir PATH (NAME in the folder parent, a project or a flat store's
 * root): a new session named NAME.  0 or -errno, logged. */
int psfs_session_start(const char *path, const struct psfs_path *parent, const char *name, mode_t mode);

/* A session with that exact cwd, named NAME, in the folder pi names for
 * the cwd (sessionnew_folder_name), which is made in the store, as the
 * caller, when it is not there (docs/layout.md "Starting a session in a
 * new directory").  path is the request's, for the log.  0 with
 * *session the new "/PROJECT/STEM" (new), or -errno, logged, with
 * nothing made. */
int psfs_session_start_cwd(const char *path, const char *cwd, const char *name, mode_t mode, char **session);

#endif
