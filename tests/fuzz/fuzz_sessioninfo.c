/* libFuzzer harness: sessioninfo's fast path against its jansson path.
 *
 * sessioninfo_load() reads user and assistant messages from the scanner's
 * spans (sessioninfo.c) and leaves what it is not sure of to jansson;
 * sessioninfo_load_jansson() reads every one with jansson, as before the
 * fast path.  Both must give the same info, field by field (text and its
 * lowercase byte for byte, times bit for bit).  Also read incrementally:
 * the fast info of a prefix, refreshed after the rest is appended, must
 * equal the reference of the whole.  sessioninfo_load_listing() (what
 * sessions.md reads, without the search text) must list the same, and so
 * must the listing read from the index's own lines (session_open_observed),
 * wherever the index says they are pi's.  A
 * skim (sessioninfo_load_skim) with a query's needles that rules the
 * session out (search_query_rules_out) must be right: the whole file's
 * info does not match the query; one that proves the match (skim_proven)
 * must list what the whole file lists, and the whole file must match if
 * pi lists it.  Prints at exit how many messages the
 * fast path took, so a change that makes it decline everything shows.
 *
 * Input: 2 control bytes + a session file.  Byte 0 bit 0 prepends a valid
 * header line; byte 1 is where the file is split for the incremental read
 * (byte/255 of it).  The file is in /dev/shm (sessioninfo opens a path). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "fuzz_common.h"
#include "search.h"
#include "session.h"
#include "sessioninfo.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[256];
static int fd = -1;
static unsigned long runs, fast_messages, ruled_out, made_whole, proven, observed;

static void report(void)
{
	fprintf(stderr, "fuzz_sessioninfo: %lu inputs, %lu messages read by the fast path, %lu skims ruled out, %lu made whole, "
		"%lu proven, %lu listings read from the index's lines\n", runs, fast_messages, ruled_out, made_whole, proven,
		observed);
	if (fd >= 0)
		unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(path, sizeof path, "%s/psfuzz-sessioninfo-%d-XXXXXX", dir, (int)getpid());
	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		exit(1);
	}
	atexit(report);
	return 0;
}

static void put(const char *buf, size_t len, size_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fz_fail("pwrite: %s", strerror(errno));
		buf += n;
		len -= (size_t)n;
		off += (size_t)n;
	}
}

static int same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof a);
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int same_buf(const struct buf *a, const struct buf *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
}

/* What pi's list shows: all but the search text (a listing info has none). */
static void compare_listing(const char *what, const struct sessioninfo *f, const struct sessioninfo *j)
{
	size_t fl, jl;
	const char *ff = sessioninfo_first_message(f, &fl), *jf = sessioninfo_first_message(j, &jl);
	FZ_CHECK(f->is_session == j->is_session, "%s: is_session %d, jansson %d", what, f->is_session, j->is_session);
	FZ_CHECK(!strcmp(f->id, j->id) && !strcmp(f->cwd, j->cwd), "%s: id or cwd differs", what);
	FZ_CHECK(same_str(f->name, j->name), "%s: name differs", what);
	FZ_CHECK(same_double(f->created_ms, j->created_ms), "%s: created %.17g, jansson %.17g", what,
		 f->created_ms, j->created_ms);
	FZ_CHECK(same_double(f->modified_ms, j->modified_ms), "%s: modified %.17g, jansson %.17g", what,
		 f->modified_ms, j->modified_ms);
	FZ_CHECK(f->message_count == j->message_count, "%s: messageCount %llu, jansson %llu", what,
		 (unsigned long long)f->message_count, (unsigned long long)j->message_count);
	FZ_CHECK(fl == jl && !memcmp(ff, jf, fl), "%s: firstMessage differs", what);
}

static void compare(const char *what, const struct sessioninfo *f, const struct sessioninfo *j)
{
	compare_listing(what, f, j);
	FZ_CHECK(same_buf(&f->text, &j->text), "%s: allMessagesText differs:\n  fast    %.300s\n  jansson %.300s",
		 what, f->text.data ? f->text.data : "", j->text.data ? j->text.data : "");
	FZ_CHECK(same_buf(&f->lower, &j->lower), "%s: the lowercase text differs", what);
}

/* Queries whose tokens a skim can rule out, with letters that escapes,
 * U+212A and U+0130 may spell, a slash (JSON's \/), and a word of the
 * header's cwd (matched fuzzily too). */
static const char *const SKIM_QUERIES[] = { "k", "i", "ok", "a b", "fz", "x/y", "text", "hi there", "zq 1",
					    "k \"a b\"", "i \xc3\xa9" /* with a token no skim tests: read whole */ };

/* A skim that rules the session out must be right about the file. */
static void check_skims(const struct sessioninfo *whole)
{
	for (size_t i = 0; i < sizeof SKIM_QUERIES / sizeof *SKIM_QUERIES; i++) {
		struct search_query *q = NULL;
		struct sessioninfo_needle *needles = NULL;
		struct sessioninfo *skim = NULL;
		char *why = NULL;
		size_t n = 0;
		int match = 0;
		if (search_query_parse(SKIM_QUERIES[i], &q, &why) != PS_OK)
			fz_fail("query %s does not parse", SKIM_QUERIES[i]);
		if (search_query_skim_needles(q, &needles, &n) == 0 && n &&
		    sessioninfo_load_skim(path, needles, n, NULL, NULL, &skim) == PS_OK && search_query_rules_out(q, skim)) {
			ruled_out++;
			FZ_CHECK(search_query_matches(q, whole, &match) == PS_OK && !match,
				 "a skim ruled out a session that matches %s", SKIM_QUERIES[i]);
		}
		sessioninfo_free(skim);
		skim = NULL;
		/* Made a whole read once it saw every token: then it is the
		 * whole file's info, field by field. */
		struct search_skim_seen seen = { q, 0 };
		if (n && sessioninfo_load_skim(path, needles, n, search_query_skim_enough, &seen, &skim) == PS_OK) {
			if (skim->skim_whole) {
				made_whole++;
				compare("skim made whole", skim, whole);
			}
			if (skim->skim_proven) {
				/* A listing read of the whole file, and the whole
				 * file matches if pi lists it. */
				proven++;
				compare_listing("skim proven", skim, whole);
				FZ_CHECK(search_query_matches(q, whole, &match) == PS_OK && match == whole->is_session,
					 "a skim proved %s of a session that %s", SKIM_QUERIES[i],
					 whole->is_session ? "does not match" : "pi does not list");
			}
			if (search_query_rules_out(q, skim))
				FZ_CHECK(search_query_matches(q, whole, &match) == PS_OK && !match,
					 "a skim made whole ruled out a session that matches %s", SKIM_QUERIES[i]);
		}
		sessioninfo_free(skim);
		free(needles);
		search_query_free(q);
	}
}

/* how: 0 the fast path, 1 jansson only, 2 the listing (sessions.md's). */
static struct sessioninfo *load(int how)
{
	struct sessioninfo *info = NULL;
	ps_err err = how == 1 ? sessioninfo_load_jansson(path, &info)
		   : how == 2 ? sessioninfo_load_listing(path, &info)
			      : sessioninfo_load(path, &info);
	if (err == PS_ERR_NOMEM)
		return NULL; /* an input too big for the limits: nothing to compare */
	FZ_CHECK(err == PS_OK, "sessioninfo_load%s: %s", how == 1 ? "_jansson" : how == 2 ? "_listing" : "",
		 ps_strerror(err));
	return info;
}

static ps_err observed_line(void *ctx, const char *line, size_t len, const struct scan_result *r)
{
	return sessioninfo_listing_line(ctx, line, len, r);
}

/* The listing read from the index's lines (session_open_observed, what
 * sessions.md reads) against the file read on its own. */
static void check_observed(const struct sessioninfo *ref, const char *file, size_t len)
{
	struct sessioninfo *got = NULL;
	struct ps_session *s = NULL;
	if (sessioninfo_listing_new(&got) != PS_OK)
		fz_fail("sessioninfo_listing_new failed");
	struct session_observer obs = { observed_line, got, 0 };
	if (session_open_observed(path, &obs, &s) != PS_OK)
		fz_fail("session_open_observed failed");
	int pis_lines = !memchr(file, '\r', len) && (!len || file[len - 1] == '\n');
	if (obs.unusable == pis_lines)
		fz_fail("observed: unusable %d where the file's lines are %spi's", obs.unusable, pis_lines ? "" : "not ");
	if (!obs.unusable) {
		if (sessioninfo_listing_end(got, s->path, s->dev, s->ino, s->size, s->mtime_ns) != PS_OK)
			fz_fail("sessioninfo_listing_end failed");
		compare_listing("observed", got, ref);
		observed++;
	}
	session_free(s);
	sessioninfo_free(got);
}

static const char HEADER[] = "{\"type\":\"session\",\"version\":3,\"id\":\"fz\",\"timestamp\":"
			     "\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/fz\"}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	int header = data[0] & 1;
	size_t body_len = size - 2, hlen = header ? sizeof HEADER - 1 : 0, len = hlen + body_len;
	char *file = malloc(len + 1);
	if (!file)
		return 0;
	memcpy(file, HEADER, hlen);
	memcpy(file + hlen, data + 2, body_len);
	size_t cut = len * data[1] / 255;

	if (ftruncate(fd, 0) < 0)
		fz_fail("ftruncate: %s", strerror(errno));
	put(file, len, 0);
	struct sessioninfo *fast = load(0), *ref = load(1), *listing = load(2);
	if (fast && ref) {
		compare("whole", fast, ref);
		fast_messages += fast->fast_messages;
		check_skims(ref);
	}
	if (listing && ref)
		compare_listing("listing", listing, ref);
	if (ref)
		check_observed(ref, file, len);
	sessioninfo_free(listing);
	sessioninfo_free(fast);
	fast = NULL;

	/* The prefix, then the rest appended: a refresh reads only that. */
	if (ftruncate(fd, 0) < 0)
		fz_fail("ftruncate: %s", strerror(errno));
	put(file, cut, 0);
	if (ref && (fast = load(0))) {
		put(file + cut, len - cut, cut);
		ps_err err = sessioninfo_refresh(fast, NULL);
		FZ_CHECK(err == PS_OK || err == PS_ERR_NOMEM, "sessioninfo_refresh: %s", ps_strerror(err));
		/* The reference was read before the append: its mtime may differ,
		 * and with it a modified time that falls back on it. */
		if (err == PS_OK) {
			if (fast->mtime_ns != ref->mtime_ns) {
				sessioninfo_free(ref);
				ref = load(1);
			}
			if (ref)
				compare("appended", fast, ref);
		}
	}
	sessioninfo_free(fast);
	sessioninfo_free(ref);
	free(file);
	runs++;
	return 0;
}
