/* The mount's memory of families (familycache.h): each project's artifact
 * folder listing and each family read, kept while the folders they were
 * read from are unchanged. */
#include <fcntl.h>
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "familycache.h"
#include "fnv.h"
#include "lockorder.h"

/* Projects whose artifact folder listing is kept. */
#define FAMILY_CACHE_PROJECTS 16
/* Families kept: beyond it the oldest kept goes. */
#define FAMILY_CACHE_FAMILIES 4096
#define FAMILY_CACHE_BUCKETS 8192

const char *const familycache_run_file_suffix[FAMILYCACHE_RUN_FILES] = { "_input.md", "_output.md", "_meta.json" };

struct family_kept {
	char *key; /* "project/stem" */
	size_t bucket, slot; /* where it is in the table and the ring */
	struct family *fam; /* a reference */
	struct family_sig *sigs;
	size_t n_sigs;
	struct family_kept *next; /* bucket chain */
};

struct family_cache {
	pthread_mutex_t lock;
	familycache_ref_fn hold, release;
	struct family_artifacts *kept[FAMILY_CACHE_PROJECTS]; /* most recent first */
	struct family_kept *buckets[FAMILY_CACHE_BUCKETS];
	struct family_kept *ring[FAMILY_CACHE_FAMILIES]; /* in the order kept: the oldest goes first */
	size_t ring_next;
	struct diskmemo *disk; /* borrowed; NULL: nothing kept across mounts */
};

void familycache_set_disk(struct family_cache *c, struct diskmemo *disk)
{
	if (c)
		c->disk = disk;
}

struct diskmemo *familycache_disk(const struct family_cache *c)
{
	return c ? c->disk : NULL;
}

int familycache_sigs_unchanged(int projfd, const struct family_sig *sigs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		int there = sigs[i].rel && fstatat(projfd, sigs[i].rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (!sigs[i].rel || (sigs[i].ino ? !there || st.st_ino != sigs[i].ino ||
							   st.st_mtim.tv_sec != sigs[i].mtime.tv_sec ||
							   st.st_mtim.tv_nsec != sigs[i].mtime.tv_nsec
						 : there))
			return 0;
	}
	return 1;
}

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

struct family_cache *familycache_new(familycache_ref_fn hold, familycache_ref_fn release)
{
	struct family_cache *c = calloc(1, sizeof *c);
	if (c && pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		c = NULL;
	}
	if (c) {
		c->hold = hold;
		c->release = release;
	}
	return c;
}

static void family_kept_free(struct family_cache *c, struct family_kept *k);

void familycache_free(struct family_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < FAMILY_CACHE_FAMILIES; i++)
		family_kept_free(c, c->ring[i]);
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
static int familycache_is_artifact_name(const char *name)
{
	size_t n = strlen(name);
	for (size_t k = 0; k < FAMILYCACHE_RUN_FILES; k++) {
		size_t sn = strlen(familycache_run_file_suffix[k]);
		if (n > sn && strcmp(name + n - sn, familycache_run_file_suffix[k]) == 0)
			return 1;
	}
	return n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

/* The artifact folder of project, listed: a new listing (refs 1), or
 * NULL when it cannot be opened (gone meanwhile) or, with *nomem set,
 * when memory ran out: a listing is never cut short silently. */
static struct family_artifacts *family_artifacts_list(int dirfd, const char *folder, const char *project,
						      const struct stat *sb, int *nomem)
{
	struct family_artifacts *a = calloc(1, sizeof *a);
	int fd = openat(dirfd, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
		if (!familycache_is_artifact_name(de->d_name))
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
 * unchanged (familycache.h). */
struct family_artifacts *familycache_artifacts(struct family_cache *c, int dirfd, const char *folder,
					      const char *project, int *nomem)
{
	struct stat sb;
	if (fstatat(dirfd, folder, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(sb.st_mode))
		return NULL;
	if (c) {
		lockorder_lock(&c->lock, LOCK_FAMILY_CACHE);
		for (size_t i = 0; i < FAMILY_CACHE_PROJECTS && c->kept[i]; i++) {
			struct family_artifacts *a = c->kept[i];
			if (family_artifacts_fresh(a, project, &sb)) {
				a->refs++;
				lockorder_unlock(&c->lock, LOCK_FAMILY_CACHE);
				return a;
			}
		}
		lockorder_unlock(&c->lock, LOCK_FAMILY_CACHE);
	}
	struct family_artifacts *a = family_artifacts_list(dirfd, folder, project, &sb, nomem);
	if (!a || !c)
		return a;
	lockorder_lock(&c->lock, LOCK_FAMILY_CACHE);
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
		lockorder_unlock(&c->lock, LOCK_FAMILY_CACHE), family_artifacts_put(dropped);
	else
		lockorder_unlock(&c->lock, LOCK_FAMILY_CACHE);
	return a;
}

void familycache_artifacts_drop(struct family_cache *c, struct family_artifacts *a)
{
	if (!a)
		return;
	if (!c) {
		family_artifacts_put(a);
		return;
	}
	lockorder_lock(&c->lock, LOCK_FAMILY_CACHE);
	int last = --a->refs == 0;
	lockorder_unlock(&c->lock, LOCK_FAMILY_CACHE);
	if (last)
		family_artifacts_put(a);
}

/* --- families kept ------------------------------------------------------- */

static void family_kept_free(struct family_cache *c, struct family_kept *k)
{
	if (!k)
		return;
	c->release(k->fam);
	for (size_t i = 0; i < k->n_sigs; i++)
		free(k->sigs[i].rel);
	free(k->sigs);
	free(k->key);
	free(k);
}

static size_t family_bucket(const char *project, const char *stem)
{
	uint64_t h = fnv1a_add_str(FNV1A_BASIS, project);
	h = fnv1a_add_str(fnv1a_add(h, "/", 1), stem);
	return (size_t)(h % FAMILY_CACHE_BUCKETS);
}

static int family_kept_is(const struct family_kept *k, const char *project, const char *stem)
{
	size_t pl = strlen(project);
	return strncmp(k->key, project, pl) == 0 && k->key[pl] == '/' && strcmp(k->key + pl + 1, stem) == 0;
}

struct family *familycache_family(struct family_cache *c, int projfd, const char *project, const char *stem)
{
	struct family_sig *sigs = NULL;
	struct family *fam = NULL;
	size_t n = 0;
	if (!c)
		return NULL;
	lockorder_lock(&c->lock, LOCK_FAMILY_CACHE);
	struct family_kept *k = c->buckets[family_bucket(project, stem)];
	while (k && !family_kept_is(k, project, stem))
		k = k->next;
	/* The stamps are looked at without the lock: a copy of them. */
	if (k && (sigs = calloc(k->n_sigs + 1, sizeof *sigs))) {
		n = k->n_sigs;
		fam = k->fam;
		c->hold(fam);
		for (size_t i = 0; i < n; i++) {
			sigs[i] = k->sigs[i];
			sigs[i].rel = strdup(k->sigs[i].rel);
		}
	}
	lockorder_unlock(&c->lock, LOCK_FAMILY_CACHE);
	int same = fam != NULL && familycache_sigs_unchanged(projfd, sigs, n);
	for (size_t i = 0; i < n; i++)
		free(sigs[i].rel);
	free(sigs);
	if (!same && fam) {
		c->release(fam);
		fam = NULL;
	}
	return fam;
}

void familycache_keep(struct family_cache *c, const char *project, const char *stem, struct family *fam,
		      struct family_sig **sigs, size_t *n_sigs)
{
	struct family_kept *k = c ? calloc(1, sizeof *k) : NULL;
	if (!k || asprintf(&k->key, "%s/%s", project, stem) < 0) {
		free(k);
		return;
	}
	k->fam = fam;
	c->hold(fam);
	k->sigs = *sigs;
	k->n_sigs = *n_sigs;
	*sigs = NULL;
	*n_sigs = 0;
	k->bucket = family_bucket(project, stem);
	struct family_kept *old = NULL, *gone = NULL;
	lockorder_lock(&c->lock, LOCK_FAMILY_CACHE);
	/* This family's older reading goes, and so does the oldest kept
	 * when the ring is full. */
	for (struct family_kept **l = &c->buckets[k->bucket]; *l; l = &(*l)->next)
		if (family_kept_is(*l, project, stem)) {
			old = *l;
			*l = old->next;
			c->ring[old->slot] = NULL;
			break;
		}
	gone = c->ring[c->ring_next];
	for (struct family_kept **l = gone ? &c->buckets[gone->bucket] : NULL; l && *l; l = &(*l)->next)
		if (*l == gone) {
			*l = gone->next;
			break;
		}
	k->slot = c->ring_next;
	c->ring[c->ring_next] = k;
	c->ring_next = (c->ring_next + 1) % FAMILY_CACHE_FAMILIES;
	k->next = c->buckets[k->bucket];
	c->buckets[k->bucket] = k;
	lockorder_unlock(&c->lock, LOCK_FAMILY_CACHE);
	family_kept_free(c, old);
	family_kept_free(c, gone);
}
