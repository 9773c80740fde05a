/* SESSION/subagents/: the runs a session's subagents left in its family
 * folder (family.h), one directory per child session and their runs'
 * artifacts beside them (docs/layout.md "Subagent runs"); and
 * SESSION/children/, links to the sessions whose header names it their
 * parentSession, there in every session though not listed (as entries/).  A child's own
 * paths are routed to its session by route.c and served by the usual
 * handlers; this module serves what else lies below subagents/, and
 * says which writes there are refused.  Above routing (route.h), below
 * the operations table; every function runs in a FUSE handler. */
#ifndef PSFS_SUBAGENTS_H
#define PSFS_SUBAGENTS_H

#include <sys/stat.h>
#include "pisessionfs.h"

/* The operations of a path route_resolve gave the kind PSFS_NODE_FAMILY
 * (p->family set: subagents/ itself, an artifact, children/, a session's
 * search/, or a name there that no run has): only these answer it. */
int subagents_getattr(struct psfs *fs, const char *path, const struct psfs_path *p, struct stat *st);
int subagents_readdir(struct psfs *fs, const char *path, const struct psfs_path *p, void *buf, fuse_fill_dir_t filler);
/* children/NAME's target (a relative link to the session directory):
 * 0, or -errno (-EINVAL for what is no link). */
int subagents_readlink(struct psfs *fs, const char *path, const struct psfs_path *p, char *buf, size_t size);
/* An artifact's bytes as they are now: *text is new (the caller's). */
int subagents_open(struct psfs *fs, const char *path, const struct psfs_path *p, int flags, char **text,
		   size_t *len);
/* A project's listing (p at depth 1): adds subagent-artifacts, the runs'
 * artifacts as the store keeps them, where the project has the folder. */
void subagents_fill_project(struct psfs *fs, const struct psfs_path *p, void *buf, fuse_fill_dir_t filler);
/* A session directory's listing (p at depth 2, path the request's): adds
 * subagents when the session has a family, and has the watcher hear its
 * children from then on (watch_family). */
void subagents_fill_session(struct psfs *fs, const char *path, const struct psfs_path *p, void *buf,
			    fuse_fill_dir_t filler);

/* usage.json of the session p names (s, acquired), with what its
 * subagents spent when it has any (usage_json_family): 1 with *text new,
 * 0 when it has none (then it is content_build's), or -errno. */
struct ps_session;
int subagents_usage_json(struct psfs *fs, const struct psfs_path *p, struct ps_session *s, char **text, size_t *len);

/* A change of the namespace (what: "creating", "removing"...) at path:
 * 0 when it is not below subagents/ or is a child session's own to take,
 * 1 when it is a removal inside a parent the caller is deleting (rm -r:
 * it succeeds and changes nothing), else -EPERM, logged. */
int subagents_refuse(const char *path, const char *what, int removal);

#endif
