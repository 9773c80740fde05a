#include <stdint.h>
#include <string.h>
#include "jskip.h"
#include "scan.h"

struct scanner {
	const char *p;
	const char *end;
	int maybe_image; /* saw "type":"image" in a nested object */
	int maybe_unreadable; /* scan_result's */
	int maybe_surrogate;  /* scan_result's */
	int null_element;     /* scan_value saw null among its array's own elements */
	int carriage_return;  /* scan_result's */
};

static int scan_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Called before every token; stored lines are compact, so the first test
 * nearly always ends it (inlined: the call cost more than the work). */
static inline __attribute__((always_inline)) void scan_skip_ws(struct scanner *s)
{
	while (s->p < s->end && (unsigned char)*s->p <= ' ' && scan_ws((unsigned char)*s->p)) {
		s->carriage_return |= *s->p == '\r';
		s->p++;
	}
}

static int scan_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Validates the escape at q (a backslash): its length, or 0. */
static inline size_t scan_escape(const char *q, const char *end)
{
	if (end - q < 2)
		return 0;
	unsigned char c = (unsigned char)q[1];
	if (c == 'u') {
		if (end - q < 6)
			return 0;
		for (int i = 2; i < 6; i++)
			if (!scan_hex((unsigned char)q[i]))
				return 0;
		return 6;
	}
	return c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't' ? 2 : 0;
}

/* At an opening quote; leaves p after the closing quote.  JSON forbids raw
 * control characters inside strings; JSON.parse and jansson both reject them.
 * Tool outputs put a quote or backslash every eighteen bytes or so: each
 * block of sixteen is tested once, and the special bytes in it are taken
 * from its mask, not found again by a fresh scan after each escape. */
static int scan_string(struct scanner *s, struct scan_field *f)
{
	const char *start = ++s->p, *p = start, *end = s->end, *q;
	int escaped = 0;
#ifdef __SSE2__
	while (end - p >= 16) {
		unsigned mask = jskip_mask16(p);
		while (mask) {
			unsigned k = (unsigned)__builtin_ctz(mask);
			q = p + k;
			if (*q == '"')
				goto done;
			if ((unsigned char)*q < 0x20)
				return 0;
			size_t n = scan_escape(q, end);
			if (!n)
				return 0;
			if (n == 6 && (q[2] | 0x20) == 'd' && q[3] >= '8')
				s->maybe_surrogate = 1;
			escaped = 1;
			k += (unsigned)n;
			if (k >= 16) {
				p += k;
				goto next_block;
			}
			mask &= ~0u << k;
		}
		p += 16;
next_block:;
	}
#endif
	while (p < end) {
		p = jskip_plain(p, end);
		if (p >= end)
			break;
		if (*p == '"') {
			q = p;
			goto done;
		}
		if ((unsigned char)*p < 0x20)
			return 0;
		size_t n = scan_escape(p, end);
		if (!n)
			return 0;
		if (n == 6 && (p[2] | 0x20) == 'd' && p[3] >= '8')
			s->maybe_surrogate = 1;
		escaped = 1;
		p += n;
	}
	return 0;
done:
	if (f) {
		f->kind = SCAN_STRING;
		f->escaped = escaped;
		f->ptr = start;
		f->len = (size_t)(q - start);
	}
	s->p = q + 1;
	return 1;
}

static int scan_digits(struct scanner *s)
{
	const char *start = s->p;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	return s->p > start;
}

/* A number below 10^300 is within the double range: one with fewer
 * integer digits plus exponent is surely one jansson reads. */
#define SCAN_SAFE_MAGNITUDE 300

static int scan_number(struct scanner *s)
{
	if (*s->p == '-')
		s->p++;
	if (s->p >= s->end)
		return 0;
	const char *int_start = s->p;
	if (*s->p == '0')
		s->p++;
	else if (!scan_digits(s))
		return 0;
	size_t magnitude = (size_t)(s->p - int_start);
	if (s->p < s->end && *s->p == '.') {
		s->p++;
		if (!scan_digits(s))
			return 0;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		int negative = s->p < s->end && *s->p == '-';
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		const char *exp_start = s->p;
		if (!scan_digits(s))
			return 0;
		if (!negative) {
			size_t exp = 0;
			for (const char *d = exp_start; d < s->p && exp <= SCAN_SAFE_MAGNITUDE; d++)
				exp = exp * 10 + (size_t)(*d - '0');
			magnitude += exp;
		}
	}
	if (magnitude > SCAN_SAFE_MAGNITUDE)
		s->maybe_unreadable = 1;
	return 1;
}

/* jansson keeps keys as C strings: a key with \u0000 makes it refuse the
 * line (a spelling like \\u0000 is counted too: escaped keys are rare). */
static void scan_note_key(struct scanner *s, const struct scan_field *key)
{
	if (key->escaped && key->len >= 6 && memmem(key->ptr, key->len, "\\u0000", 6))
		s->maybe_unreadable = 1;
}

static int scan_literal(struct scanner *s, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return 0;
	s->p += n;
	return 1;
}

/* Skips one scalar at p.  Containers are handled by scan_value's loop. */
static int scan_scalar(struct scanner *s, struct scan_field *f)
{
	const char *start = s->p;
	int ok;
	switch (*s->p) {
	case '"':
		return scan_string(s, f);
	case 'n':
		ok = scan_literal(s, "null");
		if (ok && f)
			f->kind = SCAN_NULL;
		return ok;
	case 't':
		ok = scan_literal(s, "true");
		break;
	case 'f':
		ok = scan_literal(s, "false");
		break;
	default:
		ok = (*s->p == '-' || (*s->p >= '0' && *s->p <= '9')) && scan_number(s);
		break;
	}
	if (ok && f) {
		f->kind = SCAN_OTHER;
		f->ptr = start;
		f->len = (size_t)(s->p - start);
	}
	return ok;
}

/* Skips one complete value, iteratively: a hostile line nested 100,000 deep
 * must not exhaust the stack.  `base` is the depth of the value itself. */
static int scan_value(struct scanner *s, int base)
{
	char stack[SCAN_MAX_DEPTH];
	int depth = 0;

	scan_skip_ws(s);
	if (s->p >= s->end)
		return 0;
	/* jansson counts every value as a level, scalars included. */
	if (*s->p != '{' && *s->p != '[')
		return base < SCAN_MAX_DEPTH && scan_scalar(s, NULL);
	for (;;) {
		/* At the start of a value. */
		scan_skip_ws(s);
		if (s->p >= s->end)
			return 0;
		if (*s->p == '{' || *s->p == '[') {
			if (base + depth >= SCAN_MAX_DEPTH)
				return 0;
			stack[depth++] = *s->p == '{' ? '}' : ']';
			s->p++;
			scan_skip_ws(s);
			if (s->p < s->end && *s->p == stack[depth - 1]) {
				s->p++;
				depth--;
				goto after_value;
			}
			if (stack[depth - 1] == '}')
				goto object_key;
			continue;
		}
		if (depth == 1 && stack[0] == ']' && *s->p == 'n')
			s->null_element = 1;
		if (base + depth >= SCAN_MAX_DEPTH || !scan_scalar(s, NULL))
			return 0;
after_value:
		if (depth == 0)
			return 1;
		scan_skip_ws(s);
		if (s->p >= s->end)
			return 0;
		if (*s->p == stack[depth - 1]) {
			s->p++;
			depth--;
			goto after_value;
		}
		if (*s->p != ',')
			return 0;
		s->p++;
		if (stack[depth - 1] == ']')
			continue;
		scan_skip_ws(s);
object_key: {
		struct scan_field key;
		if (s->p >= s->end || *s->p != '"' || !scan_string(s, &key))
			return 0;
		scan_note_key(s, &key);
		scan_skip_ws(s);
		if (s->p >= s->end || *s->p != ':')
			return 0;
		s->p++;
		/* An image block is {"type":"image",...}: note it on the way,
		 * so only such lines are parsed to count images.  Escaped
		 * spellings count too (the decoded text could be either). */
		if (key.escaped || (key.len == 4 && memcmp(key.ptr, "type", 4) == 0)) {
			struct scan_field value;
			scan_skip_ws(s);
			if (s->p < s->end && *s->p == '"') {
				if (base + depth >= SCAN_MAX_DEPTH || !scan_string(s, &value))
					return 0;
				if (key.escaped || value.escaped || (value.len == 5 && memcmp(value.ptr, "image", 5) == 0))
					s->maybe_image = 1;
				goto after_value;
			}
		}
	}
	}
}

/* Whether the key is the string literal lit: lengths first, then bytes, no
 * strlen (every member of every line is asked this several times). */
#define SCAN_KEY_IS(key, lit) ((key)->len == sizeof(lit) - 1 && memcmp((key)->ptr, lit, sizeof(lit) - 1) == 0)

/* Scans the object at p (depth `depth`), calling back for each key so the
 * caller can capture the values it wants.  capture() returns the field to
 * fill for a scalar value, or NULL to skip; nested wants "message". */
typedef struct scan_field *(*scan_capture_fn)(void *ctx, const struct scan_field *key, int *descend,
					       struct scan_field **span);

static int scan_object(struct scanner *s, int depth, scan_capture_fn capture, void *ctx, int *key_escaped);

static int scan_member_value(struct scanner *s, int depth, struct scan_field *want, int descend,
			     scan_capture_fn sub, void *subctx, int *key_escaped)
{
	scan_skip_ws(s);
	if (s->p >= s->end)
		return 0;
	if (descend && *s->p == '{')
		return scan_object(s, depth + 1, sub, subctx, key_escaped);
	if (want && *s->p != '{' && *s->p != '[')
		return depth + 1 < SCAN_MAX_DEPTH && scan_scalar(s, want);
	if (want) {
		const char *start = s->p;
		s->null_element = 0;
		if (!scan_value(s, depth + 1))
			return 0;
		want->kind = SCAN_OTHER;
		want->escaped = 0;
		want->ptr = start;
		want->len = (size_t)(s->p - start);
		want->null_element = s->null_element;
		return 1;
	}
	return scan_value(s, depth + 1);
}

struct scan_ctx {
	struct scan_result *out;
};

static struct scan_field *scan_capture_message(void *ctx, const struct scan_field *key, int *descend,
					       struct scan_field **span)
{
	struct scan_result *out = ((struct scan_ctx *)ctx)->out;
	*descend = 0;
	*span = SCAN_KEY_IS(key, "usage") || SCAN_KEY_IS(key, "provider") || SCAN_KEY_IS(key, "model") ||
			SCAN_KEY_IS(key, "responseModel")
		? &out->msg_usage : NULL;
	/* A later duplicate key wins, as in JSON.parse: reset the field. */
	if (SCAN_KEY_IS(key, "role")) {
		memset(&out->role, 0, sizeof out->role);
		return &out->role;
	}
	if (SCAN_KEY_IS(key, "toolName")) {
		memset(&out->tool_name, 0, sizeof out->tool_name);
		return &out->tool_name;
	}
	if (SCAN_KEY_IS(key, "content")) {
		memset(&out->content, 0, sizeof out->content);
		return &out->content;
	}
	if (SCAN_KEY_IS(key, "timestamp")) {
		memset(&out->msg_time, 0, sizeof out->msg_time);
		return &out->msg_time;
	}
	return NULL;
}

static struct scan_field *scan_capture_top(void *ctx, const struct scan_field *key, int *descend,
					   struct scan_field **span)
{
	struct scan_result *out = ((struct scan_ctx *)ctx)->out;
	*descend = 0;
	*span = SCAN_KEY_IS(key, "usage") || SCAN_KEY_IS(key, "provider") || SCAN_KEY_IS(key, "model")
		? &out->top_usage : NULL;
	if (SCAN_KEY_IS(key, "type"))
		return memset(&out->type, 0, sizeof out->type), &out->type;
	if (SCAN_KEY_IS(key, "id"))
		return memset(&out->id, 0, sizeof out->id), &out->id;
	if (SCAN_KEY_IS(key, "parentId"))
		return memset(&out->parent_id, 0, sizeof out->parent_id), &out->parent_id;
	if (SCAN_KEY_IS(key, "timestamp"))
		return memset(&out->timestamp, 0, sizeof out->timestamp), &out->timestamp;
	if (SCAN_KEY_IS(key, "message")) {
		memset(&out->role, 0, sizeof out->role);
		memset(&out->tool_name, 0, sizeof out->tool_name);
		memset(&out->content, 0, sizeof out->content);
		memset(&out->msg_time, 0, sizeof out->msg_time);
		memset(&out->msg_usage, 0, sizeof out->msg_usage);
		*descend = 1;
	}
	return NULL;
}

static int scan_object(struct scanner *s, int depth, scan_capture_fn capture, void *ctx, int *key_escaped)
{
	struct scan_field key;

	if (depth >= SCAN_MAX_DEPTH)
		return 0;
	s->p++; /* '{' */
	scan_skip_ws(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		return 1;
	}
	for (;;) {
		int descend = 0;
		struct scan_field *want = NULL, *span = NULL;
		const char *member;

		scan_skip_ws(s);
		member = s->p;
		if (s->p >= s->end || *s->p != '"')
			return 0;
		memset(&key, 0, sizeof key);
		if (!scan_string(s, &key))
			return 0;
		if (key.escaped && key_escaped)
			*key_escaped = 1;
		scan_note_key(s, &key);
		if (capture)
			want = capture(ctx, &key, &descend, &span);
		scan_skip_ws(s);
		if (s->p >= s->end || *s->p != ':')
			return 0;
		s->p++;
		if (!scan_member_value(s, depth, want, descend, scan_capture_message, ctx, key_escaped))
			return 0;
		if (span) {
			if (span->kind == SCAN_ABSENT) {
				span->kind = SCAN_OTHER;
				span->ptr = member;
			}
			span->len = (size_t)(s->p - span->ptr);
		}
		scan_skip_ws(s);
		if (s->p >= s->end)
			return 0;
		if (*s->p == '}') {
			s->p++;
			return 1;
		}
		if (*s->p != ',')
			return 0;
		s->p++;
	}
}

int scan_is_blank(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!scan_ws((unsigned char)line[i]))
			return 0;
	return 1;
}

ps_err scan_line(const char *line, size_t len, struct scan_result *out)
{
	struct scanner s = { line, line + len, 0, 0, 0, 0, 0 };
	struct scan_ctx ctx = { out };

	memset(out, 0, sizeof *out);
	scan_skip_ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return PS_ERR_INVALID;
	if (!scan_object(&s, 0, scan_capture_top, &ctx, &out->key_escaped))
		return PS_ERR_INVALID;
	out->maybe_image = s.maybe_image;
	out->maybe_unreadable = s.maybe_unreadable;
	out->maybe_surrogate = s.maybe_surrogate;
	scan_skip_ws(&s);
	out->carriage_return = s.carriage_return;
	if (s.p != s.end)
		return PS_ERR_INVALID;
	return PS_OK;
}
