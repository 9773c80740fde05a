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

static int escape_upper_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

static int escape_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

int escape_typed_shortened(const char *name)
{
	size_t n = strlen(name);
	if (n < 18 || name[n - 18] != '~' || name[n - 17] != 'h')
		return 0;
	for (size_t i = n - 16; i < n; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return 1;
}

char *escape_typed_name(const char *s, size_t n, size_t limit)
{
	static const char hex[] = "0123456789ABCDEF";
	int dots = (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
	char *out = malloc(n * 3 + 1);
	size_t o = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int esc = c == '/' || escape_control(c) || dots ||
			  (c == '%' && i + 2 < n && escape_upper_hex(s[i + 1]) && escape_upper_hex(s[i + 2]));
		if (esc) {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	if (o <= limit && escape_typed_shortened(out)) {
		/* Only a cut name may end in ~h<hash>: this '~' is escaped. */
		char *longer = malloc(o + 3);
		if (!longer) {
			free(out);
			return NULL;
		}
		snprintf(longer, o + 3, "%.*s%%7E%s", (int)(o - 18), out, out + o - 17);
		free(out);
		out = longer;
		o += 2;
	}
	if (o <= limit)
		return out;
	/* Room for a few characters and the hash, even where a caller's
	 * suffix leaves less. */
	size_t keep = (limit < 24 ? 24 : limit) - 18;
	if (o <= keep + 18)
		return out;
	/* Never cut inside a %XX escape or a UTF-8 sequence. */
	for (;;) {
		if (keep > 0 && out[keep - 1] == '%')
			keep--;
		else if (keep > 1 && out[keep - 2] == '%')
			keep -= 2;
		else if (keep > 0 && ((unsigned char)out[keep] & 0xC0) == 0x80)
			keep--;
		else
			break;
	}
	snprintf(out + keep, o + 1 - keep, "~h%016llx", (unsigned long long)strpool_hash(s, n));
	return out;
}

char *escape_typed_string(const char *name, size_t *len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(name), o = 0;
	char *canon = malloc(n * 3 + 1), *str = malloc(n + 1), *again = NULL;
	*len = (size_t)-1;
	if (!canon || !str)
		goto fail;
	/* What the name would be with its control characters escaped... */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (escape_control(c)) {
			canon[o++] = '%';
			canon[o++] = hex[c >> 4];
			canon[o++] = hex[c & 15];
		} else {
			canon[o++] = (char)c;
		}
	}
	canon[o] = '\0';
	/* ...decoded, must be the name of what it decodes to. */
	size_t k = 0;
	for (size_t i = 0; i < o; i++) {
		if (canon[i] == '%' && i + 2 < o && escape_upper_hex(canon[i + 1]) && escape_upper_hex(canon[i + 2])) {
			str[k++] = (char)((strchr(hex, canon[i + 1]) - hex) * 16 + (strchr(hex, canon[i + 2]) - hex));
			i += 2;
		} else {
			str[k++] = canon[i];
		}
	}
	str[k] = '\0';
	again = escape_typed_name(str, k, (size_t)-1);
	if (!again)
		goto fail;
	if (strcmp(again, canon) != 0 || memchr(str, '\0', k)) {
		free(str);
		str = NULL;
		k = 0;
	}
	free(canon);
	free(again);
	*len = k;
	return str;
fail:
	free(canon);
	free(str);
	return NULL;
}
