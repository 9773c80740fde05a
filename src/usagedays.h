/* Usage over time: the usage of many sessions summed per day (UTC) and
 * model, and written as usage-daily.csv, usage-monthly.csv,
 * usage-daily-models.csv and usage.svg (docs/layout.md), in the shape of
 * ccusage's daily and monthly reports.  The sums are usage.c's
 * (usage_days), so the columns over every day add up to usage.csv's over
 * every session.
 *
 * A session's share is a blob (usagedays_session_blob), so the overview
 * files can keep it per session file (filememo.h) and add it again without
 * reading the session.
 *
 * Ownership: the table is the caller's; blobs and texts are appended to
 * the caller's buffers.  Not thread-safe (one table per build). */
#ifndef PS_USAGEDAYS_H
#define PS_USAGEDAYS_H

#include <stddef.h>
#include "buf.h"
#include "ps_error.h"
#include "session.h"

/* What usage without a model of its own (tool results, compactions, branch
 * summaries: usage.json's null model) is called in the files. */
#define USAGEDAYS_NO_MODEL "(tools/summaries)"

enum usagedays_file {
	USAGEDAYS_DAILY,        /* date,modelsUsed,inputTokens,...,totalCost */
	USAGEDAYS_MONTHLY,      /* month,modelsUsed,... */
	USAGEDAYS_DAILY_MODELS, /* date,modelName,...,cost: one row per day and model */
	USAGEDAYS_SVG,          /* cost per day, stacked by model */
};

struct usagedays;
ps_err usagedays_new(struct usagedays **out);
void usagedays_free(struct usagedays *t);

/* Appends the session's (day, model) rows to out as a blob.
 * PS_ERR_NOTSESSION for a file without a header, PS_ERR_NOMEM (out as it
 * was). */
ps_err usagedays_session_blob(struct ps_session *s, struct buf *out);
/* Adds a blob's rows to the table.  PS_ERR_NOMEM, PS_ERR_INVALID for a
 * blob not made by usagedays_session_blob (nothing added then). */
ps_err usagedays_add(struct usagedays *t, const void *blob, size_t len);

/* Appends the file's text over the rows added.  title names what the
 * rows cover (the SVG's title says it).  PS_ERR_NOMEM. */
ps_err usagedays_write(struct usagedays *t, enum usagedays_file file, const char *title, struct buf *out);

#endif
