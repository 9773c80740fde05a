/* fusermount3's control socket below the FUSE device (autounmount.h). */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "autounmount.h"

/* Calls each(fd) for every open socket descriptor below AUTOUNMOUNT_FDS. */
static void autounmount_each_socket(void (*each)(struct autounmount *a, int fd), struct autounmount *a)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		struct stat st;
		if (*end || end == de->d_name || fd < 0 || fd >= AUTOUNMOUNT_FDS || fd == dirfd(d) ||
		    fstat((int)fd, &st) != 0 || !S_ISSOCK(st.st_mode))
			continue;
		each(a, (int)fd);
	}
	closedir(d);
}

static void autounmount_note(struct autounmount *a, int fd)
{
	a->socket_before[fd] = 1;
}

void autounmount_prepare(struct autounmount *a)
{
	memset(a->socket_before, 0, sizeof a->socket_before);
	autounmount_each_socket(autounmount_note, a);
	a->reserved = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* The socket the mount opened, or -2 when there are several (left as
 * they are: not knowing which is which, nothing is moved). */
static int autounmount_new_socket;

static void autounmount_find(struct autounmount *a, int fd)
{
	if (a->socket_before[fd])
		return;
	autounmount_new_socket = autounmount_new_socket == -1 ? fd : -2;
}

void autounmount_arrange(struct autounmount *a)
{
	int sock;
	if (a->reserved < 0)
		return;
	autounmount_new_socket = -1;
	autounmount_each_socket(autounmount_find, a);
	sock = autounmount_new_socket;
	if (sock >= 0 && sock > a->reserved && dup2(sock, a->reserved) == a->reserved) {
		close(sock);
		a->reserved = -1;
		return;
	}
	close(a->reserved);
	a->reserved = -1;
}
