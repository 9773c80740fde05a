/* A family as bytes for the disk cache (familydisk.h).  Strings are a
 * 32-bit length and their bytes (a length of all ones: none), numbers
 * are little-endian 64-bit: small, and checked at every step on the way
 * back in. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "diskmemo.h"
#include "familydisk.h"

/* What the bytes start with: a later layout changes it, and bytes of
 * another are not read. */
static const char familydisk_magic[4] = { 'f', 'a', 'm', '1' };

#define FAMILYDISK_NONE UINT32_MAX

static int familydisk_put_u64(struct buf *out, uint64_t v)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	return buf_put(out, b, sizeof b);
}

static int familydisk_put_str(struct buf *out, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	unsigned char b[4];
	uint32_t len = s ? (uint32_t)n : FAMILYDISK_NONE;
	if (n >= FAMILYDISK_NONE)
		return -1;
	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(len >> (8 * i));
	return buf_put(out, b, sizeof b) || (n && buf_put(out, s, n)) ? -1 : 0;
}

int familydisk_encode(const struct family *fam, const struct family_sig *sigs, size_t n, struct buf *out)
{
	if (buf_put(out, familydisk_magic, sizeof familydisk_magic) || familydisk_put_str(out, fam->folder) ||
	    familydisk_put_u64(out, fam->n) || familydisk_put_u64(out, fam->n_artifacts) || familydisk_put_u64(out, n))
		return -1;
	for (size_t i = 0; i < fam->n; i++) {
		const struct family_member *m = &fam->members[i];
		if (familydisk_put_str(out, m->name) || familydisk_put_str(out, m->dir) ||
		    familydisk_put_str(out, m->stem) || familydisk_put_u64(out, (uint64_t)m->kind) ||
		    familydisk_put_str(out, m->run_id) || familydisk_put_str(out, m->agent) ||
		    familydisk_put_u64(out, (uint64_t)(int64_t)m->index) || familydisk_put_u64(out, (uint64_t)m->has_family))
			return -1;
		for (int k = 0; k < FAMILY_ARTIFACT_KINDS; k++)
			if (familydisk_put_str(out, m->artifact[k]))
				return -1;
	}
	for (size_t i = 0; i < fam->n_artifacts; i++)
		if (familydisk_put_str(out, fam->artifacts[i]))
			return -1;
	for (size_t i = 0; i < n; i++)
		if (familydisk_put_str(out, sigs[i].rel) || familydisk_put_u64(out, (uint64_t)sigs[i].ino) ||
		    familydisk_put_u64(out, (uint64_t)sigs[i].mtime.tv_sec) ||
		    familydisk_put_u64(out, (uint64_t)sigs[i].mtime.tv_nsec))
			return -1;
	return 0;
}

struct familydisk_reader {
	const unsigned char *p, *end;
	ps_err err;
};

static uint64_t familydisk_u64(struct familydisk_reader *r)
{
	uint64_t v = 0;
	if (r->err || r->end - r->p < 8) {
		r->err = r->err ? r->err : PS_ERR_INVALID;
		return 0;
	}
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += 8;
	return v;
}

/* A count of things of at least min_bytes each: never more than the
 * bytes left could hold, so a damaged count allocates nothing large. */
static size_t familydisk_count(struct familydisk_reader *r, size_t min_bytes)
{
	uint64_t v = familydisk_u64(r);
	if (!r->err && v > (uint64_t)(r->end - r->p) / min_bytes)
		r->err = PS_ERR_INVALID;
	return r->err ? 0 : (size_t)v;
}

/* A string (new), NULL for none; *r's error says which. */
static char *familydisk_str(struct familydisk_reader *r)
{
	uint32_t len = 0;
	if (r->err || r->end - r->p < 4) {
		r->err = r->err ? r->err : PS_ERR_INVALID;
		return NULL;
	}
	for (int i = 0; i < 4; i++)
		len |= (uint32_t)r->p[i] << (8 * i);
	r->p += 4;
	if (len == FAMILYDISK_NONE)
		return NULL;
	if ((uint64_t)(r->end - r->p) < len || memchr(r->p, '\0', len)) {
		r->err = PS_ERR_INVALID;
		return NULL;
	}
	char *s = malloc((size_t)len + 1);
	if (!s) {
		r->err = PS_ERR_NOMEM;
		return NULL;
	}
	memcpy(s, r->p, len);
	s[len] = '\0';
	r->p += len;
	return s;
}

ps_err familydisk_decode(const char *data, size_t len, struct family **out, struct family_sig **sigs_out,
			 size_t *n_out)
{
	struct familydisk_reader r = { (const unsigned char *)data, (const unsigned char *)data + len, PS_OK };
	struct family_sig *sigs = NULL;
	size_t n_sigs = 0;
	struct family *fam;
	*out = NULL;
	*sigs_out = NULL;
	*n_out = 0;
	if (len < sizeof familydisk_magic || memcmp(data, familydisk_magic, sizeof familydisk_magic) != 0)
		return PS_ERR_INVALID;
	r.p += sizeof familydisk_magic;
	if (!(fam = calloc(1, sizeof *fam)))
		return PS_ERR_NOMEM;
	fam->refs = 1;
	fam->folder = familydisk_str(&r);
	/* A member is at least 11 strings' and 3 numbers' lengths; an
	 * artifact a string's; a stamp a string's and 3 numbers. */
	size_t n = familydisk_count(&r, 11 * 4 + 3 * 8), n_art = familydisk_count(&r, 4);
	size_t n_s = familydisk_count(&r, 4 + 3 * 8);
	if (!r.err && n && !(fam->members = calloc(n, sizeof *fam->members)))
		r.err = PS_ERR_NOMEM;
	for (size_t i = 0; !r.err && i < n; i++) {
		struct family_member *m = &fam->members[fam->n++];
		m->name = familydisk_str(&r);
		m->dir = familydisk_str(&r);
		m->stem = familydisk_str(&r);
		uint64_t kind = familydisk_u64(&r);
		m->run_id = familydisk_str(&r);
		m->agent = familydisk_str(&r);
		m->index = (int)(int64_t)familydisk_u64(&r);
		m->has_family = familydisk_u64(&r) != 0;
		for (int k = 0; k < FAMILY_ARTIFACT_KINDS; k++)
			m->artifact[k] = familydisk_str(&r);
		if (!r.err && (kind > FAMILY_OTHER || !m->name || !m->dir != !m->stem))
			r.err = PS_ERR_INVALID;
		m->kind = (enum family_kind)kind;
	}
	if (!r.err && n_art && !(fam->artifacts = calloc(n_art, sizeof *fam->artifacts)))
		r.err = PS_ERR_NOMEM;
	for (size_t i = 0; !r.err && i < n_art; i++)
		if (!(fam->artifacts[fam->n_artifacts++] = familydisk_str(&r)) && !r.err)
			r.err = PS_ERR_INVALID;
	if (!r.err && n_s && !(sigs = calloc(n_s, sizeof *sigs)))
		r.err = PS_ERR_NOMEM;
	for (size_t i = 0; !r.err && i < n_s; i++) {
		struct family_sig *g = &sigs[n_sigs++];
		g->rel = familydisk_str(&r);
		g->ino = (ino_t)familydisk_u64(&r);
		g->mtime.tv_sec = (time_t)familydisk_u64(&r);
		g->mtime.tv_nsec = (long)familydisk_u64(&r);
		if (!r.err && !g->rel)
			r.err = PS_ERR_INVALID;
	}
	/* What it was read from is never nothing: the family's own folder. */
	if (!r.err && (r.p != r.end || !n_sigs))
		r.err = PS_ERR_INVALID;
	if (r.err) {
		family_free(fam);
		for (size_t i = 0; i < n_sigs; i++)
			free(sigs[i].rel);
		free(sigs);
		return r.err;
	}
	*out = fam;
	*sigs_out = sigs;
	*n_out = n_sigs;
	return PS_OK;
}

/* The disk cache's key of project/stem's family, in key: 0, -1 on memory. */
static int familydisk_key(const char *project, const char *stem, struct buf *key)
{
	return buf_putc(key, FAMILYDISK_KEY_PREFIX) || buf_puts(key, project) || buf_putc(key, '/') ||
			       buf_puts(key, stem)
		       ? -1
		       : 0;
}

struct family *familydisk_get(struct family_cache *cache, int projfd, const char *project, const char *stem,
			     const struct filestamp *stamp)
{
	struct diskmemo *disk = familycache_disk(cache);
	struct buf key = BUF_INIT, val = BUF_INIT;
	struct family *fam = NULL;
	struct family_sig *sigs = NULL;
	size_t n = 0;
	if (disk && !familydisk_key(project, stem, &key) && diskmemo_get(disk, key.data, key.len, stamp, &val) == 1 &&
	    familydisk_decode(val.data, val.len, &fam, &sigs, &n) == PS_OK && !familycache_sigs_unchanged(projfd, sigs, n)) {
		family_free(fam);
		fam = NULL;
	}
	if (fam)
		familycache_keep(cache, project, stem, fam, &sigs, &n);
	for (size_t i = 0; i < n; i++)
		free(sigs[i].rel);
	free(sigs);
	buf_free(&key);
	buf_free(&val);
	return fam;
}

void familydisk_put(struct family_cache *cache, const char *project, const char *stem, const struct filestamp *stamp,
		    const struct family *fam, const struct family_sig *sigs, size_t n)
{
	struct diskmemo *disk = familycache_disk(cache);
	struct buf key = BUF_INIT, val = BUF_INIT;
	if (disk && !familydisk_key(project, stem, &key) && !familydisk_encode(fam, sigs, n, &val))
		diskmemo_put(disk, key.data, key.len, stamp, val.data, val.len);
	buf_free(&key);
	buf_free(&val);
}
