/* pisessionfs: mounts a pi session store.  The command line (psfs_parse),
 * the mountpoint's checks, and serving the mount (psfs_serve); the
 * mount's state is struct psfs, made by psfs.c; the operations are in
 * ops.c (the table) and the handlers it names, the change watcher in
 * watch.c. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <inttypes.h>
#include <signal.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "autounmount.h"
#include "cachedir.h"
#include "cachesweep.h"
#include "caller.h"
#include "fanout.h"
#include "journal.h"
#include "mountinfo.h"
#include "pathresolve.h"
#include "pisessionfs.h"
#include "sizer.h"
#include "watch.h"
#include "recover.h"
#include "diskmemo.h"
#include "infokeeper.h"

#define PSFS_OPT(t, p) { t, offsetof(struct psfs_config, p), 1 }

/* Takes the positional arguments out: MOUNTPOINT, or SOURCE MOUNTPOINT as
 * mount(8) and fstab pass them (mount -t fuse.pisessionfs STORE DIR), where
 * SOURCE is the store.  The mountpoint goes back to libfuse after it has been
 * checked here, with a message that says what to do. */
/* How long a daemon that stops may still spend keeping what searches
 * read, by default: the first search of an 11 GB store leaves about 20 s
 * of writing on two cores. */
#define PSFS_KEEP_AT_EXIT_S 30

static int psfs_opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct psfs_config *cfg = data;
	(void)outargs;
	if (key != FUSE_OPT_KEY_NONOPT)
		return 1;
	if (cfg->n_positional >= 2) {
		fprintf(stderr, "pisessionfs: unexpected argument %s (see --help)\n", arg);
		return -1;
	}
	cfg->positional[cfg->n_positional] = strdup(arg);
	if (!cfg->positional[cfg->n_positional])
		return -1;
	cfg->n_positional++;
	return 0;
}

static const struct fuse_opt psfs_opts[] = {
	PSFS_OPT("--store=%s", store),
	PSFS_OPT("--store %s", store),
	PSFS_OPT("store=%s", store),
	PSFS_OPT("cache_sessions=%u", cache_sessions),
	PSFS_OPT("entry_cache=%d", entry_cache_mib),
	PSFS_OPT("context_cache=%d", context_cache_mib),
	PSFS_OPT("search_cache=%d", search_cache_mib),
	PSFS_OPT("rejected_kept=%d", rejected_kept_mib),
	PSFS_OPT("timeout=%lf", timeout),
	PSFS_OPT("search_budget=%lf", search_budget),
	PSFS_OPT("cache_dir=%s", cache_dir),
	PSFS_OPT("cache_max=%d", cache_max_mib),
	PSFS_OPT("read_threads=%u", read_threads),
	PSFS_OPT("keep_at_exit=%d", keep_at_exit),
	PSFS_OPT("store_timeout=%lf", store_timeout),
	PSFS_OPT("-h", show_help),
	PSFS_OPT("--help", show_help),
	PSFS_OPT("-V", show_version),
	PSFS_OPT("--version", show_version),
	PSFS_OPT("--print-store", print_store),
	FUSE_OPT_END
};

static void psfs_usage(const char *prog)
{
	printf("usage: %s [--store DIR] [-f] [-d] [-o OPTIONS] MOUNTPOINT\n"
	       "       %s STORE MOUNTPOINT [-o OPTIONS]       (as mount -t fuse.pisessionfs runs it)\n"
	       "\n"
	       "Mounts a pi coding-agent session store as a directory tree.\n"
	       "\n"
	       "  --store DIR            the store; by default the one pi uses:\n"
	       "                         $PI_CODING_AGENT_SESSION_DIR, else sessionDir in\n"
	       "                         AGENT/settings.json, else AGENT/sessions, where\n"
	       "                         AGENT is $PI_CODING_AGENT_DIR, else ~/.pi/agent\n"
	       "  --print-store          print the store that would be mounted, and exit\n"
	       "  -f                     stay in the foreground\n"
	       "  -d                     foreground, with FUSE debug output\n"
	       "  -o store=DIR           the store, as a mount option (for fstab)\n"
	       "  -o cache_sessions=N    indexed sessions kept in memory (default 256)\n"
	       "  -o entry_cache=MIB     parsed entries kept, in MiB of memory\n"
	       "                         (default 8; 0 turns the cache off)\n"
	       "  -o context_cache=MIB   context.json texts kept, in MiB over all\n"
	       "                         sessions (default 32; 0 turns the cache off)\n"
	       "  -o search_cache=MIB    what search/ keeps of the sessions it read, in\n"
	       "                         MiB over all (default 32; 0 keeps nothing)\n"
	       "  -o rejected_kept=MIB   refused texts kept in .pisessionfs/rejected,\n"
	       "                         in MiB over all (default 64, at least 1)\n"
	       "  -o timeout=SECONDS     kernel cache timeout for names and attributes\n"
	       "                         (default 10 where inotify follows the store\n"
	       "                         and changes are pushed at once, else 1)\n"
	       "  -o search_budget=SECONDS  CPU time one search/ query's regular\n"
	       "                         expression may spend matching, over all the\n"
	       "                         sessions it reads (default 1; docs/search.md)\n"
	       "  -o cache_dir=DIR       where titles, rows and search texts are kept\n"
	       "                         across mounts (default $XDG_CACHE_HOME/pisessionfs,\n"
	       "                         else ~/.cache/pisessionfs; off: nowhere)\n"
	       "  -o cache_max=MIB       the most that directory takes, all stores'\n"
	       "                         databases together (default 1024); past it the\n"
	       "                         least recently used go (pisession cache shows it)\n"
	       "  -o read_threads=N      threads that read sessions a first time for\n"
	       "                         sessions.md, usage.csv, search/ and the views\n"
	       "                         (default: one per core, at most 16)\n"
	       "  -o keep_at_exit=SECONDS  how long a daemon that stops may still spend\n"
	       "                         writing to the cache what searches read\n"
	       "                         (default 30; 0: none; docs/layout.md)\n"
	       "  -o store_timeout=SECONDS  on a store on a network or FUSE file\n"
	       "                         system, how long a call waits for a store that\n"
	       "                         does not answer before it fails with EIO\n"
	       "                         (default 2; 0: waits as long as the store does)\n"
	       "  -o auto_unmount        unmount when the daemon exits\n"
	       "  -o allow_other         let other users in (needs user_allow_other in\n"
	       "                         /etc/fuse.conf; file modes still apply)\n"
	       "  -h, --help             this help;  -V, --version  the version\n"
	       "\n"
	       "Unmount with: fusermount3 -u MOUNTPOINT\n", prog, prog);
}


/* pi's normalizePath: "~" and "~/..." are the home directory; anything
 * else is taken as it is (a relative path then counts from the current
 * directory, as for pi run here).  New string, or NULL. */
static char *psfs_expand_tilde(const char *path)
{
	const char *home;
	char *out = NULL;
	if (strcmp(path, "~") != 0 && strncmp(path, "~/", 2) != 0)
		return strdup(path);
	if (!(home = path_home()))
		return NULL;
	if (asprintf(&out, "%s%s", home, path + 1) < 0)
		return NULL;
	return out;
}

/* sessionDir of pi's global settings (AGENT/settings.json), new string or
 * NULL.  What pi ignores (no file, not JSON, not a non-empty string) is
 * ignored here too; a file that is not JSON gets a note, as pi warns. */
static char *psfs_settings_session_dir(const char *agent_dir)
{
	char *path = NULL, *out = NULL;
	json_error_t error;
	json_t *settings = NULL;
	if (asprintf(&path, "%s/settings.json", agent_dir) < 0)
		return NULL;
	if (access(path, F_OK) != 0)
		goto out;
	settings = json_load_file(path, JSON_DECODE_ANY, &error);
	if (!settings) {
		fprintf(stderr, "pisessionfs: note: %s is not JSON (line %d: %s); its sessionDir is not used\n", path,
			error.line, error.text);
		goto out;
	}
	const char *dir = json_string_value(json_object_get(settings, "sessionDir"));
	if (dir && *dir)
		out = psfs_expand_tilde(dir);
out:
	json_decref(settings);
	free(path);
	return out;
}

/* The store pi 1.6.0 writes to when started here without --session-dir
 * (its dist/main.js, config.js and core/settings-manager.js):
 * $PI_CODING_AGENT_SESSION_DIR, else sessionDir in the agent directory's
 * settings.json, else <agent dir>/sessions; the agent directory is
 * $PI_CODING_AGENT_DIR, else ~/.pi/agent.  A project's own
 * .pi/settings.json is left out: it names the store of that project only,
 * not the one all sessions are in (docs/pisessionfs.1).  *why says where
 * the path came from. */
static char *psfs_default_store(const char **why)
{
	const char *env = getenv("PI_CODING_AGENT_SESSION_DIR");
	const char *agent_env = getenv("PI_CODING_AGENT_DIR");
	const char *home;
	char *agent = NULL, *out = NULL;
	if (env && *env) {
		*why = "$PI_CODING_AGENT_SESSION_DIR";
		return psfs_expand_tilde(env);
	}
	if (agent_env && *agent_env) {
		agent = psfs_expand_tilde(agent_env);
	} else if ((home = path_home())) {
		if (asprintf(&agent, "%s/.pi/agent", home) < 0)
			agent = NULL;
	}
	if (!agent)
		return NULL;
	if ((out = psfs_settings_session_dir(agent))) {
		*why = "sessionDir in the agent directory's settings.json";
	} else {
		*why = agent_env && *agent_env ? "$PI_CODING_AGENT_DIR/sessions" : "~/.pi/agent/sessions";
		if (asprintf(&out, "%s/sessions", agent) < 0)
			out = NULL;
	}
	free(agent);
	return out;
}

struct psfs_mounted {
	const char *mp;
	char *fstype, *source; /* the topmost mount's, new */
	int found;
};

static int psfs_mounted_step(void *ctx, const char *mount_point, const char *fstype, const char *source)
{
	struct psfs_mounted *m = ctx;
	if (strcmp(mount_point, m->mp) != 0)
		return 0;
	free(m->fstype);
	free(m->source);
	m->fstype = strdup(fstype);
	m->source = strdup(source);
	m->found = m->fstype && m->source;
	return 0;
}

/* What is mounted on mp now (the topmost mount), by the mount table.
 * Returns 1 and new strings when mp is a mountpoint. */
static int psfs_mounted_on(const char *mp, char **fstype, char **source)
{
	struct psfs_mounted m = { mp, NULL, NULL, 0 };
	mountinfo_each(psfs_mounted_step, &m);
	*fstype = m.fstype;
	*source = m.source;
	return m.found;
}

/* "-ofsname=STORE" with the commas and backslashes of STORE escaped for
 * fuse_opt.  *out is new. */
static int psfs_fsname_arg(const char *store, char **out)
{
	size_t n = strlen(store);
	char *arg = malloc(sizeof "-ofsname=" + 2 * n), *d;
	if (!arg)
		return -1;
	d = arg + sprintf(arg, "-ofsname=");
	for (const char *p = store; *p; p++) {
		if (*p == ',' || *p == '\\')
			*d++ = '\\';
		*d++ = *p;
	}
	*d = '\0';
	*out = arg;
	return 0;
}

/* What start-up recovery did: one line each on stderr and in the log. */
static void psfs_note_recovery(void *ctx, const struct recover_event *ev)
{
	struct journal *j = ctx;
	switch (ev->what) {
	case RECOVER_TRUNCATED:
		journal_log_in(j, "repaired %s: took back its last %" PRIu64 " bytes (from offset %" PRIu64 "), the part "
			       "of an append that a killed daemon had written and never acknowledged", ev->path, ev->bytes,
			       ev->offset);
		break;
	case RECOVER_LEFT:
		journal_log_in(j, "left %s as it is: a killed daemon's append ends it, but %s", ev->path, ev->why);
		break;
	case RECOVER_UNFIXABLE:
		journal_log_in(j, "could not repair %s (%s): a killed daemon's append ends it; tried again at the next start",
			       ev->path, ev->why);
		break;
	case RECOVER_TEMP_REMOVED:
		journal_log_in(j, "removed %s, the temporary file of a migration whose daemon was killed", ev->path);
		break;
	case RECOVER_DRAFT:
		journal_recover_draft(j, ev->path);
		break;
	}
}

/* A lazy unmount of the mount on the absolute path mp: umount2 where we
 * may (root), else fusermount3 -u -z, which lets a user unmount what they
 * mounted.  0 when it is gone. */
static int psfs_lazy_unmount(const char *mp)
{
	extern char **environ;
	char *argv[] = { "fusermount3", "-u", "-z", "--", (char *)mp, NULL };
	pid_t pid;
	int status;
	if (umount2(mp, MNT_DETACH) == 0)
		return 0;
	if (posix_spawnp(&pid, "fusermount3", NULL, NULL, argv, environ) != 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Whether the mount on mp has lost its daemon: every call fails with
 * ENOTCONN.  Right after the daemon died the kernel may still hold the
 * root's attributes, so stat() succeeds and only opendir() tells. */
static int psfs_dead_mount(const char *mp)
{
	struct stat st;
	DIR *d;
	if (stat(mp, &st) != 0)
		return errno == ENOTCONN || errno == ECONNABORTED;
	if (!(d = opendir(mp)))
		return errno == ENOTCONN || errno == ECONNABORTED;
	closedir(d);
	return 0;
}

/* Whether mp is a pisessionfs mount already (said, -1), one whose daemon
 * is gone (cleared, or said how to clear it), or not ours (0).  A
 * pisessionfs mount whose daemon is gone (killed, crashed, without
 * auto_unmount) answers every call with ENOTCONN.  Nobody serves it and
 * nothing can be read through it, so a lazy unmount loses nothing (a
 * process still inside keeps its detached copy) and the new daemon
 * mounts where the user asked.  Another file system's dead mount is not
 * ours to clear: psfs_check_mountpoint's stat says how. */
static int psfs_check_ours(const char *mp)
{
	char *real = realpath(mp, NULL), *fstype = NULL, *source = NULL;
	int ours = real && psfs_mounted_on(real, &fstype, &source) && strcmp(fstype, "fuse.pisessionfs") == 0;
	int res = 0;
	if (ours && psfs_dead_mount(real)) {
		ours = 0;
		if (psfs_lazy_unmount(real) == 0) {
			fprintf(stderr, "pisessionfs: %s was a stale mount of pisessionfs (its daemon is gone); "
				"unmounted it (fusermount3 -u -z %s)\n", mp, mp);
		} else {
			fprintf(stderr, "pisessionfs: %s is a stale mount of pisessionfs (its daemon is gone) and could not "
				"be unmounted; run: fusermount3 -u -z %s\n", mp, mp);
			res = -1;
		}
	}
	if (ours) {
		/* Since 0.1.0 the source is the store's path (fsname). */
		if (strcmp(source, "pisessionfs") == 0)
			fprintf(stderr, "pisessionfs: %s is already mounted by pisessionfs; unmount it first with: "
				"fusermount3 -u %s\n", mp, mp);
		else
			fprintf(stderr, "pisessionfs: %s is already mounted by pisessionfs, from the store %s; unmount "
				"it first with: fusermount3 -u %s\n", mp, source, mp);
		res = -1;
	}
	free(real);
	free(fstype);
	free(source);
	return res;
}

/* One line each, saying what to do: the errors people meet first. */
static int psfs_check_mountpoint(const char *mp)
{
	struct stat st;
	if (psfs_check_ours(mp) != 0)
		return -1;
	if (stat(mp, &st) != 0) {
		if (errno == ENOTCONN || errno == ECONNABORTED)
			fprintf(stderr, "pisessionfs: %s is a stale mount (its daemon died); run: fusermount3 -u %s\n", mp, mp);
		else
			fprintf(stderr, "pisessionfs: mountpoint %s: %s; create it with: mkdir -p %s\n", mp, strerror(errno), mp);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "pisessionfs: mountpoint %s is not a directory\n", mp);
		return -1;
	}
	DIR *d = opendir(mp);
	if (!d) {
		if (errno == ENOTCONN || errno == ECONNABORTED)
			fprintf(stderr, "pisessionfs: %s is a stale mount (its daemon died); run: fusermount3 -u %s\n", mp, mp);
		else
			fprintf(stderr, "pisessionfs: mountpoint %s: %s\n", mp, strerror(errno));
		return -1;
	}
	struct dirent *de;
	int empty = 1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(d);
	if (!empty) {
		fprintf(stderr, "pisessionfs: mountpoint %s is not empty; mount on an empty directory\n", mp);
		return -1;
	}
	return 0;
}

/* The options' ranges, each with a message that says what to give.  0
 * or -1. */
static int psfs_config_check(const struct psfs_config *cfg)
{
	if (!isnan(cfg->timeout) && !(cfg->timeout >= 0 && cfg->timeout <= 86400)) {
		fprintf(stderr, "pisessionfs: -o timeout=%g: give 0 to 86400 (seconds)\n", cfg->timeout);
		return -1;
	}
	if (!isnan(cfg->search_budget) && !(cfg->search_budget > 0 && cfg->search_budget <= 86400)) {
		fprintf(stderr, "pisessionfs: -o search_budget=%g: give more than 0, at most 86400 (seconds)\n",
			cfg->search_budget);
		return -1;
	}
	if (!isnan(cfg->store_timeout) && !(cfg->store_timeout >= 0 && cfg->store_timeout <= 3600)) {
		fprintf(stderr, "pisessionfs: -o store_timeout=%g: give 0 to 3600 (seconds)\n", cfg->store_timeout);
		return -1;
	}
	if (cfg->keep_at_exit < -1 || cfg->keep_at_exit > 3600) {
		fprintf(stderr, "pisessionfs: -o keep_at_exit=%d: give 0 to 3600 (seconds)\n", cfg->keep_at_exit);
		return -1;
	}
	if (cfg->read_threads > FANOUT_MAX_THREADS) {
		fprintf(stderr, "pisessionfs: -o read_threads=%u: give 1 to %d (0: one per core)\n", cfg->read_threads,
			FANOUT_MAX_THREADS);
		return -1;
	}
	if (cfg->entry_cache_mib < -1 || cfg->entry_cache_mib > 4096) {
		fprintf(stderr, "pisessionfs: -o entry_cache=%d: give 0 to 4096 (MiB)\n", cfg->entry_cache_mib);
		return -1;
	}
	if (cfg->context_cache_mib < -1 || cfg->context_cache_mib > 65536) {
		fprintf(stderr, "pisessionfs: -o context_cache=%d: give 0 to 65536 (MiB)\n", cfg->context_cache_mib);
		return -1;
	}
	if (cfg->search_cache_mib < -1 || cfg->search_cache_mib > 65536) {
		fprintf(stderr, "pisessionfs: -o search_cache=%d: give 0 to 65536 (MiB)\n", cfg->search_cache_mib);
		return -1;
	}
	if (cfg->cache_max_mib != -1 && (cfg->cache_max_mib < 1 || cfg->cache_max_mib > 1048576)) {
		fprintf(stderr, "pisessionfs: -o cache_max=%d: give 1 to 1048576 (MiB)\n", cfg->cache_max_mib);
		return -1;
	}
	if (cfg->rejected_kept_mib != -1 && (cfg->rejected_kept_mib < 1 || cfg->rejected_kept_mib > 4096)) {
		fprintf(stderr, "pisessionfs: -o rejected_kept=%d: give 1 to 4096 (MiB)\n", cfg->rejected_kept_mib);
		return -1;
	}
	return 0;
}

/* What the command line names: the options into fs->cfg (its store
 * absolute, checked to be a directory), the mountpoint checked and given
 * back to libfuse's own options in args, parsed into cmd.  1: done
 * already (help, version, --print-store); 0: mount; -1: an error, said. */
static int psfs_parse(char *argv[], struct fuse_args *args, struct fuse_cmdline_opts *cmd,
		      struct psfs *fs)
{
	struct psfs_config *cfg = &fs->cfg;
	const char *store_why = NULL; /* where a default store came from */
	struct stat st;

	psfs_config_defaults(cfg);
	if (fuse_opt_parse(args, cfg, psfs_opts, psfs_opt_proc) != 0)
		return -1;
	if (cfg->show_help) {
		psfs_usage(argv[0]);
		return 1;
	}
	if (cfg->show_version) {
		printf("pisessionfs %s (libfuse %s)\n", PS_VERSION, fuse_pkgversion());
		return 1;
	}
	if (cfg->n_positional == 2 && !cfg->store) {
		cfg->store = cfg->positional[0];
		cfg->positional[0] = NULL;
	}
	if (!cfg->store && !(cfg->store = psfs_default_store(&store_why))) {
		fprintf(stderr, "pisessionfs: no --store given, and no home directory to find pi's store in\n");
		return -1;
	}
	if (cfg->print_store) {
		/* One implementation of pi's rules: quickstart.sh asks here. */
		char *absolute = path_resolve(cfg->store);
		printf("%s\n", absolute ? absolute : cfg->store);
		free(absolute);
		return 1;
	}
	if (cfg->n_positional) {
		const char *mp = cfg->positional[cfg->n_positional - 1];
		if (psfs_check_mountpoint(mp) != 0 || fuse_opt_add_arg(args, mp) != 0)
			return -1;
	}
	if (fuse_parse_cmdline(args, cmd) != 0)
		return -1;
	if (!cmd->mountpoint) {
		fprintf(stderr, "pisessionfs: no mountpoint given (see --help)\n");
		return -1;
	}
	/* The daemon may change directory: keep the store's absolute path,
	 * as pi resolves it (no symlink followed: the paths written into
	 * files, parentSession and the trash's Path=, are pi's). */
	char *absolute = path_resolve(cfg->store);
	if (absolute) {
		free(cfg->store);
		cfg->store = absolute;
	}
	if (stat(cfg->store, &st) != 0 || !S_ISDIR(st.st_mode)) {
		if (store_why)
			fprintf(stderr, "pisessionfs: session store %s (%s) is not a directory; pass --store DIR\n",
				cfg->store, store_why);
		else
			fprintf(stderr, "pisessionfs: session store %s is not a directory; pass --store DIR\n",
				cfg->store);
		return -1;
	}
	fs->mountpoint = realpath(cmd->mountpoint, NULL);
	return psfs_config_check(cfg);
}

/* What searches read and the keeper has not kept on disk yet is kept
 * now, once the mount is gone, within -o keep_at_exit: a mount that
 * lived for one search is remembered too (infokeeper.h). */
static void psfs_keeper_stop(struct psfs *fs)
{
	size_t kept, left;
	int secs = fs->cfg.keep_at_exit >= 0 ? fs->cfg.keep_at_exit : PSFS_KEEP_AT_EXIT_S;
	infokeeper_stop(fs->keeper, (long)secs * 1000, &kept, &left);
	fs->keeper = NULL;
	if (left)
		fprintf(stderr, "pisessionfs: note: %zu session%s read by searches left out of the cache at exit (%d s "
				"spent): the next mount's first search reads them\n",
			left, left == 1 ? "" : "s", secs);
}

/* The threads that serve the mount beside libfuse's: the watcher, the
 * sizer, the cache sweep, the keeper.  Started after fuse_daemonize: a
 * thread started before its fork would not be in the daemon. */
static void psfs_threads_start(struct psfs *fs)
{
	if (!(fs->watch = watch_start(fs)))
		fprintf(stderr, "pisessionfs: note: inotify unavailable, changes show after the cache timeout\n");
	if (!(fs->sizer = sizer_start(fs)))
		fprintf(stderr, "pisessionfs: note: no sizer thread, entry files are sized as they are listed\n");
	if (fs->disk && diskmemo_path(fs->disk))
		fs->sweep = cachesweep_start(fs, (uint64_t)(fs->cfg.cache_max_mib > 0 ? fs->cfg.cache_max_mib
										       : CACHEDIR_DEFAULT_MAX_MIB) << 20);
	if (fs->disk && infokeeper_start(fs->infos, fanout_threads(fs->cfg.read_threads), &fs->keeper) != PS_OK)
		fprintf(stderr, "pisessionfs: note: no keeper thread, searches write the cache as they read\n");
}

/* libfuse's multithreaded loop until the mount ends: 0 for an unmount or
 * a stop asked for by signal, 1 otherwise. */
static int psfs_loop(struct psfs *fs, const struct fuse_cmdline_opts *cmd)
{
	struct fuse_loop_config *loop = fuse_loop_cfg_create();
	int ret = 1;
	if (loop) {
		fuse_loop_cfg_set_clone_fd(loop, cmd->clone_fd);
		fuse_loop_cfg_set_max_threads(loop, cmd->max_threads);
		/* libfuse returns the signal's number after SIGTERM, SIGINT or
		 * SIGHUP (and resets its "exited" flag): a stop asked for is a
		 * clean exit. */
		ret = fuse_loop_mt(fs->fuse, loop);
		ret = ret == 0 || ret == SIGTERM || ret == SIGINT || ret == SIGHUP ? 0 : 1;
		fuse_loop_cfg_destroy(loop);
	}
	sizer_stop(fs->sizer);
	fs->sizer = NULL;
	watch_stop(fs->watch);
	fs->watch = NULL;
	return ret;
}

/* Mounts fs (made by psfs_new) and serves it until it is unmounted or
 * stopped: the exit status. */
static int psfs_serve(struct psfs *fs, struct fuse_args *args, const struct fuse_cmdline_opts *cmd)
{
	char *fsname = NULL;
	int ret = 1;

	/* fuse_parse_cmdline consumed -d and -f; give -d back to fuse_new. */
	if (cmd->debug)
		fuse_opt_add_arg(args, "-odebug");
	/* findmnt and df show the store as the source, as sshfs shows
	 * user@host:dir; the type is fuse.pisessionfs.  fuse_opt splits -o at
	 * commas and takes a backslash as escaping the next character. */
	if (psfs_fsname_arg(fs->cfg.store, &fsname) != 0 || fuse_opt_add_arg(args, fsname) != 0)
		goto out;
	fuse_opt_add_arg(args, "-osubtype=pisessionfs");
	fuse_opt_add_arg(args, "-odefault_permissions");
	fs->fuse = fuse_new(args, &psfs_ops, sizeof psfs_ops, fs);
	if (!fs->fuse)
		goto out;
	psfs_caller_serving();
	/* Handlers first: a SIGTERM sent as soon as the mount shows (by a
	 * script, or systemd stopping the unit) must stop the loop cleanly,
	 * not kill the process.  fuse_daemonize's fork keeps them. */
	if (fuse_set_signal_handlers(fuse_get_session(fs->fuse)) != 0)
		goto out_destroy;
	/* What killed daemons left half done (recover.h), repaired only now
	 * that every option, the store and the mountpoint have been checked
	 * (fuse_new took libfuse's options): a daemon that gives up changes
	 * no file.  Still before the mount, so nothing unrepaired is ever
	 * shown, and because the mountpoint may lie inside the store, where
	 * the scan would stat a mount nobody serves yet.  A store that cannot
	 * be changed is left as it is. */
	recover_store(fs->cfg.store, psfs_note_recovery, fs->journal);
	struct autounmount au;
	autounmount_prepare(&au);
	if (fuse_mount(fs->fuse, cmd->mountpoint) != 0) {
		autounmount_arrange(&au);
		goto out_signals;
	}
	autounmount_arrange(&au);
	if (fuse_daemonize(cmd->foreground) == 0) {
		psfs_threads_start(fs);
		ret = psfs_loop(fs, cmd);
	}
	fuse_unmount(fs->fuse);
	psfs_keeper_stop(fs);
out_signals:
	fuse_remove_signal_handlers(fuse_get_session(fs->fuse));
out_destroy:
	fuse_destroy(fs->fuse);
	fs->fuse = NULL;
out:
	free(fsname);
	return ret;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cmd = { 0 };
	struct psfs fs = { 0 };
	int ret = 1;

	int parsed = psfs_parse(argv, &args, &cmd, &fs);
	if (parsed > 0)
		ret = 0;
	else if (parsed == 0 && psfs_new(&fs) == 0)
		ret = psfs_serve(&fs, &args, &cmd);
	psfs_free(&fs);
	free(fs.mountpoint);
	free(fs.cfg.store);
	free(fs.cfg.cache_dir);
	for (int i = 0; i < 2; i++)
		free(fs.cfg.positional[i]);
	free(cmd.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
