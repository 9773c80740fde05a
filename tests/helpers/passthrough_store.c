/* passthrough-store: a test helper that mirrors a directory through FUSE.
 *
 *     passthrough-store BACKING MOUNTPOINT [-f] [-o OPTIONS]
 *
 * A store that lives on such a mount behaves like one on NFS or any other
 * FUSE file system for the daemon under test: changes made to BACKING
 * directly do not go through this mount's VFS, so inotify watches on the
 * mount never hear of them, and the daemon has to find them by stat.
 * Attributes and names are not cached (timeouts 0, like NFS with noac), so
 * what the tests measure is the daemon's own delay, not this helper's.
 *
 * PT_OPEN_DELAY_MS=N in the environment makes every open of a file take N
 * ms more: a store on a slow network, where a store-wide build takes long
 * enough for a test to give up in the middle of it.
 *
 * PT_STOP_ON_WRITE=FILE: the first write after FILE appears stops this
 * helper (SIGSTOP, FILE removed) before the write is made: a server that
 * stops answering in the middle of an append; SIGCONT makes the write.
 *
 * Only what a session store needs: no hard links, xattrs, locks or
 * special files.  Paths are resolved relative to a descriptor of BACKING
 * opened at start, so the mount keeps working if BACKING's own path is
 * renamed (the kernel never passes "." or ".." components).
 */
#define FUSE_USE_VERSION 312
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int pt_root = -1;
static unsigned pt_open_delay_ms; /* PT_OPEN_DELAY_MS */
static const char *pt_stop_on_write; /* PT_STOP_ON_WRITE */

/* FUSE paths start with "/"; the *at() calls want them relative. */
static const char *pt_rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static int pt_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	int res = fi ? fstat((int)fi->fh, st) : fstatat(pt_root, pt_rel(path), st, AT_SYMLINK_NOFOLLOW);
	return res == 0 ? 0 : -errno;
}

static int pt_readlink(const char *path, char *buf, size_t size)
{
	if (!size)
		return -EINVAL;
	ssize_t n = readlinkat(pt_root, pt_rel(path), buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int pt_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	int res = 0;
	(void)offset;
	(void)fi;
	(void)flags;
	int fd = openat(pt_root, pt_rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		res = -errno;
		close(fd);
		goto out;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st = { 0 };
		st.st_ino = de->d_ino;
		st.st_mode = (mode_t)DTTOIF(de->d_type);
		if (filler(buf, de->d_name, &st, 0, 0))
			break;
	}
	closedir(d);
out:
	return res;
}

static int pt_mkdir(const char *path, mode_t mode)
{
	return mkdirat(pt_root, pt_rel(path), mode) == 0 ? 0 : -errno;
}

static int pt_rmdir(const char *path)
{
	return unlinkat(pt_root, pt_rel(path), AT_REMOVEDIR) == 0 ? 0 : -errno;
}

static int pt_unlink(const char *path)
{
	return unlinkat(pt_root, pt_rel(path), 0) == 0 ? 0 : -errno;
}

static int pt_rename(const char *from, const char *to, unsigned int flags)
{
	return renameat2(pt_root, pt_rel(from), pt_root, pt_rel(to), flags) == 0 ? 0 : -errno;
}

static int pt_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int res = fi ? fchmod((int)fi->fh, mode) : fchmodat(pt_root, pt_rel(path), mode, 0);
	return res == 0 ? 0 : -errno;
}

static int pt_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	int res = fi ? fchown((int)fi->fh, uid, gid) : fchownat(pt_root, pt_rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
	return res == 0 ? 0 : -errno;
}

static int pt_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	int res = 0;
	int fd = fi ? (int)fi->fh : openat(pt_root, pt_rel(path), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size) != 0)
		res = -errno;
	if (!fi)
		close(fd);
	return res;
}

static int pt_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	int res = fi ? futimens((int)fi->fh, tv) : utimensat(pt_root, pt_rel(path), tv, AT_SYMLINK_NOFOLLOW);
	return res == 0 ? 0 : -errno;
}

/* The descriptor keeps O_APPEND: pwrite on it then appends at the real end
 * of the backing file, whatever offset the kernel computed, so appends
 * through this mount stay as atomic as on the backing file system. */
static int pt_open(const char *path, struct fuse_file_info *fi)
{
	if (pt_open_delay_ms)
		usleep(pt_open_delay_ms * 1000u);
	int fd = openat(pt_root, pt_rel(path), fi->flags | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int pt_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int fd = openat(pt_root, pt_rel(path), fi->flags | O_CREAT | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int pt_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	ssize_t n = pread((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int pt_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	if (pt_stop_on_write && unlink(pt_stop_on_write) == 0)
		raise(SIGSTOP);
	ssize_t n = pwrite((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int pt_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	int res = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);
	return res == 0 ? 0 : -errno;
}

static int pt_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close((int)fi->fh);
	return 0;
}

static int pt_statfs(const char *path, struct statvfs *st)
{
	(void)path;
	return fstatvfs(pt_root, st) == 0 ? 0 : -errno;
}

static void *pt_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 1;
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	return NULL;
}

static const struct fuse_operations pt_ops = {
	.init = pt_init,
	.getattr = pt_getattr,
	.readlink = pt_readlink,
	.readdir = pt_readdir,
	.mkdir = pt_mkdir,
	.rmdir = pt_rmdir,
	.unlink = pt_unlink,
	.rename = pt_rename,
	.chmod = pt_chmod,
	.chown = pt_chown,
	.truncate = pt_truncate,
	.utimens = pt_utimens,
	.open = pt_open,
	.create = pt_create,
	.read = pt_read,
	.write = pt_write,
	.fsync = pt_fsync,
	.release = pt_release,
	.statfs = pt_statfs,
};

/* Its own loop rather than fuse_main: libfuse 3.14's fuse_main prints a
 * complaint about its own default thread settings on stderr, and the tests
 * fail on unexpected daemon output. */
int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_cmdline_opts opts = { 0 };
	struct fuse_loop_config *loop = NULL;
	struct fuse *fuse = NULL;
	int ret = 1, mounted = 0, signals = 0;
	const char *delay = getenv("PT_OPEN_DELAY_MS");
	pt_stop_on_write = getenv("PT_STOP_ON_WRITE");

	if (delay)
		pt_open_delay_ms = (unsigned)strtoul(delay, NULL, 10);
	if (argc < 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: %s BACKING MOUNTPOINT [-f] [-o OPTIONS]\n", argv[0]);
		goto out;
	}
	pt_root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pt_root < 0) {
		fprintf(stderr, "passthrough-store: %s: %s\n", argv[1], strerror(errno));
		goto out;
	}
	/* libfuse sees the program name and everything after BACKING. */
	if (fuse_opt_add_arg(&args, argv[0]) != 0)
		goto out;
	for (int i = 2; i < argc; i++)
		if (fuse_opt_add_arg(&args, argv[i]) != 0)
			goto out;
	if (fuse_parse_cmdline(&args, &opts) != 0)
		goto out;
	if (!opts.mountpoint) {
		fprintf(stderr, "passthrough-store: no mountpoint given\n");
		goto out;
	}
	if (opts.debug)
		fuse_opt_add_arg(&args, "-odebug");
	fuse = fuse_new(&args, &pt_ops, sizeof pt_ops, NULL);
	if (!fuse)
		goto out;
	if (fuse_mount(fuse, opts.mountpoint) != 0)
		goto out;
	mounted = 1;
	if (fuse_daemonize(opts.foreground) != 0)
		goto out;
	if (fuse_set_signal_handlers(fuse_get_session(fuse)) != 0)
		goto out;
	signals = 1;
	loop = fuse_loop_cfg_create();
	if (!loop)
		goto out;
	fuse_loop_cfg_set_max_threads(loop, opts.max_threads);
	/* A stop asked for by a signal is a clean exit. */
	ret = fuse_loop_mt(fuse, loop);
	ret = ret == 0 || ret == SIGTERM || ret == SIGINT || ret == SIGHUP ? 0 : 1;
out:
	if (loop)
		fuse_loop_cfg_destroy(loop);
	if (signals)
		fuse_remove_signal_handlers(fuse_get_session(fuse));
	if (mounted)
		fuse_unmount(fuse);
	if (fuse)
		fuse_destroy(fuse);
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	if (pt_root >= 0)
		close(pt_root);
	return ret;
}
