/* The sessions an overview file (overview.h) covers, listed in one walk
 * of the store: the sessions of a project, or of the whole store, that
 * the caller may read, each file once, each session's subagents' sessions
 * (family.h) right after it, shown under it.  Below overview.c, above
 * the core; runs in a FUSE handler (the caller is the request's). */
#ifndef PSFS_OVERVIEWLIST_H
#define PSFS_OVERVIEWLIST_H

#include <sys/stat.h>
#include "buf.h"
#include "caller.h"
#include "pisessionfs.h"

struct overview_top;

struct overview_item {
	char *project, *name;
	/* A subagent's session (family.h): the project and the name it is
	 * shown with, "STEM/subagents/CHILD", its parent's before it in the
	 * list; NULL for a session of the store's own. */
	char *shown_project, *shown_name;
	struct stat st;   /* as listed */
	struct buf value;
	int kept;         /* the value came from the memo */
	ps_err err;
};

/* The sessions an overview file covers that the caller may read, each
 * file once, listed in one walk of the store: the key its text is kept
 * under (each session's place and stamp), and, where it is to be built,
 * the items it is built from. */
struct overview_list {
	struct psfs *fs;
	struct buf key;
	int with_items;
	/* The folders of the project listed last, sorted: which of its
	 * sessions have a family folder, at one listing per project. */
	char *folders_of;
	int folders_fd; /* that project's folder, open (in fds); -1 */
	int *fds;       /* the project folders opened, closed once the families are read */
	size_t n_fds;
	/* The walk's sessions, their families read after it (overviewlist.c). */
	struct overview_top *tops;
	size_t n_tops, cap_tops;
	char **folders;
	size_t n_folders, cap_folders;
	struct overview_item *items;
	size_t n, cap;
	int failed;
	struct psfs_caller who;
};

/* Lists the sessions of project (NULL: the whole store, its root's own
 * sessions last) into *l (with its items when with_items), as the
 * caller may read them.  On an error (the project gone, out of memory)
 * *l is left empty.  Freed with overviewlist_free. */
ps_err overviewlist_make(struct psfs *fs, const char *project, int with_items, struct overview_list *l);
void overviewlist_free(struct overview_list *l);

#endif
