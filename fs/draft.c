#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "draft.h"
#include "draftrecord.h"
#include "lockorder.h"

struct draft *draft_new(enum draft_target target)
{
	struct draft *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	pthread_mutex_init(&d->lock, NULL);
	d->refs = 1;
	d->target = target;
	return d;
}

struct draft *draft_new_with(const char *data, size_t len)
{
	struct draft *d = len <= DRAFT_MAX ? draft_new(DRAFT_OVERLAY) : NULL;
	if (!d)
		return NULL;
	if (!(d->data = malloc(len + 1))) {
		draft_put(d);
		return NULL;
	}
	if (len)
		memcpy(d->data, data, len);
	d->data[len] = '\0';
	d->len = len;
	__atomic_store_n(&d->size, len, __ATOMIC_RELAXED);
	return d;
}

struct draft *draft_get(struct draft *d)
{
	__atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
	return d;
}

void draft_put(struct draft *d)
{
	if (!d || __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	pthread_mutex_destroy(&d->lock);
	/* A text fsynced, then neither appended nor refused (its last commit
	 * failed: a full disk): its record stays for the next start to
	 * recover.  Otherwise the writer threw it away (the file was removed)
	 * or it was appended. */
	draftrecord_end(d->record, d->failed && d->dirty);
	free(d->data);
	free(d);
}

void draft_lock(struct draft *d)
{
	lockorder_lock(&d->lock, LOCK_DRAFT);
}

void draft_unlock(struct draft *d)
{
	lockorder_unlock(&d->lock, LOCK_DRAFT);
}

size_t draft_size(const struct draft *d)
{
	return __atomic_load_n(&d->size, __ATOMIC_RELAXED);
}

static int draft_reserve(struct draft *d, size_t size)
{
	if (size > DRAFT_MAX)
		return -EFBIG;
	if (size <= d->len && d->data)
		return 0;
	char *grown = realloc(d->data, size + 1);
	if (!grown)
		return -ENOMEM;
	if (size >= d->len)
		memset(grown + d->len, 0, size + 1 - d->len);
	d->data = grown;
	if (size > d->len)
		d->len = size;
	return 0;
}

static void draft_sized(struct draft *d)
{
	__atomic_store_n(&d->size, d->len, __ATOMIC_RELAXED);
}

int draft_write(struct draft *d, const char *buf, size_t size, size_t off)
{
	if (off > DRAFT_MAX || size > DRAFT_MAX - off)
		return -EFBIG;
	int res = draft_reserve(d, off + size);
	if (res)
		return res;
	if (size)
		memcpy(d->data + off, buf, size);
	d->dirty = 1;
	d->truncated = 0;
	d->failed = 0;
	draft_sized(d);
	return (int)size;
}

int draft_truncate(struct draft *d, size_t size)
{
	if (size > d->len) {
		int res = draft_reserve(d, size);
		if (res)
			return res;
	} else {
		d->len = size;
		if (d->data)
			d->data[size] = '\0';
	}
	d->dirty = 1;
	d->failed = 0;
	draft_sized(d);
	return 0;
}

void draft_bind(struct draft *d, const char *project, const char *session, uint32_t entry, uint64_t serial,
		uint64_t generation, uint64_t raw_base)
{
	snprintf(d->project, sizeof d->project, "%s", project);
	snprintf(d->session, sizeof d->session, "%s", session);
	d->entry = entry;
	d->serial = serial;
	d->generation = generation;
	d->raw_base = raw_base;
}

void draft_empty(struct draft *d, int emptied)
{
	d->len = 0;
	if (d->data)
		d->data[0] = '\0';
	d->truncated = emptied;
	draft_sized(d);
}

void draft_discard(struct draft *d)
{
	draft_empty(d, 0);
	d->dirty = 0;
}

void draft_raw_done(struct draft *d, int appended)
{
	if (appended)
		d->raw_base += d->len;
	draft_discard(d);
}

void draft_refuse(struct draft *d)
{
	d->refused = 1;
	d->dirty = 0;
	d->truncated = 0;
}

void draft_retarget(struct draft *d, enum draft_target target)
{
	d->target = target;
}

size_t draft_read(const struct draft *d, char *buf, size_t size, size_t off)
{
	if (off >= d->len)
		return 0;
	if (size > d->len - off)
		size = d->len - off;
	memcpy(buf, d->data + off, size);
	return size;
}

void draft_committed(struct draft *d, const char *project, const char *session, const char *id)
{
	d->dirty = 0;
	d->truncated = 0;
	d->failed = 0;
	d->committed = 1;
	if (project != d->project)
		snprintf(d->project, sizeof d->project, "%s", project);
	if (session != d->session)
		snprintf(d->session, sizeof d->session, "%s", session);
	if (!id)
		return;
	d->target = DRAFT_REVISE;
	snprintf(d->id, sizeof d->id, "%s", id);
}

void draft_adopt(struct draft *d, char *data, size_t len)
{
	char *room = data ? realloc(data, len + 1) : NULL;
	if (data && !room) {
		/* Keep what fits: the text, short of its terminator's byte,
		 * is still the text (draft_read never reads past len). */
		room = data;
	} else if (room) {
		room[len] = '\0';
	}
	free(d->data);
	d->data = room;
	d->len = room ? len : 0;
	draft_sized(d);
}

void draft_after_commit(struct draft *d, int res)
{
	if ((res == -ENOSPC || res == -ENOMEM) && d->dirty)
		d->failed = 1;
	if (d->record && !d->dirty) {
		draftrecord_end(d->record, 0);
		d->record = NULL;
	}
}

ps_err draft_save_record(struct draft *d, const char *dir, const char *path, uid_t uid, gid_t gid)
{
	return draftrecord_save(&d->record, dir, path, uid, gid, d->data, d->len);
}
