/* Who is asking: the credentials behind the request a thread serves, and
 * whether they may read a session file.  Whatever the mount derives from
 * a session's content (the views' names, usage.csv, the log's lines, the
 * rejected texts) is shown only to a caller who may read that session
 * file (docs/security.md "Who sees what"): with -o allow_other, users
 * share one mount, and the kernel checks modes only on the files it is
 * shown, not on what a listing or an aggregate was built from. */
#ifndef PSFS_CALLER_H
#define PSFS_CALLER_H

#include <sys/stat.h>
#include <sys/types.h>

/* Supplementary groups kept of a caller; more are not looked at, so a
 * caller in more groups may see less, never more. */
#define PSFS_CALLER_GROUPS 32

struct psfs_caller {
	uid_t uid;
	gid_t gid;
	int n_groups;   /* supplementary groups known */
	gid_t groups[PSFS_CALLER_GROUPS];
};

/* Called once fuse_new has succeeded: until then no call has a caller. */
void psfs_caller_serving(void);
/* The FUSE context of the request this thread serves: libfuse's, or the
 * one a guard's thread was given (psfs_context_serve_for, NULL to stop),
 * with the flag that says its caller gave up (psfs_caller_gave_up then
 * reads it).  NULL outside a request.  Every handler asks here, never
 * libfuse. */
struct fuse_context *psfs_context(void);
void psfs_context_serve_for(const struct fuse_context *ctx, const _Atomic int *gave_up);

/* Whether the caller of this thread's request gave up (the kernel sent
 * FUSE_INTERRUPT: ^C, timeout, kill); 0 outside a request. */
int psfs_caller_gave_up(void);

/* The credentials this thread acts for: those psfs_caller_act_for set,
 * else the current request's (with its supplementary groups), else, in
 * a thread that serves no request (the watcher, start-up), the daemon's
 * own. */
void psfs_caller_get(struct psfs_caller *out);

/* Acts for uid/gid until psfs_caller_act_for_done: a release carries no
 * credentials (the kernel sends it as nobody's), so work done for a file
 * handle (its commit, its refusal) speaks for the handle's opener. */
void psfs_caller_act_for(uid_t uid, gid_t gid);
void psfs_caller_act_for_done(void);

/* The thread group (process) of the thread the current request comes
 * from: FUSE names the calling thread, and a close() from any thread of
 * the process that opened a file is that process's close.  0 when there
 * is no request, the pid itself when /proc does not say. */
pid_t psfs_caller_process(void);

/* Whether c may read a file of that owner and mode, as the kernel's
 * default_permissions decides: root always; the owner by the owner bits;
 * a member of the group by the group bits; anyone else by the others'. */
int psfs_caller_may_read(const struct psfs_caller *c, uid_t uid, gid_t gid, mode_t mode);

/* Whether c may make a name in dir: write and search permission. */
int psfs_caller_may_write_in(const struct psfs_caller *c, const struct stat *dir);

/* Whether c may remove a file from a directory, as the kernel decides
 * it: write and search permission on dir, and, where dir is sticky, c
 * owns the file or dir (or is root). */
int psfs_caller_may_remove(const struct psfs_caller *c, const struct stat *dir, const struct stat *file);

/* Whether a and b are the same credentials: uid, gid and supplementary
 * groups (what is kept for one caller is shown to no other). */
int psfs_caller_same(const struct psfs_caller *a, const struct psfs_caller *b);

/* Whether c may see what belongs to owner (a log line, a rejected text):
 * root and the owner himself. */
int psfs_caller_is(const struct psfs_caller *c, uid_t owner);

#endif
