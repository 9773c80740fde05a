/* Recovery of what killed writers leave: records of appends under way,
 * judged against the session file, and migrations' temporary files. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "append.h"
#include "helpers.h"
#include "draftrecord.h"
#include "recover.h"
#include "suites.h"

/* A store of one project directory holding s.jsonl. */
struct fixture {
	char root[64];
	char dir[96];
	char path[128];
};

struct seen {
	int truncated, left, unfixable, temps, drafts;
	uint64_t offset, bytes;
	char draft[256];
};

static void fixture_make(struct fixture *f, const char *text)
{
	strcpy(f->root, "/tmp/pisessionfs-recover-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->root));
	snprintf(f->dir, sizeof f->dir, "%s/--p--", f->root);
	ck_assert_int_eq(mkdir(f->dir, 0700), 0);
	snprintf(f->path, sizeof f->path, "%s/s.jsonl", f->dir);
	FILE *out = fopen(f->path, "w");
	ck_assert_ptr_nonnull(out);
	fputs(text, out);
	fclose(out);
}

static void fixture_free(struct fixture *f)
{
	DIR *d = opendir(f->dir);
	struct dirent *de;
	char p[512];
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		snprintf(p, sizeof p, "%s/%s", f->dir, de->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(f->dir);
	rmdir(f->root);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *in = fopen(path, "rb");
	ck_assert_ptr_nonnull(in);
	fseek(in, 0, SEEK_END);
	long size = ftell(in);
	fseek(in, 0, SEEK_SET);
	char *b = malloc((size_t)size + 1);
	ck_assert_int_eq(fread(b, 1, (size_t)size, in), (size_t)size);
	b[size] = '\0';
	fclose(in);
	*n = (size_t)size;
	return b;
}

/* Names in the project directory starting with prefix. */
static int count_prefix(const struct fixture *f, const char *prefix)
{
	DIR *d = opendir(f->dir);
	struct dirent *de;
	int n = 0;
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static void on_event(void *ctx, const struct recover_event *ev)
{
	struct seen *s = ctx;
	switch (ev->what) {
	case RECOVER_TRUNCATED:
		s->truncated++;
		s->offset = ev->offset;
		s->bytes = ev->bytes;
		break;
	case RECOVER_LEFT:
		s->left++;
		break;
	case RECOVER_UNFIXABLE:
		s->unfixable++;
		break;
	case RECOVER_TEMP_REMOVED:
		s->temps++;
		break;
	case RECOVER_DRAFT:
		s->drafts++;
		snprintf(s->draft, sizeof s->draft, "%s", ev->path);
		break;
	}
}

/* One entry line of about `size` bytes (with its newline). */
static char *big_line(const char *id, size_t size)
{
	char *line = malloc(size + 1);
	int head = snprintf(line, size + 1,
			    "{\"type\":\"message\",\"id\":\"%s\",\"parentId\":\"a\",\"timestamp\":\"2026-01-01T00:00:02.000Z\","
			    "\"message\":{\"role\":\"user\",\"content\":\"", id);
	size_t i = (size_t)head;
	for (; i < size - 4; i++)
		line[i] = (char)('a' + i % 26);
	memcpy(line + i, "\"}}\n", 4);
	line[size] = '\0';
	return line;
}

static void append_bytes(const char *path, const char *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
	close(fd);
}

/* A writer that records `data`, writes the first `part` bytes of it and
 * dies (its descriptor closed without ending the record).  `start`: the
 * offset it records, or -1 for the file's size. */
static void dead_writer(const char *path, const char *data, size_t len, size_t part, long long start)
{
	struct stat st;
	struct recover_intent *it = NULL;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(recover_intent_begin(path, &st, start < 0 ? (uint64_t)st.st_size : (uint64_t)start, data, len, &it),
			 PS_OK);
	ck_assert_ptr_nonnull(it);
	append_bytes(path, data, part);
	recover_intent_end(it, 1);
}

#define BASE HDR MSG("a", "null", "user", "hi")

static void check_cut(size_t part_end_in_file)
{
	struct fixture f;
	struct seen seen = { 0 };
	size_t n;
	fixture_make(&f, BASE);
	size_t base = strlen(BASE);
	char *line = big_line("b1", 20000);
	size_t part = part_end_in_file - base;
	dead_writer(f.path, line, strlen(line), part, -1);
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 1);
	ck_assert_int_eq(recover_session(f.path, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 1);
	ck_assert_int_eq(seen.offset, base);
	ck_assert_int_eq(seen.bytes, part);
	char *now = slurp(f.path, &n);
	ck_assert_str_eq(now, BASE);
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 0);
	free(now);
	free(line);
	fixture_free(&f);
}

/* The kernel stops a killed write at a page boundary. */
START_TEST(test_recover_cut_at_page_boundary)
{
	check_cut(12288);
}
END_TEST

/* Elsewhere (another file system): the last piece is checked by its
 * newlines only, the whole pieces before it by their hashes. */
START_TEST(test_recover_cut_inside_a_piece)
{
	check_cut(9000);
}
END_TEST

START_TEST(test_recover_cut_in_first_piece)
{
	check_cut(strlen(BASE) + 10);
}
END_TEST

/* Someone else's bytes after the start: never taken back. */
START_TEST(test_recover_foreign_partial_left)
{
	struct fixture f;
	struct seen seen = { 0 };
	size_t n;
	fixture_make(&f, BASE);
	char *line = big_line("b1", 9000);
	/* The record says one thing, the file holds another unterminated line. */
	dead_writer(f.path, line, strlen(line), 0, -1);
	const char *other = "{\"type\":\"message\",\"id\":\"zz\",\"parentId\":\"a\",\"timest";
	append_bytes(f.path, other, strlen(other));
	ck_assert_int_eq(recover_session(f.path, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 0);
	ck_assert_int_eq(seen.left, 1);
	char *now = slurp(f.path, &n);
	ck_assert_int_eq(n, strlen(BASE) + strlen(other));
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 0);
	free(now);
	free(line);
	fixture_free(&f);
}
END_TEST

/* The same first bytes but other bytes in a later piece (the hashes tell). */
START_TEST(test_recover_hash_mismatch_left)
{
	struct fixture f;
	struct seen seen = { 0 };
	size_t n;
	fixture_make(&f, BASE);
	char *line = big_line("b1", 20000);
	char *forged = strdup(line);
	forged[6000] = forged[6000] == 'x' ? 'y' : 'x';
	struct stat st;
	struct recover_intent *it = NULL;
	ck_assert_int_eq(stat(f.path, &st), 0);
	ck_assert_int_eq(recover_intent_begin(f.path, &st, (uint64_t)st.st_size, line, strlen(line), &it), PS_OK);
	append_bytes(f.path, forged, 12288 - strlen(BASE));
	recover_intent_end(it, 1);
	ck_assert_int_eq(recover_session(f.path, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 0);
	ck_assert_int_eq(seen.left, 1);
	free(slurp(f.path, &n));
	ck_assert_int_eq(n, 12288);
	free(forged);
	free(line);
	fixture_free(&f);
}
END_TEST

/* A complete line appended after the unfinished one: nothing to do. */
START_TEST(test_recover_appended_after_left)
{
	struct fixture f;
	struct seen seen = { 0 };
	size_t n;
	fixture_make(&f, BASE);
	char *line = big_line("b1", 9000);
	dead_writer(f.path, line, strlen(line), 5000, -1);
	append_bytes(f.path, MSG("c", "\"a\"", "user", "later"), strlen(MSG("c", "\"a\"", "user", "later")));
	size_t before = strlen(BASE) + 5000 + strlen(MSG("c", "\"a\"", "user", "later"));
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 0);
	free(slurp(f.path, &n));
	ck_assert_int_eq(n, before);
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 0);
	free(line);
	fixture_free(&f);
}
END_TEST

START_TEST(test_recover_complete_write_untouched)
{
	struct fixture f;
	struct seen seen = { 0 };
	size_t n;
	fixture_make(&f, BASE);
	char *line = big_line("b1", 9000);
	dead_writer(f.path, line, strlen(line), strlen(line), -1);
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated + seen.left + seen.unfixable, 0);
	free(slurp(f.path, &n));
	ck_assert_int_eq(n, strlen(BASE) + strlen(line));
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 0);
	free(line);
	fixture_free(&f);
}
END_TEST

/* A record whose writer is alive (its lock held) is left alone. */
START_TEST(test_recover_live_writer_untouched)
{
	struct fixture f;
	struct seen seen = { 0 };
	struct stat st;
	struct recover_intent *it = NULL;
	size_t n;
	fixture_make(&f, BASE);
	char *line = big_line("b1", 9000);
	ck_assert_int_eq(stat(f.path, &st), 0);
	ck_assert_int_eq(recover_intent_begin(f.path, &st, (uint64_t)st.st_size, line, strlen(line), &it), PS_OK);
	append_bytes(f.path, line, 4000);
	ck_assert_int_eq(recover_session(f.path, on_event, &seen), PS_OK);
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated + seen.left, 0);
	free(slurp(f.path, &n));
	ck_assert_int_eq(n, strlen(BASE) + 4000);
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 1);
	recover_intent_end(it, 0);
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 0);
	free(line);
	fixture_free(&f);
}
END_TEST

/* A real process, alive and then killed with SIGKILL. */
START_TEST(test_recover_killed_process)
{
	struct fixture f;
	struct seen seen = { 0 };
	int ready[2];
	size_t n;
	fixture_make(&f, BASE);
	char *line = big_line("b1", 30000);
	ck_assert_int_eq(pipe(ready), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct stat st;
		struct recover_intent *it = NULL;
		if (stat(f.path, &st) != 0 ||
		    recover_intent_begin(f.path, &st, (uint64_t)st.st_size, line, strlen(line), &it) != PS_OK)
			_exit(1);
		int fd = open(f.path, O_WRONLY | O_APPEND);
		if (fd < 0 || write(fd, line, 16384 - strlen(BASE)) < 0 || write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char c;
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 0);
	free(slurp(f.path, &n));
	ck_assert_int_eq(n, 16384);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 1);
	char *now = slurp(f.path, &n);
	ck_assert_str_eq(now, BASE);
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 0);
	free(now);
	close(ready[0]);
	close(ready[1]);
	free(line);
	fixture_free(&f);
}
END_TEST

/* Another writer appended between the record and the write: its line stays. */
START_TEST(test_recover_other_writer_first)
{
	struct fixture f;
	struct seen seen = { 0 };
	struct stat st;
	struct recover_intent *it = NULL;
	size_t n;
	const char *pi = MSG("p", "\"a\"", "user", "from pi");
	fixture_make(&f, BASE);
	char *line = big_line("b1", 20000);
	ck_assert_int_eq(stat(f.path, &st), 0);
	ck_assert_int_eq(recover_intent_begin(f.path, &st, (uint64_t)st.st_size, line, strlen(line), &it), PS_OK);
	append_bytes(f.path, pi, strlen(pi));
	append_bytes(f.path, line, 8192 - strlen(BASE) - strlen(pi));
	recover_intent_end(it, 1);
	ck_assert_int_eq(recover_session(f.path, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 1);
	char *now = slurp(f.path, &n);
	ck_assert_int_eq(n, strlen(BASE) + strlen(pi));
	ck_assert(memcmp(now + strlen(BASE), pi, strlen(pi)) == 0);
	free(now);
	free(line);
	fixture_free(&f);
}
END_TEST

/* A batch of lines cut right after one of them is taken back whole (found
 * at start-up: the file ends with a newline). */
START_TEST(test_recover_batch_taken_back_whole)
{
	struct fixture f;
	struct seen seen = { 0 };
	size_t n;
	fixture_make(&f, BASE);
	char *l1 = big_line("b1", 3000), *l2 = big_line("b2", 3000);
	char *batch = malloc(6001);
	memcpy(batch, l1, 3000);
	memcpy(batch + 3000, l2, 3001);
	dead_writer(f.path, batch, 6000, 3000, -1);
	ck_assert_int_eq(recover_session(f.path, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 0); /* ends with a newline: not looked at */
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 1);
	char *now = slurp(f.path, &n);
	ck_assert_str_eq(now, BASE);
	free(now);
	free(batch);
	free(l1);
	free(l2);
	fixture_free(&f);
}
END_TEST

/* A write that began with the newline for a crashed writer's line: taken
 * back, that line is as it was. */
START_TEST(test_recover_leading_newline)
{
	struct fixture f;
	struct seen seen = { 0 };
	size_t n;
	const char *crashed = "{\"type\":\"message\",\"id\":\"zz\",\"parent";
	fixture_make(&f, BASE);
	append_bytes(f.path, crashed, strlen(crashed));
	char *line = big_line("b1", 9000);
	line[0] = '\n';
	dead_writer(f.path, line, strlen(line), 100, -1);
	ck_assert_int_eq(recover_session(f.path, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 1);
	char *now = slurp(f.path, &n);
	ck_assert_int_eq(n, strlen(BASE) + strlen(crashed));
	free(now);
	free(line);
	fixture_free(&f);
}
END_TEST

/* The session file replaced (a migration, an editor): the record is about
 * the old inode and goes without touching the new file. */
START_TEST(test_recover_replaced_file_untouched)
{
	struct fixture f;
	struct seen seen = { 0 };
	char tmp[256];
	size_t n;
	fixture_make(&f, BASE);
	char *line = big_line("b1", 9000);
	dead_writer(f.path, line, strlen(line), 5000, -1);
	snprintf(tmp, sizeof tmp, "%s/new", f.dir);
	FILE *out = fopen(tmp, "w");
	fputs(BASE, out);
	fwrite(line, 1, 5000, out);
	fclose(out);
	ck_assert_int_eq(rename(tmp, f.path), 0);
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated, 0);
	free(slurp(f.path, &n));
	ck_assert_int_eq(n, strlen(BASE) + 5000);
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 0);
	free(line);
	fixture_free(&f);
}
END_TEST

/* Not a record (bad magic, cut short, naming another kind of file): removed
 * once its writer is dead, the files stay. */
START_TEST(test_recover_garbage_records)
{
	struct fixture f;
	struct seen seen = { 0 };
	char p[256];
	size_t n;
	fixture_make(&f, BASE "{\"partial");
	snprintf(p, sizeof p, "%s/" RECOVER_INTENT_PREFIX "1.aaaaaa", f.dir);
	FILE *out = fopen(p, "w");
	fputs("PSFSINT1 not really", out);
	fclose(out);
	snprintf(p, sizeof p, "%s/" RECOVER_INTENT_PREFIX "2.bbbbbb", f.dir);
	out = fopen(p, "w");
	fclose(out);
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.truncated + seen.left, 0);
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 0);
	free(slurp(f.path, &n));
	ck_assert_int_eq(n, strlen(BASE) + 9);
	fixture_free(&f);
}
END_TEST

START_TEST(test_recover_migration_temps)
{
	struct fixture f;
	struct seen seen = { 0 };
	char dead[256], live[256], other[256], longer[256];
	fixture_make(&f, BASE);
	snprintf(dead, sizeof dead, "%s/s.jsonl" RECOVER_MIGRATE_INFIX "abc123", f.dir);
	snprintf(live, sizeof live, "%s/s.jsonl" RECOVER_MIGRATE_INFIX "XXXXXX", f.dir);
	snprintf(other, sizeof other, "%s/notes.txt", f.dir);
	snprintf(longer, sizeof longer, "%s/t.jsonl" RECOVER_MIGRATE_INFIX "abcdefg", f.dir);
	FILE *out = fopen(dead, "w");
	fputs(BASE, out);
	fclose(out);
	fclose(fopen(other, "w"));
	fclose(fopen(longer, "w"));
	int fd = recover_create_locked(live);
	ck_assert_int_ge(fd, 0);
	recover_migrations(f.path, on_event, &seen);
	ck_assert_int_eq(seen.temps, 1);
	ck_assert_int_ne(access(dead, F_OK), 0);
	ck_assert_int_eq(access(live, F_OK), 0);
	ck_assert_int_eq(access(other, F_OK), 0);
	ck_assert_int_eq(access(longer, F_OK), 0);
	/* Start-up sweeps the whole store the same way. */
	out = fopen(dead, "w");
	fclose(out);
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.temps, 2);
	ck_assert_int_eq(access(live, F_OK), 0);
	close(fd);
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.temps, 3);
	ck_assert_int_ne(access(live, F_OK), 0);
	ck_assert_int_eq(access(longer, F_OK), 0);
	fixture_free(&f);
}
END_TEST

/* The append path: a dead writer's unfinished line goes before the new
 * entry is written, and a normal append leaves no record behind. */
START_TEST(test_recover_append_takes_back_first)
{
	struct fixture f;
	struct append_error err;
	size_t n;
	fixture_make(&f, BASE);
	char *line = big_line("b1", 20000);
	dead_writer(f.path, line, strlen(line), 8192 - strlen(BASE), -1);
	struct ps_session *s = helper_open(f.path);
	json_t *e = json_pack("{s:s,s:{s:s,s:s}}", "type", "message", "message", "role", "user", "content", "after");
	struct append_item item = { e, APPEND_PARENT_LEAF, PS_NIL, NULL, 0 };
	ck_assert_int_eq(append_items(s, s->generation, &item, 1, &err), PS_OK);
	char want[64];
	snprintf(want, sizeof want, "took back the %zu bytes at offset %zu", 8192 - strlen(BASE), strlen(BASE));
	ck_assert_ptr_nonnull(strstr(err.note, want));
	char *now = slurp(f.path, &n);
	ck_assert(strncmp(now, BASE, strlen(BASE)) == 0);
	/* The dead line is gone (its id, not "b1" alone: the new entry's random
	 * id may hold those two characters). */
	ck_assert_ptr_null(strstr(now, "\"id\":\"b1\""));
	ck_assert_int_eq(now[n - 1], '\n');
	ck_assert_ptr_nonnull(strstr(now + strlen(BASE), "\"parentId\":\"a\""));
	ck_assert_int_eq(s->n_entries, 2);
	ck_assert_int_eq(count_prefix(&f, RECOVER_INTENT_PREFIX), 0);
	free(now);
	json_decref(e);
	session_free(s);
	free(line);
	fixture_free(&f);
}
END_TEST


/* An fsynced draft's record (draftrecord.h): the latest text, read back
 * whole; left alone while its writer holds it; reported once it is dead;
 * removed when the draft ends without keeping it. */
START_TEST(test_recover_draft_records)
{
	struct fixture f;
	struct seen seen = { 0 };
	struct draftrecord *rec = NULL;
	fixture_make(&f, "");
	ck_assert_int_eq(draftrecord_save(&rec, f.dir, "/--p--/s/new.md", 1000, 1001, "first", 5), PS_OK);
	ck_assert_int_eq(draftrecord_save(&rec, f.dir, "/--p--/s/new.md", 1000, 1001, "first\n\0second", 13), PS_OK);
	ck_assert_int_eq(count_prefix(&f, DRAFTRECORD_PREFIX), 1); /* replaced, not added */
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.drafts, 0); /* its writer lives */
	draftrecord_end(rec, 1);          /* as a killed daemon leaves it */
	ck_assert_int_eq(recover_store(f.root, on_event, &seen), PS_OK);
	ck_assert_int_eq(seen.drafts, 1);
	char *path, *time, *data;
	uid_t uid;
	gid_t gid;
	size_t len;
	ck_assert_int_eq(draftrecord_read(seen.draft, &path, &uid, &gid, &time, &data, &len), PS_OK);
	ck_assert_str_eq(path, "/--p--/s/new.md");
	ck_assert_uint_eq(uid, 1000);
	ck_assert_uint_eq(gid, 1001);
	ck_assert_uint_eq(len, 13);
	ck_assert_mem_eq(data, "first\n\0second", 13);
	ck_assert_int_eq(strlen(time), 20);
	free(path);
	free(time);
	free(data);
	/* Cut short (killed while writing it, before the fsync returned). */
	struct stat st;
	ck_assert_int_eq(stat(seen.draft, &st), 0);
	ck_assert_int_eq(truncate(seen.draft, st.st_size - 1), 0);
	ck_assert_int_eq(draftrecord_read(seen.draft, &path, &uid, &gid, &time, &data, &len), PS_ERR_TOOBIG);
	/* A record that is not one is told as such. */
	FILE *bad = fopen(seen.draft, "w");
	fputs("no json here\ntext", bad);
	fclose(bad);
	ck_assert_int_eq(draftrecord_read(seen.draft, &path, &uid, &gid, &time, &data, &len), PS_ERR_INVALID);
	unlink(seen.draft);
	/* Ended without keeping: gone. */
	rec = NULL;
	ck_assert_int_eq(draftrecord_save(&rec, f.dir, "/--p--/s/x.md", 0, 0, "x", 1), PS_OK);
	draftrecord_end(rec, 0);
	ck_assert_int_eq(count_prefix(&f, DRAFTRECORD_PREFIX), 0);
	/* A directory that cannot take it: an error, nothing left. */
	rec = NULL;
	ck_assert_int_ne(draftrecord_save(&rec, "/nonexistent/dir", "/p/s/x.md", 0, 0, "x", 1), PS_OK);
	ck_assert_ptr_null(rec);
	fixture_free(&f);
}
END_TEST

Suite *recover_suite(void)
{
	Suite *s = suite_create("recover");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_recover_cut_at_page_boundary);
	tcase_add_test(tc, test_recover_cut_inside_a_piece);
	tcase_add_test(tc, test_recover_cut_in_first_piece);
	tcase_add_test(tc, test_recover_foreign_partial_left);
	tcase_add_test(tc, test_recover_hash_mismatch_left);
	tcase_add_test(tc, test_recover_appended_after_left);
	tcase_add_test(tc, test_recover_complete_write_untouched);
	tcase_add_test(tc, test_recover_live_writer_untouched);
	tcase_add_test(tc, test_recover_killed_process);
	tcase_add_test(tc, test_recover_other_writer_first);
	tcase_add_test(tc, test_recover_batch_taken_back_whole);
	tcase_add_test(tc, test_recover_leading_newline);
	tcase_add_test(tc, test_recover_replaced_file_untouched);
	tcase_add_test(tc, test_recover_garbage_records);
	tcase_add_test(tc, test_recover_migration_temps);
	tcase_add_test(tc, test_recover_append_takes_back_first);
	tcase_add_test(tc, test_recover_draft_records);
	suite_add_tcase(s, tc);
	return s;
}
