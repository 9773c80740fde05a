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

/* The layout of the bytes: the disk cache's format names it, so a cache
 * of another layout is made again (infofreeze_take refuses it anyway). */
#define INFOFREEZE_MAGIC "PSI2"

/* Appends info (its path excepted) to out.  PS_ERR_NOMEM (out may have
 * grown). */
ps_err infofreeze_put(const struct sessioninfo *info, struct buf *out);

/* A new info of the file at path (copied) from len bytes that
 * infofreeze_put wrote.  PS_ERR_INVALID when they are not such bytes,
 * PS_ERR_NOMEM. */
ps_err infofreeze_take(const char *path, const void *data, size_t len, struct sessioninfo **out);

/* What a search reads of frozen bytes, without making an info of them:
 * every pointer is into the bytes (each a C string), valid while they are. */
struct infoview {
	int is_session;
	double modified_ms;
	const char *id, *cwd, *name; /* name NULL when there is none */
	const char *text, *lower;    /* allMessagesText and its toLowerCase */
	size_t text_len, lower_len;
	const char *first;           /* firstMessage; first_len 0: "(no messages)" */
	size_t first_len;
};
/* PS_ERR_INVALID when the bytes are not what infofreeze_put wrote. */
ps_err infofreeze_view(const void *data, size_t len, struct infoview *out);

#endif
