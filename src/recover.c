#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "buf.h"
#include "fileio.h"
#include "recover.h"

/* statfs(2)'s f_type of a FUSE file system. */
#define RECOVER_FUSE_MAGIC 0x65735546

#define RECOVER_MAGIC "PSFSINT1"
#define RECOVER_VERSION 1
/* Hashed pieces end at the file's 4 KiB boundaries: a write cut short by
 * a fatal signal stops at a page (or larger folio) boundary, so on local
 * file systems every byte of what is taken back is compared. */
#define RECOVER_CHUNK 4096u
/* The first bytes are kept as they are: they hold the entry's unique id. */
#define RECOVER_HEAD 256u
/* Past this many newlines (a huge batch of raw lines) their places are not
 * recorded, and recovery takes nothing back that holds a newline. */
#define RECOVER_MAX_NEWLINES (1u << 20)
#define RECOVER_NO_LIST UINT64_MAX
/* Fixed part: magic, then 10 numbers; the checksum ends the record. */
#define RECOVER_FIXED (8 + 10 * 8)
#define RECOVER_MAX_RECORD ((uint64_t)256 << 20)
/* Later line starts tried when another writer appended between the record
 * and the write. */
#define RECOVER_MAX_CANDIDATES 64

struct recover_intent {
	int fd;
	char *path;
};

/* A record as read back; the arrays point into `raw`. */
struct recover_record {
	uint64_t dev, ino, start, length, n_hashes, n_newlines, head_len;
	int newlines_known;
	char name[NAME_MAX + 1];
	const unsigned char *head, *hashes, *newlines;
	unsigned char *raw;
};

enum recover_verdict {
	RECOVER_NOTHING, /* no unfinished part of the append ends the file */
	RECOVER_CUT,     /* the file ends in an exact prefix of it */
	RECOVER_FOREIGN, /* the file ends in an unterminated line that is not (only) ours */
};

static uint64_t recover_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Not cryptographic: it tells our bytes from other writers' bytes, and
 * a writer who could forge it could rewrite the file anyway.  Word at a
 * time (multiply by 2^64 divided by the golden ratio, an odd constant
 * with well spread bits, then rotate), so 32 MiB hash in milliseconds. */
static uint64_t recover_hash(const unsigned char *p, size_t n)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t h = (uint64_t)n * k, last = 0;
	for (; n >= 8; p += 8, n -= 8) {
		h = (h ^ recover_le64(p)) * k;
		h = h << 31 | h >> 33;
	}
	for (size_t i = 0; i < n; i++)
		last |= (uint64_t)p[i] << (8 * i);
	h = (h ^ last) * k;
	h ^= h >> 29;
	h *= k;
	h ^= h >> 32;
	return h;
}

static int recover_put64(struct buf *b, uint64_t v)
{
	unsigned char le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(v >> (8 * i));
	return buf_put(b, le, sizeof le);
}


static int recover_write(int fd, const char *src, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t w = write(fd, src + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return -1;
		}
		done += (size_t)w;
	}
	return 0;
}

static ps_err recover_errno(int e)
{
	switch (e) {
	case ENOMEM:
		return PS_ERR_NOMEM;
	case ENOSPC:
	case EDQUOT:
		return PS_ERR_NOSPACE;
	case EROFS:
	case EACCES:
	case EPERM:
		return PS_ERR_STORE_READONLY;
	default:
		return PS_ERR_IO;
	}
}

/* The pieces of a write of `len` bytes at `start`: one per 4 KiB block
 * of the file it touches. */
static uint64_t recover_pieces(uint64_t start, uint64_t len)
{
	return len ? (start + len + RECOVER_CHUNK - 1) / RECOVER_CHUNK - start / RECOVER_CHUNK : 0;
}

static int recover_record_build(const char *name, const struct stat *st, uint64_t start, const char *data,
				size_t len, struct buf *b)
{
	const unsigned char *d = (const unsigned char *)data;
	size_t name_len = strlen(name), head = len < RECOVER_HEAD ? len : RECOVER_HEAD;
	uint64_t n_nl = 0;
	for (const char *p = data; len && p && (p = memchr(p, '\n', len - (size_t)(p - data))); p++)
		n_nl++;
	int known = n_nl <= RECOVER_MAX_NEWLINES;
	if (buf_put(b, RECOVER_MAGIC, 8) || recover_put64(b, RECOVER_VERSION) || recover_put64(b, (uint64_t)st->st_dev) ||
	    recover_put64(b, (uint64_t)st->st_ino) || recover_put64(b, start) || recover_put64(b, len) ||
	    recover_put64(b, RECOVER_CHUNK) || recover_put64(b, recover_pieces(start, len)) ||
	    recover_put64(b, known ? n_nl : RECOVER_NO_LIST) || recover_put64(b, head) || recover_put64(b, name_len) ||
	    buf_put(b, name, name_len) || buf_put(b, d, head))
		return -1;
	for (uint64_t off = start; off < start + len;) {
		uint64_t next = (off / RECOVER_CHUNK + 1) * RECOVER_CHUNK;
		if (next > start + len)
			next = start + len;
		if (recover_put64(b, recover_hash(d + (off - start), (size_t)(next - off))))
			return -1;
		off = next;
	}
	for (const char *p = data; known && len && p && (p = memchr(p, '\n', len - (size_t)(p - data))); p++)
		if (recover_put64(b, (uint64_t)(p - data)))
			return -1;
	return recover_put64(b, recover_hash((const unsigned char *)b->data, b->len));
}

/* Takes `raw` (n bytes) on success. */
static int recover_record_parse(unsigned char *raw, size_t n, struct recover_record *r)
{
	const unsigned char *p = raw + 8;
	uint64_t v[10];
	if (n < RECOVER_FIXED + 8 || memcmp(raw, RECOVER_MAGIC, 8) != 0)
		return -1;
	for (int i = 0; i < 10; i++, p += 8)
		v[i] = recover_le64(p);
	if (v[0] != RECOVER_VERSION || v[5] != RECOVER_CHUNK || recover_le64(raw + n - 8) != recover_hash(raw, n - 8))
		return -1;
	r->dev = v[1];
	r->ino = v[2];
	r->start = v[3];
	r->length = v[4];
	r->n_hashes = v[6];
	r->newlines_known = v[7] != RECOVER_NO_LIST;
	r->n_newlines = r->newlines_known ? v[7] : 0;
	r->head_len = v[8];
	uint64_t name_len = v[9];
	/* Every count is checked against the record's size before it is
	 * multiplied, so nothing overflows. */
	if (name_len == 0 || name_len > NAME_MAX || r->length > RECOVER_MAX_RECORD * 64 ||
	    r->start > UINT64_MAX - r->length || r->n_hashes != recover_pieces(r->start, r->length) ||
	    r->head_len != (r->length < RECOVER_HEAD ? r->length : RECOVER_HEAD) || r->n_hashes > n / 8 ||
	    r->n_newlines > n / 8 ||
	    RECOVER_FIXED + name_len + r->head_len + 8 * (r->n_hashes + r->n_newlines) + 8 != n)
		return -1;
	memcpy(r->name, p, name_len);
	r->name[name_len] = '\0';
	size_t nl = (size_t)name_len;
	/* Only a session file beside the record, never a path. */
	if (strlen(r->name) != nl || strchr(r->name, '/') || nl <= 6 || strcmp(r->name + nl - 6, ".jsonl") != 0)
		return -1;
	p += name_len;
	r->head = p;
	p += r->head_len;
	r->hashes = p;
	p += 8 * r->n_hashes;
	r->newlines = p;
	for (uint64_t i = 1; i < r->n_newlines; i++)
		if (recover_le64(r->newlines + 8 * i) <= recover_le64(r->newlines + 8 * (i - 1)))
			return -1;
	r->raw = raw;
	return 0;
}

/* Whether the file's bytes from `at` to `size` are exactly the first
 * size - at bytes of the recorded write: the kept first bytes, newlines
 * at the same places and nowhere else, and, when the write began at the
 * recorded offset, the hash of every whole 4 KiB piece. */
static int recover_prefix_matches(const struct recover_record *r, int fd, uint64_t at, uint64_t size)
{
	unsigned char block[RECOVER_CHUNK];
	uint64_t nl = 0;
	for (uint64_t pos = at; pos < size;) {
		uint64_t next = (pos / RECOVER_CHUNK + 1) * RECOVER_CHUNK;
		if (next > size)
			next = size;
		size_t n = (size_t)(next - pos);
		uint64_t doff = pos - at;
		if (fileio_pread_full(fd, block, n, pos) != 0)
			return 0;
		if (doff < r->head_len) {
			size_t m = r->head_len - doff < n ? (size_t)(r->head_len - doff) : n;
			if (memcmp(block, r->head + doff, m) != 0)
				return 0;
		}
		for (const unsigned char *q = block; (q = memchr(q, '\n', n - (size_t)(q - block))); q++) {
			if (!r->newlines_known || nl >= r->n_newlines ||
			    recover_le64(r->newlines + 8 * nl) != doff + (uint64_t)(q - block))
				return 0;
			nl++;
		}
		if (nl < r->n_newlines && recover_le64(r->newlines + 8 * nl) < doff + n)
			return 0;
		if (at == r->start && next % RECOVER_CHUNK == 0) {
			uint64_t k = pos / RECOVER_CHUNK - r->start / RECOVER_CHUNK;
			if (recover_hash(block, n) != recover_le64(r->hashes + 8 * k))
				return 0;
		}
		pos = next;
	}
	return 1;
}

/* What the record says about the file as it is now (`size` bytes). */
static enum recover_verdict recover_judge(const struct recover_record *r, int fd, uint64_t size, uint64_t *cut)
{
	uint64_t cands[RECOVER_MAX_CANDIDATES];
	size_t n_cands = 0;
	unsigned char block[RECOVER_CHUNK], last;

	if (size <= r->start || fileio_pread_full(fd, &last, 1, size - 1) != 0)
		return RECOVER_NOTHING;
	/* Checked even when the file ends with a newline: a batch of lines
	 * cut after one of them is taken back whole. */
	if (size - r->start < r->length && recover_prefix_matches(r, fd, r->start, size)) {
		*cut = r->start;
		return RECOVER_CUT;
	}
	/* Lines another writer appended between the record and the write
	 * came first: the unfinished part then starts at one of the later
	 * line starts within a write's length of the end. */
	uint64_t low = size - r->start >= r->length ? size - r->length + 1 : r->start + 1;
	for (uint64_t pos = low - 1; pos < size - 1 && n_cands < RECOVER_MAX_CANDIDATES;) {
		size_t n = size - 1 - pos < sizeof block ? (size_t)(size - 1 - pos) : sizeof block;
		if (fileio_pread_full(fd, block, n, pos) != 0)
			break;
		for (const unsigned char *q = block; n_cands < RECOVER_MAX_CANDIDATES &&
		     (q = memchr(q, '\n', n - (size_t)(q - block))); q++)
			cands[n_cands++] = pos + (uint64_t)(q - block) + 1;
		pos += n;
	}
	for (size_t i = 0; i < n_cands; i++) {
		if (recover_prefix_matches(r, fd, cands[i], size)) {
			*cut = cands[i];
			return RECOVER_CUT;
		}
	}
	return last == '\n' ? RECOVER_NOTHING : RECOVER_FOREIGN;
}

static void recover_tell(recover_report_fn report, void *ctx, enum recover_what what, const char *path,
			 uint64_t offset, uint64_t bytes, const char *why)
{
	struct recover_event ev = { what, path, offset, bytes, why };
	if (report)
		report(ctx, &ev);
}

/* Whether a lock on fd can tell a live writer from a dead one.  On a
 * FUSE file system (sshfs) flock() locks only this machine's mount: a
 * record of a daemon alive on another machine sharing the store would
 * look dead here, and "taking back its unfinished line" would cut its
 * append in flight (docs/shared-stores.md).  Such records are left. */
static int recover_lock_tells(int fd)
{
	struct statfs sf;
	return fstatfs(fd, &sf) != 0 || (unsigned long)sf.f_type != RECOVER_FUSE_MAGIC;
}

/* One record in the directory `dfd` (at `dirpath`): acted on only if its
 * writer is dead (its lock can be taken), then removed unless the file it
 * is about could not be repaired. */
static void recover_one(int dfd, const char *dirpath, const char *entry, recover_report_fn report, void *ctx)
{
	struct recover_record r = { 0 };
	struct stat st, sst, now;
	unsigned char *raw = NULL;
	char path[PATH_MAX * 2];
	int fd = -1, sfd = -1, remove = 0;
	uint64_t cut;

	if (fstatat(dfd, entry, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
		goto out;
	fd = openat(dfd, entry, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	/* A lock held means a live writer; no lock at all (a file system
	 * without locks) means nobody can tell: leave it. */
	if (fd < 0 || !recover_lock_tells(fd) || flock(fd, LOCK_EX | LOCK_NB) != 0)
		goto out;
	if (fstat(fd, &st) != 0 || st.st_nlink == 0)
		goto out; /* its append ended meanwhile */
	/* Records are whole before their append starts: one that is not
	 * whole is a writer's that died before it wrote anything. */
	remove = 1;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > RECOVER_MAX_RECORD ||
	    !(raw = malloc((size_t)st.st_size + 1)) || fileio_pread_full(fd, raw, (size_t)st.st_size, 0) != 0 ||
	    recover_record_parse(raw, (size_t)st.st_size, &r) != 0)
		goto out;
	snprintf(path, sizeof path, "%s/%s", dirpath, r.name);
	if (fstatat(dfd, r.name, &sst, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sst.st_mode))
		goto out; /* gone, or not a session file any more */
	/* The inode, not the device: device numbers may change across a
	 * reboot, and the record lives in the session file's directory. */
	if (sst.st_ino != r.ino)
		goto out; /* replaced since: its bytes went with the old file */
	sfd = openat(dfd, r.name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (sfd < 0 || fstat(sfd, &sst) != 0 || sst.st_ino != r.ino) {
		if (sfd < 0 && errno != ENOENT) {
			remove = 0;
			recover_tell(report, ctx, RECOVER_UNFIXABLE, path, r.start, 0,
				     errno == EROFS ? "the store is read-only"
				     : errno == EACCES || errno == EPERM ? "the file is not writable" : "it cannot be opened");
		}
		goto out;
	}
	switch (recover_judge(&r, sfd, (uint64_t)sst.st_size, &cut)) {
	case RECOVER_NOTHING:
		break;
	case RECOVER_FOREIGN:
		recover_tell(report, ctx, RECOVER_LEFT, path, r.start, 0,
			     "its unterminated last line is not just the unfinished append");
		break;
	case RECOVER_CUT:
		/* A writer that appended since the file was judged keeps its
		 * bytes: then the unfinished line stays. */
		if (fstat(sfd, &now) != 0 || now.st_size != sst.st_size) {
			recover_tell(report, ctx, RECOVER_LEFT, path, cut, 0, "another writer appended while it was checked");
			break;
		}
		if (ftruncate(sfd, (off_t)cut) != 0 || fsync(sfd) != 0) {
			remove = 0;
			recover_tell(report, ctx, RECOVER_UNFIXABLE, path, cut, 0, "taking the bytes back failed");
			break;
		}
		recover_tell(report, ctx, RECOVER_TRUNCATED, path, cut, (uint64_t)sst.st_size - cut, NULL);
		break;
	}
out:
	/* Removed while the lock is held: nobody acts on it twice. */
	if (remove)
		unlinkat(dfd, entry, 0);
	if (sfd >= 0)
		close(sfd);
	if (fd >= 0)
		close(fd);
	free(raw);
}

/* A migration's temporary file: removed if its writer is dead. */
static void recover_temp(int dfd, const char *dirpath, const char *entry, recover_report_fn report, void *ctx)
{
	struct stat st, again;
	char path[PATH_MAX * 2];
	int fd = -1;
	if (fstatat(dfd, entry, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
		goto out;
	fd = openat(dfd, entry, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || !recover_lock_tells(fd) || flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &st) != 0 ||
	    st.st_nlink == 0)
		goto out;
	/* The name must still be this file: a finished migration renamed it
	 * over the session before letting go of the lock. */
	if (fstatat(dfd, entry, &again, AT_SYMLINK_NOFOLLOW) != 0 || again.st_ino != st.st_ino ||
	    again.st_dev != st.st_dev)
		goto out;
	if (unlinkat(dfd, entry, 0) == 0) {
		snprintf(path, sizeof path, "%s/%s", dirpath, entry);
		recover_tell(report, ctx, RECOVER_TEMP_REMOVED, path, 0, (uint64_t)st.st_size, NULL);
	}
out:
	if (fd >= 0)
		close(fd);
}

static int recover_is_temp(const char *name)
{
	const char *infix = strstr(name, ".jsonl" RECOVER_MIGRATE_INFIX);
	return infix && infix != name && strlen(infix + sizeof ".jsonl" RECOVER_MIGRATE_INFIX - 1) == 6;
}

/* Splits a session path into its directory (new string) and base name. */
static char *recover_dir_of(const char *session_path, const char **base)
{
	const char *slash = strrchr(session_path, '/');
	*base = slash ? slash + 1 : session_path;
	if (!slash)
		return strdup(".");
	/* "/s.jsonl": the root directory keeps its slash. */
	return strndup(session_path, slash == session_path ? 1 : (size_t)(slash - session_path));
}

ps_err recover_intent_begin(const char *session_path, const struct stat *st, uint64_t start, const char *data,
			    size_t len, struct recover_intent **out)
{
	struct buf rec = BUF_INIT;
	struct recover_intent *it = NULL;
	const char *base;
	char *dir = recover_dir_of(session_path, &base);
	ps_err code = PS_ERR_NOMEM;

	*out = NULL;
	if (!dir || recover_record_build(base, st, start, data, len, &rec) != 0 || !(it = calloc(1, sizeof *it)))
		goto out;
	it->fd = -1;
	if (asprintf(&it->path, "%s/" RECOVER_INTENT_PREFIX "%ju.XXXXXX", dir, (uintmax_t)st->st_ino) < 0) {
		it->path = NULL;
		goto out;
	}
	it->fd = recover_create_locked(it->path);
	if (it->fd < 0) {
		code = recover_errno(errno);
		goto out;
	}
	if (recover_write(it->fd, rec.data, rec.len) != 0) {
		code = recover_errno(errno);
		unlink(it->path);
		goto out;
	}
	*out = it;
	it = NULL;
	code = PS_OK;
out:
	if (it) {
		if (it->fd >= 0)
			close(it->fd);
		free(it->path);
		free(it);
	}
	buf_free(&rec);
	free(dir);
	return code;
}

void recover_intent_end(struct recover_intent *it, int keep)
{
	if (!it)
		return;
	/* Unlinked before the lock goes with the descriptor. */
	if (!keep)
		unlink(it->path);
	close(it->fd);
	free(it->path);
	free(it);
}

int recover_create_locked(char *template)
{
	size_t n = strlen(template);
	if (n < 6) {
		errno = EINVAL;
		return -1;
	}
	for (int tries = 0; tries < 8; tries++) {
		memcpy(template + n - 6, "XXXXXX", 6);
		int fd = mkostemp(template, O_CLOEXEC), locked;
		struct stat st;
		if (fd < 0)
			return -1;
		while ((locked = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
			;
		/* Without locks (some network file systems) recovery cannot take
		 * one either, and leaves the file alone. */
		if (locked != 0)
			return fd;
		/* Recovery may have opened the name before the lock was taken,
		 * found it empty and removed it: start over under a new name. */
		if (fstat(fd, &st) == 0 && st.st_nlink > 0)
			return fd;
		close(fd);
	}
	errno = EAGAIN;
	return -1;
}

/* Calls `one` for every entry of the directory at `dirpath` that `want`
 * accepts. */
static void recover_scan_dir(int at, const char *dirpath, const char *prefix,
			     void (*one)(int, const char *, const char *, recover_report_fn, void *),
			     int (*want)(const char *), recover_report_fn report, void *ctx)
{
	/* A session's directory may be a symlinked project (store.h): followed
	 * here as everywhere else; the files in it are opened O_NOFOLLOW. */
	int fd = openat(at, dirpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t plen = prefix ? strlen(prefix) : 0;
	/* A directory that cannot be read holds nothing this process could
	 * repair. */
	if (!d)
		goto out;
	while ((de = readdir(d))) {
		if (prefix ? strncmp(de->d_name, prefix, plen) == 0 : want(de->d_name))
			one(dirfd(d), dirpath, de->d_name, report, ctx);
	}
out:
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
}

ps_err recover_session(const char *session_path, recover_report_fn report, void *ctx)
{
	struct stat st;
	char last = '\n', prefix[64];
	const char *base;
	char *dir = NULL;
	ps_err code = PS_OK;
	int fd = open(session_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	/* A file that cannot be read is the append's to report. */
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0 ||
	    fileio_pread_full(fd, &last, 1, (uint64_t)st.st_size - 1) != 0 || last == '\n')
		goto out;
	dir = recover_dir_of(session_path, &base);
	if (!dir) {
		code = PS_ERR_NOMEM;
		goto out;
	}
	snprintf(prefix, sizeof prefix, RECOVER_INTENT_PREFIX "%ju.", (uintmax_t)st.st_ino);
	recover_scan_dir(AT_FDCWD, dir, prefix, recover_one, NULL, report, ctx);
out:
	if (fd >= 0)
		close(fd);
	free(dir);
	return code;
}

void recover_migrations(const char *session_path, recover_report_fn report, void *ctx)
{
	const char *base;
	char *dir = recover_dir_of(session_path, &base), *prefix = NULL;
	if (dir && asprintf(&prefix, "%s" RECOVER_MIGRATE_INFIX, base) >= 0)
		recover_scan_dir(AT_FDCWD, dir, prefix, recover_temp, NULL, report, ctx);
	free(prefix);
	free(dir);
}

static int recover_is_draft(const char *name)
{
	size_t n = sizeof RECOVER_DRAFT_PREFIX - 1;
	return strncmp(name, RECOVER_DRAFT_PREFIX, n) == 0 && strlen(name + n) == 6;
}

/* A draft record whose lock can be taken: its daemon is dead, and what
 * it fsynced is reported (the caller shows it; the record stays until
 * then removed). */
static void recover_draft(int dfd, const char *dirpath, const char *entry, recover_report_fn report, void *ctx)
{
	int fd = openat(dfd, entry, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char *path = NULL;
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 && report && asprintf(&path, "%s/%s", dirpath, entry) >= 0) {
		struct recover_event ev = { .what = RECOVER_DRAFT, .path = path };
		report(ctx, &ev);
		free(path);
	}
	close(fd);
}

static void recover_store_entry(int dfd, const char *dirpath, const char *entry, recover_report_fn report, void *ctx)
{
	if (strncmp(entry, RECOVER_INTENT_PREFIX, sizeof RECOVER_INTENT_PREFIX - 1) == 0)
		recover_one(dfd, dirpath, entry, report, ctx);
	else if (recover_is_temp(entry))
		recover_temp(dfd, dirpath, entry, report, ctx);
	else if (recover_is_draft(entry))
		recover_draft(dfd, dirpath, entry, report, ctx);
}

static int recover_store_wants(const char *entry)
{
	return strncmp(entry, RECOVER_INTENT_PREFIX, sizeof RECOVER_INTENT_PREFIX - 1) == 0 || recover_is_temp(entry) ||
	       recover_is_draft(entry);
}

ps_err recover_store(const char *root, recover_report_fn report, void *ctx)
{
	DIR *d = opendir(root);
	struct dirent *de;
	struct stat st;
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? PS_ERR_NOENT : PS_ERR_IO;
	/* The session files that lie in the root itself (a flat store). */
	recover_scan_dir(AT_FDCWD, root, NULL, recover_store_entry, recover_store_wants, report, ctx);
	while ((de = readdir(d))) {
		char *dirpath = NULL;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* Directories and symlinks to directories, as the store shows
		 * them. */
		if (fstatat(dirfd(d), de->d_name, &st, 0) != 0 || !S_ISDIR(st.st_mode))
			continue;
		if (asprintf(&dirpath, "%s/%s", root, de->d_name) < 0)
			continue;
		recover_scan_dir(AT_FDCWD, dirpath, NULL, recover_store_entry, recover_store_wants, report, ctx);
		free(dirpath);
	}
	closedir(d);
	return PS_OK;
}
