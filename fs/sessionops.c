/* Sessions as wholes: deleting one to the trash (rm -r SESSION, as pi's
 * /resume deletes), and forking one (ln -s SESSION/ENTRY PROJECT/NAME, as
 * pi's /fork); see docs/layout.md "Deleting a session" and "Forking a
 * session".  Starting one is sessionstart.c's.  The namespace operations (namespace.c) route
 * here; what is logged and refused follows their rules. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "caller.h"
#include "catalog.h"
#include "family.h"
#include "journal.h"
#include "jstext.h"
#include "lockorder.h"
#include "ops_internal.h"
#include "sessionfork.h"
#include "sessionforkfrom.h"
#include "sessionops.h"
#include "trash.h"
#include "watch.h"

/* A refused `rm -r SESSION` goes on to remove what the directory lists,
 * and so does `tar xf` of a backup (it unlinks each name it cannot
 * create, session.jsonl first); a label's rm is an append (it clears the
 * label): the process whose removal of a session's session.jsonl was
 * refused has its label removals there refused too, for
 * PSFS_REFUSED_RM_SECONDS.  A few at a time are remembered. */
#define PSFS_REFUSED_RM_SECONDS 30
#define PSFS_REFUSED_RM_KEPT 8

/* A recursive removal (rm -r, find -delete, shutil.rmtree) reads a
 * directory's listing, removes each name, then removes the directory.
 * Which process read which session directory's listing, and which of
 * them is deleting it (its removal of session.jsonl was accepted), are
 * remembered for PSFS_WALK_SECONDS after their last step; a few dozen at
 * a time. */
#define PSFS_WALK_SECONDS 60
#define PSFS_WALKS_KEPT 32

struct psfs_walk {
	pid_t process;
	char session[STORE_PROJECT_MAX + NAME_MAX + 1];
	time_t at;
	int deleting;
};

/* An open listing of the root ("" folder) or of a folder in it. */
struct psfs_folder_hold {
	struct psfs_folder_hold *prev, *next;
	pid_t process;
	char folder[];
};

/* The processes whose recursive removal of a folder was refused, told in
 * the log once each: rm -rf MOUNT meets every project. */
#define PSFS_TOLD_KEPT 8
#define PSFS_TOLD_SECONDS 60

/* The mount's (struct psfs's sessionops). */
struct sessionops_state {
	pthread_mutex_t refused_rm_lock;
	struct {
		pid_t pid;
		char session[STORE_PROJECT_MAX + NAME_MAX + 1];
		time_t at;
	} refused_rm[PSFS_REFUSED_RM_KEPT];
	unsigned refused_rm_next; /* the slot the next refusal takes, round */
	pthread_mutex_t walks_lock;
	struct psfs_walk walks[PSFS_WALKS_KEPT];
	pthread_mutex_t holds_lock;
	struct psfs_folder_hold *holds; /* every open listing of a folder, newest first */
	struct {
		pid_t process;
		time_t at;
	} told[PSFS_TOLD_KEPT]; /* holds_lock */
	unsigned told_next;
};

struct sessionops_state *sessionops_state_new(void)
{
	struct sessionops_state *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	pthread_mutex_init(&st->refused_rm_lock, NULL);
	pthread_mutex_init(&st->walks_lock, NULL);
	pthread_mutex_init(&st->holds_lock, NULL);
	return st;
}

void sessionops_state_free(struct sessionops_state *st)
{
	if (!st)
		return;
	pthread_mutex_destroy(&st->refused_rm_lock);
	pthread_mutex_destroy(&st->walks_lock);
	pthread_mutex_destroy(&st->holds_lock);
	free(st);
}

static struct sessionops_state *psfs_sessionops(void)
{
	return psfs_self()->sessionops;
}

static void psfs_refused_rm_note(const struct psfs_path *p)
{
	struct sessionops_state *st = psfs_sessionops();
	lockorder_lock(&st->refused_rm_lock, LOCK_RM_REFUSED);
	unsigned i = st->refused_rm_next++ % PSFS_REFUSED_RM_KEPT;
	st->refused_rm[i].pid = psfs_caller_process();
	snprintf(st->refused_rm[i].session, sizeof st->refused_rm[i].session, "%s/%s", p->project, p->session);
	st->refused_rm[i].at = time(NULL);
	lockorder_unlock(&st->refused_rm_lock, LOCK_RM_REFUSED);
}

int psfs_session_rm_refused(const struct psfs_path *p)
{
	char session[STORE_PROJECT_MAX + NAME_MAX + 1];
	pid_t pid = psfs_caller_process();
	time_t now = time(NULL);
	int found = 0;
	struct sessionops_state *st = psfs_sessionops();
	snprintf(session, sizeof session, "%s/%s", p->project, p->session);
	lockorder_lock(&st->refused_rm_lock, LOCK_RM_REFUSED);
	for (size_t i = 0; i < PSFS_REFUSED_RM_KEPT; i++)
		if (st->refused_rm[i].pid == pid && now - st->refused_rm[i].at < PSFS_REFUSED_RM_SECONDS &&
		    strcmp(st->refused_rm[i].session, session) == 0)
			found = 1;
	lockorder_unlock(&st->refused_rm_lock, LOCK_RM_REFUSED);
	return found;
}

static void psfs_walk_key(const struct psfs_path *p, char *key, size_t size)
{
	snprintf(key, size, "%s/%s", p->project, p->session);
}

/* The caller's walk of p's session, if any (st->walks_lock held). */
static struct psfs_walk *psfs_walk_find(struct sessionops_state *st, const struct psfs_path *p, pid_t process,
					time_t now)
{
	char key[sizeof st->walks[0].session];
	psfs_walk_key(p, key, sizeof key);
	for (size_t i = 0; i < PSFS_WALKS_KEPT; i++) {
		struct psfs_walk *w = &st->walks[i];
		if (w->process == process && now - w->at < PSFS_WALK_SECONDS && strcmp(w->session, key) == 0)
			return w;
	}
	return NULL;
}

void psfs_session_listed(const char *path)
{
	struct psfs_path p;
	/* A subagent's session is deleted with its parent only. */
	if (psfs_split(path, &p) || p.depth != 2 || *p.rest || p.link_to[0] || p.family_depth)
		return;
	struct sessionops_state *st = psfs_sessionops();
	pid_t process = psfs_caller_process();
	time_t now = time(NULL);
	lockorder_lock(&st->walks_lock, LOCK_RM_WALKS);
	struct psfs_walk *w = psfs_walk_find(st, &p, process, now);
	if (!w) {
		/* The oldest goes. */
		w = &st->walks[0];
		for (size_t i = 1; i < PSFS_WALKS_KEPT; i++)
			if (st->walks[i].at < w->at)
				w = &st->walks[i];
		w->process = process;
		psfs_walk_key(&p, w->session, sizeof w->session);
		w->deleting = 0;
	}
	w->at = now;
	lockorder_unlock(&st->walks_lock, LOCK_RM_WALKS);
}

int psfs_session_deleting(const struct psfs_path *p)
{
	struct sessionops_state *st = psfs_sessionops();
	pid_t process = psfs_caller_process();
	time_t now = time(NULL);
	lockorder_lock(&st->walks_lock, LOCK_RM_WALKS);
	struct psfs_walk *w = psfs_walk_find(st, p, process, now);
	int deleting = w && w->deleting;
	if (deleting)
		w->at = now;
	lockorder_unlock(&st->walks_lock, LOCK_RM_WALKS);
	return deleting;
}

/* The folder a path is in at the top: "" for the root itself, else its
 * first name (its length; 0 for the root). */
static size_t psfs_top_folder(const char *path, const char **folder)
{
	while (*path == '/')
		path++;
	*folder = path;
	return strcspn(path, "/");
}

int psfs_folder_hold(const char *path, struct psfs_folder_hold **hold)
{
	const char *folder;
	size_t len = psfs_top_folder(path, &folder);
	*hold = NULL;
	if (folder[len] == '/' && folder[len + 1])
		return 0; /* deeper: a session's own directories */
	struct psfs_path p;
	if (len && !psfs_split(path, &p) && p.depth >= 2)
		return 0; /* a session of a flat store (at the root): rm -r SESSION itself */
	struct psfs_folder_hold *h = calloc(1, sizeof *h + len + 1);
	if (!h)
		return -ENOMEM;
	memcpy(h->folder, folder, len);
	h->process = psfs_caller_process();
	struct sessionops_state *st = psfs_sessionops();
	lockorder_lock(&st->holds_lock, LOCK_RM_HOLDS);
	h->next = st->holds;
	if (st->holds)
		st->holds->prev = h;
	st->holds = h;
	lockorder_unlock(&st->holds_lock, LOCK_RM_HOLDS);
	*hold = h;
	return 0;
}

void psfs_folder_release(struct psfs_folder_hold *hold)
{
	if (!hold)
		return;
	struct sessionops_state *st = psfs_sessionops();
	lockorder_lock(&st->holds_lock, LOCK_RM_HOLDS);
	if (hold->prev)
		hold->prev->next = hold->next;
	else
		st->holds = hold->next;
	if (hold->next)
		hold->next->prev = hold->prev;
	lockorder_unlock(&st->holds_lock, LOCK_RM_HOLDS);
	free(hold);
}

int psfs_folder_removal_refused(const char *path)
{
	struct sessionops_state *st = psfs_sessionops();
	const char *folder;
	size_t len = psfs_top_folder(path, &folder);
	if (!len)
		return 0;
	time_t now = time(NULL);
	lockorder_lock(&st->holds_lock, LOCK_RM_HOLDS);
	int any = st->holds != NULL;
	for (size_t i = 0; i < PSFS_TOLD_KEPT && !any; i++)
		any = st->told[i].process && now - st->told[i].at < PSFS_TOLD_SECONDS;
	lockorder_unlock(&st->holds_lock, LOCK_RM_HOLDS);
	if (!any)
		return 0; /* no folder held open, no removal refused (the usual case): no /proc read */
	pid_t process = psfs_caller_process();
	if (!process)
		return 0;
	const char *held = NULL; /* the folder the caller holds: "" the root */
	int told = 0, refused;
	lockorder_lock(&st->holds_lock, LOCK_RM_HOLDS);
	/* The root's hold first: the log then names the whole mount. */
	for (struct psfs_folder_hold *h = st->holds; h; h = h->next)
		if (h->process == process &&
		    (!h->folder[0] || (!held && strlen(h->folder) == len && strncmp(h->folder, folder, len) == 0 &&
				       folder[len] == '/'))) {
			held = h->folder;
			if (!*held)
				break;
		}
	for (size_t i = 0; i < PSFS_TOLD_KEPT; i++)
		if (st->told[i].process == process && now - st->told[i].at < PSFS_TOLD_SECONDS) {
			st->told[i].at = now;
			told = 1;
		}
	/* The folder's own rmdir comes after the walk let go of it: refused
	 * as part of the removal it ends, without a line of its own. */
	refused = held || (told && !folder[len]);
	const char *what = !held || told ? NULL : *held ? "a project folder" : "the whole mount";
	if (what) {
		unsigned i = st->told_next++ % PSFS_TOLD_KEPT;
		st->told[i].process = process;
		st->told[i].at = now;
	}
	lockorder_unlock(&st->holds_lock, LOCK_RM_HOLDS);
	/* Its rm of a label further down (in a fork's directory, deeper than
	 * rm keeps its parents open) clears nothing either. */
	struct psfs_path p;
	if (refused && !psfs_split(path, &p) && p.depth >= 2 && !p.link_to[0])
		psfs_refused_rm_note(&p);
	if (what)
		journal_log("refused removing %s, and all else process %d removes under %s, which it holds open (rm -rf, "
			    "find -delete, tar x): no session moves to the trash that way; to delete a session, rm -r its "
			    "own directory (rm -r PROJECT/SESSION ...)",
			    journal_path(path), (int)process, what);
	return refused;
}

/* rm SESSION/session.jsonl: the first step of `rm -r SESSION` (a session
 * directory lists it first), by a process that read the directory's
 * listing; nothing moves until the rmdir that ends it.  The caller must
 * be one who may remove the file from its store directory.  Any other
 * removal of it (tar's unlink-and-retry, a lone rm) is refused. */
int psfs_session_unlink(const char *path, const struct psfs_path *p)
{
	struct psfs *fs = psfs_self();
	struct sessionops_state *st = fs->sessionops;
	struct psfs_caller c;
	struct stat dir, file;
	pid_t process = psfs_caller_process();
	time_t now = time(NULL);

	lockorder_lock(&st->walks_lock, LOCK_RM_WALKS);
	int walked = psfs_walk_find(st, p, process, now) != NULL;
	lockorder_unlock(&st->walks_lock, LOCK_RM_WALKS);
	if (!walked) {
		/* tar xf unlinks what it cannot create and tries again: the
		 * labels it meets next are not to be cleared either. */
		journal_log("refused removing %s: to delete a session, rm -r its directory (removing its session.jsonl "
			    "alone deletes nothing)", journal_path(path));
		psfs_refused_rm_note(p);
		return -EPERM;
	}
	ps_err err = *p->project ? store_stat_project(fs->store, p->project, &dir)
				 : (stat(store_root(fs->store), &dir) == 0 ? PS_OK : PS_ERR_IO);
	if (!err)
		err = store_stat_session(fs->store, p->project, p->session, &file);
	if (err) {
		psfs_refused_rm_note(p);
		return -psfs_errno(err);
	}
	psfs_caller_get(&c);
	if (!psfs_caller_may_remove(&c, &dir, &file)) {
		journal_log("refused removing %s: the session file's directory in the store is not the caller's to "
			    "change", journal_path(path));
		psfs_refused_rm_note(p);
		return -EACCES;
	}
	lockorder_lock(&st->walks_lock, LOCK_RM_WALKS);
	struct psfs_walk *w = psfs_walk_find(st, p, process, now);
	if (w) {
		w->deleting = 1;
		w->at = now;
	}
	lockorder_unlock(&st->walks_lock, LOCK_RM_WALKS);
	return w ? 0 : -EPERM;
}

/* The family folder of a session just moved to the trash, and its runs'
 * artifacts, after it (docs/layout.md "Subagent runs"): each an item of
 * the trash, logged; what cannot move stays, logged. */
static void psfs_session_trash_family(struct psfs *fs, const char *path, const struct family *fam)
{
	const char *root = store_root(fs->store);
	for (size_t i = 0; fam && i <= fam->n_artifacts; i++) {
		const char *rel = i < fam->n_artifacts ? fam->artifacts[i] : fam->folder;
		char *abs = NULL, *trashed = NULL;
		if (!rel)
			continue;
		if (asprintf(&abs, "%s/%s", root, rel) < 0) {
			journal_log("rm -r %s: out of memory: %s stays in the store", journal_path(path), rel);
			continue;
		}
		ps_err err = trash_put(abs, fs->trash_home, geteuid(), time(NULL), &trashed);
		if (err)
			journal_log("rm -r %s: %s could not be moved to the trash and stays in the store: %s",
				    journal_path(path), rel,
				    ps_strerror(err));
		else
			journal_log("rm -r %s: %s moved to the trash with it, as %s", journal_path(path), rel, trashed);
		free(abs);
		free(trashed);
	}
}

/* rmdir in a session the caller is deleting: its subdirectories go as
 * asked (nothing changes), and the session directory's moves the file to
 * the trash (trash.h), as pi's /resume deletes one with the `trash`
 * command.  1 when path was one (*res is the answer), else 0. */
int psfs_session_rmdir(const char *path, int *res)
{
	struct psfs *fs = psfs_self();
	struct psfs_path p;
	struct store_ref ref;
	char *trashed = NULL;
	if (psfs_split(path, &p) || p.depth < 2 || p.link_to[0] || !psfs_session_deleting(&p))
		return 0;
	*res = 0;
	if (*p.rest)
		return 1;
	struct family *fam = NULL;
	ps_err err = family_read(fs->store, fs->family, p.project, p.session, &fam);
	if (!err)
		err = store_acquire(fs->store, p.project, p.session, &ref);
	if (!err) {
		err = trash_put(ref.session->path, fs->trash_home, geteuid(), time(NULL), &trashed);
		store_release(fs->store, &ref);
	}
	if (!err)
		psfs_session_trash_family(fs, path, fam);
	family_free(fam);
	pid_t process = psfs_caller_process();
	lockorder_lock(&fs->sessionops->walks_lock, LOCK_RM_WALKS);
	struct psfs_walk *w = psfs_walk_find(fs->sessionops, &p, process, time(NULL));
	if (w)
		memset(w, 0, sizeof *w);
	lockorder_unlock(&fs->sessionops->walks_lock, LOCK_RM_WALKS);
	if (err) {
		journal_log("refused removing %s: the session file could not be moved to the trash (%s): %s",
			    journal_path(path),
			    fs->trash_home ? fs->trash_home : "no home trash: neither $XDG_DATA_HOME nor $HOME is set",
			    ps_strerror(err));
		*res = err == PS_ERR_STORE_READONLY ? -EACCES : -psfs_errno(err);
		return 1;
	}
	journal_log("rm -r %s: the session moved to the trash as %s (trash-restore brings it back)", journal_path(path),
		    trashed);
	free(trashed);
	const char *name;
	char *dirpath = psfs_dirname(path, &name);
	if (dirpath)
		psfs_watch_queue(dirpath);
	psfs_watch_queue(path);
	free(dirpath);
	return 1;
}

/* The mount path (from its root, "/...") a symlink made in dir points
 * to, resolved as the kernel would follow it, or NULL when it leads out
 * of the mount (or without memory).  New string. */
static char *psfs_link_target_path(const char *dir, const char *target)
{
	const char *mnt = psfs_self()->mountpoint;
	size_t n = mnt ? strlen(mnt) : 0;
	if (target[0] != '/')
		return sessionfork_resolve(dir, target);
	char *abs = sessionfork_resolve("/", target);
	char *out = NULL;
	if (abs && n && strncmp(abs, mnt, n) == 0 && (abs[n] == '/' || !abs[n]))
		out = strdup(abs[n] ? abs + n : "/");
	free(abs);
	return out;
}

/* ln -s SESSION/session.jsonl PROJECT/NAME: the whole session forked
 * into PROJECT as pi's SessionManager.forkFrom makes it
 * (sessionforkfrom.h), with PROJECT's cwd (that of its sessions' headers,
 * the catalog's; the source's own when PROJECT is its folder), named
 * NAME.  src is the located source (its session released). */
static int psfs_session_fork_from(const char *target, const char *path, const struct psfs_path *parent,
				  const char *name, const struct psfs_path *src)
{
	struct psfs *fs = psfs_self();
	struct fuse_context *ctx = psfs_context();
	struct store_ref ref = { 0 };
	struct psfs_caller c;
	struct stat file;
	char *cwd = NULL, *stem = NULL;
	int dfd = -1, sfd = -1, res;
	ps_err err;

	psfs_caller_get(&c);
	if (store_stat_session(fs->store, src->project, src->session, &file) != PS_OK ||
	    !psfs_caller_may_read(&c, file.st_uid, file.st_gid, file.st_mode)) {
		journal_log("refused ln -s %s %s: the caller may not read the session it forks", target,
			    journal_path(path));
		return -EACCES;
	}
	/* The catalog before the source's session (the lock order). */
	if (strcmp(parent->project, src->project) != 0 && !(cwd = catalog_project_cwd(fs->catalog, parent->project))) {
		journal_log("refused ln -s %s %s: a whole session forked into %s takes that folder's cwd from the "
			    "headers of its sessions, and it has none (a folder's name does not tell the cwd exactly)",
			    target, journal_path(path), parent->project);
		return -EINVAL;
	}
	if (cwd && cwd[0] != '/') {
		journal_log("refused ln -s %s %s: the cwd the sessions of %s give, %s, is not an absolute path", target,
			    journal_path(path), parent->project, cwd);
		free(cwd);
		return -EINVAL;
	}
	if ((err = store_open_project(fs->store, parent->project, &dfd))) {
		res = -psfs_errno(err);
		goto out;
	}
	if ((err = store_acquire(fs->store, src->project, src->session, &ref))) {
		res = -psfs_errno(err);
		goto out;
	}
	if ((sfd = open(ref.session->path, O_RDONLY | O_CLOEXEC)) < 0) {
		res = -errno; /* before the log line, which may change errno */
		journal_log("refused ln -s %s %s: the session file could not be opened: %s", target, journal_path(path),
			    strerror(-res));
		goto out;
	}
	err = sessionforkfrom_create(sfd, dfd, cwd, ref.session->path, name, file.st_mode & 0666, ctx->uid, ctx->gid,
				     &stem);
	if (err) {
		journal_log("refused ln -s %s %s: the fork could not be written: %s", target, journal_path(path),
			    err == PS_ERR_NOTSESSION ? "the source is not a session pi can fork (empty or invalid)"
			    : err == PS_ERR_INVALID ? "the source header's cwd is not an absolute path"
						    : ps_strerror(err));
		res = -psfs_errno(err);
		goto out;
	}
	journal_log("ln -s %s %s: forked all of %s/%s into %s as the session %s%s%s (cwd %s)", target,
		    journal_path(path),
		    src->project, src->session, *parent->project ? parent->project : "the store", parent->project,
		    *parent->project ? "/" : "", stem, cwd ? cwd : "the source's");
	store_release(fs->store, &ref);
	ref.slot = NULL;
	catalog_add(fs->catalog, parent->project, stem);
	psfs_watch_queue(path);
	res = 0;
out:
	if (ref.slot)
		store_release(fs->store, &ref);
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	free(stem);
	free(cwd);
	return res;
}

/* ln -s SESSION/ENTRY PROJECT/NAME: a fork, as pi's /fork makes one
 * (sessionfork.h): a new session file in PROJECT holding the path from
 * the root to that entry (a directory: to its tip, as its context.json
 * has it), the source as its parentSession, named NAME, which from then
 * on is a symlink to the new session directory (psfs_split).  The caller
 * must be one who may read the source. */
int psfs_session_fork(const char *target, const char *path, const struct psfs_path *parent, const char *name)
{
	struct psfs *fs = psfs_self();
	struct fuse_context *ctx = psfs_context();
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	struct psfs_caller c;
	struct stat file;
	char *dir = NULL, *source = NULL, *stem = NULL;
	int fd = -1, res;
	uint32_t leaf = PS_NIL;
	ps_err err;

	if (name[0] == '.' || !jstext_utf8_valid(name, strlen(name))) {
		journal_log("refused ln -s %s %s: a fork's name is UTF-8 text, not starting with '.'", target,
			    journal_path(path));
		return -EINVAL;
	}
	const char *base;
	if (!(dir = psfs_dirname(path, &base)))
		return -ENOMEM;
	source = psfs_link_target_path(dir, target);
	free(dir);
	if (!source || psfs_locate(source, &p, &ref, &node) != 0) {
		journal_log("refused ln -s %s %s: a link made in a project folder forks the session at the entry it "
			    "names, and %s is no entry on this mount", target, journal_path(path), target);
		free(source);
		return -EINVAL;
	}
	struct ps_session *s = ref.session;
	if (node.kind == LAYOUT_RAW) {
		store_release(fs->store, &ref);
		ref.slot = NULL;
		res = psfs_session_fork_from(target, path, parent, name, &p);
		goto out;
	}
	if (node.kind == LAYOUT_ENTRY || node.kind == LAYOUT_ENTRY_JSON || node.kind == LAYOUT_LEAF ||
	    node.kind == LAYOUT_LABEL)
		leaf = node.entry;
	else if (node.kind == LAYOUT_TREE_DIR && s->n_entries)
		leaf = node.session_root ? session_leaf(s) : s->branches[node.branch].tip;
	if (leaf == PS_NIL) {
		journal_log("refused ln -s %s %s: %s is no entry to fork at", target, journal_path(path), target);
		res = -EINVAL;
		goto out;
	}
	psfs_caller_get(&c);
	if (store_stat_session(fs->store, p.project, p.session, &file) != PS_OK ||
	    !psfs_caller_may_read(&c, file.st_uid, file.st_gid, file.st_mode)) {
		journal_log("refused ln -s %s %s: the caller may not read the session it forks", target,
			    journal_path(path));
		res = -EACCES;
		goto out;
	}
	if ((err = store_open_project(fs->store, parent->project, &fd))) {
		res = -psfs_errno(err);
		goto out;
	}
	err = sessionfork_create(s, leaf, fd, s->path, name, file.st_mode & 0666, ctx->uid, ctx->gid, &stem);
	if (err) {
		journal_log("refused ln -s %s %s: the fork could not be written: %s", target, journal_path(path),
			    ps_strerror(err));
		res = -psfs_errno(err);
		goto out;
	}
	journal_log("ln -s %s %s: forked %s/%s at entry %s as the session %s%s%s", target, journal_path(path),
		    p.project, p.session,
		    session_str(s, s->entries[leaf].id), parent->project, *parent->project ? "/" : "", stem);
	/* The catalog reads sessions under its own lock: the source's must
	 * not be held when it is asked (the order is catalog, then session). */
	store_release(fs->store, &ref);
	catalog_add(fs->catalog, parent->project, stem);
	psfs_watch_queue(path);
	res = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ref.slot)
		store_release(fs->store, &ref);
	free(stem);
	free(source);
	return res;
}
