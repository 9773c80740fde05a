#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "journal.h"
#include "overlay.h"

/* The log keeps the latest 256 KiB; rejected texts the latest 64. */
#define JOURNAL_MAX_LOG (256u << 10)
#define JOURNAL_MAX_REJECTED 64

static struct {
	pthread_mutex_t lock;
	char *text;
	size_t len;
	unsigned rejected;
} jr = { .lock = PTHREAD_MUTEX_INITIALIZER };

void journal_log(const char *fmt, ...)
{
	char line[2048], stamp[32];
	va_list ap;
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	fprintf(stderr, "pisessionfs: %s\n", line);
	pthread_mutex_lock(&jr.lock);
	size_t add = strlen(stamp) + 1 + strlen(line) + 1;
	if (jr.len + add > JOURNAL_MAX_LOG) {
		/* Drop whole lines from the front. */
		size_t cut = jr.len + add - JOURNAL_MAX_LOG;
		char *nl = cut < jr.len ? memchr(jr.text + cut, '\n', jr.len - cut) : NULL;
		cut = nl ? (size_t)(nl - jr.text) + 1 : jr.len;
		memmove(jr.text, jr.text + cut, jr.len - cut);
		jr.len -= cut;
	}
	char *grown = realloc(jr.text, jr.len + add + 1);
	if (grown) {
		jr.text = grown;
		jr.len += (size_t)sprintf(jr.text + jr.len, "%s %s\n", stamp, line);
	}
	pthread_mutex_unlock(&jr.lock);
}

void journal_reject(const char *path, const char *data, size_t len, const char *why)
{
	const char *base = strrchr(path, '/');
	char kept[512];
	base = base ? base + 1 : path;
	pthread_mutex_lock(&jr.lock);
	unsigned n = ++jr.rejected;
	pthread_mutex_unlock(&jr.lock);
	snprintf(kept, sizeof kept, JOURNAL_REJECTED "/%u-%s", n, base);
	overlay_lock();
	if (n > JOURNAL_MAX_REJECTED) {
		char old[32];
		snprintf(old, sizeof old, "%u-", n - JOURNAL_MAX_REJECTED);
		struct overlay_node *gone = overlay_find_prefix(JOURNAL_REJECTED "/", old);
		if (gone)
			overlay_remove(gone);
	}
	struct overlay_node *node = overlay_add(kept, OVERLAY_FILE, 0444);
	int kept_ok = node && overlay_set_data(node, data, len) == 0;
	overlay_unlock();
	if (kept_ok)
		journal_log("refused %s: %s (your text is kept in MOUNT%s)", path, why, kept);
	else
		journal_log("refused %s: %s (and the text could not be kept: out of memory)", path, why);
}

char *journal_snapshot(size_t *len)
{
	pthread_mutex_lock(&jr.lock);
	char *copy = malloc(jr.len + 1);
	if (copy) {
		if (jr.len)
			memcpy(copy, jr.text, jr.len);
		copy[jr.len] = '\0';
		*len = jr.len;
	}
	pthread_mutex_unlock(&jr.lock);
	return copy;
}

size_t journal_size(void)
{
	pthread_mutex_lock(&jr.lock);
	size_t n = jr.len;
	pthread_mutex_unlock(&jr.lock);
	return n;
}
