/* A path made absolute the way pi makes its store's (Node's
 * path.resolve): relative to the current directory, ".", ".." and
 * repeated slashes taken out by the letters alone, no symlink followed.
 * The paths the mount writes into files (a fork's parentSession, the
 * trash's Path=) are then the ones pi would write for the same store,
 * also where it is reached through a symlink.
 *
 * Ownership: returns a new string (free it), or NULL (out of memory, or
 * a relative path and no current directory). */
#ifndef PS_PATHRESOLVE_H
#define PS_PATHRESOLVE_H

char *path_resolve(const char *path);

/* The home directory as Node's os.homedir() finds it (and so pi): $HOME,
 * else the password database.  Borrowed (the environment's or getpwuid's
 * static), or NULL when neither says. */
const char *path_home(void);

#endif
