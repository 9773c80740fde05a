/* The sizer threads (sizer.c): size a session's entry files ahead of a
 * reader that stats them all (`ls -l` of a tree directory), so that each
 * stat finds the size known.
 *
 * Ownership: main.c owns the sizers (struct psfs's sizer, sizer_start to
 * sizer_stop); they own their threads and their job, and acquire
 * sessions from the store like a handler.  Every function takes NULL for
 * no sizers: nothing is sized ahead. */
#ifndef PSFS_SIZER_H
#define PSFS_SIZER_H

#include <stdint.h>
#include "pisessionfs.h"

struct ps_session;
struct sizer;

/* Starts the threads (one per core the request thread leaves, at most
 * 4): new sizers, or NULL when no thread could be started. */
struct sizer *sizer_start(struct psfs *fs);
/* Stops the threads and frees the sizers (NULL: nothing). */
void sizer_stop(struct sizer *sz);
/* Called by a stat that had to render an entry (session locked by the
 * caller); sizing goes on from entry. */
void sizer_hint(struct sizer *sz, const char *project, const char *session, const struct ps_session *s,
		uint32_t entry);
/* sizer_reading for a FUSE handler, with the sizers of the mount whose
 * request the thread serves (fuse_get_context()). */
void psfs_sizer_reading(void);

#endif
