#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "buf.h"
#include "caller.h"
#include "journal.h"
#include "layout.h"
#include "lockorder.h"
#include "search.h"
#include "searchmemo.h"
#include "searchdir.h"
#include "searchrun.h"
#include "title.h"

/* How long a result answers the lookups that follow its listing. */
#define SEARCH_RESULT_NS 1000000000LL
#define SEARCH_RESULTS 8

/* Where a path is inside a search directory. */
struct search_where {
	char scope[NAME_MAX + 1]; /* the project folder, "" for the whole store */
	int depth;                /* 0 search/, 1 QUERY, 2 a result, 3 a link in it */
	const char *query, *item, *link; /* into the path; query and item end at '/' */
	size_t query_len, item_len;
};

struct search_results {
	pthread_mutex_t lock;
	struct search_result *kept[SEARCH_RESULTS]; /* newest first */
	struct searchmemo *verdicts; /* each file's verdict, per recent query (searchmemo.h) */
};

static int64_t search_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}


struct search_results *search_results_new(size_t verdict_bytes)
{
	struct search_results *sr = calloc(1, sizeof *sr);
	if (sr && !(sr->verdicts = searchmemo_new(SEARCH_RESULTS, verdict_bytes))) {
		free(sr);
		return NULL;
	}
	if (sr)
		pthread_mutex_init(&sr->lock, NULL);
	return sr;
}

void search_results_free(struct search_results *sr)
{
	if (!sr)
		return;
	for (size_t i = 0; i < SEARCH_RESULTS; i++)
		search_result_free(sr->kept[i]);
	searchmemo_free(sr->verdicts);
	pthread_mutex_destroy(&sr->lock);
	free(sr);
}

/* Splits path into where; 0, or -ENOENT when it is not in a search. */
static int search_where_of(const char *path, const struct psfs_path *p, struct search_where *w)
{
	const char *rest;
	memset(w, 0, sizeof *w);
	if (strncmp(path, "/" SEARCH_NAME, sizeof SEARCH_NAME) == 0 &&
	    (path[sizeof SEARCH_NAME] == '\0' || path[sizeof SEARCH_NAME] == '/')) {
		rest = path + sizeof SEARCH_NAME;
	} else if (p && p->depth >= 2 && *p->project && strcmp(p->session, SEARCH_NAME) == 0) {
		snprintf(w->scope, sizeof w->scope, "%.255s", p->project);
		rest = p->depth == 3 ? p->rest - 1 : "";
	} else {
		return -ENOENT;
	}
	const char **parts[] = { &w->query, &w->item, &w->link };
	size_t *lens[] = { &w->query_len, &w->item_len, NULL };
	for (size_t i = 0; i < 3 && *rest == '/'; i++) {
		rest++;
		size_t n = strcspn(rest, "/");
		if (!n)
			return -ENOENT;
		*parts[i] = rest;
		if (lens[i])
			*lens[i] = n;
		w->depth = (int)i + 1;
		rest += n;
	}
	return *rest ? -ENOENT : 0;
}

int search_owns(const char *path, const struct psfs_path *p)
{
	struct search_where w;
	return search_where_of(path, p, &w) == 0 || (p && p->depth >= 2 && *p->project &&
						      strcmp(p->session, SEARCH_NAME) == 0);
}

/* The kept result of query in scope for this caller less than a second
 * old, or NULL.  Search locked. */
static struct search_result *search_result_kept(struct psfs *fs, const char *scope, const char *query,
						 const struct psfs_caller *who, int64_t now)
{
	struct search_results *sr = fs->search;
	for (size_t i = 0; i < SEARCH_RESULTS; i++) {
		struct search_result *r = sr->kept[i];
		if (r && psfs_caller_same(&r->who, who) && now - r->made_ns < SEARCH_RESULT_NS &&
		    strcmp(r->scope, scope) == 0 && strcmp(r->query, query) == 0)
			return r;
	}
	return NULL;
}

/* The result of query in scope for this caller: a kept one less than a
 * second old, else a new one (kept).  Search locked, but unlocked while a
 * new one is made: one caller's slow query holds up no other search.  Two
 * callers asking at once may both make it; the later one is kept. */
static int search_result_get(struct psfs *fs, const char *scope, const char *query, struct search_result **out)
{
	struct search_results *sr = fs->search;
	struct psfs_caller who;
	psfs_caller_get(&who);
	int64_t now = search_now_ns();
	/* One past its second is never taken again: a result of 15,000 hits
	 * holds megabytes, and eight of them stayed until replaced. */
	for (size_t i = 0; i < SEARCH_RESULTS; i++) {
		if (sr->kept[i] && now - sr->kept[i]->made_ns >= SEARCH_RESULT_NS) {
			search_result_free(sr->kept[i]);
			sr->kept[i] = NULL;
		}
	}
	if ((*out = search_result_kept(fs, scope, query, &who, now)))
		return 0;
	struct search_result *r = NULL;
	lockorder_unlock(&sr->lock, LOCK_SEARCH_RESULTS);
	int res = search_run(fs, sr->verdicts, scope, query, &r);
	lockorder_lock(&sr->lock, LOCK_SEARCH_RESULTS);
	if (res)
		return res;
	r->who = who;
	r->made_ns = now;
	search_result_free(sr->kept[SEARCH_RESULTS - 1]);
	memmove(&sr->kept[1], &sr->kept[0], (SEARCH_RESULTS - 1) * sizeof sr->kept[0]);
	sr->kept[0] = r;
	*out = r;
	return 0;
}

/* The hit a result's name means: listed so, else (a name listed before,
 * whose rank or title has moved since) the one hit whose id ends in the
 * part after its last '~'. */
static struct search_hit *search_hit_named(struct search_result *r, const char *name, size_t len)
{
	for (size_t i = 0; i < r->n; i++)
		if (strlen(r->hits[i].name) == len && strncmp(r->hits[i].name, name, len) == 0)
			return &r->hits[i];
	/* name is a whole path component: it ends at len. */
	char tail[NAME_MAX + 1];
	snprintf(tail, sizeof tail, "%.*s", (int)len, name);
	const char *tilde = strrchr(tail, '~');
	struct search_hit *found = NULL;
	if (!tilde || !tilde[1])
		return NULL;
	for (size_t i = 0; i < r->n; i++) {
		if (title_id_ends(r->hits[i].id, tilde + 1)) {
			if (found)
				return NULL;
			found = &r->hits[i];
		}
	}
	return found;
}

/* "../" enough times to climb from a result's directory to the mount root. */
static const char *search_up(const char *scope)
{
	return *scope ? "../../../../" : "../../../";
}

static int search_link_add(struct search_hit *h, char *name, char *target, size_t *cap)
{
	if (!name || !target)
		goto nomem;
	if (h->n_links == *cap) {
		size_t n = *cap ? *cap * 2 : 16;
		struct search_link *links = realloc(h->links, n * sizeof *links);
		if (!links)
			goto nomem;
		h->links = links;
		*cap = n;
	}
	h->links[h->n_links].name = name;
	h->links[h->n_links].target = target;
	h->n_links++;
	return 0;
nomem:
	free(name);
	free(target);
	return -ENOMEM;
}

/* What a result's directory holds: `session`, and a link to each entry
 * file whose message text the query found (search_text_matches). */
static int search_build_links(struct psfs *fs, const struct search_result *r, struct search_hit *h)
{
	struct search_query *q = NULL;
	char *why = NULL;
	struct store_ref ref;
	struct search_budget budget;
	size_t cap = 0;
	ps_err err = search_query_parse(r->query, &q, &why);
	search_budget_init(&budget, search_budget_ns(fs), search_caller_gave_up, NULL);
	free(why);
	if (err)
		return -psfs_errno(err);
	char *top = NULL;
	if (asprintf(&top, "%s%s%s%s", search_up(r->scope), h->project, *h->project ? "/" : "", h->stem) < 0)
		top = NULL;
	int res = search_link_add(h, strdup("session"), top ? strdup(top) : NULL, &cap);
	if (!res && (err = store_acquire(fs->store, h->project, h->stem, &ref)))
		res = err == PS_ERR_NOMEM ? -ENOMEM : 0; /* gone meanwhile: the link alone */
	else if (!res) {
		struct ps_session *s = ref.session;
		for (uint32_t e = 0; !res && e < s->n_entries; e++) {
			const char *kind = session_str(s, s->entries[e].kind);
			if (strcmp(kind, "user") != 0 && strcmp(kind, "assistant") != 0)
				continue;
			json_t *entry = NULL;
			struct buf text = BUF_INIT;
			int match = 0;
			if (session_load_entry_shared(s, e, &entry) != PS_OK)
				continue;
			int got = sessioninfo_message_text(json_object_get(entry, "message"), &text);
			if (got < 0)
				res = -ENOMEM;
			else if (got && (err = search_text_matches_in(q, text.data, text.len, &budget, &match)) == PS_ERR_NOMEM)
				res = -ENOMEM;
			else if (got && err && err != PS_ERR_TOOBIG)
				res = -psfs_errno(err); /* spent, or the caller gave up */
			json_decref(entry);
			buf_free(&text);
			if (res || !match)
				continue;
			char *path = layout_entry_path(s, e), *target = NULL;
			const char *base = path ? strrchr(path, '/') : NULL;
			if (path && asprintf(&target, "%s/%s", top, path) < 0)
				target = NULL;
			res = search_link_add(h, path ? strdup(base ? base + 1 : path) : NULL, target, &cap);
			free(path);
		}
		store_release(fs->store, &ref);
	}
	free(top);
	search_query_free(q);
	if (!res)
		h->links_built = 1;
	return res;
}

/* The query a search directory's name stands for: no path component can
 * hold a '/', so "%2F" in it is '/', and "%25" is '%' (so that "%252F" is
 * the text "%2F"); every other byte, and every other %XX, is itself, so
 * pi's query language is otherwise typed as it is (docs/layout.md
 * "Searching").  out holds NAME_MAX + 1 bytes; the query is never longer
 * than its name. */
static void search_query_of_name(const char *name, size_t len, char out[NAME_MAX + 1])
{
	size_t n = 0;
	if (len > NAME_MAX)
		len = NAME_MAX;
	for (size_t i = 0; i < len; i++) {
		if (name[i] == '%' && i + 2 < len && name[i + 1] == '2' && (name[i + 2] == 'F' || name[i + 2] == '5')) {
			out[n++] = name[i + 2] == 'F' ? '/' : '%';
			i += 2;
		} else {
			out[n++] = name[i];
		}
	}
	out[n] = '\0';
}

/* Resolves where to its result, hit and link (as far as its depth goes).
 * Search locked (the lock is let go while a new result is made:
 * search_result_get; nothing found before that is held across it). */
static int search_resolve(struct psfs *fs, const struct search_where *w, struct search_result **r,
			  struct search_hit **h, const struct search_link **link)
{
	struct stat project;
	*r = NULL;
	*h = NULL;
	*link = NULL;
	if (*w->scope && store_stat_project(fs->store, w->scope, &project) != PS_OK)
		return -ENOENT;
	if (w->depth == 0)
		return 0;
	char query[NAME_MAX + 1];
	search_query_of_name(w->query, w->query_len, query);
	if (w->depth == 1) {
		/* The directory of a query exists when the query is valid: a
		 * lookup needs no search. */
		struct search_query *q = NULL;
		char *why = NULL;
		ps_err err = search_query_parse(query, &q, &why);
		if (err == PS_ERR_INVALID)
			journal_log_in(fs->journal, "search %s: %s", query, why ? why : "not a query pi takes");
		free(why);
		search_query_free(q);
		return err == PS_ERR_INVALID ? -EINVAL : err ? -psfs_errno(err) : 0;
	}
	int res = search_result_get(fs, w->scope, query, r);
	if (res)
		return res;
	if (!(*h = search_hit_named(*r, w->item, w->item_len)))
		return -ENOENT;
	if (w->depth == 2)
		return 0;
	if (!(*h)->links_built && (res = search_build_links(fs, *r, *h)))
		return res;
	for (size_t i = 0; i < (*h)->n_links; i++) {
		if (strcmp((*h)->links[i].name, w->link) == 0) {
			*link = &(*h)->links[i];
			return 0;
		}
	}
	return -ENOENT;
}

/* What a path names in a search, found with the search lock taken: the
 * caller unlocks (search_done) whatever this returns. */
struct search_found {
	struct search_where w;
	struct search_result *r;
	struct search_hit *h;
	const struct search_link *link;
};

static int search_find(struct psfs *fs, const char *path, const struct psfs_path *p, struct search_found *f)
{
	lockorder_lock(&fs->search->lock, LOCK_SEARCH_RESULTS);
	int res = search_where_of(path, p, &f->w);
	return res ? res : search_resolve(fs, &f->w, &f->r, &f->h, &f->link);
}

static void search_done(struct psfs *fs)
{
	lockorder_unlock(&fs->search->lock, LOCK_SEARCH_RESULTS);
}

int search_getattr(struct psfs *fs, const char *path, const struct psfs_path *p, const struct stat *root,
		   struct stat *st)
{
	struct search_found f;
	int res = search_find(fs, path, p, &f);
	size_t target_len = !res && f.link ? strlen(f.link->target) : 0;
	search_done(fs);
	if (res)
		return res;
	memset(st, 0, sizeof *st);
	st->st_uid = root->st_uid;
	st->st_gid = root->st_gid;
	st->st_atim = root->st_atim;
	st->st_mtim = root->st_mtim;
	st->st_ctim = root->st_ctim;
	st->st_mode = S_IFDIR | 0555;
	st->st_nlink = 2;
	if (f.w.depth == 3) {
		st->st_mode = S_IFLNK | 0777;
		st->st_nlink = 1;
		st->st_size = (off_t)target_len;
	}
	return 0;
}

int search_readdir(struct psfs *fs, const char *path, const struct psfs_path *p, void *buf, fuse_fill_dir_t filler)
{
	struct search_found f;
	int res = search_find(fs, path, p, &f);
	if (!res && f.w.depth == 3)
		res = -ENOTDIR;
	if (!res && f.w.depth == 1) {
		char query[NAME_MAX + 1];
		search_query_of_name(f.w.query, f.w.query_len, query);
		res = search_result_get(fs, f.w.scope, query, &f.r);
		for (size_t i = 0; !res && i < f.r->n; i++) {
			struct stat dir = { .st_mode = S_IFDIR };
			filler(buf, f.r->hits[i].name, &dir, 0, 0);
		}
	} else if (!res && f.w.depth == 2) {
		if (!f.h->links_built)
			res = search_build_links(fs, f.r, f.h);
		for (size_t i = 0; !res && i < f.h->n_links; i++) {
			struct stat lnk = { .st_mode = S_IFLNK };
			filler(buf, f.h->links[i].name, &lnk, 0, 0);
		}
	}
	search_done(fs);
	return res;
}

int search_readlink(struct psfs *fs, const char *path, const struct psfs_path *p, char *buf, size_t size)
{
	struct search_found f;
	int res = search_find(fs, path, p, &f);
	if (!res && f.w.depth != 3)
		res = -EINVAL;
	if (!res)
		snprintf(buf, size, "%s", f.link->target);
	search_done(fs);
	return res;
}
