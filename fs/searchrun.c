#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "caller.h"
#include "fanout.h"
#include "filestamp.h"
#include "infocache.h"
#include "infofreeze.h"
#include "infokeeper.h"
#include "journal.h"
#include "search.h"
#include "searchmemo.h"
#include "searchrun.h"
#include "title.h"

/* A title's part of a result's name, in bytes before escaping. */
#define SEARCH_TITLE_MAX 48

void search_result_free(struct search_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		struct search_hit *h = &r->hits[i];
		for (size_t k = 0; k < h->n_links; k++) {
			free(h->links[k].name);
			free(h->links[k].target);
		}
		free(h->links);
		free(h->project);
		free(h->stem);
		free(h->id);
		free(h->name);
	}
	free(r->hits);
	free(r->scope);
	free(r->query);
	free(r);
}

/* pi's modified, newest first; where it ties, the order pi read them
 * in, its sort being stable: one folder's (a project's search, the files
 * of a flat store) by file name descending (listSessionsFromDir), all
 * folders' by the file's mtime first (listAll), as the catalog is. */
static int search_hit_order(const void *a, const void *b)
{
	const struct search_hit *x = a, *y = b;
	if (x->modified_ms != y->modified_ms)
		return x->modified_ms > y->modified_ms ? -1 : 1;
	if (x->by_name && y->by_name) {
		int c = strcmp(y->stem, x->stem);
		if (c)
			return c;
	}
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The path of a session file of the store (new string). */
static char *search_file_of(struct psfs *fs, const char *project, const char *stem)
{
	char *path = NULL;
	if (asprintf(&path, "%s/%s%s%s.jsonl", store_root(fs->store), project, *project ? "/" : "", stem) < 0)
		return NULL;
	return path;
}

/* The session files a search reads, as pi lists them before its stable
 * sort: the store's by mtime, newest first, then by name descending
 * (SessionManager.listAll); one folder's by name descending. */
struct search_candidate {
	char *project, *stem;
	int64_t mtime_ns;
	struct filestamp stamp; /* as listed: what a kept info must be of */
};

struct search_candidates {
	struct search_candidate *c;
	size_t n, cap;
	struct psfs_caller who;
	int failed;
};

static int search_candidate_add(void *ctx, const char *project, const char *name, const struct stat *st)
{
	struct search_candidates *cs = ctx;
	if (!psfs_caller_may_read(&cs->who, st->st_uid, st->st_gid, st->st_mode))
		return 0;
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 64;
		struct search_candidate *c = realloc(cs->c, cap * sizeof *c);
		if (!c)
			return cs->failed = 1;
		cs->c = c;
		cs->cap = cap;
	}
	struct search_candidate *c = &cs->c[cs->n];
	c->project = strdup(project);
	c->stem = strdup(name);
	c->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	filestamp_of(st, &c->stamp);
	if (!c->project || !c->stem) {
		free(c->project);
		free(c->stem);
		return cs->failed = 1;
	}
	cs->n++;
	return 0;
}

static int search_by_mtime(const void *a, const void *b)
{
	const struct search_candidate *x = a, *y = b;
	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns > y->mtime_ns ? -1 : 1;
	return strcmp(y->stem, x->stem);
}

static int search_by_name(const void *a, const void *b)
{
	const struct search_candidate *x = a, *y = b;
	return strcmp(y->stem, x->stem);
}

static void search_candidates_free(struct search_candidates *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		free(cs->c[i].project);
		free(cs->c[i].stem);
	}
	free(cs->c);
}

/* Names the hits NN-<title>~<id tail> (title.h). */
static int search_name_hits(struct search_result *r, char **titles)
{
	const char **ids = calloc(r->n ? r->n : 1, sizeof *ids);
	int res = ids ? 0 : -ENOMEM;
	for (size_t i = 0; ids && i < r->n; i++)
		ids[i] = r->hits[i].id;
	for (size_t i = 0; !res && i < r->n; i++)
		if (!(r->hits[i].name = title_file_name(i + 1, titles[i], title_id_tail(ids, r->n, i))))
			res = -ENOMEM;
	free(ids);
	return res;
}

/* What a search reads of one session's info, copied out of the info cache
 * so that the matching (which may take the query's whole budget) runs with
 * no lock held: sessions.md and other searches use the cache meanwhile. */
struct search_copy {
	struct sessioninfo info; /* is_session, id, cwd, name, modified_ms, text, lower */
	char *name;
	char *title;             /* title_line of the listing */
	struct buf kept;         /* the info's bytes kept on disk, when read from there:
				  * info.text and info.lower point into them */
	int ruled_out;           /* a skim showed it cannot match: nothing else is filled */
	int proven;              /* a skim showed it matches (skim_proven): info has no text */
};

static void search_copy_free(struct search_copy *c)
{
	free(c->info.id);
	free(c->info.cwd);
	free(c->name);
	if (!c->kept.data) {
		buf_free(&c->info.text);
		buf_free(&c->info.lower);
	}
	buf_free(&c->kept);
	free(c->title);
}

/* *c from the info's bytes kept on disk (infofreeze.h) when the cache
 * holds no info of the file but the disk does, for the file as listed:
 * 1, else 0 (*c empty), -1 when memory ran out.  Read straight from the
 * kept bytes, not made into an info: one copy of texts that may be
 * hundreds of megabytes over a store. */
static int search_copy_kept(struct psfs *fs, const char *file, const struct search_candidate *cand,
			    struct search_copy *c)
{
	struct infoview v;
	int found = infocache_kept_bytes(fs->infos, file, &cand->stamp, &c->kept);
	if (found <= 0 || infofreeze_view(c->kept.data, c->kept.len, &v) != PS_OK || !v.is_session) {
		buf_free(&c->kept);
		return found < 0 ? -1 : 0;
	}
	c->info.is_session = 1;
	c->info.modified_ms = v.modified_ms;
	c->info.id = strdup(v.id);
	c->info.cwd = strdup(v.cwd);
	c->name = v.name ? strdup(v.name) : NULL;
	c->info.name = c->name;
	c->title = v.first_len ? title_line(v.name, v.first, v.first_len, SEARCH_TITLE_MAX)
			       : title_line(v.name, "(no messages)", strlen("(no messages)"), SEARCH_TITLE_MAX);
	c->info.text.data = (char *)v.text;
	c->info.text.len = v.text_len;
	c->info.lower.data = (char *)v.lower;
	c->info.lower.len = v.lower_len;
	if (!c->info.id || !c->info.cwd || (v.name && !c->name) || !c->title) {
		search_copy_free(c);
		memset(c, 0, sizeof *c);
		return -1;
	}
	return 1;
}

/* Whether a skim of file with the query's needles rules the session out
 * (search.h): 1, else 0: the file must be read whole (*whole is its info
 * when the skim went on to read it so: search_query_skim_enough), or it
 * could not be read (infocache_get tells). */
static int search_ruled_out(const char *file, const struct search_query *q, const struct sessioninfo_needle *needles,
			    size_t n_needles, struct sessioninfo **whole)
{
	struct sessioninfo *skim = NULL;
	struct search_skim_seen seen = { q, 0 };
	*whole = NULL;
	if (!n_needles ||
	    sessioninfo_load_skim(file, needles, n_needles, search_query_skim_enough, &seen, &skim) != PS_OK)
		return 0;
	int out = search_query_rules_out(q, skim);
	if (!out && (skim->skim_whole || skim->skim_proven))
		*whole = skim;
	else
		sessioninfo_free(skim);
	return out;
}

/* PS_OK with *c filled, PS_ERR_NOMEM, or another error when the session is
 * gone or not one pi lists (*c empty then).  PS_OK with c->ruled_out
 * and nothing else when a skim (needles, when the query has them) showed
 * that the session cannot match: the info cache has not read it.  on_disk:
 * the disk keeps infos, and is asked first. */
static ps_err search_copy_of(struct psfs *fs, const struct search_candidate *cand, int on_disk,
			     const struct search_query *q, const struct sessioninfo_needle *needles, size_t n_needles,
			     struct search_copy *c)
{
	const struct sessioninfo *info = NULL;
	memset(c, 0, sizeof *c);
	char *file = search_file_of(fs, cand->project, cand->stem);
	if (!file)
		return PS_ERR_NOMEM;
	int kept = on_disk ? search_copy_kept(fs, file, cand, c) : 0;
	if (kept) {
		free(file);
		return kept < 0 ? PS_ERR_NOMEM : PS_OK;
	}
	struct sessioninfo *whole = NULL;
	if (!infocache_holds(fs->infos, file) && search_ruled_out(file, q, needles, n_needles, &whole)) {
		free(file);
		c->ruled_out = 1;
		return PS_OK;
	}
	/* A proven match's info is a listing (no text): the search reads it
	 * for what it lists, the cache never (the keeper reads it whole). */
	int proven = whole && whole->skim_proven;
	if (proven)
		info = whole;
	else
		infocache_lock(fs->infos);
	ps_err err = proven ? PS_OK : whole ? infocache_adopt(fs->infos, whole, &info) : infocache_get(fs->infos, file, &info);
	free(file);
	if (!err && !info->is_session)
		err = PS_ERR_NOTSESSION;
	if (!err) {
		size_t first_len = 0;
		const char *first = sessioninfo_first_message(info, &first_len);
		c->info.is_session = 1;
		c->info.modified_ms = info->modified_ms;
		c->info.id = strdup(info->id);
		c->info.cwd = strdup(info->cwd);
		c->name = info->name ? strdup(info->name) : NULL;
		c->info.name = c->name;
		c->title = title_line(info->name, first, first_len, SEARCH_TITLE_MAX);
		c->proven = proven;
		if (!c->info.id || !c->info.cwd || (info->name && !c->name) || !c->title ||
		    (!proven && (buf_put(&c->info.text, info->text.data ? info->text.data : "", info->text.len) ||
				 buf_finish(&c->info.text) < 0 ||
				 buf_put(&c->info.lower, info->lower.data ? info->lower.data : "", info->lower.len) ||
				 buf_finish(&c->info.lower) < 0)))
			err = PS_ERR_NOMEM;
	}
	if (proven)
		sessioninfo_free(whole);
	else
		infocache_unlock(fs->infos);
	if (err)
		search_copy_free(c);
	return err;
}

/* What one query may spend matching (-o search_budget; unset or 0: the default). */
long long search_budget_ns(const struct psfs *fs)
{
	return !(fs->cfg.search_budget > 0) ? SEARCH_BUDGET_NS : (long long)(fs->cfg.search_budget * 1e9);
}

/* Whether the caller gave up: the kernel sent FUSE_INTERRUPT for the
 * request (a signal to the caller: ^C, timeout, kill). */
int search_caller_gave_up(void *ctx)
{
	(void)ctx;
	return psfs_caller_gave_up();
}

/* One query run over its candidates on several threads (fanout.h): each
 * candidate's outcome in its own slot, put together in order afterwards. */
struct search_slot {
	ps_err err;       /* what stopped the query at this candidate */
	int decided;      /* a verdict was reached: match or not (else gone, or stopped) */
	int match;
	int skimmed;      /* ruled out or proven by a skim: the info cache has not read it */
	char *id, *title;
	double modified_ms;
};

struct search_fan {
	struct psfs *fs;
	const struct search_query *q;
	struct sessioninfo_needle *needles; /* search_query_skim_needles */
	size_t n_needles;
	const struct search_candidates *cs;
	struct search_slot *slots;
	struct search_verdicts *before; /* the query's last verdicts (searchmemo.h), or NULL */
	int on_disk;                 /* the disk keeps infos: ask it for each file first */
	struct search_budget budget; /* shared: the query's matching CPU, in all threads */
	pthread_t caller;
	atomic_int stopped;          /* a candidate's error, or the caller gave up */
	atomic_int interrupted;      /* the caller gave up */
};

/* Whether the query stops: its caller gave up, which only the request's
 * thread can ask, or another thread's candidate stopped it. */
static int search_gave_up(void *ctx)
{
	struct search_fan *f = ctx;
	if (atomic_load(&f->stopped))
		return 1;
	if (pthread_equal(pthread_self(), f->caller) && search_caller_gave_up(NULL)) {
		atomic_store(&f->interrupted, 1);
		atomic_store(&f->stopped, 1);
		return 1;
	}
	return 0;
}

/* The key of a candidate's verdict: "PROJECT/STEM"; its length, 0 when
 * it does not fit. */
static size_t search_key_of(const struct search_candidate *c, char *key, size_t size)
{
	int n = snprintf(key, size, "%s/%s", c->project, c->stem);
	return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

/* The verdict the query's last run reached for a file unchanged since:
 * 1 with the slot filled (or memory ran out: slot->err), else 0. */
static int search_reuse(const struct search_fan *f, size_t i, struct search_slot *slot)
{
	char key[2 * NAME_MAX + 2];
	size_t len = f->before ? search_key_of(&f->cs->c[i], key, sizeof key) : 0;
	struct search_verdict v;
	if (!len || !search_verdicts_find(f->before, key, len, &f->cs->c[i].stamp, &v))
		return 0;
	slot->decided = 1;
	slot->match = v.match;
	if (v.match) {
		slot->modified_ms = v.modified_ms;
		slot->id = strdup(v.id);
		slot->title = strdup(v.title);
		if (!slot->id || !slot->title)
			slot->err = PS_ERR_NOMEM;
	}
	return 1;
}

static void search_one(void *ctx, size_t i)
{
	struct search_fan *f = ctx;
	struct search_slot *slot = &f->slots[i];
	struct search_copy copy;
	if (atomic_load(&f->stopped))
		return;
	if (search_reuse(f, i, slot)) {
		if (slot->err)
			atomic_store(&f->stopped, 1);
		return;
	}
	ps_err err = search_copy_of(f->fs, &f->cs->c[i], f->on_disk, f->q, f->needles, f->n_needles, &copy);
	if (!err && copy.ruled_out) {
		slot->skimmed = 1;
		slot->decided = 1;
		return;
	}
	slot->decided = err == PS_ERR_NOTSESSION;
	if (err) {
		if (err == PS_ERR_NOMEM) {
			slot->err = err;
			atomic_store(&f->stopped, 1);
		}
		return; /* else gone meanwhile, or not a session pi lists */
	}
	if (copy.proven) {
		slot->match = 1; /* search_query_skim_enough's proof, and pi lists it */
		slot->skimmed = 1; /* unread by the info cache too */
	} else {
		err = search_query_matches_in(f->q, &copy.info, &f->budget, &slot->match);
	}
	slot->decided = !err;
	if (!err && slot->match) {
		slot->id = strdup(copy.info.id);
		slot->title = copy.title;
		copy.title = NULL;
		slot->modified_ms = copy.info.modified_ms;
		if (!slot->id || !slot->title)
			err = PS_ERR_NOMEM;
	}
	search_copy_free(&copy);
	if (err) {
		slot->err = err;
		atomic_store(&f->stopped, 1);
	}
}

/* Hands a candidate a skim ruled out to the keeper (infokeeper.h): the
 * next query, or the next mount, finds its info on disk. */
static void search_keep(struct psfs *fs, const struct search_candidate *cand)
{
	char *file = fs->keeper ? search_file_of(fs, cand->project, cand->stem) : NULL;
	if (file)
		infokeeper_add(fs->keeper, file);
	free(file);
}

/* Keeps what a run that went to its end decided of each candidate, for
 * the query's next run (searchmemo.h).  Out of memory only costs the
 * next run's reading. */
static void search_keep_verdicts(struct searchmemo *verdicts, const char *scope, const char *query,
				 const struct search_candidates *cs, const struct search_slot *slots)
{
	struct search_verdicts *v = search_verdicts_new(scope, query);
	char key[2 * NAME_MAX + 2];
	for (size_t i = 0; v && i < cs->n; i++) {
		const struct search_slot *slot = &slots[i];
		size_t len = slot->decided ? search_key_of(&cs->c[i], key, sizeof key) : 0;
		struct search_verdict verdict = { cs->c[i].stamp, slot->match, slot->match ? slot->id : NULL,
						  slot->match ? slot->title : NULL, slot->modified_ms };
		if (len && search_verdicts_add(v, key, len, &verdict) != PS_OK) {
			search_verdicts_put(v);
			v = NULL;
		}
	}
	if (v)
		searchmemo_keep(verdicts, v);
}

/* Runs the query over the sessions of the scope the caller may read. */
/* The hits of a query run over cs (f: what each candidate gave) into r,
 * in candidate order, with their titles in titles.  *err: what stopped
 * the query, if anything; a regular expression too costly is logged at
 * the candidate that stopped it.  0 or -errno. */
static int search_collect_hits(struct psfs *fs, const char *query, const char *scope,
			       const struct search_candidates *cs, struct search_fan *f, ps_err *err,
			       struct search_result *r, char **titles)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct search_candidate *c = &cs->c[i];
		struct search_slot *slot = &f->slots[i];
		if (*err && slot->err != *err)
			continue; /* reported at the candidate that stopped it */
		if (*err == PS_ERR_TOOBIG || *err == PS_ERR_COSTLY) {
			journal_log_in(fs->journal, "search %s: the regular expression is too costly (%s at %s%s%s, after "
				       "%lld ms of matching; a query may spend %lld ms): nothing is listed; write it so "
				       "it cannot backtrack at length: no nested or repeated groups of .* (\"(.*b){20}\"), "
				       "a literal or a class such as [^ ]* in place of .*, or plain words (no re:)",
				       query, *err == PS_ERR_TOOBIG ? "PCRE2's match limit" : "its budget", c->project,
				       *c->project ? "/" : "", c->stem, (long long)f->budget.spent_ns / 1000000,
				       f->budget.cpu_ns / 1000000);
			*err = PS_ERR_COSTLY;
		}
		if (*err)
			return -psfs_errno(*err);
		if (!slot->match)
			continue;
		struct search_hit *h = &r->hits[r->n];
		h->project = strdup(c->project);
		h->stem = strdup(c->stem);
		h->id = slot->id;
		slot->id = NULL;
		h->modified_ms = slot->modified_ms;
		h->order = i;
		h->by_name = *scope || !*c->project;
		titles[r->n] = slot->title;
		slot->title = NULL;
		r->n++;
		if (!h->project || !h->stem)
			return -ENOMEM;
	}
	return 0;
}

/* r's hits in pi's order, named from their titles (search_name_hits). */
static int search_sort_hits(struct search_result *r, char **titles)
{
	/* The titles move with their hits. */
	for (size_t i = 0; i < r->n; i++)
		r->hits[i].name = titles[i];
	qsort(r->hits, r->n, sizeof *r->hits, search_hit_order);
	for (size_t i = 0; i < r->n; i++) {
		titles[i] = r->hits[i].name;
		r->hits[i].name = NULL;
	}
	return search_name_hits(r, titles);
}

int search_run(struct psfs *fs, struct searchmemo *verdicts, const char *scope, const char *query,
	       struct search_result **out)
{
	struct search_query *q = NULL;
	char *why = NULL;
	ps_err err = search_query_parse(query, &q, &why);
	if (err) {
		if (err == PS_ERR_INVALID)
			journal_log_in(fs->journal, "search %s: %s", query, why ? why : "not a query pi takes");
		free(why);
		return err == PS_ERR_INVALID ? -EINVAL : -psfs_errno(err);
	}
	struct search_candidates cs = { NULL, 0, 0, { 0 }, 0 };
	psfs_caller_get(&cs.who);
	err = store_each_session(fs->store, *scope ? scope : NULL, search_candidate_add, &cs);
	if (!err && cs.failed)
		err = PS_ERR_NOMEM;
	if (!err && cs.n > 1) /* (c is NULL when there are none) */
		qsort(cs.c, cs.n, sizeof *cs.c, *scope ? search_by_name : search_by_mtime);
	size_t n = cs.n;
	struct search_result *r = calloc(1, sizeof *r);
	char **titles = calloc(n ? n : 1, sizeof *titles);
	struct search_fan f = { .fs = fs, .q = q, .cs = &cs, .caller = pthread_self() };
	f.slots = calloc(n ? n : 1, sizeof *f.slots);
	atomic_init(&f.stopped, 0);
	atomic_init(&f.interrupted, 0);
	int res = err ? -psfs_errno(err) : r && titles && f.slots ? 0 : -ENOMEM;
	if (!res && search_query_skim_needles(q, &f.needles, &f.n_needles) < 0)
		res = -ENOMEM;
	if (!res) {
		r->hits = calloc(n ? n : 1, sizeof *r->hits);
		r->scope = strdup(scope);
		r->query = strdup(query);
		if (!r->hits || !r->scope || !r->query)
			res = -ENOMEM;
	}
	search_budget_init(&f.budget, search_budget_ns(fs), search_gave_up, &f);
	/* The interrupt is checked between candidates too, for a store of
	 * many sessions searched with no regular expression. */
	infokeeper_hold(fs->keeper);
	if (!res) {
		f.before = searchmemo_get(verdicts, scope, query);
		/* A disk that keeps no info yet (a first search) is not asked
		 * once per file. */
		f.on_disk = infocache_disk_keeps_any(fs->infos);
	}
	if (!res)
		(void)fanout_run(n, fs->cfg.read_threads, search_one, search_gave_up, &f);
	/* What stopped the query: a candidate's own error (the others it
	 * stopped say PS_ERR_INTR), else the caller giving up. */
	for (size_t i = 0; !res && !err && i < n; i++)
		if (f.slots[i].err && f.slots[i].err != PS_ERR_INTR)
			err = f.slots[i].err;
	if (!res && !err && atomic_load(&f.interrupted))
		err = PS_ERR_INTR;
	if (!res && !err)
		search_keep_verdicts(verdicts, scope, query, &cs, f.slots);
	search_verdicts_put(f.before);
	if (!res)
		res = search_collect_hits(fs, query, scope, &cs, &f, &err, r, titles);
	if (err == PS_ERR_INTR)
		journal_log_in(fs->journal, "search %s: interrupted (the caller gave up)", query);
	if (!res && err)
		res = -psfs_errno(err);
	for (size_t i = 0; f.slots && i < n; i++) {
		free(f.slots[i].id);
		free(f.slots[i].title);
		if (f.slots[i].skimmed) /* unread by the info cache: kept on disk for the next search */
			search_keep(fs, &cs.c[i]);
	}
	free(f.slots);
	free(f.needles);
	infokeeper_release(fs->keeper);
	infocache_flush(fs->infos); /* what was read is kept for the next mount too */
	if (!res)
		res = search_sort_hits(r, titles);
	for (size_t i = 0; titles && i < n; i++)
		free(titles[i]);
	free(titles);
	search_candidates_free(&cs);
	search_query_free(q);
	if (res) {
		search_result_free(r);
		return res;
	}
	*out = r;
	return 0;
}
