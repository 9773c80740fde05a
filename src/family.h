/* A session's family folder: the sessions that subagent extensions keep
 * beside a parent session, and the artifacts of their runs.
 *
 * pi-subagents (docs/layout.md "Subagent runs") gives the parent
 * PROJECT/STEM.jsonl a folder PROJECT/STEM/ and runs each child as its
 * own pi, whose session file lands in PROJECT/STEM/RUNID/run-N/; a child
 * started from the parent's context is a branched copy in
 * PROJECT/STEM/forks/.  The run's task, output and metadata are kept in
 * PROJECT/subagent-artifacts/RUNID_AGENT[_N]_{input.md,output.md,meta.json}.
 * Any other session file anywhere below PROJECT/STEM/ (other extensions,
 * pi's own subagent example) is a child too.
 *
 * A member is one child session, or one run that left artifacts but no
 * session file in the family folder.  Its session is reached through the
 * store as any other: its project is the project path of its folder
 * (store.h: "PROJECT/STEM/RUNID/run-0"). */
#ifndef PS_FAMILY_H
#define PS_FAMILY_H

#include <stddef.h>
#include <sys/stat.h>
#include "ps_error.h"
#include "store.h"
#include "familydata.h"

/* The folder of a project that holds the runs' artifacts. */
#define FAMILY_ARTIFACTS_DIR "subagent-artifacts"

/* The suffix a member's artifact is listed with beside it (".input.md"). */
extern const char *const family_artifact_suffix[FAMILY_ARTIFACT_KINDS];

/* Remembers each project's artifact folder listing while the folder is
 * unchanged (a project of a thousand parents keeps tens of thousands of
 * artifacts in one folder).  Thread-safe; its lock is a leaf. */
struct family_cache;
struct family_cache *family_cache_new(void);
void family_cache_free(struct family_cache *cache);
/* Keeps each family read in the cache kept across mounts too (diskmemo.h;
 * borrowed, outlives the cache): a mount started again checks a family's
 * folders' stamps instead of walking them. */
struct diskmemo;
void family_cache_set_disk(struct family_cache *cache, struct diskmemo *disk);

/* The family of PROJECT/STEM.jsonl: *out is the caller's (family_free;
 * never to be changed: with a cache it may be shared), with n == 0 when
 * the session has no family folder.  cache may be NULL; with one, a
 * family read before is given again while none of the folders it was
 * read from (and the project's artifact folder) changed: a child's
 * append changes none of them, and a child's start is its header's.
 * Nothing is followed through a symlink below the project folder.
 * PS_ERR_NOMEM, or PS_ERR_NOENT for a project path the store refuses. */
ps_err family_read(struct ps_store *store, struct family_cache *cache, const char *project, const char *stem,
		   struct family **out);
/* family_read with projfd, the project folder's descriptor (borrowed),
 * already open: a walk over a project's families opens it once. */
ps_err family_read_at(struct ps_store *store, struct family_cache *cache, int projfd, const char *project,
		      const char *stem, struct family **out);

/* The attributes of member m's session file, m of a family read from
 * project, whose folder projfd is (borrowed): a stat by a path relative
 * to it, for walks over thousands of children.  PS_ERR_NOENT where the
 * file is gone or no longer a regular file. */
ps_err family_stat_member(int projfd, const char *project, const struct family_member *m, struct stat *st);

/* The member a name of the listing stands for: the member, with *artifact
 * -1 for its session directory or the artifact it names; NULL if none.
 * Borrowed from family. */
const struct family_member *family_find(const struct family *family, const char *name, int *artifact);

/* The parentSession its header names (pi's /fork, /clone, forkFrom and a
 * forked subagent write it): *parent new, or NULL when the header names
 * none.  PS_ERR_NOENT (no such file), PS_ERR_NOMEM.  Reads the first
 * line only (at most 64 KiB). */
ps_err family_header_parent(struct ps_store *store, const char *project, const char *stem, char **parent);

/* A string member of a session file's header line: *value new, or NULL
 * when it has none. */
ps_err family_header_string(struct ps_store *store, const char *project, const char *stem, const char *member,
			    char **value);

#endif
