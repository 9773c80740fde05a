/* A set of files by device and inode: what a walk of the store has met, so
 * that a session file reached twice (through a symlinked project folder
 * that leads to another project of the store, which pi follows too) is
 * counted once. */
#ifndef PS_FILESET_H
#define PS_FILESET_H

#include <stddef.h>
#include <sys/types.h>

struct fileset {
	struct fileset_slot *slots; /* owned; open addressing, ino 0 is empty */
	size_t cap, n;
};

#define FILESET_INIT { NULL, 0, 0 }

/* Adds the file: 1 when it was in the set already, 0 when it is new,
 * -1 when memory runs out (the set is unchanged). */
int fileset_meet(struct fileset *set, dev_t dev, ino_t ino);

/* Frees the slots; the set is empty (FILESET_INIT) afterwards. */
void fileset_free(struct fileset *set);

#endif
