#include <string.h>
#include "filestamp.h"

void filestamp_of(const struct stat *st, struct filestamp *out)
{
	memset(out, 0, sizeof *out);
	out->dev = (uint64_t)st->st_dev;
	out->ino = (uint64_t)st->st_ino;
	out->size = (uint64_t)st->st_size;
	out->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	out->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}
