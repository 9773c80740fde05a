/* rename(2) in a session: what editors' and tools' saves by rename mean
 * (a side file renamed over an entry is an edit of it, one renamed to a
 * new NAME.md a new entry, ln -sf's temporary link renamed into labels/
 * the one label change, an entry moved aside and written back), labels
 * renamed, and what is refused because history is append-only
 * (docs/layout.md "What common tools do").  The namespace helpers it
 * shares with namespace.c are in ops_internal.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "caller.h"
#include "commit.h"
#include "commitfile.h"
#include "content.h"
#include "journal.h"
#include "ops_internal.h"
#include "sessionops.h"

static int psfs_rename_label(const char *from, const char *to, unsigned int flags)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node src, dst;
	const char *name;
	char *dir = psfs_dirname(to, &name);
	int res;

	if (!dir)
		return -ENOMEM;
	res = psfs_locate(from, &p, &ref, &src);
	if (res) {
		free(dir);
		return res;
	}
	char rel[PATH_MAX];
	snprintf(rel, sizeof rel, "labels/%s", name);
	int exists = layout_resolve(ref.session, rel, &dst) == PS_OK;
	char *label = psfs_label_of(to, name, &res);
	if (!label)
		;
	else if (exists && (flags & RENAME_NOREPLACE))
		res = -EEXIST;
	else
		res = commit_label(&ref, to, src.entry, label, exists ? dst.entry : PS_NIL);
	free(label);
	free(dir);
	store_release(psfs_self()->store, &ref);
	return res;
}

/* ln -sf's temporary link in labels/ renamed to labels/NAME: the label
 * NAME set on the entry the link names, replacing NAME where it was, in
 * one append, as `mv labels/OLD labels/NAME` does; the link then goes.
 * 1 when from is no such link (the caller moves it as a side file), else
 * 0 or -errno (refused as ln -s would refuse it: nothing appended). */
static int psfs_rename_label_link(const char *from, uint64_t serial, const char *to, unsigned int flags)
{
	enum psfs_dir from_dir, to_dir;
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node dirnode, dst;
	const char *name;
	char *target = NULL, *label = NULL, *dir = NULL;
	int res;

	if (!psfs_is_link_temporary(strrchr(from, '/') + 1) || psfs_parent_kind(from, &from_dir) ||
	    psfs_parent_kind(to, &to_dir) || from_dir != DIR_LABELS || to_dir != DIR_LABELS)
		return 1;
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), from);
	if (node && node->serial == serial && node->link)
		target = strdup(node->link);
	overlay_unlock(psfs_overlay());
	if (!target)
		return node && node->serial == serial ? -ENOMEM : -ENOENT;
	if (!(dir = psfs_dirname(to, &name))) {
		free(target);
		return -ENOMEM;
	}
	if ((res = psfs_locate(dir, &p, &ref, &dirnode)))
		goto out_free;
	char rel[PATH_MAX];
	snprintf(rel, sizeof rel, "labels/%s", name);
	int exists = layout_resolve(ref.session, rel, &dst) == PS_OK;
	uint32_t entry = psfs_label_target(ref.session, &p, target);
	if (exists && (flags & RENAME_NOREPLACE)) {
		res = -EEXIST;
	} else if (entry == PS_NIL) {
		journal_log("refused renaming %s to %s: its target %s is no longer an entry of this session",
			    journal_path(from), journal_path(to), target);
		res = -EINVAL;
	} else if (exists && dst.entry == entry) {
		res = 0; /* the label is there already */
	} else if (ref.session->entries[entry].label != PS_NIL) {
		char *had = layout_label_name(ref.session, entry);
		journal_log("refused renaming %s to %s: the entry %s names already has the label %s, and an entry "
			    "has one label",
			    journal_path(from), journal_path(to), target, had ? had : "(another)");
		free(had);
		res = -EMLINK;
	} else if ((label = psfs_label_of(to, name, &res))) {
		res = commit_label(&ref, to, entry, label, exists ? dst.entry : PS_NIL);
	}
	store_release(psfs_self()->store, &ref);
	if (!res) {
		overlay_lock(psfs_overlay());
		node = overlay_get(psfs_overlay(), from);
		if (node && node->serial == serial)
			overlay_remove(psfs_overlay(), node);
		overlay_unlock(psfs_overlay());
	}
out_free:
	free(label);
	free(dir);
	free(target);
	return res;
}

/* A side file renamed over an entry file, `name` or `loadout.json` (sed -i, perl -i, gio,
 * rsync, JetBrains, Python's mkstemp + os.replace): an edit of it, with
 * the text of its draft d (locked by the caller, before the session).  A
 * rename that reports failure has appended nothing. */
static int psfs_rename_over(const char *from, uint64_t serial, const char *to, struct store_ref *ref,
			    const struct layout_node *dst, struct draft *d)
{
	const char *text = d->data ? d->data : "";
	int meta = dst->kind == LAYOUT_NAME || dst->kind == LAYOUT_LOADOUT;
	int res = meta ? commit_meta(ref, dst->kind, to, text, d->len)
		       : commit_edit(ref, ref->session->generation, dst->entry, to, text, d->len, NULL);
	if (res == 0) {
		draft_committed(d, d->project, d->session, NULL);
		overlay_lock(psfs_overlay());
		struct overlay_node *node;
		if ((node = overlay_get(psfs_overlay(), from)) && node->serial == serial)
			overlay_remove(psfs_overlay(), node);
		if ((node = overlay_get(psfs_overlay(), to)) && node->kind == OVERLAY_HIDDEN)
			overlay_remove(psfs_overlay(), node);
		overlay_unlock(psfs_overlay());
	}
	return res;
}

/* An in-memory file renamed to a name that is not an entry: a new NAME.md
 * or NAME.json is appended at the rename, exactly like one written there
 * (rsync, `mv .tmp new.md`, os.replace(tmp, "new.md")); any other name is a
 * side file moved (or refused, as at create). */
static int psfs_rename_new(const char *from, uint64_t serial, const char *to, unsigned int flags)
{
	const char *name = strrchr(to, '/') + 1;
	enum psfs_dir kind;
	int res;

	overlay_lock(psfs_overlay());
	struct overlay_node *there = overlay_get(psfs_overlay(), to);
	int taken = there && (there->kind == OVERLAY_FILE || there->kind == OVERLAY_SYMLINK);
	int known = there != NULL;
	overlay_unlock(psfs_overlay());
	if (taken && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	if (commit_is_entry_name(name) && psfs_parent_kind(to, &kind) == 0 && kind != DIR_LABELS) {
		int appended = 0;
		overlay_lock(psfs_overlay());
		struct overlay_node *file = overlay_get(psfs_overlay(), from);
		struct draft *d = file && file->serial == serial ? overlay_draft(file) : NULL;
		overlay_unlock(psfs_overlay());
		if (!d)
			return -ENOENT;
		draft_lock(d);
		res = psfs_commit_file(from, to, serial, d, &appended);
		draft_unlock(d);
		draft_put(d);
		if (res || appended)
			return res;
	} else if (!known && !psfs_is_side_name(name)) {
		journal_log("refused renaming %s to %s: a session holds entries (NAME.md, NAME.json) and "
			    "editors' side files; any other file would be lost at unmount", journal_path(from),
			    journal_path(to));
		return -EPERM;
	}
	/* Not appended (not an entry name, or nothing in it): moved.  A
	 * temporary moved into place is a file like any other there. */
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), from);
	res = node && node->serial == serial ? overlay_rename(psfs_overlay(), node, to) : 0;
	if (node && node->serial == serial && !res && commit_is_entry_name(name))
		node->temporary = 0;
	overlay_unlock(psfs_overlay());
	return res;
}

/* An entry file (or `name`) renamed to a name that is not an entry: put
 * aside (f~, f.orig, f___jb_old___, any name).  The entry stays in
 * history; the new name holds a copy and the entry's path looks absent
 * until a file is written or renamed there (an edit) or the copy is
 * renamed back or removed. */
static int psfs_rename_aside(const char *from, const char *to, struct store_ref *ref, const struct layout_node *src)
{
	char *content = NULL;
	size_t len = 0;
	enum psfs_dir kind;
	ps_err err = content_build(ref->session, src, &content, &len);
	store_release(psfs_self()->store, ref);
	if (err)
		return -psfs_errno(err);
	int res = psfs_parent_kind(to, &kind);
	if (res || kind == DIR_LABELS) {
		journal_log("refused renaming %s to %s: an entry is put aside only inside a tree directory",
			    journal_path(from), journal_path(to));
		free(content);
		return res && res != -EPERM ? res : -EPERM;
	}
	struct fuse_context *ctx = psfs_context();
	overlay_lock(psfs_overlay());
	struct overlay_node *copy = overlay_add(psfs_overlay(), to, OVERLAY_FILE, 0644);
	struct overlay_node *hidden = copy ? overlay_add(psfs_overlay(), from, OVERLAY_HIDDEN, 0) : NULL;
	res = copy && hidden && overlay_set_data(copy, content, len) == 0 ? 0 : -ENOMEM;
	if (!res) {
		copy->uid = hidden->uid = ctx->uid;
		copy->gid = hidden->gid = ctx->gid;
		copy->edit_of = strdup(from);
		hidden->edit_of = strdup(from);
		if (!copy->edit_of || !hidden->edit_of)
			res = -ENOMEM;
	}
	overlay_unlock(psfs_overlay());
	free(content);
	return res;
}

/* Moves the overlay's node at from (if it is still serial) to to. */
static int psfs_rename_in_overlay(const char *from, uint64_t serial, const char *to)
{
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), from);
	int res = node && node->serial == serial ? overlay_rename(psfs_overlay(), node, to) : -ENOENT;
	overlay_unlock(psfs_overlay());
	return res;
}

/* rename(2) of an in-memory file (serial) to to: over an entry, a name or
 * a loadout it is that one's save; else it is a new file there.
 * target_listed: to is an in-memory name. */
static int psfs_rename_overlay_file(const char *from, uint64_t serial, const char *to, int target_listed,
				    unsigned int flags)
{
	struct psfs_path pt;
	struct store_ref ref;
	struct layout_node dst;
	int res;
	/* Its draft is locked first (the lock order: a draft, then a
	 * session), so that a close committing it at once sees it committed
	 * by the rename, or the rename sees it committed. */
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), from);
	struct draft *d = node && node->serial == serial ? overlay_draft(node) : NULL;
	overlay_unlock(psfs_overlay());
	if (!d)
		return -ENOENT;
	draft_lock(d);
	if (!target_listed && psfs_locate(to, &pt, &ref, &dst) == 0) {
		if (dst.kind == LAYOUT_ENTRY || dst.kind == LAYOUT_NAME || dst.kind == LAYOUT_LOADOUT)
			res = psfs_rename_over(from, serial, to, &ref, &dst, d);
		else {
			journal_log("refused renaming %s over %s: it is generated from the session", journal_path(from),
				    journal_path(to));
			res = -EPERM;
		}
		store_release(psfs_self()->store, &ref);
		draft_unlock(d);
		draft_put(d);
		return res;
	}
	draft_unlock(d);
	draft_put(d);
	return psfs_rename_new(from, serial, to, flags);
}

int psfs_rename(const char *from, const char *to, unsigned int flags)
{
	struct psfs_path pf, pt;
	struct store_ref ref;
	struct layout_node src, dst;
	int res;

	if (flags & RENAME_EXCHANGE)
		return -EINVAL;
	if ((res = psfs_split(from, &pf)) || (res = psfs_split(to, &pt)))
		return res;
	if (pf.depth < 3 || pt.depth < 3 || strcmp(pf.project, pt.project) || strcmp(pf.session, pt.session)) {
		journal_log("refused renaming %s to %s: sessions and projects are the store's files",
			    journal_path(from), journal_path(to));
		return -EPERM;
	}

	/* What each end is, read under the lock; nodes are looked up again
	 * (by serial) wherever they are used after it. */
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), from), *target = overlay_get(psfs_overlay(), to);
	int from_kind = node ? (int)node->kind : -1;
	uint64_t serial = node ? node->serial : 0;
	int target_listed = target && (target->kind == OVERLAY_FILE || target->kind == OVERLAY_SYMLINK ||
				       target->kind == OVERLAY_BRANCH);
	overlay_unlock(psfs_overlay());

	switch (from_kind) {
	case -1:
		break;
	case OVERLAY_HIDDEN:
	case OVERLAY_ALIAS:
		return -ENOENT;
	case OVERLAY_BRANCH:
		return -EPERM;
	case OVERLAY_SAVED:
		/* It was appended when it was closed: over an entry it would
		 * be a second message; elsewhere only its name moves (vim
		 * backing up a file it wrote before). */
		if (!target_listed && psfs_locate(to, &pt, &ref, &dst) == 0) {
			store_release(psfs_self()->store, &ref);
			journal_log("refused renaming %s over %s: it was appended as a new entry when it was closed",
				    journal_path(from), journal_path(to));
			return -EPERM;
		}
		return psfs_rename_in_overlay(from, serial, to);
	case OVERLAY_SYMLINK:
		if ((res = psfs_rename_label_link(from, serial, to, flags)) <= 0)
			return res;
		return psfs_rename_in_overlay(from, serial, to);
	default: /* OVERLAY_FILE */
		return psfs_rename_overlay_file(from, serial, to, target_listed, flags);
	}

	if ((res = psfs_locate(from, &pf, &ref, &src)))
		return res;
	if (psfs_is_fuse_hidden(to) && !layout_is_dir(src.kind)) {
		/* libfuse hides an open file that is being replaced or removed:
		 * the file stays what it is (history is append-only); only
		 * libfuse's node of the open descriptor takes the new name. */
		store_release(psfs_self()->store, &ref);
		overlay_lock(psfs_overlay());
		struct overlay_node *alias = overlay_add(psfs_overlay(), to, OVERLAY_ALIAS, 0);
		res = alias && (alias->edit_of = strdup(from)) ? 0 : -ENOMEM;
		overlay_unlock(psfs_overlay());
		journal_log("kept %s: it is open, and libfuse hides it as %s until it is closed", journal_path(from),
			    journal_path(to));
		return res;
	}
	if (src.kind == LAYOUT_LABEL) {
		store_release(psfs_self()->store, &ref);
		return psfs_rename_label(from, to, flags);
	}
	if (src.kind == LAYOUT_ENTRY || src.kind == LAYOUT_NAME || src.kind == LAYOUT_LOADOUT) {
		/* Onto another entry would rewrite history; onto any other
		 * name, the entry is put aside (vim's f~, sed -i.orig,
		 * JetBrains' f___jb_old___). */
		if (!target_listed && layout_resolve(ref.session, pt.rest, &dst) == PS_OK) {
			store_release(psfs_self()->store, &ref);
			journal_log("refused renaming %s to %s: history is append-only", journal_path(from),
				    journal_path(to));
			return -EPERM;
		}
		if (target_listed && (flags & RENAME_NOREPLACE)) {
			store_release(psfs_self()->store, &ref);
			return -EEXIST;
		}
		return psfs_rename_aside(from, to, &ref, &src);
	}
	store_release(psfs_self()->store, &ref);
	journal_log("refused renaming %s to %s: history is append-only", journal_path(from), journal_path(to));
	return -EPERM;
}
