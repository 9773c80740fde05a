/* A session's family folder (family.h): its child sessions found by a
 * walk that follows no symlink, matched with their runs' artifacts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "family.h"
#include "dirlist.h"
#include "familycache.h"
#include "familydisk.h"

/* How deep below STEM/ a child's session file may lie (pi-subagents: 2,
 * STEM/RUNID/run-N/), and how many members a family may have: a bound
 * on what one lookup costs, whatever the folder holds. */
#define FAMILY_DEPTH 4
#define FAMILY_MAX_MEMBERS 4096

const char *const family_artifact_suffix[FAMILY_ARTIFACT_KINDS] = { ".input.md", ".output.md", ".meta.json" };

/* ------------------------------------------------------------ the walk */

struct family_walk {
	struct family *fam;
	size_t cap;
	char project[STORE_PROJECT_MAX];
	const char *stem;
	char **runs;  /* the folders right below STEM/: each may be a run's */
	size_t n_runs, cap_runs;
	struct family_sig *sigs; /* what it was read from (familycache_keep) */
	size_t n_sigs, cap_sigs;
	/* Each member's start time, where the walk read it from its folder
	 * (a path from the project folder would walk the project's
	 * thousands of names again); as many as the members' room. */
	struct family_start_known {
		int known;
		char at[32];
	} *starts;
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

static void family_hold(struct family *fam)
{
	__atomic_add_fetch(&fam->refs, 1, __ATOMIC_ACQ_REL);
}

struct family_cache *family_cache_new(void)
{
	return familycache_new(family_hold, family_free);
}

void family_cache_free(struct family_cache *c)
{
	familycache_free(c);
}

void family_cache_set_disk(struct family_cache *c, struct diskmemo *disk)
{
	familycache_set_disk(c, disk);
}

static struct family_member *family_add(struct family_walk *w)
{
	struct family *fam = w->fam;
	if (fam->n == FAMILY_MAX_MEMBERS)
		return NULL;
	if (fam->n == w->cap) {
		size_t ncap = w->cap ? 2 * w->cap : 8;
		struct family_member *grown = realloc(fam->members, ncap * sizeof *grown);
		if (grown)
			fam->members = grown;
		struct family_start_known *starts = grown ? realloc(w->starts, ncap * sizeof *starts) : NULL;
		if (!starts) {
			w->err = PS_ERR_NOMEM;
			return NULL;
		}
		w->starts = starts;
		w->cap = ncap;
	}
	w->starts[fam->n].known = 0;
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

static ps_err family_session_start(int dirfd, const char *rel, const char *stem, char out[32]);

/* A session file found at rel (below STEM/, "" for STEM/ itself), in the
 * folder open at dirfd. */
static void family_found(struct family_walk *w, int dirfd, const char *rel, const char *file)
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
	if (!m->dir || !m->stem) {
		w->err = PS_ERR_NOMEM;
		return;
	}
	struct family_start_known *start = &w->starts[m - w->fam->members];
	ps_err err = family_session_start(dirfd, file, m->stem, start->at);
	if (err)
		w->err = err;
	start->known = 1;
}

/* Whether the folder listed holds the session file NAME.jsonl: then the
 * folder NAME is that session's own family, not its parent's. */
static int family_is_session_folder(const struct dirlist *here, const char *name)
{
	char file[NAME_MAX + 8];
	if ((size_t)snprintf(file, sizeof file, "%s.jsonl", name) >= sizeof file)
		return 0;
	return dirlist_has(here, file, DIRLIST_FILE);
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

/* Marks the member found in rel with the given stem as having a family
 * of its own: the folder stem lies beside its file. */
static void family_mark_owner(struct family_walk *w, const char *rel, const char *stem)
{
	size_t pl = strlen(w->project) + 1 + strlen(w->stem);
	for (size_t i = 0; i < w->fam->n; i++) {
		struct family_member *m = &w->fam->members[i];
		const char *in = m->dir ? m->dir + pl : NULL; /* "" or "/REL" */
		if (in && m->stem && !strcmp(m->stem, stem) &&
		    (*rel ? in[0] == '/' && !strcmp(in + 1, rel) : !*in))
			m->has_family = 1;
	}
}

static void family_walk_dir(struct family_walk *w, int fd, const char *rel, int depth)
{
	struct stat st;
	char where[PATH_MAX];
	char **owned = NULL; /* folders here that are a session's own family */
	size_t n_owned = 0;
	struct dirlist here = DIRLIST_INIT;
	if (fstat(fd, &st) == 0 && (size_t)snprintf(where, sizeof where, "%s%s%s", w->stem, *rel ? "/" : "", rel) <
					  sizeof where)
		family_note_sig(w, where, &st);
	ps_err err = dirlist_read(fd, &here);
	if (err == PS_ERR_NOMEM)
		w->err = err;
	/* A folder holding no session file owns no family folder: its
	 * thousands of run folders are not each looked up in the listing. */
	int has_sessions = 0;
	for (size_t i = 0; i < here.n && !has_sessions; i++) {
		size_t n = strlen(here.entries[i].name);
		has_sessions = here.entries[i].type == DIRLIST_FILE && n > 6 &&
			       strcmp(here.entries[i].name + n - 6, ".jsonl") == 0;
	}
	for (size_t i = 0; !w->err && i < here.n; i++) {
		const char *name = here.entries[i].name;
		enum dirlist_type type = here.entries[i].type;
		size_t n = strlen(name);
		if (type == DIRLIST_FILE && n > 6 && strcmp(name + n - 6, ".jsonl") == 0) {
			family_found(w, fd, rel, name);
		} else if (type == DIRLIST_DIR && has_sessions && family_is_session_folder(&here, name)) {
			char **grown = realloc(owned, (n_owned + 1) * sizeof *grown);
			if (!grown || !(grown[n_owned] = strdup(name))) {
				if (grown)
					owned = grown;
				w->err = PS_ERR_NOMEM;
				continue;
			}
			owned = grown;
			n_owned++;
		} else if (type == DIRLIST_DIR && depth < FAMILY_DEPTH) {
			if (depth == 1 && strcmp(name, "forks") != 0)
				family_note_run(w, name);
			char sub[PATH_MAX];
			if ((size_t)snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", name) >= sizeof sub)
				continue;
			int subfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (subfd >= 0)
				family_walk_dir(w, subfd, sub, depth + 1);
		}
	}
	dirlist_free(&here);
	close(fd);
	/* After the loop: the file may be listed after its folder. */
	for (size_t i = 0; i < n_owned; i++) {
		if (!w->err)
			family_mark_owner(w, rel, owned[i]);
		free(owned[i]);
	}
	free(owned);
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
		size_t sn = strlen(familycache_run_file_suffix[k]);
		if (n <= rl + 1 + sn || strcmp(name + n - sn, familycache_run_file_suffix[k]) != 0)
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

/* The time a member started, as pi writes it in file names
 * (2026-11-29T19-11-30-970Z): where its session file's name starts with
 * one (pi's TIMESTAMP_ID.jsonl), that; else its header's timestamp
 * (pi-subagents names a run's file session.jsonl); for a run with
 * artifacts only, its first artifact's modification time (written once).
 * Never a time that moves while a child appends: a name once listed
 * keeps resolving.  "" when none is known. */
static ps_err family_header_value(int dirfd, const char *rel, const char *member, char **value);

/* The start time of a session file, dirfd/rel, named stem: from its
 * name, else its header. */
static ps_err family_session_start(int dirfd, const char *rel, const char *stem, char out[32])
{
	const char *us = strchr(stem, '_');
	char *when = NULL;
	out[0] = '\0';
	if (us && family_file_time_like(stem, (size_t)(us - stem))) {
		memcpy(out, stem, (size_t)(us - stem));
		out[us - stem] = '\0';
		return PS_OK;
	}
	ps_err err = family_header_value(dirfd, rel, "timestamp", &when);
	if (when && !family_file_time(when, strlen(when), out))
		out[0] = '\0';
	free(when);
	return err == PS_ERR_NOMEM ? err : PS_OK;
}

static ps_err family_start(int projfd, const struct family_member *m, const char *project, char out[32])
{
	size_t pl = strlen(project) + 1;
	out[0] = '\0';
	if (m->stem) {
		char rel[STORE_PROJECT_MAX + NAME_MAX + 8];
		if ((size_t)snprintf(rel, sizeof rel, "%s/%s.jsonl", m->dir + pl, m->stem) >= sizeof rel)
			return PS_OK;
		return family_session_start(projfd, rel, m->stem, out);
	}
	struct stat sb;
	int have = 0;
	for (int k = 0; !have && k < FAMILY_ARTIFACT_KINDS; k++)
		have = m->artifact[k] && fstatat(projfd, m->artifact[k] + pl, &sb, AT_SYMLINK_NOFOLLOW) == 0;
	struct tm tm;
	char when[24];
	if (have && gmtime_r(&sb.st_mtim.tv_sec, &tm) && strftime(when, sizeof when, "%Y-%m-%dT%H-%M-%S", &tm))
		snprintf(out, 32, "%.19s-%03uZ", when, (unsigned)(sb.st_mtim.tv_nsec / 1000000) % 1000);
	return PS_OK;
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
		if (w->starts && w->starts[i].known)
			memcpy(s[i].start, w->starts[i].at, sizeof s[i].start);
		else if (family_start(projfd, &s[i].m, w->project, s[i].start))
			w->err = PS_ERR_NOMEM;
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

ps_err family_read(struct ps_store *store, struct family_cache *cache, const char *project, const char *stem,
		   struct family **out)
{
	int projfd = -1;
	*out = NULL;
	if (!*project || strlen(project) >= STORE_PROJECT_MAX || strchr(stem, '/'))
		return family_read_at(store, cache, -1, project, stem, out);
	ps_err err = store_open_project(store, project, &projfd);
	if (err)
		return err == PS_ERR_NOMEM ? err : PS_ERR_NOENT;
	err = family_read_at(store, cache, projfd, project, stem, out);
	close(projfd);
	return err;
}

ps_err family_read_at(struct ps_store *store, struct family_cache *cache, int projfd, const char *project,
		      const char *stem, struct family **out)
{
	struct family_walk w = { .stem = stem };
	int fd = -1;
	struct family_artifacts *a = NULL;
	(void)store;
	*out = NULL;
	if (!(w.fam = calloc(1, sizeof *w.fam)))
		return PS_ERR_NOMEM;
	w.fam->refs = 1;
	if (projfd < 0 || !*project || strlen(project) >= sizeof w.project || strchr(stem, '/'))
		goto done; /* a flat store's sessions keep no families here */
	memcpy(w.project, project, strlen(project) + 1);
	/* Kept while every folder it was read from, STEM/ first, is as it
	 * was: no need to open STEM/ to know it is there. */
	struct family *kept = familycache_family(cache, projfd, project, stem);
	if (kept) {
		family_free(w.fam);
		*out = kept;
		return PS_OK;
	}
	struct stat folder_st;
	struct filestamp folder_stamp;
	if (fstatat(projfd, stem, &folder_st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(folder_st.st_mode))
		goto done;
	filestamp_of(&folder_st, &folder_stamp);
	if ((kept = familydisk_get(cache, projfd, project, stem, &folder_stamp))) {
		family_free(w.fam);
		*out = kept;
		return PS_OK;
	}
	fd = openat(projfd, stem, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		goto done;
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
	a = familycache_artifacts(cache, projfd, FAMILY_ARTIFACTS_DIR, project, &nomem);
	if (nomem)
		w.err = PS_ERR_NOMEM;
	for (size_t i = 0; !w.err && i < w.n_runs; i++)
		family_match_run(&w, a, w.runs[i]);
	if (!w.err)
		family_name_all(&w, projfd);
	if (!w.err)
		familydisk_put(cache, project, stem, &folder_stamp, w.fam, w.sigs, w.n_sigs);
	if (!w.err)
		familycache_keep(cache, project, stem, w.fam, &w.sigs, &w.n_sigs);
done:
	familycache_artifacts_drop(cache, a);
	for (size_t i = 0; i < w.n_runs; i++)
		free(w.runs[i]);
	free(w.runs);
	for (size_t i = 0; i < w.n_sigs; i++)
		free(w.sigs[i].rel);
	free(w.sigs);
	free(w.starts);
	if (w.err) {
		family_free(w.fam);
		return w.err;
	}
	*out = w.fam;
	return PS_OK;
}

ps_err family_stat_member(int projfd, const char *project, const struct family_member *m, struct stat *st)
{
	size_t pl = strlen(project);
	char rel[PATH_MAX];
	if (!m->stem || !m->dir || strncmp(m->dir, project, pl) != 0 || m->dir[pl] != '/' ||
	    (size_t)snprintf(rel, sizeof rel, "%s/%s.jsonl", m->dir + pl + 1, m->stem) >= sizeof rel)
		return PS_ERR_NOENT;
	if (fstatat(projfd, rel, st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOMEM ? PS_ERR_NOMEM : PS_ERR_NOENT;
	return S_ISREG(st->st_mode) ? PS_OK : PS_ERR_NOENT;
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

/* A string member of the header line (the first, at most 64 KiB) of the
 * file rel below dirfd: PS_OK with *value new, or NULL where the file is
 * no session or its header has no such string; PS_ERR_NOENT (no file),
 * PS_ERR_NOMEM. */
static ps_err family_header_value(int dirfd, const char *rel, const char *member, char **value)
{
	enum { FAMILY_HEADER_MAX = 64 << 10 };
	ps_err err = PS_OK;
	*value = NULL;
	int fd = openat(dirfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOMEM ? PS_ERR_NOMEM : PS_ERR_NOENT;
	char *head = malloc(FAMILY_HEADER_MAX);
	ssize_t got = head ? pread(fd, head, FAMILY_HEADER_MAX, 0) : -1;
	close(fd);
	if (!head)
		return PS_ERR_NOMEM;
	const char *nl = got > 0 ? memchr(head, '\n', (size_t)got) : NULL;
	json_error_t why;
	json_t *h = got > 0 ? json_loadb(head, nl ? (size_t)(nl - head) : (size_t)got, 0, &why) : NULL;
	if (got > 0 && !h && json_error_code(&why) == json_error_out_of_memory)
		err = PS_ERR_NOMEM;
	const char *v = json_string_value(json_object_get(h, member));
	const char *type = json_string_value(json_object_get(h, "type"));
	if (!type || strcmp(type, "session") != 0)
		v = NULL;
	if (v && *v && !(*value = strdup(v)))
		err = PS_ERR_NOMEM;
	json_decref(h);
	free(head);
	return err;
}

ps_err family_header_string(struct ps_store *store, const char *project, const char *stem, const char *member,
			    char **value)
{
	char rel[NAME_MAX + 8];
	int dir = -1;
	ps_err err = store_open_project(store, project, &dir);
	*value = NULL;
	if (err)
		return err;
	if ((size_t)snprintf(rel, sizeof rel, "%s.jsonl", stem) < sizeof rel)
		err = family_header_value(dir, rel, member, value);
	else
		err = PS_ERR_NOENT;
	close(dir);
	return err;
}
