/* The mount's state (struct psfs, pisessionfs.h): made from its options
 * and freed, by the daemon (main.c) and by the front end's unit tests
 * alike, so that a test runs on the state a mount has. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cachedir.h"
#include "cachesweep.h"
#include "catalog.h"
#include "content.h"
#include "diskmemo.h"
#include "entrycache.h"
#include "family.h"
#include "guard.h"
#include "infocache.h"
#include "infofreeze.h"
#include "jscase.h"
#include "journal.h"
#include "mountinfo.h"
#include "overlay.h"
#include "overview.h"
#include "overviewmemo.h"
#include "pathresolve.h"
#include "pisessionfs.h"
#include "searchdir.h"
#include "sessionops.h"
#include "trash.h"
#include "views.h"

/* The layout of what is kept on disk (overview.c's and catalog.c's
 * values): a change to any of them must change this, so an older cache
 * is made again rather than misread. */
#define PSFS_DISK_FORMAT "rows c,m,d 1; catalog k 1; infos i " INFOFREEZE_MAGIC "; families f 1; files o 1"

void psfs_config_defaults(struct psfs_config *cfg)
{
	cfg->timeout = NAN; /* chosen at init, by what the watcher hears */
	cfg->search_budget = NAN;
	cfg->keep_at_exit = -1;
	cfg->entry_cache_mib = -1;
	cfg->context_cache_mib = -1;
	cfg->search_cache_mib = -1;
	cfg->rejected_kept_mib = -1;
	cfg->cache_max_mib = -1;
	cfg->store_timeout = NAN;
}

static void psfs_disk_note(void *ctx, const char *what)
{
	journal_log_in(ctx, "%s", what);
}

/* Opens the cache kept across mounts (diskmemo.h) where -o cache_dir or
 * the XDG base directories say, and backs the overview rows with it.  -1
 * only when out of memory. */
static int psfs_disk_open(struct psfs *fs)
{
	char *dir = NULL;
	if (fs->cfg.cache_dir && strcmp(fs->cfg.cache_dir, "off") == 0)
		return 0;
	if (fs->cfg.cache_dir && *fs->cfg.cache_dir)
		dir = strdup(fs->cfg.cache_dir);
	else if ((errno = 0, !(dir = cachedir_default(path_home()))))
		return errno == ENOMEM ? -1 : 0; /* no home: nowhere to keep it */
	if (!dir)
		return -1;
	ps_err err = diskmemo_open(dir, fs->cfg.store, PSFS_DISK_FORMAT, psfs_disk_note, fs->journal, &fs->disk);
	free(dir);
	if (err == PS_ERR_NOMEM)
		return -1;
	overview_memo_set_disk(fs->overview, fs->disk);
	infocache_set_disk(fs->infos, fs->disk);
	family_cache_set_disk(fs->family, fs->disk);
	return 0;
}

/* The in-memory modules: -1 when out of memory. */
static int psfs_new_memory(struct psfs *fs)
{
	const struct psfs_config *cfg = &fs->cfg;
	size_t search_budget = cfg->search_cache_mib >= 0 ? (size_t)cfg->search_cache_mib << 20 : SEARCH_CACHE_DEFAULT;
	size_t rejected_budget = cfg->rejected_kept_mib > 0 ? (size_t)cfg->rejected_kept_mib << 20
							    : JOURNAL_REJECTED_DEFAULT_BUDGET;
	if (cfg->entry_cache_mib >= 0)
		entrycache_set_limit((size_t)cfg->entry_cache_mib << 20);
	if (cfg->context_cache_mib >= 0)
		content_set_context_budget((size_t)cfg->context_cache_mib << 20);
	if (infocache_new(search_budget - SEARCH_VERDICTS_SHARE(search_budget), &fs->infos))
		return -1;
	fs->search = search_results_new(SEARCH_VERDICTS_SHARE(search_budget));
	fs->overview = overview_memo_new();
	fs->family = family_cache_new();
	fs->overlay = overlay_new();
	fs->sessionops = sessionops_state_new();
	if (!fs->search || !fs->overview || !fs->family || !fs->overlay || !fs->sessionops)
		return -1;
	fs->journal = journal_new(rejected_budget, fs->overlay, fs->mountpoint);
	return fs->journal && views_memo_new(&fs->views) == 0 ? 0 : -1;
}

int psfs_new(struct psfs *fs)
{
	if (psfs_new_memory(fs) != 0) {
		fprintf(stderr, "pisessionfs: out of memory\n");
		return -1;
	}
	/* Loaded now, before any search can need it (jscase.h). */
	if (!jscase_has_locale())
		fprintf(stderr, "pisessionfs: the C.UTF-8 locale could not be loaded: search/ compares letters beyond "
				"ASCII as they are, where pi lowers them\n");
	/* Where `rm -r SESSION` puts the file: the user's own trash, as
	 * pi's `trash` command would (docs/layout.md "Deleting a session"). */
	fs->trash_home = trash_home_dir(getenv("XDG_DATA_HOME"), path_home());
	if (psfs_disk_open(fs) != 0) {
		fprintf(stderr, "pisessionfs: out of memory\n");
		return -1;
	}
	ps_err err = store_open(fs->cfg.store, fs->cfg.cache_sessions, &fs->store);
	if (!err)
		err = catalog_new(fs->store, &fs->catalog);
	if (err) {
		fprintf(stderr, "pisessionfs: cannot open the store %s: %s\n", fs->cfg.store, ps_strerror(err));
		return -1;
	}
	catalog_set_memo(fs->catalog, overview_memo_rows(fs->overview));
	catalog_set_threads(fs->catalog, fs->cfg.read_threads);
	/* A store on a network or FUSE file system may stop answering: its
	 * calls are bounded (guard.h). */
	double bound = isnan(fs->cfg.store_timeout) ? PSFS_STORE_TIMEOUT : fs->cfg.store_timeout;
	if (bound > 0 && mountinfo_is_remote(fs->cfg.store) && !(fs->guard = guard_new(fs->cfg.store, bound, fs->journal))) {
		fprintf(stderr, "pisessionfs: out of memory\n");
		return -1;
	}
	return 0;
}

void psfs_free(struct psfs *fs)
{
	/* A call still waiting for a store that stopped answering may wake
	 * before the process ends: what it uses stays (the process ends right
	 * after the unmount). */
	if (guard_free(fs->guard))
		return;
	views_memo_free(fs->views);
	catalog_free(fs->catalog);
	store_free(fs->store);
	entrycache_clear();
	overview_memo_free(fs->overview);
	family_cache_free(fs->family);
	search_results_free(fs->search);
	infocache_free(fs->infos);
	cachesweep_stop(fs->sweep);
	diskmemo_free(fs->disk);
	journal_free(fs->journal);
	overlay_free(fs->overlay);
	sessionops_state_free(fs->sessionops);
	free(fs->trash_home);
	/* The options and the mountpoint are the caller's. */
	struct psfs_config cfg = fs->cfg;
	char *mountpoint = fs->mountpoint;
	memset(fs, 0, sizeof *fs);
	fs->cfg = cfg;
	fs->mountpoint = mountpoint;
}
