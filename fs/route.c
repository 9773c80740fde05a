/* Routing (route.h): a mount path split into project / session / the
 * rest, and a path inside a session resolved to a node of it. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "caller.h"
#include "catalog.h"
#include "family.h"
#include "journal.h"
#include "layout.h"
#include "overview.h"
#include "pisessionfs.h"
#include "route.h"
#include "searchdir.h"
#include "views.h"

/* The mount of the request this thread serves. */
static struct psfs *route_self(void)
{
	return psfs_context()->private_data;
}

/* The names libfuse gives a file that is replaced or removed while open
 * (psfs_init: hard_remove is off). */
int psfs_is_fuse_hidden(const char *path)
{
	const char *slash = strrchr(path, '/');
	return strncmp(slash ? slash + 1 : path, ".fuse_hidden", 12) == 0;
}

/* Whether a name at the mount root is a session file lying directly in the
 * store (a flat store, docs/layout.md): STORE/<name>.jsonl, where no
 * project directory, view or file of the mount root has that name. */
/* Whether a name at the mount root is the mount's own: a view, the
 * journal, an overview file or search/. */
static int route_root_reserved(const char *name)
{
	for (size_t i = 0; views_names[i]; i++)
		if (strcmp(name, views_names[i]) == 0)
			return 1;
	return strcmp(name, JOURNAL_NAME) == 0 || overview_is_name(name) || strcmp(name, SEARCH_NAME) == 0;
}

int route_root_name_free(struct psfs *fs, const char *name)
{
	struct stat st;
	return !route_root_reserved(name) && store_stat_project(fs->store, name, &st) != PS_OK;
}

static int route_flat_any(void *ctx, const char *name, const struct stat *st)
{
	(void)name, (void)st;
	*(int *)ctx = 1;
	return 1;
}

int route_store_is_flat(struct psfs *fs)
{
	int sessions = 0, projects = 0;
	store_list_session_names(fs->store, "", route_flat_any, &sessions);
	if (!sessions)
		store_list_project_names(fs->store, route_flat_any, &projects);
	return sessions || !projects;
}

static int route_is_root_session(struct psfs *fs, const char *name)
{
	struct stat st;
	return route_root_name_free(fs, name) && store_stat_session(fs->store, "", name, &st) == PS_OK;
}

/* The end of route_split once the session is named: p follows its name. */
static void route_split_rest(const char *p, struct psfs_path *out)
{
	out->depth = 2;
	while (*p == '/')
		p++;
	if (*p) {
		out->rest = p;
		out->depth = 3;
	}
}

/* A session's typed name (catalog_name_to_stem said named, stem): the
 * directory itself for a session started with mkdir; a symlink to it for
 * a fork (ln -s ENTRY PROJECT/NAME made a symlink, and the name stays
 * one: docs/layout.md "Forking a session"), unless the path goes on
 * inside it. */
static void route_split_named(struct psfs_path *out, int named, const char *stem)
{
	if (named == 2 && out->depth == 2)
		memcpy(out->link_to, stem, sizeof out->link_to);
	else if (named)
		memcpy(out->session, stem, sizeof out->session);
}

/* catalog_name_to_stem for this caller: a typed name resolves only for a
 * caller who may read the session file it names, as by-name/ lists it
 * only to them (docs/security.md "Who sees what"): else a lookup would
 * tell anyone which names the sessions have. */
static int route_name_to_stem(struct psfs *fs, const char *project, const char *name, char stem[NAME_MAX + 1])
{
	int named = catalog_name_to_stem(fs->catalog, project, name, stem);
	struct stat st;
	struct psfs_caller who;
	if (!named)
		return 0;
	psfs_caller_get(&who);
	if (store_stat_session(fs->store, project, stem, &st) != PS_OK ||
	    !psfs_caller_may_read(&who, st.st_uid, st.st_gid, st.st_mode))
		return 0;
	return named;
}

/* Whether rest starts with the name dir: then *next follows it. */
static int route_starts_with(const char *rest, const char *dir, const char **next)
{
	size_t n = strlen(dir);
	if (strncmp(rest, dir, n) != 0 || (rest[n] && rest[n] != '/'))
		return 0;
	for (rest += n; *rest == '/'; rest++)
		;
	*next = rest;
	return 1;
}

/* PROJECT/subagent-artifacts[/REST] (out split so): what the store holds
 * there, in out->artifact and out->family, unless a session has that
 * name. */
static void route_artifacts(struct psfs *fs, struct psfs_path *out)
{
	struct stat st;
	int root = -1;
	snprintf(out->artifact, sizeof out->artifact, "%s/%s%s%s", out->project, FAMILY_ARTIFACTS_DIR,
		 *out->rest ? "/" : "", out->rest);
	if (store_stat_session(fs->store, out->project, out->session, &st) == PS_OK)
		return; /* a session of that name wins */
	out->family = PSFS_FAMILY_MISSING;
	if (store_open_project(fs->store, "", &root) == PS_OK) {
		if (fstatat(root, out->artifact, &st, AT_SYMLINK_NOFOLLOW) == 0)
			out->family = S_ISDIR(st.st_mode) ? PSFS_FAMILY_FOLDER
				    : S_ISREG(st.st_mode) ? PSFS_FAMILY_ARTIFACT : PSFS_FAMILY_MISSING;
		close(root);
	}
}

/* A session's own names beside its entries: children/ and search/ (out
 * split to the session, out->rest what follows it). */
static int route_family_names(struct psfs_path *out)
{
	const char *r;
	/* SESSION/children/: not listed, but there in every session
	 * (subagents.h). */
	if (out->depth == 3 && !out->link_to[0] && route_starts_with(out->rest, CHILDREN_NAME, &r)) {
		size_t n = strcspn(r, "/");
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		out->family = !n ? PSFS_FAMILY_CHILDREN : r[n] ? PSFS_FAMILY_MISSING : PSFS_FAMILY_CHILD;
		memcpy(out->family_link, r, n);
		out->family_link[n] = '\0';
	} else if (out->depth == 3 && !out->link_to[0] && route_starts_with(out->rest, SEARCH_NAME, &r)) {
		/* SESSION/search/QUERY/NAME: its subagents searched. */
		size_t n = strcspn(r, "/"), m = n && r[n] ? strcspn(r + n + 1, "/") : 0;
		if (n > NAME_MAX || m > NAME_MAX)
			return -ENAMETOOLONG;
		out->family = !n ? PSFS_FAMILY_SEARCH : !r[n] ? PSFS_FAMILY_SEARCH_QUERY
			    : !r[n + 1 + m] && m ? PSFS_FAMILY_SEARCH_HIT : PSFS_FAMILY_MISSING;
		memcpy(out->family_link, r, n);
		out->family_link[n] = '\0';
		if (m)
			memcpy(out->family_hit, r + n + 1, m);
		out->family_hit[m] = '\0';
	}
	return 0;
}

/* A path below SESSION/subagents/ (family.h): a child's own path becomes
 * its session's, as many times as the path goes through subagents/ (a
 * subagent's own subagents); what else it names is out->family. */
static int route_family(struct psfs *fs, struct psfs_path *out)
{
	const char *r;
	/* PROJECT/subagent-artifacts/: the runs' artifacts as the store keeps
	 * them (family.h), where no session has that name. */
	if (out->depth >= 2 && *out->project && !out->family_depth && strcmp(out->session, FAMILY_ARTIFACTS_DIR) == 0 &&
	    !route_root_reserved(out->project)) {
		route_artifacts(fs, out);
		return 0;
	}
	/* Not below the mount's own directories (search/QUERY/HIT, the
	 * views), whose names are no sessions. */
	if (out->depth != 3 || (!out->family_depth && (route_root_reserved(out->project) ||
						       strcmp(out->session, SEARCH_NAME) == 0)))
		return 0;
	while (out->depth == 3 && *out->project && !out->link_to[0] && route_starts_with(out->rest, SUBAGENTS_NAME, &r)) {
		struct family *fam = NULL;
		int artifact = -1;
		if (!out->family_depth++) {
			memcpy(out->top_project, out->project, sizeof out->top_project);
			memcpy(out->top_session, out->session, sizeof out->top_session);
		}
		size_t n = strcspn(r, "/");
		char name[NAME_MAX + 1];
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, r, n);
		name[n] = '\0';
		ps_err err = family_read(fs->store, fs->family, out->project, out->session, &fam);
		if (err == PS_ERR_NOMEM)
			return -ENOMEM;
		const struct family_member *m = fam && n ? family_find(fam, name, &artifact) : NULL;
		out->family = fam && fam->n ? PSFS_FAMILY_DIR : PSFS_FAMILY_MISSING;
		if (n && !m) {
			out->family = PSFS_FAMILY_MISSING;
		} else if (m && artifact >= 0) {
			out->family = r[n] ? PSFS_FAMILY_MISSING : PSFS_FAMILY_ARTIFACT;
			snprintf(out->artifact, sizeof out->artifact, "%s", m->artifact[artifact]);
		} else if (m) {
			/* The child's own path: its folder is its project. */
			out->family = PSFS_FAMILY_NONE;
			snprintf(out->project, sizeof out->project, "%s", m->dir);
			snprintf(out->session, sizeof out->session, "%s", m->stem);
			out->rest = "";
			route_split_rest(r + n, out);
		}
		family_free(fam);
		if (out->family != PSFS_FAMILY_NONE)
			return 0;
	}
	return route_family_names(out);
}

/* Splits a path into project, session and the rest.  A session at the
 * store root (route_is_root_session) has the project "". */
int route_split(struct psfs *fs, const char *path, struct psfs_path *out)
{
	const char *p = path;
	memset(out, 0, sizeof *out);
	out->rest = "";
	while (*p == '/')
		p++;
	if (!*p)
		return 0;
	size_t n = strcspn(p, "/");
	if (n > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(out->project, p, n);
	out->depth = 1;
	p += n;
	char stem[NAME_MAX + 1];
	int named = 0;
	if (route_is_root_session(fs, out->project) ||
	    /* A flat store's session started with `mkdir NAME`, by NAME. */
	    (route_root_name_free(fs, out->project) &&
	     (named = route_name_to_stem(fs, "", out->project, stem)))) {
		memcpy(out->session, out->project, sizeof out->session);
		out->project[0] = '\0';
		route_split_rest(p, out);
		route_split_named(out, named, stem);
		return route_family(fs, out);
	}
	while (*p == '/')
		p++;
	if (!*p)
		return 0;
	n = strcspn(p, "/");
	if (n > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(out->session, p, n);
	route_split_rest(p + n, out);
	/* A session started with `mkdir PROJECT/NAME` answers to NAME too;
	 * not a name inside the mount's own directories (search/QUERY,
	 * by-id/ID...), which would cost the catalog of the whole store. */
	if (!route_root_reserved(out->project) && !overview_is_name(out->session) &&
	    strcmp(out->session, SEARCH_NAME) != 0)
		route_split_named(out, route_name_to_stem(fs, out->project, out->session, stem), stem);
	return route_family(fs, out);
}

/* Splits "/a/b/name" into a new "/a/b" and a pointer to "name". */
char *psfs_dirname(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	if (!slash || slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* Resolves a path inside a session; on success the session stays acquired
 * (release with store_release). */
int route_locate(struct psfs *fs, const char *path, struct psfs_path *p, struct store_ref *ref,
		 struct layout_node *node)
{
	int res = route_split(fs, path, p);
	return res ? res : route_acquire(fs, p, ref, node);
}

int route_acquire(struct psfs *fs, const struct psfs_path *p, struct store_ref *ref, struct layout_node *node)
{
	if (p->depth < 2)
		return -EINVAL;
	ps_err err = store_acquire(fs->store, p->project, p->session, ref);
	if (err)
		return -psfs_errno(err);
	err = layout_resolve(ref->session, p->rest, node);
	if (err) {
		store_release(fs->store, ref);
		return -psfs_errno(err);
	}
	return 0;
}

int route_resolve(struct psfs *fs, const char *path, struct psfs_node *out)
{
	struct psfs_path *p = &out->p;
	int res = route_split(fs, path, p);
	out->path = path;
	out->kind = PSFS_NODE_STORE;
	if (res)
		return res;
	/* The views first: by-id/search is a view's name, not a project's
	 * search/; then the journal, whose names no project's are either. */
	if (views_owns(path))
		out->kind = PSFS_NODE_VIEW;
	else if (journal_owns(path))
		out->kind = PSFS_NODE_JOURNAL;
	else if (overview_owns(p))
		out->kind = PSFS_NODE_OVERVIEW;
	else if (p->family != PSFS_FAMILY_NONE)
		out->kind = PSFS_NODE_FAMILY;
	else if (search_owns(path, p))
		out->kind = PSFS_NODE_SEARCH;
	return 0;
}

int psfs_split(const char *path, struct psfs_path *out)
{
	return route_split(route_self(), path, out);
}

int psfs_locate(const char *path, struct psfs_path *p, struct store_ref *ref, struct layout_node *node)
{
	return route_locate(route_self(), path, p, ref, node);
}

int psfs_store_is_flat(void)
{
	return route_store_is_flat(route_self());
}

int psfs_root_name_free(const char *name)
{
	return route_root_name_free(route_self(), name);
}
