/* What the store-wide files keep between calls (overviewmemo.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filememo.h"
#include "listingmemo.h"
#include "lockorder.h"
#include "overviewmemo.h"
#include "store.h"

/* One per overview file recently stat'ed: the store's and a few projects'. */
#define OVERVIEW_SLOTS 16

struct overview_slot {
	int used;           /* slot in use */
	const char *file;   /* its name (static: overview.c's names) */
	int whole_store;    /* the store's file, else project's */
	char *project;
	struct buf listing; /* what the length was built from */
	size_t len;
	char *text;         /* the file as stat built it, for the open that follows (at most one slot's) */
	uint64_t last_use;  /* the least recently used slot goes first */
};

struct overview_memo {
	struct filememo *rows; /* each session's rows (filememo.h), NULL: none kept */
	struct diskmemo *disk; /* each file's last text, across mounts (listingmemo.h); borrowed */
	pthread_mutex_t lock;
	struct overview_slot slot[OVERVIEW_SLOTS];
	uint64_t clock;
};

static int overview_same_key(const struct overview_slot *m, const char *file, const char *project)
{
	return m->used && strcmp(m->file, file) == 0 &&
	       (project ? !m->whole_store && strcmp(m->project, project) == 0 : m->whole_store);
}

/* Whether slot m was kept for file of project as of exactly listing. */
static int overview_slot_matches(const struct overview_slot *m, const char *file, const char *project,
				 const struct buf *listing)
{
	return overview_same_key(m, file, project) && m->listing.len == listing->len &&
	       (!listing->len || memcmp(m->listing.data, listing->data, listing->len) == 0);
}

int overview_memo_length(struct overview_memo *memo, const char *file, const char *project, const struct buf *listing,
			 size_t *len)
{
	int found = 0;
	lockorder_lock(&memo->lock, LOCK_OVERVIEW);
	for (size_t i = 0; i < OVERVIEW_SLOTS && !found; i++) {
		struct overview_slot *m = &memo->slot[i];
		if (overview_slot_matches(m, file, project, listing)) {
			*len = m->len;
			m->last_use = ++memo->clock;
			found = 1;
		}
	}
	lockorder_unlock(&memo->lock, LOCK_OVERVIEW);
	return found;
}

static void overview_slot_free(struct overview_slot *m)
{
	free(m->text);
	free(m->project);
	buf_free(&m->listing);
	memset(m, 0, sizeof *m);
}

/* Keeps len for the listing (taken: *listing is emptied), and the text it
 * is the length of (taken, may be NULL): `cat` stats the file, then opens
 * it, and building it twice was a tenth of a store's first sessions.md;
 * every later open of the unchanged file copies it.  Only the newest text
 * is kept, so a stat of every overview file (ls -l) holds one file's
 * text, not six. */
void overview_memo_keep(struct overview_memo *memo, const char *file, const char *project, struct buf *listing,
			      size_t len, char **text)
{
	char *key = project ? strdup(project) : NULL;
	if (project && !key)
		return;
	lockorder_lock(&memo->lock, LOCK_OVERVIEW);
	struct overview_slot *m = NULL;
	for (size_t i = 0; i < OVERVIEW_SLOTS && !m; i++)
		if (overview_same_key(&memo->slot[i], file, project))
			m = &memo->slot[i];
	for (size_t i = 0; i < OVERVIEW_SLOTS && !m; i++)
		if (!memo->slot[i].used)
			m = &memo->slot[i];
	if (!m) {
		m = &memo->slot[0];
		for (size_t i = 1; i < OVERVIEW_SLOTS; i++)
			if (memo->slot[i].last_use < m->last_use)
				m = &memo->slot[i];
	}
	overview_slot_free(m);
	for (size_t i = 0; i < OVERVIEW_SLOTS; i++) {
		free(memo->slot[i].text);
		memo->slot[i].text = NULL;
	}
	m->used = 1;
	m->file = file;
	m->whole_store = !project;
	m->project = key;
	m->listing = *listing;
	m->len = len;
	m->text = *text;
	m->last_use = ++memo->clock;
	lockorder_unlock(&memo->lock, LOCK_OVERVIEW);
	*listing = (struct buf)BUF_INIT;
	*text = NULL;
}

/* A copy (new) of the text overview_memo_keep kept for file as of
 * listing, or NULL: another file's kept since, or the sessions changed.
 * The text stays kept: each `cat` stats, then opens, and a cat of an
 * unchanged file should cost a walk of the store, not a build. */
char *overview_memo_text(struct overview_memo *memo, const char *file, const char *project,
				const struct buf *listing, size_t *len)
{
	char *text = NULL;
	lockorder_lock(&memo->lock, LOCK_OVERVIEW);
	for (size_t i = 0; i < OVERVIEW_SLOTS && !text; i++) {
		struct overview_slot *m = &memo->slot[i];
		if (m->text && overview_slot_matches(m, file, project, listing)) {
			if ((text = malloc(m->len ? m->len : 1)))
				memcpy(text, m->text, m->len);
			*len = m->len;
			break;
		}
	}
	lockorder_unlock(&memo->lock, LOCK_OVERVIEW);
	return text;
}

/* The name file of project is kept under on disk (listingmemo.h). */
static void overview_memo_disk_name(const char *file, const char *project, char *name, size_t size)
{
	snprintf(name, size, "%s/%s", project ? project : "", file);
}

/* The text of file as of listing, from the disk (new), or NULL. */
char *overview_memo_disk_text(struct overview_memo *memo, const char *file, const char *project,
			      const struct buf *listing, size_t *len)
{
	char name[STORE_PROJECT_MAX + 32];
	struct buf text = BUF_INIT;
	overview_memo_disk_name(file, project, name, sizeof name);
	if (listingmemo_get(memo->disk, name, listing, &text) != 1) {
		buf_free(&text);
		return NULL;
	}
	*len = text.len;
	return text.data ? text.data : strdup("");
}

void overview_memo_disk_keep(struct overview_memo *memo, const char *file, const char *project,
			     const struct buf *listing, const char *text, size_t len)
{
	char name[STORE_PROJECT_MAX + 32];
	overview_memo_disk_name(file, project, name, sizeof name);
	listingmemo_put(memo->disk, name, listing, text, len);
}

struct overview_memo *overview_memo_new(void)
{
	struct overview_memo *memo = calloc(1, sizeof *memo);
	if (!memo)
		return NULL;
	if (filememo_new(OVERVIEW_ROWS_BUDGET, &memo->rows)) {
		free(memo);
		return NULL;
	}
	pthread_mutex_init(&memo->lock, NULL);
	return memo;
}

void overview_memo_set_disk(struct overview_memo *memo, struct diskmemo *disk)
{
	if (memo) {
		filememo_set_disk(memo->rows, disk);
		memo->disk = disk;
	}
}

struct filememo *overview_memo_rows(struct overview_memo *memo)
{
	return memo ? memo->rows : NULL;
}

void overview_memo_free(struct overview_memo *memo)
{
	if (!memo)
		return;
	for (size_t i = 0; i < OVERVIEW_SLOTS; i++)
		overview_slot_free(&memo->slot[i]);
	filememo_free(memo->rows);
	pthread_mutex_destroy(&memo->lock);
	free(memo);
}
