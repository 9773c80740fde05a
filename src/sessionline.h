/* What the index of one session file (session.c) reads of one line the
 * scanner took (scan.h) without parsing it: string fields in place, the
 * entry's kind for its file name, its time, and what usage.c counts of it.
 * Private to session.c; the types are sessiondata.h's. */
#ifndef PS_SESSIONLINE_H
#define PS_SESSIONLINE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "ps_error.h"
#include "scan.h"
#include "sessiondata.h"

/* What the lines indexed last decoded, so that the next ones of a session
 * (a handful of kinds, a few model names over thousands of messages) find
 * theirs without decoding and interning again.  One per scan of a file,
 * never shared between sessions: it holds s's pool offsets. */
struct sessionline_memo;

/* A new memo, or NULL when out of memory (then every line decodes: the
 * functions below take a NULL memo).  Release with sessionline_memo_free. */
struct sessionline_memo *sessionline_memo_new(void);
void sessionline_memo_free(struct sessionline_memo *m);

/* A scanned string field's decoded text: in place when it needs no
 * decoding (no escape, valid UTF-8; then no NUL either, which JSON only
 * spells escaped), else decoded into *owned (new), which the caller frees.
 * PS_ERR_INVALID when f is no string. */
ps_err sessionline_field_view(const struct scan_field *f, const char **text, size_t *len, char **owned);

/* The kind shown in the entry's file name, as a pool offset of s: the role
 * for messages (toolResult with its tool), else the entry type, escaped
 * for a name (escape.h) within SESSION_MAX_KIND bytes.  Read from parsed
 * when the line had to be parsed (its fields escaped), else from r. */
ps_err sessionline_kind(struct ps_session *s, struct sessionline_memo *memo, const struct scan_result *r,
			const json_t *parsed, uint32_t *off);

/* The entry's timestamp in ms since the epoch, 0 when it has none. */
int64_t sessionline_time(const struct scan_result *r, const json_t *parsed);

/* Notes what usage.c needs of a line the scanner read plainly in e: its
 * class (PS_ENTRY_USAGE) and its usage, appended to s->usages. */
ps_err sessionline_note_usage(struct ps_session *s, struct sessionline_memo *memo, struct ps_entry *e,
			      const struct scan_result *r);

#endif
