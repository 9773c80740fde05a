#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <stdio.h>
#include "buf.h"
#include "escape.h"
#include "title.h"

#define TITLE_ELLIPSIS "\xe2\x80\xa6"

char *title_line(const char *name, const char *first, size_t first_len, size_t max)
{
	const char *s = "(no messages)";
	size_t n = strlen(s);
	if (name && *name) {
		s = name;
		n = strlen(name);
	} else if (first && first_len) {
		s = first;
		n = first_len;
	}
	struct buf b = BUF_INIT;
	int space = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f || c == ' ') {
			space = b.len > 0;
			continue;
		}
		if ((space && buf_putc(&b, ' ')) || buf_putc(&b, (char)c))
			goto nomem;
		space = 0;
	}
	if (max < 8)
		max = 8;
	if (b.len > max) {
		/* Back to a character's start, with room for the ellipsis. */
		size_t cut = max - (sizeof TITLE_ELLIPSIS - 1);
		while (cut > 0 && ((unsigned char)b.data[cut] & 0xc0) == 0x80)
			cut--;
		while (cut > 0 && b.data[cut - 1] == ' ')
			cut--;
		b.len = cut;
		if (buf_puts(&b, TITLE_ELLIPSIS))
			goto nomem;
	}
	if (buf_finish(&b))
		goto nomem;
	return b.data ? b.data : strdup("");
nomem:
	buf_free(&b);
	return NULL;
}

char *title_file_name(size_t rank, const char *title, const char *tail)
{
	/* The rank's digits and its '-', the '~': room kept for them. */
	char *esc_tail = escape_typed_name(tail, strlen(tail), NAME_MAX / 2);
	char *esc_title = esc_tail ? escape_typed_name(title, strlen(title), NAME_MAX - strlen(esc_tail) - 24) : NULL;
	char *name = NULL;
	if (esc_title && asprintf(&name, "%02zu-%s~%s", rank, esc_title, esc_tail) < 0)
		name = NULL;
	free(esc_tail);
	free(esc_title);
	return name;
}

int title_id_ends(const char *id, const char *tail)
{
	size_t il = strlen(id), tl = strlen(tail);
	return il >= tl && strcmp(id + il - tl, tail) == 0;
}

const char *title_id_tail(const char *const *ids, size_t n, size_t self)
{
	const char *id = ids[self];
	size_t len = strlen(id);
	for (size_t want = 8;; want += 4) {
		const char *t = len > want ? id + len - want : id;
		int clash = 0;
		for (size_t k = 0; k < n && !clash; k++)
			clash = k != self && title_id_ends(ids[k], t);
		if (!clash || t == id)
			return t;
	}
}
