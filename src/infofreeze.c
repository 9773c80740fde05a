/* SessionInfos as bytes (infofreeze.h): a fixed block of numbers, the
 * tail, then the strings and texts, each with its length. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "infofreeze.h"

#define FREEZE_MAGIC INFOFREEZE_MAGIC

struct frozen_state {
	int32_t header, dropped, has_name, pad;
	uint64_t message_count, first_off, first_len, text_len, lower_len, n_messages;
	double last_activity;
};

struct frozen_info {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	int32_t is_session, jansson_only;
	uint32_t tail_len, pad;
	double created_ms, modified_ms, header_ms;
	uint64_t message_count, committed_off, fast_messages;
	struct frozen_state cur, committed;
	unsigned char tail[64];
};

static void freeze_state(const struct sessioninfo_state *st, struct frozen_state *f)
{
	memset(f, 0, sizeof *f);
	f->header = st->header;
	f->dropped = st->dropped;
	f->has_name = st->name != NULL;
	f->message_count = st->message_count;
	f->first_off = st->first_off;
	f->first_len = st->first_len;
	f->text_len = st->text_len;
	f->lower_len = st->lower_len;
	f->n_messages = st->n_messages;
	f->last_activity = st->last_activity;
}

/* Its length, its bytes, then a NUL: a view of it is a C string. */
static int freeze_bytes(struct buf *out, const void *p, size_t n)
{
	uint64_t len = n;
	return buf_put(out, &len, sizeof len) || buf_put(out, p, n) || buf_putc(out, '\0');
}

static int freeze_str(struct buf *out, const char *s)
{
	return freeze_bytes(out, s ? s : "", s ? strlen(s) : 0);
}

ps_err infofreeze_put(const struct sessioninfo *info, struct buf *out)
{
	struct frozen_info f;
	memset(&f, 0, sizeof f);
	f.dev = (uint64_t)info->dev;
	f.ino = (uint64_t)info->ino;
	f.size = info->size;
	f.mtime_ns = info->mtime_ns;
	f.is_session = info->is_session;
	f.jansson_only = info->jansson_only;
	f.tail_len = info->tail_len;
	f.created_ms = info->created_ms;
	f.modified_ms = info->modified_ms;
	f.header_ms = info->header_ms;
	f.message_count = info->message_count;
	f.committed_off = info->committed_off;
	f.fast_messages = info->fast_messages;
	freeze_state(&info->cur, &f.cur);
	freeze_state(&info->committed, &f.committed);
	memcpy(f.tail, info->tail, sizeof f.tail);
	if (buf_put(out, FREEZE_MAGIC, 4) || buf_put(out, &f, sizeof f) || freeze_str(out, info->id) ||
	    freeze_str(out, info->cwd) || freeze_str(out, info->cur.name) || freeze_str(out, info->committed.name) ||
	    freeze_bytes(out, info->text.data, info->text.len) || freeze_bytes(out, info->lower.data, info->lower.len))
		return PS_ERR_NOMEM;
	return PS_OK;
}

struct thaw {
	const unsigned char *p, *end;
};

/* The next length-prefixed piece: 0, or -1 when the bytes end first. */
static int thaw_piece(struct thaw *t, const char **data, size_t *len)
{
	uint64_t n;
	if ((size_t)(t->end - t->p) < sizeof n)
		return -1;
	memcpy(&n, t->p, sizeof n);
	t->p += sizeof n;
	if (n >= (uint64_t)(t->end - t->p) || t->p[n] != '\0')
		return -1;
	*data = (const char *)t->p;
	*len = (size_t)n;
	t->p += n + 1;
	return 0;
}

/* A C string of the piece (NULL when it holds a NUL, or no memory). */
static char *thaw_str(const char *data, size_t len)
{
	if (memchr(data, '\0', len))
		return NULL;
	return strndup(data, len);
}

static int thaw_state(const struct frozen_state *f, const char *name, size_t name_len, size_t text_len,
		      size_t lower_len, struct sessioninfo_state *st)
{
	if (f->text_len > text_len || f->lower_len > lower_len || f->first_off > f->text_len ||
	    f->first_len > f->text_len - f->first_off || f->header < -1 || f->header > 1)
		return -1;
	st->header = f->header;
	st->dropped = f->dropped;
	st->message_count = f->message_count;
	st->last_activity = f->last_activity;
	st->first_off = (size_t)f->first_off;
	st->first_len = (size_t)f->first_len;
	st->text_len = (size_t)f->text_len;
	st->lower_len = (size_t)f->lower_len;
	st->n_messages = (size_t)f->n_messages;
	st->name = NULL;
	if (f->has_name && !(st->name = thaw_str(name, name_len)))
		return -1;
	return 0;
}

static int thaw_text(struct buf *b, const char *data, size_t len)
{
	b->len = 0;
	return buf_put(b, data, len) || buf_finish(b);
}

/* The pieces of frozen bytes, checked: 0, or -1 when they are not such
 * bytes. */
struct frozen_pieces {
	struct frozen_info f;
	const char *id, *cwd, *cur_name, *com_name, *text, *lower;
	size_t id_len, cwd_len, cur_name_len, com_name_len, text_len, lower_len;
};

static int freeze_parse(const void *data, size_t len, struct frozen_pieces *p)
{
	struct thaw t = { data, (const unsigned char *)data + len };
	if (len < 4 + sizeof p->f || memcmp(data, FREEZE_MAGIC, 4) != 0)
		return -1;
	memcpy(&p->f, t.p + 4, sizeof p->f);
	t.p += 4 + sizeof p->f;
	if (thaw_piece(&t, &p->id, &p->id_len) || thaw_piece(&t, &p->cwd, &p->cwd_len) ||
	    thaw_piece(&t, &p->cur_name, &p->cur_name_len) || thaw_piece(&t, &p->com_name, &p->com_name_len) ||
	    thaw_piece(&t, &p->text, &p->text_len) || thaw_piece(&t, &p->lower, &p->lower_len) || t.p != t.end ||
	    p->f.tail_len > sizeof p->f.tail || p->f.committed_off > p->f.size)
		return -1;
	const struct frozen_state *c = &p->f.cur;
	if (c->text_len > p->text_len || c->lower_len > p->lower_len || c->first_off > c->text_len ||
	    c->first_len > c->text_len - c->first_off || memchr(p->id, '\0', p->id_len) ||
	    memchr(p->cwd, '\0', p->cwd_len) || memchr(p->cur_name, '\0', p->cur_name_len))
		return -1;
	return 0;
}

ps_err infofreeze_view(const void *data, size_t len, struct infoview *out)
{
	struct frozen_pieces p;
	if (freeze_parse(data, len, &p))
		return PS_ERR_INVALID;
	out->is_session = p.f.is_session != 0;
	out->modified_ms = p.f.modified_ms;
	out->id = p.id;
	out->cwd = p.cwd;
	out->name = p.f.cur.has_name ? p.cur_name : NULL;
	out->text = p.text;
	out->text_len = p.text_len;
	out->lower = p.lower;
	out->lower_len = p.lower_len;
	out->first = p.text + p.f.cur.first_off;
	out->first_len = (size_t)p.f.cur.first_len;
	return PS_OK;
}

ps_err infofreeze_take(const char *path, const void *data, size_t len, struct sessioninfo **out)
{
	struct frozen_pieces p;
	*out = NULL;
	if (freeze_parse(data, len, &p))
		return PS_ERR_INVALID;
	const struct frozen_info f = p.f;
	struct sessioninfo *info = calloc(1, sizeof *info);
	if (!info)
		return PS_ERR_NOMEM;
	ps_err err = PS_ERR_NOMEM;
	info->cur.last_activity = info->committed.last_activity = NAN;
	if (!(info->path = strdup(path)))
		goto fail;
	err = PS_ERR_INVALID;
	if (!(info->id = thaw_str(p.id, p.id_len)) || !(info->cwd = thaw_str(p.cwd, p.cwd_len)) ||
	    thaw_state(&f.cur, p.cur_name, p.cur_name_len, p.text_len, p.lower_len, &info->cur) ||
	    thaw_state(&f.committed, p.com_name, p.com_name_len, f.cur.text_len, f.cur.lower_len, &info->committed) ||
	    thaw_text(&info->text, p.text, p.text_len) || thaw_text(&info->lower, p.lower, p.lower_len))
		goto fail;
	info->dev = (dev_t)f.dev;
	info->ino = (ino_t)f.ino;
	info->size = f.size;
	info->mtime_ns = f.mtime_ns;
	info->is_session = f.is_session != 0;
	info->jansson_only = f.jansson_only;
	info->tail_len = f.tail_len;
	memcpy(info->tail, f.tail, sizeof info->tail);
	info->created_ms = f.created_ms;
	info->modified_ms = f.modified_ms;
	info->header_ms = f.header_ms;
	info->message_count = f.message_count;
	info->committed_off = f.committed_off;
	info->fast_messages = f.fast_messages;
	info->name = info->cur.name;
	*out = info;
	return PS_OK;
fail:
	sessioninfo_free(info);
	return err;
}
