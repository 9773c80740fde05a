/* A file of the overlay (a new NAME.md, or one written where an editor
 * put an entry aside) committed as the entry its name means: found again
 * under the session's lock, appended through commit.c, and then shown
 * under its name as a SAVED name for a while. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "commit.h"
#include "commitfile.h"
#include "journal.h"
#include "ops_internal.h"
#include "watch.h"

/* How long the name of a new file that became an entry keeps answering
 * after its last lookup: longer than the kernel keeps the name (psfs_init),
 * so a name the kernel still believes in never leads nowhere. */
double psfs_saved_grace(void)
{
	double timeout = psfs_self()->cfg.timeout;
	if (isnan(timeout))
		timeout = psfs_watch_hears_all() ? PSFS_TIMEOUT_WATCHED : PSFS_TIMEOUT_UNWATCHED;
	return timeout + 10.0;
}

/* Where a committed file goes: the session acquired (ref) and the node
 * its directory or its entry resolved to (node); a pending branch's fork
 * point and label (fork_id non-NULL) when it is one; whether the file
 * stands for an entry it was written over. */
struct psfs_commit_to {
	struct store_ref *ref;
	const struct layout_node *node;
	const char *fork_id;
	const char *label;
	int edit;
};

/* Hands the text named as to commit.c as what it is at `to`: a pending
 * branch's first entry, an entry's edit, the name or loadout, or a new
 * entry of a tree directory.  *committed: it was one of those (else it
 * stays a side file and 0 is returned). */
static int psfs_commit_as(const struct psfs_commit_to *to, const char *as, const char *text, size_t len,
			  char id[COMMIT_ID_MAX], int *committed)
{
	const struct layout_node *node = to->node;
	*committed = 1;
	if (to->fork_id)
		return commit_branch(to->ref, to->fork_id, to->label, as, text, len, id);
	if (to->edit && node->kind == LAYOUT_ENTRY)
		return commit_edit(to->ref, to->ref->session->generation, node->entry, as, text, len, id);
	if (to->edit && (node->kind == LAYOUT_NAME || node->kind == LAYOUT_LOADOUT))
		return commit_meta(to->ref, node->kind, as, text, len);
	if (node->kind == LAYOUT_TREE_DIR)
		return commit_new(to->ref, to->ref->session->generation, node->branch, as, text, len, id);
	*committed = 0;
	return 0;
}

/* The overlay once the file at `at` (serial) is an entry: the file gives
 * way to the entry's, and its name answers a while for the calls that
 * follow a save (or, short of memory to move it, is gone).  edit_of: the
 * entry it was written over, if any; branch_dir: the pending branch it
 * made, if any. */
static void psfs_commit_settle(const char *at, const char *as, uint64_t serial, const char *edit_of,
			       const char *branch_dir)
{
	struct overlay_node *file, *parent;
	overlay_lock(psfs_overlay());
	file = overlay_get(psfs_overlay(), at);
	if (file && file->serial == serial) {
		if (edit_of || (strcmp(at, as) != 0 && overlay_rename(psfs_overlay(), file, as) != 0))
			overlay_remove(psfs_overlay(), file);
		else
			overlay_saved(file, psfs_saved_grace());
	}
	/* An entry moved aside and edited under its new name (mv E new.md;
	 * echo > new.md): the edit is a branch now, and the entry, still in
	 * history, shows again under its name. */
	struct overlay_node *aside = edit_of && strcmp(edit_of, at) != 0 ? overlay_get(psfs_overlay(), edit_of) : NULL;
	if (aside && aside->kind == OVERLAY_HIDDEN)
		overlay_remove(psfs_overlay(), aside);
	if (branch_dir && (parent = overlay_get(psfs_overlay(), branch_dir)) && parent->kind == OVERLAY_BRANCH)
		overlay_remove(psfs_overlay(), parent);
	overlay_unlock(psfs_overlay());
}

/* Commits the in-memory file at `at`, whose draft d the caller holds
 * locked, as what the name `as` means there: the entry it was written
 * over (a file made where an editor put the entry aside; only when at is
 * as), or a new NAME.md / NAME.json in a tree directory or a pending
 * branch.  serial: the node expected at `at` (0: the one there).  Once
 * appended, the file is moved to `as` and stays as a SAVED name for a
 * while (overlay.h), and the draft revises the entry it appended.
 * Returns 0 when appended (*appended set, if given) or when the file is
 * not one that becomes an entry, else -errno (refused, nothing appended). */
int psfs_commit_file(const char *at, const char *as, uint64_t serial, struct draft *d, int *appended)
{
	struct psfs *fs = psfs_self();
	struct store_ref ref = { 0 };
	struct psfs_path p;
	struct layout_node node;
	const char *name;
	char *dir = psfs_dirname(as, &name);
	char *fork_id = NULL, *label = NULL, *edit_of = NULL;
	char id[COMMIT_ID_MAX] = "";
	const char *text = d->data ? d->data : "";
	size_t len = d->len;
	uint64_t branch_serial = 0;
	int pending = 0, wanted = 0, committed = 0, nomem = 0, held = 0, res = 0;

	if (!dir)
		return -ENOMEM;
	overlay_lock(psfs_overlay());
	struct overlay_node *file = overlay_get(psfs_overlay(), at);
	struct overlay_node *parent = overlay_get(psfs_overlay(), dir);
	if (file && file->kind == OVERLAY_FILE && file->draft == d && (!serial || file->serial == serial)) {
		serial = file->serial;
		/* Without its copy, an edit would be taken for a new file (or
		 * for no entry at all: `name`), and the close would report
		 * success for text never appended. */
		if (strcmp(at, as) == 0 && file->edit_of && !(edit_of = strdup(file->edit_of)))
			nomem = 1;
		/* A blank file over an entry moved aside is wanted too: it is
		 * refused as an emptied entry, not kept as a side file. */
		wanted = (commit_is_entry_name(name) || edit_of) &&
			 (len > 0 || (edit_of && overlay_rewrites_entry(file)));
		if (wanted && parent && parent->kind == OVERLAY_BRANCH) {
			pending = 1;
			branch_serial = parent->serial;
			fork_id = strdup(parent->fork_id);
			label = strdup(parent->label);
		}
	}
	overlay_unlock(psfs_overlay());
	if (journal_owns(as))
		goto out;
	if (nomem || (pending && (!fork_id || !label))) {
		/* Nothing appended; the text stays in the draft, where a later
		 * commit point tries again. */
		journal_log("could not append %s: out of memory (its text stays in the file)", journal_path(as));
		res = -ENOMEM;
		goto out;
	}
	if (!wanted)
		goto out;
	const char *target = edit_of ? edit_of : dir;
	res = pending ? psfs_split(dir, &p) : psfs_locate(target, &p, &ref, &node);
	if (!res && pending) {
		ps_err err = store_acquire(fs->store, p.project, p.session, &ref);
		res = err ? -psfs_errno(err) : 0;
	}
	if (res) {
		if (res != -EINVAL)
			journal_reject(as, text, len, "the directory it was written in is gone");
		goto out;
	}
	held = 1;
	overlay_lock(psfs_overlay());
	file = overlay_get(psfs_overlay(), at);
	int still = file && file->kind == OVERLAY_FILE && file->serial == serial;
	/* Two files of one pending branch committed at once: the first makes
	 * the branch, the second (the session is locked now) finds it made,
	 * and is a new file in it. */
	int made = pending && !((parent = overlay_get(psfs_overlay(), dir)) && parent->kind == OVERLAY_BRANCH &&
				parent->serial == branch_serial);
	overlay_unlock(psfs_overlay());
	if (!still)
		goto out;
	if (made) {
		store_release(fs->store, &ref);
		held = 0;
		pending = 0;
		if ((res = psfs_locate(dir, &p, &ref, &node))) {
			journal_reject(as, text, len, "the branch it was written in is gone");
			goto out;
		}
		held = 1;
	}
	struct psfs_commit_to to = { &ref, &node, pending ? fork_id : NULL, label, edit_of != NULL };
	res = psfs_commit_as(&to, as, text, len, id, &committed);
	if (committed && res != -ENOSPC && res != -ENOMEM) {
		/* Appended, or refused with the text kept: the draft holds
		 * nothing new until it is written again, and what it holds
		 * then revises what this commit made. */
		draft_committed(d, p.project, p.session, res == 0 && id[0] ? id : NULL);
		if (res == 0 && edit_of && (node.kind == LAYOUT_NAME || node.kind == LAYOUT_LOADOUT))
			draft_retarget(d, node.kind == LAYOUT_LOADOUT ? DRAFT_LOADOUT : DRAFT_NAME);
	}
	if (res == 0 && committed) {
		/* It is an entry now (psfs_commit_settle). */
		if (appended)
			*appended = 1;
		psfs_commit_settle(at, as, serial, edit_of, pending ? dir : NULL);
	}
out:
	if (held)
		store_release(fs->store, &ref);
	free(fork_id);
	free(label);
	free(edit_of);
	free(dir);
	return res;
}
