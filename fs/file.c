/* File handles once open (fileopen.c opens them): read and write, and
 * the commit of what was written at its commit points (docs/layout.md,
 * "When a write is committed"): the opener's close and the last release
 * (an fsync makes the text durable without appending it: draftrecord.h).
 * A reader reads the snapshot taken at open (or at its first read, for
 * immutable files), or the raw session file; a writer fills a draft
 * (draft.h: its own, or an in-memory file's) that becomes entries through
 * commit.c.  Shared internals: ops_internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "caller.h"
#include "commit.h"
#include "commitfile.h"
#include "draftrecord.h"
#include "journal.h"
#include "lockorder.h"
#include "ops_internal.h"
#include "watch.h"
#include "content.h"

/* A transcript only grows while the session grows along its path (each
 * one is a prefix of the next): a reader at the end of its snapshot, such
 * as `tail -f`, gets what was added since.  When the path changed (the
 * leaf moved to another branch) the old snapshot stays as it was. */
static void psfs_grow_snapshot(struct psfs_file *f)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	char *data = NULL;
	size_t len = 0;
	uint64_t changes, generation, had_changes, had_generation;
	/* A reader's lock comes before a session's (psfs_read_build): the
	 * snapshot's age is read first. */
	lockorder_lock(&f->lock, LOCK_READER);
	had_changes = f->changes;
	had_generation = f->generation;
	lockorder_unlock(&f->lock, LOCK_READER);
	if (psfs_locate(f->path, &p, &ref, &node))
		return;
	changes = ref.session->changes;
	generation = ref.session->generation;
	int same = had_changes == changes && had_generation == generation;
	/* A reader at the end (every read to EOF ends there) must not cost
	 * a whole new transcript when nothing was added. */
	ps_err err = same ? PS_ERR_NOENT : content_build(ref.session, &node, &data, &len);
	store_release(psfs_self()->store, &ref);
	if (err)
		return;
	lockorder_lock(&f->lock, LOCK_READER);
	f->changes = changes;
	f->generation = generation;
	if (len > f->len && memcmp(data, f->data, f->len) == 0) {
		free(f->data);
		f->data = data;
		f->len = len;
		data = NULL;
	}
	lockorder_unlock(&f->lock, LOCK_READER);
	free(data);
}

/* Builds a lazy handle's text (psfs_store_open): what the path shows now. */
static int psfs_read_build(struct psfs_file *f)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	int res = 0;

	lockorder_lock(&f->lock, LOCK_READER);
	if (f->lazy) {
		res = psfs_locate(f->path, &p, &ref, &node);
		if (!res) {
			ps_err err = content_build(ref.session, &node, &f->data, &f->len);
			store_release(psfs_self()->store, &ref);
			res = err ? -psfs_errno(err) : 0;
		}
		if (!res)
			f->lazy = 0;
	}
	lockorder_unlock(&f->lock, LOCK_READER);
	return res;
}

int psfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	int res = 0;
	(void)path;
	if (off < 0)
		return -EINVAL;
	if (f->draft) {
		/* A file being written reads as its draft: what was written. */
		draft_lock(f->draft);
		res = (int)draft_read(f->draft, buf, size, (size_t)off);
		draft_unlock(f->draft);
		return res;
	}
	if (f->kind == HANDLE_READ && (res = psfs_read_build(f)))
		return res;
	if (f->growing && (size_t)off >= f->len)
		psfs_grow_snapshot(f);
	if (f->fd >= 0) {
		ssize_t got = pread(f->fd, buf, size, off);
		return got < 0 ? -errno : (int)got;
	}
	lockorder_lock(&f->lock, LOCK_READER);
	if ((size_t)off < f->len) {
		if (size > f->len - (size_t)off)
			size = f->len - (size_t)off;
		memcpy(buf, f->data + off, size);
		res = (int)size;
	}
	lockorder_unlock(&f->lock, LOCK_READER);
	return res;
}

/* The first write into an entry file opened with O_TRUNC decides whether
 * it is the entry's text alone (commit_check_text): an entry that cannot
 * take that is refused here, so that `echo text > ENTRY.md` fails in the
 * shell.  A refused draft writes nothing more and commits nothing.  The
 * draft is locked. */
static int psfs_edit_check_text(struct psfs_file *f, struct draft *d, const char *buf, size_t size, off_t off)
{
	struct store_ref ref;
	int res;

	if (d->refused)
		return -EINVAL;
	/* Opened with O_TRUNC, as the shell, tee, Python's "w" and nano do;
	 * not vim's ftruncate, whose write error would read "file system
	 * full?": its refusal stays at close(). */
	if (d->target != DRAFT_EDIT || off != 0 || size == 0 || d->len != 0 || !d->truncated)
		return 0;
	if (store_acquire(psfs_self()->store, d->project, d->session, &ref))
		return 0; /* the commit says why */
	res = ref.session->serial == d->serial
		      ? commit_check_text(&ref, d->generation, d->entry, f->path, buf, size)
		      : 0;
	store_release(psfs_self()->store, &ref);
	if (res)
		draft_refuse(d);
	return res;
}

int psfs_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	struct draft *d = f->draft;
	int res = 0;
	(void)path;
	if (off < 0)
		return -EINVAL;
	if (!d || !f->writable)
		return -EBADF;
	draft_lock(d);
	if (d->target == DRAFT_RAW) {
		/* Only appends: bytes at the end of the file as it was opened
		 * (and of what this draft appended since). */
		if (f->append) {
			off = (off_t)d->len;
		} else if ((uint64_t)off < d->raw_base) {
			journal_log("refused writing inside %s at offset %lld: history is append-only",
				    journal_path(f->path),
				    (long long)off);
			res = -EPERM;
		} else {
			off = (off_t)((uint64_t)off - d->raw_base);
		}
	} else {
		if (f->append)
			off = (off_t)d->len;
		if (f->kind == HANDLE_EDIT || d->target == DRAFT_EDIT)
			res = psfs_edit_check_text(f, d, buf, size, off);
		else if (d->refused)
			res = -EINVAL;
	}
	if (!res)
		res = draft_write(d, buf, size, (size_t)off);
	draft_unlock(d);
	if (res > 0 && f->node) {
		overlay_lock(psfs_overlay());
		overlay_touch(f->node);
		overlay_unlock(psfs_overlay());
	}
	return res;
}

/* fsync() is not one: it makes the text durable (psfs_sync_draft). */
enum psfs_commit_point {
	AT_CLOSE,   /* a flush: a close() of one of the file's descriptors */
	AT_RELEASE, /* the last descriptor closed */
};

/* Commits a draft written over an entry, `name` or session.jsonl (locked):
 * 0 or -errno, nothing appended on error. */
static int psfs_commit_session(struct psfs_file *f, struct draft *d)
{
	struct psfs *fs = psfs_self();
	struct store_ref ref;
	char id[COMMIT_ID_MAX] = "";
	const char *text = d->data ? d->data : "";
	int res = 0;

	ps_err err = store_acquire(fs->store, d->project, d->session, &ref);
	if (err) {
		journal_reject(f->path, text, d->len, err == PS_ERR_NOMEM ? "out of memory" : "the session is gone");
		res = -psfs_errno(err);
		if (err == PS_ERR_NOMEM)
			return res; /* the next commit point tries again */
		/* Kept once: the closes and the release that follow (a shell
		 * closes its dup of the descriptor, then the descriptor) have
		 * nothing new to keep. */
		if (d->target == DRAFT_RAW) {
			draft_discard(d);
		} else {
			draft_committed(d, d->project, d->session, NULL);
		}
		return res;
	}
	struct ps_session *s = ref.session;
	uint32_t entry;
	switch (d->target) {
	case DRAFT_EDIT:
		/* The entry's number is of the index the file was opened on;
		 * an index built anew starts its generations again. */
		if (s->serial != d->serial)
			res = commit_edit(&ref, (uint64_t)-1, PS_NIL, f->path, text, d->len, id);
		else
			res = commit_edit(&ref, d->generation, d->entry, f->path, text, d->len, id);
		break;
	case DRAFT_REVISE:
		entry = session_find(s, d->id, strlen(d->id));
		if (entry == PS_NIL) {
			journal_reject(f->path, text, d->len, "the entry this file appended earlier is gone");
			res = -EIO;
		} else {
			res = commit_edit(&ref, s->generation, entry, f->path, text, d->len, id);
		}
		break;
	case DRAFT_NAME:
		res = commit_name(&ref, f->path, text, d->len);
		break;
	case DRAFT_LOADOUT:
		res = commit_loadout(&ref, f->path, text, d->len);
		break;
	case DRAFT_RAW:
		res = commit_raw(&ref, f->path, text, d->len);
		break;
	default:
		break;
	}
	store_release(fs->store, &ref);
	if (d->target == DRAFT_RAW) {
		/* Appended: later writes go after it.  Refused lines are kept
		 * in rejected/ (short of memory too: commit_raw) and leave the
		 * draft, so later lines start afresh.  A full disk keeps them
		 * for the next commit point. */
		if (res == 0 || res == -EINVAL || res == -ENOMEM)
			draft_raw_done(d, res == 0);
		return res;
	}
	/* A full disk (nothing was written: a partial write is taken back),
	 * or no memory, may pass: the draft stays dirty and the next commit
	 * point tries again instead of reporting success for text never
	 * written.  Otherwise the text was appended or kept in rejected/. */
	if (res != -ENOSPC && res != -ENOMEM)
		draft_committed(d, d->project, d->session, res == 0 && id[0] ? id : NULL);
	return res;
}

/* Turns what a handle's draft holds into entries, if `at` is one of its
 * commit points.  Errors reach the caller's close(). */
static int psfs_commit(struct psfs_file *f, enum psfs_commit_point at)
{
	struct draft *d = f->draft;
	int res = 0, last = at != AT_CLOSE;

	if (!d || !f->writable)
		return 0;
	/* A child's close (a command of a shell group, what make runs) is
	 * not the end of the file: its opener may go on writing. */
	if (at == AT_CLOSE && psfs_caller_process() != f->opener)
		return 0;
	draft_lock(d);
	/* A release carries no credentials: what the commit logs and keeps
	 * belongs to whoever opened the file. */
	psfs_caller_act_for(f->uid, f->gid);
	/* loadout.json emptied is no loadout: refused as an emptied entry is. */
	int emptied_entry = d->target == DRAFT_EDIT || d->target == DRAFT_REVISE || d->target == DRAFT_LOADOUT;
	uint64_t serial = 0;
	int temporary = 0, named = 0;
	char *path = NULL;
	if (d->target == DRAFT_OVERLAY) {
		overlay_lock(psfs_overlay());
		serial = f->node->serial;
		temporary = f->node->kind == OVERLAY_FILE && f->node->temporary;
		emptied_entry = overlay_rewrites_entry(f->node);
		/* Committed where it is now: a rename may have moved it. */
		named = !f->node->unlinked && f->node->kind == OVERLAY_FILE;
		path = named ? strdup(f->node->path) : NULL;
		overlay_unlock(psfs_overlay());
	}
	if (d->refused) {
		/* Refused at its first write (psfs_edit_check_text), which said
		 * so and logged it; close() need not say it again (cat, Python
		 * would report it twice). */
		res = last ? -EINVAL : 0;
		goto out;
	}
	if (!d->dirty && d->truncated && !last && emptied_entry) {
		/* An entry emptied and not written (yet): refused if it stays
		 * so, which the last release records; this close already says. */
		res = -EINVAL;
		goto out;
	}
	if (!d->dirty && !(last && d->truncated))
		goto out;
	/* A commit that failed for want of room or memory was reported to
	 * the writer, who may save again: the release does not append it
	 * behind their back (the text is in rejected/). */
	if (at == AT_RELEASE && d->failed)
		goto out;
	if (d->target != DRAFT_OVERLAY) {
		res = psfs_commit_session(f, d);
		goto out;
	}
	/* mkstemp's file is about to be renamed into place (an edit, or a
	 * new message): that rename commits it.  Until then it is listed
	 * like any side file.  A file removed or replaced meanwhile has no
	 * name to be committed as. */
	if (temporary || !named)
		goto out;
	if (!path) {
		/* The text stays in the draft, where a later commit point
		 * tries again. */
		journal_log("could not append %s: out of memory (its text stays in the file)", journal_path(f->path));
		res = -ENOMEM;
		goto out;
	}
	int blank = commit_is_blank(d->data, d->len);
	res = psfs_commit_file(path, path, serial, d, NULL);
	if (res == -EINVAL && at == AT_RELEASE && emptied_entry && blank) {
		/* An entry moved aside and written back empty (emacs): refused
		 * by psfs_commit_file; at the last release the entry then shows
		 * again as it was (a refusal at an earlier close leaves the file
		 * to its writer: vim removes it and puts its backup back). */
		overlay_lock(psfs_overlay());
		struct overlay_node *file = overlay_get(psfs_overlay(), path);
		if (file && file->serial == serial)
			overlay_remove(psfs_overlay(), file);
		overlay_unlock(psfs_overlay());
	}
out:
	/* Appended, or refused and kept in rejected/: what an fsync() made
	 * durable is no longer needed. */
	draft_after_commit(d, res);
	psfs_caller_act_for_done();
	draft_unlock(d);
	free(path);
	return res;
}

int psfs_flush(const char *path, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	int res = psfs_commit(f, AT_CLOSE);
	/* The kernel sized the file by what was written; let it ask again. */
	if (f->kind != HANDLE_READ)
		psfs_watch_queue(path);
	return res;
}

/* An entry file's rewrite that holds nothing but whitespace (yet). */
static int psfs_edit_is_blank(struct psfs_file *f)
{
	struct draft *d = f->draft;
	int blank = 0, rewrite = 0;
	if (!d)
		return 0;
	if (f->node) {
		overlay_lock(psfs_overlay());
		rewrite = overlay_rewrites_entry(f->node);
		overlay_unlock(psfs_overlay());
	}
	draft_lock(d);
	if (d->target == DRAFT_EDIT || d->target == DRAFT_REVISE)
		blank = (d->dirty || d->truncated) && commit_is_blank(d->data, d->len);
	else if (d->target == DRAFT_OVERLAY && rewrite)
		blank = commit_is_blank(d->data, d->len);
	draft_unlock(d);
	return blank;
}

/* The store directory a draft's record goes in: its session's project
 * folder (for a new file, the one its path names now).  0, or -errno. */
static int psfs_draft_dir(struct psfs_file *f, struct draft *d, char *dir, size_t size, char *path, size_t path_size)
{
	const char *project = d->project;
	struct psfs_path p;
	snprintf(path, path_size, "%s", f->path);
	if (d->target == DRAFT_OVERLAY) {
		overlay_lock(psfs_overlay());
		if (!f->node->unlinked)
			snprintf(path, path_size, "%s", f->node->path);
		overlay_unlock(psfs_overlay());
		if (psfs_split(path, &p) != 0 || p.depth < 2)
			return -EIO;
		project = p.project;
	}
	const char *root = store_root(psfs_self()->store);
	int n = *project ? snprintf(dir, size, "%s/%s", root, project) : snprintf(dir, size, "%s", root);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* fsync(): the draft's text made durable beside its session, not
 * appended: the close appends it once, whole, and a daemon killed before
 * that close leaves it for the next start (draftrecord.h).  0 once it is
 * on the disk, or -errno (nothing is durable then). */
static int psfs_sync_draft(struct psfs_file *f)
{
	struct draft *d = f->draft;
	char dir[PATH_MAX], path[PATH_MAX];
	int res = 0;
	if (!d || !f->writable)
		return 0;
	draft_lock(d);
	if (d->refused) {
		/* Refused at its first write, which said so: nothing of it is
		 * durable. */
		res = -EINVAL;
	} else if (d->dirty && (res = psfs_draft_dir(f, d, dir, sizeof dir, path, sizeof path)) == 0) {
		ps_err err = draft_save_record(d, dir, path, f->uid, f->gid);
		if (err)
			journal_log("could not make %s durable (%s): fsync failed; its text stays in the file",
				    journal_path(path), ps_strerror(err));
		res = err ? -psfs_errno(err) : 0;
	}
	draft_unlock(d);
	return res;
}

int psfs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	(void)path;
	(void)datasync;
	/* An emptied entry is refused at close(), not here: editors take a
	 * failed fsync for a disk that lost the file (vim: "E667: Fsync
	 * failed", "WARNING: Original file may be lost or damaged"), which it
	 * is not.  Nothing is appended either way; the draft stays as it
	 * is, so the close refuses it (docs/layout.md, "Refusals"). */
	if (psfs_edit_is_blank(f))
		return 0;
	return psfs_sync_draft(f);
}

/* A new entry name closed for the last time without a byte in it
 * (`touch S/new.md`, `: > S/new.md`) appends nothing: it says so. */
static void psfs_release_empty(struct psfs_file *f)
{
	int empty = 0;
	char *path = NULL;
	if (!f->writable || !f->node)
		return;
	draft_lock(f->draft);
	empty = f->draft->target == DRAFT_OVERLAY && f->draft->len == 0 && !f->draft->committed;
	draft_unlock(f->draft);
	overlay_lock(psfs_overlay());
	if (empty && !f->node->unlinked && f->node->kind == OVERLAY_FILE && !f->node->temporary &&
	    !f->node->edit_of && commit_is_entry_name(strrchr(f->node->path, '/') + 1))
		path = strdup(f->node->path);
	overlay_unlock(psfs_overlay());
	if (path)
		journal_log("kept %s empty: nothing appended; it becomes an entry when text is written to it "
			    "(until then it lives in memory only)", journal_path(path));
	free(path);
}

/* A writer whose close was answered EIO because the store stopped
 * answering (guard.h): what it wrote is not appended later behind its
 * back, once the store answers again; it is kept in rejected/, with why. */
static void psfs_release_unanswered(struct psfs_file *f)
{
	struct draft *d = f->draft;
	if (!d || !f->writable)
		return;
	draft_lock(d);
	if (d->dirty && d->len)
		journal_reject(f->path, d->data, d->len,
			       "the store did not answer when it was written or closed; nothing was appended");
	draft_discard(d);
	draft_unlock(d);
}

int psfs_release(const char *path, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	(void)path;
	/* Errors here reach no one but the log (and the kept text). */
	if (atomic_load(&f->store_gave_up))
		psfs_release_unanswered(f);
	else
		psfs_commit(f, AT_RELEASE);
	psfs_release_empty(f);
	psfs_file_put(f);
	return 0;
}
