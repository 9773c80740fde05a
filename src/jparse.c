#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "jparse.h"
#include "jskip.h"
#include "jstext.h"

/* jansson refuses deeper nesting; declining lets it say so. */
#define JPARSE_MAX_DEPTH JSON_PARSER_MAX_DEPTH
/* Longest number handed to strtod; longer ones are declined. */
#define JPARSE_MAX_NUMBER 128

struct jparser {
	const char *p, *end;
	/* Decoded text of strings with escapes, reused. */
	char *buf;
	size_t cap;
	enum jparse_result why; /* set when a step fails */
};

static int jparse_fail(struct jparser *jp, enum jparse_result why)
{
	jp->why = why;
	return 0;
}

static void jparse_ws(struct jparser *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r'))
		jp->p++;
}

static int jparse_ascii(const char *s, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		if (w & 0x8080808080808080ULL)
			return 0;
	}
	for (; i < n; i++) {
		if ((unsigned char)s[i] & 0x80)
			return 0;
	}
	return 1;
}

static int jparse_hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned char c = (unsigned char)p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return 0;
	}
	*out = v;
	return 1;
}

static int jparse_reserve(struct jparser *jp, size_t need)
{
	if (need <= jp->cap)
		return 1;
	size_t cap = jp->cap ? jp->cap : 256;
	while (cap < need)
		cap *= 2;
	char *b = realloc(jp->buf, cap);
	if (!b)
		return jparse_fail(jp, JPARSE_NOMEM);
	jp->buf = b;
	jp->cap = cap;
	return 1;
}

static size_t jparse_utf8(unsigned cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* The \uXXXX escape whose hex digits start at *p (a surrogate pair read
 * whole): its code point, *p moved past it; 0 for one jansson's first
 * pass declines (bad hex, a lone surrogate), *p then unspecified. */
static int jparse_escape_u(const char **p, const char *end, unsigned *cp)
{
	unsigned lo;
	if (end - *p < 4 || !jparse_hex4(*p, cp))
		return 0;
	*p += 4;
	if (*cp >= 0xDC00 && *cp <= 0xDFFF)
		return 0;
	if (*cp >= 0xD800 && *cp <= 0xDBFF) {
		const char *q = *p;
		if (end - q < 6 || q[0] != '\\' || q[1] != 'u' || !jparse_hex4(q + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
			return 0;
		*p += 6;
		*cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
	}
	return 1;
}

/* At an opening quote.  Sets *s and *n to the string's text: in the input
 * itself when it has no escape, else in jp->buf.  Declines invalid UTF-8
 * and lone surrogate escapes (jansson's retries handle both). */
static int jparse_string(struct jparser *jp, const char **s, size_t *n)
{
	const char *start = ++jp->p;
	const char *q = jskip_plain(start, jp->end);
	if (q < jp->end && *q == '"') {
		size_t len = (size_t)(q - start);
		if (!jparse_ascii(start, len) && !jstext_utf8_valid(start, len))
			return jparse_fail(jp, JPARSE_DECLINED);
		*s = start;
		*n = len;
		jp->p = q + 1;
		return 1;
	}
	/* Escapes: decode into jp->buf, run by run. */
	size_t o = 0;
	const char *p = start;
	for (;;) {
		q = jskip_plain(p, jp->end);
		size_t run = (size_t)(q - p);
		if (!jparse_reserve(jp, o + run + 4))
			return 0;
		memcpy(jp->buf + o, p, run);
		o += run;
		if (q >= jp->end || (unsigned char)*q < 0x20)
			return jparse_fail(jp, JPARSE_DECLINED);
		if (*q == '"') {
			jp->p = q + 1;
			break;
		}
		/* A backslash. */
		if (jp->end - q < 2)
			return jparse_fail(jp, JPARSE_DECLINED);
		char c = q[1], put;
		p = q + 2;
		switch (c) {
		case '"': put = '"'; break;
		case '\\': put = '\\'; break;
		case '/': put = '/'; break;
		case 'b': put = '\b'; break;
		case 'f': put = '\f'; break;
		case 'n': put = '\n'; break;
		case 'r': put = '\r'; break;
		case 't': put = '\t'; break;
		case 'u': {
			unsigned cp;
			if (!jparse_escape_u(&p, jp->end, &cp))
				return jparse_fail(jp, JPARSE_DECLINED);
			o += jparse_utf8(cp, jp->buf + o);
			continue;
		}
		default:
			return jparse_fail(jp, JPARSE_DECLINED);
		}
		jp->buf[o++] = put;
	}
	/* The runs between escapes are input bytes: check them once, whole. */
	if (!jparse_ascii(jp->buf, o) && !jstext_utf8_valid(jp->buf, o))
		return jparse_fail(jp, JPARSE_DECLINED);
	*s = jp->buf;
	*n = o;
	return 1;
}

/* jparse_string for a string nobody keeps: accepts and declines exactly
 * what it does, and for a key (key 1) also one holding \u0000, which
 * jansson refuses in a key, without decoding anything.  Copying each
 * skipped string's text into jp->buf (and growing it) was a fifth of
 * reading a store's usage, whose lines are mostly skipped content.  The
 * runs between escapes are checked for UTF-8 one by one: an escape's
 * text never starts with a continuation byte, so a sequence cut by one is
 * invalid whether the runs are checked apart or decoded together. */
static int jparse_skip_string(struct jparser *jp, int key)
{
	const char *p = ++jp->p;
	for (;;) {
		const char *q = jskip_plain(p, jp->end);
		size_t run = (size_t)(q - p);
		if (!jparse_ascii(p, run) && !jstext_utf8_valid(p, run))
			return jparse_fail(jp, JPARSE_DECLINED);
		if (q >= jp->end || (unsigned char)*q < 0x20)
			return jparse_fail(jp, JPARSE_DECLINED);
		if (*q == '"') {
			jp->p = q + 1;
			return 1;
		}
		/* A backslash. */
		if (jp->end - q < 2)
			return jparse_fail(jp, JPARSE_DECLINED);
		char c = q[1];
		p = q + 2;
		if (c == 'u') {
			unsigned cp;
			if (!jparse_escape_u(&p, jp->end, &cp) || (key && cp == 0))
				return jparse_fail(jp, JPARSE_DECLINED);
		} else if (!strchr("\"\\/bfnrt", c) || c == '\0') {
			return jparse_fail(jp, JPARSE_DECLINED);
		}
	}
}

/* Reads a number as jparse_number does; builds its value only when keep. */
static json_t *jparse_number_at(struct jparser *jp, int keep);

static json_t *jparse_number(struct jparser *jp)
{
	return jparse_number_at(jp, 1);
}

/* The skipped number (keep 0) is no value: a non-NULL token stands for
 * it, never dereferenced. */
static char jparse_skipped;
#define JPARSE_SKIPPED ((json_t *)(void *)&jparse_skipped)

static json_t *jparse_number_at(struct jparser *jp, int keep)
{
	const char *start = jp->p, *p = jp->p;
	int is_real = 0;
	if (p < jp->end && *p == '-')
		p++;
	if (p >= jp->end || *p < '0' || *p > '9')
		return jparse_fail(jp, JPARSE_DECLINED), NULL;
	if (*p == '0') {
		p++;
	} else {
		while (p < jp->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < jp->end && *p == '.') {
		is_real = 1;
		p++;
		if (p >= jp->end || *p < '0' || *p > '9')
			return jparse_fail(jp, JPARSE_DECLINED), NULL;
		while (p < jp->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < jp->end && (*p == 'e' || *p == 'E')) {
		is_real = 1;
		p++;
		if (p < jp->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= jp->end || *p < '0' || *p > '9')
			return jparse_fail(jp, JPARSE_DECLINED), NULL;
		while (p < jp->end && *p >= '0' && *p <= '9')
			p++;
	}
	size_t len = (size_t)(p - start);
	/* Nineteen digits may overflow 64 bits: jansson decides those. */
	if (len >= JPARSE_MAX_NUMBER || (!is_real && len - (*start == '-') > 18))
		return jparse_fail(jp, JPARSE_DECLINED), NULL;
	char tmp[JPARSE_MAX_NUMBER];
	memcpy(tmp, start, len);
	tmp[len] = '\0';
	jp->p = p;
	json_t *v;
	if (is_real) {
		errno = 0;
		double d = strtod(tmp, NULL);
		/* jansson refuses overflow to infinity, and takes underflow. */
		if (isinf(d))
			return jparse_fail(jp, JPARSE_DECLINED), NULL;
		v = keep ? json_real(d) : JPARSE_SKIPPED;
	} else {
		v = keep ? json_integer((json_int_t)strtoll(tmp, NULL, 10)) : JPARSE_SKIPPED;
	}
	if (!v)
		jparse_fail(jp, JPARSE_NOMEM);
	return v;
}

static int jparse_literal(struct jparser *jp, const char *word, size_t n)
{
	if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, word, n) != 0)
		return jparse_fail(jp, JPARSE_DECLINED);
	jp->p += n;
	return 1;
}

static json_t *jparse_value(struct jparser *jp, int depth);

/* Reads a value as jparse_value does, declining exactly what it declines,
 * but builds nothing: 1, or 0 (jp->why says why). */
static int jparse_skip_value(struct jparser *jp, int depth)
{
	if (depth > JPARSE_MAX_DEPTH || jp->p >= jp->end)
		return jparse_fail(jp, JPARSE_DECLINED);
	switch (*jp->p) {
	case '{':
	case '[': {
		char close = *jp->p == '{' ? '}' : ']';
		int object = close == '}';
		jp->p++;
		jparse_ws(jp);
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			return 1;
		}
		for (;;) {
			jparse_ws(jp);
			if (object) {
				if (jp->p >= jp->end || *jp->p != '"' || !jparse_skip_string(jp, 1))
					return jp->why == JPARSE_OK ? jparse_fail(jp, JPARSE_DECLINED) : 0;
				jparse_ws(jp);
				if (jp->p >= jp->end || *jp->p != ':')
					return jparse_fail(jp, JPARSE_DECLINED);
				jp->p++;
				jparse_ws(jp);
			}
			if (!jparse_skip_value(jp, depth + 1))
				return 0;
			jparse_ws(jp);
			if (jp->p < jp->end && *jp->p == ',') {
				jp->p++;
				continue;
			}
			if (jp->p < jp->end && *jp->p == close) {
				jp->p++;
				return 1;
			}
			return jparse_fail(jp, JPARSE_DECLINED);
		}
	}
	case '"':
		return jparse_skip_string(jp, 0);
	case 't':
		return jparse_literal(jp, "true", 4);
	case 'f':
		return jparse_literal(jp, "false", 5);
	case 'n':
		return jparse_literal(jp, "null", 4);
	default:
		return jparse_number_at(jp, 0) != NULL;
	}
}

static int jparse_in(const char *const *names, const char *key)
{
	for (; names && *names; names++)
		if (strcmp(*names, key) == 0)
			return 1;
	return 0;
}

/* keep: NULL builds every member; else only those keep->top names (and of
 * the object under keep->inner_key, only the keep->inner names). */
static json_t *jparse_object_keep_at(struct jparser *jp, int depth, const struct jparse_keep *keep, int inner);

static json_t *jparse_object_at(struct jparser *jp, int depth)
{
	return jparse_object_keep_at(jp, depth, NULL, 0);
}

static json_t *jparse_object_keep_at(struct jparser *jp, int depth, const struct jparse_keep *keep, int inner)
{
	json_t *obj = json_object();
	if (!obj)
		return jparse_fail(jp, JPARSE_NOMEM), NULL;
	jp->p++;
	jparse_ws(jp);
	if (jp->p < jp->end && *jp->p == '}') {
		jp->p++;
		return obj;
	}
	for (;;) {
		const char *key;
		size_t klen;
		jparse_ws(jp);
		if (jp->p >= jp->end || *jp->p != '"' || !jparse_string(jp, &key, &klen))
			goto fail_declined;
		/* jansson takes no NUL in a key. */
		if (memchr(key, '\0', klen))
			goto fail_declined;
		/* The key may live in jp->buf, which the value reuses. */
		char small[64], *k = klen < sizeof small ? small : malloc(klen + 1);
		if (!k) {
			jparse_fail(jp, JPARSE_NOMEM);
			goto fail;
		}
		memcpy(k, key, klen);
		k[klen] = '\0';
		jparse_ws(jp);
		json_t *v = NULL;
		int skip = keep && !jparse_in(inner ? keep->inner : keep->top, k);
		if (jp->p < jp->end && *jp->p == ':') {
			jp->p++;
			jparse_ws(jp);
			if (skip)
				v = jparse_skip_value(jp, depth + 1) ? JPARSE_SKIPPED : NULL;
			else if (keep && !inner && keep->inner_key && strcmp(k, keep->inner_key) == 0 &&
				 jp->p < jp->end && *jp->p == '{' && depth + 1 <= JPARSE_MAX_DEPTH)
				v = jparse_object_keep_at(jp, depth + 1, keep, 1);
			else
				v = jparse_value(jp, depth + 1);
		} else {
			jparse_fail(jp, JPARSE_DECLINED);
		}
		/* Sets replace: a repeated key keeps its place and takes the
		 * last value, as in jansson's decoder. */
		int bad = !v || (v != JPARSE_SKIPPED && json_object_setn_new_nocheck(obj, k, klen, v));
		if (v && bad)
			jparse_fail(jp, JPARSE_NOMEM);
		if (k != small)
			free(k);
		if (bad)
			goto fail;
		jparse_ws(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == '}') {
			jp->p++;
			return obj;
		}
		goto fail_declined;
	}
fail_declined:
	if (jp->why == JPARSE_OK)
		jparse_fail(jp, JPARSE_DECLINED);
fail:
	json_decref(obj);
	return NULL;
}

static json_t *jparse_array_at(struct jparser *jp, int depth)
{
	json_t *arr = json_array();
	if (!arr)
		return jparse_fail(jp, JPARSE_NOMEM), NULL;
	jp->p++;
	jparse_ws(jp);
	if (jp->p < jp->end && *jp->p == ']') {
		jp->p++;
		return arr;
	}
	for (;;) {
		jparse_ws(jp);
		json_t *v = jparse_value(jp, depth + 1);
		if (!v)
			goto fail;
		if (json_array_append_new(arr, v)) {
			jparse_fail(jp, JPARSE_NOMEM);
			goto fail;
		}
		jparse_ws(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == ']') {
			jp->p++;
			return arr;
		}
		jparse_fail(jp, JPARSE_DECLINED);
		goto fail;
	}
fail:
	json_decref(arr);
	return NULL;
}

static json_t *jparse_value(struct jparser *jp, int depth)
{
	if (depth > JPARSE_MAX_DEPTH || jp->p >= jp->end)
		return jparse_fail(jp, JPARSE_DECLINED), NULL;
	json_t *v = NULL;
	const char *s;
	size_t n;
	switch (*jp->p) {
	case '{':
		return jparse_object_at(jp, depth);
	case '[':
		return jparse_array_at(jp, depth);
	case '"':
		if (!jparse_string(jp, &s, &n))
			return NULL;
		v = json_stringn_nocheck(s, n);
		break;
	case 't':
		if (!jparse_literal(jp, "true", 4))
			return NULL;
		v = json_true();
		break;
	case 'f':
		if (!jparse_literal(jp, "false", 5))
			return NULL;
		v = json_false();
		break;
	case 'n':
		if (!jparse_literal(jp, "null", 4))
			return NULL;
		v = json_null();
		break;
	default:
		return jparse_number(jp);
	}
	if (!v)
		jparse_fail(jp, JPARSE_NOMEM);
	return v;
}

enum jparse_result jparse_object(const char *text, size_t len, json_t **out)
{
	return jparse_object_keep(text, len, NULL, out);
}

enum jparse_result jparse_object_keep(const char *text, size_t len, const struct jparse_keep *keep, json_t **out)
{
	struct jparser jp = { .p = text, .end = text + len, .why = JPARSE_OK };
	json_t *v = NULL;

	*out = NULL;
	jparse_ws(&jp);
	if (jp.p < jp.end && *jp.p == '{')
		v = jparse_object_keep_at(&jp, 1, keep, 0);
	else
		jparse_fail(&jp, JPARSE_DECLINED);
	if (v) {
		jparse_ws(&jp);
		if (jp.p != jp.end) {
			json_decref(v);
			v = NULL;
			jparse_fail(&jp, JPARSE_DECLINED);
		}
	}
	free(jp.buf);
	if (!v)
		return jp.why == JPARSE_OK ? JPARSE_DECLINED : jp.why;
	*out = v;
	return JPARSE_OK;
}
