/* The cache directory's bound at mount (cachesweep.h). */
#include <pthread.h>
#include <stdlib.h>
#include "cachesweep.h"
#include "diskmemo.h"
#include "pisessionfs.h"

struct cachesweep {
	pthread_t thread;
	struct psfs *fs;
	uint64_t max_bytes;
};

static void *cachesweep_main(void *arg)
{
	struct cachesweep *s = arg;
	diskmemo_set_bound(s->fs->disk, s->max_bytes);
	return NULL;
}

struct cachesweep *cachesweep_start(struct psfs *fs, uint64_t max_bytes)
{
	struct cachesweep *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->fs = fs;
	s->max_bytes = max_bytes;
	if (pthread_create(&s->thread, NULL, cachesweep_main, s) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

void cachesweep_stop(struct cachesweep *s)
{
	if (!s)
		return;
	pthread_join(s->thread, NULL);
	free(s);
}
