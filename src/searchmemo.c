#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "lockorder.h"
#include "searchmemo.h"
#include "strpool.h"

struct search_verdicts {
	atomic_int refs;
	char *scope, *query;
	struct strpool strings;    /* keys, ids and titles */
	struct strmap index;       /* key -> index in the verdicts */
	struct kept_verdict {
		struct filestamp stamp;
		int match;
		uint32_t id, title;        /* pool offsets; PS_NIL when no match */
		double modified_ms;
	} *verdicts;
	size_t n, cap;
};

struct searchmemo {
	pthread_mutex_t lock;
	struct search_verdicts **tables; /* newest first */
	size_t *bytes_of;                /* each table's, as kept */
	size_t n, max;
	size_t bytes, max_bytes;
};

/* What a table holds in memory, as near as its parts' capacities say. */
static size_t search_verdicts_bytes(const struct search_verdicts *v)
{
	return sizeof *v + strlen(v->scope) + strlen(v->query) + 2 + v->cap * sizeof *v->verdicts +
	       v->strings.cap + v->index.cap * sizeof *v->index.slots;
}

struct searchmemo *searchmemo_new(size_t max, size_t max_bytes)
{
	struct searchmemo *m = calloc(1, sizeof *m);
	if (!m || !(m->tables = calloc(max ? max : 1, sizeof *m->tables)) ||
	    !(m->bytes_of = calloc(max ? max : 1, sizeof *m->bytes_of))) {
		if (m)
			free(m->tables);
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->max = max ? max : 1;
	m->max_bytes = max_bytes;
	return m;
}

void searchmemo_free(struct searchmemo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		search_verdicts_put(m->tables[i]);
	free(m->tables);
	free(m->bytes_of);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static int verdicts_are(const struct search_verdicts *v, const char *scope, const char *query)
{
	return strcmp(v->scope, scope) == 0 && strcmp(v->query, query) == 0;
}

struct search_verdicts *searchmemo_get(struct searchmemo *m, const char *scope, const char *query)
{
	struct search_verdicts *v = NULL;
	lockorder_lock(&m->lock, LOCK_SEARCH_MEMO);
	for (size_t i = 0; i < m->n && !v; i++)
		if (verdicts_are(m->tables[i], scope, query)) {
			v = m->tables[i];
			atomic_fetch_add(&v->refs, 1);
		}
	lockorder_unlock(&m->lock, LOCK_SEARCH_MEMO);
	return v;
}

void searchmemo_keep(struct searchmemo *m, struct search_verdicts *v)
{
	struct search_verdicts *gone = NULL;
	size_t size = search_verdicts_bytes(v);
	if (size > m->max_bytes) {
		search_verdicts_put(v); /* the query's older table, if any, stays: its verdicts hold by stamp */
		return;
	}
	lockorder_lock(&m->lock, LOCK_SEARCH_MEMO);
	size_t i = 0;
	while (i < m->n && !verdicts_are(m->tables[i], v->scope, v->query))
		i++;
	if (i == m->n && m->n == m->max)
		i--; /* the oldest goes */
	else if (i == m->n)
		m->n++;
	if (i < m->n && m->tables[i]) {
		gone = m->tables[i]; /* the same query's older table, or the oldest */
		m->bytes -= m->bytes_of[i];
	}
	memmove(&m->tables[1], &m->tables[0], i * sizeof *m->tables);
	memmove(&m->bytes_of[1], &m->bytes_of[0], i * sizeof *m->bytes_of);
	m->tables[0] = v;
	m->bytes_of[0] = size;
	m->bytes += size;
	lockorder_unlock(&m->lock, LOCK_SEARCH_MEMO);
	search_verdicts_put(gone);
	/* Then the oldest, while the tables hold more than the budget. */
	for (;;) {
		struct search_verdicts *oldest = NULL;
		lockorder_lock(&m->lock, LOCK_SEARCH_MEMO);
		if (m->bytes > m->max_bytes && m->n > 1) {
			oldest = m->tables[--m->n];
			m->bytes -= m->bytes_of[m->n];
			m->tables[m->n] = NULL;
		}
		lockorder_unlock(&m->lock, LOCK_SEARCH_MEMO);
		if (!oldest)
			break;
		search_verdicts_put(oldest);
	}
}

size_t searchmemo_bytes(struct searchmemo *m)
{
	lockorder_lock(&m->lock, LOCK_SEARCH_MEMO);
	size_t n = m->bytes;
	lockorder_unlock(&m->lock, LOCK_SEARCH_MEMO);
	return n;
}

struct search_verdicts *search_verdicts_new(const char *scope, const char *query)
{
	struct search_verdicts *v = calloc(1, sizeof *v);
	if (!v)
		return NULL;
	atomic_init(&v->refs, 1);
	v->scope = strdup(scope);
	v->query = strdup(query);
	if (!v->scope || !v->query) {
		search_verdicts_put(v);
		return NULL;
	}
	return v;
}

ps_err search_verdicts_add(struct search_verdicts *v, const char *key, size_t len, const struct search_verdict *verdict)
{
	struct kept_verdict k = { verdict->stamp, verdict->match, PS_NIL, PS_NIL, verdict->modified_ms };
	uint32_t off;
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 64;
		struct kept_verdict *more = realloc(v->verdicts, cap * sizeof *more);
		if (!more)
			return PS_ERR_NOMEM;
		v->verdicts = more;
		v->cap = cap;
	}
	ps_err err = strpool_add(&v->strings, key, len, &off);
	if (!err && verdict->id)
		err = strpool_add(&v->strings, verdict->id, strlen(verdict->id), &k.id);
	if (!err && verdict->title)
		err = strpool_add(&v->strings, verdict->title, strlen(verdict->title), &k.title);
	if (!err)
		err = strmap_put(&v->index, &v->strings, off, (uint32_t)v->n);
	if (err)
		return err;
	v->verdicts[v->n++] = k;
	return PS_OK;
}

static int stamps_equal(const struct filestamp *a, const struct filestamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
	       a->ctime_ns == b->ctime_ns;
}

int search_verdicts_find(const struct search_verdicts *v, const char *key, size_t len, const struct filestamp *stamp,
			 struct search_verdict *out)
{
	uint32_t at = strmap_get(&v->index, &v->strings, key, len);
	if (at == PS_NIL || !stamps_equal(&v->verdicts[at].stamp, stamp))
		return 0;
	const struct kept_verdict *k = &v->verdicts[at];
	out->stamp = k->stamp;
	out->match = k->match;
	out->id = k->id == PS_NIL ? NULL : strpool_get(&v->strings, k->id);
	out->title = k->title == PS_NIL ? NULL : strpool_get(&v->strings, k->title);
	out->modified_ms = k->modified_ms;
	return 1;
}

void search_verdicts_put(struct search_verdicts *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	free(v->scope);
	free(v->query);
	strpool_free(&v->strings);
	strmap_free(&v->index);
	free(v->verdicts);
	free(v);
}
