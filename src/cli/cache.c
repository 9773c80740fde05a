/* `pisession cache [--dir DIR]` and `pisession cache clear [--dir DIR]
 * [STORE]` (cache.h, docs/layout.md "The cache kept across mounts"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cachedir.h"
#include "cache.h"
#include "pathresolve.h"

static const char *cache_state(const struct cachedir_db *d)
{
	if (d->in_use)
		return "in use";
	if (!d->store)
		return "unreadable";
	return d->store_exists ? "kept" : "gone";
}

static int cache_show(const char *dir)
{
	struct cachedir_db *dbs;
	size_t n;
	uint64_t total = 0;
	if (cachedir_list(dir, &dbs, &n) != 0) {
		fprintf(stderr, "pisession: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		total += dbs[i].bytes;
	printf("%s: %zu database%s, %.1f MB (a mount keeps it within -o cache_max, default %d MiB)\n", dir, n,
	       n == 1 ? "" : "s", total / 1e6, CACHEDIR_DEFAULT_MAX_MIB);
	if (n)
		printf("%10s  %-10s  %-10s  %s\n", "SIZE", "LAST USED", "STATE", "STORE");
	for (size_t i = n; i-- > 0;) { /* the latest used first */
		const struct cachedir_db *d = &dbs[i];
		char day[16];
		struct tm tm;
		if (!gmtime_r(&d->used, &tm) || !strftime(day, sizeof day, "%Y-%m-%d", &tm))
			strcpy(day, "?");
		printf("%7.1f MB  %-10s  %-10s  %s\n", d->bytes / 1e6, day, cache_state(d),
		       d->store ? d->store : d->path);
	}
	cachedir_list_free(dbs, n);
	return 0;
}

/* Removes the databases no mount uses (only store's, when given). */
static int cache_clear(const char *dir, const char *store)
{
	struct cachedir_db *dbs;
	size_t n, removed = 0, busy = 0;
	uint64_t freed = 0;
	int rc = 0;
	char *want = NULL;
	if (store && !(want = path_resolve(store))) {
		fprintf(stderr, "pisession: %s: %s\n", store, strerror(errno ? errno : ENOMEM));
		return 1;
	}
	if (cachedir_list(dir, &dbs, &n) != 0) {
		fprintf(stderr, "pisession: %s: %s\n", dir, strerror(errno));
		free(want);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct cachedir_db *d = &dbs[i];
		const char *what = d->store ? d->store : "an unknown store";
		if (want && (!d->store || strcmp(d->store, want) != 0))
			continue;
		int r = cachedir_remove(d->path);
		if (r == 0) {
			printf("removed %s (%.1f MB, %s)\n", d->path, d->bytes / 1e6, what);
			removed++;
			freed += d->bytes;
		} else if (r == 1) {
			printf("kept %s (%.1f MB, %s): a mount uses it; unmount it first\n", d->path, d->bytes / 1e6,
			       what);
			busy++;
		} else {
			fprintf(stderr, "pisession: %s: %s\n", d->path, strerror(errno));
			rc = 1;
		}
	}
	if (want && !removed && !busy) {
		fprintf(stderr, "pisession: no cache of the store %s in %s\n", want, dir);
		rc = 1;
	} else if (!want) {
		printf("%zu removed (%.1f MB), %zu in use\n", removed, freed / 1e6, busy);
	}
	cachedir_list_free(dbs, n);
	free(want);
	return rc;
}

int cmd_cache(int argc, char **argv)
{
	const char *dir_arg = NULL, *store = NULL;
	int clear = 0, rc;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir_arg = argv[++i];
		else if (!strcmp(argv[i], "clear") && i == 2)
			clear = 1;
		else if (clear && !store && argv[i][0] != '-')
			store = argv[i];
		else {
			fprintf(stderr, "usage: pisession cache [--dir DIR]\n"
					"       pisession cache clear [--dir DIR] [STORE]\n");
			return 2;
		}
	}
	char *dir = dir_arg ? strdup(dir_arg) : cachedir_default(path_home());
	if (!dir) {
		fprintf(stderr, "pisession: no cache directory: neither XDG_CACHE_HOME nor a home directory is known\n");
		return 1;
	}
	rc = clear ? cache_clear(dir, store) : cache_show(dir);
	free(dir);
	return rc;
}
