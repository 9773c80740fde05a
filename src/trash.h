/* Moving a file to the trash as the freedesktop.org Trash specification
 * (1.0) has it, so that trash-cli (trash-list, trash-restore), file
 * managers and pi's own `trash` command can bring it back: `rm -r` of a
 * session directory (docs/layout.md "Deleting a session").  Nothing is
 * ever copied or deleted: the file is renamed, or stays where it is. */
#ifndef PS_TRASH_H
#define PS_TRASH_H

#include <sys/types.h>
#include <time.h>
#include "ps_error.h"

/* The home trash: $XDG_DATA_HOME/Trash, else $HOME/.local/share/Trash (a
 * relative XDG_DATA_HOME is ignored, as the XDG base directory
 * specification asks).  Either argument may be NULL.  New string, or NULL
 * when neither gives an absolute directory or without memory. */
char *trash_home_dir(const char *xdg_data_home, const char *home);

/* Moves the file at path (absolute) into the trash: the home trash
 * home_trash (borrowed; NULL: none) when a rename can reach it, else the
 * trash at the top of the file's own file system ($topdir/.Trash/$uid
 * when $topdir/.Trash is a sticky directory, no symlink, and $uid in it
 * the user's own directory, no symlink; else $topdir/.Trash-$uid, which
 * must be the user's own directory, no symlink; either made 0700 when
 * missing).  A trash that is not so is never used (PS_ERR_STORE_READONLY).  Per the specification, info/NAME.trashinfo (the original
 * path, percent-encoded, and the deletion time, local) is made first with
 * O_EXCL and the file renamed to files/NAME after, never over anything;
 * NAME is the file's own name, or stem_2.ext, stem_3.ext, ... when taken.
 *
 * On success *trashed (new string) is where the file now lies.  Errors:
 * PS_ERR_NOENT (no such file), PS_ERR_STORE_READONLY (no permission, or a
 * read-only file system), PS_ERR_NOSPACE, PS_ERR_INVALID (path not
 * absolute), PS_ERR_NOMEM, PS_ERR_IO; then the file has not moved and no
 * info file is left behind. */
ps_err trash_put(const char *path, const char *home_trash, uid_t uid, time_t now, char **trashed);

/* Moves back from the home trash every item whose original path (the
 * info file's Path) wanted says to take, where nothing lies at that path
 * now, and drops its info file: what `rm -r` of a session put in the
 * trash beside the session file (its subagents' runs), once the session
 * file itself is restored (docs/layout.md "Subagent runs").  *restored
 * counts them.  PS_OK also when there is no trash. */
typedef int (*trash_wanted_fn)(void *ctx, const char *orig);
ps_err trash_take_back(const char *home_trash, trash_wanted_fn wanted, void *ctx, size_t *restored);

#endif
