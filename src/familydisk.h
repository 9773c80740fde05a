/* A family (family.h) as bytes for the cache kept across mounts
 * (diskmemo.h): its members and artifacts with the stamps of the folders
 * it was read from, so a mount started again finds a thousand families
 * with their folders' stats instead of walking them and reading every
 * child's header.  What is read back is only used once every stamp is
 * checked again (familycache_sigs_unchanged), as the mount's memory of
 * families does.
 *
 * Ownership: familydisk_encode appends to out; familydisk_decode gives a
 * new family (one reference, family_free) and new stamps; familydisk_put
 * borrows what it is given. */
#ifndef PS_FAMILYDISK_H
#define PS_FAMILYDISK_H

#include <stddef.h>
#include "buf.h"
#include "filestamp.h"
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

/* The family kept on disk (the cache's, familycache_disk) for
 * project/stem, whose folder (below projfd) has the stamp *stamp, when
 * every folder it was read from is as it was then: a new reference, also
 * kept in the cache's memory; else NULL. */
struct family *familydisk_get(struct family_cache *cache, int projfd, const char *project, const char *stem,
			     const struct filestamp *stamp);

/* Keeps fam, just read from sigs[0..n), on disk under its folder's stamp
 * as it was before the walk (a folder changed meanwhile then misses next
 * time). */
void familydisk_put(struct family_cache *cache, const char *project, const char *stem, const struct filestamp *stamp,
		    const struct family *fam, const struct family_sig *sigs, size_t n);

#endif
