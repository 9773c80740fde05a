/* The mounts of this process's namespace, read from /proc/self/mountinfo
 * without touching any of them: a question about a path on a file system
 * that stopped answering (an sshfs whose link died) is answered from the
 * table, where a stat(2) of the path would wait with no end. */
#ifndef PS_MOUNTINFO_H
#define PS_MOUNTINFO_H

/* Called for each mount, in the table's order (a later mount on the same
 * point covers an earlier one): its mount point and source, unescaped, and
 * its type ("ext4", "fuse.sshfs").  All borrowed for the call.  Nonzero
 * stops the walk. */
typedef int (*mountinfo_fn)(void *ctx, const char *mount_point, const char *fstype, const char *source);

/* Walks the table: 0, or -1 when it cannot be read (errno set). */
int mountinfo_each(mountinfo_fn fn, void *ctx);
/* The same over a table in mountinfo's format read from file (a test's). */
int mountinfo_each_in(const char *file, mountinfo_fn fn, void *ctx);

/* Whether the absolute path lies, by the table, on a file system whose
 * answers come from elsewhere: FUSE (sshfs, rclone, this project's own),
 * NFS, SMB, 9p, Ceph, GlusterFS, AFS.  Decided by the longest mount point
 * that is a prefix of path, with no symlink resolved; 0 when the table
 * cannot be read. */
int mountinfo_is_remote(const char *path);
/* The same by the table in file. */
int mountinfo_is_remote_in(const char *file, const char *path);

#endif
