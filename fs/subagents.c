/* SESSION/subagents/ (subagents.h): the family's listing, its artifacts,
 * and the writes refused there. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "caller.h"
#include "catalog.h"
#include "family.h"
#include "fileio.h"
#include "journal.h"
#include "route.h"
#include "search.h"
#include "searchdir.h"
#include "sessioninfo.h"
#include "sessionops.h"
#include "subagents.h"
#include "usage.h"
#include "watch.h"

/* An artifact larger than this is refused at open (EFBIG, logged): it is
 * read whole into the reader's snapshot. */
#define SUBAGENTS_ARTIFACT_MAX (256u << 20)

/* The family shown at path (SESSION/subagents) is to be watched. */
static void subagents_watch(const char *path, const struct psfs_path *p)
{
	size_t n = strlen(path), sl = strlen("/" SUBAGENTS_NAME);
	if (n > sl && strcmp(path + n - sl, "/" SUBAGENTS_NAME) == 0) {
		char *mount = strndup(path, n - sl);
		if (mount)
			psfs_watch_family(p->project, p->session, mount);
		free(mount);
	}
}

/* --- children/ ---------------------------------------------------------- */

/* Called with each name children/ lists and its link's target; nonzero
 * stops. */
typedef int (*subagents_child_fn)(void *ctx, const char *name, const char *target);

/* Whether the file parent (a header's parentSession, as pi wrote it) is
 * the session file whose path is want and whose stat is want_st. */
static int subagents_same_file(const char *parent, const char *want, const struct stat *want_st)
{
	struct stat sb;
	if (strcmp(parent, want) == 0)
		return 1;
	/* pi writes the path it was given, resolved: the store may be
	 * reached through a symlink, and then only the file tells. */
	return stat(parent, &sb) == 0 && sb.st_dev == want_st->st_dev && sb.st_ino == want_st->st_ino;
}

/* The sessions whose header names p's session as their parent that the
 * caller may read: the store's own (pi's /fork, /clone, forkFrom: every
 * session the views list, read once a second at most by the catalog)
 * linked by their folder and name from the mount root, then the forked
 * subagents in its family folder, linked through subagents/.  path is
 * the request's (SESSION/children[/NAME]): how far up the root is. */
static int subagents_children_each(struct psfs *fs, const char *path, const struct psfs_path *p,
				   subagents_child_fn fn, void *ctx)
{
	struct stat want_st;
	struct psfs_caller who;
	struct catalog_session *items = NULL;
	struct family *fam = NULL;
	size_t n = 0, up = 0;
	char *want = NULL, *ups = NULL;
	int res = 0;
	ps_err err = store_stat_session(fs->store, p->project, p->session, &want_st);
	if (err)
		return -psfs_errno(err);
	psfs_caller_get(&who);
	if (!psfs_caller_may_read(&who, want_st.st_uid, want_st.st_gid, want_st.st_mode))
		return -EACCES;
	/* The components before children/: as many ../ reach the root. */
	const char *end = strstr(path, "/" CHILDREN_NAME);
	for (const char *c = path; c < end; c++)
		up += *c == '/';
	if (asprintf(&want, "%s/%s%s%s.jsonl", store_root(fs->store), p->project, *p->project ? "/" : "", p->session) < 0 ||
	    !(ups = calloc(3 * (up + 1) + 1, 1))) {
		res = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < up + 1; i++)
		strcat(ups, "../");
	if ((err = catalog_snapshot(fs->catalog, &items, &n))) {
		res = -psfs_errno(err);
		goto out;
	}
	for (size_t i = 0; !res && i < n; i++) {
		const struct catalog_session *c = &items[i];
		char *parent = NULL, *target = NULL;
		if (!c->fork || !psfs_caller_may_read(&who, c->uid, c->gid, c->mode) ||
		    family_header_parent(fs->store, c->project, c->stem, &parent) != PS_OK || !parent)
			continue;
		if (subagents_same_file(parent, want, &want_st)) {
			if (asprintf(&target, "%s%s%s%s", ups, c->project, *c->project ? "/" : "", c->stem) < 0)
				res = -ENOMEM;
			else
				res = fn(ctx, c->stem, target);
		}
		free(parent);
		free(target);
	}
	if (!res && *p->project && family_read(fs->store, fs->family, p->project, p->session, &fam) == PS_OK) {
		for (size_t i = 0; !res && i < fam->n; i++) {
			const struct family_member *m = &fam->members[i];
			char target[NAME_MAX + 32];
			if (m->kind != FAMILY_FORK || !m->stem)
				continue;
			snprintf(target, sizeof target, "../" SUBAGENTS_NAME "/%s", m->name);
			res = fn(ctx, m->name, target);
		}
	}
out:
	family_free(fam);
	catalog_snapshot_free(items, n);
	free(want);
	free(ups);
	return res < 0 ? res : 0;
}

struct subagents_find {
	const char *name;
	char *target; /* found: new */
};

static int subagents_find_child(void *ctx, const char *name, const char *target)
{
	struct subagents_find *f = ctx;
	if (strcmp(name, f->name) != 0)
		return 0;
	f->target = strdup(target);
	return f->target ? 1 : -ENOMEM;
}



/* --- search/ ------------------------------------------------------------ */

/* A query as a search/ name gives it (docs/search.md): %2F is '/', %25
 * '%', as the store-wide search/ reads them. */
static void subagents_query_of(const char *name, char *out, size_t size)
{
	size_t o = 0;
	for (const char *c = name; *c && o + 1 < size; c++) {
		if (c[0] == '%' && c[1] == '2' && (c[2] == 'F' || c[2] == 'f')) {
			out[o++] = '/';
			c += 2;
		} else if (c[0] == '%' && c[1] == '2' && c[2] == '5') {
			out[o++] = '%';
			c += 2;
		} else {
			out[o++] = *c;
		}
	}
	out[o] = '\0';
}

struct subagents_search {
	struct psfs *fs;
	const struct search_query *query;
	struct search_budget budget;
	struct psfs_caller who;
	subagents_child_fn fn;
	void *ctx;
	int res;
};

/* Each child below project/stem (depth first, in start order) that the
 * caller may read and that pi's /resume would list for the query, linked
 * from search/QUERY/ (shown: its path below the session directory). */
static void subagents_search_in(struct subagents_search *f, const char *project, const char *stem, const char *shown,
				int depth)
{
	struct family *fam = NULL;
	ps_err err = family_read(f->fs->store, f->fs->family, project, stem, &fam);
	if (err) {
		f->res = err == PS_ERR_NOMEM ? -ENOMEM : 0;
		return;
	}
	for (size_t i = 0; !f->res && i < fam->n; i++) {
		const struct family_member *m = &fam->members[i];
		struct sessioninfo *info = NULL;
		struct stat sb;
		char *child = NULL, *path = NULL, *target = NULL;
		int match = 0;
		if (!m->stem || store_stat_session(f->fs->store, m->dir, m->stem, &sb) != PS_OK ||
		    !psfs_caller_may_read(&f->who, sb.st_uid, sb.st_gid, sb.st_mode))
			continue;
		if (asprintf(&child, "%s" SUBAGENTS_NAME "/%s", shown, m->name) < 0 ||
		    asprintf(&path, "%s/%s/%s.jsonl", store_root(f->fs->store), m->dir, m->stem) < 0 ||
		    asprintf(&target, "../../%s", child) < 0) {
			f->res = -ENOMEM;
		} else if ((err = sessioninfo_load(path, &info)) == PS_OK &&
			   (err = search_query_matches_in(f->query, info, &f->budget, &match)) == PS_OK && match) {
			f->res = f->fn(f->ctx, m->name, target);
		}
		if (err == PS_ERR_NOMEM || err == PS_ERR_COSTLY || err == PS_ERR_INTR || err == PS_ERR_TOOBIG)
			f->res = -psfs_errno(err);
		sessioninfo_free(info);
		if (!f->res && depth < 8) {
			char *deeper = NULL;
			if (asprintf(&deeper, "%s/", child) < 0)
				f->res = -ENOMEM;
			else
				subagents_search_in(f, m->dir, m->stem, deeper, depth + 1);
			free(deeper);
		}
		free(child);
		free(path);
		free(target);
	}
	family_free(fam);
}

/* The children of p's session that match search/QUERY (p at
 * PSFS_FAMILY_SEARCH_QUERY or _HIT): fn with each.  0 or -errno; an
 * invalid query is -EINVAL, logged. */
static int subagents_search_each(struct psfs *fs, const char *path, const struct psfs_path *p,
				 subagents_child_fn fn, void *ctx)
{
	struct subagents_search f = { .fs = fs, .fn = fn, .ctx = ctx };
	struct search_query *query = NULL;
	char text[NAME_MAX + 1], *why = NULL;
	struct stat sb;
	ps_err err = store_stat_session(fs->store, p->project, p->session, &sb);
	if (err)
		return -psfs_errno(err);
	psfs_caller_get(&f.who);
	if (!psfs_caller_may_read(&f.who, sb.st_uid, sb.st_gid, sb.st_mode))
		return -EACCES;
	subagents_query_of(p->family_link, text, sizeof text);
	if ((err = search_query_parse(text, &query, &why))) {
		if (why)
			journal_log("search %s: %s", journal_path(path), why);
		free(why);
		return -psfs_errno(err);
	}
	f.query = query;
	search_budget_init(&f.budget, SEARCH_BUDGET_NS, NULL, NULL);
	if (*p->project)
		subagents_search_in(&f, p->project, p->session, "", 1);
	search_query_free(query);
	return f.res < 0 ? f.res : 0;
}

/* The target of children/NAME or search/QUERY/NAME (p->family says
 * which): 0 with *target new, or -errno. */
static int subagents_link_target(struct psfs *fs, const char *path, const struct psfs_path *p, char **target)
{
	int child = p->family == PSFS_FAMILY_CHILD;
	struct subagents_find f = { child ? p->family_link : p->family_hit, NULL };
	int res = child ? subagents_children_each(fs, path, p, subagents_find_child, &f)
			: subagents_search_each(fs, path, p, subagents_find_child, &f);
	*target = f.target;
	if (!res && !f.target)
		res = -ENOENT;
	return res;
}

struct subagents_fill {
	void *buf;
	fuse_fill_dir_t filler;
};

static int subagents_count_hit(void *ctx, const char *name, const char *target)
{
	(void)ctx, (void)name, (void)target;
	return 0;
}

static int subagents_fill_child(void *ctx, const char *name, const char *target)
{
	struct subagents_fill *f = ctx;
	(void)target;
	f->filler(f->buf, name, NULL, 0, 0);
	return 0;
}

/* What the caller may see of a file of the store: read bits as it has
 * them, write bits never (nothing below subagents/ but a child's own
 * files takes writes), search bits on directories where it is readable. */
static void subagents_stat(struct stat *st, const struct stat *like, int dir)
{
	mode_t r = like->st_mode & 0444;
	memset(st, 0, sizeof *st);
	st->st_mode = (dir ? S_IFDIR | r | r >> 2 : S_IFREG | r);
	st->st_nlink = dir ? 2 : 1;
	st->st_uid = like->st_uid;
	st->st_gid = like->st_gid;
	st->st_atim = like->st_atim;
	st->st_mtim = like->st_mtim;
	st->st_ctim = like->st_ctim;
	if (!dir) {
		st->st_size = like->st_size;
		st->st_blocks = (like->st_size + 511) / 512;
	}
}

/* lstat of an artifact (a store-relative path): 0 or -errno. */
static int subagents_artifact_stat(struct psfs *fs, const char *rel, struct stat *sb)
{
	int root = -1, res = 0;
	ps_err err = store_open_project(fs->store, "", &root);
	if (err)
		return -psfs_errno(err);
	if (fstatat(root, rel, sb, AT_SYMLINK_NOFOLLOW) != 0)
		res = -errno;
	else if (!S_ISREG(sb->st_mode))
		res = -ENOENT;
	close(root);
	return res;
}

int subagents_getattr(struct psfs *fs, const char *path, const struct psfs_path *p, struct stat *st)
{
	struct stat sb;
	char *target = NULL;
	ps_err err;
	int res;
	switch (p->family) {
	case PSFS_FAMILY_CHILD:
	case PSFS_FAMILY_SEARCH_HIT:
		if ((res = subagents_link_target(fs, path, p, &target)))
			return res;
		if ((err = store_stat_session(fs->store, p->project, p->session, &sb))) {
			free(target);
			return -psfs_errno(err);
		}
		subagents_stat(st, &sb, 0);
		st->st_mode = S_IFLNK | 0777;
		st->st_size = (off_t)strlen(target);
		free(target);
		return 0;
	case PSFS_FAMILY_SEARCH_QUERY:
		/* An invalid query is EINVAL at once, as search/ answers. */
		if ((res = subagents_search_each(fs, path, p, subagents_count_hit, NULL)))
			return res;
		/* fall through */
	case PSFS_FAMILY_CHILDREN:
	case PSFS_FAMILY_SEARCH:
	case PSFS_FAMILY_DIR:
		/* As the session directory it is in. */
		if ((err = store_stat_session(fs->store, p->project, p->session, &sb)))
			return -psfs_errno(err);
		if (p->family == PSFS_FAMILY_DIR)
			subagents_watch(path, p);
		subagents_stat(st, &sb, 1);
		return 0;
	case PSFS_FAMILY_ARTIFACT:
		if ((res = subagents_artifact_stat(fs, p->artifact, &sb)))
			return res;
		subagents_stat(st, &sb, 0);
		return 0;
	case PSFS_FAMILY_FOLDER: {
		int root = -1;
		if ((err = store_open_project(fs->store, "", &root)))
			return -psfs_errno(err);
		res = fstatat(root, p->artifact, &sb, AT_SYMLINK_NOFOLLOW) != 0 ? -errno : !S_ISDIR(sb.st_mode) ? -ENOENT : 0;
		close(root);
		if (!res)
			subagents_stat(st, &sb, 1);
		return res;
	}
	default:
		return -ENOENT;
	}
}

/* Whether the caller may read the session file p names: what is listed of
 * its family is derived from its folder (docs/security.md). */
static int subagents_may_list(struct psfs *fs, const struct psfs_path *p)
{
	struct stat sb;
	struct psfs_caller who;
	if (store_stat_session(fs->store, p->project, p->session, &sb) != PS_OK)
		return 0;
	psfs_caller_get(&who);
	return psfs_caller_may_read(&who, sb.st_uid, sb.st_gid, sb.st_mode);
}

/* A folder of PROJECT/subagent-artifacts/: its files and folders as they
 * are (no link is shown, none followed). */
static int subagents_readdir_folder(struct psfs *fs, const struct psfs_path *p, void *buf, fuse_fill_dir_t filler)
{
	int root = -1, fd;
	ps_err err = store_open_project(fs->store, "", &root);
	if (err)
		return -psfs_errno(err);
	fd = openat(root, p->artifact, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(root);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return -e;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat sb;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !(S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode)))
			continue;
		filler(buf, de->d_name, NULL, 0, 0);
	}
	closedir(d);
	return 0;
}

void subagents_fill_project(struct psfs *fs, const struct psfs_path *p, void *buf, fuse_fill_dir_t filler)
{
	struct stat sb;
	int root = -1;
	char rel[STORE_PROJECT_MAX + 32];
	if (p->depth != 1 || !*p->project || store_open_project(fs->store, "", &root) != PS_OK)
		return;
	snprintf(rel, sizeof rel, "%s/%s", p->project, FAMILY_ARTIFACTS_DIR);
	if (fstatat(root, rel, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode) &&
	    store_stat_session(fs->store, p->project, FAMILY_ARTIFACTS_DIR, &sb) != PS_OK)
		filler(buf, FAMILY_ARTIFACTS_DIR, NULL, 0, 0);
	close(root);
}

int subagents_readdir(struct psfs *fs, const char *path, const struct psfs_path *p, void *buf, fuse_fill_dir_t filler)
{
	struct family *fam = NULL;
	if (p->family == PSFS_FAMILY_CHILDREN || p->family == PSFS_FAMILY_SEARCH_QUERY) {
		struct subagents_fill f = { buf, filler };
		return p->family == PSFS_FAMILY_CHILDREN ? subagents_children_each(fs, path, p, subagents_fill_child, &f)
							 : subagents_search_each(fs, path, p, subagents_fill_child, &f);
	}
	if (p->family == PSFS_FAMILY_SEARCH)
		return 0; /* a query is looked up, never listed */
	if (p->family == PSFS_FAMILY_FOLDER)
		return subagents_readdir_folder(fs, p, buf, filler);
	if (p->family != PSFS_FAMILY_DIR)
		return p->family == PSFS_FAMILY_ARTIFACT || p->family == PSFS_FAMILY_CHILD ? -ENOTDIR : -ENOENT;
	if (!subagents_may_list(fs, p))
		return -EACCES;
	ps_err err = family_read(fs->store, fs->family, p->project, p->session, &fam);
	if (err)
		return -psfs_errno(err);
	subagents_watch(path, p);
	for (size_t i = 0; i < fam->n; i++) {
		const struct family_member *m = &fam->members[i];
		char name[NAME_MAX + 16];
		if (m->stem)
			filler(buf, m->name, NULL, 0, 0);
		for (int k = 0; k < FAMILY_ARTIFACT_KINDS; k++)
			if (m->artifact[k]) {
				snprintf(name, sizeof name, "%s%s", m->name, family_artifact_suffix[k]);
				filler(buf, name, NULL, 0, 0);
			}
	}
	family_free(fam);
	return 0;
}

int subagents_open(struct psfs *fs, const char *path, const struct psfs_path *p, int flags, char **text,
		   size_t *len)
{
	int root = -1, fd = -1, res = 0;
	struct stat sb;
	*text = NULL;
	*len = 0;
	if (p->family != PSFS_FAMILY_ARTIFACT)
		return p->family == PSFS_FAMILY_MISSING ? -ENOENT : -EISDIR;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) {
		journal_log("refused writing %s: a run's artifacts are pi-subagents' record of it, kept as written",
			    journal_path(path));
		return -EPERM;
	}
	ps_err err = store_open_project(fs->store, "", &root);
	if (err)
		return -psfs_errno(err);
	fd = openat(root, p->artifact, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) != 0) {
		res = -errno;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		res = -ENOENT;
		goto out;
	}
	if ((uint64_t)sb.st_size > SUBAGENTS_ARTIFACT_MAX) {
		journal_log("refused reading %s: %lld bytes, over the %u MiB an artifact may have here",
			    journal_path(path),
			    (long long)sb.st_size, SUBAGENTS_ARTIFACT_MAX >> 20);
		res = -EFBIG;
		goto out;
	}
	if (!(*text = malloc(sb.st_size ? (size_t)sb.st_size : 1))) {
		res = -ENOMEM;
		goto out;
	}
	/* The bytes there now: a file that grows meanwhile is read to the
	 * size it had, a snapshot as every reader of the mount gets. */
	if (fileio_pread_full(fd, *text, (size_t)sb.st_size, 0) != 0) {
		res = -EIO; /* it shrank meanwhile, or the read failed */
		free(*text);
		*text = NULL;
		goto out;
	}
	*len = (size_t)sb.st_size;
out:
	if (fd >= 0)
		close(fd);
	close(root);
	return res;
}

void subagents_fill_session(struct psfs *fs, const char *path, const struct psfs_path *p, void *buf,
			    fuse_fill_dir_t filler)
{
	struct family *fam = NULL;
	if (p->depth != 2 || !*p->project)
		return;
	if (family_read(fs->store, fs->family, p->project, p->session, &fam) == PS_OK && fam->n) {
		filler(buf, SUBAGENTS_NAME, NULL, 0, 0);
		/* From now on its children's appends are heard. */
		psfs_watch_family(p->project, p->session, path);
	}
	family_free(fam);
}


int subagents_refuse(const char *path, const char *what, int removal)
{
	struct psfs_path p;
	if ((!strstr(path, "/" SUBAGENTS_NAME) && !strstr(path, "/" CHILDREN_NAME) && !strstr(path, "/" SEARCH_NAME) &&
	     !strstr(path, "/" FAMILY_ARTIFACTS_DIR)) ||
	    psfs_split(path, &p) ||
	    (!p.family_depth && p.family == PSFS_FAMILY_NONE))
		return 0;
	if (removal) {
		/* rm -r of the parent walks through here: what it removes
		 * below subagents/ goes with the parent (docs/layout.md). */
		struct psfs_path top = { .depth = 2, .rest = "" };
		memcpy(top.project, p.top_project, sizeof p.top_project);
		memcpy(top.session, p.top_session, sizeof top.session);
		if (psfs_session_deleting(&top))
			return 1;
	}
	/* A child's own entries, names and labels take writes as any
	 * session's; its directory and what lies beside it do not. */
	if (p.family == PSFS_FAMILY_NONE && p.depth == 3)
		return 0;
	journal_log("refused %s %s: %s", what, journal_path(path),
		    p.family == PSFS_FAMILY_CHILDREN || p.family == PSFS_FAMILY_CHILD
			    ? "children/ shows the sessions that name this one their parent (fork one with ln -s)"
		    : p.family == PSFS_FAMILY_FOLDER || (p.family == PSFS_FAMILY_ARTIFACT && !p.family_depth)
			    ? "subagent-artifacts/ shows the runs' artifacts as pi-subagents keeps them"
		    : p.family >= PSFS_FAMILY_SEARCH ? "search/ shows what a query finds"
		    : removal ? "a subagent's run goes with the session that started it (rm -r that session)"
			      : "subagents/ shows what the runs left, as they left it");
	return -EPERM;
}

/* How deep subagents' own subagents are followed for their usage. */
#define SUBAGENTS_USAGE_DEPTH 8

/* Adds the usage of every child session of project/stem, and of theirs,
 * to fam (depth first, in start order); *any: some child has a session. */
static ps_err subagents_usage_of(struct psfs *fs, const char *project, const char *stem, int depth,
				 struct usage_family *fam, int *any)
{
	struct family *family = NULL;
	ps_err err = family_read(fs->store, fs->family, project, stem, &family);
	if (err)
		return err == PS_ERR_NOMEM ? err : PS_OK;
	for (size_t i = 0; !err && i < family->n; i++) {
		const struct family_member *m = &family->members[i];
		struct ps_session *child = NULL;
		struct usage_sum sum;
		if (!m->stem)
			continue;
		*any = 1;
		/* Indexed on its own, not through the store's cache: no second
		 * session lock is taken under the parent's (docs/architecture.md). */
		err = store_open_observed(fs->store, m->dir, m->stem, NULL, &child);
		if (!err && (err = usage_sum_total(child, &sum)) == PS_OK) {
			usage_sum_plus(&fam->sum, &sum);
			fam->sessions++;
		}
		session_free(child);
		if (err != PS_ERR_NOMEM)
			err = PS_OK; /* gone meanwhile, or no session: it spent nothing */
		if (!err && depth < SUBAGENTS_USAGE_DEPTH)
			err = subagents_usage_of(fs, m->dir, m->stem, depth + 1, fam, any);
	}
	family_free(family);
	return err;
}

int subagents_usage_json(struct psfs *fs, const struct psfs_path *p, struct ps_session *s, char **text, size_t *len)
{
	struct usage_family fam = { 0 };
	int any = 0;
	*text = NULL;
	*len = 0;
	if (!*p->project)
		return 0;
	ps_err err = subagents_usage_of(fs, p->project, p->session, 1, &fam, &any);
	if (!err && any)
		err = usage_json_family(s, &fam, text, len);
	return err ? -psfs_errno(err) : any;
}

int subagents_readlink(struct psfs *fs, const char *path, const struct psfs_path *p, char *buf, size_t size)
{
	char *target = NULL;
	if (p->family != PSFS_FAMILY_CHILD && p->family != PSFS_FAMILY_SEARCH_HIT)
		return p->family == PSFS_FAMILY_MISSING ? -ENOENT : -EINVAL;
	int res = subagents_link_target(fs, path, p, &target);
	if (!res)
		snprintf(buf, size, "%s", target);
	free(target);
	return res;
}
