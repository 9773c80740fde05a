/* File handles: open, read and write, and the commit of what was written
 * at flush (close), fsync and release.  A reader gets a snapshot taken at
 * open (or at its first read, for immutable files), or the raw session
 * file; a writer fills a buffer (or an in-memory overlay file) that
 * becomes entries through commit.c when it is committed.  Shared
 * internals: ops_internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "caller.h"
#include "commit.h"
#include "journal.h"
#include "ops_internal.h"
#include "sizer.h"
#include "watch.h"
#include "overview.h"
#include "content.h"
#include "views.h"

static struct psfs_file *psfs_file_new(enum psfs_handle kind, const char *path)
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
	return f;
}

static void psfs_file_free(struct psfs_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->node) {
		overlay_lock();
		overlay_put(f->node);
		overlay_unlock();
	}
	pthread_mutex_destroy(&f->lock);
	free(f->data);
	free(f->path);
	free(f);
}

/* A file written at the name of an entry an editor moved aside (f after
 * `mv f f~`): its content is the entry's new text.  The overlay lock is
 * held. */
int psfs_overlay_rewrites_entry(const struct overlay_node *node)
{
	return node->edit_of && !node->unlinked && strcmp(node->edit_of, node->path) == 0;
}

int psfs_open_overlay(const char *path, struct fuse_file_info *fi, int *found)
{
	struct psfs_file *f;
	overlay_lock();
	struct overlay_node *node = overlay_get(path);
	*found = node != NULL;
	if (!node) {
		overlay_unlock();
		return 0;
	}
	int writing = (fi->flags & O_ACCMODE) != O_RDONLY;
	if (node->kind == OVERLAY_SAVED && writing) {
		/* The name of a file that became an entry, which the kernel
		 * still knows (it sends OPEN, not CREATE, and O_CREAT is not
		 * passed on): written again, it is a new file, as once the
		 * name is forgotten (`echo a > next.md; echo b > next.md`). */
		struct overlay_node *fresh = overlay_add(path, OVERLAY_FILE, node->mode);
		if (!fresh) {
			overlay_unlock();
			return -ENOMEM;
		}
		struct fuse_context *ctx = fuse_get_context();
		fresh->uid = ctx->uid;
		fresh->gid = ctx->gid;
		node = fresh;
		psfs_watch_queue(path);
	} else if (node->kind != OVERLAY_FILE && node->kind != OVERLAY_SAVED) {
		overlay_unlock();
		return node->kind == OVERLAY_BRANCH ? -EISDIR : -ENOENT;
	}
	if ((fi->flags & O_TRUNC) && writing)
		overlay_truncate(node, 0);
	node->opens++;
	overlay_unlock();
	f = psfs_file_new(HANDLE_OVERLAY, path);
	if (!f) {
		overlay_lock();
		overlay_put(node);
		overlay_unlock();
		return -ENOMEM;
	}
	f->node = node;
	/* A rewrite of an entry moved aside (emacs): emptied like an entry
	 * opened with O_TRUNC (psfs_commit). */
	overlay_lock();
	if ((fi->flags & O_TRUNC) && (fi->flags & O_ACCMODE) != O_RDONLY && psfs_overlay_rewrites_entry(node))
		f->truncated = 1;
	overlay_unlock();
	/* The kernel computes O_APPEND offsets from a size it may have
	 * cached of what the name held before: writes go to the end. */
	f->append = (fi->flags & O_APPEND) != 0;
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	return 0;
}

/* A read handle on a text made at open by a gate (the journal's log,
 * usage.csv): the handle takes text, or frees it on failure. */
static int psfs_open_text(const char *path, struct fuse_file_info *fi, char *text, size_t len)
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

int psfs_open(const char *path, struct fuse_file_info *fi)
{
	struct psfs *fs = psfs_self();
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	struct psfs_file *f = NULL;
	int writing = (fi->flags & O_ACCMODE) != O_RDONLY;
	int found, res;
	ps_err err = PS_OK;

	res = psfs_open_overlay(path, fi, &found);
	if (found)
		return res;
	if (journal_owns(path)) {
		char *text = NULL;
		size_t len = 0;
		if ((res = journal_open(path, fi->flags, &text, &len)))
			return res;
		return psfs_open_text(path, fi, text, len);
	}
	if (!psfs_split(path, &p) && overview_owns(&p)) {
		char *text = NULL;
		size_t len = 0;
		if ((res = overview_open(fs, &p, fi->flags, &text, &len)))
			return res;
		return psfs_open_text(path, fi, text, len);
	}
	if ((res = psfs_locate(path, &p, &ref, &node)))
		return res == -EINVAL ? -EISDIR : res;
	struct ps_session *s = ref.session;
	if (layout_is_dir(node.kind)) {
		err = PS_ERR_ISDIR;
		goto out;
	}
	if (writing) {
		enum psfs_handle kind;
		switch (node.kind) {
		case LAYOUT_ENTRY:
			kind = HANDLE_EDIT;
			break;
		case LAYOUT_NAME:
			kind = HANDLE_NAME;
			break;
		case LAYOUT_RAW:
			if (fi->flags & O_TRUNC) {
				journal_log("refused truncating %s: history is append-only", path);
				err = PS_ERR_PERM;
				goto out;
			}
			kind = HANDLE_RAW;
			break;
		default:
			journal_log("refused writing %s: it is generated from the session", path);
			err = PS_ERR_PERM;
			goto out;
		}
		if (!(f = psfs_file_new(kind, path))) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		f->entry = node.entry;
		f->generation = s->generation;
		f->raw_base = s->size;
		/* The kernel computes O_APPEND offsets from a size it may have
		 * cached before another writer appended: ignore them. */
		f->append = (fi->flags & O_APPEND) != 0;
		memcpy(f->project, p.project, sizeof f->project);
		memcpy(f->session, p.session, sizeof f->session);
		if (kind != HANDLE_RAW && !(fi->flags & O_TRUNC))
			err = content_build(s, &node, &f->data, &f->len);
		/* `: > name` clears the name though nothing is written; that
		 * is decided at the last close, since a shell's redirection
		 * closes a duplicate of the file before anything is written. */
		if (kind != HANDLE_RAW && (fi->flags & O_TRUNC))
			f->truncated = 1;
		/* O_TRUNC of an entry is the start of a rewrite, not a change. */
		fi->direct_io = 1;
	} else {
		if (!(f = psfs_file_new(HANDLE_READ, path))) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		if (node.kind == LAYOUT_RAW) {
			f->fd = open(s->path, O_RDONLY | O_CLOEXEC);
			if (f->fd < 0)
				err = PS_ERR_IO;
			fi->direct_io = 1; /* grows under the reader: no stale size */
		} else {
			/* The kernel keeps the pages of immutable files: a reader
			 * of a file it has cached never reads, so their text is
			 * built at the first read, not at every open (a second
			 * grep -r rendered every entry again). */
			if (content_immutable(&node))
				f->lazy = 1;
			else
				err = content_build(s, &node, &f->data, &f->len);
			if (node.kind == LAYOUT_ENTRY)
				psfs_sizer_reading();
			/* Entry files and stored lines never change: the kernel
			 * may keep their pages.  The rest (context.json, name...)
			 * bypasses the page cache, so a reader keeps the version it
			 * opened even when another reader opens a newer one.
			 * Once the file was rewritten and indexed anew
			 * (generation past 1), the kernel's pages of a path may
			 * hold the text it had before, with a size and mtime
			 * that tell it nothing: drop them at each open. */
			fi->keep_cache = content_immutable(&node) && s->generation == 1;
			fi->direct_io = !content_immutable(&node);
			f->growing = node.kind == LAYOUT_TRANSCRIPT;
			f->changes = s->changes;
			f->generation = s->generation;
			memcpy(f->project, p.project, sizeof f->project);
			memcpy(f->session, p.session, sizeof f->session);
		}
	}
out:
	store_release(fs->store, &ref);
	if (err) {
		if (f)
			psfs_file_free(f);
		return -psfs_errno(err);
	}
	fi->fh = (uint64_t)(uintptr_t)f;
	return 0;
}

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
	uint64_t changes, generation;
	if (psfs_locate(f->path, &p, &ref, &node))
		return;
	changes = ref.session->changes;
	generation = ref.session->generation;
	pthread_mutex_lock(&f->lock);
	int same = f->changes == changes && f->generation == generation;
	pthread_mutex_unlock(&f->lock);
	/* A reader at the end (every read to EOF ends there) must not cost
	 * a whole new transcript when nothing was added. */
	ps_err err = same ? PS_ERR_NOENT : content_build(ref.session, &node, &data, &len);
	store_release(psfs_self()->store, &ref);
	if (err)
		return;
	pthread_mutex_lock(&f->lock);
	f->changes = changes;
	f->generation = generation;
	if (len > f->len && memcmp(data, f->data, f->len) == 0) {
		free(f->data);
		f->data = data;
		f->len = len;
		data = NULL;
	}
	pthread_mutex_unlock(&f->lock);
	free(data);
}

/* Builds a lazy handle's text (psfs_open): what the path shows now. */
static int psfs_read_build(struct psfs_file *f)
{
	struct psfs_path p;
	struct store_ref ref;
	struct layout_node node;
	int res = 0;

	pthread_mutex_lock(&f->lock);
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
	pthread_mutex_unlock(&f->lock);
	return res;
}

int psfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	const char *data;
	size_t len;
	int res = 0;
	(void)path;
	if (f->kind == HANDLE_READ && (res = psfs_read_build(f)))
		return res;
	if (f->growing && off >= 0 && (size_t)off >= f->len)
		psfs_grow_snapshot(f);
	if (f->fd >= 0) {
		ssize_t got = pread(f->fd, buf, size, off);
		return got < 0 ? -errno : (int)got;
	}
	if (f->kind == HANDLE_OVERLAY)
		overlay_lock();
	pthread_mutex_lock(&f->lock);
	data = f->kind == HANDLE_OVERLAY ? f->node->data : f->data;
	len = f->kind == HANDLE_OVERLAY ? f->node->len : f->len;
	if (off >= 0 && (size_t)off < len) {
		if (size > len - (size_t)off)
			size = len - (size_t)off;
		memcpy(buf, data + off, size);
		res = (int)size;
	}
	pthread_mutex_unlock(&f->lock);
	if (f->kind == HANDLE_OVERLAY)
		overlay_unlock();
	return res;
}

/* Buffers of writers are bounded like the overlay's files. */
#define PSFS_MAX_WRITE ((size_t)256 << 20)

int psfs_buffer_write(struct psfs_file *f, const char *buf, size_t size, size_t off)
{
	if (off + size > PSFS_MAX_WRITE)
		return -EFBIG;
	if (off + size > f->len) {
		char *grown = realloc(f->data, off + size + 1);
		if (!grown)
			return -ENOMEM;
		memset(grown + f->len, 0, off + size + 1 - f->len);
		f->data = grown;
		f->len = off + size;
	}
	memcpy(f->data + off, buf, size);
	f->dirty = 1;
	return (int)size;
}

/* The first write into an entry file opened with O_TRUNC decides whether
 * it is the entry's text alone (commit_check_text): an entry that cannot
 * take that is refused here, so that `echo text > ENTRY.md` fails in the
 * shell.  A refused handle writes nothing more and commits nothing.
 * f->lock is held. */
static int psfs_edit_check_text(struct psfs_file *f, const char *buf, size_t size, off_t off)
{
	struct store_ref ref;
	int res;

	if (f->refused)
		return -EINVAL;
	/* Opened with O_TRUNC, as the shell, tee, Python's "w" and nano do;
	 * not vim's ftruncate, whose write error would read "file system
	 * full?": its refusal stays at close(). */
	if (off != 0 || size == 0 || f->len != 0 || !f->truncated)
		return 0;
	if (store_acquire(psfs_self()->store, f->project, f->session, &ref))
		return 0; /* the commit says why */
	res = commit_check_text(&ref, f->generation, f->entry, f->path, buf, size);
	store_release(psfs_self()->store, &ref);
	if (res) {
		f->refused = 1;
		f->dirty = 0;
		f->truncated = 0;
	}
	return res;
}

int psfs_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	int res;
	(void)path;
	if (off < 0)
		return -EINVAL;
	switch (f->kind) {
	case HANDLE_OVERLAY:
		overlay_lock();
		res = overlay_write(f->node, buf, size, f->append ? (off_t)f->node->len : off);
		overlay_unlock();
		if (res > 0) {
			pthread_mutex_lock(&f->lock);
			f->dirty = 1;
			pthread_mutex_unlock(&f->lock);
		}
		return res;
	case HANDLE_EDIT:
	case HANDLE_NAME:
		pthread_mutex_lock(&f->lock);
		res = f->kind == HANDLE_EDIT ? psfs_edit_check_text(f, buf, size, off) : 0;
		if (!res)
			res = psfs_buffer_write(f, buf, size, (size_t)off);
		pthread_mutex_unlock(&f->lock);
		return res;
	case HANDLE_RAW:
		if (f->append) {
			pthread_mutex_lock(&f->lock);
			res = psfs_buffer_write(f, buf, size, f->len);
			pthread_mutex_unlock(&f->lock);
			return res;
		}
		/* Only appends: bytes at the end of the file as it was opened. */
		if ((uint64_t)off < f->raw_base) {
			journal_log("refused writing inside %s at offset %lld: history is append-only", f->path, (long long)off);
			return -EPERM;
		}
		pthread_mutex_lock(&f->lock);
		res = psfs_buffer_write(f, buf, size, (size_t)((uint64_t)off - f->raw_base));
		pthread_mutex_unlock(&f->lock);
		return res;
	default:
		return -EBADF;
	}
}

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

/* Commits the in-memory file at `at` as what the name `as` means there: the
 * entry it was written over (a file made where an editor put the entry
 * aside; only when at is as), or a new NAME.md / NAME.json in a tree
 * directory or a pending branch.  serial: the node expected at `at` (0: the
 * one there).  Once appended, the file is moved to `as` and stays as a SAVED
 * name for a while (overlay.h).  Returns 0 when appended (*appended set, if
 * given) or when the file is not one that becomes an entry, else -errno
 * (refused, nothing appended). */
int psfs_commit_file(const char *at, const char *as, uint64_t serial, int *appended)
{
	struct psfs *fs = psfs_self();
	struct store_ref ref;
	struct psfs_path p;
	struct layout_node node;
	const char *name;
	char *dir = psfs_dirname(as, &name);
	char *text = NULL, *fork_id = NULL, *label = NULL, *edit_of = NULL;
	size_t len = 0;
	int pending = 0, wanted = 0, committed = 0, nomem = 0, res = 0;

	if (!dir)
		return -ENOMEM;
	overlay_lock();
	struct overlay_node *file = overlay_get(at);
	struct overlay_node *parent = overlay_get(dir);
	if (file && file->kind == OVERLAY_FILE && (!serial || file->serial == serial)) {
		serial = file->serial;
		/* Without its copy, an edit would be taken for a new file (or
		 * for no entry at all: `name`), and the close would report
		 * success for text never appended. */
		if (strcmp(at, as) == 0 && file->edit_of && !(edit_of = strdup(file->edit_of)))
			nomem = 1;
		/* A blank file over an entry moved aside is wanted too: it is
		 * refused as an emptied entry, not kept as a side file. */
		wanted = (commit_is_entry_name(name) || edit_of) &&
			 (file->len > 0 || (edit_of && psfs_overlay_rewrites_entry(file)));
		if (wanted && (text = malloc(file->len + 1)) != NULL && file->len) {
			/* an emptied entry's data may be NULL */
			memcpy(text, file->data, file->len);
			len = file->len;
		}
		if (wanted && parent && parent->kind == OVERLAY_BRANCH) {
			pending = 1;
			fork_id = strdup(parent->fork_id);
			label = strdup(parent->label);
		}
	}
	overlay_unlock();
	if (journal_owns(as))
		goto out;
	if (nomem || (wanted && (!text || (pending && (!fork_id || !label))))) {
		/* Nothing appended; the text stays in the file, where a later
		 * close or rename commits it. */
		journal_log("could not append %s: out of memory (its text stays in the file)", as);
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
	/* Two descriptors of one file closed at once: the first appends it,
	 * the second (the session is locked now) finds it appended. */
	overlay_lock();
	file = overlay_get(at);
	int still = file && file->kind == OVERLAY_FILE && file->serial == serial;
	overlay_unlock();
	if (!still) {
		store_release(fs->store, &ref);
		goto out;
	}
	if (pending) {
		res = commit_branch(&ref, fork_id, label, as, text, len);
		committed = 1;
	} else if (edit_of && node.kind == LAYOUT_ENTRY) {
		res = commit_edit(&ref, ref.session->generation, node.entry, as, text, len);
		committed = 1;
	} else if (edit_of && node.kind == LAYOUT_NAME) {
		res = commit_name(&ref, as, text, len);
		committed = 1;
	} else if (node.kind == LAYOUT_TREE_DIR) {
		res = commit_new(&ref, ref.session->generation, node.branch, as, text, len);
		committed = 1;
	} /* else not a tree directory: stays a side file */
	if (res == 0 && committed) {
		/* It is an entry now: the file gives way to the entry's, and
		 * its name answers a while for the calls that follow a save
		 * (or, short of memory to move it, is gone). */
		if (appended)
			*appended = 1;
		overlay_lock();
		file = overlay_get(at);
		if (file && file->serial == serial) {
			if (edit_of || (strcmp(at, as) != 0 && overlay_rename(file, as) != 0))
				overlay_remove(file);
			else
				overlay_saved(file, psfs_saved_grace());
		}
		if (pending && (parent = overlay_get(dir)) && parent->kind == OVERLAY_BRANCH)
			overlay_remove(parent);
		overlay_unlock();
	}
	store_release(fs->store, &ref);
out:
	free(text);
	free(fork_id);
	free(label);
	free(edit_of);
	free(dir);
	return res;
}

/* Turns what a handle holds into entries; called on flush (close), fsync
 * and release.  Errors reach the caller's close() or fsync(). */
static int psfs_commit(struct psfs_file *f, int last)
{
	struct psfs *fs = psfs_self();
	struct store_ref ref;
	int res = 0;

	pthread_mutex_lock(&f->lock);
	/* A release carries no credentials: what the commit logs and keeps
	 * belongs to whoever opened the file. */
	psfs_caller_act_for(f->uid, f->gid);
	if (f->refused) {
		/* Refused at its first write (psfs_edit_check_text), which said
		 * so and logged it; close() need not say it again (cat, Python
		 * would report it twice).  fsync() says nothing is durable. */
		res = last ? -EINVAL : 0;
		goto out;
	}
	if (!f->dirty && f->truncated && !last && (f->kind == HANDLE_EDIT || f->kind == HANDLE_OVERLAY)) {
		/* An entry emptied and not written (yet): refused if it stays
		 * so, which the last close records; this close already says. */
		res = -EINVAL;
		goto out;
	}
	if (!f->dirty && !(last && f->truncated))
		goto out;
	f->dirty = 0;
	f->truncated = 0;
	if (f->kind == HANDLE_OVERLAY) {
		/* A file created in a tree or pending-branch directory. */
		overlay_lock();
		uint64_t serial = f->node->serial;
		int temporary = f->node->kind == OVERLAY_FILE && f->node->temporary;
		/* An entry moved aside and written back empty (emacs): refused
		 * by psfs_commit_file; at the last close the entry then shows
		 * again as it was (a refusal at an earlier close leaves the file
		 * to its writer: vim removes it and puts its backup back). */
		int emptied = last && psfs_overlay_rewrites_entry(f->node) &&
			      commit_is_blank(f->node->data, f->node->len);
		overlay_unlock();
		/* mkstemp's file is about to be renamed into place (an edit,
		 * or a new message): that rename commits it.  Until then it
		 * is listed like any side file. */
		if (temporary)
			goto out;
		res = psfs_commit_file(f->path, f->path, serial, NULL);
		if (res == -EINVAL && emptied) {
			overlay_lock();
			struct overlay_node *file = overlay_get(f->path);
			if (file && file->serial == serial)
				overlay_remove(file);
			overlay_unlock();
		}
		goto out;
	}
	ps_err err = store_acquire(fs->store, f->project, f->session, &ref);
	if (err) {
		journal_reject(f->path, f->data ? f->data : "", f->len,
			       err == PS_ERR_NOMEM ? "out of memory" : "the session is gone");
		res = -psfs_errno(err);
		goto out;
	}
	switch (f->kind) {
	case HANDLE_EDIT:
		res = commit_edit(&ref, f->generation, f->entry, f->path, f->data ? f->data : "", f->len);
		break;
	case HANDLE_NAME:
		res = commit_name(&ref, f->path, f->data ? f->data : "", f->len);
		break;
	case HANDLE_RAW:
		res = commit_raw(&ref, f->path, f->data ? f->data : "", f->len);
		if (res == 0) {
			/* Appended: later writes on this handle go after it. */
			f->raw_base += f->len;
			f->len = 0;
		} else if (res == -EINVAL || res == -ENOMEM) {
			/* Refused lines are kept in rejected/ (short of memory
			 * too: commit_raw); later lines on this descriptor start
			 * afresh. */
			f->len = 0;
		}
		break;
	default:
		break;
	}
	/* A full disk (nothing was written: a partial write is taken back) may
	 * pass: the next fsync or close tries again instead of reporting
	 * success for text never written.  Other failures are not retried, as
	 * the lines may already be in the file. */
	if (res == -ENOSPC)
		f->dirty = 1;
	store_release(fs->store, &ref);
out:
	psfs_caller_act_for_done();
	pthread_mutex_unlock(&f->lock);
	return res;
}

int psfs_flush(const char *path, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	int res = psfs_commit(f, 0);
	/* The kernel sized the file by what was written; let it ask again. */
	if (f->kind != HANDLE_READ)
		psfs_watch_queue(path);
	return res;
}

/* An entry file's rewrite that holds nothing but whitespace (yet). */
static int psfs_edit_is_blank(struct psfs_file *f)
{
	int blank = 0;
	if (f->kind == HANDLE_EDIT) {
		pthread_mutex_lock(&f->lock);
		blank = (f->dirty || f->truncated) && commit_is_blank(f->data, f->len);
		pthread_mutex_unlock(&f->lock);
	} else if (f->kind == HANDLE_OVERLAY) {
		overlay_lock();
		blank = psfs_overlay_rewrites_entry(f->node) && commit_is_blank(f->node->data, f->node->len);
		overlay_unlock();
	}
	return blank;
}

int psfs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	(void)path;
	(void)datasync;
	/* An emptied entry is refused at close(), not here: editors take a
	 * failed fsync for a disk that lost the file (vim: "E667: Fsync
	 * failed", "WARNING: Original file may be lost or damaged"), which it
	 * is not.  Nothing is appended either way; the handle stays as it
	 * is, so the close refuses it (docs/layout.md, "Refusals"). */
	if (psfs_edit_is_blank(f))
		return 0;
	/* fsync asks for durability now: an emptied name is committed too. */
	return psfs_commit(f, 1);
}

int psfs_release(const char *path, struct fuse_file_info *fi)
{
	struct psfs_file *f = (struct psfs_file *)(uintptr_t)fi->fh;
	(void)path;
	/* Errors here reach no one but the log (and the kept text). */
	psfs_commit(f, 1);
	psfs_file_free(f);
	return 0;
}
