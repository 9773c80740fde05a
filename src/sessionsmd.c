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
	for (const char *p = text; *p; p++)
		if (((*p == '|' || *p == '\\') && buf_putc(out, '\\')) ||
		    buf_putc(out, *p))
			return -1;
	return 0;
}

static int sessionsmd_time(struct buf *out, double ms)
{
	if (isnan(ms) || ms < -8.64e15 || ms > 8.64e15)
		return buf_puts(out, "?");
	time_t t = (time_t)floor(ms / 1000);
	struct tm tm;
	char text[32];
	if (!gmtime_r(&t, &tm) || !strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm))
		return buf_puts(out, "?");
	return buf_puts(out, text);
}

static int sessionsmd_url(struct buf *out, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		int plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
			    *p == '-' || *p == '.' || *p == '_' || *p == '~' || *p == '/';
		if (plain ? buf_putc(out, (char)*p) : buf_printf(out, "%%%c%c", hex[*p >> 4], hex[*p & 15]))
			return -1;
	}
	return 0;
}

ps_err sessionsmd_row(struct buf *out, const struct sessionsmd_row *row)
{
	size_t mark = out->len;
	char cost[USAGE_COST_TEXT];
	const char *base = strrchr(row->dir, '/');
	usage_cost_text(row->cost, cost);
	if (buf_puts(out, "| ") || sessionsmd_cell(out, row->title) || buf_puts(out, " | ") ||
	    sessionsmd_time(out, row->created_ms) || buf_puts(out, " | ") || sessionsmd_time(out, row->modified_ms) ||
	    buf_printf(out, " | %llu | %u | $%s | [", (unsigned long long)row->messages, (unsigned)row->branches, cost) ||
	    sessionsmd_cell(out, base ? base + 1 : row->dir) || buf_puts(out, "](") || sessionsmd_url(out, row->dir) ||
	    buf_puts(out, "/) |\n")) {
		out->len = mark;
		return PS_ERR_NOMEM;
	}
	return PS_OK;
}
