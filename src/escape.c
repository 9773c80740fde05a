#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "escape.h"
#include "strpool.h"

static int escape_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

char *escape_name(const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = malloc(n * 3 + 1);
	size_t o = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (escape_plain(c)) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return out;
}

static int escape_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t escape_unname(char *s)
{
	size_t o = 0;
	for (size_t i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '%') {
			int hi = escape_hexval(s[i + 1]);
			int lo = hi < 0 ? -1 : escape_hexval(s[i + 2]);
			if (lo < 0)
				return (size_t)-1;
			c = (unsigned char)(hi * 16 + lo);
			if (escape_plain(c))
				return (size_t)-1;
			i += 2;
		} else if (!escape_plain(c)) {
			return (size_t)-1;
		}
		s[o++] = (char)c;
	}
	s[o] = '\0';
	return o;
}

char *escape_name_max(const char *s, size_t n, size_t limit)
{
	char *out = escape_name(s, n);
	size_t len = out ? strlen(out) : 0;
	if (!out || len <= limit)
		return out;
	size_t keep = limit - 18;
	/* Never cut inside a %XX escape. */
	while (keep > 0 && (out[keep - 1] == '%' || (keep > 1 && out[keep - 2] == '%')))
		keep--;
	snprintf(out + keep, len + 1 - keep, "~h%016llx", (unsigned long long)strpool_hash(s, n));
	return out;
}

int escape_is_shortened(const char *part)
{
	return strstr(part, "~h") != NULL;
}
