/* The lock order's check (lockorder.h), in the builds that assert it. */
#include "lockorder.h"

#ifdef PSFS_LOCKORDER
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* In the order of enum lock_level. */
static const char *const lockorder_names[LOCK_LEVELS] = {
	[LOCK_DIRLIST] = "directory listing",
	[LOCK_CWD_START] = "cwd start",
	[LOCK_DRAFT] = "draft",
	[LOCK_READER] = "reader",
	[LOCK_SEARCH_RESULTS] = "search results",
	[LOCK_VIEWS] = "views",
	[LOCK_OVERVIEW] = "overview",
	[LOCK_CATALOG] = "catalog",
	[LOCK_SESSION] = "session",
	[LOCK_STORE] = "store",
	[LOCK_OVERLAY] = "overlay",
	[LOCK_FAMILY_CACHE] = "family cache",
	[LOCK_KEEPER_LARGE] = "keeper large",
	[LOCK_KEEPER] = "keeper",
	[LOCK_INFO_CACHE] = "info cache",
	[LOCK_SEARCH_MEMO] = "search memo",
	[LOCK_ENTRY_CACHE] = "entry cache",
	[LOCK_FILE_MEMO] = "file memo",
	[LOCK_DISK_MEMO] = "disk memo",
	[LOCK_DISK_POOL] = "disk pool",
	[LOCK_CATALOG_PENDING] = "catalog pending",
	[LOCK_SIZER] = "sizer",
	[LOCK_WATCH_QUEUE] = "watch queue",
	[LOCK_RM_WALKS] = "rm walks",
	[LOCK_RM_HOLDS] = "rm holds",
	[LOCK_RM_REFUSED] = "rm refused",
	[LOCK_GUARD_JOB] = "guarded call",
	[LOCK_GUARD] = "store guard",
	[LOCK_JOURNAL] = "journal",
};

static _Thread_local unsigned lockorder_held[LOCK_LEVELS];

/* PSFS_LOCKORDER_EDGES: -1 not looked up yet, else the descriptor (or
 * -2: unset, so the order is enforced). */
static atomic_int lockorder_edges_fd = -1;
static atomic_uchar lockorder_seen[LOCK_LEVELS][LOCK_LEVELS];

static int lockorder_edges(void)
{
	int fd = atomic_load(&lockorder_edges_fd);
	if (fd != -1)
		return fd;
	const char *path = getenv("PSFS_LOCKORDER_EDGES");
	fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -2;
	int expected = -1;
	if (!atomic_compare_exchange_strong(&lockorder_edges_fd, &expected, fd < 0 ? -2 : fd)) {
		if (fd >= 0)
			close(fd);
		return expected;
	}
	return fd < 0 ? -2 : fd;
}

static void lockorder_record(int fd, int held, int taken)
{
	if (atomic_exchange(&lockorder_seen[held][taken], 1))
		return;
	char line[96];
	int n = snprintf(line, sizeof line, "%s -> %s\n", lockorder_names[held], lockorder_names[taken]);
	if (n > 0 && write(fd, line, (size_t)n) < 0) {
		/* Nothing to do: a lost edge is seen again at the next run. */
	}
}

void lockorder_take(enum lock_level level)
{
	int fd = lockorder_edges();
	for (int l = 0; l < LOCK_LEVELS; l++) {
		if (!lockorder_held[l])
			continue;
		if (fd >= 0) {
			lockorder_record(fd, l, (int)level);
			continue;
		}
		/* Sessions nest (a fork reads its source while the catalog
		 * takes the new one); every other level is taken once. */
		if (l > (int)level || (l == (int)level && level != LOCK_SESSION)) {
			fprintf(stderr, "pisessionfs: lock order violated: %s lock taken while holding the %s lock\n",
				lockorder_names[level], lockorder_names[l]);
			abort();
		}
	}
	lockorder_held[level]++;
}

void lockorder_drop(enum lock_level level)
{
	lockorder_held[level]--;
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int lockorder_unused;
#endif
