#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include "append.h"
#include "appendcheck.h"
#include "sessionnew.h"
#include "buf.h"
#include "jstext.h"
#include "jsonout.h"
#include "recover.h"

/* What recovery did before the append, for the log line of the append. */
static void append_note_recovery(void *ctx, const struct recover_event *ev)
{
	struct append_error *err = ctx;
	size_t used = strlen(err->note);
	const char *sep = used ? "; " : "";
	switch (ev->what) {
	case RECOVER_TRUNCATED:
		snprintf(err->note + used, sizeof err->note - used,
			 "%sfirst took back the %" PRIu64 " bytes at offset %" PRIu64 " of an append whose writer died",
			 sep, ev->bytes, ev->offset);
		break;
	case RECOVER_LEFT:
	case RECOVER_UNFIXABLE:
		snprintf(err->note + used, sizeof err->note - used,
			 "%sleft the unfinished line of an append whose writer died: %s", sep, ev->why);
		break;
	case RECOVER_TEMP_REMOVED:
		snprintf(err->note + used, sizeof err->note - used,
			 "%sremoved %s, left by a migration whose writer died", sep, ev->path);
		break;
	case RECOVER_DRAFT:
		break; /* found at start-up only */
	}
}

void append_now_iso(char *out)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03dZ", (int)(ts.tv_nsec / 1000000) % 1000);
}

/* pi's generateId: the first 8 hex digits of a random UUID, retried on a
 * collision.  `taken` also holds the ids of the batch so far. */
static void append_new_id(const struct ps_session *s, json_t *const *batch, size_t n, char out[9])
{
	for (;;) {
		sessionnew_short_id(out);
		int clash = session_find(s, out, 8) != PS_NIL;
		for (size_t i = 0; i < n && !clash; i++) {
			const char *id = json_string_value(json_object_get(batch[i], "id"));
			clash = id && strcmp(id, out) == 0;
		}
		if (!clash)
			return;
	}
}

void append_fresh_id(const struct ps_session *s, char *out)
{
	append_new_id(s, NULL, 0, out);
}

/* Rewrites a version 1 or 2 file as version 3, as pi's SessionManager.open
 * does: every parsed line re-serialised (malformed lines dropped, as pi
 * drops them), through a temporary file, fsync and rename.  The ids are
 * the ones the mount showed, so no path changes. */
static ps_err append_migrate(struct ps_session *s, struct append_error *err)
{
	struct buf b = BUF_INIT;
	char *line = NULL, *tmp = NULL, *text = NULL;
	size_t len, tlen;
	json_t *v = NULL;
	int fd = -1;
	ps_err code;

	code = session_read_header(s, &line, &len);
	if (code)
		return append_error_set(err, code, "cannot read the session header");
	v = session_parse_line(line, len);
	free(line);
	line = NULL;
	if (!v || json_object_set_new(v, "version", json_integer(3)) || jsonout_compact(v, &text, &tlen) ||
	    buf_put(&b, text, tlen) || buf_putc(&b, '\n')) {
		code = append_error_set(err, PS_ERR_NOMEM, "out of memory migrating the session");
		goto out;
	}
	free(text);
	text = NULL;
	json_decref(v);
	v = NULL;
	for (uint32_t i = 0; i < s->n_entries; i++) {
		code = session_load_entry(s, i, &v);
		if (code == PS_ERR_INVALID)
			continue;
		if (code || jsonout_compact(v, &text, &tlen) || buf_put(&b, text, tlen) || buf_putc(&b, '\n')) {
			code = append_error_set(err, code ? code : PS_ERR_NOMEM, "cannot migrate entry %u", i);
			goto out;
		}
		free(text);
		text = NULL;
		json_decref(v);
		v = NULL;
	}
	if (asprintf(&tmp, "%s.pisessionfs-migrate-XXXXXX", s->path) < 0) {
		tmp = NULL;
		code = append_error_set(err, PS_ERR_NOMEM, "out of memory");
		goto out;
	}
	/* Temporary files of migrations killed half-way go first; ours is
	 * locked until it is renamed, so that recovery leaves it alone. */
	recover_migrations(s->path, append_note_recovery, err);
	fd = recover_create_locked(tmp);
	if (fd < 0) {
		int e = errno;
		code = append_error_set(err, e == ENOSPC || e == EDQUOT ? PS_ERR_NOSPACE
				   : e == EROFS || e == EACCES || e == EPERM ? PS_ERR_STORE_READONLY : PS_ERR_IO,
				   "cannot create a temporary file beside the session: %s", strerror(e));
		goto out;
	}
	struct stat st;
	if (fstat(s->fd, &st) == 0) {
		/* Keep the owner and mode the session file had. */
		if (fchmod(fd, st.st_mode & 07777) != 0 || fchown(fd, st.st_uid, st.st_gid) != 0) {
			/* Not fatal for root-less mounts of one's own files. */
		}
	}
	for (size_t off = 0; off < b.len;) {
		ssize_t w = write(fd, b.data + off, b.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : ENOSPC;
			code = append_error_set(err, e == ENOSPC || e == EDQUOT ? PS_ERR_NOSPACE : PS_ERR_IO,
					   "writing the migrated session failed: %s", strerror(e));
			goto out;
		}
		off += (size_t)w;
	}
	if (fsync(fd) != 0) {
		int e = errno;
		code = append_error_set(err, e == ENOSPC || e == EDQUOT ? PS_ERR_NOSPACE : PS_ERR_IO,
				   "syncing the migrated session failed: %s", strerror(e));
		goto out;
	}
	if (rename(tmp, s->path) != 0) {
		code = append_error_set(err, PS_ERR_IO, "replacing the session with its migrated form failed: %s", strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
	code = session_refresh(s, NULL);
	if (code)
		append_error_set(err, code, "re-reading the migrated session failed");
out:
	/* Unlinked before the lock goes with the descriptor. */
	if (tmp && fd >= 0)
		unlink(tmp);
	if (fd >= 0)
		close(fd);
	free(tmp);
	free(text);
	free(line);
	json_decref(v);
	buf_free(&b);
	return code;
}

/* A store seen through FUSE (sshfs, or any network file system in user
 * space) may be shared by other machines, and there an append is atomic
 * only as far as the file system keeps it in one piece (docs/shared-stores.md):
 *
 * - the kernel ends a buffered FUSE write at the first page boundary when
 *   that page is not cached, so even a short line that crosses a 4 KiB
 *   boundary of the file would reach sshfs as two writes; written with
 *   O_DIRECT it is one request;
 * - sshfs sends at most 32 KiB per SFTP write (the size every SFTP server
 *   accepts; sshfs's max_write), each appended on its own by the server,
 *   so a longer line could be split by another machine's append: refused;
 * - flock() on a FUSE file locks only this machine's mount, so a crash
 *   record of a live daemon on another machine looks dead here, and
 *   "taking back its unfinished line" would cut that daemon's append in
 *   flight: no records and no take-back here (a dead writer's partial
 *   line gets its newline, as on a store without records);
 * - sshfs keeps attributes up to 20 s (its cache) and the kernel 1 s:
 *   before the end of the file is read, an open (sshfs re-reads the
 *   attributes) and a statx with AT_STATX_FORCE_SYNC (the kernel asks
 *   sshfs) make the size the server's. */
#define APPEND_FUSE_MAGIC 0x65735546
#define APPEND_FUSE_MAX ((size_t)32768)

static int append_on_fuse(int fd)
{
	struct statfs sf;
	return fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == APPEND_FUSE_MAGIC;
}

/* What the next stat of the file says is the server's size, not a cache's. */
static int append_fresh_attrs(const char *path)
{
	struct statx stx;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	int fuse = append_on_fuse(fd);
	if (fuse)
		statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_SIZE | STATX_MTIME | STATX_INO, &stx);
	close(fd);
	return fuse;
}

/* The last byte of a file on FUSE as the server has it ('\n' for an empty
 * file or when it cannot be read): through a new descriptor (sshfs
 * re-reads the attributes at open), a forced statx (the kernel asks
 * sshfs) and an O_DIRECT read (not a page the kernel kept from when the
 * file was shorter). */
static char append_last_byte(const char *path)
{
	/* A FUSE file system that hands O_DIRECT on to a local file (a
	 * passthrough) refuses an unaligned read: then a plain one. */
	for (int direct = 1; direct >= 0; direct--) {
		struct statx stx;
		char last = '\n';
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (direct ? O_DIRECT : 0));
		if (fd < 0)
			continue;
		int sized = statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_SIZE, &stx) == 0;
		ssize_t r = sized && stx.stx_size > 0 ? pread(fd, &last, 1, (off_t)stx.stx_size - 1) : 1;
		close(fd);
		if (sized && r == 1)
			return last;
	}
	return '\n';
}

static ps_err append_write(struct ps_session *s, const struct buf *lines, int fuse, struct append_error *err)
{
	struct stat st;
	struct buf out = BUF_INIT;
	struct recover_intent *intent = NULL;
	char last = '\n';
	int keep_intent = 0;
	ps_err code = PS_OK;
	/* On FUSE, O_DIRECT: one request for the whole line (see above). */
	int fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | (fuse ? O_DIRECT : 0));
	int direct = fuse && fd >= 0;
	if (fd < 0 && fuse && errno == EINVAL)
		fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return append_error_set(err, errno == ENOENT ? PS_ERR_NOENT
				   : errno == EROFS || errno == EACCES || errno == EPERM ? PS_ERR_STORE_READONLY : PS_ERR_IO,
				   "cannot open the session file for appending: %s", strerror(errno));
	if (fstat(fd, &st) != 0) {
		code = append_error_set(err, PS_ERR_IO, "cannot stat the session file: %s", strerror(errno));
		goto out;
	}
	if (fuse)
		last = append_last_byte(s->path);
	else if (st.st_size > 0 && pread(s->fd, &last, 1, st.st_size - 1) != 1)
		last = '\n';
	/* A last line without its newline may be another writer's write in
	 * progress (a reader can see a write half done): give it a moment to
	 * end before deciding it is a crashed writer's partial line, or the
	 * newline added for it would leave a blank line after it. */
	for (int wait = 0; last != '\n' && wait < 20; wait++) {
		struct timespec pause = { 0, 10 * 1000 * 1000 };
		nanosleep(&pause, NULL);
		if (fuse)
			last = append_last_byte(s->path);
		else if (fstat(fd, &st) != 0 || (st.st_size > 0 && pread(s->fd, &last, 1, st.st_size - 1) != 1))
			last = '\n';
	}
	/* A crashed writer's partial line (one that no record of ours
	 * explains: recover_session ran first) gets its newline first, so
	 * neither that line nor ours is lost; it is all one write. */
	if ((last != '\n' && buf_putc(&out, '\n')) || buf_put(&out, lines->data, lines->len)) {
		code = append_error_set(err, PS_ERR_NOMEM, "out of memory");
		goto out;
	}
	/* A fatal signal can stop the write half-way: record where it starts
	 * and what it holds, so that recovery can take back what is left of
	 * it.  Where no record can be made (a read-only project directory, a
	 * full disk) the write goes on without one, as it always did. */
	if (fstat(fd, &st) != 0) {
		code = append_error_set(err, PS_ERR_IO, "cannot stat the session file: %s", strerror(errno));
		goto out;
	}
	if (!fuse && recover_intent_begin(s->path, &st, (uint64_t)st.st_size, out.data, out.len, &intent) == PS_ERR_NOMEM) {
		code = append_error_set(err, PS_ERR_NOMEM, "out of memory");
		goto out;
	}
	ssize_t w;
	do
		w = write(fd, out.data, out.len);
	while (w < 0 && errno == EINTR);
	/* A FUSE file system that hands O_DIRECT on to a local file (a
	 * passthrough) wants aligned buffers: nothing was written, so the
	 * same bytes go again through a plain descriptor. */
	if (w < 0 && errno == EINVAL && direct) {
		int plain = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
		if (plain >= 0) {
			close(fd);
			fd = plain;
			do
				w = write(fd, out.data, out.len);
			while (w < 0 && errno == EINTR);
		}
	}
	if (w != (ssize_t)out.len) {
		int e = w < 0 ? errno : ENOSPC;
		/* Take a partial line back if nobody appended after it; if it
		 * stays, the record stays too, for recovery to judge later. */
		struct stat now;
		keep_intent = w > 0;
		if (w > 0 && fstat(fd, &now) == 0 && now.st_size == st.st_size + w && ftruncate(fd, st.st_size) == 0)
			keep_intent = 0;
		code = append_error_set(err, e == ENOSPC || e == EDQUOT ? PS_ERR_NOSPACE : e == EROFS || e == EACCES || e == EPERM ? PS_ERR_STORE_READONLY : PS_ERR_IO,
				   "writing to the session file failed: %s", strerror(e));
		goto out;
	}
	/* The lines are in the file now: a failed fsync is reported, but it is
	 * not a full disk to retry on, or the retry would append them twice. */
	if (fsync(fd) != 0)
		code = append_error_set(err, PS_ERR_IO, "the entries were written but fsync failed: %s", strerror(errno));
out:
	recover_intent_end(intent, keep_intent);
	buf_free(&out);
	if (close(fd) != 0 && !code)
		code = append_error_set(err, PS_ERR_IO, "closing the session file failed: %s", strerror(errno));
	return code;
}

/* pi's entries start with type, id, parentId and timestamp; keep that
 * order so appended lines look like pi's own. */
static ps_err append_serialize(const json_t *e, char **text, size_t *len)
{
	static const char *const first[] = { "type", "id", "parentId", "timestamp" };
	json_t *ordered = json_object();
	const char *key;
	json_t *value;
	ps_err err = PS_ERR_NOMEM;
	if (!ordered)
		return err;
	for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
		if ((value = json_object_get(e, first[i])) && json_object_set(ordered, first[i], value))
			goto out;
	json_object_foreach((json_t *)e, key, value)
		if (!json_object_get(ordered, key) && json_object_set(ordered, key, value))
			goto out;
	err = jsonout_compact(ordered, text, len);
out:
	json_decref(ordered);
	return err;
}

/* Fills in what item i of batch leaves out, as pi would: a new id, the
 * parentId its parent rule names, the time now.  PS_OK, or the error
 * (told in err). */
static ps_err append_fill(struct ps_session *s, json_t **batch, size_t i, const struct append_item *item,
			  struct append_error *err)
{
	json_t *e = batch[i];
	char id[9], now[32];
	if (!json_object_get(e, "id")) {
		append_new_id(s, batch, i, id);
		if (json_object_set_new(e, "id", json_string(id)))
			return append_error_set(err, PS_ERR_NOMEM, "out of memory");
	}
	if (!json_object_get(e, "parentId") || item->parent != APPEND_PARENT_GIVEN) {
		json_t *pid;
		uint32_t p = PS_NIL;
		switch (item->parent) {
		case APPEND_PARENT_GIVEN:
			return append_error_set(err, PS_ERR_INVALID, "the entry has no \"parentId\"");
		case APPEND_PARENT_BRANCH:
			p = item->ref < s->n_branches ? s->branches[item->ref].tip : PS_NIL;
			break;
		case APPEND_PARENT_SIBLING:
			p = item->ref < s->n_entries ? s->entries[item->ref].parent : PS_NIL;
			break;
		case APPEND_PARENT_UNDER:
			p = item->ref < s->n_entries ? item->ref : PS_NIL;
			break;
		case APPEND_PARENT_LEAF:
			p = session_leaf(s);
			break;
		}
		if (item->parent == APPEND_PARENT_LEAF && i > 0)
			pid = json_incref(json_object_get(batch[i - 1], "id"));
		else
			pid = p == PS_NIL ? json_null() : json_string(session_str(s, s->entries[p].id));
		if (json_object_set_new(e, "parentId", pid))
			return append_error_set(err, PS_ERR_NOMEM, "out of memory");
	}
	if (!json_object_get(e, "timestamp")) {
		append_now_iso(now);
		if (json_object_set_new(e, "timestamp", json_string(now)))
			return append_error_set(err, PS_ERR_NOMEM, "out of memory");
	}
	return PS_OK;
}

ps_err append_items(struct ps_session *s, uint64_t generation, struct append_item *items, size_t n,
		    struct append_error *err)
{
	struct buf lines = BUF_INIT;
	json_t **batch = NULL;
	char *text = NULL;
	size_t tlen;
	ps_err code;

	err->code = PS_OK;
	err->why[0] = '\0';
	err->note[0] = '\0';
	/* An unfinished line that a dead writer's record explains goes before
	 * the file is read: the new entries must not hang under it. */
	int fuse = append_fresh_attrs(s->path) == 1;
	code = fuse ? PS_OK : recover_session(s->path, append_note_recovery, err);
	if (code)
		return append_error_set(err, code, "out of memory");
	code = session_refresh(s, NULL);
	if (code)
		return append_error_set(err, code, "re-reading the session file failed: %s", ps_strerror(code));
	if (!s->have_header)
		return append_error_set(err, PS_ERR_NOTSESSION, "the file is not a pi session: %s", s->not_session);
	if (s->generation != generation)
		return append_error_set(err, PS_ERR_IO, "the session file was replaced meanwhile; nothing was written");
	batch = calloc(n ? n : 1, sizeof *batch);
	if (!batch)
		return append_error_set(err, PS_ERR_NOMEM, "out of memory");

	for (size_t i = 0; i < n; i++) {
		json_t *e = items[i].entry;
		batch[i] = e;
		if (!json_is_object(e)) {
			code = append_error_set(err, PS_ERR_INVALID, "an entry is a JSON object");
			goto out;
		}
		/* Raw lines are written as given: nothing may be filled in. */
		if (!items[i].raw && (code = append_fill(s, batch, i, &items[i], err)))
			goto out;
		/* Earlier items of the batch count as entries of the session. */
		struct append_known known = { s, batch, i, &items[i] };
		code = append_check(&known, e, err);
		if (code)
			goto out;
		if (items[i].raw) {
			/* Appended through session.jsonl: the caller's bytes, as given. */
			if (buf_put(&lines, items[i].raw, items[i].raw_len) || buf_putc(&lines, '\n'))
				goto nomem;
			continue;
		}
		if (append_serialize(e, &text, &tlen) || buf_put(&lines, text, tlen) || buf_putc(&lines, '\n'))
			goto nomem;
		free(text);
		text = NULL;
	}
	/* +1: a newline may go first, for a dead writer's partial line. */
	if (fuse && lines.len + 1 > APPEND_FUSE_MAX) {
		code = append_error_set(err, PS_ERR_TOOBIG,
				   "the store is on a FUSE file system (sshfs?), where %zu bytes would reach the server "
				   "as several writes (SFTP: at most 32 KiB each) that another machine's append could "
				   "come between; nothing was written (at most %zu bytes per append there)",
				   lines.len, APPEND_FUSE_MAX - 1);
		goto out;
	}
	/* A migration rewrites the file by rename: another machine's append
	 * between its read and its rename would be lost. */
	if (fuse && s->version < 3) {
		code = append_error_set(err, PS_ERR_PERM,
				   "the session is a version %d file on a FUSE file system (sshfs?), possibly shared: "
				   "bringing it to version 3 rewrites it, which could lose another machine's append; "
				   "nothing was written (open it once with pi where the store is local)", s->version);
		goto out;
	}
	if (s->version < 3) {
		code = append_migrate(s, err);
		if (code)
			goto out;
	}
	code = append_write(s, &lines, fuse, err);
	if (!code) {
		code = session_refresh(s, NULL);
		if (code)
			append_error_set(err, code, "the entry was written, but re-reading the session failed");
	}
	goto out;
nomem:
	code = append_error_set(err, PS_ERR_NOMEM, "out of memory");
out:
	free(text);
	free(batch);
	buf_free(&lines);
	return code;
}
