/* What tells one state of a file from another without reading it: the
 * device, inode, size and modification and change times that stat gives,
 * as the memos of derived values (filememo.h, diskmemo.h) key them. */
#ifndef PS_FILESTAMP_H
#define PS_FILESTAMP_H

#include <stdint.h>
#include <sys/stat.h>

struct filestamp {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

/* The stamp of a file's attributes (as stat or lstat gave them). */
void filestamp_of(const struct stat *st, struct filestamp *out);

#endif
