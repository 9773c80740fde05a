/* Routing: what a mount path names, before any handler acts on it.  A
 * path splits into project / session / the rest (struct psfs_path); a
 * path inside a session resolves, through the store and layout.c, to a
 * node of that session.  Below every handler (dir.c, file.c,
 * namespace.c, sessionops.c, attr.c, ops.c call in; route.c calls none of
 * them back): it asks only the core and the names the mount root keeps
 * (views.h, overview.h, journal.h, searchdir.h).
 *
 * The route_* functions take the mount; the psfs_* forms are the same for
 * a FUSE handler, which finds its mount in fuse_get_context(). */
#ifndef PSFS_ROUTE_H
#define PSFS_ROUTE_H

#include "layout.h"
#include "pisessionfs.h"

/* Splits a path into project, session and the rest: 0 or -ENAMETOOLONG.
 * out->rest points into path.  A session file lying directly in the store
 * (a flat store) has the project ""; a session started with mkdir, or a
 * fork made with ln -s, answers to its typed name too (catalog.h). */
int route_split(struct psfs *fs, const char *path, struct psfs_path *out);
/* Resolves a path inside a session: 0 with the session acquired (the
 * caller releases it with store_release), or -errno with nothing held. */
int route_locate(struct psfs *fs, const char *path, struct psfs_path *p, struct store_ref *ref,
		 struct layout_node *node);
/* The same for a path already split (route_split, route_resolve). */
int route_acquire(struct psfs *fs, const struct psfs_path *p, struct store_ref *ref, struct layout_node *node);

/* What a path names, decided once per request (route_resolve): the
 * mount's own directories and files, or what the store holds.  Each kind
 * has one row of operations (node.h). */
enum psfs_node_kind {
	PSFS_NODE_STORE,    /* the root, a project, a session or a node of its tree (layout.h) */
	PSFS_NODE_VIEW,     /* by-id/, by-name/, by-cwd/, recent/ and the rest of views.h */
	PSFS_NODE_JOURNAL,  /* .pisessionfs/: the log and the rejected texts (journal.h) */
	PSFS_NODE_OVERVIEW, /* sessions.md and the usage files, at the root or in a project */
	PSFS_NODE_FAMILY,   /* subagents/, children/, a session's search/, subagent-artifacts/ */
	PSFS_NODE_SEARCH,   /* search/ at the root or in a project (searchdir.h) */
	PSFS_NODE_KINDS
};

struct psfs_node {
	enum psfs_node_kind kind;
	const char *path;       /* borrowed: the request's */
	struct psfs_path p;     /* path split (route_split); p.rest points into path */
};

/* Splits path and says what it names: 0, or -errno from route_split.  The
 * kinds never overlap; a name is the mount's own before it is the
 * store's (docs/architecture.md "Routing"). */
int route_resolve(struct psfs *fs, const char *path, struct psfs_node *out);
/* Whether the store is flat (docs/layout.md): it holds session files
 * itself, or no project folder; then `mkdir NAME` at the root starts one. */
int route_store_is_flat(struct psfs *fs);
/* Whether a name at the mount root may be a session of a flat store: no
 * view, journal, overview file, search/ or project directory has it. */
int route_root_name_free(struct psfs *fs, const char *name);

/* "/a/b/name": a new "/a/b" (the caller frees it; NULL when out of
 * memory) and *name pointing into path.  "/name" gives "/". */
char *psfs_dirname(const char *path, const char **name);
/* Whether path is one libfuse gives a file removed while open
 * (.fuse_hidden…: psfs_init keeps hard_remove off). */
int psfs_is_fuse_hidden(const char *path);

/* The route_* functions for the mount of the FUSE request this thread
 * serves (only there: fuse_get_context() must be valid). */
int psfs_split(const char *path, struct psfs_path *out);
int psfs_locate(const char *path, struct psfs_path *p, struct store_ref *ref, struct layout_node *node);
int psfs_store_is_flat(void);
int psfs_root_name_free(const char *name);

#endif
