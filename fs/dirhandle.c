/* An open directory (opendir, readdir, releasedir): the listing taken
 * when reading starts, handed out by offset.  What the names are is
 * node.h's; who holds a session folder open, sessionops.h's. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lockorder.h"
#include "node.h"
#include "ops_internal.h"
#include "sessionops.h"

/* An open directory: the listing taken when reading starts (or restarts
 * at offset 0), handed out by offset.  libfuse 3.14, given names without
 * offsets, walks its own list from the start for every chunk the kernel
 * asks for, so a directory of a million entry files took minutes; with
 * offsets each chunk costs its own size.  The kernel never reads one open
 * directory from two threads at once (getdents holds the file position
 * lock); only a guarded call given up on can (its lock). */
struct psfs_dirlist {
	struct psfs_dirent {
		char *name;
		struct stat *st;                 /* NULL: the name only */
		enum fuse_fill_dir_flags flags;
	} *ents;
	size_t n, cap;
	int nomem;                               /* the listing is incomplete */
	struct psfs_folder_hold *hold;           /* a folder's: who holds it open (sessionops.h) */
	/* The kernel's handle and each guarded call still running with it
	 * (guard.h); such a call, given up on, may still be listing when
	 * the kernel reads again: the lock keeps the two apart. */
	_Atomic int refs;
	pthread_mutex_t lock;
};

static void psfs_dirlist_clear(struct psfs_dirlist *dl)
{
	for (size_t i = 0; i < dl->n; i++) {
		free(dl->ents[i].name);
		free(dl->ents[i].st);
	}
	dl->n = 0;
	dl->nomem = 0;
}

/* A fuse_fill_dir_t that keeps what it is given; 1 (stop) when out of memory. */
static int psfs_dirlist_add(void *buf, const char *name, const struct stat *st, off_t off,
			    enum fuse_fill_dir_flags flags)
{
	struct psfs_dirlist *dl = buf;
	(void)off;
	if (dl->n == dl->cap) {
		size_t cap = dl->cap ? dl->cap * 2 : 64;
		struct psfs_dirent *ents = realloc(dl->ents, cap * sizeof *ents);
		if (!ents) {
			dl->nomem = 1;
			return 1;
		}
		dl->ents = ents;
		dl->cap = cap;
	}
	struct psfs_dirent *e = &dl->ents[dl->n];
	e->name = strdup(name);
	e->st = st ? malloc(sizeof *st) : NULL;
	e->flags = flags;
	if (!e->name || (st && !e->st)) {
		free(e->name);
		free(e->st);
		dl->nomem = 1;
		return 1;
	}
	if (st)
		*e->st = *st;
	dl->n++;
	return 0;
}

int psfs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct psfs_dirlist *dl = calloc(1, sizeof *dl);
	if (!dl)
		return -ENOMEM;
	int res = psfs_folder_hold(path, &dl->hold);
	if (res) {
		free(dl);
		return res;
	}
	atomic_init(&dl->refs, 1);
	pthread_mutex_init(&dl->lock, NULL);
	fi->fh = (uint64_t)(uintptr_t)dl;
	return 0;
}

void psfs_dirlist_hold(uint64_t fh)
{
	struct psfs_dirlist *dl = (struct psfs_dirlist *)(uintptr_t)fh;
	if (dl)
		atomic_fetch_add(&dl->refs, 1);
}

void psfs_dirlist_put(uint64_t fh)
{
	struct psfs_dirlist *dl = (struct psfs_dirlist *)(uintptr_t)fh;
	if (!dl || atomic_fetch_sub(&dl->refs, 1) != 1)
		return;
	psfs_dirlist_clear(dl);
	pthread_mutex_destroy(&dl->lock);
	free(dl->ents);
	free(dl);
}

int psfs_releasedir(const char *path, struct fuse_file_info *fi)
{
	struct psfs_dirlist *dl = (struct psfs_dirlist *)(uintptr_t)fi->fh;
	(void)path;
	if (dl) {
		/* The kernel's handle ends now; the listing with the last
		 * call still using it. */
		psfs_folder_release(dl->hold);
		dl->hold = NULL;
		psfs_dirlist_put(fi->fh);
	}
	return 0;
}

/* Lists into dl from offset 0 (a new listing, or rewinddir). */
static int psfs_dirlist_fill(struct psfs_dirlist *dl, const char *path, enum fuse_readdir_flags flags)
{
	psfs_dirlist_clear(dl);
	psfs_session_listed(path);
	int res = node_list(psfs_self(), path, dl, psfs_dirlist_add, flags);
	if (!res && dl->nomem) {
		psfs_dirlist_clear(dl);
		res = -ENOMEM; /* never a listing that silently lacks names */
	}
	return res;
}

int psfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
		 struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct psfs_dirlist *dl = fi ? (struct psfs_dirlist *)(uintptr_t)fi->fh : NULL;
	int res = 0;
	if (!dl)
		return node_list(psfs_self(), path, buf, filler, flags);
	lockorder_lock(&dl->lock, LOCK_DIRLIST);
	if (offset == 0)
		res = psfs_dirlist_fill(dl, path, flags);
	for (size_t i = offset > 0 ? (size_t)offset : 0; !res && i < dl->n; i++) {
		const struct psfs_dirent *e = &dl->ents[i];
		if (filler(buf, e->name, e->st, (off_t)i + 1, e->flags))
			break;
	}
	lockorder_unlock(&dl->lock, LOCK_DIRLIST);
	return res;
}
