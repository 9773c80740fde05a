/* A folder's entries read in one go, each with its type, for walks that
 * visit thousands of small folders (a thousand subagent families are
 * 13,000 of them).  readdir() through fdopendir() costs a stat and two
 * fcntl calls per folder, and a walk that stats each entry for its type
 * one more call per entry; the kernel already gives the type with the
 * name (getdents64's d_type), so only file systems that do not (type
 * unknown) are asked with a stat.  "." and ".." are left out. */
#ifndef PS_DIRLIST_H
#define PS_DIRLIST_H

#include <stddef.h>
#include "ps_error.h"

enum dirlist_type { DIRLIST_OTHER = 0, DIRLIST_FILE, DIRLIST_DIR }; /* a symlink is OTHER: never followed */

struct dirlist_entry {
	const char *name; /* borrowed from the list */
	enum dirlist_type type;
};

struct dirlist {
	struct dirlist_entry *entries; /* owned; in the folder's order */
	size_t n;
	char *names; /* owned; the names, back to back */
	size_t names_len, names_cap, cap;
};

#define DIRLIST_INIT { NULL, 0, NULL, 0, 0, 0 }

/* Reads every entry of the folder open at fd (borrowed; not closed, its
 * position is moved to the end) into *list, which is emptied first.
 * PS_ERR_NOMEM, or PS_ERR_IO when the folder cannot be read (gone
 * meanwhile): the list is then empty. */
ps_err dirlist_read(int fd, struct dirlist *list);

/* Whether the list holds name with that type. */
int dirlist_has(const struct dirlist *list, const char *name, enum dirlist_type type);

/* Frees what the list owns; it is DIRLIST_INIT afterwards. */
void dirlist_free(struct dirlist *list);

#endif
