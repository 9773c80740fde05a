/* A SessionInfo (sessioninfo.h) as bytes and back, to keep it on disk
 * across mounts (diskmemo.h): everything an info holds, its private
 * refresh state included, so a thawed info extends itself by the bytes
 * appended since exactly as the info it was frozen from would have.
 *
 * The bytes are for this build only (numbers in the machine's own order,
 * checked by a magic and every length): the disk cache is made again when
 * the version changes. */
#ifndef PS_INFOFREEZE_H
#define PS_INFOFREEZE_H

#include <stddef.h>
#include "buf.h"
#include "ps_error.h"
#include "sessioninfo.h"

/* Appends info (its path excepted) to out.  PS_ERR_NOMEM (out may have
 * grown). */
ps_err infofreeze_put(const struct sessioninfo *info, struct buf *out);

/* A new info of the file at path (copied) from len bytes that
 * infofreeze_put wrote.  PS_ERR_INVALID when they are not such bytes,
 * PS_ERR_NOMEM. */
ps_err infofreeze_take(const char *path, const void *data, size_t len, struct sessioninfo **out);

#endif
