/* A family (family.h) as bytes for the cache kept across mounts
 * (diskmemo.h): its members and artifacts with the stamps of the folders
 * it was read from, so a mount started again finds a thousand families
 * with their folders' stats instead of walking them and reading every
 * child's header.  What is read back is only used once every stamp is
 * checked again (familycache_sigs_unchanged), as the mount's memory of
 * families does.
 *
 * Ownership: familydisk_encode appends to out; familydisk_decode gives a
 * new family (one reference, family_free) and new stamps. */
#ifndef PS_FAMILYDISK_H
#define PS_FAMILYDISK_H

#include <stddef.h>
#include "buf.h"
#include "familydata.h"
#include "familycache.h"
#include "ps_error.h"

/* The disk cache's key prefix of families ("f" PROJECT "/" STEM). */
#define FAMILYDISK_KEY_PREFIX 'f'

/* Appends fam read from sigs[0..n) to out: 0, -1 when out cannot grow. */
int familydisk_encode(const struct family *fam, const struct family_sig *sigs, size_t n, struct buf *out);

/* The family and stamps of data[0..len) as familydisk_encode wrote
 * them: PS_OK, PS_ERR_NOMEM, or PS_ERR_INVALID for bytes it did not
 * write (another version, a damaged cache): never read past len. */
ps_err familydisk_decode(const char *data, size_t len, struct family **fam, struct family_sig **sigs, size_t *n);

#endif
