/* A subagent's session found store-wide, by id or name (familysearch.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "familysearch.h"

struct family_search {
	struct ps_store *store;
	struct family_cache *cache;
	int by_name;
	const char *key;
	family_may_fn may;
	void *ctx;
	char *found; /* the mount path below the root: new */
	unsigned matches;
	ps_err err;
	char **names; /* a listing being walked */
	size_t n, cap;
};

static int family_collect(void *ctx, const char *name, const struct stat *st)
{
	struct family_search *f = ctx;
	(void)st;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 32;
		char **grown = realloc(f->names, cap * sizeof *grown);
		if (!grown)
			return f->err = PS_ERR_NOMEM, 1;
		f->names = grown;
		f->cap = cap;
	}
	if (!(f->names[f->n] = strdup(name)))
		return f->err = PS_ERR_NOMEM, 1;
	f->n++;
	return 0;
}

/* Takes the listing collected so far: *names new, f's emptied. */
static size_t family_take_names(struct family_search *f, char ***names)
{
	size_t n = f->n;
	*names = f->names;
	f->names = NULL;
	f->n = f->cap = 0;
	return n;
}

static void family_free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Whether the child is the one asked for: its header's id (whole, or a
 * prefix of 8 characters or more), or its session name. */
static int family_search_is(struct family_search *f, const struct family_member *m)
{
	char *value = NULL;
	int is = 0;
	if (!f->by_name) {
		if (family_header_string(f->store, m->dir, m->stem, "id", &value) == PS_ERR_NOMEM)
			f->err = PS_ERR_NOMEM;
		size_t kl = strlen(f->key);
		is = value && (strcmp(value, f->key) == 0 || (kl >= 8 && strncmp(value, f->key, kl) == 0));
	} else {
		struct ps_session *s = NULL;
		if (store_open_skim(f->store, m->dir, m->stem, &s) == PS_OK && s->name != PS_NIL)
			is = strcmp(session_str(s, s->name), f->key) == 0;
		session_free(s);
	}
	free(value);
	return is;
}

static void family_search_in(struct family_search *f, const char *project, const char *stem, const char *shown,
			     int depth)
{
	struct family *fam = NULL;
	if (depth > 8 || family_read(f->store, f->cache, project, stem, &fam) != PS_OK)
		return;
	for (size_t i = 0; !f->err && i < fam->n; i++) {
		const struct family_member *m = &fam->members[i];
		struct stat st;
		char *path = NULL;
		if (!m->stem || store_stat_session(f->store, m->dir, m->stem, &st) != PS_OK || !f->may(f->ctx, &st))
			continue;
		if (asprintf(&path, "%s/subagents/%s", shown, m->name) < 0) {
			f->err = PS_ERR_NOMEM;
			break;
		}
		if (family_search_is(f, m)) {
			f->matches++;
			if (!f->found) {
				f->found = path;
				path = NULL;
			}
		}
		if (path)
			family_search_in(f, m->dir, m->stem, path, depth + 1);
		free(path);
	}
	family_free(fam);
}

ps_err family_search_store(struct ps_store *store, struct family_cache *cache, int by_name, const char *key,
			   family_may_fn may, void *ctx, char **path)
{
	struct family_search f = { store, cache, by_name, key, may, ctx, NULL, 0, PS_OK, NULL, 0, 0 };
	char **projects = NULL;
	*path = NULL;
	ps_err err = store_list_project_names(store, family_collect, &f);
	size_t n_projects = family_take_names(&f, &projects);
	for (size_t i = 0; !err && !f.err && i < n_projects; i++) {
		char **folders = NULL;
		if (store_project_is_link(store, projects[i]))
			continue; /* met under its real folder */
		(void)store_list_folders(store, projects[i], family_collect, &f);
		size_t n_folders = family_take_names(&f, &folders);
		for (size_t j = 0; !f.err && j < n_folders; j++) {
			struct stat st;
			char *shown = NULL;
			if (store_stat_session(store, projects[i], folders[j], &st) != PS_OK || !may(ctx, &st))
				continue;
			if (asprintf(&shown, "%s/%s", projects[i], folders[j]) < 0)
				f.err = PS_ERR_NOMEM;
			else
				family_search_in(&f, projects[i], folders[j], shown, 1);
			free(shown);
		}
		family_free_names(folders, n_folders);
	}
	family_free_names(projects, n_projects);
	family_free_names(f.names, f.n);
	if (!err)
		err = f.err;
	/* An id's prefix that two children have names neither. */
	if (err || f.matches != 1) {
		free(f.found);
		return err ? err : PS_ERR_NOENT;
	}
	*path = f.found;
	return PS_OK;
}
