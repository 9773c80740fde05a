#include <errno.h>
#include <sys/types.h>
#include <unistd.h>
#include "fileio.h"

int fileio_pread_full(int fd, void *dst, size_t n, uint64_t off)
{
	for (size_t have = 0; have < n;) {
		ssize_t got = pread(fd, (char *)dst + have, n - have, (off_t)(off + have));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		have += (size_t)got;
	}
	return 0;
}
