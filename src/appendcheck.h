/* What an entry must be to be appended (appendcheck.c): a JSON object of
 * a type pi writes, whose message, content blocks, ids and references
 * (parentId, a label's target, a tool result's call) hold up against the
 * session and the entries before it in the same write.  For append.c. */
#ifndef PS_APPENDCHECK_H
#define PS_APPENDCHECK_H

#include <jansson.h>
#include "appenditem.h"
#include "session.h"

/* The ids an entry may refer to: the session's, and those of the items
 * before it in the same write. */
struct append_known {
	const struct ps_session *s;
	json_t *const *batch;
	size_t n;
	const struct append_item *item; /* the entry's own, NULL when checked alone */
};

/* Checks entry (borrowed) against k: PS_OK, or the error with its reason
 * in err. */
ps_err append_check(const struct append_known *k, const json_t *entry, struct append_error *err);

/* Sets err to code and the reason fmt says; returns code. */
ps_err append_error_set(struct append_error *err, ps_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
