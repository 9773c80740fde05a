/* pisessionfs: mounts a pi session store.  Option parsing and start-up;
 * the operations are in ops.c (the table) and the handlers it names, the
 * change watcher in watch.c; the mount's state is struct psfs, made here. */
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
#include "catalog.h"
#include "entrycache.h"
#include "family.h"
#include "fanout.h"
#include "journal.h"
#include "pathresolve.h"
#include "overlay.h"
#include "pisessionfs.h"
#include "trash.h"
#include "sizer.h"
#include "views.h"
#include "watch.h"
#include "infocache.h"
#include "jscase.h"
#include "recover.h"
#include "searchdir.h"
#include "sessionops.h"
#include "overview.h"
#include "overviewmemo.h"
#include "content.h"
#include "diskmemo.h"
#include "infofreeze.h"
#include "infokeeper.h"

#define PSFS_OPT(t, p) { t, offsetof(struct psfs_config, p), 1 }

/* Takes the positional arguments out: MOUNTPOINT, or SOURCE MOUNTPOINT as
 * mount(8) and fstab pass them (mount -t fuse.pisessionfs STORE DIR), where
 * SOURCE is the store.  The mountpoint goes back to libfuse after it has been
 * checked here, with a message that says what to do. */
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
	       "  -o auto_unmount        unmount when the daemon exits\n"
	       "  -o allow_other         let other users in (needs user_allow_other in\n"
	       "                         /etc/fuse.conf; file modes still apply)\n"
	       "  -h, --help             this help;  -V, --version  the version\n"
	       "\n"
	       "Unmount with: fusermount3 -u MOUNTPOINT\n", prog, prog);
}


static void psfs_disk_note(void *ctx, const char *what)
{
	journal_log_in(ctx, "%s", what);
}

/* The layout of what is kept on disk (overview.c's and catalog.c's
 * values): a change to any of them must change this, so an older cache
 * is made again rather than misread. */
/* How long a daemon that stops may still spend keeping what searches
 * read, by default: the first search of an 11 GB store leaves about 20 s
 * of writing on two cores. */
#define PSFS_KEEP_AT_EXIT_S 30
#define PSFS_DISK_FORMAT "rows c,m,d 1; catalog k 1; infos i " INFOFREEZE_MAGIC "; families f 1; files o 1"

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
	if (err == PS_ERR_NOMEM) {
		fprintf(stderr, "pisessionfs: out of memory\n");
		return -1;
	}
	overview_memo_set_disk(fs->overview, fs->disk);
	infocache_set_disk(fs->infos, fs->disk);
	family_cache_set_disk(fs->family, fs->disk);
	return 0;
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

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void psfs_unescape_mountinfo(char *s)
{
	char *d = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* What is mounted on mp now (the topmost mount), from /proc/self/mountinfo:
 * fields 5 (the mountpoint), then after the optional fields and "-", the
 * type and the source.  Returns 1 and new strings when mp is a mountpoint. */
static int psfs_mounted_on(const char *mp, char **fstype, char **source)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	*fstype = *source = NULL;
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *field[5] = { 0 }, *tok;
		int i = 0;
		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, " ", &save); tok && i < 5; tok = strtok_r(NULL, " ", &save))
			field[i++] = tok;
		if (i < 5)
			continue;
		psfs_unescape_mountinfo(field[4]);
		if (strcmp(field[4], mp) != 0)
			continue;
		while ((tok = strtok_r(NULL, " ", &save)) && strcmp(tok, "-") != 0)
			; /* the options and optional fields */
		char *type = tok ? strtok_r(NULL, " ", &save) : NULL;
		char *src = type ? strtok_r(NULL, " ", &save) : NULL;
		if (!type || !src)
			continue;
		psfs_unescape_mountinfo(src);
		free(*fstype);
		free(*source);
		*fstype = strdup(type);
		*source = strdup(src);
		found = *fstype && *source;
	}
	free(line);
	fclose(f);
	return found;
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

/* One line each, saying what to do: the errors people meet first. */
static int psfs_check_mountpoint(const char *mp)
{
	struct stat st;
	char *real = realpath(mp, NULL), *fstype = NULL, *source = NULL;
	int ours = real && psfs_mounted_on(real, &fstype, &source) && strcmp(fstype, "fuse.pisessionfs") == 0;
	/* A pisessionfs mount whose daemon is gone (killed, crashed, without
	 * auto_unmount) answers every call with ENOTCONN.  Nobody serves it and
	 * nothing can be read through it, so a lazy unmount loses nothing (a
	 * process still inside keeps its detached copy) and the new daemon
	 * mounts where the user asked.  Another file system's dead mount is
	 * not ours to clear: the stat below says how. */
	if (ours && psfs_dead_mount(real)) {
		ours = 0;
		if (psfs_lazy_unmount(real) == 0) {
			fprintf(stderr, "pisessionfs: %s was a stale mount of pisessionfs (its daemon is gone); "
				"unmounted it (fusermount3 -u -z %s)\n", mp, mp);
		} else {
			fprintf(stderr, "pisessionfs: %s is a stale mount of pisessionfs (its daemon is gone) and could not "
				"be unmounted; run: fusermount3 -u -z %s\n", mp, mp);
			free(real);
			free(fstype);
			free(source);
			return -1;
		}
	}
	free(real);
	if (ours) {
		/* Since 0.1.0 the source is the store's path (fsname). */
		if (strcmp(source, "pisessionfs") == 0)
			fprintf(stderr, "pisessionfs: %s is already mounted by pisessionfs; unmount it first with: "
				"fusermount3 -u %s\n", mp, mp);
		else
			fprintf(stderr, "pisessionfs: %s is already mounted by pisessionfs, from the store %s; unmount "
				"it first with: fusermount3 -u %s\n", mp, source, mp);
	}
	free(fstype);
	free(source);
	if (ours)
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

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cmd = { 0 };
	struct psfs fs = { 0 };
	struct fuse_loop_config *loop = NULL;
	struct stat st;
	ps_err err;
	int ret = 1;
	const char *store_why = NULL; /* where a default store came from */
	char *fsname = NULL;

	fs.cfg.timeout = NAN; /* chosen at init, by what the watcher hears */
	fs.cfg.search_budget = NAN;
	fs.cfg.keep_at_exit = -1;
	fs.cfg.entry_cache_mib = -1;
	fs.cfg.context_cache_mib = -1;
	fs.cfg.search_cache_mib = -1;
	fs.cfg.rejected_kept_mib = -1;
	fs.cfg.cache_max_mib = -1;
	if (fuse_opt_parse(&args, &fs.cfg, psfs_opts, psfs_opt_proc) != 0)
		goto out;
	if (fs.cfg.show_help) {
		psfs_usage(argv[0]);
		ret = 0;
		goto out;
	}
	if (fs.cfg.show_version) {
		printf("pisessionfs %s (libfuse %s)\n", PS_VERSION, fuse_pkgversion());
		ret = 0;
		goto out;
	}
	if (fs.cfg.n_positional == 2 && !fs.cfg.store) {
		fs.cfg.store = fs.cfg.positional[0];
		fs.cfg.positional[0] = NULL;
	}
	if (!fs.cfg.store && !(fs.cfg.store = psfs_default_store(&store_why))) {
		fprintf(stderr, "pisessionfs: no --store given, and no home directory to find pi's store in\n");
		goto out;
	}
	if (fs.cfg.print_store) {
		/* One implementation of pi's rules: quickstart.sh asks here. */
		char *absolute = path_resolve(fs.cfg.store);
		printf("%s\n", absolute ? absolute : fs.cfg.store);
		free(absolute);
		ret = 0;
		goto out;
	}
	if (fs.cfg.n_positional) {
		const char *mp = fs.cfg.positional[fs.cfg.n_positional - 1];
		if (psfs_check_mountpoint(mp) != 0 || fuse_opt_add_arg(&args, mp) != 0)
			goto out;
	}
	if (fuse_parse_cmdline(&args, &cmd) != 0)
		goto out;
	if (!cmd.mountpoint) {
		fprintf(stderr, "pisessionfs: no mountpoint given (see --help)\n");
		goto out;
	}
	/* The daemon may change directory: keep the store's absolute path,
	 * as pi resolves it (no symlink followed: the paths written into
	 * files, parentSession and the trash's Path=, are pi's). */
	char *absolute = path_resolve(fs.cfg.store);
	if (absolute) {
		free(fs.cfg.store);
		fs.cfg.store = absolute;
	}
	if (stat(fs.cfg.store, &st) != 0 || !S_ISDIR(st.st_mode)) {
		if (store_why)
			fprintf(stderr, "pisessionfs: session store %s (%s) is not a directory; pass --store DIR\n",
				fs.cfg.store, store_why);
		else
			fprintf(stderr, "pisessionfs: session store %s is not a directory; pass --store DIR\n",
				fs.cfg.store);
		goto out;
	}
	fs.mountpoint = realpath(cmd.mountpoint, NULL);
	if (!isnan(fs.cfg.timeout) && !(fs.cfg.timeout >= 0 && fs.cfg.timeout <= 86400)) {
		fprintf(stderr, "pisessionfs: -o timeout=%g: give 0 to 86400 (seconds)\n", fs.cfg.timeout);
		goto out;
	}
	if (!isnan(fs.cfg.search_budget) && !(fs.cfg.search_budget > 0 && fs.cfg.search_budget <= 86400)) {
		fprintf(stderr, "pisessionfs: -o search_budget=%g: give more than 0, at most 86400 (seconds)\n",
			fs.cfg.search_budget);
		goto out;
	}
	if (fs.cfg.keep_at_exit < -1 || fs.cfg.keep_at_exit > 3600) {
		fprintf(stderr, "pisessionfs: -o keep_at_exit=%d: give 0 to 3600 (seconds)\n", fs.cfg.keep_at_exit);
		goto out;
	}
	if (fs.cfg.read_threads > FANOUT_MAX_THREADS) {
		fprintf(stderr, "pisessionfs: -o read_threads=%u: give 1 to %d (0: one per core)\n", fs.cfg.read_threads,
			FANOUT_MAX_THREADS);
		goto out;
	}
	if (fs.cfg.entry_cache_mib < -1 || fs.cfg.entry_cache_mib > 4096) {
		fprintf(stderr, "pisessionfs: -o entry_cache=%d: give 0 to 4096 (MiB)\n", fs.cfg.entry_cache_mib);
		goto out;
	}
	if (fs.cfg.entry_cache_mib >= 0)
		entrycache_set_limit((size_t)fs.cfg.entry_cache_mib << 20);
	if (fs.cfg.context_cache_mib < -1 || fs.cfg.context_cache_mib > 65536) {
		fprintf(stderr, "pisessionfs: -o context_cache=%d: give 0 to 65536 (MiB)\n", fs.cfg.context_cache_mib);
		goto out;
	}
	if (fs.cfg.context_cache_mib >= 0)
		content_set_context_budget((size_t)fs.cfg.context_cache_mib << 20);
	if (fs.cfg.search_cache_mib < -1 || fs.cfg.search_cache_mib > 65536) {
		fprintf(stderr, "pisessionfs: -o search_cache=%d: give 0 to 65536 (MiB)\n", fs.cfg.search_cache_mib);
		goto out;
	}
	size_t search_budget =
		fs.cfg.search_cache_mib >= 0 ? (size_t)fs.cfg.search_cache_mib << 20 : SEARCH_CACHE_DEFAULT;
	if (infocache_new(search_budget - SEARCH_VERDICTS_SHARE(search_budget), &fs.infos)) {
		fprintf(stderr, "pisessionfs: out of memory\n");
		goto out;
	}
	if (fs.cfg.cache_max_mib != -1 && (fs.cfg.cache_max_mib < 1 || fs.cfg.cache_max_mib > 1048576)) {
		fprintf(stderr, "pisessionfs: -o cache_max=%d: give 1 to 1048576 (MiB)\n", fs.cfg.cache_max_mib);
		goto out;
	}
	if (fs.cfg.rejected_kept_mib != -1 && (fs.cfg.rejected_kept_mib < 1 || fs.cfg.rejected_kept_mib > 4096)) {
		fprintf(stderr, "pisessionfs: -o rejected_kept=%d: give 1 to 4096 (MiB)\n", fs.cfg.rejected_kept_mib);
		goto out;
	}
	fs.search = search_results_new(SEARCH_VERDICTS_SHARE(search_budget));
	fs.overview = overview_memo_new();
	fs.family = family_cache_new();
	if (!fs.search || !fs.overview || !fs.family) {
		fprintf(stderr, "pisessionfs: out of memory\n");
		goto out;
	}
	fs.overlay = overlay_new();
	fs.sessionops = sessionops_state_new();
	if (!fs.overlay || !fs.sessionops) {
		fprintf(stderr, "pisessionfs: out of memory\n");
		goto out;
	}
	fs.journal = journal_new(fs.cfg.rejected_kept_mib > 0 ? (size_t)fs.cfg.rejected_kept_mib << 20
							      : JOURNAL_REJECTED_DEFAULT_BUDGET,
				 fs.overlay, fs.mountpoint);
	if (!fs.journal) {
		fprintf(stderr, "pisessionfs: out of memory\n");
		goto out;
	}
	/* Loaded now, before any search can need it (jscase.h). */
	if (!jscase_has_locale())
		fprintf(stderr, "pisessionfs: the C.UTF-8 locale could not be loaded: search/ compares letters beyond "
				"ASCII as they are, where pi lowers them\n");
	/* Where `rm -r SESSION` puts the file: the user's own trash, as
	 * pi's `trash` command would (docs/layout.md "Deleting a session"). */
	fs.trash_home = trash_home_dir(getenv("XDG_DATA_HOME"), path_home());
	if (psfs_disk_open(&fs) != 0)
		goto out;
	err = store_open(fs.cfg.store, fs.cfg.cache_sessions, &fs.store);
	if (!err)
		err = catalog_new(fs.store, &fs.catalog);
	if (!err && views_memo_new(&fs.views) != 0)
		err = PS_ERR_NOMEM;
	if (!err) {
		catalog_set_memo(fs.catalog, overview_memo_rows(fs.overview));
		catalog_set_threads(fs.catalog, fs.cfg.read_threads);
	}
	if (err) {
		fprintf(stderr, "pisessionfs: cannot open the store %s: %s\n", fs.cfg.store, ps_strerror(err));
		goto out;
	}
	/* fuse_parse_cmdline consumed -d and -f; give -d back to fuse_new. */
	if (cmd.debug)
		fuse_opt_add_arg(&args, "-odebug");
	/* findmnt and df show the store as the source, as sshfs shows
	 * user@host:dir; the type is fuse.pisessionfs.  fuse_opt splits -o at
	 * commas and takes a backslash as escaping the next character. */
	if (psfs_fsname_arg(fs.cfg.store, &fsname) != 0 || fuse_opt_add_arg(&args, fsname) != 0)
		goto out;
	fuse_opt_add_arg(&args, "-osubtype=pisessionfs");
	fuse_opt_add_arg(&args, "-odefault_permissions");
	fs.fuse = fuse_new(&args, &psfs_ops, sizeof psfs_ops, &fs);
	if (!fs.fuse)
		goto out;
	psfs_caller_serving();
	/* Handlers first: a SIGTERM sent as soon as the mount shows (by a
	 * script, or systemd stopping the unit) must stop the loop cleanly,
	 * not kill the process.  fuse_daemonize's fork keeps them. */
	if (fuse_set_signal_handlers(fuse_get_session(fs.fuse)) != 0)
		goto out_destroy;
	/* What killed daemons left half done (recover.h), repaired only now
	 * that every option, the store and the mountpoint have been checked
	 * (fuse_new took libfuse's options): a daemon that gives up changes
	 * no file.  Still before the mount, so nothing unrepaired is ever
	 * shown, and because the mountpoint may lie inside the store, where
	 * the scan would stat a mount nobody serves yet.  A store that cannot
	 * be changed is left as it is. */
	recover_store(fs.cfg.store, psfs_note_recovery, fs.journal);
	struct autounmount au;
	autounmount_prepare(&au);
	if (fuse_mount(fs.fuse, cmd.mountpoint) != 0) {
		autounmount_arrange(&au);
		goto out_signals;
	}
	autounmount_arrange(&au);
	if (fuse_daemonize(cmd.foreground) != 0)
		goto out_unmount;
	if (!(fs.watch = watch_start(&fs)))
		fprintf(stderr, "pisessionfs: note: inotify unavailable, changes show after the cache timeout\n");
	if (!(fs.sizer = sizer_start(&fs)))
		fprintf(stderr, "pisessionfs: note: no sizer thread, entry files are sized as they are listed\n");
	/* The other stores' databases are looked at only now: a thread
	 * started before fuse_daemonize's fork would not be in the daemon. */
	if (fs.disk && diskmemo_path(fs.disk))
		fs.sweep = cachesweep_start(&fs, (uint64_t)(fs.cfg.cache_max_mib > 0 ? fs.cfg.cache_max_mib
										      : CACHEDIR_DEFAULT_MAX_MIB) << 20);
	if (fs.disk && infokeeper_start(fs.infos, fanout_threads(fs.cfg.read_threads), &fs.keeper) != PS_OK)
		fprintf(stderr, "pisessionfs: note: no keeper thread, searches write the cache as they read\n");
	loop = fuse_loop_cfg_create();
	if (loop) {
		fuse_loop_cfg_set_clone_fd(loop, cmd.clone_fd);
		fuse_loop_cfg_set_max_threads(loop, cmd.max_threads);
		/* libfuse returns the signal's number after SIGTERM, SIGINT or
		 * SIGHUP (and resets its "exited" flag): a stop asked for is a
		 * clean exit. */
		ret = fuse_loop_mt(fs.fuse, loop);
		ret = ret == 0 || ret == SIGTERM || ret == SIGINT || ret == SIGHUP ? 0 : 1;
		fuse_loop_cfg_destroy(loop);
	}
	sizer_stop(fs.sizer);
	fs.sizer = NULL;
	watch_stop(fs.watch);
	fs.watch = NULL;
out_unmount:
	fuse_unmount(fs.fuse);
	psfs_keeper_stop(&fs);
out_signals:
	fuse_remove_signal_handlers(fuse_get_session(fs.fuse));
out_destroy:
	fuse_destroy(fs.fuse);
out:
	views_memo_free(fs.views);
	catalog_free(fs.catalog);
	store_free(fs.store);
	entrycache_clear();
	overview_memo_free(fs.overview);
	family_cache_free(fs.family);
	search_results_free(fs.search);
	infocache_free(fs.infos);
	cachesweep_stop(fs.sweep);
	diskmemo_free(fs.disk);
	journal_free(fs.journal);
	overlay_free(fs.overlay);
	sessionops_state_free(fs.sessionops);
	free(fs.mountpoint);
	free(fs.trash_home);
	free(fs.cfg.store);
	free(fs.cfg.cache_dir);
	for (int i = 0; i < 2; i++)
		free(fs.cfg.positional[i]);
	free(cmd.mountpoint);
	free(fsname);
	fuse_opt_free_args(&args);
	return ret;
}
