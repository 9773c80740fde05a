#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "jstext.h"

/* Length of the valid sequence at p (1-4), or 0 with *bad set to how many
 * bytes form the maximal invalid subpart (at least 1). */
static size_t jstext_seq(const unsigned char *p, size_t avail, size_t *bad)
{
	unsigned char c = p[0];
	size_t need;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		if (c == 0xe0)
			lo = 0xa0;
		if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;
	} else {
		*bad = 1;
		return 0;
	}
	for (size_t k = 1; k < need; k++) {
		if (k >= avail || p[k] < lo || p[k] > hi) {
			*bad = k;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need;
}

int jstext_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t bad, k;
		if (p[i] < 0x80) {
			/* ASCII, most of any text: eight bytes at a time. */
			uint64_t w;
			while (n - i >= 8 && (memcpy(&w, p + i, 8), !(w & 0x8080808080808080ULL)))
				i += 8;
			while (i < n && p[i] < 0x80)
				i++;
			continue;
		}
		if (!(k = jstext_seq(p + i, n - i, &bad)))
			return 0;
		i += k;
	}
	return 1;
}

char *jstext_utf8_replace(const char *s, size_t n, size_t *out_len)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = malloc(n * 3 + 1);
	size_t o = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t bad = 0, k = jstext_seq(p + i, n - i, &bad);
		if (k) {
			memcpy(out + o, p + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += bad;
		}
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

static int jstext_hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return 0;
	}
	*out = v;
	return 1;
}

char *jstext_map_lone_surrogates(const char *s, size_t n, size_t *out_len)
{
	char *out = NULL;
	size_t o = 0;
	int found = 0;

	*out_len = 0;
	/* Each 6-byte escape becomes two 6-byte escapes at most. */
	out = malloc(n * 2 + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		unsigned u, v;
		if (s[i] != '\\' || i + 1 >= n) {
			out[o++] = s[i++];
			continue;
		}
		if (s[i + 1] != 'u' || i + 6 > n || !jstext_hex4(s + i + 2, &u)) {
			out[o++] = s[i++];
			out[o++] = s[i++]; /* the escaped character, even a backslash */
			continue;
		}
		int pair = u >= 0xd800 && u <= 0xdbff && i + 12 <= n && s[i + 6] == '\\' && s[i + 7] == 'u' &&
			   jstext_hex4(s + i + 8, &v) && v >= 0xdc00 && v <= 0xdfff;
		if (pair) {
			memcpy(out + o, s + i, 12);
			o += 12;
			i += 12;
		} else if (u >= 0xd800 && u <= 0xdfff) {
			/* The stand-in, as a surrogate-pair escape jansson decodes. */
			uint32_t cp = JSTEXT_SURROGATE_BASE + (u - 0xd800);
			uint32_t hi = 0xd800 + ((cp - 0x10000) >> 10), lo = 0xdc00 + ((cp - 0x10000) & 0x3ff);
			static const char hex[] = "0123456789abcdef";
			char esc[12] = { '\\', 'u', hex[hi >> 12], hex[(hi >> 8) & 15], hex[(hi >> 4) & 15], hex[hi & 15],
					 '\\', 'u', hex[lo >> 12], hex[(lo >> 8) & 15], hex[(lo >> 4) & 15], hex[lo & 15] };
			memcpy(out + o, esc, 12);
			o += 12;
			i += 6;
			found = 1;
		} else {
			memcpy(out + o, s + i, 6);
			o += 6;
			i += 6;
		}
	}
	if (!found) {
		free(out);
		return NULL;
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

/* The code point at p (valid UTF-8), and its length. */
static uint32_t jstext_cp(const unsigned char *p, size_t *len)
{
	if (p[0] < 0x80) {
		*len = 1;
		return p[0];
	}
	if (p[0] < 0xe0) {
		*len = 2;
		return ((uint32_t)(p[0] & 0x1f) << 6) | (p[1] & 0x3f);
	}
	if (p[0] < 0xf0) {
		*len = 3;
		return ((uint32_t)(p[0] & 0x0f) << 12) | ((uint32_t)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
	}
	*len = 4;
	return ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3f) << 12) | ((uint32_t)(p[2] & 0x3f) << 6) |
	       (p[3] & 0x3f);
}

static int jstext_is_space(uint32_t c)
{
	return c == 0x09 || c == 0x0a || c == 0x0b || c == 0x0c || c == 0x0d || c == 0x20 || c == 0xa0 ||
	       c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
	       c == 0x205f || c == 0x3000 || c == 0xfeff;
}

void jstext_trim(const char *s, size_t n, size_t *start, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, end = 0, bad;
	int seen = 0;
	*start = n;
	for (; i < n;) {
		size_t k = jstext_seq(p + i, n - i, &bad);
		uint32_t c = 0;
		if (k)
			c = jstext_cp(p + i, &k);
		else
			k = bad;
		if (!k || !jstext_is_space(c) || !c) {
			if (!seen)
				*start = i;
			seen = 1;
			end = i + k;
		}
		i += k;
	}
	if (!seen) {
		*start = 0;
		*len = 0;
		return;
	}
	*len = end - *start;
}

static int jstext_digit(char c)
{
	return c >= '0' && c <= '9';
}

int jstext_is_json_number(const char *s, size_t n)
{
	size_t i = 0;
	if (i < n && s[i] == '-')
		i++;
	if (i >= n)
		return 0;
	if (s[i] == '0')
		i++;
	else if (s[i] >= '1' && s[i] <= '9')
		while (i < n && jstext_digit(s[i]))
			i++;
	else
		return 0;
	if (i < n && s[i] == '.') {
		i++;
		if (i >= n || !jstext_digit(s[i]))
			return 0;
		while (i < n && jstext_digit(s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || !jstext_digit(s[i]))
			return 0;
		while (i < n && jstext_digit(s[i]))
			i++;
	}
	return i == n;
}

/* ---- Date parsing ------------------------------------------------------ */

/* V8's slack for a local time before its UTC offset is applied
 * (DateCache::kMaxTimeBeforeUTCInMs). */
#define JSTEXT_MAX_LOCAL_MS (JSTEXT_MAX_TIME_MS + 864000000.0)
#define JSTEXT_MS_PER_DAY 86400000.0

/* The Makefile links no libm, and this is easy without it. */
static int jstext_within(double v, double limit)
{
	return v >= -limit && v <= limit;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil); exact for any year the parser accepts. */
static int64_t jstext_days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Seconds east of UTC in effect at UTC second t, 0 when unknown. */
static long jstext_gmtoff_at(double t)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (!localtime_r(&tt, &tm))
		return 0;
	return tm.tm_gmtoff;
}

/* V8 converts a local wall-clock time with ICU's UCAL_TZ_LOCAL_FORMER rule:
 * a repeated time is its first occurrence, a skipped time uses the offset
 * from before the transition.  Offsets a day either side bracket any real
 * transition, so try those. */
static double jstext_local_to_utc(double local_ms)
{
	/* whole seconds, rounded down; the caller bounds local_ms */
	int64_t ms = (int64_t)local_ms;
	double local_s = (double)(ms / 1000 - (ms % 1000 < 0));
	long cand[3];
	long best = 0;
	int found = 0;

	cand[0] = jstext_gmtoff_at(local_s - 86400.0);
	cand[1] = jstext_gmtoff_at(local_s);
	cand[2] = jstext_gmtoff_at(local_s + 86400.0);
	for (int i = 0; i < 3; i++) {
		/* consistent: the offset holds at the instant it maps to */
		if (jstext_gmtoff_at(local_s - (double)cand[i]) != cand[i])
			continue;
		/* earliest instant = largest offset */
		if (!found || cand[i] > best)
			best = cand[i];
		found = 1;
	}
	if (!found)
		best = cand[0];
	return local_ms - (double)best * 1000.0;
}

/* A run of ASCII digits as V8's date tokenizer reads it: every digit counts
 * towards the length, but the value skips leading zeros and keeps only the
 * next nine digits (which is why ".0090000001" is 90 ms to V8). */
struct jstext_num {
	int value;
	size_t len;
};

static struct jstext_num jstext_read_num(const char **pp)
{
	struct jstext_num n = { 0, 0 };
	const char *p = *pp;
	size_t significant = 0;

	while (*p == '0') {
		n.len++;
		p++;
	}
	while (*p >= '0' && *p <= '9') {
		if (significant++ < 9)
			n.value = n.value * 10 + (*p - '0');
		n.len++;
		p++;
	}
	*pp = p;
	return n;
}

/* V8 reads a word as every following char >= 'A'; the ISO grammar only
 * wants a one-letter word (T or Z, either case). */
static int jstext_one_letter(const char **pp, char lower)
{
	const char *p = *pp;

	if ((*p | 0x20) != lower || (unsigned char)p[1] >= 'A')
		return 0;
	*pp = p + 1;
	return 1;
}

/* First three significant digits of a fraction, as V8's ReadMilliseconds. */
static int jstext_millis(struct jstext_num n)
{
	if (n.len == 1)
		return n.value * 100;
	if (n.len == 2)
		return n.value * 10;
	for (size_t len = n.len > 9 ? 9 : n.len; len > 3; len--)
		n.value /= 10;
	return n.value;
}

/* The one form pi writes (Date.prototype.toISOString for years 0 to 9999,
 * "2026-11-29T19:11:30.970Z"), read at fixed places into *ms as the parser
 * below reads it: one per entry of every session indexed, where the
 * general parser was 2% of indexing a store.  0: not that form, or a value
 * the general parser decides (hour 24, a day past 31): parse it so. */
static int jstext_iso_canonical(const char *s, double *ms)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	for (size_t i = 0; i < sizeof shape - 1; i++)
		if (shape[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != shape[i])
			return 0;
	if (s[sizeof shape - 1] != '\0')
		return 0;
#define JSTEXT_D2(i) ((s[i] - '0') * 10 + (s[(i) + 1] - '0'))
	int64_t year = JSTEXT_D2(0) * 100 + JSTEXT_D2(2), month = JSTEXT_D2(5), day = JSTEXT_D2(8);
	int hour = JSTEXT_D2(11), minute = JSTEXT_D2(14), second = JSTEXT_D2(17);
	int milli = (s[20] - '0') * 100 + JSTEXT_D2(21);
#undef JSTEXT_D2
	if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59)
		return 0;
	double v = (double)jstext_days_from_civil(year, month, 1) + (double)(day - 1);
	v = v * JSTEXT_MS_PER_DAY + hour * 3600000.0 + minute * 60000.0 + second * 1000.0 + milli;
	if (!jstext_within(v, JSTEXT_MAX_TIME_MS))
		return 0;
	*ms = v + 0.0;
	return 1;
}

/* The ES5 date-time string format as V8's ParseES5DateTime accepts it:
 *   (YYYY | +YYYYYY | -YYYYYY) [-MM [-DD]] [T HH:mm [:ss [.f+]] [Z | +-hh:mm | +-hhmm]]
 * with HH 24 allowed only for 24:00[:00[.0]].  Strings V8 would hand to its
 * legacy (browser-compatible) parser are not accepted here: pi never writes
 * them. */
double jstext_iso_to_ms(const char *iso, int *ok)
{
	const char *p = iso;
	struct jstext_num n;
	int64_t year, month = 1, day = 1;
	int hour = 0, minute = 0, second = 0, milli = 0;
	int has_time = 0, has_tz = 0, tz_sign = 1;
	int tz_hour = 0, tz_min = 0;
	double ms;

	*ok = 0;
	if (!iso)
		return 0;
	if (jstext_iso_canonical(iso, &ms)) {
		*ok = 1;
		return ms;
	}
	if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;

		p++;
		n = jstext_read_num(&p);
		if (n.len != 6 || (sign < 0 && n.value == 0))
			return 0;
		year = (int64_t)sign * n.value;
	} else {
		n = jstext_read_num(&p);
		if (n.len != 4)
			return 0;
		year = n.value;
	}
	if (*p == '-') {
		p++;
		n = jstext_read_num(&p);
		if (n.len != 2 || n.value < 1 || n.value > 12)
			return 0;
		month = n.value;
		if (*p == '-') {
			p++;
			n = jstext_read_num(&p);
			if (n.len != 2 || n.value < 1 || n.value > 31)
				return 0;
			day = n.value;
		}
	}
	/* V8's fallback parser also takes a space for the T ("2026-11-29
	 * 10:00:03Z"), with the same meaning. */
	if (jstext_one_letter(&p, 't') || (*p == ' ' && p[1] >= '0' && p[1] <= '9' && p > iso + 7)) {
		if (*p == ' ')
			p++;
		has_time = 1;
		n = jstext_read_num(&p);
		if (n.len != 2 || n.value > 24)
			return 0;
		hour = n.value;
		if (*p++ != ':')
			return 0;
		n = jstext_read_num(&p);
		if (n.len != 2 || n.value > 59 || (hour == 24 && n.value > 0))
			return 0;
		minute = n.value;
		if (*p == ':') {
			p++;
			n = jstext_read_num(&p);
			if (n.len != 2 || n.value > 59 ||
			    (hour == 24 && n.value > 0))
				return 0;
			second = n.value;
			if (*p == '.') {
				p++;
				n = jstext_read_num(&p);
				if (n.len == 0 || (hour == 24 && n.value > 0))
					return 0;
				milli = jstext_millis(n);
			}
		}
		if (jstext_one_letter(&p, 'z')) {
			has_tz = 1;
		} else if (*p == '+' || *p == '-') {
			has_tz = 1;
			tz_sign = *p == '-' ? -1 : 1;
			p++;
			n = jstext_read_num(&p);
			if (n.len == 4) {
				tz_hour = n.value / 100;
				tz_min = n.value % 100;
			} else {
				if (n.len != 2)
					return 0;
				tz_hour = n.value;
				if (*p++ != ':')
					return 0;
				n = jstext_read_num(&p);
				if (n.len != 2)
					return 0;
				tz_min = n.value;
			}
			if (tz_hour > 23 || tz_min > 59)
				return 0;
		}
	}
	if (*p != '\0')
		return 0;

	ms = (double)jstext_days_from_civil(year, month, 1) + (double)(day - 1);
	ms = ms * JSTEXT_MS_PER_DAY + hour * 3600000.0 + minute * 60000.0 +
	     second * 1000.0 + milli;
	if (has_time && !has_tz) {
		/* the spec: date-time forms without an offset are local time */
		if (!jstext_within(ms, JSTEXT_MAX_LOCAL_MS))
			return 0;
		ms = jstext_local_to_utc(ms);
	} else {
		ms -= tz_sign * (tz_hour * 3600000.0 + tz_min * 60000.0);
	}
	if (!jstext_within(ms, JSTEXT_MAX_TIME_MS))
		return 0;
	*ok = 1;
	return ms + 0.0; /* no -0 */
}

int jstext_truthy(const json_t *v)
{
	if (!v || json_is_null(v) || json_is_false(v))
		return 0;
	if (json_is_string(v))
		return json_string_length(v) > 0;
	if (json_is_number(v)) {
		double d = json_number_value(v);
		return d == d && d != 0;
	}
	return 1;
}
