/* The sessions a store-wide or project file covers (overviewlist.h): one
 * walk of the store, each session's subagents' right after it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "family.h"
#include "overviewlist.h"

/* What a session contributes to the key: its place and what tells that
 * it changed (session_refresh looks at the same). */
struct overview_stamp {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

/* Adds a session file to the key, and to the items when they are kept. */
static int overview_list_add(struct overview_list *l, const char *project, const char *name, const struct stat *st,
			     const char *shown_project, const char *shown_name)
{
	struct overview_stamp stamp = {
		(uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
		(int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		(int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
	};
	/* Names end in NUL, so no two listings run together alike. */
	if (buf_put(&l->key, project, strlen(project) + 1) || buf_put(&l->key, name, strlen(name) + 1) ||
	    buf_put(&l->key, &stamp, sizeof stamp))
		return l->failed = 1;
	if (!l->with_items)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct overview_item *items = realloc(l->items, cap * sizeof *items);
		if (!items)
			return l->failed = 1;
		l->items = items;
		l->cap = cap;
	}
	struct overview_item *it = &l->items[l->n];
	memset(it, 0, sizeof *it);
	it->project = strdup(project);
	it->name = strdup(name);
	it->shown_project = shown_project ? strdup(shown_project) : NULL;
	it->shown_name = shown_name ? strdup(shown_name) : NULL;
	it->st = *st;
	if (!it->project || !it->name || (shown_project && !it->shown_project) || (shown_name && !it->shown_name)) {
		free(it->project);
		free(it->name);
		free(it->shown_project);
		free(it->shown_name);
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
}

/* Whether project holds a folder named stem: lists project's folders
 * once, when its first session is met. */
static int overview_has_folder(struct overview_list *l, const char *project, const char *stem)
{
	if (!l->folders_of || strcmp(l->folders_of, project) != 0) {
		overview_folders_clear(l);
		if (!(l->folders_of = strdup(project)))
			return l->failed = 1, 0;
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
 * SHOWN/subagents/NAME in the project top. */
static void overview_list_family(struct overview_list *l, const char *top, const char *project, const char *stem,
				 const char *shown, int depth)
{
	struct family *fam = NULL;
	ps_err err = family_read(l->fs->store, l->fs->family, project, stem, &fam);
	if (err) {
		l->failed = err == PS_ERR_NOMEM; /* else gone meanwhile */
		return;
	}
	for (size_t i = 0; !l->failed && i < fam->n; i++) {
		const struct family_member *m = &fam->members[i];
		struct stat st;
		char *child = NULL;
		if (!m->stem || store_stat_session(l->fs->store, m->dir, m->stem, &st) != PS_OK ||
		    !psfs_caller_may_read(&l->who, st.st_uid, st.st_gid, st.st_mode))
			continue;
		if (asprintf(&child, "%s/" SUBAGENTS_NAME "/%s", shown, m->name) < 0) {
			l->failed = 1;
			break;
		}
		if (!overview_list_add(l, m->dir, m->stem, &st, top, child) && depth < OVERVIEW_FAMILY_DEPTH)
			overview_list_family(l, top, m->dir, m->stem, child, depth + 1);
		free(child);
	}
	family_free(fam);
}

static int overview_list_session(void *ctx, const char *project, const char *name, const struct stat *st)
{
	struct overview_list *l = ctx;
	if (!psfs_caller_may_read(&l->who, st->st_uid, st->st_gid, st->st_mode))
		return 0;
	if (overview_list_add(l, project, name, st, NULL, NULL))
		return 1;
	/* Its subagents' sessions (docs/layout.md "Subagent runs"). */
	if (*project && overview_has_folder(l, project, name))
		overview_list_family(l, project, project, name, name, 1);
	return l->failed;
}

void overviewlist_free(struct overview_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].project);
		free(l->items[i].name);
		free(l->items[i].shown_project);
		free(l->items[i].shown_name);
		buf_free(&l->items[i].value);
	}
	free(l->items);
	overview_folders_clear(l);
	free(l->folders);
	buf_free(&l->key);
	memset(l, 0, sizeof *l);
}

ps_err overviewlist_make(struct psfs *fs, const char *project, int with_items, struct overview_list *l)
{
	memset(l, 0, sizeof *l);
	l->fs = fs;
	l->key = (struct buf)BUF_INIT;
	l->with_items = with_items;
	psfs_caller_get(&l->who);
	ps_err err = store_each_session(fs->store, project, overview_list_session, l);
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
