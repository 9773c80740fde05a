#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lockorder.h"
#include "overlay.h"

/* A few dozen nodes at most (editors' side files live for a save), so a
 * list is the right structure. */
struct overlay {
	pthread_mutex_t lock;
	struct overlay_node **nodes;
	size_t n, cap;
	uint64_t serials;
};

struct overlay *overlay_new(void)
{
	struct overlay *ov = calloc(1, sizeof *ov);
	if (!ov)
		return NULL;
	pthread_mutex_init(&ov->lock, NULL);
	return ov;
}

static void overlay_free_node(struct overlay_node *node)
{
	free(node->path);
	draft_put(node->draft);
	free(node->link);
	free(node->edit_of);
	free(node->fork_id);
	free(node->label);
	free(node->backing);
	free(node);
}

void overlay_free(struct overlay *ov)
{
	if (!ov)
		return;
	for (size_t i = 0; i < ov->n; i++)
		overlay_free_node(ov->nodes[i]);
	free(ov->nodes);
	pthread_mutex_destroy(&ov->lock);
	free(ov);
}

void overlay_lock(struct overlay *ov)
{
	lockorder_lock(&ov->lock, LOCK_OVERLAY);
}

void overlay_unlock(struct overlay *ov)
{
	lockorder_unlock(&ov->lock, LOCK_OVERLAY);
}

static int overlay_expired(const struct overlay_node *node)
{
	struct timespec now;
	/* An alias libfuse let go of (psfs_unlink) ends as a saved name does. */
	if (node->kind != OVERLAY_SAVED && !(node->kind == OVERLAY_ALIAS && node->expires.tv_sec))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > node->expires.tv_sec ||
	       (now.tv_sec == node->expires.tv_sec && now.tv_nsec >= node->expires.tv_nsec);
}

static int overlay_listed(const struct overlay_node *node)
{
	return node->kind != OVERLAY_HIDDEN && node->kind != OVERLAY_SAVED && node->kind != OVERLAY_ALIAS;
}

struct overlay_node *overlay_get(struct overlay *ov, const char *path)
{
	for (size_t i = 0; i < ov->n; i++) {
		if (strcmp(ov->nodes[i]->path, path) != 0)
			continue;
		if (overlay_expired(ov->nodes[i])) {
			overlay_remove(ov, ov->nodes[i]);
			return NULL;
		}
		return ov->nodes[i];
	}
	return NULL;
}

void overlay_saved_keep(struct overlay_node *node, double seconds)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)seconds;
	until.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (until.tv_sec > node->expires.tv_sec ||
	    (until.tv_sec == node->expires.tv_sec && until.tv_nsec > node->expires.tv_nsec))
		node->expires = until;
}

void overlay_saved(struct overlay_node *node, double seconds)
{
	node->kind = OVERLAY_SAVED;
	node->temporary = 0;
	node->expires.tv_sec = 0;
	node->expires.tv_nsec = 0;
	overlay_saved_keep(node, seconds);
}

void overlay_touch(struct overlay_node *node)
{
	clock_gettime(CLOCK_REALTIME, &node->mtime);
}

static void overlay_detach(struct overlay *ov, struct overlay_node *node)
{
	for (size_t i = 0; i < ov->n; i++) {
		if (ov->nodes[i] == node) {
			ov->nodes[i] = ov->nodes[--ov->n];
			return;
		}
	}
}

struct overlay_node *overlay_add(struct overlay *ov, const char *path, enum overlay_kind kind, mode_t mode)
{
	struct overlay_node *old = overlay_get(ov, path);
	if (old)
		overlay_remove(ov, old);
	if (ov->n == ov->cap) {
		size_t cap = ov->cap ? ov->cap * 2 : 16;
		struct overlay_node **nodes = realloc(ov->nodes, cap * sizeof *nodes);
		if (!nodes)
			return NULL;
		ov->nodes = nodes;
		ov->cap = cap;
	}
	struct overlay_node *node = calloc(1, sizeof *node);
	if (!node || !(node->path = strdup(path))) {
		free(node);
		return NULL;
	}
	if (kind == OVERLAY_FILE && !(node->draft = draft_new(DRAFT_OVERLAY))) {
		free(node->path);
		free(node);
		return NULL;
	}
	node->kind = kind;
	node->mode = mode;
	node->serial = ++ov->serials;
	overlay_touch(node);
	ov->nodes[ov->n++] = node;
	return node;
}

void overlay_remove(struct overlay *ov, struct overlay_node *node)
{
	overlay_detach(ov, node);
	node->unlinked = 1;
	if (!node->opens)
		overlay_free_node(node);
}

int overlay_rename(struct overlay *ov, struct overlay_node *node, const char *to)
{
	char *path = strdup(to);
	if (!path)
		return -ENOMEM;
	struct overlay_node *old = overlay_get(ov, to);
	if (old && old != node)
		overlay_remove(ov, old);
	free(node->path);
	node->path = path;
	return 0;
}

void overlay_put(struct overlay_node *node)
{
	if (--node->opens == 0 && node->unlinked)
		overlay_free_node(node);
}

int overlay_set_data(struct overlay_node *node, const char *data, size_t len)
{
	if (node->kind == OVERLAY_SYMLINK) {
		char *link = strndup(data, len);
		if (!link)
			return -ENOMEM;
		free(node->link);
		node->link = link;
		return 0;
	}
	struct draft *d = draft_new_with(data, len);
	if (!d)
		return -ENOMEM;
	draft_put(node->draft);
	node->draft = d;
	overlay_touch(node);
	return 0;
}

struct draft *overlay_draft(struct overlay_node *node)
{
	return node->draft ? draft_get(node->draft) : NULL;
}

static const char *overlay_child_name(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strncmp(path, dir, n) != 0)
		return NULL;
	if (n == 1 && dir[0] == '/')
		n = 0;
	if (path[n] != '/' || !path[n + 1] || strchr(path + n + 1, '/'))
		return NULL;
	return path + n + 1;
}

void overlay_list(struct overlay *ov, const char *dir,
		  void (*fill)(void *ctx, const char *name, const struct overlay_node *node), void *ctx)
{
	for (size_t i = 0; i < ov->n; i++) {
		const char *name = overlay_child_name(ov->nodes[i]->path, dir);
		/* libfuse's name for a side file removed while open (psfs_init)
		 * is gone for everyone else. */
		if (name && overlay_listed(ov->nodes[i]) && strncmp(name, ".fuse_hidden", 12) != 0)
			fill(ctx, name, ov->nodes[i]);
	}
}

struct overlay_node *overlay_find_prefix(struct overlay *ov, const char *dir, const char *prefix)
{
	size_t n = strlen(dir), m = strlen(prefix);
	for (size_t i = 0; i < ov->n; i++)
		if (overlay_listed(ov->nodes[i]) && strncmp(ov->nodes[i]->path, dir, n) == 0 &&
		    strncmp(ov->nodes[i]->path + n, prefix, m) == 0)
			return ov->nodes[i];
	return NULL;
}

int overlay_has_children(struct overlay *ov, const char *dir)
{
	size_t n = strlen(dir);
	for (size_t i = 0; i < ov->n; i++)
		if (overlay_listed(ov->nodes[i]) && strncmp(ov->nodes[i]->path, dir, n) == 0 &&
		    ov->nodes[i]->path[n] == '/')
			return 1;
	return 0;
}

void overlay_stat(const struct overlay_node *node, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_uid = node->uid;
	st->st_gid = node->gid;
	st->st_mtim = st->st_ctim = st->st_atim = node->mtime;
	switch (node->kind) {
	case OVERLAY_BRANCH:
	case OVERLAY_CWD:
		st->st_mode = S_IFDIR | (node->mode & 07777);
		st->st_nlink = 2;
		break;
	case OVERLAY_SYMLINK:
		st->st_mode = S_IFLNK | 0777;
		st->st_nlink = 1;
		st->st_size = node->link ? (off_t)strlen(node->link) : 0;
		break;
	default: {
		size_t size = node->draft ? draft_size(node->draft) : 0;
		st->st_mode = S_IFREG | (node->mode & 07777);
		st->st_nlink = 1;
		st->st_size = (off_t)size;
		st->st_blocks = (blkcnt_t)((size + 511) / 512);
		break;
	}
	}
}

int overlay_rewrites_entry(const struct overlay_node *node)
{
	return node->edit_of && !node->unlinked && strcmp(node->edit_of, node->path) == 0;
}
