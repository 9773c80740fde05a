/* sessions.md: a folder's sessions as one Markdown table, newest first,
 * for people (usage.csv is for programs): title, when each started and
 * was last active, its messages, branches and cost, and a link to its
 * directory.  Formatting only: the caller gathers the values (fs/overview.c).
 *
 * Ownership: out is the caller's; on an error it is left as it was. */
#ifndef PS_SESSIONSMD_H
#define PS_SESSIONSMD_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "ps_error.h"

struct sessionsmd_row {
	const char *title;      /* one line (title.h) */
	double created_ms;      /* NaN: not a date */
	double modified_ms;     /* pi's `modified` */
	uint64_t messages;
	uint32_t branches;      /* the session directory and its forks */
	double cost;            /* US dollars */
	const char *dir;        /* the session directory, relative to the file */
	/* Its subagents' sessions (family.h) and what they cost: shown in
	 * the cost cell, "$0.59 (4 subagent sessions: $2.10 in all)", only
	 * where there are any. */
	uint32_t subagent_sessions;
	double subagent_cost;
};

/* The heading, a line saying how many sessions and in what order, and the
 * table's header.  PS_ERR_NOMEM. */
ps_err sessionsmd_header(struct buf *out, size_t count);

/* One table row: cells with `|` and `\` escaped, times in UTC as
 * "YYYY-MM-DD HH:MM", the cost rounded to cents as usage.csv rounds it,
 * and the link's target percent-encoded (RFC 3986: all but unreserved
 * characters and '/'), so any directory name is one link.  PS_ERR_NOMEM. */
ps_err sessionsmd_row(struct buf *out, const struct sessionsmd_row *row);

#endif
