/* Errors of the core library.  The core never returns errno values of its
 * own invention: the FUSE front end maps these (fs/errmap.c), the CLI prints
 * ps_strerror(). */
#ifndef PS_ERROR_H
#define PS_ERROR_H

typedef enum {
	PS_OK = 0,
	PS_ERR_NOMEM,     /* allocation failed */
	PS_ERR_NOENT,     /* no such session, entry or path component */
	PS_ERR_NOTDIR,    /* a path component names a file */
	PS_ERR_ISDIR,     /* a file operation named a directory */
	PS_ERR_IO,        /* reading the store failed */
	PS_ERR_INVALID,   /* the input is not what the operation accepts */
	PS_ERR_NOTSESSION,/* the file is not a pi session (no header) */
	PS_ERR_STORE_READONLY, /* the store refused a write (read-only, no permission): EROFS */
	PS_ERR_TOOBIG,    /* a value exceeds what the index can hold */
	PS_ERR_NOSPACE,   /* the disk is full or over quota */
	PS_ERR_PERM,      /* refused by the mount's rules: history is append-only,
			   * generated files are not written: EPERM */
	PS_ERR_COSTLY,    /* a query spent its budget of work (search.h): ETIMEDOUT */
	PS_ERR_INTR,      /* the asker gave up (an interrupted request): EINTR */
} ps_err;

/* Returns a static, human-readable description. */
const char *ps_strerror(ps_err err);

#endif
