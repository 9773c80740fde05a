/* pi's SessionInfo of one session file (buildSessionInfo in pi 1.6.0's
 * session-manager.js): what /resume lists and its search box matches.
 * Computed in one pass over the file: every line is validated by the
 * scanner (scan.h); the header and session_info entries are parsed with
 * jansson, user and assistant messages read from the scanner's spans (with
 * jansson only where that fast path is not sure), the rest skipped; and
 * extended in place when the file
 * only grew: pi's store is append-only, so a warm info costs the new bytes.
 *
 * Memory: everything an info holds is its own and counted by
 * sessioninfo_bytes(), so a caller keeping many can hold them within a
 * budget.  Not thread-safe: one writer at a time; concurrent readers of an
 * info nobody refreshes are fine. */
#ifndef PS_SESSIONINFO_H
#define PS_SESSIONINFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "buf.h"
#include "ps_error.h"

/* What pi derives from the lines read so far; private to sessioninfo.c
 * except as the fields below describe. */
struct sessioninfo_state {
	int header;            /* 0 none yet, 1 found, -1 the file is no session */
	int dropped;           /* pi's reader threw (a message without a message,
				* a name that is no string...): pi lists nothing */
	uint64_t message_count;
	double last_activity;  /* ms; NaN while no message had an activity time */
	size_t first_off, first_len; /* firstMessage within text; first_len 0: none */
	size_t text_len, lower_len;  /* the text buffers' lengths */
	size_t n_messages;     /* pieces joined into text */
	char *name;            /* trimmed; NULL for none */
};

/* What a skim (sessioninfo_load_skim) picks the lines it reads by. */
enum sessioninfo_needle_kind {
	NEEDLE_EXACT,    /* the bytes as they are */
	NEEDLE_CASELESS, /* text is ASCII lowercase: a line's ASCII letters in either case */
	NEEDLE_ESCAPE,   /* a \uXXXX escape that JSON decodes to an ASCII character other
			  * than a control one, or to U+0130 or U+212A (the two letters whose
			  * lowercase is ASCII); text is ignored */
};

struct needleset;

struct sessioninfo_needle {
	enum sessioninfo_needle_kind kind;
	const char *text;
	size_t len;
};

struct sessioninfo {
	char *path;            /* new: the file's path */
	/* The file as last read: an info is current while these match. */
	dev_t dev;
	ino_t ino;
	uint64_t size;
	int64_t mtime_ns;

	/* 1 when pi would list the file (buildSessionInfo gives an info). */
	int is_session;
	char *id;              /* the header's id; "" when not a string */
	char *cwd;             /* the header's cwd; "" when not a string */
	const char *name;      /* borrowed from the state: NULL when none */
	double created_ms;     /* new Date(header.timestamp); NaN when invalid */
	double modified_ms;    /* last message activity, else the header's
				* time, else the file's mtime (as pi) */
	uint64_t message_count;
	/* firstMessage is text.data[first_off .. first_off+first_len) or,
	 * when first_len is 0, "(no messages)": sessioninfo_first_message(). */
	/* allMessagesText (pi's join with " ") and its toLowerCase (jscase.h),
	 * both NUL-terminated. */
	struct buf text, lower;

	/* private */
	struct sessioninfo_state cur;       /* all lines, a trailing unterminated one included */
	struct sessioninfo_state committed; /* the lines that ended with a line break */
	uint64_t committed_off;             /* where the unterminated line starts */
	unsigned char tail[64];             /* the bytes before committed_off, to tell */
	uint32_t tail_len;                  /* an append from a rewrite */
	double header_ms;                   /* the header's time when a string, else NaN */
	int jansson_only;                   /* sessioninfo_load_jansson's */
	int listing_only;                   /* sessioninfo_load_listing's: text holds
					     * firstMessage only, lower nothing */
	uint64_t fast_messages;             /* messages the fast path read (tests) */
	const struct needleset *skim;       /* sessioninfo_load_skim's: the lines it reads */
	size_t skim_escape;                 /* which of its needles is \\u (NEEDLE_ESCAPE), or SIZE_MAX */
	int (*skim_enough)(void *ctx, const char *lower, size_t len);
	void *skim_ctx;
	int skim_whole;                     /* its enough() made it a whole read: sessioninfo_load's */
	int skim_proven;                    /* its enough() said 2: a listing read of the whole
					     * file followed, sessioninfo_load_listing's */
};

/* Reads the session file at path (copied) into a new info (release with
 * sessioninfo_free).  A file that is not a session still gives an info,
 * with is_session 0.  PS_ERR_IO/NOENT when it cannot be read. */
ps_err sessioninfo_load(const char *path, struct sessioninfo **out);

/* What pi's session list shows of the file (is_session, id, cwd, name,
 * created, modified, message_count, firstMessage), read as
 * sessioninfo_load reads it, without allMessagesText: text holds the
 * first user message's text only, lower nothing.  For sessions.md, which
 * needs no search text: it skips keeping and lowercasing the text (a
 * quarter of a store's bytes).  Not for search/, and never refreshed:
 * load it again. */
ps_err sessioninfo_load_listing(const char *path, struct sessioninfo **out);

/* sessioninfo_load_listing's info built from lines another reader splits
 * and scans (session.h's session_observer: the index reads the file once
 * for both), exactly as that load reads the same lines: a new info with
 * sessioninfo_listing_new, each line in file order, as pi's reader splits
 * the file, to sessioninfo_listing_line with the scanner's reading (NULL:
 * the line is no JSON object, or blank), then sessioninfo_listing_end
 * with what the file was when read.  Each fails only when memory runs out
 * (PS_ERR_NOMEM); release the info with sessioninfo_free either way. */
struct scan_result;
ps_err sessioninfo_listing_new(struct sessioninfo **out);
ps_err sessioninfo_listing_line(struct sessioninfo *info, const char *line, size_t len, const struct scan_result *r);
/* path (copied) and the stamp: the file the lines were read from. */
ps_err sessioninfo_listing_end(struct sessioninfo *info, const char *path, dev_t dev, ino_t ino, uint64_t size,
			       int64_t mtime_ns);

/* The info of the file as if it held only the lines that sessioninfo_load
 * reads before it knows the header, and the lines holding one of the
 * needles (needles[0..n), borrowed for the call; at most NEEDLESET_MAX,
 * needleset.h): a line is kept or left out whole.  For a search's proof that a session cannot match
 * (search_query_rules_out), at the cost of a substring search where few
 * lines hold a needle.  Never refreshed.  PS_ERR_INVALID for more needles
 * than a set takes, or an empty one.  enough (may be NULL) is told the
 * lowercase text each line read after the header adds (ctx passed on);
 * when it says 1 (the caller will want the file read whole anyway), the
 * skim turns into sessioninfo_load's whole read, from the bytes it holds
 * where the file's start is still among them, and says so in skim_whole:
 * *out is then the whole file's info.  When it says 2 (what the caller
 * wanted of the text is proven, only the rest of the listing is not), the
 * skim turns into sessioninfo_load_listing's read the same way, and says
 * so in skim_proven: *out is then the whole file's listing info. */
ps_err sessioninfo_load_skim(const char *path, const struct sessioninfo_needle *needles, size_t n,
			     int (*enough)(void *ctx, const char *lower, size_t len), void *ctx,
			     struct sessioninfo **out);

/* sessioninfo_load reading every user and assistant message with jansson,
 * as it did before its fast path (and does for what that declines): the
 * reference the fast path is tested against (tests/fuzz/fuzz_sessioninfo.c). */
ps_err sessioninfo_load_jansson(const char *path, struct sessioninfo **out);

/* Brings info up to date with its file: nothing is read when dev, inode,
 * size and mtime are unchanged; only the new bytes when the file grew and
 * its end before them is what was read; else the whole file again.
 * *changed (may be NULL) is set when anything was read.  On an error the
 * info is left as it was. */
ps_err sessioninfo_refresh(struct sessioninfo *info, int *changed);

/* pi's firstMessage: borrowed, valid until the next refresh. */
const char *sessioninfo_first_message(const struct sessioninfo *info, size_t *len);

/* The bytes the info holds in memory, itself included. */
size_t sessioninfo_bytes(const struct sessioninfo *info);

void sessioninfo_free(struct sessioninfo *info);

/* The text pi's allMessagesText takes from one message (extractTextContent:
 * a string content as it is, text blocks joined with " "), appended to
 * out: 1 when message is a user or assistant message with text, 0 when it
 * gives none, -1 when memory runs out.  For the places a search marks
 * (search_text_matches) and the titles (title.h). */
int sessioninfo_message_text(const json_t *message, struct buf *out);

/* Sorts infos as pi's sortSessionInfos does: modified newest first, and
 * (JavaScript's sort is stable) in the given order where equal. */
void sessioninfo_sort(struct sessioninfo **infos, size_t n);

#endif
