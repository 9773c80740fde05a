/* Opening a file handle (ops_internal.h): an in-memory file's, a text
 * made whole at open, or a store node's, for reading (a snapshot, or the
 * raw session as it grows) or for writing (a draft of an entry or a name,
 * or appends to the raw session).  What is done with the handle once open
 * is file.c's. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "caller.h"
#include "content.h"
#include "journal.h"
#include "ops_internal.h"
#include "sizer.h"
#include "subagents.h"
#include "watch.h"

struct psfs_file *psfs_file_new(enum psfs_handle kind, const char *path)
{
	struct psfs_file *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->kind = kind;
	f->fd = -1;
	struct psfs_caller who;
	psfs_caller_get(&who);
	f->uid = who.uid;
	f->gid = who.gid;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	atomic_init(&f->refs, 1);
	return f;
}

void psfs_file_hold(struct psfs_file *f)
{
	atomic_fetch_add(&f->refs, 1);
}

void psfs_file_put(struct psfs_file *f)
{
	if (atomic_fetch_sub(&f->refs, 1) == 1)
		psfs_file_free(f);
}

void psfs_file_free(struct psfs_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->node) {
		overlay_lock(psfs_overlay());
		overlay_put(f->node);
		overlay_unlock(psfs_overlay());
	}
	draft_put(f->draft);
	pthread_mutex_destroy(&f->lock);
	free(f->data);
	free(f->path);
	free(f);
}

int psfs_open_overlay(const char *path, struct fuse_file_info *fi, int *found, char **entry)
{
	struct psfs_file *f;
	int writing = (fi->flags & O_ACCMODE) != O_RDONLY;
	overlay_lock(psfs_overlay());
	struct overlay_node *node = overlay_get(psfs_overlay(), path);
	*found = node != NULL;
	*entry = NULL;
	if (!node) {
		overlay_unlock(psfs_overlay());
		return 0;
	}
	if (node->kind == OVERLAY_SAVED && writing) {
		/* The name of a file that became an entry, which the kernel
		 * still knows (it sends OPEN, not CREATE, and O_CREAT is not
		 * passed on): written again, it is a new file, as once the
		 * name is forgotten (`echo a > next.md; echo b > next.md`). */
		struct overlay_node *fresh = overlay_add(psfs_overlay(), path, OVERLAY_FILE, node->mode);
		if (!fresh) {
			overlay_unlock(psfs_overlay());
			return -ENOMEM;
		}
		struct fuse_context *ctx = psfs_context();
		fresh->uid = ctx->uid;
		fresh->gid = ctx->gid;
		node = fresh;
		psfs_watch_queue(path);
	} else if (node->kind == OVERLAY_ALIAS) {
		/* The kernel's name of an entry whose node libfuse hid for a
		 * rename that was then refused: it is that entry. */
		*entry = strdup(node->edit_of);
		overlay_unlock(psfs_overlay());
		return *entry ? 0 : -ENOMEM;
	} else if (node->kind != OVERLAY_FILE && node->kind != OVERLAY_SAVED) {
		overlay_unlock(psfs_overlay());
		return node->kind == OVERLAY_BRANCH ? -EISDIR : -ENOENT;
	}
	/* A rewrite of an entry moved aside (emacs): emptied like an entry
	 * opened with O_TRUNC (psfs_commit). */
	int rewrite = overlay_rewrites_entry(node);
	struct draft *d = overlay_draft(node);
	node->opens++;
	overlay_unlock(psfs_overlay());
	f = d ? psfs_file_new(HANDLE_OVERLAY, path) : NULL;
	if (!f) {
		draft_put(d);
		overlay_lock(psfs_overlay());
		overlay_put(node);
		overlay_unlock(psfs_overlay());
		return -ENOMEM;
	}
	f->node = node;
	f->draft = d;
	f->writable = writing;
	/* Whose close commits it: read from /proc, so only for writers. */
	if (writing)
		f->opener = psfs_caller_process();
	if ((fi->flags & O_TRUNC) && writing) {
		draft_lock(d);
		/* Emptied, not written: a new file's close waits for text; an
		 * entry's rewrite that stays empty is refused (psfs_commit). */
		draft_empty(d, rewrite);
		draft_unlock(d);
		overlay_lock(psfs_overlay());
		overlay_touch(node);
		overlay_unlock(psfs_overlay());
	}
	/* The kernel computes O_APPEND offsets from a size it may have
	 * cached of what the name held before: writes go to the end. */
	f->append = (fi->flags & O_APPEND) != 0;
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	return 0;
}

int psfs_open_text(const char *path, struct fuse_file_info *fi, char *text, size_t len)
{
	struct psfs_file *f = psfs_file_new(HANDLE_READ, path);
	if (!f) {
		free(text);
		return -ENOMEM;
	}
	f->data = text;
	f->len = len;
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	return 0;
}

/* A write handle on a store node: an entry or a name is edited as a
 * draft of its text, the raw session appended to; the rest is generated
 * and refused.  *out is new, or NULL on a refusal. */
static ps_err psfs_open_writer(const struct psfs_node *n, struct ps_session *s, const struct layout_node *node,
			       struct fuse_file_info *fi, struct psfs_file **out)
{
	const struct psfs_path *p = &n->p;
	enum psfs_handle kind;
	ps_err err = PS_OK;

	switch (node->kind) {
	case LAYOUT_ENTRY:
		kind = HANDLE_EDIT;
		break;
	case LAYOUT_NAME:
	case LAYOUT_LOADOUT:
		kind = HANDLE_NAME;
		break;
	case LAYOUT_RAW:
		if (fi->flags & O_TRUNC) {
			journal_log("refused truncating %s: history is append-only", journal_path(n->path));
			return PS_ERR_PERM;
		}
		kind = HANDLE_RAW;
		break;
	default:
		journal_log("refused writing %s: it is generated from the session", journal_path(n->path));
		return PS_ERR_PERM;
	}
	enum draft_target target = kind == HANDLE_EDIT ? DRAFT_EDIT
				 : kind != HANDLE_NAME ? DRAFT_RAW
				 : node->kind == LAYOUT_LOADOUT ? DRAFT_LOADOUT : DRAFT_NAME;
	struct psfs_file *f = psfs_file_new(kind, n->path);
	*out = f;
	if (!f || !(f->draft = draft_new(target)))
		return PS_ERR_NOMEM;
	struct draft *d = f->draft;
	f->writable = 1;
	f->opener = psfs_caller_process();
	draft_bind(d, p->project, p->session, node->entry, s->serial, s->generation, s->size);
	/* The kernel computes O_APPEND offsets from a size it may have
	 * cached before another writer appended: ignore them. */
	f->append = (fi->flags & O_APPEND) != 0;
	if (kind != HANDLE_RAW && !(fi->flags & O_TRUNC)) {
		char *text = NULL;
		size_t len = 0;
		if (!(err = content_build(s, node, &text, &len)))
			draft_adopt(d, text, len);
	}
	/* O_TRUNC of an entry is the start of a rewrite, not a change:
	 * `: > name` clears the name though nothing is written, which
	 * is decided at the last release, since a shell's redirection
	 * closes a duplicate of the file before anything is written. */
	if (kind != HANDLE_RAW && (fi->flags & O_TRUNC))
		draft_empty(d, 1);
	fi->direct_io = 1;
	return err;
}

/* A read handle on a store node: the raw session read as it grows, an
 * entry's text built at its first read, the rest built now into the
 * snapshot the reader keeps.  *out is new (NULL when out of memory). */
static ps_err psfs_open_reader(struct psfs *fs, const struct psfs_node *n, struct ps_session *s,
			       const struct layout_node *node, struct fuse_file_info *fi, struct psfs_file **out)
{
	const struct psfs_path *p = &n->p;
	ps_err err = PS_OK;
	struct psfs_file *f = psfs_file_new(HANDLE_READ, n->path);
	*out = f;
	if (!f)
		return PS_ERR_NOMEM;
	if (node->kind == LAYOUT_RAW) {
		f->fd = open(s->path, O_RDONLY | O_CLOEXEC);
		fi->direct_io = 1; /* grows under the reader: no stale size */
		return f->fd < 0 ? PS_ERR_IO : PS_OK;
	}
	/* The kernel keeps the pages of immutable files: a reader of a file
	 * it has cached never reads, so their text is built at the first
	 * read, not at every open (a second grep -r rendered every entry
	 * again). */
	int with_subagents = 0;
	if (content_immutable(node)) {
		f->lazy = 1;
	} else if (node->kind == LAYOUT_USAGE && node->session_root &&
		   (with_subagents = subagents_usage_json(fs, p, s, &f->data, &f->len))) {
		if (with_subagents < 0)
			err = with_subagents == -ENOMEM ? PS_ERR_NOMEM : PS_ERR_IO;
	} else {
		err = content_build(s, node, &f->data, &f->len);
	}
	if (node->kind == LAYOUT_ENTRY)
		psfs_sizer_reading();
	/* Entry files and stored lines never change: the kernel may keep
	 * their pages.  The rest (context.json, name...) bypasses the page
	 * cache, so a reader keeps the version it opened even when another
	 * reader opens a newer one.  Once the file was rewritten and indexed
	 * anew (generation past 1), the kernel's pages of a path may hold the
	 * text it had before, with a size and mtime that tell it nothing:
	 * drop them at each open. */
	fi->keep_cache = content_immutable(node) && s->generation == 1;
	fi->direct_io = !content_immutable(node);
	f->growing = node->kind == LAYOUT_TRANSCRIPT;
	f->changes = s->changes;
	f->generation = s->generation;
	memcpy(f->project, p->project, sizeof f->project);
	memcpy(f->session, p->session, sizeof f->session);
	return err;
}

int psfs_store_open(struct psfs *fs, const struct psfs_node *n, struct fuse_file_info *fi)
{
	struct store_ref ref;
	struct layout_node node;
	struct psfs_file *f = NULL;
	int res;
	ps_err err;

	if ((res = route_acquire(fs, &n->p, &ref, &node)))
		return res == -EINVAL ? -EISDIR : res;
	if (layout_is_dir(node.kind))
		err = PS_ERR_ISDIR;
	else if ((fi->flags & O_ACCMODE) != O_RDONLY)
		err = psfs_open_writer(n, ref.session, &node, fi, &f);
	else
		err = psfs_open_reader(fs, n, ref.session, &node, fi, &f);
	store_release(fs->store, &ref);
	if (err) {
		if (f)
			psfs_file_free(f);
		return -psfs_errno(err);
	}
	fi->fh = (uint64_t)(uintptr_t)f;
	return 0;
}

