#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "caller.h"
#include "catalog.h"
#include "familysearch.h"
#include "escape.h"
#include "fnv.h"
#include "lockorder.h"
#include "title.h"
#include "viewname.h"
#include "views.h"

#define VIEWS_RECENT 50

const char *const views_names[] = { "by-id", "by-name", "by-cwd", "recent", NULL };

enum views_kind { VIEW_NONE, VIEW_BY_ID, VIEW_BY_NAME, VIEW_BY_CWD, VIEW_RECENT };

static enum views_kind views_kind_of(const char *path, const char **rest)
{
	static const struct { const char *name; enum views_kind kind; } views[] = {
		{ "/by-id", VIEW_BY_ID }, { "/by-name", VIEW_BY_NAME }, { "/by-cwd", VIEW_BY_CWD }, { "/recent", VIEW_RECENT },
	};
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
		size_t n = strlen(views[i].name);
		if (strncmp(path, views[i].name, n) == 0 && (path[n] == '\0' || path[n] == '/')) {
			*rest = path[n] ? path + n + 1 : "";
			return views[i].kind;
		}
	}
	return VIEW_NONE;
}

int views_owns(const char *path)
{
	const char *rest;
	return views_kind_of(path, &rest) != VIEW_NONE;
}

/* The catalog as this caller may see it: the sessions whose files it may
 * read (docs/security.md "Who sees what"), so that names, cwds and the
 * suffixes that tell equal names apart come only from those. */
static void views_keep_readable(const struct psfs_caller *who, struct catalog_session *items, size_t *n);

/* Drops (and clears) from items what who may not read. */
static void views_keep_readable(const struct psfs_caller *who, struct catalog_session *items, size_t *n)
{
	size_t kept = 0;
	for (size_t i = 0; i < *n; i++) {
		struct catalog_session *c = &items[i];
		if (psfs_caller_may_read(who, c->uid, c->gid, c->mode)) {
			items[kept++] = *c;
		} else {
			catalog_session_clear(c);
		}
	}
	*n = kept;
}

/* One listed symlink of a view. */
struct views_link {
	char *name;
	const struct catalog_session *session;
};

/* A view's names, hashed: a view of 5,000 sessions asked of every name
 * whether it was taken made its build quadratic, and `ls -l` of it looks
 * up each name. */
struct views_names {
	const struct views_link **slots; /* open addressing; NULL is empty */
	size_t mask;
};

struct views_list {
	struct catalog_session *items;
	size_t n_items;
	struct views_link *links; /* n_items of room, never moved: the names point in */
	size_t n;
	struct views_names names; /* the first link of each name (by-cwd/: none) */
};

static void views_list_free(struct views_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->links[i].name);
	free(l->links);
	free(l->names.slots);
	catalog_snapshot_free(l->items, l->n_items);
}

static uint64_t views_hash(const char *s)
{
	return fnv1a_add_str(FNV1A_BASIS, s);
}

static int views_names_init(struct views_names *t, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n + 2)
		cap *= 2;
	t->slots = calloc(cap, sizeof *t->slots);
	t->mask = cap - 1;
	return t->slots ? 0 : -ENOMEM;
}

/* Where name is, or the empty slot where it would go. */
static const struct views_link **views_names_slot(const struct views_names *t, const char *name)
{
	size_t i = (size_t)views_hash(name) & t->mask;
	while (t->slots[i] && strcmp(t->slots[i]->name, name) != 0)
		i = (i + 1) & t->mask;
	return &t->slots[i];
}

static int views_taken(const struct views_list *l, const char *name)
{
	return *views_names_slot(&l->names, name) != NULL;
}

/* Lists name (new, now the list's) for c; the table holds no more names
 * than the list has sessions, so it never fills. */
static int views_add(struct views_list *l, char *name, const struct catalog_session *c)
{
	if (!name)
		return -ENOMEM;
	l->links[l->n].name = name;
	l->links[l->n].session = c;
	const struct views_link **slot = views_names_slot(&l->names, name);
	if (!*slot)
		*slot = &l->links[l->n];
	l->n++;
	return 0;
}

/* Oldest first, so that a name keeps belonging to the session that had it
 * first when another session later takes the same name. */
static int views_oldest_first(const void *a, const void *b)
{
	const struct catalog_session *x = *(const struct catalog_session *const *)a;
	const struct catalog_session *y = *(const struct catalog_session *const *)b;
	int c = strcmp(x->stem, y->stem);
	return c ? c : strcmp(x->project, y->project);
}

/* The first suffix that tells apart sessions listed under one name in
 * by-name/: 8 characters of the id. */
static const char *views_suffix8(const struct catalog_session *c, char buf[9])
{
	snprintf(buf, 9, "%.8s", c->id);
	return buf;
}

/* by-id/'s second suffix, for a file whose name another file of that id
 * has too (a copy in another project): PROJECT%2FFILE, the file's path in
 * the store with its / escaped as every listed name escapes it.  New
 * string, or NULL. */
static char *views_project_stem(const struct catalog_session *c)
{
	char *s = NULL;
	if (asprintf(&s, "%s%%2F%s", c->project, c->stem) < 0)
		s = NULL;
	return s;
}

/* key's name with ~suffix, within a file name's length. */
static char *views_suffixed(const char *key, const char *suffix)
{
	char *base = views_escape_max(key, NAME_MAX - 1 - strlen(suffix)), *name = NULL;
	if (base && asprintf(&name, "%s~%s", base, suffix) < 0)
		name = NULL;
	free(base);
	return name;
}

/* Whether name is "<base>~<suffix>". */
static int views_is_suffixed(const char *name, const char *base, const char *suffix)
{
	size_t n = strlen(base);
	return strncmp(name, base, n) == 0 && name[n] == '~' && strcmp(name + n + 1, suffix) == 0;
}

/* Whether name is one the session had or may have in by-id/ or by-name/
 * though it is not listed so now: with a suffix (when the session that
 * held the plain name is renamed or gone, the suffix goes too), or as
 * names were escaped before.  1 yes, 0 no, -ENOMEM. */
static int views_alias_of(const struct catalog_session *c, enum views_kind kind, const char *name)
{
	const char *key = kind == VIEW_BY_ID ? c->id : c->name;
	char sfx8[9];
	char *path = kind == VIEW_BY_ID ? views_project_stem(c) : NULL;
	/* by-name: ~<8 of the id>, ~<file>; by-id: ~<file>, ~<project>%2F<file>. */
	const char *suffixes[2] = { kind == VIEW_BY_ID ? c->stem : views_suffix8(c, sfx8),
				    kind == VIEW_BY_ID ? path : c->stem };
	char *before = views_escape_before(key);
	int same = !before || (kind == VIEW_BY_ID && !path) ? -ENOMEM : strcmp(before, name) == 0;
	for (int i = 0; i < 2 && same == 0; i++) {
		char *now = views_escape_max(key, NAME_MAX - 1 - strlen(suffixes[i]));
		same = !now ? -ENOMEM
			    : views_is_suffixed(name, now, suffixes[i]) || views_is_suffixed(name, before, suffixes[i]);
		free(now);
	}
	free(before);
	free(path);
	return same;
}

/* A name in recent/ is NN-<session>: the rank moves whenever another
 * session becomes active, so any rank resolves (a name listed a moment
 * ago keeps working), as long as the session exists.  Returns the part
 * after the rank, or NULL. */
static const char *views_unranked(const char *name)
{
	const char *p = name;
	while (*p >= '0' && *p <= '9')
		p++;
	return p > name && *p == '-' && p[1] ? p + 1 : NULL;
}

/* The ids of the first n sessions of order (new array of borrowed strings). */
static const char **views_listed_ids(const struct catalog_session *const *order, size_t n)
{
	const char **ids = calloc(n ? n : 1, sizeof *ids);
	for (size_t i = 0; ids && i < n; i++)
		ids[i] = order[i]->id;
	return ids;
}

/* A session's name in recent/: its title as pi's list shows it and the
 * end of its id (title.h).  ids are the listed sessions'.  New string,
 * NULL without memory. */
static char *views_recent_name(size_t rank, const struct catalog_session *c, const char *const *ids, size_t n,
			       size_t self)
{
	return title_file_name(rank, c->title, title_id_tail(ids, n, self));
}

/* The session a recent/ name (its rank taken off) leads to: one that had
 * it as its file's name (the names of before), else the one session whose
 * id ends in what follows its last '~' (whatever its title is now). */
static const struct catalog_session *views_recent_find(const struct views_list *l, const char *key)
{
	for (size_t i = 0; i < l->n_items; i++)
		if (strcmp(l->items[i].stem, key) == 0)
			return &l->items[i];
	const char *tilde = strrchr(key, '~');
	const struct catalog_session *found = NULL;
	if (!tilde || strlen(tilde + 1) < 8)
		return NULL;
	for (size_t i = 0; i < l->n_items; i++) {
		if (title_id_ends(l->items[i].id, tilde + 1)) {
			if (found)
				return NULL;
			found = &l->items[i];
		}
	}
	return found;
}

/* Whether another session of c's id has c's file name (in another
 * project). */
static int views_same_stem(const struct views_list *l, const struct catalog_session *c)
{
	for (size_t i = 0; i < l->n_items; i++) {
		const struct catalog_session *o = &l->items[i];
		if (o != c && strcmp(o->id, c->id) == 0 && strcmp(o->stem, c->stem) == 0)
			return 1;
	}
	return 0;
}

/* The symlinks of by-id/, by-name/ or recent/ for the sessions in
 * l->items (which the list then owns; freed with it on an error too). */
static int views_build(enum views_kind kind, struct views_list *l)
{
	l->links = calloc(l->n_items ? l->n_items : 1, sizeof *l->links);
	const struct catalog_session **order = calloc(l->n_items ? l->n_items : 1, sizeof *order);
	const char **ids = NULL; /* recent/: the listed sessions' ids */
	int res = views_names_init(&l->names, l->n_items) || !l->links || !order ? -ENOMEM : 0;
	size_t n = 0;
	/* recent/ lists what sessions.md lists: no file without a session
	 * header (empty, not JSON), as pi lists none. */
	for (size_t i = 0; !res && i < l->n_items; i++)
		if (kind != VIEW_RECENT || *l->items[i].id)
			order[n++] = &l->items[i];
	if (!res && kind != VIEW_RECENT)
		qsort(order, n, sizeof *order, views_oldest_first);
	size_t n_recent = n < VIEWS_RECENT ? n : VIEWS_RECENT;
	for (size_t i = 0; !res && i < n; i++) {
		const struct catalog_session *c = order[i];
		char *name = NULL, *base;
		if (kind == VIEW_RECENT) {
			if (i >= VIEWS_RECENT)
				break;
			if (!ids && !(ids = views_listed_ids(order, n_recent))) {
				res = -ENOMEM;
				break;
			}
			name = views_recent_name(i + 1, c, ids, n_recent, i);
			res = views_add(l, name, c);
			continue;
		}
		const char *key = kind == VIEW_BY_ID ? c->id : c->name;
		if (!*key)
			continue;
		if (!(base = views_escape(key))) {
			res = -ENOMEM;
			break;
		}
		if (views_taken(l, base) && kind == VIEW_BY_ID) {
			/* Files that share an id: each named by its file, or,
			 * where another file of the id has the same name (a
			 * copy in another project), by its project and file
			 * (views_alias_of keeps both resolving if the first
			 * holder of the plain id goes). */
			free(base);
			char *path = views_same_stem(l, c) ? views_project_stem(c) : NULL;
			name = views_same_stem(l, c) ? (path ? views_suffixed(key, path) : NULL)
						     : views_suffixed(key, c->stem);
			free(path);
		} else if (views_taken(l, base)) {
			/* A stable suffix: the session's own id, then its file
			 * (views_suffixed keeps them resolving if the first
			 * holder of the name goes). */
			char sfx[9];
			free(base);
			name = views_suffixed(key, views_suffix8(c, sfx));
			if (name && views_taken(l, name)) {
				free(name);
				name = views_suffixed(key, c->stem);
			}
		} else {
			name = base;
		}
		res = views_add(l, name, c);
	}
	free(ids);
	free(order);
	if (res)
		views_list_free(l);
	return res;
}

/* A view as one caller saw it at one version of the catalog, kept
 * (views_memo) for the next request of that caller: `ls -l by-id` asks
 * for each of 5,000 links twice (lookup, readlink), and building the
 * view each time made it take minutes. */
struct views_built {
	int refs;              /* the memo's, and each request's using it */
	enum views_kind kind;
	uint64_t version;      /* the catalog's (catalog_snapshot_since) */
	struct psfs_caller who;
	struct views_list l;   /* by-cwd/: items only, their cwds made keys */
};

struct views_memo {
	pthread_mutex_t lock;
	struct views_built *kinds[VIEW_RECENT + 1];
};

int views_memo_new(struct views_memo **out)
{
	struct views_memo *m = calloc(1, sizeof *m);
	if (!m || pthread_mutex_init(&m->lock, NULL) != 0) {
		free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

static void views_built_free(struct views_built *b)
{
	views_list_free(&b->l);
	free(b);
}

void views_memo_free(struct views_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < sizeof m->kinds / sizeof m->kinds[0]; i++)
		if (m->kinds[i])
			views_built_free(m->kinds[i]);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static void views_put(struct psfs *fs, struct views_built *b)
{
	int last = 1;
	if (!b)
		return;
	if (fs->views) {
		lockorder_lock(&fs->views->lock, LOCK_VIEWS);
		last = --b->refs == 0;
		lockorder_unlock(&fs->views->lock, LOCK_VIEWS);
	}
	if (last)
		views_built_free(b);
}

static int views_same_caller(const struct psfs_caller *a, const struct psfs_caller *b)
{
	return a->uid == b->uid && a->gid == b->gid && a->n_groups == b->n_groups &&
	       memcmp(a->groups, b->groups, (size_t)a->n_groups * sizeof a->groups[0]) == 0;
}

/* The view of kind as this caller sees it now: the kept one while the
 * catalog has not changed, else built anew (and kept).  Release with
 * views_put. */
static int views_get(struct psfs *fs, enum views_kind kind, struct views_built **out)
{
	struct views_memo *m = fs->views;
	struct views_built *b = NULL;
	struct psfs_caller who;
	uint64_t version = UINT64_MAX;
	struct catalog_session *items;
	size_t n;
	int res = 0;
	psfs_caller_get(&who);
	if (m) {
		lockorder_lock(&m->lock, LOCK_VIEWS);
		if (m->kinds[kind] && views_same_caller(&m->kinds[kind]->who, &who)) {
			b = m->kinds[kind];
			b->refs++;
			version = b->version;
		}
		lockorder_unlock(&m->lock, LOCK_VIEWS);
	}
	ps_err err = catalog_snapshot_since(fs->catalog, &version, &items, &n);
	if (!err && !items && b) {
		*out = b;
		return 0;
	}
	views_put(fs, b);
	if (err)
		return -psfs_errno(err);
	if (!(b = calloc(1, sizeof *b))) {
		catalog_snapshot_free(items, n);
		return -ENOMEM;
	}
	b->refs = 1;
	b->kind = kind;
	b->version = version;
	b->who = who;
	views_keep_readable(&who, items, &n);
	b->l.items = items;
	b->l.n_items = n;
	res = kind == VIEW_BY_CWD ? views_cwd_keys(items, n) ? -ENOMEM : 0 : views_build(kind, &b->l);
	if (res) {
		free(b); /* views_build freed the list; by-cwd's is freed here */
		if (kind == VIEW_BY_CWD)
			catalog_snapshot_free(items, n);
		return res;
	}
	if (m) {
		struct views_built *old;
		lockorder_lock(&m->lock, LOCK_VIEWS);
		old = m->kinds[kind];
		m->kinds[kind] = b;
		b->refs++;
		lockorder_unlock(&m->lock, LOCK_VIEWS);
		views_put(fs, old);
	}
	*out = b;
	return 0;
}

/* The session a name of by-id/, by-name/ or recent/ leads to: the one
 * listed so, else one that had or may have the name (views_alias_of,
 * views_unranked), else (by-id) the session whose id starts with it.
 * NULL with *res 0 when none, -ENOMEM when memory runs out. */
static const struct catalog_session *views_find(const struct views_list *l, enum views_kind kind, const char *name,
						 int *res)
{
	const struct catalog_session *found = NULL;
	*res = 0;
	const struct views_link *listed = *views_names_slot(&l->names, name);
	if (listed)
		return listed->session;
	if (kind == VIEW_RECENT) {
		const char *key = views_unranked(name);
		/* The rank moves on, the title may too: what follows it decides. */
		for (size_t i = 0; key && i < l->n; i++)
			if (strcmp(views_unranked(l->links[i].name), key) == 0)
				return l->links[i].session;
		return key ? views_recent_find(l, key) : NULL;
	}
	/* Listed sessions are oldest first: the alias goes to the same
	 * session the listing would give it to. */
	for (size_t i = 0; i < l->n; i++) {
		int same = views_alias_of(l->links[i].session, kind, name);
		if (same) {
			*res = same < 0 ? same : 0;
			return same < 0 ? NULL : l->links[i].session;
		}
	}
	size_t len = strlen(name);
	if (kind != VIEW_BY_ID || len < 4)
		return NULL;
	/* A unique prefix of an id resolves, as git resolves short hashes. */
	for (size_t i = 0; i < l->n; i++) {
		if (strncmp(l->links[i].session->id, name, len) == 0) {
			if (found && found != l->links[i].session)
				return NULL; /* ambiguous: a directory of candidates */
			found = l->links[i].session;
		}
	}
	if (found)
		return found;
	/* Else a unique tail: pi's ids are UUIDv7, whose first characters
	 * are a timestamp that sessions started within a minute share, while
	 * the tail (what recent/ shows after '~') is random. */
	for (size_t i = 0; i < l->n; i++) {
		const char *id = l->links[i].session->id;
		size_t idlen = strlen(id);
		if (idlen >= len && strcmp(id + idlen - len, name) == 0) {
			if (found && found != l->links[i].session)
				return NULL;
			found = l->links[i].session;
		}
	}
	return found;
}

static void views_stat_dir(struct psfs *fs, struct stat *st)
{
	memset(st, 0, sizeof *st);
	if (stat(fs->cfg.store, st) != 0)
		memset(st, 0, sizeof *st);
	st->st_mode = S_IFDIR | 0555;
	st->st_nlink = 2;
	st->st_size = 0;
}

/* by-cwd/'s directories take the store's write bits: whoever may make a
 * project folder there may mkdir in them (cwdnew.h); anyone may read
 * them, as the other views. */
static void views_stat_cwd_dir(struct psfs *fs, struct stat *st)
{
	struct stat store;
	if (stat(fs->cfg.store, &store) != 0)
		store.st_mode = 0;
	views_stat_dir(fs, st);
	st->st_mode |= store.st_mode & 0222;
}

static void views_stat_link(struct psfs *fs, size_t target_len, struct stat *st)
{
	views_stat_dir(fs, st);
	st->st_mode = S_IFLNK | 0777;
	st->st_nlink = 1;
	st->st_size = (off_t)target_len;
}

/* The target of a link `depth` directories below the mount root. */
static char *views_target(const struct catalog_session *c, int depth)
{
	struct buf b = BUF_INIT;
	int bad = 0;
	for (int i = 0; i < depth && !bad; i++)
		bad = buf_puts(&b, "../");
	/* A session at the store root is a directory at the mount root. */
	bad = bad || buf_printf(&b, "%s%s%s", c->project, *c->project ? "/" : "", c->stem) || buf_finish(&b);
	if (bad) {
		buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* Resolves a path inside a view: a directory (*target NULL) or a link. */
/* by-id/PREFIX, where PREFIX (4 characters or more) begins the ids of
 * several sessions and names none, is a directory of links to each of
 * them, named as by-id/ lists them: `ls by-id/0195` shows the candidates
 * where a unique prefix would have led to the session.  How many listed
 * sessions' ids start with prefix[0..n). */
static size_t views_id_candidates(const struct views_list *l, const char *prefix, size_t n)
{
	size_t count = 0;
	if (n < 4)
		return 0;
	for (size_t i = 0; i < l->n; i++)
		count += strncmp(l->links[i].session->id, prefix, n) == 0;
	return count;
}

/* by-id/PREFIX/NAME: the link NAME among PREFIX's candidates (prefix is
 * path[0..n)).  0 with *target new, -ENOENT or -ENOMEM. */
static int views_candidate(const struct views_list *l, const char *prefix, size_t n, const char *name, char **target)
{
	int res = 0;
	char *dir = strndup(prefix, n);
	if (!dir)
		return -ENOMEM;
	int is_dir = !views_find(l, VIEW_BY_ID, dir, &res) && !res && views_id_candidates(l, prefix, n) > 1;
	free(dir);
	if (res)
		return res;
	for (size_t i = 0; is_dir && i < l->n; i++) {
		if (strcmp(l->links[i].name, name) == 0 && strncmp(l->links[i].session->id, prefix, n) == 0) {
			*target = views_target(l->links[i].session, 2);
			return *target ? 0 : -ENOMEM;
		}
	}
	return -ENOENT;
}

static int views_may_read(void *ctx, const struct stat *st)
{
	return psfs_caller_may_read(ctx, st->st_uid, st->st_gid, st->st_mode);
}

/* by-id/ID and by-name/NAME of a subagent's session (docs/layout.md
 * "Subagent runs"): not listed, as pi's /resume lists none; found, when
 * no session of the store's own has the id or name, in the families
 * (family_search_store).  0 with *target new, or -errno. */
static int views_subagent(struct psfs *fs, enum views_kind kind, const char *key, char **target)
{
	struct psfs_caller who;
	char *path = NULL;
	psfs_caller_get(&who);
	ps_err err = family_search_store(fs->store, fs->family, kind == VIEW_BY_NAME, key, views_may_read, &who, &path);
	if (err)
		return -psfs_errno(err);
	int res = asprintf(target, "../%s", path) < 0 ? -ENOMEM : 0;
	if (res)
		*target = NULL;
	free(path);
	return res;
}

static int views_resolve(struct psfs *fs, const char *path, char **target)
{
	const char *rest;
	enum views_kind kind = views_kind_of(path, &rest);
	int res = 0;
	*target = NULL;
	if (!*rest)
		return 0;
	struct views_built *b;
	const char *slash = strchr(rest, '/');
	if (slash && kind != VIEW_BY_ID && kind != VIEW_BY_CWD)
		return -ENOENT;
	if ((res = views_get(fs, kind, &b)))
		return res;
	if (kind != VIEW_BY_CWD) {
		const struct views_list *l = &b->l;
		const struct catalog_session *c = NULL;
		if (slash) {
			res = views_candidate(l, rest, (size_t)(slash - rest), slash + 1, target);
		} else if ((c = views_find(l, kind, rest, &res))) {
			*target = views_target(c, 1);
			res = *target ? 0 : -ENOMEM;
		} else if (!res) {
			res = kind == VIEW_BY_ID && views_id_candidates(l, rest, strlen(rest)) > 1 ? 0 : -ENOENT;
		}
		views_put(fs, b);
		if (res == -ENOENT && !slash && (kind == VIEW_BY_ID || kind == VIEW_BY_NAME))
			res = views_subagent(fs, kind, rest, target);
		return res;
	}
	const struct catalog_session *items = b->l.items;
	size_t n = b->l.n_items;
	char *norm = views_cwd_normalize(rest);
	res = norm ? -ENOENT : -ENOMEM;
	for (size_t i = 0; norm && i < n && res; i++)
		if (views_cwd_under(items[i].cwd, norm))
			res = 0; /* a directory on the way to some cwd */
	free(norm);
	if (res == -ENOENT) {
		/* A session link: DIR/<stem> where DIR is its cwd (the stem is
		 * the store's file name, never escaped). */
		const char *last = strrchr(rest, '/');
		char *raw = last ? strndup(rest, (size_t)(last - rest)) : strdup("");
		char *dir = raw ? views_cwd_normalize(raw) : NULL;
		const char *stem = last ? last + 1 : rest;
		free(raw);
		if (!dir)
			res = -ENOMEM;
		for (size_t i = 0; dir && i < n && res; i++) {
			if (strcmp(items[i].stem, stem) == 0 && views_cwd_is(items[i].cwd, dir)) {
				*target = views_target(&items[i], views_depth(dir) + 1);
				res = *target ? 0 : -ENOMEM;
			}
		}
		free(dir);
	}
	views_put(fs, b);
	return res;
}

int views_getattr(struct psfs *fs, const char *path, struct stat *st)
{
	const char *rest;
	char *target;
	int res = views_resolve(fs, path, &target);
	if (res)
		return res;
	if (target)
		views_stat_link(fs, strlen(target), st);
	else if (views_kind_of(path, &rest) == VIEW_BY_CWD)
		views_stat_cwd_dir(fs, st);
	else
		views_stat_dir(fs, st);
	free(target);
	return 0;
}

int views_readlink(struct psfs *fs, const char *path, char *buf, size_t size)
{
	char *target;
	int res = views_resolve(fs, path, &target);
	if (res)
		return res;
	if (!target)
		return -EINVAL;
	snprintf(buf, size, "%s", target);
	free(target);
	return 0;
}

int views_readdir(struct psfs *fs, const char *path, void *buf, fuse_fill_dir_t filler)
{
	const char *rest;
	enum views_kind kind = views_kind_of(path, &rest);
	char *target;
	int res = views_resolve(fs, path, &target);
	if (res)
		return res;
	if (target) {
		free(target);
		return -ENOTDIR;
	}
	/* "." and ".." come from the caller. */
	struct views_built *b;
	if ((res = views_get(fs, kind, &b)))
		return res;
	if (kind != VIEW_BY_CWD) {
		/* by-id/PREFIX: the candidates only. */
		for (size_t i = 0; i < b->l.n; i++) {
			struct stat st = { .st_mode = S_IFLNK };
			if (!*rest || strncmp(b->l.links[i].session->id, rest, strlen(rest)) == 0)
				filler(buf, b->l.links[i].name, &st, 0, 0);
		}
		views_put(fs, b);
		return 0;
	}
	const struct catalog_session *items = b->l.items;
	size_t n = b->l.n_items;
	char *norm = views_cwd_normalize(rest);
	if (!norm) {
		views_put(fs, b);
		return -ENOMEM;
	}
	rest = norm;
	struct buf seen = BUF_INIT; /* child names already listed, NUL-separated */
	for (size_t i = 0; i < n; i++) {
		const char *cwd = items[i].cwd;
		while (*cwd == '/')
			cwd++;
		if (views_cwd_is(items[i].cwd, rest)) {
			struct stat st = { .st_mode = S_IFLNK };
			filler(buf, items[i].stem, &st, 0, 0);
		} else if (views_cwd_under(items[i].cwd, rest)) {
			const char *child = cwd + strlen(rest) + (*rest ? 1 : 0);
			size_t len = strcspn(child, "/");
			char name[NAME_MAX + 1];
			if (!len || len > NAME_MAX)
				continue;
			memcpy(name, child, len);
			name[len] = '\0';
			int dup = 0;
			for (size_t off = 0; off < seen.len && !dup; off += strlen(seen.data + off) + 1)
				dup = strcmp(seen.data + off, name) == 0;
			if (dup)
				continue;
			buf_put(&seen, name, len + 1);
			struct stat st = { .st_mode = S_IFDIR };
			filler(buf, name, &st, 0, 0);
		}
	}
	buf_free(&seen);
	free(norm);
	views_put(fs, b);
	return 0;
}
