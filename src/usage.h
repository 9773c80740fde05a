/* What a session spent: tokens and cost over every entry of the file.
 *
 * The totals are kept with the session (a usage.c cache hung on it with
 * session_attach, released by the session when its index is rebuilt) and
 * extended by the entries appended since, so usage.csv over a project costs
 * a pass over each session once, not on every read.  Hence the non-const
 * sessions.
 *
 * Ownership: buffers returned are new and belong to the caller; the
 * session is borrowed; the running totals are usage.c's own (above).
 *
 * What is summed is what pi 1.6.0's AgentSession.getSessionStats() sums,
 * over ALL entries of the file (every branch, compacted history included:
 * it is what was billed), in file order:
 *   - the usage of every assistant message,
 *   - the usage of every toolResult message that has one (nested LLM work
 *     a tool did),
 *   - the usage of every compaction and branch_summary entry that has one,
 *   - the usage of every `usage` entry (pi 1.6.0 writes
 *     {"type":"usage","kind":...,"provider":...,"model":...,"usage":{...}}).
 * From each usage object: input, output, cacheRead, cacheWrite and
 * totalTokens as stored, and cost.total; a field that is not a number
 * counts 0.  Sums are doubles, added in file order as pi adds them, and
 * printed in JavaScript's shortest round-trip form (jsonout_number), except
 * usage.csv's cost, rounded to cents (usage_cost_text). */
#ifndef PS_USAGE_H
#define PS_USAGE_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "ps_error.h"
#include "session.h"
#include "usagescan.h" /* struct usage_sum */


/* One day's usage of one model within a session: day counts days since
 * 1970-01-01 in UTC (USAGE_UNDATED: no entry up to this one had a
 * timestamp), model is byModel's model (NULL for usage without a model of
 * its own; model_len bytes, it may hold NUL).  The day of a usage is that
 * of the entry carrying it (its "timestamp"), or, when it has none, that of
 * the latest entry before it in the file that has one. */
#define USAGE_UNDATED INT32_MIN
struct usage_day {
	int32_t day;
	const char *model;
	size_t model_len;
	struct usage_sum sum;
};
/* Calls fn with each (day, model) of the session's usage, the same sums as
 * usage.json's split by day; fn returns nonzero when memory ran out (then
 * PS_ERR_NOMEM).  The row is borrowed for the call.  PS_ERR_NOTSESSION for
 * a file without a header. */
typedef int (*usage_day_fn)(void *ctx, const struct usage_day *row);
ps_err usage_days(struct ps_session *s, usage_day_fn fn, void *ctx);

/* The summary as pretty JSON (jsonout_pretty: two-space indentation, final
 * newline):
 *   {"total":{"input":N,"output":N,"cacheRead":N,"cacheWrite":N,
 *             "totalTokens":N,"cost":N},
 *    "byModel":[{"provider":S,"model":S,"input":N,...,"cost":N}, ...],
 *    "messages":N,"assistantMessages":N}
 * byModel has one row per provider and model, in order of first use.  The
 * model is an assistant message's responseModel when it has one (the model
 * that answered, as pi's cost breakdown attributes it), else its model;
 * for `usage` entries their provider and model.  Usage with no model of its
 * own (tool results, compactions, branch summaries) is one row with
 * "provider":null,"model":null, pi's "Tools/summaries" bucket.  messages
 * counts `message` entries, assistantMessages those with role assistant.
 * PS_ERR_NOTSESSION for a file without a header. */
ps_err usage_json(struct ps_session *s, char **buf, size_t *len);

/* What a session's subagents spent (family.h): every child session
 * below it, its children's children too, each file once. */
struct usage_family {
	uint64_t sessions;
	struct usage_sum sum; /* added in start order, depth first */
};
/* usage_json, with, after the session's own keys (unchanged):
 *   "subagents":{"sessions":N,"total":{the six sums of fam}},
 *   "withSubagents":{the six sums: the session's total plus fam's}.
 * fam NULL is usage_json. */
ps_err usage_json_family(struct ps_session *s, const struct usage_family *fam, char **buf, size_t *len);
/* The session's total (usage.json's "total"). */
ps_err usage_sum_total(struct ps_session *s, struct usage_sum *out);
/* Adds u to to, field by field, as the totals are added. */
void usage_sum_plus(struct usage_sum *to, const struct usage_sum *u);

/* The total cost (usage.json's total.cost) and the number of `message`
 * entries (usage.json's messages: pi's messageCount).  PS_ERR_NOTSESSION
 * for a file without a header. */
ps_err usage_totals(struct ps_session *s, double *cost, uint64_t *messages);

/* A cost as usage.csv prints it: rounded to cents the way ccusage prints
 * costs (JavaScript's toFixed(2): the nearest, ties away from zero), so
 * "30.330197699999985" reads "30.33".  usage.json keeps the full double
 * (it is for programs, as ccusage's --json). */
#define USAGE_COST_TEXT 48
void usage_cost_text(double d, char out[USAGE_COST_TEXT]);
/* The same from JavaScript's digits of d, for every d: what
 * usage_cost_text does where d*100 is near a tie or d is large (and what
 * a test holds its quicker way to). */
void usage_cost_text_exact(double d, char out[USAGE_COST_TEXT]);

/* The CSV header line matching usage_csv_row(), with its newline:
 * project,session,id,name,cwd,start,lastActivity,messages,input,output,
 * cacheRead,cacheWrite,cost.  PS_ERR_NOMEM (out as it was) when memory
 * runs out. */
ps_err usage_csv_header(struct buf *out);

/* One CSV field as usage.csv writes them (quoted when it must be; s NULL
 * is empty), then ',' or, last, a newline; a number in JavaScript's
 * shortest form; a cost rounded to cents (usage_cost_text).  -1 when
 * memory runs out (out may hold part of the field). */
int usage_csv_field(struct buf *out, const char *s, size_t n, int last);
int usage_csv_num(struct buf *out, double d, int last);
int usage_csv_cost(struct buf *out, double d, int last);

/* Appends one CSV row (newline-terminated) to out: project and
 * session_name_in_store as given (the store directory and the file name
 * without .jsonl, as the mount names them; NULL is empty), the session id,
 * the display name (empty when none), the header's cwd and timestamp (as
 * stored), the latest entry timestamp (ISO-8601 UTC with milliseconds,
 * empty when no entry has one), the message count, the four token sums and
 * the cost.  Fields are quoted per RFC 4180 when they hold a comma, a
 * quote, CR or LF (quotes doubled); lines end in LF, not CRLF, so awk and
 * cut work on them (RFC 4180 readers accept LF).  PS_ERR_NOTSESSION for a
 * file without a header; on any error out is left as it was. */
ps_err usage_csv_row(struct ps_session *s, const char *project, const char *session_name_in_store,
		     struct buf *out);

#endif
