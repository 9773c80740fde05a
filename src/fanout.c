#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include "fanout.h"
#include "giveback.h"

struct fanout {
	size_t n;
	atomic_size_t next;  /* the next item no thread has taken */
	atomic_int stopped;
	fanout_item_fn item;
	void *ctx;
};

unsigned fanout_threads(unsigned threads)
{
	if (!threads) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		threads = cores > 0 ? (unsigned)cores : 1;
	}
	return threads > FANOUT_MAX_THREADS ? FANOUT_MAX_THREADS : threads;
}

/* Takes items until none is left or the fan-out was stopped. */
static void *fanout_worker(void *arg)
{
	struct fanout *f = arg;
	for (;;) {
		if (atomic_load(&f->stopped))
			break;
		size_t i = atomic_fetch_add(&f->next, 1);
		if (i >= f->n)
			break;
		f->item(f->ctx, i);
	}
	return NULL;
}

/* A fan-out over this many items gives back what its threads freed
 * (giveback.h). */
#define FANOUT_GIVE_BACK_AFTER 64

int fanout_run(size_t n, unsigned threads, fanout_item_fn item, fanout_stop_fn stop, void *ctx)
{
	struct fanout f = { .n = n, .item = item, .ctx = ctx };
	pthread_t helper[FANOUT_MAX_THREADS];
	unsigned started = 0;
	threads = fanout_threads(threads);
	if (threads > n)
		threads = n ? (unsigned)n : 1;
	atomic_init(&f.next, 0);
	atomic_init(&f.stopped, 0);
	/* Default stacks: an item may parse a line with jansson, whose
	 * recursion goes as deep as the line's nesting (up to 2048). */
	while (started + 1 < threads && pthread_create(&helper[started], NULL, fanout_worker, &f) == 0)
		started++;
	for (;;) {
		if (stop && stop(ctx)) {
			atomic_store(&f.stopped, 1);
			break;
		}
		size_t i = atomic_fetch_add(&f.next, 1);
		if (i >= n)
			break;
		item(ctx, i);
	}
	for (unsigned t = 0; t < started; t++)
		pthread_join(helper[t], NULL);
	if (n >= FANOUT_GIVE_BACK_AFTER)
		giveback_free_memory();
	return atomic_load(&f.stopped);
}
