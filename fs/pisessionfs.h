/* Shared state of the FUSE front end. */
#ifndef PISESSIONFS_H
#define PISESSIONFS_H

#define FUSE_USE_VERSION 312
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include "store.h"

struct psfs_config {
	char *store;          /* --store DIR */
	unsigned cache_sessions;
	int entry_cache_mib;  /* -o entry_cache=MiB, -1 when not given */
	int context_cache_mib; /* -o context_cache=MiB, -1 when not given */
	int search_cache_mib; /* -o search_cache=MiB, -1 when not given */
	int rejected_kept_mib; /* -o rejected_kept=MiB, -1 when not given */
	double timeout;       /* kernel entry/attribute timeout, seconds; NAN: by the watcher */
	double search_budget; /* seconds of regex matching CPU one query may spend; NAN: the default */
	char *cache_dir;      /* -o cache_dir=DIR; NULL: the XDG default; "off": none */
	int cache_max_mib;    /* -o cache_max=MiB: the cache directory's bound; -1 when not given */
	unsigned read_threads; /* -o read_threads=N: threads a first read of many sessions uses; 0: one per core */
	int keep_at_exit;      /* -o keep_at_exit=SECONDS: the keeper's time at the daemon's stop; -1: the default */
	double store_timeout;  /* -o store_timeout=SECONDS: a call's bound on a network store (guard.h); NAN: 2; 0: none */
	int show_help;
	int show_version;
	int print_store;      /* --print-store: say which store, and exit */
	char *positional[2];  /* [STORE] MOUNTPOINT, as given */
	int n_positional;
};

struct ps_catalog;
struct infocache;
struct infokeeper;
struct journal;
struct watch;
struct sizer;
struct search_results;
struct overview_memo;
struct diskmemo;
struct overlay;
struct sessionops_state;
struct views_memo;
struct family_cache;
struct guard;

/* The mount: made by psfs_new (psfs.c), which main.c calls and the front
 * end's unit tests too; every member is freed by psfs_free, after
 * fuse_destroy.  Each module of fs/ keeps what it holds for the mount in
 * its own member, never in a static, so a unit test can make a struct
 * psfs of its own (tests/unit/fs/).  A FUSE handler finds it in
 * fuse_get_context()->private_data. */
struct psfs {
	struct ps_store *store;
	struct ps_catalog *catalog; /* what the views at the root list */
	struct views_memo *views;   /* the views as last built (views.h) */
	struct infocache *infos;    /* what pi lists of each session (search/, sessions.md) */
	struct infokeeper *keeper;  /* keeps infos on disk after the searches that read them */
	struct journal *journal;    /* the log and the rejected texts (journal.h) */
	struct watch *watch;        /* the change watcher (watch.h), NULL without inotify */
	struct sizer *sizer;        /* the sizer threads (sizer.h), NULL without them */
	struct search_results *search; /* search/'s latest results (searchdir.h) */
	struct overview_memo *overview; /* the overview files' sizes (overview.h) */
	struct diskmemo *disk;      /* what was derived, kept across mounts (diskmemo.h) */
	struct cachesweep *sweep;   /* that directory's sweep at mount (cachesweep.h) */
	struct overlay *overlay;    /* the in-memory files (overlay.h) */
	struct sessionops_state *sessionops; /* the session walks and refusals remembered (sessionops.h) */
	struct family_cache *family; /* the projects' artifact folders as last listed (family.h) */
	struct guard *guard;        /* calls bounded for a store that may stop answering (guard.h); NULL: local */
	struct psfs_config cfg;
	struct fuse *fuse;
	char *mountpoint;     /* absolute, for symlink targets given as absolute paths */
	char *trash_home;     /* the home trash (trash.h), NULL when $HOME and $XDG_DATA_HOME say none */
};

extern const struct fuse_operations psfs_ops;

/* The options' defaults, where a field's zero is not: "not given". */
void psfs_config_defaults(struct psfs_config *cfg);
/* Makes the mount's state from fs->cfg (cfg.store a directory's absolute
 * path) and fs->mountpoint (borrowed; may be NULL): every module's member
 * but the threads (watch, sizer, sweep, keeper) and fuse, which the daemon
 * starts.  0, or -1 with the reason on stderr; either way psfs_free frees
 * what was made. */
int psfs_new(struct psfs *fs);
/* Frees every member psfs_new made, and the sweep, and zeroes them all;
 * leaves cfg and mountpoint, which are the caller's.  NULL members are
 * skipped.  Frees nothing while a guard's thread (guard.h) still waits
 * for a store that stopped answering: the process is about to end. */
void psfs_free(struct psfs *fs);

/* A mount path split by psfs_split (route.h): what the gates of the special
 * files (overview.h) are given, so they need not route paths again. */
struct psfs_path {
	char project[STORE_PROJECT_MAX]; /* a path of folders for a subagent run (family.h) */
	char session[NAME_MAX + 1];
	const char *rest;   /* inside the session directory, "" for itself */
	int depth;          /* 0 root, 1 project, 2 session, 3 inside */
	/* A fork's typed name (depth 2): a symlink to this session directory
	 * (session is the name as typed), else "". */
	char link_to[NAME_MAX + 1];
	/* A path below a session's subagents/ (docs/layout.md "Subagent
	 * runs"): a child's own path is routed as its session's (project is
	 * then its folder's path), and family says what else it names. */
	int family;          /* enum psfs_family */
	int family_depth;    /* how many subagents/ the path went through */
	char top_project[NAME_MAX + 1]; /* the outermost parent session, family_depth > 0 */
	char top_session[NAME_MAX + 1];
	char artifact[STORE_PROJECT_MAX + NAME_MAX + 32]; /* PSFS_FAMILY_ARTIFACT: its store-relative path */
	char family_link[NAME_MAX + 1]; /* PSFS_FAMILY_CHILD: its name; PSFS_FAMILY_SEARCH_*: the query's */
	char family_hit[NAME_MAX + 1];  /* PSFS_FAMILY_SEARCH_HIT: its name */
};

/* What a path below subagents/ names besides a child's own path. */
enum psfs_family {
	PSFS_FAMILY_NONE,     /* a path of the session (or child) routed */
	PSFS_FAMILY_DIR,      /* SESSION/subagents itself */
	PSFS_FAMILY_ARTIFACT, /* SESSION/subagents/NAME.output.md and the like */
	PSFS_FAMILY_MISSING,  /* a name there that no run has */
	PSFS_FAMILY_CHILDREN, /* SESSION/children: the sessions that name it their parent */
	PSFS_FAMILY_CHILD,    /* SESSION/children/NAME, a link to one (family_link) */
	PSFS_FAMILY_SEARCH,   /* SESSION/search: its subagents' sessions searched */
	PSFS_FAMILY_SEARCH_QUERY, /* SESSION/search/QUERY (family_link: the name as given) */
	PSFS_FAMILY_SEARCH_HIT,   /* SESSION/search/QUERY/NAME, a link to a child that matched (family_hit) */
	PSFS_FAMILY_FOLDER,   /* PROJECT/subagent-artifacts[/…], a folder (artifact: its store path) */
};

/* The directory of the sessions that name a session their parent. */
#define CHILDREN_NAME "children"

/* The directory of a session's subagent runs. */
#define SUBAGENTS_NAME "subagents"

/* Kernel cache timeouts when -o timeout is not given (seconds): long while
 * the watcher invalidates what changes, short where changes go unheard. */
#define PSFS_TIMEOUT_WATCHED 10.0
#define PSFS_TIMEOUT_UNWATCHED 1.0

/* errno for a core error. */
int psfs_errno(ps_err err);

#endif
