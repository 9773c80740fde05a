#include <math.h>
#include <string.h>
#include <time.h>
#include "sessionsmd.h"
#include "usage.h"

ps_err sessionsmd_header(struct buf *out, size_t count)
{
	size_t mark = out->len;
	if (buf_printf(out, "# Sessions\n\n%zu session%s, last active first (times in UTC).\n\n", count,
		       count == 1 ? "" : "s") ||
	    buf_puts(out, "| Title | Started | Last active | Messages | Branches | Cost | Directory |\n"
			  "| --- | --- | --- | ---: | ---: | ---: | --- |\n")) {
		out->len = mark;
		return PS_ERR_NOMEM;
	}
	return PS_OK;
}

/* text with what a table cell cannot hold as it is (`|`, and the
 * backslash that would escape it) escaped; the rest is left as typed. */
static int sessionsmd_cell(struct buf *out, const char *text)
{
	for (const char *p = text;;) {
		size_t run = strcspn(p, "|\\");
		if (buf_put(out, p, run))
			return -1;
		p += run;
		if (!*p)
			return 0;
		if (buf_putc(out, '\\') || buf_putc(out, *p++))
			return -1;
	}
}

static int sessionsmd_time(struct buf *out, double ms)
{
	if (isnan(ms) || ms < -8.64e15 || ms > 8.64e15)
		return buf_puts(out, "?");
	time_t t = (time_t)floor(ms / 1000);
	struct tm tm;
	char text[32];
	if (!gmtime_r(&t, &tm))
		return buf_puts(out, "?");
	int year = tm.tm_year + 1900;
	if (year < 1000 || year > 9999) /* strftime's %Y: as many digits as it takes, unpadded */
		return strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm) ? buf_puts(out, text) : buf_puts(out, "?");
	/* Two per row of sessions.md: strftime's locale machinery was a
	 * quarter of writing a row. */
	const int fields[] = { year / 100, year % 100, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min };
	static const char seps[] = { 0, '-', '-', ' ', ':' };
	size_t n = 0;
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		if (i >= 2)
			text[n++] = seps[i - 1];
		text[n++] = (char)('0' + fields[i] / 10);
		text[n++] = (char)('0' + fields[i] % 10);
	}
	return buf_put(out, text, n);
}

static int sessionsmd_url(struct buf *out, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)path; *p;) {
		const unsigned char *run = p;
		while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		       *p == '.' || *p == '_' || *p == '~' || *p == '/')
			p++;
		if (buf_put(out, run, (size_t)(p - run)))
			return -1;
		if (*p) {
			char escaped[3] = { '%', hex[*p >> 4], hex[*p & 15] };
			if (buf_put(out, escaped, sizeof escaped))
				return -1;
			p++;
		}
	}
	return 0;
}

/* " (N subagent sessions: $T in all)" where the session has any. */
static int sessionsmd_subagents(struct buf *out, const struct sessionsmd_row *row)
{
	char all[USAGE_COST_TEXT];
	if (!row->subagent_sessions)
		return 0;
	usage_cost_text(row->cost + row->subagent_cost, all);
	return buf_printf(out, " (%u subagent session%s: $%s in all)", (unsigned)row->subagent_sessions,
			  row->subagent_sessions == 1 ? "" : "s", all);
}

ps_err sessionsmd_row(struct buf *out, const struct sessionsmd_row *row)
{
	size_t mark = out->len;
	char cost[USAGE_COST_TEXT];
	const char *base = strrchr(row->dir, '/');
	usage_cost_text(row->cost, cost);
	if (buf_puts(out, "| ") || sessionsmd_cell(out, row->title) || buf_puts(out, " | ") ||
	    sessionsmd_time(out, row->created_ms) || buf_puts(out, " | ") || sessionsmd_time(out, row->modified_ms) ||
	    buf_printf(out, " | %llu | %u | $%s", (unsigned long long)row->messages, (unsigned)row->branches, cost) ||
	    sessionsmd_subagents(out, row) || buf_puts(out, " | [") ||
	    sessionsmd_cell(out, base ? base + 1 : row->dir) || buf_puts(out, "](") || sessionsmd_url(out, row->dir) ||
	    buf_puts(out, "/) |\n")) {
		out->len = mark;
		return PS_ERR_NOMEM;
	}
	return PS_OK;
}
