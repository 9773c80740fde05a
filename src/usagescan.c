#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "jskip.h"
#include "jstext.h"
#include "usagescan.h"

/* As jparse.c: a number this long, or an integer of more than eighteen
 * digits, is declined (jansson decides it). */
#define USAGESCAN_MAX_NUMBER 128
/* Deeper than any usage: a line nested further is declined. */
#define USAGESCAN_MAX_DEPTH 64

struct usagescan_reader {
	const char *p, *end;
};

/* Before every token; pi writes none, so one test nearly always ends it. */
static void usagescan_ws(struct usagescan_reader *r)
{
	while (r->p < r->end && (unsigned char)*r->p <= ' ' &&
	       (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int usagescan_take(struct usagescan_reader *r, char c)
{
	usagescan_ws(r);
	if (r->p >= r->end || *r->p != c)
		return 0;
	r->p++;
	return 1;
}

static int usagescan_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* How usagescan_string reads a string. */
enum usagescan_text {
	USAGESCAN_SKIP,  /* escapes are checked and stepped over */
	USAGESCAN_PLAIN, /* decline an escape or invalid UTF-8: the bytes are then the text */
	/* A member's name: decline an escape (it could spell any name), but
	 * not invalid UTF-8, which pi reads as U+FFFD: no name read here, all
	 * ASCII, is spelled so, and a name not read is skipped either way. */
	USAGESCAN_KEY,
};

/* At an opening quote: leaves p after the closing one, reading the string
 * as how says.  Raw control characters are never JSON. */
static int usagescan_string(struct usagescan_reader *r, enum usagescan_text how, const char **text, size_t *len)
{
	const char *start = ++r->p;
	for (;;) {
		const char *q = jskip_plain(r->p, r->end);
		if (q >= r->end || (unsigned char)*q < 0x20)
			return 0;
		if (*q == '"') {
			r->p = q + 1;
			break;
		}
		/* A backslash. */
		if (how != USAGESCAN_SKIP || r->end - q < 2)
			return 0;
		if (q[1] == 'u') {
			if (r->end - q < 6 || !usagescan_hex(q[2]) || !usagescan_hex(q[3]) || !usagescan_hex(q[4]) ||
			    !usagescan_hex(q[5]))
				return 0;
			r->p = q + 6;
		} else if (strchr("\"\\/bfnrt", q[1]) && q[1]) {
			r->p = q + 2;
		} else {
			return 0;
		}
	}
	if (how == USAGESCAN_PLAIN && !jstext_utf8_valid(start, (size_t)(r->p - 1 - start)))
		return 0;
	if (text) {
		*text = start;
		*len = (size_t)(r->p - 1 - start);
	}
	return 1;
}

static int usagescan_digits(struct usagescan_reader *r)
{
	const char *start = r->p;
	while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
		r->p++;
	return r->p > start;
}

/* Reads a number as jansson keeps it (an integer as int64, then a double;
 * a real as strtod reads it).  Exact decimals of at most fifteen digits
 * times a power of ten up to 10^22 are converted without strtod: both
 * operands are exact doubles, so the one division or multiplication is
 * correctly rounded, as strtod is (Clinger's fast path).  out NULL: only
 * whether jansson reads it, for a number skipped (a cost's parts other
 * than its total, whose many digits sent each through strtod). */
static int usagescan_number(struct usagescan_reader *r, double *out)
{
	static const double pow10[] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
					1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	const char *start = r->p;
	int negative = 0, is_real = 0;
	if (r->p < r->end && *r->p == '-') {
		negative = 1;
		r->p++;
	}
	const char *int_start = r->p;
	if (r->p < r->end && *r->p == '0')
		r->p++;
	else if (!usagescan_digits(r))
		return 0;
	const char *int_end = r->p, *frac_start = r->p, *frac_end = r->p;
	if (r->p < r->end && *r->p == '.') {
		is_real = 1;
		r->p++;
		frac_start = r->p;
		if (!usagescan_digits(r))
			return 0;
		frac_end = r->p;
	}
	int has_exp = 0;
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		is_real = has_exp = 1;
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (!usagescan_digits(r))
			return 0;
	}
	size_t len = (size_t)(r->p - start);
	if (len >= USAGESCAN_MAX_NUMBER || (!is_real && len - (size_t)negative > 18))
		return 0;
	double unused;
	if (!out) {
		if (!has_exp)
			return 1; /* fewer digits than USAGESCAN_MAX_NUMBER: finite */
		out = &unused;
	}
	if (!is_real) {
		int64_t v = 0;
		for (const char *d = int_start; d < int_end; d++)
			v = v * 10 + (*d - '0');
		*out = (double)(negative ? -v : v);
		return 1;
	}
	if (!has_exp) {
		uint64_t m = 0;
		size_t significant = 0;
		for (const char *d = int_start; d < frac_end; d++) {
			if (d == int_end)
				d = frac_start;
			if (m || *d != '0')
				significant++;
			m = m * 10 + (uint64_t)(*d - '0');
			if (significant > 15)
				break;
		}
		size_t scale = (size_t)(frac_end - frac_start);
		if (significant <= 15 && scale <= 22) {
			double v = (double)m / pow10[scale];
			*out = negative ? -v : v;
			return 1;
		}
	}
	char tmp[USAGESCAN_MAX_NUMBER];
	memcpy(tmp, start, len);
	tmp[len] = '\0';
	double d = strtod(tmp, NULL);
	if (isinf(d))
		return 0; /* jansson refuses it */
	*out = d;
	return 1;
}

static int usagescan_literal(struct usagescan_reader *r, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return 0;
	r->p += n;
	return 1;
}

/* Steps over one value of any kind, checking it is JSON.  Not scan.c's
 * skipping: numbers are declined here as jparse declined them, so a line
 * goes to the line parser exactly where it went before. */
static int usagescan_skip(struct usagescan_reader *r)
{
	char closers[USAGESCAN_MAX_DEPTH];
	int depth = 0;
	for (;;) {
		usagescan_ws(r);
		if (r->p >= r->end)
			return 0;
		switch (*r->p) {
		case '{':
		case '[':
			if (depth == USAGESCAN_MAX_DEPTH)
				return 0;
			closers[depth++] = *r->p == '{' ? '}' : ']';
			r->p++;
			usagescan_ws(r);
			if (r->p < r->end && *r->p == closers[depth - 1]) {
				r->p++;
				depth--;
				goto after_value;
			}
			if (closers[depth - 1] == '}')
				goto key;
			continue;
		case '"':
			if (!usagescan_string(r, USAGESCAN_SKIP, NULL, NULL))
				return 0;
			break;
		case 't':
			if (!usagescan_literal(r, "true"))
				return 0;
			break;
		case 'f':
			if (!usagescan_literal(r, "false"))
				return 0;
			break;
		case 'n':
			if (!usagescan_literal(r, "null"))
				return 0;
			break;
		default:
			if (!usagescan_number(r, NULL))
				return 0;
			break;
		}
after_value:
		if (depth == 0)
			return 1;
		usagescan_ws(r);
		if (r->p >= r->end)
			return 0;
		if (*r->p == closers[depth - 1]) {
			r->p++;
			depth--;
			goto after_value;
		}
		if (*r->p++ != ',')
			return 0;
		if (closers[depth - 1] == ']')
			continue;
key:
		usagescan_ws(r);
		if (r->p >= r->end || *r->p != '"' || !usagescan_string(r, USAGESCAN_SKIP, NULL, NULL) || !usagescan_take(r, ':'))
			return 0;
	}
}

/* Reads one member's key (plain: an escaped key could spell any name) and
 * its colon. */
static int usagescan_key(struct usagescan_reader *r, const char **key, size_t *len)
{
	usagescan_ws(r);
	return r->p < r->end && *r->p == '"' && usagescan_string(r, USAGESCAN_KEY, key, len) && usagescan_take(r, ':');
}

#define USAGESCAN_KEY_IS(key, len, lit) ((len) == sizeof(lit) - 1 && memcmp((key), lit, sizeof(lit) - 1) == 0)

/* After the colon of a member: a number, else 0 for any other value. */
static int usagescan_field(struct usagescan_reader *r, double *out)
{
	usagescan_ws(r);
	*out = 0;
	if (r->p < r->end && (*r->p == '-' || (*r->p >= '0' && *r->p <= '9')))
		return usagescan_number(r, out);
	return usagescan_skip(r);
}

/* Calls member(ctx, key, len, r) for each member of the object at p, which
 * reads the value; an empty object calls nothing. */
typedef int (*usagescan_member_fn)(void *ctx, const char *key, size_t len, struct usagescan_reader *r);

static int usagescan_object(struct usagescan_reader *r, usagescan_member_fn member, void *ctx)
{
	if (!usagescan_take(r, '{'))
		return 0;
	usagescan_ws(r);
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return 1;
	}
	for (;;) {
		const char *key;
		size_t len;
		if (!usagescan_key(r, &key, &len) || !member(ctx, key, len, r))
			return 0;
		if (usagescan_take(r, '}'))
			return 1;
		if (!usagescan_take(r, ','))
			return 0;
	}
}

static int usagescan_cost_member(void *ctx, const char *key, size_t len, struct usagescan_reader *r)
{
	return USAGESCAN_KEY_IS(key, len, "total") ? usagescan_field(r, ctx) : usagescan_skip(r);
}

static int usagescan_usage_member(void *ctx, const char *key, size_t len, struct usagescan_reader *r)
{
	struct usage_sum *sum = ctx;
	if (USAGESCAN_KEY_IS(key, len, "input"))
		return usagescan_field(r, &sum->input);
	if (USAGESCAN_KEY_IS(key, len, "output"))
		return usagescan_field(r, &sum->output);
	if (USAGESCAN_KEY_IS(key, len, "cacheRead"))
		return usagescan_field(r, &sum->cache_read);
	if (USAGESCAN_KEY_IS(key, len, "cacheWrite"))
		return usagescan_field(r, &sum->cache_write);
	if (USAGESCAN_KEY_IS(key, len, "totalTokens"))
		return usagescan_field(r, &sum->total_tokens);
	if (USAGESCAN_KEY_IS(key, len, "cost")) {
		sum->cost = 0;
		usagescan_ws(r);
		if (r->p < r->end && *r->p == '{')
			return usagescan_object(r, usagescan_cost_member, &sum->cost);
	}
	return usagescan_skip(r);
}

/* A name member: the string, or NULL for any other value. */
static int usagescan_name(struct usagescan_reader *r, const char **text, size_t *len)
{
	usagescan_ws(r);
	*text = NULL;
	*len = 0;
	if (r->p < r->end && *r->p == '"')
		return usagescan_string(r, USAGESCAN_PLAIN, text, len);
	return usagescan_skip(r);
}

static int usagescan_member(void *ctx, const char *key, size_t len, struct usagescan_reader *r)
{
	struct usagescan *out = ctx;
	if (USAGESCAN_KEY_IS(key, len, "usage")) {
		memset(&out->sum, 0, sizeof out->sum);
		out->has_usage = 0;
		usagescan_ws(r);
		if (r->p < r->end && *r->p == '{')
			return (out->has_usage = usagescan_object(r, usagescan_usage_member, &out->sum));
		return usagescan_skip(r);
	}
	if (USAGESCAN_KEY_IS(key, len, "provider"))
		return usagescan_name(r, &out->provider, &out->provider_len);
	if (USAGESCAN_KEY_IS(key, len, "model"))
		return usagescan_name(r, &out->model, &out->model_len);
	if (USAGESCAN_KEY_IS(key, len, "responseModel"))
		return usagescan_name(r, &out->response_model, &out->response_model_len);
	return usagescan_skip(r);
}

int usagescan_members(const char *text, size_t len, struct usagescan *out)
{
	struct usagescan_reader r = { text, text + len };
	memset(out, 0, sizeof *out);
	for (;;) {
		const char *key;
		size_t key_len;
		if (!usagescan_key(&r, &key, &key_len) || !usagescan_member(out, key, key_len, &r))
			return 0;
		usagescan_ws(&r);
		if (r.p >= r.end)
			return 1;
		if (*r.p++ != ',')
			return 0;
	}
}
