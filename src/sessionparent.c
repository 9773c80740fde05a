#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sessionparent.h"

/* path relative to root ("PROJECT/STEM.jsonl" or "STEM.jsonl": what the
 * mount shows as a session directory), or NULL. */
static const char *sessionparent_in(const char *root, size_t n, const char *path)
{
	if (strncmp(path, root, n) != 0 || path[n] != '/')
		return NULL;
	const char *rel = path + n + 1, *slash = strchr(rel, '/');
	if (slash && (slash == rel || strchr(slash + 1, '/')))
		return NULL;
	const char *file = slash ? slash + 1 : rel;
	size_t len = strlen(file);
	if (len <= 6 || strcmp(file + len - 6, ".jsonl") != 0 || file[0] == '.')
		return NULL;
	if (slash && (rel[0] == '.' && (slash == rel + 1 || (rel[1] == '.' && slash == rel + 2))))
		return NULL;
	return rel;
}

char *sessionparent_target(const struct ps_session *s)
{
	if (s->parent_session == PS_NIL || !s->path)
		return NULL;
	const char *parent = session_str(s, s->parent_session);
	/* Without a store, the session's own folder stands for it. */
	const char *own_slash = strrchr(s->path, '/');
	const char *root = s->store_root;
	size_t n = root ? strlen(root) : own_slash ? (size_t)(own_slash - s->path) : 0;
	if (!root)
		root = s->path;
	while (n > 1 && root[n - 1] == '/')
		n--;
	const char *mine = sessionparent_in(root, n, s->path);
	const char *theirs = sessionparent_in(root, n, parent);
	if (!mine || !theirs)
		return NULL;
	const char *mine_slash = strchr(mine, '/'), *their_slash = strchr(theirs, '/');
	size_t mine_dir = mine_slash ? (size_t)(mine_slash - mine) : 0;
	size_t their_dir = their_slash ? (size_t)(their_slash - theirs) : 0;
	char *out = NULL;
	int len = (int)strlen(theirs) - 6;
	int r;
	if (mine_dir == their_dir && strncmp(mine, theirs, mine_dir) == 0)
		r = asprintf(&out, "../%.*s", len - (int)(their_dir ? their_dir + 1 : 0),
			     theirs + (their_dir ? their_dir + 1 : 0));
	else
		r = asprintf(&out, "%s%.*s", mine_slash ? "../../" : "../", len, theirs);
	return r < 0 ? NULL : out;
}
