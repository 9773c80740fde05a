#include <locale.h>
#include <pthread.h>
#include <string.h>
#include <wctype.h>
#include "jscase.h"

static locale_t jscase_locale;
static pthread_once_t jscase_once = PTHREAD_ONCE_INIT;

static void jscase_init(void)
{
	/* A locale object of its own: the process's locale (the daemon's, a
	 * test's) is never changed, and pi's lowering does not depend on it. */
	jscase_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

int jscase_has_locale(void)
{
	pthread_once(&jscase_once, jscase_init);
	return jscase_locale != (locale_t)0;
}

uint32_t jscase_decode(const char *s, size_t n, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t c = p[0];
	size_t want = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
	if (want <= 1 || want > n) {
		*len = 1;
		return c;
	}
	c &= 0x7Fu >> want;
	for (size_t i = 1; i < want; i++) {
		if ((p[i] & 0xC0) != 0x80) {
			*len = 1;
			return p[0];
		}
		c = c << 6 | (p[i] & 0x3F);
	}
	*len = want;
	return c;
}

int jscase_is_space(uint32_t c)
{
	switch (c) {
	case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20:
	case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F:
	case 0x205F: case 0x3000: case 0xFEFF:
		return 1;
	default:
		return c >= 0x2000 && c <= 0x200A;
	}
}

static int jscase_put(struct buf *out, uint32_t c)
{
	char u[4];
	size_t n;
	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xC0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3F));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xE0 | c >> 12);
		u[1] = (char)(0x80 | (c >> 6 & 0x3F));
		u[2] = (char)(0x80 | (c & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | c >> 18);
		u[1] = (char)(0x80 | (c >> 12 & 0x3F));
		u[2] = (char)(0x80 | (c >> 6 & 0x3F));
		u[3] = (char)(0x80 | (c & 0x3F));
		n = 4;
	}
	return buf_put(out, u, n);
}

/* Case_Ignorable, approximately: the ASCII and Latin-1 members, the
 * combining marks of the common blocks, the format characters pi's texts
 * hold (soft hyphen, zero-width joiners), and the quotes and dots Unicode
 * lists (MidLetter, MidNumLet). */
static int jscase_ignorable(uint32_t c)
{
	switch (c) {
	case 0x27: case 0x2E: case 0x3A: case 0x5E: case 0x60: case 0xA8:
	case 0xAD: case 0xAF: case 0xB4: case 0xB7: case 0xB8: case 0x2018:
	case 0x2019: case 0x2024: case 0x2027: case 0x37A: case 0x384:
	case 0x385: case 0x387:
		return 1;
	default:
		return (c >= 0x300 && c <= 0x36F) || (c >= 0x483 && c <= 0x489) ||
		       (c >= 0x2B0 && c <= 0x2FF) || (c >= 0x200B && c <= 0x200F) ||
		       (c >= 0x2060 && c <= 0x2064) || (c >= 0x1AB0 && c <= 0x1AFF) ||
		       (c >= 0x1DC0 && c <= 0x1DFF) || (c >= 0x20D0 && c <= 0x20FF) ||
		       (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xFE20 && c <= 0xFE2F);
	}
}

/* Cased: has an upper or lower case form, as the locale's classes say. */
static int jscase_cased(uint32_t c)
{
	if (c < 0x80)
		return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
	if (jscase_ignorable(c))
		return 0;
	return jscase_locale && (iswupper_l((wint_t)c, jscase_locale) || iswlower_l((wint_t)c, jscase_locale));
}

/* Final_Sigma: a cased letter before (case-ignorables skipped), none after. */
static int jscase_final_sigma(const char *s, size_t n, size_t at, size_t len)
{
	int before = 0;
	size_t i = at;
	while (i > 0) {
		size_t j = i - 1, l;
		while (j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80)
			j--;
		uint32_t c = jscase_decode(s + j, n - j, &l);
		i = j;
		if (jscase_ignorable(c))
			continue;
		before = jscase_cased(c);
		break;
	}
	if (!before)
		return 0;
	for (i = at + len; i < n;) {
		size_t l;
		uint32_t c = jscase_decode(s + i, n - i, &l);
		i += l;
		if (jscase_ignorable(c))
			continue;
		return !jscase_cased(c);
	}
	return 1;
}

int jscase_lower(const char *s, size_t n, struct buf *out)
{
	pthread_once(&jscase_once, jscase_init);
	size_t i = 0;
	while (i < n) {
		/* Runs of ASCII, most of any text, are lowered eight bytes at a
		 * time without the locale (search reads every session's text
		 * through here): they keep their length, so they are written
		 * straight into out. */
		if (buf_reserve(out, n - i) < 0)
			return -1;
		char *o = out->data + out->len;
		const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
		while (n - i >= 8) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			if (w & highs)
				break;
			/* Bytes below 0x80 cannot carry into the next: the high bit
			 * of w + 0x3F says >= 'A', of w + 0x25 says > 'Z'. */
			uint64_t upper = (w + ones * (0x80 - 'A')) & ~(w + ones * (0x80 - 'Z' - 1)) & highs;
			w |= upper >> 2;
			memcpy(o, &w, 8);
			o += 8;
			i += 8;
		}
		while (i < n && (unsigned char)s[i] < 0x80) {
			unsigned char b = (unsigned char)s[i++];
			*o++ = (char)(b >= 'A' && b <= 'Z' ? b | 0x20 : b);
		}
		out->len = (size_t)(o - out->data);
		if (i >= n)
			break;
		unsigned char b = (unsigned char)s[i];
		size_t len;
		uint32_t c = jscase_decode(s + i, n - i, &len);
		if (len == 1) { /* not UTF-8: kept */
			if (buf_putc(out, (char)b) < 0)
				return -1;
			i++;
			continue;
		}
		uint32_t lc = c;
		if (c == 0x130) {
			if (jscase_put(out, 'i') < 0 || jscase_put(out, 0x307) < 0)
				return -1;
			i += len;
			continue;
		}
		if (c == 0x3A3)
			lc = jscase_final_sigma(s, n, i, len) ? 0x3C2 : 0x3C3;
		else if (jscase_locale && c < 0x10F800)
			lc = (uint32_t)towlower_l((wint_t)c, jscase_locale);
		if (lc == c) {
			if (buf_put(out, s + i, len) < 0)
				return -1;
		} else if (jscase_put(out, lc) < 0) {
			return -1;
		}
		i += len;
	}
	return 0;
}
