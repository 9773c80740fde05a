#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "caller.h"
#include "pisessionfs.h"

static __thread struct {
	int set;
	uid_t uid;
	gid_t gid;
} acting;

void psfs_caller_act_for(uid_t uid, gid_t gid)
{
	acting.set = 1;
	acting.uid = uid;
	acting.gid = gid;
}

void psfs_caller_act_for_done(void)
{
	acting.set = 0;
}

/* libfuse's fuse_get_context() is defined only once fuse_new has made its
 * thread key: before that (the unit tests, a daemon starting) it reads an
 * unmade key, which may hold another library's data (ASan found it). */
static _Atomic int caller_serving;

void psfs_caller_serving(void)
{
	caller_serving = 1;
}

/* The request a thread serves for another (guard.c), else libfuse's. */
static __thread const struct fuse_context *serving_for;
static __thread const _Atomic int *serving_gave_up;

void psfs_context_serve_for(const struct fuse_context *ctx, const _Atomic int *gave_up)
{
	serving_for = ctx;
	serving_gave_up = gave_up;
}

struct fuse_context *psfs_context(void)
{
	if (serving_for)
		return (struct fuse_context *)serving_for;
	return caller_serving ? fuse_get_context() : NULL;
}

static struct fuse_context *psfs_caller_context(void)
{
	return psfs_context();
}

int psfs_caller_gave_up(void)
{
	if (serving_for)
		return serving_gave_up && atomic_load(serving_gave_up);
	return caller_serving && fuse_interrupted();
}

void psfs_caller_get(struct psfs_caller *out)
{
	memset(out, 0, sizeof *out);
	if (acting.set) {
		out->uid = acting.uid;
		out->gid = acting.gid;
		return;
	}
	struct fuse_context *ctx = psfs_caller_context();
	if (!ctx || !ctx->fuse) {
		out->uid = geteuid();
		out->gid = getegid();
		return;
	}
	out->uid = ctx->uid;
	out->gid = ctx->gid;
	/* fuse_getgroups reads /proc/PID/status: only when it can matter. */
	if (out->uid != 0) {
		int n = fuse_getgroups(PSFS_CALLER_GROUPS, out->groups);
		out->n_groups = n < 0 ? 0 : n > PSFS_CALLER_GROUPS ? PSFS_CALLER_GROUPS : n;
	}
}

static int psfs_caller_in_group(const struct psfs_caller *c, gid_t gid)
{
	if (c->gid == gid)
		return 1;
	for (int i = 0; i < c->n_groups; i++)
		if (c->groups[i] == gid)
			return 1;
	return 0;
}

/* The class of mode bits that apply to c (as the owner bits: S_IRWXU),
 * or all of them for root. */
static mode_t psfs_caller_bits(const struct psfs_caller *c, uid_t uid, gid_t gid, mode_t mode)
{
	if (c->uid == 0)
		return S_IRWXU;
	if (c->uid == uid)
		return mode & S_IRWXU;
	if (psfs_caller_in_group(c, gid))
		return (mode & S_IRWXG) << 3;
	return (mode & S_IRWXO) << 6;
}

int psfs_caller_may_read(const struct psfs_caller *c, uid_t uid, gid_t gid, mode_t mode)
{
	return (psfs_caller_bits(c, uid, gid, mode) & S_IRUSR) != 0;
}

int psfs_caller_may_write_in(const struct psfs_caller *c, const struct stat *dir)
{
	return (psfs_caller_bits(c, dir->st_uid, dir->st_gid, dir->st_mode) & (S_IWUSR | S_IXUSR)) ==
	       (S_IWUSR | S_IXUSR);
}

int psfs_caller_may_remove(const struct psfs_caller *c, const struct stat *dir, const struct stat *file)
{
	if (!psfs_caller_may_write_in(c, dir))
		return 0;
	/* The sticky bit (/tmp): only the file's or the directory's owner. */
	return !(dir->st_mode & S_ISVTX) || c->uid == 0 || c->uid == file->st_uid || c->uid == dir->st_uid;
}

int psfs_caller_is(const struct psfs_caller *c, uid_t owner)
{
	return c->uid == 0 || c->uid == owner;
}

pid_t psfs_caller_process(void)
{
	struct fuse_context *ctx = psfs_caller_context();
	char path[64], line[128];
	pid_t tgid;
	if (!ctx || !ctx->fuse || ctx->pid <= 0)
		return 0;
	tgid = ctx->pid;
	snprintf(path, sizeof path, "/proc/%d/status", (int)ctx->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return tgid;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "Tgid:", 5) == 0) {
			tgid = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	}
	fclose(f);
	return tgid;
}

int psfs_caller_same(const struct psfs_caller *a, const struct psfs_caller *b)
{
	return a->uid == b->uid && a->gid == b->gid && a->n_groups == b->n_groups &&
	       memcmp(a->groups, b->groups, (size_t)a->n_groups * sizeof a->groups[0]) == 0;
}
