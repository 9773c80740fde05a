/* Namespace edits: create, truncate by path, symlink, unlink, mkdir,
 * rmdir, chmod, chown and utimens, and what they guess of editors' side
 * files; rename, where most saves happen, is rename.c.  History is
 * append-only: what would change or remove an entry is refused and logged (journal_log), what adds one is
 * committed through file.c (psfs_commit_file) or commit.c.  What acts
 * on sessions as wholes (mkdir, rm -r, ln -s in a project folder) is in
 * sessionops.c.  Shared internals: ops_internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "caller.h"
#include "commit.h"
#include "commitfile.h"
#include "cwdnew.h"
#include "journal.h"
#include "node.h"
#include "ops_internal.h"
#include "content.h"
#include "searchdir.h"
#include "sessionops.h"
#include "sessionstart.h"
#include "watch.h"
#include "views.h"


/* Whether dir, where path is to be made, is a search directory (logged:
 * they show what a query finds and take nothing). */
static int psfs_in_search(const char *dir, const char *path)
{
	struct psfs_path p;
	if (psfs_split(dir, &p) || !search_owns(dir, &p))
		return 0;
	journal_log("refused making %s: search directories show what a query finds and take nothing",
		    journal_path(path));
	return 1;
}

int psfs_parent_kind(const char *path, enum psfs_dir *kind)
{
	const char *name;
	char *dir = psfs_dirname(path, &name);
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	int res;

	if (!dir)
		return -ENOMEM;
	overlay_lock(psfs_overlay());
	struct overlay_node *parent = overlay_get(psfs_overlay(), dir);
	int pending = parent && parent->kind == OVERLAY_BRANCH;
	overlay_unlock(psfs_overlay());
	if (pending) {
		*kind = DIR_PENDING;
		free(dir);
		return 0;
	}
	if (psfs_in_search(dir, path)) {
		free(dir);
		return -EPERM;
	}
	res = psfs_locate(dir, &p, &ref, &node);
	free(dir);
	if (res)
		return res == -EINVAL ? -EPERM : res;
	if (node.kind == LAYOUT_TREE_DIR && ref.session->have_header)
		*kind = DIR_TREE;
	else if (node.kind == LAYOUT_LABELS_DIR)
		*kind = DIR_LABELS;
	else
		res = -EPERM;
	store_release(psfs_self()->store, &ref);
	return res;
}

static int psfs_ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);
	return n > m && strcmp(name + n - m, suffix) == 0;
}

static int psfs_is_backup_name(const char *name);

/* Names of the files editors and tools make beside the one they save
 * (docs/layout.md, "Editors' side files"): backups, hidden files, names
 * without an extension (vim's 4913 probe, sed's sedXXXXXX, perl -i's and
 * mkstemp's temporaries), mktemp's tmp.XXXXXXXXXX, JetBrains' safe-write
 * names, *.tmp, *.swp, and temporaries named after the file (NAME.md.*).  They live in memory; any other name would be lost
 * at unmount and is refused at create. */
int psfs_is_side_name(const char *name)
{
	/* NAME.md.ANYTHING: a temporary of NAME.md (VS Code's .vsctmp,
	 * write-file-atomic's NAME.md.HASH, NAME.md.tmp-123). */
	return psfs_is_backup_name(name) || !strchr(name, '.') || strncmp(name, "tmp.", 4) == 0 ||
	       strstr(name, ".md.") || strstr(name, ".json.") ||
	       psfs_ends_with(name, "___jb_tmp___") || psfs_ends_with(name, "___jb_old___") ||
	       psfs_ends_with(name, ".tmp") || psfs_ends_with(name, ".swp");
}

static int psfs_create_in(const char *path, mode_t mode, struct fuse_file_info *fi);

int psfs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	char *started = NULL;
	int res;

	/* The first file made in a directory made under by-cwd/ starts its
	 * session; the file is then made there. */
	const char *base = strrchr(path, '/') + 1;
	if (cwdnew_start(path, commit_is_entry_name(base), &started, &res)) {
		if (!res)
			res = psfs_create_in(started, mode, fi);
		free(started);
		return res;
	}
	return psfs_create_in(path, mode, fi);
}

static int psfs_create_in(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	enum psfs_dir kind;
	int res = psfs_parent_kind(path, &kind);
	int found;

	if (res) {
		journal_log("refused creating %s: files can be made only in a session's tree directories",
			    journal_path(path));
		return res;
	}
	if (kind == DIR_LABELS) {
		journal_log("refused creating %s: labels are symlinks (ln -s ENTRY labels/NAME)", journal_path(path));
		return -EPERM;
	}
	struct fuse_context *ctx = psfs_context();
	overlay_lock(psfs_overlay());
	struct overlay_node *old = overlay_get(psfs_overlay(), path);
	char *edit_of = old && old->kind == OVERLAY_HIDDEN && old->edit_of ? strdup(old->edit_of) : NULL;
	const char *name = strrchr(path, '/') + 1;
	if (!old && !psfs_is_side_name(name) && !commit_is_entry_name(name)) {
		overlay_unlock(psfs_overlay());
		journal_log("refused creating %s: a session holds entries (NAME.md, NAME.json) and editors' "
			    "side files; any other file would be lost at unmount", journal_path(path));
		return -EPERM;
	}
	struct overlay_node *node = overlay_add(psfs_overlay(), path, OVERLAY_FILE, mode & 07777);
	if (node) {
		node->uid = ctx->uid;
		node->gid = ctx->gid;
		node->edit_of = edit_of;
		/* mkstemp (Python's tempfile too) opens its files so; they
		 * are renamed into place, and that rename is the save. */
		node->temporary = !edit_of && (fi->flags & O_ACCMODE) == O_RDWR && (fi->flags & O_EXCL) &&
				  (mode & 07777) == 0600;
	} else {
		free(edit_of);
	}
	overlay_unlock(psfs_overlay());
	if (!node)
		return -ENOMEM;
	char *entry = NULL; /* a file just made is no alias of an entry */
	res = psfs_open_overlay(path, fi, &found, &entry);
	free(entry);
	return found && !entry ? res : -ENOENT;
}

/* Cuts a draft to size (ftruncate of a descriptor, truncate(2) of an
 * in-memory file's path).  0 or -errno.  The target and the raw base are
 * read under the draft's lock: a commit may change both. */
static int psfs_truncate_draft(struct draft *d, off_t size)
{
	int res = 0;
	draft_lock(d);
	if (d->target == DRAFT_RAW) {
		/* Nothing of the file itself is cut: only a size at or past
		 * its end as it was opened is a no-op (O_APPEND tools probe). */
		res = (uint64_t)size >= d->raw_base ? 0 : -EPERM;
	} else {
		res = draft_truncate(d, (size_t)size);
	}
	draft_unlock(d);
	return res;
}

int psfs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	if (size < 0)
		return -EINVAL;
	if ((size_t)size > DRAFT_MAX)
		return -EFBIG;
	if (fi && fi->fh) {
		struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
		if (f->draft && f->writable) {
			int res = psfs_truncate_draft(f->draft, size);
			if (res == -EPERM)
				journal_log("refused truncating %s: history is append-only", journal_path(path));
			return res;
		}
	}
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), path);
	struct draft *d = node && node->kind == OVERLAY_FILE ? overlay_draft(node) : NULL;
	overlay_unlock(psfs_overlay());
	if (d) {
		int res = psfs_truncate_draft(d, size);
		draft_put(d);
		return res;
	}
	journal_log("refused truncating %s: history is append-only (open it for writing instead)", journal_path(path));
	return -EPERM;
}

/* Side files editors rename an entry file to while saving it. */
static int psfs_is_backup_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] == '.' || name[0] == '#' || (n && name[n - 1] == '~') ||
	       psfs_ends_with(name, ".bak") || psfs_ends_with(name, ".orig");
}

/* The label a name in labels/ (or after NNNN~) stands for: the name as
 * typed, with %XX read as an escape (docs/layout.md "Escaping").  NULL
 * with *res set when no label has that name (refused and logged, so
 * nothing is appended under a name that would then not resolve). */
char *psfs_label_of(const char *path, const char *name, int *res)
{
	ps_err err;
	char *label = layout_typed_label(name, &err);
	*res = 0;
	if (!label && err) {
		*res = -psfs_errno(err);
	} else if (!label) {
		journal_reject(path, name, strlen(name),
			       "no label is named so: %XX in a name stands for the byte XX (upper-case hex), "
			       "so a literal % before two such digits is written %25");
		*res = -EINVAL;
	}
	return label;
}

/* Resolves a symlink target to an entry of the session: a path relative to
 * labels/ (../0002-user.x.md), an entry id, or a path inside the mount. */
uint32_t psfs_label_target(struct ps_session *s, const struct psfs_path *p, const char *target)
{
	struct layout_node node;
	struct psfs *fs = psfs_self();
	const char *rel = NULL;
	char prefix[PATH_MAX * 2];

	if (strncmp(target, "../", 3) == 0)
		rel = target + 3;
	else if (target[0] == '/') {
		snprintf(prefix, sizeof prefix, "%s/%s%s%s/", fs->mountpoint ? fs->mountpoint : "", p->project,
			 p->project[0] ? "/" : "", p->session);
		if (strncmp(target, prefix, strlen(prefix)) == 0)
			rel = target + strlen(prefix);
	} else if (!strchr(target, '/')) {
		uint32_t e = session_find(s, target, strlen(target));
		if (e != PS_NIL)
			return e;
		rel = target; /* an entry file name of the session directory */
	}
	if (rel && layout_resolve(s, rel, &node) == PS_OK && node.kind == LAYOUT_ENTRY)
		return node.entry;
	return PS_NIL;
}

/* The temporary name `ln -sf` (gnulib's force_symlinkat) makes its link
 * under, before it renames it over the name typed: "Cu" and six letters
 * or digits.  In labels/ it lives in memory until that rename, which is
 * the one label change (psfs_rename_label_link). */
int psfs_is_link_temporary(const char *name)
{
	if (strncmp(name, "Cu", 2) != 0 || strlen(name) != 8)
		return 0;
	for (const char *p = name + 2; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return 0;
	return 1;
}

/* A symlink kept in memory at path (emacs's lock link .#f, ln -sf's
 * temporary), the caller's.  0 or -ENOMEM. */
static int psfs_symlink_in_memory(const char *target, const char *path)
{
	struct fuse_context *ctx = psfs_context();
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_add(psfs_overlay(), path, OVERLAY_SYMLINK, 0777);
	int res = node ? overlay_set_data(node, target, strlen(target)) : -ENOMEM;
	if (node) {
		node->uid = ctx->uid;
		node->gid = ctx->gid;
	}
	overlay_unlock(psfs_overlay());
	return res;
}

int psfs_symlink(const char *target, const char *path)
{
	enum psfs_dir kind;
	int res;
	const char *name;
	char *dir;
	struct psfs_path at;

	/* In a project folder, or at the root of a flat store: a fork. */
	if (!(dir = psfs_dirname(path, &name)))
		return -ENOMEM;
	if (!psfs_in_search(dir, path) && !psfs_split(dir, &at) &&
	    (at.depth == 1 || (at.depth == 0 && psfs_store_is_flat()))) {
		free(dir);
		return psfs_session_fork(target, path, &at, name);
	}
	free(dir);
	res = psfs_parent_kind(path, &kind);

	if (res) {
		journal_log("refused symlink %s: only labels/ and tree directories take symlinks", journal_path(path));
		return res;
	}
	/* emacs's lock link .#f and the like: kept in memory only. */
	if (kind != DIR_LABELS)
		return psfs_symlink_in_memory(target, path);
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	dir = psfs_dirname(path, &name);
	if (!dir)
		return -ENOMEM;
	res = psfs_locate(dir, &p, &ref, &node);
	free(dir);
	if (res)
		return res;
	/* One call, one label: a name that is there already is EEXIST (the
	 * kernel says so too, unless its cache is stale), and the label must
	 * be listed under the name typed, or the lookup after the call fails. */
	char rel[PATH_MAX];
	struct layout_node there;
	snprintf(rel, sizeof rel, "labels/%s", name);
	char *label = NULL;
	uint32_t entry = psfs_label_target(ref.session, &p, target);
	if (layout_resolve(ref.session, rel, &there) == PS_OK)
		res = -EEXIST;
	else if (entry != PS_NIL && psfs_is_link_temporary(name))
		res = psfs_symlink_in_memory(target, path);
	else if (!(label = psfs_label_of(path, name, &res)))
		;
	else if (entry == PS_NIL) {
		char why[PATH_MAX + 128];
		snprintf(why, sizeof why, "the target %s is not an entry of this session", target);
		journal_reject(path, target, strlen(target), why);
		res = -EINVAL;
	} else if (ref.session->entries[entry].label != PS_NIL) {
		/* pi keeps one label per entry, the latest: a second link
		 * would silently remove the first.  EMLINK, not EEXIST: the
		 * name typed is free, and `ln -sf` retries EEXIST under
		 * fresh temporary names (hundreds of thousands of them). */
		char *had = layout_label_name(ref.session, entry);
		char *file = layout_entry_path(ref.session, entry);
		journal_log("refused symlink %s: %s already has the label %s, and an entry has one label; "
			    "mv labels/%s labels/%s renames it, or rm labels/%s first", journal_path(path),
			    file ? file : target,
			    had ? had : "(another)", had ? had : "OLD", name, had ? had : "OLD");
		free(had);
		free(file);
		res = -EMLINK;
	} else {
		res = commit_label(&ref, path, entry, label, PS_NIL);
	}
	free(label);
	store_release(psfs_self()->store, &ref);
	return res;
}

int psfs_unlink(const char *path)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	int res;

	if (psfs_folder_removal_refused(path))
		return -EPERM; /* rm -rf MOUNT, rm -r PROJECT: nothing moves */

	overlay_lock(psfs_overlay());
	struct overlay_node *ov = overlay_get(psfs_overlay(), path);
	res = ov ? 0 : 1;
	if (ov && (ov->kind == OVERLAY_FILE || ov->kind == OVERLAY_SYMLINK || ov->kind == OVERLAY_SAVED ||
		   ov->kind == OVERLAY_ALIAS)) {
		/* A copy of an entry put aside and removed while the entry's
		 * path still looks absent: the entry is back (it never left
		 * history). */
		struct overlay_node *hidden =
			ov->kind == OVERLAY_FILE && ov->edit_of ? overlay_get(psfs_overlay(), ov->edit_of) : NULL;
		if (hidden && hidden->kind == OVERLAY_HIDDEN)
			overlay_remove(psfs_overlay(), hidden);
		/* A recovered draft's text goes from the store when the user
		 * removes it here, having read it (draftrecord.h). */
		if (ov->backing)
			unlink(ov->backing);
		if (ov->kind == OVERLAY_ALIAS)
			overlay_saved_keep(ov, psfs_saved_grace());
		else
			overlay_remove(psfs_overlay(), ov);
	} else if (ov) {
		res = ov->kind == OVERLAY_HIDDEN ? -ENOENT : -EISDIR;
	}
	overlay_unlock(psfs_overlay());
	if (res <= 0)
		return res;
	if (!psfs_split(path, &p) && p.depth == 2 && p.link_to[0]) {
		journal_log("refused removing %s: a fork's name is its session's name (write another to its name "
			    "file; rm -r %s deletes the session)", journal_path(path), p.link_to);
		return -EPERM;
	}
	if ((res = psfs_locate(path, &p, &ref, &node)))
		return res == -EINVAL ? -EPERM : res;
	if (psfs_session_deleting(&p)) {
		/* The rest of `rm -r`: its rmdir moves the whole session. */
		res = 0;
	} else if (node.kind == LAYOUT_RAW && strcmp(p.rest, "session.jsonl") == 0) {
		res = psfs_session_unlink(path, &p);
	} else if (node.kind == LAYOUT_LABEL && psfs_session_rm_refused(&p)) {
		journal_log("refused removing %s: the same process's removal of the session was refused",
			    journal_path(path));
		res = -EPERM;
	} else if (node.kind == LAYOUT_LABEL) {
		res = commit_label(&ref, path, node.entry, NULL, PS_NIL);
	} else {
		journal_log("refused removing %s: history is append-only", journal_path(path));
		res = layout_is_dir(node.kind) ? -EISDIR : -EPERM;
	}
	store_release(psfs_self()->store, &ref);
	return res;
}

/* Where mkdir NNNN~name (path) in directory dirnode forks: *fork the
 * entry of depth NNNN-1 on the directory's chain (PS_NIL for a new root,
 * 0001~name).  0, or -errno with the reason logged. */
static int psfs_branch_fork_point(const struct ps_session *s, const struct layout_node *dirnode, uint32_t depth,
				  const char *path, uint32_t *fork)
{
	*fork = PS_NIL;
	if (depth > 1) {
		uint32_t lo = dirnode->session_root ? 0 : s->entries[s->branches[dirnode->branch].first].depth;
		uint32_t hi = lo;
		for (uint32_t e = s->branches[dirnode->branch].first; e != PS_NIL; e = s->entries[e].first_child) {
			hi = s->entries[e].depth;
			if (s->entries[e].depth == depth - 1)
				*fork = e;
		}
		/* Out of this directory's range: ERANGE says so, where ENOENT
		 * read as a missing parent directory.  After the directory's
		 * last entry there is no branch to make: what is written there
		 * continues this directory, and a shell that went into NNNN~name
		 * would be left in a directory that is gone. */
		if (*fork == PS_NIL || s->entries[*fork].first_child == PS_NIL) {
			char range[64] = "no NNNN works here yet";
			if (hi > lo)
				snprintf(range, sizeof range, "NNNN is %04u to %04u here", lo + 1, hi);
			journal_log("refused mkdir %s: %s%u in this directory; a branch NNNN~name starts after the entry "
				    "of depth NNNN-1 and beside the one of depth NNNN, so %s%s",
				    journal_path(path),
				    *fork == PS_NIL ? "no entry of depth " : "nothing follows the entry of depth ",
				    depth - 1, range, *fork == PS_NIL ? "" : " (a new file here continues this directory)");
			return -ERANGE;
		}
		return 0;
	}
	if (!dirnode->session_root) {
		journal_log("refused mkdir %s: a new root (0001~name) is made in the session directory",
			    journal_path(path));
		return -EPERM;
	}
	if (s->n_entries == 0) {
		journal_log("refused mkdir %s: the session has no entry yet, so its first root is the session "
			    "directory itself (a new file there starts it)", journal_path(path));
		return -ERANGE;
	}
	return 0;
}

int psfs_mkdir(const char *path, mode_t mode)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node dirnode, exists;
	const char *name;
	char *dir = psfs_dirname(path, &name);
	int res;
	uint32_t depth = 0;
	char *end = NULL;

	if (!dir)
		return -ENOMEM;
	if (psfs_in_search(dir, path)) {
		free(dir);
		return -EPERM;
	}
	if (cwdnew_owns(dir)) {
		free(dir);
		return cwdnew_mkdir(path, name, mode);
	}
	if (views_owns(dir)) {
		journal_log("refused mkdir %s: the views hold links to sessions, not sessions; mkdir PROJECT/NAME "
			    "starts one, or mkdir -p by-cwd/PATH/NAME for the directory PATH",
			    journal_path(path));
		free(dir);
		return -EPERM;
	}
	/* In a project folder, or at the root of a flat store: a session. */
	if (!psfs_split(dir, &p) && (p.depth == 1 || (p.depth == 0 && psfs_store_is_flat()))) {
		free(dir);
		return psfs_session_start(path, &p, name, mode);
	}
	if (strcmp(dir, "/") == 0) {
		/* pi makes a project folder when it first saves a session for
		 * a cwd, and the folder's name does not give that cwd back. */
		journal_log("refused mkdir %s: project folders are made by pi, the first time it saves a session for a "
			    "directory, and a folder's name does not say its directory exactly ('-' stands for '/', '\\' "
			    "and ':'); to start a session in a directory that has no folder yet, mkdir -p "
			    "by-cwd/PATH/NAME and write its first entry file there (echo TEXT > by-cwd/PATH/NAME/ask.md)",
			    journal_path(path));
		free(dir);
		return -EPERM;
	}
	res = psfs_locate(dir, &p, &ref, &dirnode);
	free(dir);
	if (res) {
		journal_log("refused mkdir %s: branches are made inside a session (NNNN~name)", journal_path(path));
		return res == -EINVAL ? -EPERM : res;
	}
	struct ps_session *s = ref.session;
	unsigned long d = strtoul(name, &end, 10);
	if (end - name >= 4 && *end == '~' && end[1] && d >= 1 && d < PS_NIL)
		depth = (uint32_t)d;
	if (dirnode.kind != LAYOUT_TREE_DIR || !depth || !s->have_header) {
		journal_log("refused mkdir %s: a new branch is a directory NNNN~name in a tree directory",
			    journal_path(path));
		res = -EPERM;
		goto out;
	}
	char rel[PATH_MAX];
	snprintf(rel, sizeof rel, "%s%s%s", p.rest, p.rest[0] ? "/" : "", name);
	if (layout_resolve(s, rel, &exists) == PS_OK) {
		res = -EEXIST;
		goto out;
	}
	uint32_t fork;
	if ((res = psfs_branch_fork_point(s, &dirnode, depth, path, &fork)))
		goto out;
	char *label = psfs_label_of(path, end + 1, &res);
	if (!label)
		goto out;
	struct fuse_context *ctx = psfs_context();
	overlay_lock(psfs_overlay());
	struct overlay_node *node =
		overlay_get(psfs_overlay(), path) ? NULL : overlay_add(psfs_overlay(), path, OVERLAY_BRANCH, mode & 07777);
	if (node) {
		node->uid = ctx->uid;
		node->gid = ctx->gid;
		node->label = label;
		node->fork_id = strdup(fork == PS_NIL ? "" : session_str(s, s->entries[fork].id));
		label = NULL;
		res = node->label && node->fork_id ? 0 : -ENOMEM;
	} else {
		res = -EEXIST;
	}
	overlay_unlock(psfs_overlay());
	free(label);
out:
	store_release(psfs_self()->store, &ref);
	return res;
}

int psfs_rmdir(const char *path)
{
	int kept_res;
	if (psfs_folder_removal_refused(path))
		return -EPERM;
	if (cwdnew_rmdir(path, &kept_res))
		return kept_res;
	overlay_lock(psfs_overlay());
	struct overlay_node *ov = overlay_get(psfs_overlay(), path);
	int res;
	if (ov && ov->kind == OVERLAY_BRANCH)
		res = overlay_has_children(psfs_overlay(), path) ? -ENOTEMPTY : (overlay_remove(psfs_overlay(), ov), 0);
	else
		res = ov ? -ENOTDIR : 1;
	overlay_unlock(psfs_overlay());
	if (res <= 0)
		return res;
	if (psfs_session_rmdir(path, &res))
		return res;
	struct stat st;
	res = node_stat(psfs_self(), path, &st);
	if (res)
		return res;
	journal_log("refused removing %s: history is append-only", journal_path(path));
	return S_ISDIR(st.st_mode) ? -EPERM : -ENOTDIR;
}

int psfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	if (fi && fi->fh && ((struct psfs_file *)(uintptr_t)fi->fh)->kind != HANDLE_OVERLAY)
		return 0; /* an editor restoring modes after a save: nothing to keep */
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), path);
	if (fi && fi->fh && !node)
		node = ((struct psfs_file *)(uintptr_t)fi->fh)->node;
	if (node && node->kind != OVERLAY_HIDDEN) {
		node->mode = mode & 07777;
		overlay_unlock(psfs_overlay());
		return 0;
	}
	overlay_unlock(psfs_overlay());
	/* Editors restore the mode a file had after saving: no change, no
	 * refusal. */
	struct stat st;
	if (node_stat(psfs_self(), path, &st) == 0 && (st.st_mode & 07777) == (mode & 07777))
		return 0;
	journal_log("refused chmod of %s: modes come from the session file", journal_path(path));
	return -EPERM;
}

int psfs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	if (fi && fi->fh && ((struct psfs_file *)(uintptr_t)fi->fh)->kind != HANDLE_OVERLAY)
		return 0;
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), path);
	if (fi && fi->fh && !node)
		node = ((struct psfs_file *)(uintptr_t)fi->fh)->node;
	if (node && node->kind != OVERLAY_HIDDEN) {
		if (uid != (uid_t)-1)
			node->uid = uid;
		if (gid != (gid_t)-1)
			node->gid = gid;
		overlay_unlock(psfs_overlay());
		return 0;
	}
	overlay_unlock(psfs_overlay());
	struct stat st;
	if (node_stat(psfs_self(), path, &st) == 0 && (uid == (uid_t)-1 || uid == st.st_uid) &&
	    (gid == (gid_t)-1 || gid == st.st_gid))
		return 0;
	journal_log("refused chown of %s: owners come from the session file", journal_path(path));
	return -EPERM;
}

int psfs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), path);
	if (fi && fi->fh && !node)
		node = ((struct psfs_file *)(uintptr_t)fi->fh)->node;
	if (node && node->kind != OVERLAY_HIDDEN && tv) {
		if (tv[1].tv_nsec == UTIME_NOW)
			clock_gettime(CLOCK_REALTIME, &node->mtime);
		else if (tv[1].tv_nsec != UTIME_OMIT)
			node->mtime = tv[1];
	}
	overlay_unlock(psfs_overlay());
	/* `touch` on an entry changes nothing worth refusing. */
	return 0;
}
