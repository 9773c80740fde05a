/* Where a fork's source session is on the mount: the `parent` symlink of
 * a session whose header names a parentSession (pi's /fork writes it;
 * docs/layout.md "Forking a session"). */
#ifndef PS_SESSIONPARENT_H
#define PS_SESSIONPARENT_H

#include "session.h"

/* The parent symlink's target: the session directory of the header's
 * parentSession relative to this session's directory, when both files
 * lie in the store (s->store_root; without one, in the same folder):
 * "../STEM" beside it, "../../PROJECT/STEM" or "../STEM" across the
 * store's folders.  NULL when the header names no parentSession, when the
 * file it names lies elsewhere (header.json still says where: no link
 * leads out of the mount), or without memory.  New string. */
char *sessionparent_target(const struct ps_session *s);

#endif
