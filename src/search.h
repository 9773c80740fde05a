/* pi's /resume search (session-selector-search.js of pi 1.6.0): a query
 * parsed as pi parses it, and pi's decision whether a session matches.
 * In pi's "recent" order only that decision counts (the order is the
 * sessions' own, sessioninfo_sort), so scores are not computed.  The query
 * language and the differences from pi are in docs/search.md.
 *
 * A parsed query is immutable: any number of threads may match with it at
 * once. */
#ifndef PS_SEARCH_H
#define PS_SEARCH_H

#include <stddef.h>
#include "ps_error.h"
#include "sessioninfo.h"

struct search_query;

/* Parses text (a C string; invalid UTF-8 is read with replacement
 * characters, as Node decodes it).  On success *query is new (release with
 * search_query_free); an empty query matches every session.  On
 * PS_ERR_INVALID (an invalid regular expression, or "re:" with nothing
 * after it: pi lists nothing then) *message is a new human-readable reason
 * (the caller frees it); *message is NULL otherwise. */
ps_err search_query_parse(const char *text, struct search_query **query, char **message);
void search_query_free(struct search_query *query);

/* What one query may spend: the CPU time its regular expression's
 * matching takes, summed over every subject it is tried on (the parsing
 * and loading of sessions is not counted), and whether the asker gave up.
 * A matcher that is passed a budget checks it between chunks of start
 * positions (SEARCH_CHUNK), so a long subject is cut too; with no budget
 * (NULL) only PCRE2's per-start-position limits bound the work.  A budget
 * belongs to one thread (the CPU time is that thread's). */
struct search_budget {
	long long cpu_ns;           /* the matching CPU time allowed in all */
	_Atomic long long spent_ns; /* spent so far, by every thread that matches for the query */
	int (*gave_up)(void *ctx);  /* 1 when the asker gave up (or NULL) */
	void *ctx;
};

/* The budget of one query of the mount: a second of matching CPU. */
#define SEARCH_BUDGET_NS 1000000000LL

void search_budget_init(struct search_budget *b, long long cpu_ns, int (*gave_up)(void *ctx), void *ctx);

/* Whether pi's matchSession says info matches: 1 or 0 in *match.  A
 * session pi does not list (is_session 0) never matches.  PS_ERR_TOOBIG
 * when the regular expression gave up at its match limit (pi would have
 * kept trying: the caller reports it). */
ps_err search_query_matches(const struct search_query *query, const struct sessioninfo *info, int *match);
/* The same within budget (see struct search_budget): PS_ERR_COSTLY or
 * PS_ERR_INTR too. */
ps_err search_query_matches_in(const struct search_query *query, const struct sessioninfo *info,
			       struct search_budget *budget, int *match);

/* Whether one entry's text text[0..len) (UTF-8) is a place the query
 * found: it contains one of the query's tokens or phrases literally
 * (case-insensitively, a phrase with any white space where it has white
 * space, as pi compares them), or the regular expression matches it.  A
 * token's fuzzy (scattered) matches never mark an entry, and an empty
 * query marks none.  Same errors as search_query_matches. */
ps_err search_text_matches(const struct search_query *query, const char *text, size_t len, int *match);
ps_err search_text_matches_in(const struct search_query *query, const char *text, size_t len,
			      struct search_budget *budget, int *match);

/* Ruling sessions out before reading them whole.  A plain token of
 * printable ASCII (no quote or backslash) that is in a session's message
 * text stands in its file's bytes too, in either case, on the line of its
 * message, unless an escape or one of the two non-ASCII letters whose
 * lowercase is ASCII spells part of it; and the name, id and cwd come from
 * the header and session_info lines.  So a skim of the lines holding
 * those needles (sessioninfo_load_skim) that lacks such a token proves
 * that the whole file lacks it.
 *
 * The needles to skim with, in *needles (new; their texts are the
 * query's, valid while it is) and *n: 0 with *n 0 when the query has no
 * such token (a regular expression, phrases, non-ASCII words), and -1
 * when memory ran out. */
int search_query_skim_needles(const struct search_query *query, struct sessioninfo_needle **needles, size_t *n);

/* What a skim has seen of the query's plain tokens, for
 * search_query_skim_enough (one per skim, zeroed but for the query). */
struct search_skim_seen {
	const struct search_query *query;
	unsigned long long found;   /* a bit per skimmable token, in order */
};

/* A skim's enough (sessioninfo_load_skim), ctx a struct search_skim_seen:
 * 1 once every plain token a skim can rule out has been seen in the text
 * read, when the skim can no longer rule the session out (nothing past
 * that would change it but what only the whole file tells) and the file
 * is better read whole at once (the skim becomes a whole read); 2 when
 * moreover the query is nothing but such tokens: the session matches if
 * pi lists it at all, which a listing read of the file tells (the skim
 * becomes one, skim_proven). */
int search_query_skim_enough(void *ctx, const char *lower, size_t len);

/* 1 when skim, read with those needles, proves the session cannot match:
 * it is no session pi lists, or one of the query's plain ASCII tokens
 * matches none of its fields.  0 when only the whole file can tell (and
 * when memory ran out).  A skim that became a whole read (skim_whole) is
 * judged as the whole file; one that became a listing read (skim_proven)
 * rules the session out only when pi does not list it. */
int search_query_rules_out(const struct search_query *query, const struct sessioninfo *skim);

#endif
