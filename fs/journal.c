/* The log and the rejected texts (journal.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "caller.h"
#include "draftrecord.h"
#include "journal.h"
#include "lockorder.h"
#include "overlay.h"
#include "pisessionfs.h"

/* The log keeps the latest 256 KiB; rejected texts the latest 64, and no
 * more bytes of them than the budget (a single write may be 256 MiB). */
#define JOURNAL_MAX_LOG (256u << 10)
#define JOURNAL_MAX_REJECTED 64
/* Ends a text kept cut to the budget, so that nobody takes it for whole. */
#define JOURNAL_CUT_NOTE "\n[pisessionfs: the text was cut here: %zu of its %zu bytes are kept]\n"

/* The log as kept: each line is "<uid>\t<line>\n", the uid of whom it
 * speaks to (the caller whose write or call it is about, else the
 * daemon's own user), since a line names a session path and says what
 * was refused: a caller reads only its own lines, root all of them. */
struct journal {
	pthread_mutex_t lock;
	char *text;
	size_t len;
	unsigned rejected;  /* the number of the latest rejected text */
	size_t budget;      /* of the rejected texts' bytes; fixed at journal_new */
	struct overlay *ov; /* where the rejected texts are kept: borrowed */
	const char *mountpoint; /* borrowed */
};

static const char *journal_path_in(const struct journal *j, const char *path)
{
	static __thread char shown[4][PATH_MAX];
	static __thread unsigned next;
	if (!j || !j->mountpoint || !path || path[0] != '/')
		return path;
	char *buf = shown[next++ % 4];
	/* The mount's root is the mountpoint itself, not "MOUNT/". */
	int n = snprintf(buf, PATH_MAX, "%s%s", j->mountpoint, strcmp(path, "/") ? path : "");
	return n > 0 && n < PATH_MAX ? buf : path;
}

struct journal *journal_new(size_t rejected_budget, struct overlay *ov, const char *mountpoint)
{
	struct journal *j = calloc(1, sizeof *j);
	if (!j)
		return NULL;
	pthread_mutex_init(&j->lock, NULL);
	j->ov = ov;
	j->mountpoint = mountpoint;
	/* Room for the note that ends a text cut to the budget. */
	j->budget = rejected_budget < JOURNAL_REJECTED_MIN_BUDGET ? JOURNAL_REJECTED_MIN_BUDGET : rejected_budget;
	return j;
}

void journal_free(struct journal *j)
{
	if (!j)
		return;
	pthread_mutex_destroy(&j->lock);
	free(j->text);
	free(j);
}

static void journal_vlog(struct journal *jr, const char *fmt, va_list ap)
{
	char line[2048], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	if (n < 0)
		return;
	fprintf(stderr, "pisessionfs: %s\n", line);
	if (!jr)
		return;
	struct psfs_caller who;
	psfs_caller_get(&who);
	char owner[24];
	snprintf(owner, sizeof owner, "%lu\t", (unsigned long)who.uid);
	lockorder_lock(&jr->lock, LOCK_JOURNAL);
	size_t add = strlen(owner) + strlen(stamp) + 1 + strlen(line) + 1;
	if (jr->len + add > JOURNAL_MAX_LOG) {
		/* Drop whole lines from the front. */
		size_t cut = jr->len + add - JOURNAL_MAX_LOG;
		char *nl = cut < jr->len ? memchr(jr->text + cut, '\n', jr->len - cut) : NULL;
		cut = nl ? (size_t)(nl - jr->text) + 1 : jr->len;
		memmove(jr->text, jr->text + cut, jr->len - cut);
		jr->len -= cut;
	}
	char *grown = realloc(jr->text, jr->len + add + 1);
	if (grown) {
		jr->text = grown;
		jr->len += (size_t)sprintf(jr->text + jr->len, "%s%s %s\n", owner, stamp, line);
	}
	lockorder_unlock(&jr->lock, LOCK_JOURNAL);
}

void journal_log_in(struct journal *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	journal_vlog(j, fmt, ap);
	va_end(ap);
}

/* The rejected texts kept now (overlay locked): how many, their bytes,
 * and the oldest (the lowest number; a name without one counts as 0). */
struct journal_kept {
	size_t count, bytes;
	unsigned long oldest;
	char oldest_path[sizeof JOURNAL_REJECTED + NAME_MAX + 1];
};

static void journal_count_kept(void *ctx, const char *name, const struct overlay_node *node)
{
	struct journal_kept *k = ctx;
	unsigned long n = strtoul(name, NULL, 10);
	if (!k->count || n < k->oldest) {
		k->oldest = n;
		snprintf(k->oldest_path, sizeof k->oldest_path, JOURNAL_REJECTED "/%s", name);
	}
	k->count++;
	k->bytes += node->draft ? draft_size(node->draft) : 0;
}

/* Drops the oldest kept texts until one more of `room` bytes fits
 * (overlay locked).  Counted afresh each time: the user may have removed
 * some.  A dropped text still open is freed at its last close. */
static void journal_make_room(const struct journal *j, size_t room)
{
	for (;;) {
		struct journal_kept k = { 0 };
		overlay_list(j->ov, JOURNAL_REJECTED, journal_count_kept, &k);
		if (!k.count || (k.count < JOURNAL_MAX_REJECTED && k.bytes <= j->budget - room))
			return;
		struct overlay_node *gone = overlay_get(j->ov, k.oldest_path);
		if (!gone)
			return;
		overlay_remove(j->ov, gone);
	}
}

/* Keeps data as rejected/N-NAME (NAME: path's last part) for the caller
 * (psfs_caller_get), cut to the budget, with backing (may be NULL) as its
 * node's backing file: 1 with its mount path in kept, *keep the bytes of
 * data kept; 0 when out of memory. */
static int journal_keep(struct journal *jr, const char *path, const char *data, size_t len, const char *backing,
			char *kept, size_t kept_size, size_t *keep)
{
	const char *base = strrchr(path, '/');
	char note[128];
	size_t note_len = 0;
	base = base ? base + 1 : path;
	*keep = len;
	lockorder_lock(&jr->lock, LOCK_JOURNAL);
	unsigned n = ++jr->rejected;
	lockorder_unlock(&jr->lock, LOCK_JOURNAL);
	snprintf(kept, kept_size, JOURNAL_REJECTED "/%u-%s", n, base);
	if (len > jr->budget) {
		/* The note's length depends on the numbers in it. */
		note_len = (size_t)snprintf(note, sizeof note, JOURNAL_CUT_NOTE, jr->budget, len);
		*keep = jr->budget - note_len;
		note_len = (size_t)snprintf(note, sizeof note, JOURNAL_CUT_NOTE, *keep, len);
	}
	struct psfs_caller who;
	psfs_caller_get(&who);
	overlay_lock(jr->ov);
	journal_make_room(jr, *keep + note_len);
	/* The writer's own, readable by the writer alone: a refused text may
	 * be a secret pasted into the wrong file. */
	struct overlay_node *node = overlay_add(jr->ov, kept, OVERLAY_FILE, 0400);
	if (node) {
		node->uid = who.uid;
		node->gid = who.gid;
	}
	/* The node is new: its draft is made whole here (the overlay lock
	 * is held, so no draft may be locked). */
	char *whole = node ? malloc(*keep + note_len + 1) : NULL;
	if (whole) {
		memcpy(whole, data, *keep);
		memcpy(whole + *keep, note, note_len);
	}
	int kept_ok = whole && overlay_set_data(node, whole, *keep + note_len) == 0 &&
		      (!backing || (node->backing = strdup(backing)));
	free(whole);
	if (node && !kept_ok)
		overlay_remove(jr->ov, node);
	overlay_unlock(jr->ov);
	return kept_ok;
}

void journal_reject_in(struct journal *jr, const char *path, const char *data, size_t len, const char *why)
{
	char kept[512];
	size_t keep;
	if (!journal_keep(jr, path, data, len, NULL, kept, sizeof kept, &keep))
		journal_log_in(jr, "refused %s: %s (and the text could not be kept: out of memory)",
			       journal_path_in(jr, path), why);
	else if (keep < len)
		journal_log_in(jr, "refused %s: %s (your text is kept in %s, cut to its first %zu of %zu bytes: the "
			       "rejected texts kept are at most %zu MiB)", journal_path_in(jr, path), why,
			       journal_path_in(jr, kept), keep, len, jr->budget >> 20);
	else
		journal_log_in(jr, "refused %s: %s (your text is kept in %s)", journal_path_in(jr, path), why,
			       journal_path_in(jr, kept));
}

void journal_recover_draft(struct journal *jr, const char *record)
{
	char *path, *time, *data, kept[512];
	uid_t uid;
	gid_t gid;
	size_t len, keep;
	ps_err err = draftrecord_read(record, &path, &uid, &gid, &time, &data, &len);
	if (err == PS_ERR_TOOBIG && unlink(record) == 0) {
		journal_log_in(jr, "removed %s, the record of a draft that a killed daemon had not finished writing (its "
			       "fsync() never returned; an earlier record of the draft holds what was fsynced before)", record);
		return;
	}
	if (err) {
		journal_log_in(jr, "left %s as it is: %s", record,
			       err == PS_ERR_INVALID ? "it is not the record of a draft" : ps_strerror(err));
		return;
	}
	/* The text and the line are the writer's, as they would have been. */
	psfs_caller_act_for(uid, gid);
	if (journal_keep(jr, path, data, len, record, kept, sizeof kept, &keep))
		journal_log_in(jr, "recovered %s: fsynced at %s, but the daemon was killed before the file was closed, so "
			       "nothing was appended; the text is kept in %s until you remove it there (the store "
			       "keeps it as %s until then)%s", journal_path_in(jr, path), time, journal_path_in(jr, kept),
			       record, keep < len ? ", cut to the budget of rejected texts there" : "");
	else
		journal_log_in(jr, "could not show %s, the text of %s fsynced at %s: out of memory (it stays in the store)",
			       record, journal_path_in(jr, path), time);
	psfs_caller_act_for_done();
	free(path);
	free(time);
	free(data);
}

/* The lines of the log who may read, without their owners, into out
 * (when not NULL, room for the whole log); their length.  Log locked. */
static size_t journal_lines_for(const struct journal *jr, const struct psfs_caller *who, char *out)
{
	size_t n = 0;
	for (size_t at = 0; at < jr->len;) {
		char *nl = memchr(jr->text + at, '\n', jr->len - at);
		size_t end = nl ? (size_t)(nl - jr->text) + 1 : jr->len;
		char *tab = memchr(jr->text + at, '\t', end - at);
		if (tab && psfs_caller_is(who, (uid_t)strtoul(jr->text + at, NULL, 10))) {
			size_t from = (size_t)(tab - jr->text) + 1;
			if (out)
				memcpy(out + n, jr->text + from, end - from);
			n += end - from;
		}
		at = end;
	}
	return n;
}

char *journal_snapshot(struct journal *jr, size_t *len)
{
	struct psfs_caller who;
	psfs_caller_get(&who);
	lockorder_lock(&jr->lock, LOCK_JOURNAL);
	char *copy = malloc(jr->len + 1);
	if (copy) {
		*len = journal_lines_for(jr, &who, copy);
		copy[*len] = '\0';
	}
	lockorder_unlock(&jr->lock, LOCK_JOURNAL);
	return copy;
}

size_t journal_size(struct journal *jr)
{
	struct psfs_caller who;
	psfs_caller_get(&who);
	lockorder_lock(&jr->lock, LOCK_JOURNAL);
	size_t n = journal_lines_for(jr, &who, NULL);
	lockorder_unlock(&jr->lock, LOCK_JOURNAL);
	return n;
}

int journal_owns(const char *path)
{
	return strcmp(path, JOURNAL_DIR) == 0 || strncmp(path, JOURNAL_DIR "/", sizeof JOURNAL_DIR) == 0;
}

int journal_getattr(struct journal *j, const char *path, const struct stat *like, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_uid = like->st_uid;
	st->st_gid = like->st_gid;
	st->st_atim = like->st_atim;
	st->st_mtim = like->st_mtim;
	st->st_ctim = like->st_ctim;
	if (strcmp(path, JOURNAL_LOG) == 0) {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)journal_size(j);
		return 0;
	}
	if (strcmp(path, JOURNAL_DIR) != 0 && strcmp(path, JOURNAL_REJECTED) != 0)
		return -ENOENT;
	st->st_mode = S_IFDIR | 0555;
	st->st_nlink = 2;
	return 0;
}

int journal_readdir(const char *path, void *buf, fuse_fill_dir_t filler)
{
	if (strcmp(path, JOURNAL_REJECTED) == 0)
		return 0;
	if (strcmp(path, JOURNAL_DIR) == 0) {
		filler(buf, "log", NULL, 0, 0);
		filler(buf, "rejected", NULL, 0, 0);
		return 0;
	}
	return strcmp(path, JOURNAL_LOG) == 0 ? -ENOTDIR : -ENOENT;
}

int journal_open_in(struct journal *j, const char *path, int flags, char **data, size_t *len)
{
	if (strcmp(path, JOURNAL_DIR) == 0 || strcmp(path, JOURNAL_REJECTED) == 0)
		return -EISDIR;
	if (strcmp(path, JOURNAL_LOG) != 0)
		return -ENOENT;
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	*data = journal_snapshot(j, len);
	return *data ? 0 : -ENOMEM;
}

/* --- for a FUSE handler: the journal of the mount it serves ---------------------- */

/* NULL outside a request (the watcher, start-up): psfs_context()
 * says no mount there. */
static struct journal *journal_of_request(void)
{
	struct fuse_context *ctx = psfs_context();
	struct psfs *fs = ctx && ctx->fuse ? ctx->private_data : NULL;
	return fs ? fs->journal : NULL;
}

const char *journal_path(const char *path)
{
	return journal_path_in(journal_of_request(), path);
}

void journal_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	journal_vlog(journal_of_request(), fmt, ap);
	va_end(ap);
}

void journal_reject(const char *path, const char *data, size_t len, const char *why)
{
	struct journal *j = journal_of_request();
	if (j)
		journal_reject_in(j, path, data, len, why);
	else
		journal_log_in(NULL, "refused %s: %s (and the text could not be kept: no mount)", path, why);
}

int journal_open(const char *path, int flags, char **data, size_t *len)
{
	struct journal *j = journal_of_request();
	return j ? journal_open_in(j, path, flags, data, len) : -ENOENT;
}
