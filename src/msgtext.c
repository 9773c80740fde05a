#include <stdint.h>
#include <string.h>
#include "jskip.h"
#include "jstext.h"
#include "msgtext.h"

/* ---- The fast path for user and assistant messages ----------------------
 * They are most of what pi's info reads, and building a jansson tree of
 * each (thinking, tool calls and usage included) was half the time.  What
 * the info needs is a few values, found in the spans scan_line() reports
 * (the line is valid JSON then) and decoded here as jsonline_load() would
 * decode them.  Anything else -- an escaped key that might spell a wanted
 * one, text that is no string, content pi's code throws on, invalid UTF-8,
 * a line jansson may refuse (maybe_unreadable) -- is declined, and the
 * jansson path decides as it always did.  The helpers return 0 (done),
 * 1 (declined) or -1 (out of memory). */

static const char *fast_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* Past the string whose opening quote is at p. */
static const char *fast_skip_string(const char *p, const char *end)
{
	for (p++; (p = jskip_plain(p, end)) < end;) {
		if (*p == '"')
			return p + 1;
		p += *p == '\\' ? 2 : 1; /* raw control bytes: not in a valid line */
	}
	return end;
}

/* Past the value at p (valid JSON: brackets balance outside strings). */
static const char *fast_skip_value(const char *p, const char *end)
{
	if (p < end && *p == '"')
		return fast_skip_string(p, end);
	size_t depth = 0;
	while (p < end) {
		char c = *p;
		if (c == '"') {
			p = fast_skip_string(p, end);
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return p; /* the end of a scalar member */
			if (--depth == 0)
				return p + 1;
		} else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
			return p;
		}
		p++;
	}
	return end;
}

static int fast_hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned char c = (unsigned char)p[i];
		unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			   : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
		if (d > 15)
			return 0;
		v = v << 4 | d;
	}
	*out = v;
	return 1;
}

static size_t fast_utf8(uint32_t cp, char *o)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* The escape at q (a backslash, before end): its length, 0 for one JSON
 * does not allow, and in *cp what it stands for: a surrogate pair one code
 * point, a lone surrogate its stand-in (jstext.h). */
static size_t msgtext_escape(const char *q, const char *end, unsigned *cp)
{
	unsigned lo;
	if (end - q < 2)
		return 0;
	switch (q[1]) {
	case 'b': *cp = '\b'; return 2;
	case 'f': *cp = '\f'; return 2;
	case 'n': *cp = '\n'; return 2;
	case 'r': *cp = '\r'; return 2;
	case 't': *cp = '\t'; return 2;
	case '"': case '\\': case '/': *cp = (unsigned char)q[1]; return 2;
	case 'u':
		if (end - q < 6 || !fast_hex4(q + 2, cp))
			return 0;
		if (*cp >= 0xD800 && *cp <= 0xDBFF && end - q >= 12 && q[6] == '\\' && q[7] == 'u' &&
		    fast_hex4(q + 8, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
			*cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
			return 12;
		}
		if (*cp >= 0xD800 && *cp <= 0xDFFF)
			*cp = JSTEXT_SURROGATE_BASE + (*cp - 0xD800);
		return 6;
	default:
		return 0;
	}
}

/* Appends the string raw[0..len) (between its quotes) decoded: escapes as
 * JSON.parse reads them, a lone surrogate as its stand-in (jstext.h), as
 * jsonline_load() gives them.  Invalid UTF-8 is declined (jsonline_load
 * replaces it; rare enough to leave to it).  On 1 out is unchanged. */
int msgtext_string(struct buf *out, const char *raw, size_t len)
{
	/* Every escape decodes to fewer bytes than it is written with. */
	if (buf_reserve(out, len) < 0)
		return -1;
	char *start = out->data + out->len, *o = start;
	const char *p = raw, *end = raw + len;
	while (p < end) {
		const char *q = memchr(p, '\\', (size_t)(end - p));
		size_t run = (size_t)((q ? q : end) - p);
		memcpy(o, p, run);
		o += run;
		if (!q)
			break;
		unsigned cp;
		size_t n = msgtext_escape(q, end, &cp);
		if (!n)
			return 1;
		o += fast_utf8(cp, o);
		p = q + n;
	}
	/* Escapes decode to whole, valid sequences that no raw byte can
	 * continue, so checking the result checks the raw runs. */
	size_t n = (size_t)(o - start);
	if (!jstext_utf8_valid(start, n))
		return 1;
	out->len += n;
	return 0;
}

/* extractTextContent of a content array (the '[' at p, valid JSON). */
int msgtext_blocks(struct buf *out, const char *p, const char *end)
{
	int any = 0;
	for (p++;;) {
		p = fast_ws(p, end);
		if (p >= end)
			return 1;
		if (*p == ']')
			return 0;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == 'n')
			return 1; /* null: pi's code throws */
		if (*p != '{') {
			p = fast_skip_value(p, end); /* no type: filtered out */
			continue;
		}
		const char *type = NULL, *text = NULL;
		size_t type_len = 0, text_len = 0;
		for (p++;;) {
			p = fast_ws(p, end);
			if (p >= end)
				return 1;
			if (*p == '}') {
				p++;
				break;
			}
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p != '"')
				return 1;
			const char *key = p + 1;
			p = fast_skip_string(p, end);
			size_t key_len = (size_t)(p - 1 - key);
			if (memchr(key, '\\', key_len))
				return 1; /* might spell "type" or "text" */
			p = fast_ws(p, end);
			if (p >= end || *p != ':')
				return 1;
			p = fast_ws(p + 1, end);
			const char *v = p;
			p = fast_skip_value(p, end);
			/* A repeated key: the last one counts, as in JSON.parse. */
			if (key_len == 4 && !memcmp(key, "type", 4)) {
				type = v;
				type_len = (size_t)(p - v);
			} else if (key_len == 4 && !memcmp(key, "text", 4)) {
				text = v;
				text_len = (size_t)(p - v);
			}
		}
		if (!type || type[0] != '"')
			continue;
		if (memchr(type, '\\', type_len))
			return 1; /* might decode to "text" */
		if (type_len != 6 || memcmp(type, "\"text\"", 6))
			continue;
		if (any++ && buf_putc(out, ' ') < 0)
			return -1;
		if (!text || (text_len == 4 && !memcmp(text, "null", 4)))
			continue; /* joined as "" */
		if (text[0] != '"' || text_len < 2)
			return 1; /* JavaScript's string of a number, array...: info_put_js_string */
		int r = msgtext_string(out, text + 1, text_len - 2);
		if (r)
			return r;
	}
}

/* A number or an unescaped ASCII string of up to 63 bytes, NUL-terminated
 * into tmp; 0 when it is neither. */
int msgtext_small(const struct scan_field *f, char tmp[64])
{
	if (f->len >= 64)
		return 0;
	for (size_t i = 0; i < f->len; i++)
		if ((unsigned char)f->ptr[i] >= 0x80)
			return 0;
	memcpy(tmp, f->ptr, f->len);
	tmp[f->len] = '\0';
	return 1;
}

