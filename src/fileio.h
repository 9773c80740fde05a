/* Whole reads at an offset: pread until n bytes are in, through EINTR. */
#ifndef PS_FILEIO_H
#define PS_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* Reads n bytes at off into dst.  Returns 0, or -1 when the file ends
 * before n bytes (it shrank) or a read fails (errno set). */
int fileio_pread_full(int fd, void *dst, size_t n, uint64_t off);

#endif
