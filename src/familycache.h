/* The mount's memory of families (family.h): each project's artifact
 * folder listing, kept while the folder's stamp is unchanged, and each
 * family read, kept with the stamps (inode, mtime) of the folders it was
 * read from.  For family.c, which holds it as family.h's struct
 * family_cache.  Thread-
 * safe; its lock is a leaf.  A cache may be NULL: nothing is kept. */
#ifndef PS_FAMILYCACHE_H
#define PS_FAMILYCACHE_H

#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

struct family;
struct family_cache;

/* pi-subagents' names of a run's input, output and meta files
 * (getArtifactPaths), in family.h's enum family_artifact order. */
#define FAMILYCACHE_RUN_FILES 3
extern const char *const familycache_run_file_suffix[FAMILYCACHE_RUN_FILES];

/* A cache whose families are held and released with these (family.c's
 * reference count): new, or NULL without memory; freed with
 * familycache_free (NULL: nothing). */
typedef void (*familycache_ref_fn)(struct family *fam);
struct family_cache *familycache_new(familycache_ref_fn hold, familycache_ref_fn release);
void familycache_free(struct family_cache *c);

/* A project's artifact folder listed: the run files' names, sorted. */
struct family_artifacts {
	char *project;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	char **names; /* sorted; the runs' files only */
	size_t n;
	unsigned refs; /* guarded by the cache's lock */
};

/* The listing of the artifact folder (its name below dirfd, the project's
 * folder), from the cache while the folder is unchanged: a reference, dropped with
 * familycache_artifacts_drop; NULL when there is no folder, or with
 * *nomem set when memory ran out (never a listing cut short). */
struct family_artifacts *familycache_artifacts(struct family_cache *c, int dirfd, const char *folder,
					      const char *project, int *nomem);
void familycache_artifacts_drop(struct family_cache *c, struct family_artifacts *a);

/* What a family was read from: each folder walked, and the project's
 * artifact folder (ino 0: there was none), by its stamp. */
struct family_sig {
	char *rel; /* relative to the project folder */
	ino_t ino;
	struct timespec mtime;
};

/* Whether every folder of sigs[0..n) (relative to projfd, the project's
 * folder) is as it was when noted: 1, else 0. */
int familycache_sigs_unchanged(int projfd, const struct family_sig *sigs, size_t n);

/* Backs the cache with the one kept across mounts (diskmemo.h; borrowed,
 * outlives the cache): family.c keeps each family read there too. */
struct diskmemo;
void familycache_set_disk(struct family_cache *c, struct diskmemo *disk);
struct diskmemo *familycache_disk(const struct family_cache *c);

/* The family kept for project/stem (projfd its project folder), a new
 * reference, when every folder it was read from is as it was then;
 * else NULL. */
struct family *familycache_family(struct family_cache *c, int projfd, const char *project, const char *stem);
/* Keeps fam (taking a reference of its own) as read from *sigs, which it
 * takes (*sigs NULL, *n_sigs 0 after). */
void familycache_keep(struct family_cache *c, const char *project, const char *stem, struct family *fam,
		      struct family_sig **sigs, size_t *n_sigs);

#endif
