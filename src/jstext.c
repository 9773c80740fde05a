#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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
