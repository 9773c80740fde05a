/* A whole derived file kept on disk under its listing (listingmemo.h). */
#include <string.h>
#include "fnv.h"
#include "listingmemo.h"

/* Two 64-bit hashes of the listing, seeded apart (FNV-1a, and a
 * multiply-rotate over the same bytes), and its length: the stamp the
 * text is kept with.  The listing holds inodes and nanosecond times, so
 * two states colliding by chance is out of reach; nothing here has to
 * withstand someone crafting a collision, who could only make their own
 * sessions.md wrong. */
static void listingmemo_stamp(const struct buf *listing, struct filestamp *stamp)
{
	uint64_t a = fnv1a_add(FNV1A_BASIS, listing->data, listing->len), b = 0x9e3779b97f4a7c15ULL;
	const unsigned char *p = (const unsigned char *)listing->data;
	for (size_t i = 0; i < listing->len; i++) {
		b = (b ^ p[i]) * 0xff51afd7ed558ccdULL;
		b = (b << 31) | (b >> 33);
	}
	memset(stamp, 0, sizeof *stamp);
	stamp->dev = a;
	stamp->ino = b;
	stamp->size = listing->len;
}

static int listingmemo_key(const char *name, struct buf *key)
{
	return buf_putc(key, LISTINGMEMO_KEY_PREFIX) || buf_puts(key, name) ? -1 : 0;
}

int listingmemo_get(struct diskmemo *disk, const char *name, const struct buf *listing, struct buf *out)
{
	struct buf key = BUF_INIT;
	struct filestamp stamp;
	int found = 0;
	if (!disk)
		return 0;
	listingmemo_stamp(listing, &stamp);
	if (listingmemo_key(name, &key))
		found = -1;
	else
		found = diskmemo_get(disk, key.data, key.len, &stamp, out);
	buf_free(&key);
	return found;
}

void listingmemo_put(struct diskmemo *disk, const char *name, const struct buf *listing, const char *text,
		     size_t len)
{
	struct buf key = BUF_INIT;
	struct filestamp stamp;
	if (!disk)
		return;
	listingmemo_stamp(listing, &stamp);
	if (!listingmemo_key(name, &key)) {
		diskmemo_put(disk, key.data, key.len, &stamp, text, len);
		diskmemo_flush(disk);
	}
	buf_free(&key);
}
