/* sessionfork_create(): pi's createBranchedSession over the index, one small
 * hand-written session per rule; sessionforkfrom_create(): pi's forkFrom
 * (check-diff-forkfrom compares it with pi itself); and the JavaScript key order of jsonout
 * that forks (and context.json) depend on.  JSON in this file uses ' for "
 * where it is compared; q() swaps them back. */
#include <dirent.h>
#include <fcntl.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "helpers.h"
#include "jsonout.h"
#include "sessionfork.h"
#include "sessionforkfrom.h"
#include "sessionnew.h"
#include "suites.h"

static char *q(const char *s)
{
	char *out = strdup(s);
	ck_assert_ptr_nonnull(out);
	for (char *p = out; *p; p++)
		if (*p == '\'')
			*p = '"';
	return out;
}

#define TS(n) "\"timestamp\":\"2026-01-01T00:00:0" #n ".000Z\""
#define ENTRY(type, id, parent, n, rest) \
	"{\"type\":\"" type "\",\"id\":\"" id "\",\"parentId\":" parent "," TS(n) rest "}\n"
#define LABEL(id, parent, n, target, label) \
	ENTRY("label", id, parent, n, ",\"targetId\":\"" target "\",\"label\":" label)

/* What a fork wrote: its lines, and the file's stem. */
struct forked {
	char dir[64];
	char *stem;
	char *text;
	char *lines[64];
	size_t n;
};

static size_t dir_count(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Forks the session text at entry id (NULL: index `leaf`); *err gets the
 * result.  On success f holds the file's lines. */
static void fork_text(const char *session, const char *id, uint32_t leaf, const char *name, ps_err expect,
		      struct forked *f)
{
	char *path = helper_write(session);
	size_t before_len, after_len;
	char *before = helper_slurp(path, &before_len);
	struct ps_session *s = helper_open(path);
	memset(f, 0, sizeof *f);
	helper_tmpdir(f->dir, "fork");
	int dfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	if (id) {
		leaf = session_find(s, id, strlen(id));
		ck_assert_uint_ne(leaf, PS_NIL);
	}
	ps_err err = sessionfork_create(s, leaf, dfd, "/store/--p--/parent.jsonl", name, 0600, (uid_t)-1, (gid_t)-1,
					&f->stem);
	close(dfd);
	ck_assert_int_eq(err, expect);
	/* The source is never written. */
	char *after = helper_slurp(path, &after_len);
	ck_assert_uint_eq(before_len, after_len);
	ck_assert_int_eq(memcmp(before, after, before_len), 0);
	free(before);
	free(after);
	session_free(s);
	unlink(path);
	free(path);
	if (err) {
		ck_assert_uint_eq(dir_count(f->dir), 0); /* nothing left behind */
		return;
	}
	ck_assert_uint_eq(dir_count(f->dir), 1);
	char file[256];
	size_t len;
	snprintf(file, sizeof file, "%s/%s.jsonl", f->dir, f->stem);
	f->text = helper_slurp(file, &len);
	ck_assert(len > 0 && f->text[len - 1] == '\n');
	for (char *p = f->text, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		ck_assert_uint_lt(f->n, 64);
		*nl = '\0';
		f->lines[f->n++] = p;
	}
}

static void forked_free(struct forked *f)
{
	helper_rmtree(f->dir);
	free(f->stem);
	free(f->text);
}

static void assert_line(const struct forked *f, size_t i, const char *expected)
{
	char *want = q(expected);
	ck_assert_uint_lt(i, f->n);
	ck_assert_str_eq(f->lines[i], want);
	free(want);
}

static json_t *line_json(const struct forked *f, size_t i)
{
	ck_assert_uint_lt(i, f->n);
	json_t *v = json_loads(f->lines[i], 0, NULL);
	ck_assert_ptr_nonnull(v);
	return v;
}

static const char *str_of(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	ck_assert_msg(v != NULL, "no string %s", key);
	return v;
}

static int matches(const char *re, const char *s)
{
	regex_t r;
	ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
	int ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

/* A new label line: everything but its id, which is 8 new hex digits. */
static void assert_label(const struct forked *f, size_t i, const char *parent, const char *rest)
{
	json_t *v = line_json(f, i);
	const char *id = str_of(v, "id");
	ck_assert(matches("^[0-9a-f]{8}$", id));
	for (size_t j = 1; j < i; j++) {
		json_t *o = line_json(f, j);
		ck_assert_str_ne(str_of(o, "id"), id);
		json_decref(o);
	}
	char want[512];
	snprintf(want, sizeof want, "{'type':'label','id':'%s','parentId':%s%s}", id, parent, rest);
	assert_line(f, i, want);
	json_decref(v);
}

static const char *id_of(const struct forked *f, size_t i, char *buf)
{
	json_t *v = line_json(f, i);
	snprintf(buf, 16, "'%s'", str_of(v, "id"));
	json_decref(v);
	return buf;
}

#define HEADER_CWD(cwd) "{\"type\":\"session\",\"version\":3,\"id\":\"src\"," TS(0) ",\"cwd\":\"" cwd "\"}\n"

START_TEST(test_leaf_is_first_entry)
{
	struct forked f;
	fork_text(HEADER_CWD("/home//u/./p/../q/") ENTRY("model_change", "m1", "null", 1, ",\"provider\":\"x\"")
		  MSG("u1", "\"m1\"", "user", "hi"), "m1", 0, NULL, PS_OK, &f);
	ck_assert_uint_eq(f.n, 2);
	json_t *h = line_json(&f, 0);
	const char *id = str_of(h, "id"), *ts = str_of(h, "timestamp");
	ck_assert(matches("^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", id));
	ck_assert(matches("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$", ts));
	char want[512], stem[128];
	/* pi's header, the cwd resolved as path.resolve does */
	snprintf(want, sizeof want,
		 "{'type':'session','version':3,'id':'%s','timestamp':'%s','cwd':'/home/u/q','parentSession':'/store/--p--/parent.jsonl'}",
		 id, ts);
	assert_line(&f, 0, want);
	snprintf(stem, sizeof stem, "%s_%s", ts, id);
	for (char *p = stem; *p != '_'; p++)
		if (*p == ':' || *p == '.')
			*p = '-';
	ck_assert_str_eq(f.stem, stem);
	assert_line(&f, 1, "{'type':'model_change','id':'m1','parentId':null,'timestamp':'2026-01-01T00:00:01.000Z','provider':'x'}");
	json_decref(h);
	forked_free(&f);
}
END_TEST

/* Labels: only those whose target is on the path, the latest of each,
 * in the order pi's Map keeps them, with their own timestamps. */
START_TEST(test_labels_on_and_off_the_path)
{
	struct forked f;
	char b1[16];
	fork_text(HEADER_CWD("/p") MSG("u1", "null", "user", "q") MSG("a1", "\"u1\"", "assistant", "a")
		  LABEL("l1", "\"a1\"", 2, "u1", "\"first\"")      /* on the path */
		  LABEL("l2", "\"l1\"", 3, "a1", "\"answer\"")     /* off it (a1 is not on u2's path) */
		  LABEL("l3", "\"l2\"", 4, "u1", "\"again\"")      /* set again: u1's stays first */
		  LABEL("l4", "\"l3\"", 5, "zz", "\"nowhere\"")    /* no such entry */
		  MSG("u2", "\"u1\"", "user", "other branch"),
		  "u2", 0, NULL, PS_OK, &f);
	ck_assert_uint_eq(f.n, 4);
	assert_line(&f, 1, "{'type':'message','id':'u1','parentId':null,'timestamp':'2026-01-01T00:00:01.000Z','message':{'role':'user','content':'q','timestamp':1}}");
	assert_line(&f, 2, "{'type':'message','id':'u2','parentId':'u1','timestamp':'2026-01-01T00:00:01.000Z','message':{'role':'user','content':'other branch','timestamp':1}}");
	assert_label(&f, 3, "'u2'", ",'timestamp':'2026-01-01T00:00:04.000Z','targetId':'u1','label':'again'");
	forked_free(&f);

	/* The same at a1: both labels, chained, in the Map's order. */
	fork_text(HEADER_CWD("/p") MSG("u1", "null", "user", "q") MSG("a1", "\"u1\"", "assistant", "a")
		  LABEL("l1", "\"a1\"", 2, "u1", "\"first\"") LABEL("l2", "\"l1\"", 3, "a1", "\"answer\""),
		  "a1", 0, NULL, PS_OK, &f);
	ck_assert_uint_eq(f.n, 5);
	assert_label(&f, 3, "'a1'", ",'timestamp':'2026-01-01T00:00:02.000Z','targetId':'u1','label':'first'");
	assert_label(&f, 4, id_of(&f, 3, b1), ",'timestamp':'2026-01-01T00:00:03.000Z','targetId':'a1','label':'answer'");
	forked_free(&f);
}
END_TEST

START_TEST(test_label_removed_later)
{
	struct forked f;
	char b1[16];
	/* u1's label is cleared (pi: a falsy label); a1's is cleared and set
	 * again, so it moves behind u2's. */
	fork_text(HEADER_CWD("/p") MSG("u1", "null", "user", "q") MSG("a1", "\"u1\"", "assistant", "a")
		  MSG("u2", "\"a1\"", "user", "q2")
		  LABEL("l1", "\"u2\"", 1, "u1", "\"gone\"") LABEL("l2", "\"l1\"", 2, "a1", "\"a1-old\"")
		  LABEL("l3", "\"l2\"", 3, "u2", "\"u2\"") LABEL("l4", "\"l3\"", 4, "u1", "\"\"")
		  ENTRY("label", "l5", "\"l4\"", 5, ",\"targetId\":\"a1\"")
		  LABEL("l6", "\"l5\"", 6, "a1", "\"a1-new\""),
		  "u2", 0, NULL, PS_OK, &f);
	ck_assert_uint_eq(f.n, 6);
	assert_label(&f, 4, "'u2'", ",'timestamp':'2026-01-01T00:00:03.000Z','targetId':'u2','label':'u2'");
	assert_label(&f, 5, id_of(&f, 4, b1), ",'timestamp':'2026-01-01T00:00:06.000Z','targetId':'a1','label':'a1-new'");
	forked_free(&f);
}
END_TEST

/* A label entry in the middle of the path, with children: it is dropped
 * and the entries after it are chained to the entry before it. */
START_TEST(test_label_in_the_middle_with_children)
{
	struct forked f;
	fork_text(HEADER_CWD("/p") MSG("u1", "null", "user", "q") LABEL("l1", "\"u1\"", 2, "u1", "\"mark\"")
		  LABEL("l2", "\"l1\"", 3, "u1", "\"mark2\"") MSG("a1", "\"l2\"", "assistant", "a")
		  MSG("u2", "\"a1\"", "user", "more"),
		  "u2", 0, NULL, PS_OK, &f);
	ck_assert_uint_eq(f.n, 5);
	assert_line(&f, 2, "{'type':'message','id':'a1','parentId':'u1','timestamp':'2026-01-01T00:00:01.000Z','message':{'role':'assistant','content':'a','timestamp':1}}");
	assert_line(&f, 3, "{'type':'message','id':'u2','parentId':'a1','timestamp':'2026-01-01T00:00:01.000Z','message':{'role':'user','content':'more','timestamp':1}}");
	assert_label(&f, 4, "'u2'", ",'timestamp':'2026-01-01T00:00:03.000Z','targetId':'u1','label':'mark2'");
	forked_free(&f);

	/* The leaf itself a label: the path ends at the entry before it. */
	fork_text(HEADER_CWD("/p") MSG("u1", "null", "user", "q") LABEL("l1", "\"u1\"", 2, "u1", "\"mark\""),
		  "l1", 0, NULL, PS_OK, &f);
	ck_assert_uint_eq(f.n, 3);
	assert_label(&f, 2, "'u1'", ",'timestamp':'2026-01-01T00:00:02.000Z','targetId':'u1','label':'mark'");
	forked_free(&f);
}
END_TEST

START_TEST(test_compaction_kept_from_a_label)
{
	struct forked f;
	fork_text(HEADER_CWD("/p") MSG("u1", "null", "user", "q") LABEL("l1", "\"u1\"", 2, "u1", "\"\"")
		  MSG("a1", "\"l1\"", "assistant", "a")
		  ENTRY("compaction", "c1", "\"a1\"", 3, ",\"summary\":\"s\",\"firstKeptEntryId\":\"l1\",\"tokensBefore\":5")
		  LABEL("l2", "\"c1\"", 4, "c1", "\"\"")
		  ENTRY("compaction", "c2", "\"l2\"", 5, ",\"summary\":\"s\",\"firstKeptEntryId\":\"l2\",\"tokensBefore\":5")
		  ENTRY("compaction", "c3", "\"c2\"", 6, ",\"firstKeptEntryId\":\"c3\",\"summary\":\"s\"")
		  ENTRY("compaction", "c4", "\"c3\"", 7, ",\"firstKeptEntryId\":\"elsewhere\"")
		  ENTRY("compaction", "c5", "\"c4\"", 8, ",\"summary\":\"no first kept\""),
		  "c5", 0, NULL, PS_OK, &f);
	ck_assert_uint_eq(f.n, 8);
	/* l1 -> a1, the entry kept after it; l2 -> c2 itself */
	assert_line(&f, 3, "{'type':'compaction','id':'c1','parentId':'a1','timestamp':'2026-01-01T00:00:03.000Z','summary':'s','firstKeptEntryId':'a1','tokensBefore':5}");
	assert_line(&f, 4, "{'type':'compaction','id':'c2','parentId':'c1','timestamp':'2026-01-01T00:00:05.000Z','summary':'s','firstKeptEntryId':'c2','tokensBefore':5}");
	assert_line(&f, 5, "{'type':'compaction','id':'c3','parentId':'c2','timestamp':'2026-01-01T00:00:06.000Z','firstKeptEntryId':'c3','summary':'s'}");
	assert_line(&f, 6, "{'type':'compaction','id':'c4','parentId':'c3','timestamp':'2026-01-01T00:00:07.000Z','firstKeptEntryId':'elsewhere'}");
	forked_free(&f);
}
END_TEST

/* Only parentId changes: key order, numbers and escapes as JSON.stringify
 * writes the parsed line; a missing parentId goes last, as the spread
 * {...entry, parentId} puts it. */
START_TEST(test_reserialised_as_javascript)
{
	struct forked f;
	fork_text(HEADER_CWD("/p")
		  "{\"type\":\"custom\",\"id\":\"x1\"," TS(1) ",\"data\":{\"b\":1,\"10\":2,\"a\":[1.50,1E3,-0]}}\n"
		  "{\"id\":\"x2\",\"type\":\"custom\",\"data\":\"\\u00e9\\/\\u001f\"," TS(2) ",\"parentId\":\"x1\"}\n",
		  "x2", 0, NULL, PS_OK, &f);
	ck_assert_uint_eq(f.n, 3);
	assert_line(&f, 1, "{'type':'custom','id':'x1','timestamp':'2026-01-01T00:00:01.000Z','data':{'10':2,'b':1,'a':[1.5,1000,0]},'parentId':null}");
	assert_line(&f, 2, "{'id':'x2','type':'custom','data':'\xc3\xa9/\\u001f','timestamp':'2026-01-01T00:00:02.000Z','parentId':'x1'}");
	forked_free(&f);
}
END_TEST

/* A version-1 file is migrated in memory as pi migrates it (ids the index
 * derives, firstKeptEntryIndex -> firstKeptEntryId); the source stays. */
START_TEST(test_version_1_migrated_in_memory)
{
	struct forked f;
	char b1[16], b2[16];
	fork_text("{\"type\":\"session\",\"id\":\"v1\"," TS(0) ",\"cwd\":\"/p\"}\n"
		  "{\"type\":\"message\"," TS(1) ",\"message\":{\"role\":\"user\",\"content\":\"q\"}}\n"
		  "{\"type\":\"message\"," TS(2) ",\"message\":{\"role\":\"hookMessage\",\"content\":\"h\"}}\n"
		  "{\"type\":\"compaction\"," TS(3) ",\"summary\":\"s\",\"firstKeptEntryIndex\":2,\"tokensBefore\":1}\n",
		  NULL, 2, NULL, PS_OK, &f);
	ck_assert_uint_eq(f.n, 4);
	char want[512];
	id_of(&f, 1, b1);
	id_of(&f, 2, b2);
	snprintf(want, sizeof want, "{'type':'message','timestamp':'2026-01-01T00:00:01.000Z','message':{'role':'user','content':'q'},'id':%s,'parentId':null}", b1);
	assert_line(&f, 1, want);
	snprintf(want, sizeof want, "{'type':'message','timestamp':'2026-01-01T00:00:02.000Z','message':{'role':'custom','content':'h'},'id':%s,'parentId':%s}", b2, b1);
	assert_line(&f, 2, want);
	/* entries[2] of pi's array (the header is 0): the second entry */
	snprintf(want, sizeof want, "{'type':'compaction','timestamp':'2026-01-01T00:00:03.000Z','summary':'s','tokensBefore':1,'id':%s,'parentId':%s,'firstKeptEntryId':%s}",
		 id_of(&f, 3, b1), b2, b2);
	id_of(&f, 1, b1);
	assert_line(&f, 3, want);
	forked_free(&f);
}
END_TEST

START_TEST(test_name_appended_as_session_info)
{
	struct forked f;
	char b1[16];
	fork_text(HEADER_CWD("/p") MSG("u1", "null", "user", "q") LABEL("l1", "\"u1\"", 2, "u1", "\"m\""),
		  "u1", 0, " \r\n my\r\r\nfork\n\xe2\x80\x83", PS_OK, &f);
	ck_assert_uint_eq(f.n, 4);
	json_t *v = line_json(&f, 3);
	const char *id = str_of(v, "id"), *ts = str_of(v, "timestamp");
	ck_assert(matches("^[0-9a-f]{8}$", id));
	ck_assert(matches("^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{3}Z$", ts));
	char want[256];
	snprintf(want, sizeof want, "{'type':'session_info','id':'%s','parentId':%s,'timestamp':'%s','name':'my fork'}", id,
		 id_of(&f, 2, b1), ts);
	assert_line(&f, 3, want);
	json_decref(v);
	forked_free(&f);

	fork_text(HEADER_CWD("/p") MSG("u1", "null", "user", "q"), "u1", 0, "bad \xff", PS_ERR_INVALID, &f);
	forked_free(&f);
}
END_TEST

START_TEST(test_refusals_leave_nothing)
{
	struct forked f;
	const char *two = HEADER_CWD("/p") MSG("u1", "null", "user", "q");
	fork_text(two, NULL, 1, NULL, PS_ERR_NOENT, &f);          /* no entry 1 */
	forked_free(&f);
	fork_text(two, NULL, PS_NIL, NULL, PS_ERR_NOENT, &f);
	forked_free(&f);
	/* no header: not a session */
	fork_text(MSG("u1", "null", "user", "q"), NULL, 0, NULL, PS_ERR_NOTSESSION, &f);
	forked_free(&f);
	/* a cwd pi would resolve against its own working directory */
	fork_text(HEADER_CWD("rel/dir") MSG("u1", "null", "user", "q"), "u1", 0, NULL, PS_ERR_INVALID, &f);
	forked_free(&f);
	fork_text(HEADER_CWD("~/p") MSG("u1", "null", "user", "q"), "u1", 0, NULL, PS_ERR_INVALID, &f);
	forked_free(&f);
	fork_text("{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n" MSG("u1", "null", "user", "q"), "u1", 0, NULL,
		  PS_ERR_INVALID, &f);
	forked_free(&f);
}
END_TEST

START_TEST(test_relative_parent_refused)
{
	char *path = helper_write(HEADER_CWD("/p") MSG("u1", "null", "user", "q"));
	struct ps_session *s = helper_open(path);
	char dir[64], *stem = NULL;
	helper_tmpdir(dir, "fork");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(sessionfork_create(s, 0, dfd, "parent.jsonl", NULL, 0600, (uid_t)-1, (gid_t)-1, &stem),
			 PS_ERR_INVALID);
	ck_assert_ptr_null(stem);
	ck_assert_uint_eq(dir_count(dir), 0);
	/* a directory we may not write: the file system's error, nothing made */
	close(dfd);
	dfd = open("/proc", O_RDONLY | O_DIRECTORY);
	ck_assert_int_ne(sessionfork_create(s, 0, dfd, "/p/x.jsonl", NULL, 0600, (uid_t)-1, (gid_t)-1, &stem), PS_OK);
	ck_assert_ptr_null(stem);
	close(dfd);
	helper_rmtree(dir);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_resolve)
{
	static const char *const cases[][3] = {
		{ NULL, "/a/b", "/a/b" },       { NULL, "/a//b/./c/../d/", "/a/b/d" },
		{ NULL, "/", "/" },             { NULL, "//", "/" },
		{ NULL, "/../..", "/" },        { NULL, "/a/..", "/" },
		{ "/w/x", "s.jsonl", "/w/x/s.jsonl" }, { "/w/x", "../y/./s", "/w/y/s" },
		{ "/w", "..", "/" },            { "/w/", "", "/w" },
		{ "/w", "/abs", "/abs" },       { NULL, "/a/.../b", "/a/.../b" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *r = sessionfork_resolve(cases[i][0], cases[i][1]);
		ck_assert_ptr_nonnull(r);
		ck_assert_str_eq(r, cases[i][2]);
		free(r);
	}
	ck_assert_ptr_null(sessionfork_resolve(NULL, "rel"));
	ck_assert_ptr_null(sessionfork_resolve("also-rel", "rel"));
}
END_TEST

/* JavaScript lists array-index keys first, in numeric order. */
START_TEST(test_jsonout_index_keys_first)
{
	json_t *v = json_loads("{\"b\":1,\"10\":2,\"2\":3,\"01\":4,\"-1\":5,\"4294967294\":6,\"4294967295\":7,\"0\":8,"
			       "\"x\":{\"9\":1,\"y\":2}}", 0, NULL);
	ck_assert_ptr_nonnull(v);
	char *text;
	size_t len;
	ck_assert_int_eq(jsonout_compact(v, &text, &len), PS_OK);
	char *want = q("{'0':8,'2':3,'10':2,'4294967294':6,'b':1,'01':4,'-1':5,'4294967295':7,'x':{'9':1,'y':2}}");
	ck_assert_str_eq(text, want);
	free(want);
	free(text);
	json_decref(v);
}
END_TEST

/* sessionforkfrom_create() on text: f as fork_text fills it. */
static void forkfrom_text(const char *session, const char *cwd, const char *parent, const char *name, ps_err expect,
			  struct forked *f)
{
	char *path = helper_write(session);
	size_t before_len, after_len;
	char *before = helper_slurp(path, &before_len);
	memset(f, 0, sizeof *f);
	helper_tmpdir(f->dir, "forkfrom");
	int dfd = open(f->dir, O_RDONLY | O_DIRECTORY), sfd = open(path, O_RDONLY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_ge(sfd, 0);
	ps_err err = sessionforkfrom_create(sfd, dfd, cwd, parent, name, 0600, (uid_t)-1, (gid_t)-1, &f->stem);
	close(dfd);
	close(sfd);
	ck_assert_int_eq(err, expect);
	char *after = helper_slurp(path, &after_len);
	ck_assert_uint_eq(before_len, after_len);
	ck_assert_int_eq(memcmp(before, after, before_len), 0);
	free(before);
	free(after);
	unlink(path);
	free(path);
	if (err) {
		ck_assert_uint_eq(dir_count(f->dir), 0);
		return;
	}
	ck_assert_uint_eq(dir_count(f->dir), 1);
	char file[256];
	size_t len;
	snprintf(file, sizeof file, "%s/%s.jsonl", f->dir, f->stem);
	f->text = helper_slurp(file, &len);
	ck_assert(len > 0 && f->text[len - 1] == '\n');
	for (char *p = f->text, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		ck_assert_uint_lt(f->n, 64);
		*nl = '\0';
		f->lines[f->n++] = p;
	}
}

/* The header's id and timestamp, and the file's name, are pi's. */
static void assert_forkfrom_header(const struct forked *f, const char *cwd, const char *parent)
{
	char want[512];
	ck_assert_uint_ge(f->n, 1);
	const char *h = f->lines[0];
	ck_assert_int_eq(strncmp(h, "{\"type\":\"session\",\"version\":3,\"id\":\"", 36), 0);
	const char *id = h + 36;
	ck_assert_uint_eq(strlen(f->stem), 24 + 1 + 36);
	ck_assert_int_eq(strncmp(id, f->stem + 25, 36), 0);
	snprintf(want, sizeof want, "\",\"cwd\":\"%s\",\"parentSession\":\"%s\"}", cwd, parent);
	ck_assert_str_eq(h + strlen(h) - strlen(want), want);
}

/* Every line, all branches, in file order, unmigrated (version 1 has no
 * ids, firstKeptEntryIndex stays), blank and broken lines and falsy
 * values left out, other values kept, later "session" lines dropped. */
START_TEST(test_forkfrom_copies_every_line_raw)
{
	struct forked f;
	forkfrom_text("{\"type\":\"session\",\"id\":\"v1\",\"cwd\":\"/src\"}\n"
		      "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\"},\"b\":1.50}\n"
		      "\n  \nnot json\nnull\n0\nfalse\n\"\"\n"
		      "[1]\n7\n"
		      "{\"type\":\"session\",\"id\":\"again\"}\n"
		      "{\"type\":\"compaction\",\"firstKeptEntryIndex\":0}\r\n"
		      "{\"type\":\"x\",\"id\":\"branch\",\"parentId\":\"nowhere\"}",
		      "/home//u/./p/../q/", "/store/--p--/parent.jsonl", NULL, PS_OK, &f);
	assert_forkfrom_header(&f, "/home/u/q", "/store/--p--/parent.jsonl");
	ck_assert_uint_eq(f.n, 6);
	assert_line(&f, 1, "{'type':'message','message':{'role':'user','content':'a'},'b':1.5}");
	assert_line(&f, 2, "[1]");
	assert_line(&f, 3, "7");
	assert_line(&f, 4, "{'type':'compaction','firstKeptEntryIndex':0}");
	assert_line(&f, 5, "{'type':'x','id':'branch','parentId':'nowhere'}");
	forked_free(&f);
	/* cwd NULL: the source header's, resolved. */
	forkfrom_text("{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/a//b/\"}\n", NULL, "/p.jsonl", NULL, PS_OK, &f);
	assert_forkfrom_header(&f, "/a/b", "/p.jsonl");
	ck_assert_uint_eq(f.n, 1);
	forked_free(&f);
}
END_TEST

/* The name goes after the last line copied, as appendSessionInfo on the
 * session forkFrom returns: its parentId that line's id, null when there
 * is none, left out when the line has no id. */
START_TEST(test_forkfrom_name_after_the_last_line)
{
	struct forked f;
	const char *H = "{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/c\"}\n";
	char text[512];
	snprintf(text, sizeof text, "%s{\"type\":\"m\",\"id\":\"e1\"}\n{\"type\":\"m\",\"id\":\"e2\",\"parentId\":null}\n", H);
	forkfrom_text(text, "/t", "/p.jsonl", " new\r\nname ", PS_OK, &f);
	ck_assert_uint_eq(f.n, 4);
	ck_assert_int_eq(strncmp(f.lines[3], "{\"type\":\"session_info\",\"id\":\"", 29), 0);
	ck_assert_ptr_nonnull(strstr(f.lines[3], "\",\"parentId\":\"e2\",\"timestamp\":\""));
	ck_assert_ptr_nonnull(strstr(f.lines[3], "\",\"name\":\"new name\"}"));
	forked_free(&f);
	forkfrom_text(H, "/t", "/p.jsonl", "n", PS_OK, &f);
	ck_assert_uint_eq(f.n, 2);
	ck_assert_ptr_nonnull(strstr(f.lines[1], "\",\"parentId\":null,\"timestamp\":\""));
	forked_free(&f);
	snprintf(text, sizeof text, "%s{\"type\":\"m\",\"id\":\"e1\"}\n[2]\n", H);
	forkfrom_text(text, "/t", "/p.jsonl", "n", PS_OK, &f);
	ck_assert_uint_eq(f.n, 4);
	ck_assert_ptr_null(strstr(f.lines[3], "parentId"));
	forked_free(&f);
}
END_TEST

START_TEST(test_forkfrom_refusals_leave_nothing)
{
	struct forked f;
	const char *H = "{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"rel\"}\n";
	forkfrom_text("", "/t", "/p.jsonl", NULL, PS_ERR_NOTSESSION, &f);
	forked_free(&f);
	forkfrom_text("\n\nnull\n", "/t", "/p.jsonl", NULL, PS_ERR_NOTSESSION, &f);
	forked_free(&f);
	forkfrom_text("{\"type\":\"m\",\"id\":\"x\"}\n{\"type\":\"session\",\"id\":\"s\"}\n", "/t", "/p.jsonl", NULL,
		      PS_ERR_NOTSESSION, &f);
	forked_free(&f);
	forkfrom_text("{\"type\":\"session\",\"id\":5}\n", "/t", "/p.jsonl", NULL, PS_ERR_NOTSESSION, &f);
	forked_free(&f);
	forkfrom_text(H, NULL, "/p.jsonl", NULL, PS_ERR_INVALID, &f); /* the header's cwd is relative */
	forked_free(&f);
	forkfrom_text(H, "t", "/p.jsonl", NULL, PS_ERR_INVALID, &f);
	forked_free(&f);
	forkfrom_text(H, "/t", "p.jsonl", NULL, PS_ERR_INVALID, &f);
	forked_free(&f);
	forkfrom_text(H, "/t", "/p.jsonl", "\xff", PS_ERR_INVALID, &f);
	forked_free(&f);
}
END_TEST

/* pi's getDefaultSessionDirPath: the leading '/' or '\\' dropped, every
 * '/', '\\' and ':' a '-', between "--" and "--". */
START_TEST(test_folder_named_as_pi_names_it)
{
	static const char *const cases[][2] = {
		{ "/home/ana/new-proj", "--home-ana-new-proj--" },
		{ "/srv/x:y/a-b c", "--srv-x-y-a-b c--" },
		{ "/", "----" },
		{ "\\share\\dir", "--share-dir--" },
		{ "/caf\xc3\xa9/~u", "--caf\xc3\xa9-~u--" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *name = sessionnew_folder_name(cases[i][0]);
		ck_assert_ptr_nonnull(name);
		ck_assert_str_eq(name, cases[i][1]);
		free(name);
	}
}
END_TEST

Suite *sessionfork_suite(void)
{
	Suite *s = suite_create("sessionfork");
	TCase *t = tcase_create("fork");
	tcase_add_test(t, test_leaf_is_first_entry);
	tcase_add_test(t, test_labels_on_and_off_the_path);
	tcase_add_test(t, test_label_removed_later);
	tcase_add_test(t, test_label_in_the_middle_with_children);
	tcase_add_test(t, test_compaction_kept_from_a_label);
	tcase_add_test(t, test_reserialised_as_javascript);
	tcase_add_test(t, test_version_1_migrated_in_memory);
	tcase_add_test(t, test_name_appended_as_session_info);
	tcase_add_test(t, test_refusals_leave_nothing);
	tcase_add_test(t, test_relative_parent_refused);
	tcase_add_test(t, test_resolve);
	tcase_add_test(t, test_jsonout_index_keys_first);
	suite_add_tcase(s, t);
	t = tcase_create("forkfrom");
	tcase_add_test(t, test_forkfrom_copies_every_line_raw);
	tcase_add_test(t, test_forkfrom_name_after_the_last_line);
	tcase_add_test(t, test_forkfrom_refusals_leave_nothing);
	suite_add_tcase(s, t);
	t = tcase_create("new");
	tcase_add_test(t, test_folder_named_as_pi_names_it);
	suite_add_tcase(s, t);
	return s;
}
