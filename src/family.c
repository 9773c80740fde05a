/* A session's family folder (family.h): its child sessions found by a
 * walk that follows no symlink, matched with their runs' artifacts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "family.h"

/* How deep below STEM/ a child's session file may lie (pi-subagents: 2,
 * STEM/RUNID/run-N/), and how many members a family may have: a bound
 * on what one lookup costs, whatever the folder holds. */
#define FAMILY_DEPTH 4
#define FAMILY_MAX_MEMBERS 4096
/* Projects whose artifact folder listing is kept (family_cache). */
#define FAMILY_CACHE_PROJECTS 16
/* Families kept (family_cache): beyond it the oldest kept goes. */
#define FAMILY_CACHE_FAMILIES 4096
#define FAMILY_CACHE_BUCKETS 8192

const char *const family_artifact_suffix[FAMILY_ARTIFACT_KINDS] = { ".input.md", ".output.md", ".meta.json" };
/* The same artifacts as pi-subagents names them (getArtifactPaths). */
static const char *const family_artifact_store_suffix[FAMILY_ARTIFACT_KINDS] = { "_input.md", "_output.md",
										   "_meta.json" };

/* ------------------------------------------------ the artifact folder */

struct family_artifacts {
	char *project;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	char **names; /* sorted; those with an artifact suffix only */
	size_t n;
	unsigned refs; /* guarded by the cache's lock */
};

/* What a family was read from: each folder walked, and the project's
 * artifact folder (ino 0: there was none), by its stamp. */
struct family_sig {
	char *rel; /* relative to the project folder */
	ino_t ino;
	struct timespec mtime;
};

struct family_kept {
	char *key; /* "project/stem" */
	struct family *fam; /* a reference */
	struct family_sig *sigs;
	size_t n_sigs;
	struct family_kept *next; /* bucket chain */
};

struct family_cache {
	pthread_mutex_t lock;
	struct family_artifacts *kept[FAMILY_CACHE_PROJECTS]; /* most recent first */
	struct family_kept *buckets[FAMILY_CACHE_BUCKETS];
	struct family_kept *ring[FAMILY_CACHE_FAMILIES]; /* in the order kept: the oldest goes first */
	size_t ring_next;
};

static void family_artifacts_put(struct family_artifacts *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->names[i]);
	free(a->names);
	free(a->project);
	free(a);
}

struct family_cache *family_cache_new(void)
{
	struct family_cache *c = calloc(1, sizeof *c);
	if (c && pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		c = NULL;
	}
	return c;
}

static void family_kept_free(struct family_kept *k);

void family_cache_free(struct family_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < FAMILY_CACHE_FAMILIES; i++)
		family_kept_free(c->ring[i]);
	for (size_t i = 0; i < FAMILY_CACHE_PROJECTS; i++)
		family_artifacts_put(c->kept[i]);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static int family_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether a name of the artifact folder is a run's file: the three shown
 * beside a child, and the event streams (RUNID_AGENT[_N].jsonl,
 * _transcript.jsonl), which go to the trash with the run too. */
static int family_is_artifact_name(const char *name)
{
	size_t n = strlen(name);
	for (size_t k = 0; k < FAMILY_ARTIFACT_KINDS; k++) {
		size_t sn = strlen(family_artifact_store_suffix[k]);
		if (n > sn && strcmp(name + n - sn, family_artifact_store_suffix[k]) == 0)
			return 1;
	}
	return n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

/* The artifact folder of project, listed: a new listing (refs 1), or
 * NULL when it cannot be opened (gone meanwhile) or, with *nomem set,
 * when memory ran out: a listing is never cut short silently. */
static struct family_artifacts *family_artifacts_list(int dirfd, const char *project, const struct stat *sb,
						      int *nomem)
{
	struct family_artifacts *a = calloc(1, sizeof *a);
	int fd = openat(dirfd, FAMILY_ARTIFACTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	size_t cap = 0;
	struct dirent *de;
	*nomem = 0;
	if (!d) {
		*nomem = fd >= 0 || !a;
		if (fd >= 0)
			close(fd);
		free(a);
		return NULL;
	}
	if (!a || !(a->project = strdup(project)))
		goto fail;
	while ((de = readdir(d))) {
		if (!family_is_artifact_name(de->d_name))
			continue;
		if (a->n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			char **grown = realloc(a->names, ncap * sizeof *grown);
			if (!grown)
				goto fail;
			a->names = grown;
			cap = ncap;
		}
		if (!(a->names[a->n] = strdup(de->d_name)))
			goto fail;
		a->n++;
	}
	closedir(d);
	qsort(a->names, a->n, sizeof *a->names, family_cmp_names);
	a->dev = sb->st_dev;
	a->ino = sb->st_ino;
	a->mtime = sb->st_mtim;
	a->refs = 1;
	return a;
fail:
	closedir(d);
	*nomem = 1;
	family_artifacts_put(a);
	return NULL;
}

static int family_artifacts_fresh(const struct family_artifacts *a, const char *project, const struct stat *sb)
{
	return strcmp(a->project, project) == 0 && a->dev == sb->st_dev && a->ino == sb->st_ino &&
	       a->mtime.tv_sec == sb->st_mtim.tv_sec && a->mtime.tv_nsec == sb->st_mtim.tv_nsec;
}

/* The project's artifact listing, from the cache while the folder is
 * unchanged: a reference the caller drops with family_artifacts_drop. */
static struct family_artifacts *family_artifacts_get(struct family_cache *c, int dirfd, const char *project,
						     int *nomem)
{
	struct stat sb;
	if (fstatat(dirfd, FAMILY_ARTIFACTS_DIR, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(sb.st_mode))
		return NULL;
	if (c) {
		pthread_mutex_lock(&c->lock);
		for (size_t i = 0; i < FAMILY_CACHE_PROJECTS && c->kept[i]; i++) {
			struct family_artifacts *a = c->kept[i];
			if (family_artifacts_fresh(a, project, &sb)) {
				a->refs++;
				pthread_mutex_unlock(&c->lock);
				return a;
			}
		}
		pthread_mutex_unlock(&c->lock);
	}
	struct family_artifacts *a = family_artifacts_list(dirfd, project, &sb, nomem);
	if (!a || !c)
		return a;
	pthread_mutex_lock(&c->lock);
	struct family_artifacts *dropped = NULL;
	size_t i = 0;
	/* The project's older listing, or else the least recent, leaves. */
	while (i < FAMILY_CACHE_PROJECTS - 1 && c->kept[i] && strcmp(c->kept[i]->project, project) != 0)
		i++;
	dropped = c->kept[i];
	memmove(c->kept + 1, c->kept, i * sizeof *c->kept);
	c->kept[0] = a;
	a->refs++;
	if (dropped && --dropped->refs == 0)
		pthread_mutex_unlock(&c->lock), family_artifacts_put(dropped);
	else
		pthread_mutex_unlock(&c->lock);
	return a;
}

static void family_artifacts_drop(struct family_cache *c, struct family_artifacts *a)
{
	if (!a)
		return;
	if (!c) {
		family_artifacts_put(a);
		return;
	}
	pthread_mutex_lock(&c->lock);
	int last = --a->refs == 0;
	pthread_mutex_unlock(&c->lock);
	if (last)
		family_artifacts_put(a);
}

/* ------------------------------------------------------------ the walk */

struct family_walk {
	struct family *fam;
	size_t cap;
	char project[STORE_PROJECT_MAX];
	const char *stem;
	char **runs;  /* the folders right below STEM/: each may be a run's */
	size_t n_runs, cap_runs;
	struct family_sig *sigs; /* what it was read from (family_kept) */
	size_t n_sigs, cap_sigs;
	ps_err err;
};

/* Notes what the family was read from: rel (below the project folder)
 * as st shows it. */
static void family_note_sig(struct family_walk *w, const char *rel, const struct stat *st)
{
	if (w->n_sigs == w->cap_sigs) {
		size_t cap = w->cap_sigs ? 2 * w->cap_sigs : 8;
		struct family_sig *grown = realloc(w->sigs, cap * sizeof *grown);
		if (!grown) {
			w->err = PS_ERR_NOMEM;
			return;
		}
		w->sigs = grown;
		w->cap_sigs = cap;
	}
	struct family_sig *g = &w->sigs[w->n_sigs];
	if (!(g->rel = strdup(rel))) {
		w->err = PS_ERR_NOMEM;
		return;
	}
	g->ino = st ? st->st_ino : 0;
	g->mtime = st ? st->st_mtim : (struct timespec){ 0, 0 };
	w->n_sigs++;
}

static void family_member_clear(struct family_member *m)
{
	free(m->name);
	free(m->dir);
	free(m->stem);
	free(m->run_id);
	free(m->agent);
	for (size_t k = 0; k < FAMILY_ARTIFACT_KINDS; k++)
		free(m->artifact[k]);
}

void family_free(struct family *fam)
{
	if (!fam || __atomic_sub_fetch(&fam->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	for (size_t i = 0; i < fam->n; i++)
		family_member_clear(&fam->members[i]);
	free(fam->members);
	for (size_t i = 0; i < fam->n_artifacts; i++)
		free(fam->artifacts[i]);
	free(fam->artifacts);
	free(fam->folder);
	free(fam);
}

static struct family_member *family_add(struct family_walk *w)
{
	struct family *fam = w->fam;
	if (fam->n == FAMILY_MAX_MEMBERS)
		return NULL;
	if (fam->n == w->cap) {
		size_t ncap = w->cap ? 2 * w->cap : 8;
		struct family_member *grown = realloc(fam->members, ncap * sizeof *grown);
		if (!grown) {
			w->err = PS_ERR_NOMEM;
			return NULL;
		}
		fam->members = grown;
		w->cap = ncap;
	}
	struct family_member *m = &fam->members[fam->n++];
	memset(m, 0, sizeof *m);
	m->index = -1;
	return m;
}

/* "run-N": N, else -1. */
static int family_run_index(const char *name)
{
	if (strncmp(name, "run-", 4) != 0 || !name[4])
		return -1;
	long n = 0;
	for (const char *p = name + 4; *p; p++) {
		if (*p < '0' || *p > '9' || n > 100000)
			return -1;
		n = n * 10 + (*p - '0');
	}
	return (int)n;
}

/* A session file found at rel (below STEM/, "" for STEM/ itself). */
static void family_found(struct family_walk *w, const char *rel, const char *file)
{
	size_t len = strlen(file) - 6;
	char dir[STORE_PROJECT_MAX];
	struct family_member *m;
	if ((size_t)snprintf(dir, sizeof dir, "%s/%s%s%s", w->project, w->stem, *rel ? "/" : "", rel) >= sizeof dir)
		return; /* a folder too deep to name: not shown (docs/layout.md) */
	if (!(m = family_add(w)))
		return;
	m->dir = strdup(dir);
	m->stem = strndup(file, len);
	const char *slash = strchr(rel, '/');
	if (strcmp(rel, "forks") == 0) {
		m->kind = FAMILY_FORK;
	} else if (slash && !strchr(slash + 1, '/') && family_run_index(slash + 1) >= 0) {
		m->kind = FAMILY_RUN;
		m->index = family_run_index(slash + 1);
		m->run_id = strndup(rel, (size_t)(slash - rel));
		if (!m->run_id)
			w->err = PS_ERR_NOMEM;
	} else {
		m->kind = FAMILY_OTHER;
	}
	if (!m->dir || !m->stem)
		w->err = PS_ERR_NOMEM;
}

static int family_name_ok(const char *name)
{
	return strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* Whether dir holds the session file NAME.jsonl: then the folder NAME is
 * that session's own family, not its parent's. */
static int family_is_session_folder(int dirfd, const char *name)
{
	char file[NAME_MAX + 8];
	struct stat sb;
	if ((size_t)snprintf(file, sizeof file, "%s.jsonl", name) >= sizeof file)
		return 0;
	return fstatat(dirfd, file, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode);
}

/* A folder right below STEM/, whose name may be a run id: its artifacts
 * are the family's even where it holds no session file. */
static void family_note_run(struct family_walk *w, const char *name)
{
	if (w->n_runs == w->cap_runs) {
		size_t ncap = w->cap_runs ? 2 * w->cap_runs : 8;
		char **grown = realloc(w->runs, ncap * sizeof *grown);
		if (!grown) {
			w->err = PS_ERR_NOMEM;
			return;
		}
		w->runs = grown;
		w->cap_runs = ncap;
	}
	if (!(w->runs[w->n_runs] = strdup(name)))
		w->err = PS_ERR_NOMEM;
	else
		w->n_runs++;
}

static void family_walk_dir(struct family_walk *w, int fd, const char *rel, int depth)
{
	struct stat st;
	char where[PATH_MAX];
	if (fstat(fd, &st) == 0 && (size_t)snprintf(where, sizeof where, "%s%s%s", w->stem, *rel ? "/" : "", rel) <
					  sizeof where)
		family_note_sig(w, where, &st);
	DIR *d = fdopendir(fd);
	struct dirent *de;
	if (!d) {
		close(fd);
		w->err = PS_ERR_NOMEM;
		return;
	}
	while (!w->err && (de = readdir(d))) {
		const char *name = de->d_name;
		size_t n = strlen(name);
		struct stat sb;
		if (!family_name_ok(name) || fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(sb.st_mode) && n > 6 && strcmp(name + n - 6, ".jsonl") == 0) {
			family_found(w, rel, name);
		} else if (S_ISDIR(sb.st_mode) && depth < FAMILY_DEPTH && !family_is_session_folder(dirfd(d), name)) {
			if (depth == 1 && strcmp(name, "forks") != 0)
				family_note_run(w, name);
			char sub[PATH_MAX];
			if ((size_t)snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", name) >= sizeof sub)
				continue;
			int subfd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (subfd >= 0)
				family_walk_dir(w, subfd, sub, depth + 1);
		}
	}
	closedir(d);
}

/* ------------------------------------------------------- the artifacts */

/* Parses an artifact's name "RUNID_AGENT[_N]SUFFIX" of the run: 1 with
 * the kind, the agent (new) and the index (-1 when none), else 0 (-1:
 * out of memory). */
static int family_artifact_parse(const char *name, const char *run_id, int *kind, char **agent, int *index)
{
	size_t rl = strlen(run_id), n = strlen(name);
	if (strncmp(name, run_id, rl) != 0 || name[rl] != '_')
		return 0;
	for (int k = 0; k < FAMILY_ARTIFACT_KINDS; k++) {
		size_t sn = strlen(family_artifact_store_suffix[k]);
		if (n <= rl + 1 + sn || strcmp(name + n - sn, family_artifact_store_suffix[k]) != 0)
			continue;
		const char *mid = name + rl + 1;
		size_t ml = n - sn - rl - 1, digits = 0;
		while (digits < ml && mid[ml - 1 - digits] >= '0' && mid[ml - 1 - digits] <= '9')
			digits++;
		*index = -1;
		if (digits && digits < 6 && digits + 1 < ml && mid[ml - 1 - digits] == '_') {
			*index = atoi(mid + ml - digits);
			ml -= digits + 1;
		}
		*kind = k;
		*agent = strndup(mid, ml);
		return *agent ? 1 : -1;
	}
	return 0;
}

/* The first listed name that starts with prefix. */
static size_t family_lower_bound(const struct family_artifacts *a, const char *prefix)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(a->names[mid], prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void family_note_artifact(struct family_walk *w, const char *name)
{
	struct family *fam = w->fam;
	char path[STORE_PROJECT_MAX + NAME_MAX + 32];
	if ((size_t)snprintf(path, sizeof path, "%s/%s/%s", w->project, FAMILY_ARTIFACTS_DIR, name) >= sizeof path)
		return;
	char **grown = realloc(fam->artifacts, (fam->n_artifacts + 1) * sizeof *grown);
	if (!grown || !(grown[fam->n_artifacts] = strdup(path))) {
		if (grown)
			fam->artifacts = grown;
		w->err = PS_ERR_NOMEM;
		return;
	}
	fam->artifacts = grown;
	fam->n_artifacts++;
}

/* Gives a run's members (one per run-N) their artifacts and agent, and
 * adds a member for each index that left artifacts only. */
static void family_match_run(struct family_walk *w, const struct family_artifacts *a, const char *run_id)
{
	char prefix[NAME_MAX + 2];
	if (!a || (size_t)snprintf(prefix, sizeof prefix, "%s_", run_id) >= sizeof prefix)
		return;
	size_t pl = strlen(prefix);
	for (size_t i = family_lower_bound(a, prefix); !w->err && i < a->n && !strncmp(a->names[i], prefix, pl); i++) {
		int kind, index;
		char *agent = NULL;
		family_note_artifact(w, a->names[i]);
		int parsed = family_artifact_parse(a->names[i], run_id, &kind, &agent, &index);
		if (parsed < 0)
			w->err = PS_ERR_NOMEM;
		if (parsed <= 0)
			continue;
		/* A single run's artifacts have no index: its one child, run-0. */
		int want = index < 0 ? 0 : index;
		struct family_member *m = NULL;
		for (size_t j = 0; j < w->fam->n && !m; j++) {
			struct family_member *c = &w->fam->members[j];
			if (c->kind == FAMILY_RUN && c->run_id && !strcmp(c->run_id, run_id) && c->index == want)
				m = c;
		}
		if (!m && (m = family_add(w))) {
			m->kind = FAMILY_RUN;
			m->index = want;
			if (!(m->run_id = strdup(run_id)))
				w->err = PS_ERR_NOMEM;
		}
		char path[STORE_PROJECT_MAX + NAME_MAX + 32];
		if (m && !m->artifact[kind] &&
		    (size_t)snprintf(path, sizeof path, "%s/%s/%s", w->project, FAMILY_ARTIFACTS_DIR, a->names[i]) <
			    sizeof path &&
		    !(m->artifact[kind] = strdup(path)))
			w->err = PS_ERR_NOMEM;
		if (m && !m->agent) {
			m->agent = agent;
			agent = NULL;
		}
		free(agent);
	}
}

/* ------------------------------------------------------------ the names */

/* Whether the n bytes at name are a time as pi writes it in file names
 * (2026-11-29T19-11-30-970Z). */
static int family_file_time_like(const char *name, size_t n)
{
	static const char shape[] = "dddd-dd-ddTdd-dd-dd-dddZ";
	if (n != sizeof shape - 1)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (shape[i] == 'd' ? name[i] < '0' || name[i] > '9' : name[i] != shape[i])
			return 0;
	return 1;
}

/* "2026-11-29T19:11:30.970Z" (a header's timestamp) as pi writes times
 * in file names, "2026-11-29T19-11-30-970Z": 1, else 0. */
static int family_file_time(const char *iso, size_t n, char out[32])
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	if (n != sizeof shape - 1)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int digit = iso[i] >= '0' && iso[i] <= '9';
		if (shape[i] == 'd' ? !digit : iso[i] != shape[i])
			return 0;
		out[i] = iso[i] == ':' || iso[i] == '.' ? '-' : iso[i];
	}
	out[n] = '\0';
	return 1;
}

/* The "timestamp" of a session file's header line (its first), as pi
 * writes times in file names: 1, else 0. */
static int family_header_time(int projfd, const char *rel, char out[32])
{
	char head[4096];
	int fd = openat(projfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t got = fd >= 0 ? pread(fd, head, sizeof head - 1, 0) : -1;
	if (fd >= 0)
		close(fd);
	if (got <= 0)
		return 0;
	head[got] = '\0';
	char *nl = strchr(head, '\n');
	if (nl)
		*nl = '\0';
	/* pi writes the header with JSON.stringify: no space after ':'. */
	const char *key = strstr(head, "\"timestamp\":\"");
	if (!key || !strstr(head, "\"type\":\"session\""))
		return 0;
	key += strlen("\"timestamp\":\"");
	const char *end = strchr(key, '"');
	return end && family_file_time(key, (size_t)(end - key), out);
}

/* The time a member started, as pi writes it in file names
 * (2026-11-29T19-11-30-970Z): where its session file's name starts with
 * one (pi's TIMESTAMP_ID.jsonl), that; else its header's timestamp
 * (pi-subagents names a run's file session.jsonl); for a run with
 * artifacts only, its first artifact's modification time (written once).
 * Never a time that moves while a child appends: a name once listed
 * keeps resolving.  "" when none is known. */
static void family_start(int projfd, const struct family_member *m, const char *project, char out[32])
{
	const char *us = m->stem ? strchr(m->stem, '_') : NULL;
	size_t pl = strlen(project) + 1;
	out[0] = '\0';
	if (us && family_file_time_like(m->stem, (size_t)(us - m->stem))) {
		memcpy(out, m->stem, (size_t)(us - m->stem));
		out[us - m->stem] = '\0';
		return;
	}
	if (m->stem) {
		char rel[STORE_PROJECT_MAX + NAME_MAX + 8];
		if ((size_t)snprintf(rel, sizeof rel, "%s/%s.jsonl", m->dir + pl, m->stem) < sizeof rel)
			family_header_time(projfd, rel, out);
		return;
	}
	struct stat sb;
	int have = 0;
	for (int k = 0; !have && k < FAMILY_ARTIFACT_KINDS; k++)
		have = m->artifact[k] && fstatat(projfd, m->artifact[k] + pl, &sb, AT_SYMLINK_NOFOLLOW) == 0;
	struct tm tm;
	char when[24];
	if (!have || !gmtime_r(&sb.st_mtim.tv_sec, &tm) || !strftime(when, sizeof when, "%Y-%m-%dT%H-%M-%S", &tm))
		return;
	snprintf(out, 32, "%.19s-%03uZ", when, (unsigned)(sb.st_mtim.tv_nsec / 1000000) % 1000);
}

/* What a member is called, after its start time: the agent, run id and
 * index of a run; "fork" or its folder, and its session id's first 8
 * characters, for the rest. */
static char *family_base_name(const struct family_member *m, const char *start, const char *folder_of)
{
	char buf[NAME_MAX + 1];
	const char *sep = *start ? "_" : "";
	const char *id = m->stem ? strchr(m->stem, '_') : NULL;
	id = id ? id + 1 : m->stem ? m->stem : "";
	if (m->kind == FAMILY_RUN) {
		/* pi-subagents' run ids are UUIDs: their first 8 characters
		 * tell runs apart at a glance, as git's short hashes do. */
		snprintf(buf, sizeof buf, "%s%s%s_%.8s_%d", start, sep, m->agent ? m->agent : "run", m->run_id,
			 m->index);
	} else {
		/* A file right in the family folder has no folder of its own. */
		const char *folder = m->kind == FAMILY_FORK ? "fork" : strcmp(m->dir, folder_of) ? strrchr(m->dir, '/') + 1 : "";
		snprintf(buf, sizeof buf, "%s%s%s%s%.8s", start, sep, folder, *folder ? "_" : "", id);
	}
	/* A name of the listing holds no '/' and ends in no artifact suffix. */
	for (char *p = buf; *p; p++)
		if (*p == '/')
			*p = '_';
	return strdup(buf);
}

struct family_sorted {
	char start[32];
	unsigned seen; /* how many members before it have its name, itself included */
	struct family_member m;
};

static int family_cmp_start(const void *a, const void *b)
{
	const struct family_sorted *x = a, *y = b;
	int c = strcmp(x->start, y->start);
	if (!c)
		c = strcmp(x->m.name, y->m.name);
	/* The same name twice: by where they lie, so that ~2 goes to the
	 * same one on every listing. */
	if (!c)
		c = strcmp(x->m.dir ? x->m.dir : "", y->m.dir ? y->m.dir : "");
	return c ? c : strcmp(x->m.stem ? x->m.stem : "", y->m.stem ? y->m.stem : "");
}

/* Names every member and puts them in start order; a name met twice gets
 * "~2", "~3"... in that order. */
static void family_name_all(struct family_walk *w, int projfd)
{
	struct family *fam = w->fam;
	struct family_sorted *s = calloc(fam->n ? fam->n : 1, sizeof *s);
	if (!s) {
		w->err = PS_ERR_NOMEM;
		return;
	}
	for (size_t i = 0; i < fam->n; i++) {
		s[i].m = fam->members[i];
		family_start(projfd, &s[i].m, w->project, s[i].start);
		if (!(s[i].m.name = family_base_name(&s[i].m, s[i].start, fam->folder)))
			w->err = PS_ERR_NOMEM;
	}
	if (!w->err)
		qsort(s, fam->n, sizeof *s, family_cmp_start);
	for (size_t i = 0; i < fam->n; i++) {
		fam->members[i] = s[i].m;
		s[i].seen = 1;
		for (size_t j = 0; !w->err && j < i; j++)
			s[i].seen += strcmp(s[j].m.name, s[i].m.name) == 0;
	}
	for (size_t i = 0; !w->err && i < fam->n; i++) {
		if (s[i].seen == 1)
			continue;
		char buf[NAME_MAX + 1];
		snprintf(buf, sizeof buf, "%.240s~%u", s[i].m.name, s[i].seen);
		if (!(fam->members[i].name = strdup(buf)))
			w->err = PS_ERR_NOMEM;
	}
	for (size_t i = 0; i < fam->n; i++)
		if (fam->members[i].name != s[i].m.name)
			free(s[i].m.name);
	free(s);
}

/* --- families kept ------------------------------------------------------- */

static void family_kept_free(struct family_kept *k)
{
	if (!k)
		return;
	family_free(k->fam);
	for (size_t i = 0; i < k->n_sigs; i++)
		free(k->sigs[i].rel);
	free(k->sigs);
	free(k->key);
	free(k);
}

static size_t family_bucket(const char *project, const char *stem)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a over project, '/', stem */
	for (const char *p = project; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ '/') * 1099511628211ULL;
	for (const char *p = stem; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return (size_t)(h % FAMILY_CACHE_BUCKETS);
}

/* The bucket of a kept key "project/stem" (its stem after the last '/'). */
static size_t family_bucket_of_key(const char *key)
{
	const char *slash = strrchr(key, '/');
	char project[STORE_PROJECT_MAX];
	snprintf(project, sizeof project, "%.*s", (int)(slash - key), key);
	return family_bucket(project, slash + 1);
}

static int family_kept_is(const struct family_kept *k, const char *project, const char *stem)
{
	size_t pl = strlen(project);
	return strncmp(k->key, project, pl) == 0 && k->key[pl] == '/' && strcmp(k->key + pl + 1, stem) == 0;
}

/* The family kept for project/stem, a new reference, when every folder it
 * was read from is as it was then; else NULL. */
static struct family *family_kept_get(struct family_cache *c, int projfd, const char *project, const char *stem)
{
	struct family_sig *sigs = NULL;
	struct family *fam = NULL;
	size_t n = 0;
	if (!c)
		return NULL;
	pthread_mutex_lock(&c->lock);
	struct family_kept *k = c->buckets[family_bucket(project, stem)];
	while (k && !family_kept_is(k, project, stem))
		k = k->next;
	/* The stamps are looked at without the lock: a copy of them. */
	if (k && (sigs = malloc(k->n_sigs * sizeof *sigs + 1))) {
		n = k->n_sigs;
		fam = k->fam;
		__atomic_add_fetch(&fam->refs, 1, __ATOMIC_ACQ_REL);
		for (size_t i = 0; i < n; i++) {
			sigs[i] = k->sigs[i];
			sigs[i].rel = strdup(k->sigs[i].rel);
		}
	}
	pthread_mutex_unlock(&c->lock);
	int same = fam != NULL;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		int there = sigs[i].rel && fstatat(projfd, sigs[i].rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (!sigs[i].rel || (sigs[i].ino ? !there || st.st_ino != sigs[i].ino ||
						       st.st_mtim.tv_sec != sigs[i].mtime.tv_sec ||
						       st.st_mtim.tv_nsec != sigs[i].mtime.tv_nsec
						 : there))
			same = 0;
		free(sigs[i].rel);
	}
	free(sigs);
	if (!same && fam) {
		family_free(fam);
		fam = NULL;
	}
	return fam;
}

/* Keeps fam (a reference of its own) as read from *sigs, which it takes. */
static void family_kept_put(struct family_cache *c, const char *project, const char *stem, struct family *fam,
			    struct family_sig **sigs, size_t *n_sigs)
{
	struct family_kept *k = c ? calloc(1, sizeof *k) : NULL;
	if (!k || asprintf(&k->key, "%s/%s", project, stem) < 0) {
		free(k);
		return;
	}
	k->fam = fam;
	__atomic_add_fetch(&fam->refs, 1, __ATOMIC_ACQ_REL);
	k->sigs = *sigs;
	k->n_sigs = *n_sigs;
	*sigs = NULL;
	*n_sigs = 0;
	size_t b = family_bucket(project, stem);
	struct family_kept *old = NULL, *gone = NULL;
	pthread_mutex_lock(&c->lock);
	/* This family's older reading goes, and so does the oldest kept
	 * when the ring is full. */
	for (struct family_kept **l = &c->buckets[b]; *l; l = &(*l)->next)
		if (family_kept_is(*l, project, stem)) {
			old = *l;
			*l = old->next;
			break;
		}
	for (size_t i = 0; old && i < FAMILY_CACHE_FAMILIES; i++)
		if (c->ring[i] == old)
			c->ring[i] = NULL;
	gone = c->ring[c->ring_next];
	if (gone) {
		for (struct family_kept **l = &c->buckets[family_bucket_of_key(gone->key)]; *l; l = &(*l)->next)
			if (*l == gone) {
				*l = gone->next;
				break;
			}
	}
	c->ring[c->ring_next] = k;
	c->ring_next = (c->ring_next + 1) % FAMILY_CACHE_FAMILIES;
	k->next = c->buckets[b];
	c->buckets[b] = k;
	pthread_mutex_unlock(&c->lock);
	family_kept_free(old);
	family_kept_free(gone);
}

ps_err family_read(struct ps_store *store, struct family_cache *cache, const char *project, const char *stem,
		   struct family **out)
{
	struct family_walk w = { .stem = stem };
	int projfd = -1, fd = -1;
	struct family_artifacts *a = NULL;
	ps_err err;
	*out = NULL;
	if (!(w.fam = calloc(1, sizeof *w.fam)))
		return PS_ERR_NOMEM;
	w.fam->refs = 1;
	if (!*project || strlen(project) >= sizeof w.project || strchr(stem, '/'))
		goto done; /* a flat store's sessions keep no families here */
	memcpy(w.project, project, strlen(project) + 1);
	if ((err = store_open_project(store, project, &projfd))) {
		family_free(w.fam);
		return err == PS_ERR_NOMEM ? err : PS_ERR_NOENT;
	}
	fd = openat(projfd, stem, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		goto done;
	struct family *kept = family_kept_get(cache, projfd, project, stem);
	if (kept) {
		close(fd);
		close(projfd);
		family_free(w.fam);
		*out = kept;
		return PS_OK;
	}
	if (!(w.fam->folder = malloc(strlen(project) + strlen(stem) + 2))) {
		close(fd);
		w.err = PS_ERR_NOMEM;
		goto done;
	}
	sprintf(w.fam->folder, "%s/%s", project, stem);
	family_walk_dir(&w, fd, "", 1);
	struct stat ast;
	family_note_sig(&w, FAMILY_ARTIFACTS_DIR,
			fstatat(projfd, FAMILY_ARTIFACTS_DIR, &ast, AT_SYMLINK_NOFOLLOW) == 0 ? &ast : NULL);
	int nomem = 0;
	a = family_artifacts_get(cache, projfd, project, &nomem);
	if (nomem)
		w.err = PS_ERR_NOMEM;
	for (size_t i = 0; !w.err && i < w.n_runs; i++)
		family_match_run(&w, a, w.runs[i]);
	if (!w.err)
		family_name_all(&w, projfd);
	if (!w.err)
		family_kept_put(cache, project, stem, w.fam, &w.sigs, &w.n_sigs);
done:
	family_artifacts_drop(cache, a);
	for (size_t i = 0; i < w.n_runs; i++)
		free(w.runs[i]);
	free(w.runs);
	for (size_t i = 0; i < w.n_sigs; i++)
		free(w.sigs[i].rel);
	free(w.sigs);
	if (projfd >= 0)
		close(projfd);
	if (w.err) {
		family_free(w.fam);
		return w.err;
	}
	*out = w.fam;
	return PS_OK;
}

const struct family_member *family_find(const struct family *fam, const char *name, int *artifact)
{
	for (size_t i = 0; fam && i < fam->n; i++) {
		const struct family_member *m = &fam->members[i];
		size_t nl = strlen(m->name);
		if (strncmp(name, m->name, nl) != 0)
			continue;
		if (!name[nl]) {
			if (!m->stem)
				continue;
			*artifact = -1;
			return m;
		}
		for (int k = 0; k < FAMILY_ARTIFACT_KINDS; k++)
			if (m->artifact[k] && strcmp(name + nl, family_artifact_suffix[k]) == 0) {
				*artifact = k;
				return m;
			}
	}
	return NULL;
}

ps_err family_header_parent(struct ps_store *store, const char *project, const char *stem, char **parent)
{
	return family_header_string(store, project, stem, "parentSession", parent);
}

ps_err family_header_string(struct ps_store *store, const char *project, const char *stem, const char *member,
			    char **parent)
{
	enum { FAMILY_HEADER_MAX = 64 << 10 };
	char rel[NAME_MAX + 8];
	int dir = -1, fd = -1;
	ps_err err = store_open_project(store, project, &dir);
	*parent = NULL;
	if (err)
		return err;
	if ((size_t)snprintf(rel, sizeof rel, "%s.jsonl", stem) >= sizeof rel) {
		close(dir);
		return PS_ERR_NOENT;
	}
	fd = openat(dir, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dir);
	if (fd < 0)
		return errno == ENOMEM ? PS_ERR_NOMEM : PS_ERR_NOENT;
	char *head = malloc(FAMILY_HEADER_MAX);
	ssize_t got = head ? pread(fd, head, FAMILY_HEADER_MAX, 0) : -1;
	close(fd);
	if (!head)
		return PS_ERR_NOMEM;
	const char *nl = got > 0 ? memchr(head, '\n', (size_t)got) : NULL;
	json_t *h = got > 0 ? json_loadb(head, nl ? (size_t)(nl - head) : (size_t)got, 0, NULL) : NULL;
	const char *ps = json_string_value(json_object_get(h, member));
	const char *type = json_string_value(json_object_get(h, "type"));
	if (!type || strcmp(type, "session") != 0)
		ps = NULL;
	if (ps && *ps && !(*parent = strdup(ps)))
		err = PS_ERR_NOMEM;
	json_decref(h);
	free(head);
	return err;
}

/* --- a subagent's session found by id or name, store-wide ---------------- */

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
