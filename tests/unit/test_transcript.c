/* transcript_text(): the exact document for a hand-made session with every
 * kind of entry, and the append-friendly property the mount relies on for
 * `tail -f`: the transcript of an entry's path is a byte prefix of the
 * transcript of each child's path (so of every descendant's), over the
 * fixtures and over a session that grows line by line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glob.h>
#include "helpers.h"
#include "layout.h"
#include "suites.h"
#include "transcript.h"

static const char kinds_session[] =
	"{\"type\":\"session\",\"version\":3,\"id\":\"sess-1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n"
	"{\"type\":\"model_change\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"provider\":\"anthropic\",\"modelId\":\"claude-x\"}\n"
	"{\"type\":\"thinking_level_change\",\"id\":\"t1\",\"parentId\":\"m1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"thinkingLevel\":\"high\"}\n"
	"{\"type\":\"message\",\"id\":\"u1\",\"parentId\":\"t1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Look at this:\"},{\"type\":\"image\",\"mimeType\":\"image/png\",\"data\":\"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC\"},{\"type\":\"image\",\"mimeType\":\"image/jpeg\",\"data\":\"Zm9v\"}],\"timestamp\":1}}\n"
	"{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"u1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"Plan:\\n\\nlook\"},{\"type\":\"text\",\"text\":\"It is a dot.\"},{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"bash\",\"arguments\":{\"command\":\"echo ```\"}}],\"provider\":\"anthropic\",\"model\":\"claude-x\",\"usage\":{},\"stopReason\":\"toolUse\",\"timestamp\":2}}\n"
	"{\"type\":\"message\",\"id\":\"r1\",\"parentId\":\"a1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"c1\",\"toolName\":\"bash\",\"content\":[{\"type\":\"text\",\"text\":\"a\\n````\\nb\"}],\"isError\":true,\"timestamp\":3}}\n"
	"{\"type\":\"message\",\"id\":\"b1\",\"parentId\":\"r1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"bashExecution\",\"command\":\"make\",\"output\":\"ok\\n\",\"exitCode\":2,\"cancelled\":false,\"truncated\":false,\"timestamp\":4}}\n"
	"{\"type\":\"compaction\",\"id\":\"k1\",\"parentId\":\"b1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"summary\":\"Earlier work.\",\"firstKeptEntryId\":\"u1\",\"tokensBefore\":5000}\n"
	"{\"type\":\"custom\",\"id\":\"x1\",\"parentId\":\"k1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"customType\":\"ext\",\"data\":{}}\n"
	"{\"type\":\"usage\",\"id\":\"g1\",\"parentId\":\"x1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"kind\":\"cache_warm\",\"provider\":\"anthropic\",\"model\":\"claude-x\",\"usage\":{}}\n"
	"{\"type\":\"label\",\"id\":\"l1\",\"parentId\":\"g1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"targetId\":\"u1\",\"label\":\"start\"}\n"
	"{\"type\":\"session_info\",\"id\":\"s1\",\"parentId\":\"l1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"name\":\"Demo\"}\n"
	"{\"type\":\"custom_message\",\"id\":\"cm1\",\"parentId\":\"s1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"customType\":\"note\",\"content\":\"Remember tests.\",\"display\":false}\n"
	"{\"type\":\"branch_summary\",\"id\":\"bs1\",\"parentId\":\"cm1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"fromId\":\"a1\",\"summary\":\"Tried X.\\n\"}\n"
	"{\"type\":\"message\",\"id\":\"u2\",\"parentId\":\"bs1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"bad \\ud800 char\\nsecond line\",\"timestamp\":5}}\n"
	"{\"type\":\"message\",\"id\":\"a2\",\"parentId\":\"u2\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[],\"provider\":\"openai\",\"model\":\"gpt-x\",\"stopReason\":\"error\",\"errorMessage\":\"boom\\nretry\",\"timestamp\":6}}\n"
	"{\"type\":\"message\",\"id\":\"b2\",\"parentId\":\"a2\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"bashExecution\",\"command\":\"cd /x &&\\nmake\",\"output\":\"\",\"exitCode\":0,\"cancelled\":true,\"truncated\":true,\"fullOutputPath\":\"/tmp/o\",\"timestamp\":7}}\n"
	"{\"type\":\"label\",\"id\":\"l2\",\"parentId\":\"b2\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"targetId\":\"u1\"}\n"
	"{\"type\":\"context_edit\",\"id\":\"ce\",\"parentId\":\"l2\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"targetId\":\"r1\",\"replacement\":null}\n"
	"{\"type\":\"future_thing\",\"id\":\"fu\",\"parentId\":\"ce\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"x\":1}\n";

static const char kinds_expected[] =
	"# Session sess-1\n"
	"\n"
	"*Started 2026-01-01T00:00:00.000Z. Working directory /p*\n"
	"\n"
	"*Model: anthropic/claude-x*\n"
	"\n"
	"*Thinking level: high*\n"
	"\n"
	"## User\n"
	"\n"
	"Look at this:\n"
	"\n"
	"![image 1](0003-user.u1.images/1.png)\n"
	"\n"
	"![image 2](0003-user.u1.images/2.jpg)\n"
	"\n"
	"## Assistant (anthropic/claude-x)\n"
	"\n"
	"> Plan:\n"
	">\n"
	"> look\n"
	"\n"
	"It is a dot.\n"
	"\n"
	"**bash**\n"
	"\n"
	"````json\n"
	"{\n"
	"  \"command\": \"echo ```\"\n"
	"}\n"
	"````\n"
	"\n"
	"## Tool result: bash (error)\n"
	"\n"
	"`````\n"
	"a\n"
	"````\n"
	"b\n"
	"`````\n"
	"\n"
	"## Bash: make\n"
	"\n"
	"```\n"
	"ok\n"
	"```\n"
	"\n"
	"*Exit code 2*\n"
	"\n"
	"## Summary of the conversation before this point\n"
	"\n"
	"Earlier work.\n"
	"\n"
	"*Compacted 5000 tokens. Kept the entries from u1 on*\n"
	"\n"
	"*Label \"start\" on entry u1*\n"
	"\n"
	"*Session name: Demo*\n"
	"\n"
	"## Custom message: note (hidden)\n"
	"\n"
	"Remember tests.\n"
	"\n"
	"## Branch summary\n"
	"\n"
	"Tried X.\n"
	"\n"
	"*Summarizes the abandoned branch that ended at entry a1*\n"
	"\n"
	"## User\n"
	"\n"
	"bad \xef\xbf\xbd char\n"
	"second line\n"
	"\n"
	"## Assistant (openai/gpt-x)\n"
	"\n"
	"*Error: boom retry*\n"
	"\n"
	"## Bash\n"
	"\n"
	"```sh\n"
	"cd /x &&\n"
	"make\n"
	"```\n"
	"\n"
	"*Cancelled. Output truncated, full output in /tmp/o*\n"
	"\n"
	"*Label removed from entry u1*\n"
	"\n"
	"*Context edit of entry r1*\n"
	"\n"
	"*future_thing entry*\n"
	"\n";

static char *text_of(const struct ps_session *s, uint32_t tip, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	ck_assert_int_eq(transcript_text(s, tip, NULL, &buf, &n), PS_OK);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(buf[n], '\0');
	if (len)
		*len = n;
	return buf;
}

static uint32_t find(const struct ps_session *s, const char *id)
{
	return session_find(s, id, strlen(id));
}

START_TEST(test_transcript_every_kind)
{
	char *path = helper_write(kinds_session);
	struct ps_session *s = helper_open(path);
	size_t len;
	ck_assert_int_eq(s->n_entries, 19);
	char *t = text_of(s, session_leaf(s), &len);
	ck_assert_uint_eq(len, strlen(kinds_expected));
	ck_assert_str_eq(t, kinds_expected);
	/* Deterministic: the same bytes every time. */
	char *again = text_of(s, session_leaf(s), NULL);
	ck_assert_str_eq(again, t);
	free(again);
	free(t);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_transcript_title_only_and_errors)
{
	char *path = helper_write(kinds_session);
	struct ps_session *s = helper_open(path);
	char *buf = (char *)1;
	size_t len;
	char *t = text_of(s, PS_NIL, &len);
	ck_assert_str_eq(t, "# Session sess-1\n\n*Started 2026-01-01T00:00:00.000Z. Working directory /p*\n\n");
	free(t);
	ck_assert_int_eq(transcript_text(s, s->n_entries, NULL, &buf, &len), PS_ERR_NOENT);
	ck_assert_ptr_null(buf);
	session_free(s);
	unlink(path);
	free(path);

	path = helper_write("{\"type\":\"message\"}\n");
	s = helper_open(path);
	ck_assert_int_eq(transcript_text(s, PS_NIL, NULL, &buf, &len), PS_ERR_NOTSESSION);
	session_free(s);
	unlink(path);
	free(path);

	/* A header without timestamp or cwd: the title alone. */
	path = helper_write("{\"type\":\"session\",\"version\":3,\"id\":\"a\\nb\"}\n");
	s = helper_open(path);
	t = text_of(s, PS_NIL, NULL);
	ck_assert_str_eq(t, "# Session a b\n\n");
	free(t);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* NUL bytes in a text are copied, and counted in the length. */
START_TEST(test_transcript_nul_bytes)
{
	char *path = helper_write(HDR MSG("a", "null", "user", "x\\u0000y"));
	struct ps_session *s = helper_open(path);
	size_t len;
	char *t = text_of(s, 0, &len);
	static const char want[] = "# Session sess-1\n\n*Started 2026-01-01T00:00:00.000Z. Working directory /p*\n\n"
				   "## User\n\nx\0y\n\n";
	ck_assert_uint_eq(len, sizeof want - 1);
	ck_assert(memcmp(t, want, len) == 0);
	free(t);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* Checks that T(parent of e) (T(PS_NIL) for a root) is a prefix of T(e);
 * equal when e adds nothing (custom and usage entries).  *prev/prev_text
 * cache the last transcript made: in file order an entry's parent is
 * usually the entry before it, so each transcript is made once. */
static void check_prefix_cached(const struct ps_session *s, uint32_t e, const char *where, uint32_t *prev,
				char **prev_text)
{
	uint32_t parent = s->entries[e].parent;
	char *p = parent != PS_NIL && parent == *prev ? *prev_text : text_of(s, parent, NULL);
	size_t plen = strlen(p), elen;
	char *t = text_of(s, e, &elen);
	/* strlen: the fixtures hold no NUL bytes. */
	ck_assert_msg(plen <= elen && memcmp(p, t, plen) == 0,
		      "%s: the transcript of entry %u (line %u) does not extend its parent's", where, e,
		      s->entries[e].line);
	if (p != *prev_text)
		free(p);
	free(*prev_text);
	*prev_text = t;
	*prev = e;
}

static void check_prefix(const struct ps_session *s, uint32_t e, const char *where)
{
	uint32_t prev = PS_NIL;
	char *prev_text = NULL;
	check_prefix_cached(s, e, where, &prev, &prev_text);
	free(prev_text);
}

/* Every entry of the hand-made session, and of a branched variant of it
 * (every entry also forked from the root and from u1). */
START_TEST(test_transcript_prefix_handmade)
{
	char *path = helper_write(kinds_session);
	helper_append(path, MSG("f1", "null", "user", "another root")
			    MSG("f2", "\"u1\"", "user", "a fork after u1")
			    MSG("f3", "\"f2\"", "assistant", "its reply"));
	struct ps_session *s = helper_open(path);
	ck_assert_int_eq(s->n_entries, 22);
	ck_assert_uint_ge(s->n_branches, 3);
	for (uint32_t e = 0; e < s->n_entries; e++)
		check_prefix(s, e, "hand-made");
	/* A fork shares its parent's transcript up to the fork. */
	size_t la, lb;
	char *a = text_of(s, find(s, "a1"), &la);
	char *b = text_of(s, find(s, "f2"), &lb);
	char *u = text_of(s, find(s, "u1"), NULL);
	ck_assert(strncmp(a, u, strlen(u)) == 0 && strncmp(b, u, strlen(u)) == 0);
	ck_assert_str_ne(a, b);
	free(a);
	free(b);
	free(u);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* Over the fixtures.  Checking every entry renders every path, which for
 * the two 1000-entry v1 files is ~500,000 entry renders (about a minute);
 * by default every entry up to depth 48, every branch's first entry and
 * tip, and 4 entries spread over the deeper rest are checked, and
 * PS_SLOW_TESTS=1 checks every entry.  The branched v3 fixture is always
 * checked whole. */
START_TEST(test_transcript_prefix_fixtures)
{
	glob_t g;
	int all = getenv("PS_SLOW_TESTS") != NULL;
	ck_assert_int_eq(glob("tests/data/fixtures/*.jsonl", 0, NULL, &g), 0);
	ck_assert_uint_ge(g.gl_pathc, 3);
	for (size_t f = 0; f < g.gl_pathc; f++) {
		struct ps_session *s = helper_open(g.gl_pathv[f]);
		uint32_t deep = 0, checked = 0, prev = PS_NIL;
		char *prev_text = NULL;
		ck_assert_uint_gt(s->n_entries, 0);
		for (uint32_t e = 0; e < s->n_entries; e++)
			deep += s->entries[e].depth > 48;
		uint32_t stride = deep / 4 + 1, seen_deep = 0;
		for (uint32_t e = 0; e < s->n_entries; e++) {
			const struct ps_entry *en = &s->entries[e];
			const struct ps_branch *br = &s->branches[en->branch];
			int pick = all || en->depth <= 48 || br->first == e || br->tip == e;
			if (!pick && en->depth > 48)
				pick = seen_deep++ % stride == stride / 2;
			if (!pick)
				continue;
			check_prefix_cached(s, e, g.gl_pathv[f], &prev, &prev_text);
			checked++;
		}
		ck_assert_uint_gt(checked, 0);
		free(prev_text);
		session_free(s);
	}
	globfree(&g);
}
END_TEST

/* A session written line by line, as pi writes it: after every line, the
 * transcript of every entry already there is byte-identical to what it was
 * (a later session_info renaming the session included), and the old
 * leaf's transcript is a prefix of the new one's when the new line is its
 * child. */
START_TEST(test_transcript_growth)
{
	FILE *in = fopen("tests/data/fixtures/pi-1.6.0-v3-branched.jsonl", "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	char *texts[64] = { 0 };
	char *path = NULL;
	struct ps_session *s = NULL;

	ck_assert_ptr_nonnull(in);
	while ((n = getline(&line, &cap, in)) > 0) {
		if (!path) {
			path = helper_write(line);
			s = helper_open(path);
			continue;
		}
		uint32_t old_leaf = session_leaf(s);
		helper_append(path, line);
		ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
		ck_assert_uint_le(s->n_entries, 64);
		for (uint32_t e = 0; e < s->n_entries; e++) {
			char *t = text_of(s, e, NULL);
			if (texts[e]) {
				ck_assert_str_eq(t, texts[e]);
				free(t);
			} else {
				texts[e] = t;
			}
		}
		uint32_t leaf = session_leaf(s);
		if (old_leaf != PS_NIL && s->entries[leaf].parent == old_leaf)
			ck_assert(strncmp(texts[leaf], texts[old_leaf], strlen(texts[old_leaf])) == 0);
	}
	/* Renaming the session changes no transcript: the title is the id. */
	ck_assert_uint_gt(s->n_entries, 0);
	char rename[256];
	snprintf(rename, sizeof rename,
		 "{\"type\":\"session_info\",\"id\":\"zz\",\"parentId\":\"%s\",\"timestamp\":\"2026-11-29T19:12:00.000Z\","
		 "\"name\":\"Renamed\"}\n",
		 session_str(s, s->entries[session_leaf(s)].id));
	uint32_t before = s->n_entries;
	helper_append(path, rename);
	ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
	ck_assert_uint_eq(s->n_entries, before + 1);
	for (uint32_t e = 0; e < before; e++) {
		char *t = text_of(s, e, NULL);
		ck_assert_str_eq(t, texts[e]);
		free(t);
	}
	char *t = text_of(s, before, NULL);
	ck_assert_ptr_nonnull(strstr(t, "*Session name: Renamed*\n\n"));
	free(t);
	for (size_t i = 0; i < 64; i++)
		free(texts[i]);
	free(line);
	fclose(in);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

/* An image in a branch is linked through the branch's id name: a label
 * that comes later renames the branch in listings but changes no byte of
 * a transcript (tail -f would see a rewritten file), and the link keeps
 * resolving -- also for an id too long for a name (shortened with a hash),
 * which is only found by comparing names. */
START_TEST(test_transcript_label_keeps_links)
{
	char long_id[200];
	memset(long_id, 'b', sizeof long_id - 1);
	long_id[sizeof long_id - 1] = '\0';
	char text[2048];
	snprintf(text, sizeof text,
		 HDR MSG("u1", "null", "user", "q") MSG("u2", "\"u1\"", "user", "main")
		 "{\"type\":\"message\",\"id\":\"%s\",\"parentId\":\"u1\",\"timestamp\":\"t\",\"message\":"
		 "{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"}],"
		 "\"timestamp\":1}}\n", long_id);
	char *path = helper_write(text);
	struct ps_session *s = helper_open(path);
	uint32_t img = find(s, long_id);
	char *before = text_of(s, img, NULL);
	char *link = strstr(before, "![image 1](");
	ck_assert_ptr_nonnull(link);
	char target[512];
	ck_assert_int_eq(sscanf(link, "![image 1](%511[^)])", target), 1);

	snprintf(text, sizeof text, "{\"type\":\"label\",\"id\":\"l1\",\"parentId\":\"%s\",\"timestamp\":\"t\","
		 "\"targetId\":\"%s\",\"label\":\"pics\"}\n", long_id, long_id);
	helper_append(path, text);
	ck_assert_int_eq(session_refresh(s, NULL), PS_OK);
	char *after = text_of(s, img, NULL);
	ck_assert_str_eq(after, before);
	/* listed by its label now, and still reached by the link's path */
	char *listed = layout_branch_name(s, s->entries[img].branch);
	ck_assert_str_eq(listed, "0002~pics");
	free(listed);
	char *dir = strndup(target, strcspn(target, "/"));
	struct layout_node node;
	ck_assert_int_eq(layout_resolve(s, dir, &node), PS_OK);
	ck_assert_int_eq(node.kind, LAYOUT_TREE_DIR);
	ck_assert_uint_eq(node.branch, s->entries[img].branch);
	/* the link's target less its URL escapes is the image itself */
	ck_assert_ptr_null(strchr(target, '%'));
	ck_assert_int_eq(layout_resolve(s, target, &node), PS_OK);
	ck_assert_int_eq(node.kind, LAYOUT_IMAGE);
	ck_assert_uint_eq(node.entry, img);
	free(dir);
	free(before);
	free(after);
	session_free(s);
	unlink(path);
	free(path);
}
END_TEST

Suite *transcript_suite(void)
{
	Suite *s = suite_create("transcript");
	TCase *tc = tcase_create("transcript");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_transcript_every_kind);
	tcase_add_test(tc, test_transcript_title_only_and_errors);
	tcase_add_test(tc, test_transcript_nul_bytes);
	tcase_add_test(tc, test_transcript_prefix_handmade);
	tcase_add_test(tc, test_transcript_prefix_fixtures);
	tcase_add_test(tc, test_transcript_growth);
	tcase_add_test(tc, test_transcript_label_keeps_links);
	suite_add_tcase(s, tc);
	return s;
}
