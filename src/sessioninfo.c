/* pi's buildSessionInfo over one file, read once (sessioninfo.h).  What pi
 * does, line by line: Node's readline splits at \n, \r\n and a lone \r;
 * JSON.parse skips what is not JSON; the first value that parses must be a
 * header ({"type":"session"}), else the file is no session; then
 * session_info entries set the name and message entries count, give their
 * activity time and, for user and assistant messages, their text. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "fileio.h"
#include "jscase.h"
#include "jsonline.h"
#include "msgtext.h"
#include "needleset.h"
#include "jstext.h"
#include "scan.h"
#include "sessioninfo.h"

#define INFO_CHUNK (1u << 20)

static void state_reset(struct sessioninfo_state *st)
{
	free(st->name);
	memset(st, 0, sizeof *st);
	st->last_activity = NAN;
}

static int state_copy(struct sessioninfo_state *dst, const struct sessioninfo_state *src)
{
	char *name = NULL;
	if (src->name && !(name = strdup(src->name)))
		return -1;
	free(dst->name);
	*dst = *src;
	dst->name = name;
	return 0;
}

/* new Date(v).getTime() for a JSON value: NaN where JavaScript gives NaN
 * (objects and arrays, which JavaScript would turn into strings first, are
 * taken as NaN: docs/search.md). */
static double info_date_ms(const json_t *v)
{
	if (!v)
		return NAN;
	if (json_is_string(v)) {
		int ok;
		double ms = jstext_iso_to_ms(json_string_value(v), &ok);
		return ok ? ms : NAN;
	}
	if (json_is_number(v)) {
		double x = json_number_value(v);
		if (!isfinite(x) || fabs(x) > JSTEXT_MAX_TIME_MS)
			return NAN;
		return trunc(x) + 0.0;
	}
	if (json_is_null(v) || json_is_false(v))
		return 0;
	if (json_is_true(v))
		return 1;
	return NAN;
}

/* Number#toString: the shortest digits that read back as x, in
 * JavaScript's choice of plain or exponent notation. */
static int info_put_number(struct buf *out, double x)
{
	if (x == 0)
		return buf_putc(out, '0');
	if (isnan(x))
		return buf_puts(out, "NaN");
	if (isinf(x))
		return buf_puts(out, x < 0 ? "-Infinity" : "Infinity");
	char tmp[40], digits[24];
	int prec;
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec - 1, x);
		if (strtod(tmp, NULL) == x)
			break;
	}
	/* tmp: [-]d[.ddd]e±XX */
	const char *p = tmp;
	int neg = *p == '-';
	p += neg;
	int k = 0;
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[k++] = *p;
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = 0;
	int n = atoi(p + 1) + 1;
	struct buf *b = out;
	if (neg && buf_putc(b, '-') < 0)
		return -1;
	if (k <= n && n <= 21) {
		if (buf_put(b, digits, (size_t)k) < 0)
			return -1;
		for (int i = k; i < n; i++)
			if (buf_putc(b, '0') < 0)
				return -1;
		return 0;
	}
	if (0 < n && n <= 21)
		return buf_printf(b, "%.*s.%s", n, digits, digits + n);
	if (-6 < n && n <= 0) {
		if (buf_puts(b, "0.") < 0)
			return -1;
		for (int i = 0; i < -n; i++)
			if (buf_putc(b, '0') < 0)
				return -1;
		return buf_puts(b, digits);
	}
	if (buf_putc(b, digits[0]) < 0)
		return -1;
	if (k > 1 && buf_printf(b, ".%s", digits + 1) < 0)
		return -1;
	return buf_printf(b, "e%c%d", n - 1 < 0 ? '-' : '+', abs(n - 1));
}

/* What Array#join makes of a value: strings as they are, null (and a
 * missing key) as "", arrays joined with ",", objects "[object Object]". */
static int info_put_js_string(struct buf *out, const json_t *v)
{
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v))
		return buf_put(out, json_string_value(v), json_string_length(v));
	if (json_is_number(v))
		return info_put_number(out, json_number_value(v));
	if (json_is_boolean(v))
		return buf_puts(out, json_is_true(v) ? "true" : "false");
	if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++)
			if ((i && buf_putc(out, ',') < 0) || info_put_js_string(out, json_array_get(v, i)) < 0)
				return -1;
		return 0;
	}
	return buf_puts(out, "[object Object]");
}

static int json_is_str(const json_t *v, const char *s)
{
	return json_is_string(v) && json_string_length(v) == strlen(s) && !strcmp(json_string_value(v), s);
}

/* extractTextContent into piece; -1 on memory, 1 when pi's code throws. */
static int info_extract_text(const json_t *content, struct buf *piece)
{
	if (json_is_string(content))
		return buf_put(piece, json_string_value(content), json_string_length(content));
	if (!json_is_array(content))
		return 1; /* content.filter is not a function */
	int any = 0;
	for (size_t i = 0; i < json_array_size(content); i++) {
		const json_t *block = json_array_get(content, i);
		if (json_is_null(block))
			return 1; /* block.type of null */
		if (!json_is_object(block) || !json_is_str(json_object_get(block, "type"), "text"))
			continue;
		if ((any++ && buf_putc(piece, ' ') < 0) || info_put_js_string(piece, json_object_get(block, "text")) < 0)
			return -1;
	}
	return 0;
}

static ps_err info_message(struct sessioninfo *info, const json_t *entry)
{
	struct sessioninfo_state *st = &info->cur;
	const json_t *msg = json_object_get(entry, "message");
	if (!msg || json_is_null(msg)) {
		st->dropped = 1; /* typeof message.role throws */
		return PS_OK;
	}
	const json_t *role = json_object_get(msg, "role");
	if (!json_is_object(msg) || !json_is_string(role) || !json_object_get(msg, "content"))
		return PS_OK;
	int user = json_is_str(role, "user");
	if (!user && !json_is_str(role, "assistant"))
		return PS_OK;
	const json_t *ts = json_object_get(msg, "timestamp");
	double t = json_is_number(ts) ? json_number_value(ts) : info_date_ms(json_object_get(entry, "timestamp"));
	if (!isnan(t)) {
		double last = isnan(st->last_activity) ? 0 : st->last_activity;
		st->last_activity = t > last ? t : last;
	}
	struct buf piece = BUF_INIT;
	int r = info_extract_text(json_object_get(msg, "content"), &piece);
	if (r == 1)
		st->dropped = 1;
	if (r || !piece.len) {
		buf_free(&piece);
		return r < 0 ? PS_ERR_NOMEM : PS_OK;
	}
	if (info->listing_only && !(user && !st->first_len)) {
		st->n_messages++; /* the text only a search needs: not kept */
		buf_free(&piece);
		return PS_OK;
	}
	if (st->n_messages && (buf_putc(&info->text, ' ') < 0 || (!info->listing_only && buf_putc(&info->lower, ' ') < 0)))
		goto nomem;
	size_t off = info->text.len;
	if (buf_put(&info->text, piece.data, piece.len) < 0 ||
	    (!info->listing_only && jscase_lower(piece.data, piece.len, &info->lower) < 0))
		goto nomem;
	st->n_messages++;
	if (user && !st->first_len) {
		st->first_off = off;
		st->first_len = piece.len;
	}
	buf_free(&piece);
	st->text_len = info->text.len;
	st->lower_len = info->lower.len;
	return PS_OK;
nomem:
	buf_free(&piece);
	return PS_ERR_NOMEM;
}

static ps_err info_header(struct sessioninfo *info, const json_t *h)
{
	if (!json_is_str(json_object_get(h, "type"), "session")) {
		info->cur.header = -1;
		return PS_OK;
	}
	const json_t *id = json_object_get(h, "id"), *cwd = json_object_get(h, "cwd");
	const json_t *ts = json_object_get(h, "timestamp");
	char *nid = strndup(json_is_string(id) ? json_string_value(id) : "", json_is_string(id) ? json_string_length(id) : 0);
	char *ncwd = strndup(json_is_string(cwd) ? json_string_value(cwd) : "", json_is_string(cwd) ? json_string_length(cwd) : 0);
	if (!nid || !ncwd) {
		free(nid);
		free(ncwd);
		return PS_ERR_NOMEM;
	}
	free(info->id);
	free(info->cwd);
	info->id = nid;
	info->cwd = ncwd;
	info->created_ms = info_date_ms(ts);
	info->header_ms = json_is_string(ts) ? info->created_ms : NAN;
	info->cur.header = 1;
	return PS_OK;
}

static int field_is(const struct scan_field *f, const char *s)
{
	return f->kind == SCAN_STRING && !f->escaped && f->len == strlen(s) && !memcmp(f->ptr, s, f->len);
}

/* info_message for a user (user 1) or assistant message whose line
 * scan_line() read as r: 1 when the jansson path must decide. */
static int info_fast_message(struct sessioninfo *info, const struct scan_result *r, int user)
{
	struct sessioninfo_state *st = &info->cur;
	const struct scan_field *c = &r->content, *mt = &r->msg_time, *et = &r->timestamp;
	char tmp[64];
	double t;
	if (c->kind == SCAN_ABSENT)
		return 0; /* no content: pi skips the message */
	if (mt->kind == SCAN_OTHER && (mt->ptr[0] == '-' || (mt->ptr[0] >= '0' && mt->ptr[0] <= '9'))) {
		/* pi's times are integers of 13 digits: up to 15 are exact in a
		 * double, and need no strtod. */
		const char *d = mt->ptr + (mt->ptr[0] == '-');
		size_t nd = mt->len - (size_t)(d - mt->ptr), i = 0;
		uint64_t v = 0;
		while (i < nd && i < 16 && d[i] >= '0' && d[i] <= '9')
			v = v * 10 + (uint64_t)(d[i++] - '0');
		if (i == nd && nd <= 15)
			t = d == mt->ptr ? (double)v : -(double)v + 0.0; /* jansson's -0 integer is 0 */
		else if (msgtext_small(mt, tmp))
			t = strtod(tmp, NULL) + 0.0;
		else
			return 1;
	} else if (et->kind == SCAN_ABSENT) {
		t = NAN;
	} else if (et->kind == SCAN_NULL) {
		t = 0;
	} else if (et->kind == SCAN_STRING && !et->escaped && msgtext_small(et, tmp)) {
		int ok;
		double ms = jstext_iso_to_ms(tmp, &ok);
		t = ok ? ms : NAN;
	} else {
		return 1;
	}
	struct buf *text = &info->text;
	size_t base = text->len;
	/* A listing keeps the first user message's text only: of the others
	 * it needs to know only that pi reads them, not their text (which the
	 * parser would read the same, invalid UTF-8 replaced). */
	int want_text = !info->listing_only || (user && !st->first_len);
	int sep = st->n_messages > 0;
	if (sep && want_text && buf_putc(text, ' ') < 0)
		return -1;
	size_t off = text->len;
	int rc;
	if (c->kind == SCAN_STRING)
		rc = want_text ? msgtext_string(text, c->ptr, c->len) : 0; /* a text not kept: its bytes change nothing */
	else if (c->kind == SCAN_OTHER && c->ptr[0] == '[')
		/* Of an array whose text is not kept, all that matters is
		 * whether pi throws on it: on a null element (the scanner
		 * noted them); the parser then decides. */
		rc = want_text ? msgtext_blocks(text, c->ptr, c->ptr + c->len) : c->null_element;
	else
		rc = 1; /* content.filter is not a function: pi throws */
	if (rc) {
		text->len = base;
		return rc;
	}
	if (!isnan(t)) {
		double last = isnan(st->last_activity) ? 0 : st->last_activity;
		st->last_activity = t > last ? t : last;
	}
	if (!want_text) {
		st->n_messages++;
		return 0;
	}
	size_t n = text->len - off;
	if (!n) {
		text->len = base;
		return 0;
	}
	if (info->listing_only && !(user && !st->first_len)) {
		text->len = base; /* the text only a search needs: not kept */
		st->n_messages++;
		return 0;
	}
	if (!info->listing_only &&
	    ((sep && buf_putc(&info->lower, ' ') < 0) || jscase_lower(text->data + off, n, &info->lower) < 0))
		return -1;
	st->n_messages++;
	if (user && !st->first_len) {
		st->first_off = off;
		st->first_len = n;
	}
	st->text_len = text->len;
	st->lower_len = info->lower.len;
	return 0;
}

/* One line, which the scanner read as *rp (NULL: no JSON object). */
static ps_err info_line_scanned(struct sessioninfo *info, const char *line, size_t len, const struct scan_result *rp)
{
	struct sessioninfo_state *st = &info->cur;
	ps_err err = PS_OK;
	if (st->header < 0 || st->dropped)
		return PS_OK; /* pi has given up on the file */
	if (!rp) {
		/* Before the header a JSON value that is not an object still
		 * counts as the first entry (and is no header). */
		if (st->header == 0 && !scan_is_blank(line, len)) {
			json_t *v = jsonline_load(line, len, JSON_DECODE_ANY, &err);
			if (v && jstext_truthy(v))
				st->header = -1;
			json_decref(v);
		}
		return err == PS_ERR_NOMEM ? err : PS_OK; /* not JSON: skipped */
	}
	const struct scan_result r = *rp;
	int exact = !r.key_escaped && !r.type.escaped;
	if (st->header == 1 && exact && !field_is(&r.type, "message") && !field_is(&r.type, "session_info"))
		return PS_OK;
	if (st->header == 1 && exact && field_is(&r.type, "message")) {
		st->message_count++;
		/* Tool results and the other roles carry no text pi keeps, and
		 * a role means the message is an object: nothing to parse. */
		int user = field_is(&r.role, "user");
		if (r.role.kind == SCAN_STRING && !r.role.escaped && !user && !field_is(&r.role, "assistant"))
			return PS_OK;
		if (r.role.kind == SCAN_STRING && !r.role.escaped && !r.maybe_unreadable && !info->jansson_only) {
			int fast = info_fast_message(info, &r, user);
			if (fast <= 0) {
				info->fast_messages++;
				return fast < 0 ? PS_ERR_NOMEM : PS_OK;
			}
		}
	}
	json_t *e = jsonline_object(line, len, &err);
	if (!e)
		return err == PS_ERR_NOMEM ? err : PS_OK;
	const json_t *type = json_object_get(e, "type");
	if (st->header == 0) {
		err = info_header(info, e);
	} else if (json_is_str(type, "session_info")) {
		const json_t *name = json_object_get(e, "name");
		free(st->name);
		st->name = NULL;
		if (json_is_string(name)) {
			size_t start, n;
			jstext_trim(json_string_value(name), json_string_length(name), &start, &n);
			if (n && !(st->name = strndup(json_string_value(name) + start, n)))
				err = PS_ERR_NOMEM;
		} else if (name && !json_is_null(name)) {
			st->dropped = 1; /* name.trim is not a function */
		}
	} else if (json_is_str(type, "message")) {
		if (!exact)
			st->message_count++;
		err = info_message(info, e);
	}
	json_decref(e);
	return err;
}

static ps_err info_line(struct sessioninfo *info, const char *line, size_t len)
{
	struct scan_result r;
	if (info->cur.header < 0 || info->cur.dropped)
		return PS_OK; /* no need to scan it */
	return info_line_scanned(info, line, len, scan_line(line, len, &r) == PS_OK ? &r : NULL);
}

/* Finds the end of the line starting at p: *next is where the next line
 * starts; returns 0 when the line has no terminator within [p, end).
 * has_cr: [p, end) may hold a \r. */
static int info_line_end(const char *p, const char *end, int at_eof, int has_cr, const char **eol,
			 const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	const char *cr = has_cr ? memchr(p, '\r', (size_t)((nl ? nl : end) - p)) : NULL;
	if (cr) {
		if (cr + 1 == end && !at_eof)
			return 0; /* \r\n or \r: the next byte tells */
		*eol = cr;
		*next = cr + 1 < end && cr[1] == '\n' ? cr + 2 : cr + 1;
		return 1;
	}
	if (!nl)
		return 0;
	*eol = nl;
	*next = nl + 1;
	return 1;
}

static void info_publish(struct sessioninfo *info)
{
	const struct sessioninfo_state *st = &info->cur;
	info->is_session = st->header == 1 && !st->dropped;
	info->name = st->name;
	info->message_count = st->message_count;
	double last = st->last_activity;
	if (!isnan(last) && last > 0)
		info->modified_ms = fabs(last) > JSTEXT_MAX_TIME_MS ? NAN : trunc(last);
	else if (!isnan(info->header_ms))
		info->modified_ms = info->header_ms;
	else
		info->modified_ms = round((double)info->mtime_ns / 1e6);
}

/* The value of the four hex digits at p, or -1. */
static long info_hex4(const char *p)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int c = (unsigned char)p[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
									 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Where a skim's needle first stands in [p, end), else end.  A \\uXXXX
 * escape counts when it may spell part of a token: an ASCII character
 * other than a control one, U+0130 or U+212A (or it is cut short). */
static const char *info_needle_at(const struct sessioninfo *info, const char *p, const char *end)
{
	size_t which;
	const char *hit;
	while ((hit = needleset_find(info->skim, p, end, &which)) && which == info->skim_escape) {
		long v = end - hit >= 6 ? info_hex4(hit + 2) : -1;
		if (v < 0 || (v >= 0x20 && v < 0x80) || v == 0x130 || v == 0x212A)
			break;
		p = hit + 1;
	}
	return hit ? hit : end;
}

/* Where the line holding h starts, within [p, h]: after the last line
 * break before it (has_cr: the data may hold a \r, which breaks lines
 * too).  A \r\n cut by the end of the data reads as a \r and an empty
 * line, which, once the header is known, counts for nothing either way. */
static const char *info_line_start(const char *p, const char *h, int has_cr)
{
	const char *nl = memrchr(p, '\n', (size_t)(h - p)), *ls = nl ? nl + 1 : p;
	const char *cr = has_cr ? memrchr(ls, '\r', (size_t)(h - ls)) : NULL;
	return cr ? cr + 1 : ls;
}

/* A skim whose enough() said so becomes a whole read: what it read is
 * forgotten, and the file is read from its start as sessioninfo_load
 * reads it. */
/* A skim's enough() said 1 (proven 0: read the file whole) or 2 (proven
 * 1: what it needed is proven, read the file as a listing). */
static void info_skim_to_whole(struct sessioninfo *info, int proven)
{
	state_reset(&info->cur);
	info->text.len = info->lower.len = 0;
	info->header_ms = info->created_ms = NAN;
	info->skim = NULL;
	info->skim_enough = NULL;
	if (proven) {
		info->listing_only = 1;
		info->skim_proven = 1;
	} else {
		info->skim_whole = 1;
	}
}

/* Reads fd from off to its end into info->cur (which holds the state at
 * off), leaving info->committed at the last line break. */
static ps_err info_read(struct sessioninfo *info, int fd, uint64_t off)
{
	size_t cap = INFO_CHUNK, have = 0;
	char *data = malloc(cap);
	ps_err err = PS_OK;
	uint64_t base = off; /* file offset of data[0] */
	int eof = 0, restart = 0;
	if (!data)
		return PS_ERR_NOMEM;
	while (!err && !eof) {
		if (cap - have < INFO_CHUNK / 2) {
			char *bigger = realloc(data, cap * 2);
			if (!bigger) {
				err = PS_ERR_NOMEM;
				break;
			}
			data = bigger;
			cap *= 2;
		}
		ssize_t got = pread(fd, data + have, cap - have, base + have);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			err = PS_ERR_IO;
			break;
		}
		eof = got == 0;
		have += (size_t)got;
		const char *p = data, *end = data + have, *eol, *next;
		/* Lone \r breaks lines too, but is rare: a data without one
		 * spares every line a second search. */
		int has_cr = memchr(data, '\r', have) != NULL;
		while (!err && p < end) {
			if (info->skim && info->cur.header != 0) {
				/* A skim goes from line to line that holds a needle;
				 * the lines between are not even split. */
				const char *h = info_needle_at(info, p, end);
				p = info_line_start(p, h, has_cr);
				if (h == end)
					break; /* what is left is one unfinished line, with no needle yet */
			}
			if (!info_line_end(p, end, eof, has_cr, &eol, &next))
				break;
			size_t lower_was = info->lower.len;
			int enough;
			err = info_line(info, p, (size_t)(eol - p));
			p = next;
			if (info->skim_enough && info->cur.header == 1 && info->lower.len > lower_was &&
			    (enough = info->skim_enough(info->skim_ctx, info->lower.data + lower_was,
							info->lower.len - lower_was))) {
				info_skim_to_whole(info, enough == 2);
				if (base != 0) {
					restart = 1; /* the file's start is no longer here */
					break;
				}
				p = data; /* every byte from the file's start is: read them again */
			}
		}
		if (restart) {
			restart = 0;
			base = 0;
			have = 0;
			eof = 0;
			continue;
		}
		size_t used = (size_t)(p - data);
		base += used;
		have -= used;
		memmove(data, p, have);
	}
	if (!err) {
		/* The state after the last line break is where an append resumes;
		 * a trailing line without one counts (pi's readline gives it) but
		 * is read again then. */
		if (state_copy(&info->committed, &info->cur) < 0)
			err = PS_ERR_NOMEM;
		info->committed_off = base;
		info->tail_len = base < sizeof info->tail ? (uint32_t)base : (uint32_t)sizeof info->tail;
		if (!err && fileio_pread_full(fd, info->tail, info->tail_len, base - info->tail_len) < 0)
			err = PS_ERR_IO;
		if (!err && have && (!info->skim || info->cur.header == 0 || info_needle_at(info, data, data + have) < data + have))
			err = info_line(info, data, have);
	}
	free(data);
	return err;
}

/* Doubling leaves up to half of a text buffer unused; the daemon's budget
 * counts capacity, so what a read left over is given back (an eighth kept
 * for the next appends). */
static void info_trim(struct buf *b)
{
	size_t want = b->len + b->len / 8 + 1;
	if (b->cap > want + 65536) {
		char *p = realloc(b->data, want);
		if (p) {
			b->data = p;
			b->cap = want;
		}
	}
}

static void info_clear(struct sessioninfo *info)
{
	state_reset(&info->cur);
	state_reset(&info->committed);
	info->text.len = info->lower.len = 0;
	info->committed_off = 0;
	info->tail_len = 0;
	info->header_ms = info->created_ms = NAN;
	info->name = NULL;
	info->is_session = 0;
	info->message_count = 0;
}

ps_err sessioninfo_refresh(struct sessioninfo *info, int *changed)
{
	struct stat st;
	if (changed)
		*changed = 0;
	int fd = open(info->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? PS_ERR_NOENT : PS_ERR_IO;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? PS_ERR_ISDIR : PS_ERR_IO;
	}
	int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	uint64_t size = (uint64_t)st.st_size;
	int same_file = st.st_dev == info->dev && st.st_ino == info->ino;
	if (same_file && size == info->size && mtime == info->mtime_ns) {
		close(fd);
		return PS_OK;
	}
	int append = same_file && size > info->size && info->size != UINT64_MAX && size >= info->committed_off;
	if (append && info->tail_len) {
		unsigned char now[sizeof info->tail];
		append = fileio_pread_full(fd, now, info->tail_len, info->committed_off - info->tail_len) == 0 &&
			 !memcmp(now, info->tail, info->tail_len);
	}
	uint64_t from = 0;
	if (append) {
		if (state_copy(&info->cur, &info->committed) < 0) {
			close(fd);
			return PS_ERR_NOMEM;
		}
		info->text.len = info->cur.text_len;
		info->lower.len = info->cur.lower_len;
		from = info->committed_off;
	} else {
		info_clear(info);
	}
	info->dev = st.st_dev;
	info->ino = st.st_ino;
	info->size = size;
	info->mtime_ns = mtime;
	ps_err err = info_read(info, fd, from);
	close(fd);
	if (!err && (buf_finish(&info->text) < 0 || buf_finish(&info->lower) < 0))
		err = PS_ERR_NOMEM;
	if (err) {
		/* Half-read: empty, and read whole next time. */
		info_clear(info);
		info->size = UINT64_MAX;
		return err;
	}
	info_trim(&info->text);
	info_trim(&info->lower);
	info_publish(info);
	if (changed)
		*changed = 1;
	return PS_OK;
}

/* How a skim reads: which lines, and when it may stop. */
struct info_skim {
	const struct needleset *set;
	size_t escape;
	int (*enough)(void *ctx, const char *lower, size_t len);
	void *ctx;
};

static ps_err info_load(const char *path, int jansson_only, int listing_only, const struct info_skim *skim,
			struct sessioninfo **out)
{
	struct sessioninfo *info = calloc(1, sizeof *info);
	if (!info || !(info->path = strdup(path)) || !(info->id = strdup("")) || !(info->cwd = strdup(""))) {
		sessioninfo_free(info);
		return PS_ERR_NOMEM;
	}
	info_clear(info);
	info->size = UINT64_MAX;
	info->jansson_only = jansson_only;
	info->listing_only = listing_only;
	if (skim) {
		info->skim = skim->set;
		info->skim_escape = skim->escape;
		info->skim_enough = skim->enough;
		info->skim_ctx = skim->ctx;
	}
	ps_err err = sessioninfo_refresh(info, NULL);
	info->skim = NULL; /* borrowed for this read only */
	info->skim_enough = NULL;
	info->skim_ctx = NULL;
	if (err) {
		sessioninfo_free(info);
		return err;
	}
	*out = info;
	return PS_OK;
}

ps_err sessioninfo_load(const char *path, struct sessioninfo **out)
{
	return info_load(path, 0, 0, NULL, out);
}

ps_err sessioninfo_load_listing(const char *path, struct sessioninfo **out)
{
	return info_load(path, 0, 1, NULL, out);
}

ps_err sessioninfo_listing_new(struct sessioninfo **out)
{
	struct sessioninfo *info = calloc(1, sizeof *info);
	if (!info || !(info->id = strdup("")) || !(info->cwd = strdup(""))) {
		sessioninfo_free(info);
		return PS_ERR_NOMEM;
	}
	info_clear(info);
	info->size = UINT64_MAX; /* nothing read yet: a refresh reads it whole */
	info->listing_only = 1;
	*out = info;
	return PS_OK;
}

ps_err sessioninfo_listing_line(struct sessioninfo *info, const char *line, size_t len, const struct scan_result *r)
{
	return info_line_scanned(info, line, len, r);
}

ps_err sessioninfo_listing_end(struct sessioninfo *info, const char *path, dev_t dev, ino_t ino, uint64_t size,
			       int64_t mtime_ns)
{
	free(info->path);
	if (!(info->path = strdup(path)) || buf_finish(&info->text) < 0)
		return PS_ERR_NOMEM;
	info->dev = dev;
	info->ino = ino;
	info->size = size;
	info->mtime_ns = mtime_ns;
	/* The lines ended with the file, each with its \n: a refresh of an
	 * append resumes after them. */
	if (state_copy(&info->committed, &info->cur) < 0)
		return PS_ERR_NOMEM;
	info->committed_off = size;
	info->tail_len = 0;
	info_trim(&info->text);
	info_publish(info);
	return PS_OK;
}

ps_err sessioninfo_load_skim(const char *path, const struct sessioninfo_needle *needles, size_t n,
			     int (*enough)(void *ctx, const char *lower, size_t len), void *ctx,
			     struct sessioninfo **out)
{
	/* The escape goes last: at a place where another needle starts too,
	 * the set reports that one, which counts whatever the escape spells. */
	const char *texts[NEEDLESET_MAX];
	size_t lens[NEEDLESET_MAX], k = 0, escape = SIZE_MAX;
	int caseless[NEEDLESET_MAX];
	struct needleset set;
	if (n > NEEDLESET_MAX)
		return PS_ERR_INVALID;
	for (int last = 0; last < 2; last++)
		for (size_t i = 0; i < n; i++) {
			if ((needles[i].kind == NEEDLE_ESCAPE) != last)
				continue;
			if (last)
				escape = k;
			texts[k] = last ? "\\u" : needles[i].text;
			lens[k] = last ? 2 : needles[i].len;
			caseless[k++] = needles[i].kind == NEEDLE_CASELESS;
		}
	if (!n) { /* the header's lines alone: a needle no line holds */
		texts[0] = "\n";
		lens[0] = 1;
		caseless[k++] = 0;
	}
	if (needleset_init(&set, texts, lens, caseless, k) < 0)
		return PS_ERR_INVALID;
	struct info_skim skim = { &set, escape, enough, ctx };
	return info_load(path, 0, 0, &skim, out);
}

ps_err sessioninfo_load_jansson(const char *path, struct sessioninfo **out)
{
	return info_load(path, 1, 0, NULL, out);
}

const char *sessioninfo_first_message(const struct sessioninfo *info, size_t *len)
{
	if (!info->cur.first_len) {
		*len = strlen("(no messages)");
		return "(no messages)";
	}
	*len = info->cur.first_len;
	return info->text.data + info->cur.first_off;
}

size_t sessioninfo_bytes(const struct sessioninfo *info)
{
	size_t n = sizeof *info + info->text.cap + info->lower.cap;
	n += strlen(info->path) + 1 + strlen(info->id) + 1 + strlen(info->cwd) + 1;
	if (info->cur.name)
		n += strlen(info->cur.name) + 1;
	if (info->committed.name)
		n += strlen(info->committed.name) + 1;
	return n;
}

void sessioninfo_free(struct sessioninfo *info)
{
	if (!info)
		return;
	state_reset(&info->cur);
	state_reset(&info->committed);
	buf_free(&info->text);
	buf_free(&info->lower);
	free(info->path);
	free(info->id);
	free(info->cwd);
	free(info);
}

/* b.modified - a.modified as JavaScript's sort reads it: NaN is "equal". */
static int info_cmp(const struct sessioninfo *a, const struct sessioninfo *b)
{
	double d = b->modified_ms - a->modified_ms;
	return d > 0 ? 1 : d < 0 ? -1 : 0;
}

void sessioninfo_sort(struct sessioninfo **infos, size_t n)
{
	/* Insertion into runs would do for the few hundred sessions of a
	 * store; a merge sort keeps it stable and n log n for any. */
	if (n < 2)
		return;
	struct sessioninfo **tmp = malloc(n * sizeof *tmp);
	if (!tmp) {
		for (size_t i = 1; i < n; i++) /* stable insertion sort, no memory needed */
			for (size_t j = i; j > 0 && info_cmp(infos[j - 1], infos[j]) > 0; j--) {
				struct sessioninfo *t = infos[j];
				infos[j] = infos[j - 1];
				infos[j - 1] = t;
			}
		return;
	}
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = info_cmp(infos[i], infos[j]) > 0 ? infos[j++] : infos[i++];
			while (i < mid)
				tmp[k++] = infos[i++];
			while (j < hi)
				tmp[k++] = infos[j++];
		}
		memcpy(infos, tmp, n * sizeof *tmp);
	}
	free(tmp);
}

int sessioninfo_message_text(const json_t *message, struct buf *out)
{
	const json_t *role = json_object_get(message, "role");
	if (!json_is_object(message) || !json_object_get(message, "content") ||
	    !(json_is_str(role, "user") || json_is_str(role, "assistant")))
		return 0;
	int r = info_extract_text(json_object_get(message, "content"), out);
	return r < 0 ? -1 : r == 0 && out->len > 0;
}
