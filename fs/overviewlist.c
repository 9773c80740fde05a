/* The sessions a store-wide or project file covers (overviewlist.h): one
 * walk of the store, each session's subagents' right after it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "family.h"
#include "fanout.h"
#include "overviewlist.h"

/* What a session contributes to the key: its place and what tells that
 * it changed (session_refresh looks at the same). */
struct overview_stamp {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

/* A session of the walk, its family read afterwards (overview_families). */
struct overview_top {
	char *project, *name;
	struct stat st;
	int projfd;               /* its project's folder when it has a family folder, else -1 (borrowed) */
	struct overview_list sub; /* its family's sessions, as a list of their own */
};

static void overview_item_clear(struct overview_item *it)
{
	free(it->project);
	free(it->name);
	free(it->shown_project);
	free(it->shown_name);
	buf_free(&it->value);
}

/* Room for one more item: 1, else 0. */
static int overview_list_reserve(struct overview_list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct overview_item *items = realloc(l->items, cap * sizeof *items);
		if (!items)
			return 0;
		l->items = items;
		l->cap = cap;
	}
	return 1;
}

/* Adds a session file to the key, and to the items when they are kept. */
static int overview_list_add(struct overview_list *l, const char *project, const char *name, const struct stat *st,
			     const char *shown_project, const char *shown_name)
{
	struct overview_stamp stamp = {
		(uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
		(int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		(int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
	};
	/* Names end in NUL, so no two listings run together alike.  A
	 * subagent's session adds the name it is shown with: it comes from
	 * its family's folders and artifacts, not from its file. */
	if (buf_put(&l->key, project, strlen(project) + 1) || buf_put(&l->key, name, strlen(name) + 1) ||
	    (shown_name && buf_put(&l->key, shown_name, strlen(shown_name) + 1)) ||
	    buf_put(&l->key, &stamp, sizeof stamp))
		return l->failed = 1;
	if (!l->with_items)
		return 0;
	if (!overview_list_reserve(l))
		return l->failed = 1;
	struct overview_item *it = &l->items[l->n];
	memset(it, 0, sizeof *it);
	it->project = strdup(project);
	it->name = strdup(name);
	it->shown_project = shown_project ? strdup(shown_project) : NULL;
	it->shown_name = shown_name ? strdup(shown_name) : NULL;
	it->st = *st;
	if (!it->project || !it->name || (shown_project && !it->shown_project) || (shown_name && !it->shown_name)) {
		overview_item_clear(it);
		return l->failed = 1;
	}
	l->n++;
	return 0;
}

static int overview_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int overview_note_folder(void *ctx, const char *name, const struct stat *st)
{
	struct overview_list *l = ctx;
	(void)st;
	if (l->n_folders == l->cap_folders) {
		size_t cap = l->cap_folders ? 2 * l->cap_folders : 16;
		char **grown = realloc(l->folders, cap * sizeof *grown);
		if (!grown)
			return l->failed = 1;
		l->folders = grown;
		l->cap_folders = cap;
	}
	if (!(l->folders[l->n_folders] = strdup(name)))
		return l->failed = 1;
	l->n_folders++;
	return 0;
}

static void overview_folders_clear(struct overview_list *l)
{
	for (size_t i = 0; i < l->n_folders; i++)
		free(l->folders[i]);
	l->n_folders = 0;
	free(l->folders_of);
	l->folders_of = NULL;
	l->folders_fd = -1; /* still open, in fds: the families are read after the walk */
}

/* Closes the project folders the walk opened. */
static void overview_fds_close(struct overview_list *l)
{
	for (size_t i = 0; i < l->n_fds; i++)
		close(l->fds[i]);
	free(l->fds);
	l->fds = NULL;
	l->n_fds = 0;
}

/* Forgets the sessions of the walk whose families were not read. */
static void overview_tops_free(struct overview_list *l)
{
	for (size_t i = 0; i < l->n_tops; i++) {
		free(l->tops[i].project);
		free(l->tops[i].name);
	}
	free(l->tops);
	l->tops = NULL;
	l->n_tops = l->cap_tops = 0;
}

/* Whether project holds a folder named stem: lists project's folders
 * once, when its first session is met. */
static int overview_has_folder(struct overview_list *l, const char *project, const char *stem)
{
	if (!l->folders_of || strcmp(l->folders_of, project) != 0) {
		overview_folders_clear(l);
		if (!(l->folders_of = strdup(project)))
			return l->failed = 1, 0;
		int *grown = realloc(l->fds, (l->n_fds + 1) * sizeof *grown);
		if (!grown)
			return l->failed = 1, 0;
		l->fds = grown;
		if (store_open_project(l->fs->store, project, &l->folders_fd) != PS_OK)
			l->folders_fd = -1;
		else
			l->fds[l->n_fds++] = l->folders_fd;
		(void)store_list_folders(l->fs->store, project, overview_note_folder, l);
		if (l->n_folders > 1)
			qsort(l->folders, l->n_folders, sizeof *l->folders, overview_cmp_names);
	}
	return l->n_folders && bsearch(&stem, l->folders, l->n_folders, sizeof *l->folders, overview_cmp_names);
}

/* How deep subagents' own subagents are counted. */
#define OVERVIEW_FAMILY_DEPTH 8

/* The subagents' sessions of project/stem that the caller may read, and
 * theirs, right after it (depth first, in start order), each shown as
 * SHOWN/subagents/NAME in the project top, whose folder topfd is: every
 * child is stat'ed by a path relative to it. */
static void overview_list_family(struct overview_list *l, const char *top, int topfd, const char *project,
				 const char *stem, const char *shown, int depth)
{
	struct family *fam = NULL;
	ps_err err = depth == 1 ? family_read_at(l->fs->store, l->fs->family, topfd, project, stem, &fam)
				: family_read(l->fs->store, l->fs->family, project, stem, &fam);
	if (err) {
		l->failed = err == PS_ERR_NOMEM; /* else gone meanwhile */
		return;
	}
	for (size_t i = 0; !l->failed && i < fam->n; i++) {
		const struct family_member *m = &fam->members[i];
		struct stat st;
		char *child = NULL;
		if (!m->stem || (family_stat_member(topfd, top, m, &st) != PS_OK &&
				 store_stat_session(l->fs->store, m->dir, m->stem, &st) != PS_OK) ||
		    !psfs_caller_may_read(&l->who, st.st_uid, st.st_gid, st.st_mode))
			continue;
		if (asprintf(&child, "%s/" SUBAGENTS_NAME "/%s", shown, m->name) < 0) {
			l->failed = 1;
			break;
		}
		if (!overview_list_add(l, m->dir, m->stem, &st, top, child) && m->has_family &&
		    depth < OVERVIEW_FAMILY_DEPTH)
			overview_list_family(l, top, topfd, m->dir, m->stem, child, depth + 1);
		free(child);
	}
	family_free(fam);
}

static int overview_list_session(void *ctx, const char *project, const char *name, const struct stat *st)
{
	struct overview_list *l = ctx;
	if (!psfs_caller_may_read(&l->who, st->st_uid, st->st_gid, st->st_mode))
		return 0;
	if (l->n_tops == l->cap_tops) {
		size_t cap = l->cap_tops ? 2 * l->cap_tops : 64;
		struct overview_top *grown = realloc(l->tops, cap * sizeof *grown);
		if (!grown)
			return l->failed = 1;
		l->tops = grown;
		l->cap_tops = cap;
	}
	struct overview_top *t = &l->tops[l->n_tops];
	memset(t, 0, sizeof *t);
	t->projfd = -1;
	t->st = *st;
	if (!(t->project = strdup(project)) || !(t->name = strdup(name))) {
		free(t->project);
		return l->failed = 1;
	}
	l->n_tops++;
	/* Its subagents' sessions (docs/layout.md "Subagent runs"), read
	 * next, on several threads. */
	if (*project && overview_has_folder(l, project, name))
		t->projfd = l->folders_fd;
	return l->failed;
}

static void overview_family_item(void *ctx, size_t i)
{
	struct overview_list *l = ctx;
	struct overview_top *t = &l->tops[i];
	if (t->projfd < 0)
		return;
	t->sub.fs = l->fs;
	t->sub.key = (struct buf)BUF_INIT;
	t->sub.with_items = l->with_items;
	t->sub.who = l->who;
	t->sub.folders_fd = -1;
	overview_list_family(&t->sub, t->project, t->projfd, t->project, t->name, t->name, 1);
}

/* Reads every family of the walk (a thousand families are tens of
 * thousands of stats, a fifth of a second of one core), then puts the
 * list together in the walk's order: each session, its family after it. */
static void overview_families(struct overview_list *l)
{
	(void)fanout_run(l->n_tops, l->fs->cfg.read_threads, overview_family_item, NULL, l);
	for (size_t i = 0; i < l->n_tops; i++) {
		struct overview_top *t = &l->tops[i];
		if (!l->failed)
			(void)overview_list_add(l, t->project, t->name, &t->st, NULL, NULL);
		if (!l->failed && t->sub.failed)
			l->failed = 1;
		if (!l->failed && t->sub.key.len && buf_put(&l->key, t->sub.key.data, t->sub.key.len))
			l->failed = 1;
		for (size_t j = 0; j < t->sub.n; j++) {
			if (!l->failed && !overview_list_reserve(l))
				l->failed = 1; /* never a list cut short */
			if (!l->failed)
				l->items[l->n++] = t->sub.items[j];
			else
				overview_item_clear(&t->sub.items[j]);
		}
		free(t->sub.items);
		buf_free(&t->sub.key);
		free(t->project);
		free(t->name);
	}
	free(l->tops);
	l->tops = NULL;
	l->n_tops = l->cap_tops = 0;
}

void overviewlist_free(struct overview_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		overview_item_clear(&l->items[i]);
	free(l->items);
	overview_folders_clear(l);
	overview_fds_close(l);
	overview_tops_free(l);
	free(l->folders);
	buf_free(&l->key);
	memset(l, 0, sizeof *l);
	l->folders_fd = -1;
}

ps_err overviewlist_make(struct psfs *fs, const char *project, int with_items, struct overview_list *l)
{
	memset(l, 0, sizeof *l);
	l->folders_fd = -1;
	l->fs = fs;
	l->key = (struct buf)BUF_INIT;
	l->with_items = with_items;
	psfs_caller_get(&l->who);
	ps_err err = store_each_session(fs->store, project, overview_list_session, l);
	if (!err && !l->failed)
		overview_families(l);
	overview_fds_close(l);
	if (!err && l->failed)
		err = PS_ERR_NOMEM;
	if (err) {
		overviewlist_free(l);
		return err;
	}
	overview_folders_clear(l);
	free(l->folders);
	l->folders = NULL;
	l->cap_folders = 0;
	return PS_OK;
}
