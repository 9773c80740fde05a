/* A growable byte buffer.  Functions return 0, or -1 when memory runs out
 * (the buffer then keeps what it had). */
#ifndef PS_BUF_H
#define PS_BUF_H

#include <stddef.h>

struct buf {
	char *data;
	size_t len, cap;
};

#define BUF_INIT { NULL, 0, 0 }

int buf_put(struct buf *b, const void *p, size_t n);
/* Makes room for extra more bytes after len (and the NUL of buf_finish),
 * for a caller that writes into data directly. */
int buf_reserve(struct buf *b, size_t extra);
int buf_puts(struct buf *b, const char *s);
int buf_putc(struct buf *b, char c);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* NUL-terminates (not counted in len) so data can be used as a C string. */
int buf_finish(struct buf *b);
void buf_free(struct buf *b);

#endif
