#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"

int buf_reserve(struct buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1) {
		if (cap > (size_t)-1 / 2)
			return -1;
		cap *= 2;
	}
	char *d = realloc(b->data, cap);
	if (!d)
		return -1;
	b->data = d;
	b->cap = cap;
	return 0;
}

int buf_put(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (buf_reserve(b, n))
		return -1;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_put(b, s, strlen(s));
}

int buf_putc(struct buf *b, char c)
{
	if (buf_reserve(b, 1))
		return -1;
	b->data[b->len++] = c;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_reserve(b, (size_t)n))
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int buf_finish(struct buf *b)
{
	if (buf_reserve(b, 0))
		return -1;
	b->data[b->len] = '\0';
	return 0;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
