#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "jsonout.h"
#include "jstext.h"

void jsonout_shortest_e(double d, char *out)
{
	/* Whether a precision reads back as d only grows with the precision,
	 * and 17 digits always do: the least is found by halving, four or
	 * five printf and strtod calls where counting up took up to 17. */
	char attempt[40];
	int lo = 0, hi = 16;
	snprintf(out, 40, "%.16e", d);
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		snprintf(attempt, sizeof attempt, "%.*e", mid, d);
		if (strtod(attempt, NULL) == d) {
			hi = mid;
			memcpy(out, attempt, sizeof attempt);
		} else {
			lo = mid + 1;
		}
	}
}

void jsonout_number(double d, char *out)
{
	char digits[32], tmp[40];
	int exp10 = 0, k = 0;

	if (!isfinite(d)) {
		strcpy(out, "null"); /* JSON.stringify(NaN) */
		return;
	}
	if (d == 0) {
		strcpy(out, "0"); /* also -0 */
		return;
	}
	/* An integer below 2^53 is its digits (Number::toString has no
	 * exponent below 1e21): token counts, mostly. */
	if (d == floor(d) && fabs(d) < 9007199254740992.0) {
		snprintf(out, 32, "%lld", (long long)d);
		return;
	}
	/* Shortest precision that round-trips, then JS's Number#toString
	 * layout (ECMA-262 Number::toString). */
	jsonout_shortest_e(d, tmp);
	char *p = tmp;
	char *o = out;
	if (*p == '-') {
		*o++ = '-';
		p++;
	}
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[k++] = *p;
	digits[k] = '\0';
	exp10 = atoi(p + 1);
	while (k > 1 && digits[k - 1] == '0')
		digits[--k] = '\0';
	int n = exp10 + 1; /* position of the decimal point */
	if (k <= n && n <= 21) {
		memcpy(o, digits, (size_t)k);
		o += k;
		for (int i = k; i < n; i++)
			*o++ = '0';
	} else if (0 < n && n <= 21) {
		memcpy(o, digits, (size_t)n);
		o += n;
		*o++ = '.';
		memcpy(o, digits + n, (size_t)(k - n));
		o += k - n;
	} else if (-6 < n && n <= 0) {
		*o++ = '0';
		*o++ = '.';
		for (int i = 0; i < -n; i++)
			*o++ = '0';
		memcpy(o, digits, (size_t)k);
		o += k;
	} else {
		*o++ = digits[0];
		if (k > 1) {
			*o++ = '.';
			memcpy(o, digits + 1, (size_t)(k - 1));
			o += k - 1;
		}
		o += sprintf(o, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
	}
	*o = '\0';
}

static int jsonout_string(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	if (buf_putc(b, '"'))
		return -1;
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char u[7];
		if (c == 0xf4 && i + 3 < n && (unsigned char)s[i + 1] == 0x8f && (unsigned char)s[i + 2] >= 0xa0) {
			/* A lone surrogate's stand-in (jstext.h): JSON.stringify
			 * writes the surrogate as an escape. */
			unsigned cp = 0x10f000u | (((unsigned char)s[i + 2] & 0x3fu) << 6) | ((unsigned char)s[i + 3] & 0x3fu);
			unsigned unit = 0xd800u + (cp - JSTEXT_SURROGATE_BASE);
			if (buf_put(b, s + run, i - run) ||
			    buf_printf(b, "\\u%04x", unit))
				return -1;
			i += 3;
			run = i + 1;
			continue;
		}
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		if (buf_put(b, s + run, i - run))
			return -1;
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			u[0] = '\\'; u[1] = 'u'; u[2] = '0'; u[3] = '0';
			u[4] = hex[c >> 4]; u[5] = hex[c & 15]; u[6] = '\0';
			esc = u;
		}
		if (buf_puts(b, esc))
			return -1;
		run = i + 1;
	}
	if (buf_put(b, s + run, n - run))
		return -1;
	return buf_putc(b, '"');
}

static int jsonout_indent(struct buf *b, int indent, int depth)
{
	if (!indent)
		return 0;
	if (buf_putc(b, '\n'))
		return -1;
	for (int i = 0; i < depth * indent; i++)
		if (buf_putc(b, ' '))
			return -1;
	return 0;
}

/* An array index as JavaScript defines one: the canonical decimal form of
 * an integer 0 .. 2^32 - 2.  Objects list such keys first, in numeric
 * order, whatever order they were made in (OrdinaryOwnPropertyKeys), and
 * JSON.stringify follows that order. */
static int jsonout_index_key(const char *key, uint32_t *out)
{
	uint64_t n = 0;
	if (!key[0] || (key[0] == '0' && key[1]))
		return 0;
	for (const char *p = key; *p; p++) {
		if (*p < '0' || *p > '9' || p - key >= 10)
			return 0;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	if (n > 4294967294u)
		return 0;
	*out = (uint32_t)n;
	return 1;
}

struct jsonout_indexed {
	uint32_t index;
	const char *key;
	json_t *member;
};

static int jsonout_by_index(const void *a, const void *b)
{
	uint32_t x = ((const struct jsonout_indexed *)a)->index, y = ((const struct jsonout_indexed *)b)->index;
	return x < y ? -1 : x > y;
}

static int jsonout_value(struct buf *b, const json_t *v, int indent, int depth);

static int jsonout_member(struct buf *b, const char *key, const json_t *member, int indent, int depth, int *first)
{
	if ((!*first && buf_putc(b, ',')) || jsonout_indent(b, indent, depth + 1) ||
	    jsonout_string(b, key, strlen(key)) || buf_puts(b, indent ? ": " : ":") ||
	    jsonout_value(b, member, indent, depth + 1))
		return -1;
	*first = 0;
	return 0;
}

static int jsonout_object(struct buf *b, const json_t *v, int indent, int depth)
{
	const char *key;
	json_t *member;
	struct jsonout_indexed *idx = NULL;
	size_t n_idx = 0;
	uint32_t k;
	int first = 1, rc = -1;
	json_object_foreach((json_t *)v, key, member)
		n_idx += jsonout_index_key(key, &k);
	if (n_idx) {
		if (!(idx = malloc(n_idx * sizeof *idx)))
			return -1;
		n_idx = 0;
		json_object_foreach((json_t *)v, key, member)
			if (jsonout_index_key(key, &k))
				idx[n_idx++] = (struct jsonout_indexed){ k, key, member };
		qsort(idx, n_idx, sizeof *idx, jsonout_by_index);
	}
	if (buf_putc(b, '{'))
		goto out;
	for (size_t i = 0; i < n_idx; i++)
		if (jsonout_member(b, idx[i].key, idx[i].member, indent, depth, &first))
			goto out;
	json_object_foreach((json_t *)v, key, member)
		if (!jsonout_index_key(key, &k) && jsonout_member(b, key, member, indent, depth, &first))
			goto out;
	if (!first && jsonout_indent(b, indent, depth))
		goto out;
	rc = buf_putc(b, '}');
out:
	free(idx);
	return rc;
}

/* Recursion is bounded: values come from jansson, which caps nesting at
 * 2048 levels when parsing. */
static int jsonout_value(struct buf *b, const json_t *v, int indent, int depth)
{
	char num[40];
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return jsonout_object(b, v, indent, depth);
	case JSON_ARRAY: {
		size_t i;
		json_t *item;
		if (buf_putc(b, '['))
			return -1;
		json_array_foreach(v, i, item) {
			if ((i && buf_putc(b, ',')) || jsonout_indent(b, indent, depth + 1) ||
			    jsonout_value(b, item, indent, depth + 1))
				return -1;
		}
		if (json_array_size(v) && jsonout_indent(b, indent, depth))
			return -1;
		return buf_putc(b, ']');
	}
	case JSON_STRING:
		return jsonout_string(b, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf_puts(b, num);
	case JSON_REAL:
		jsonout_number(json_real_value(v), num);
		return buf_puts(b, num);
	case JSON_TRUE:
		return buf_puts(b, "true");
	case JSON_FALSE:
		return buf_puts(b, "false");
	case JSON_NULL:
		return buf_puts(b, "null");
	}
	return -1;
}

static ps_err jsonout_dump(const json_t *value, int indent, int newline, char **out, size_t *len)
{
	struct buf b = BUF_INIT;
	if (jsonout_value(&b, value, indent, 0) || (newline && buf_putc(&b, '\n')) || buf_finish(&b)) {
		buf_free(&b);
		return PS_ERR_NOMEM;
	}
	*out = b.data;
	*len = b.len;
	return PS_OK;
}

ps_err jsonout_pretty(const json_t *value, char **buf, size_t *len)
{
	return jsonout_dump(value, 2, 1, buf, len);
}

ps_err jsonout_compact(const json_t *value, char **buf, size_t *len)
{
	return jsonout_dump(value, 0, 0, buf, len);
}
