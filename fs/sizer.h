/* The sizer threads (sizer.c): size a session's entry files ahead of a
 * reader that stats them all (`ls -l` of a tree directory), so that each
 * stat finds the size known.  Started and stopped by main.c; the sizers
 * own their queue and acquire sessions from the store like a handler. */
#ifndef PSFS_SIZER_H
#define PSFS_SIZER_H

#include <stdint.h>
#include "pisessionfs.h"

struct ps_session;

int psfs_sizer_start(struct psfs *fs);
void psfs_sizer_stop(void);
/* Called by a stat that had to render an entry (session locked by the
 * caller); sizing goes on from entry. */
void psfs_sizer_hint(const char *project, const char *session, const struct ps_session *s, uint32_t entry);
/* Called when an entry file is opened for reading: the sizers stop, and
 * ignore hints for a second. */
void psfs_sizer_reading(void);

#endif
