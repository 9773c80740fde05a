#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "entryjson.h"
#include "escape.h"
#include "layout.h"
#include "sessionparent.h"

int layout_is_dir(enum layout_kind kind)
{
	return kind == LAYOUT_TREE_DIR || kind == LAYOUT_LABELS_DIR || kind == LAYOUT_ENTRIES_DIR ||
	       kind == LAYOUT_IMAGES_DIR;
}

int layout_is_symlink(enum layout_kind kind)
{
	return kind == LAYOUT_LEAF || kind == LAYOUT_LABEL || kind == LAYOUT_PARENT;
}

char *layout_symlink_target(const struct ps_session *s, const struct layout_node *node)
{
	if (node->kind == LAYOUT_PARENT)
		return sessionparent_target(s);
	char *path = layout_entry_path(s, node->entry);
	char *out = NULL;
	if (!path || node->kind != LAYOUT_LABEL)
		return path;
	if (asprintf(&out, "../%s", path) < 0)
		out = NULL;
	free(path);
	return out;
}

static int layout_parse_depth(const char *name, char sep, uint32_t *depth, const char **rest)
{
	uint64_t d = 0;
	const char *p = name;
	while (*p >= '0' && *p <= '9' && d < PS_NIL)
		d = d * 10 + (uint64_t)(*p++ - '0');
	if (p - name < 4 || *p != sep || d == 0 || d >= PS_NIL)
		return 0;
	*depth = (uint32_t)d;
	*rest = p + 1;
	return 1;
}

/* A shortened name cannot be decoded back to its id or label, and a label
 * holding '~' may read like an id name with a suffix: compare with the
 * names the candidates are listed under (and were listed under before).
 * Only names holding '~' take this path. */
static ps_err layout_scan_branch(const struct ps_session *s, uint32_t dir, const char *name, uint32_t *out)
{
	for (uint32_t b = s->branches[dir].first_sub; b != PS_NIL; b = s->branches[b].next_sub) {
		char *listed = layout_branch_name(s, b);
		/* A labelled branch keeps resolving by its id name too. */
		char *by_id = listed ? layout_branch_id_name(s, b) : NULL;
		char *before = NULL;
		const struct ps_entry *e = &s->entries[s->branches[b].first];
		if (by_id && strcmp(listed, by_id) != 0) {
			const char *label = session_str(s, e->label);
			char *esc = escape_name_max(label, strlen(label), LAYOUT_MAX_LABEL);
			if (!esc || asprintf(&before, "%04u~%s", e->depth, esc) < 0)
				before = NULL;
			free(esc);
			if (!before) {
				free(by_id);
				by_id = NULL;
			}
		}
		if (!by_id) {
			free(listed);
			return PS_ERR_NOMEM;
		}
		int same = strcmp(listed, name) == 0 || strcmp(by_id, name) == 0 || (before && strcmp(before, name) == 0);
		free(listed);
		free(by_id);
		free(before);
		if (same) {
			*out = b;
			return PS_OK;
		}
	}
	return PS_ERR_NOENT;
}

static ps_err layout_scan_entry(const struct ps_session *s, uint32_t dir, const char *name, uint32_t *out)
{
	for (uint32_t e = s->branches[dir].first; e != PS_NIL; e = s->entries[e].first_child) {
		char *listed = layout_entry_name(s, e);
		if (!listed)
			return PS_ERR_NOMEM;
		int same = strcmp(listed, name) == 0;
		free(listed);
		if (same) {
			*out = e;
			return PS_OK;
		}
	}
	return PS_ERR_NOENT;
}

/* Finds the sub-branch of dir named `name` (NNNN~id or NNNN~label, as
 * listed now or before). */
static ps_err layout_find_branch(const struct ps_session *s, uint32_t dir, const char *name, uint32_t *out)
{
	uint32_t depth;
	const char *rest;
	if (!layout_parse_depth(name, '~', &depth, &rest))
		return PS_ERR_NOENT;
	char *key = strdup(rest);
	if (!key)
		return PS_ERR_NOMEM;
	size_t n = escape_unname(key);
	ps_err err = PS_ERR_NOENT;
	if (n != (size_t)-1 && n != 0 && strlen(key) == n) {
		for (uint32_t e = session_find(s, key, n); e != PS_NIL; e = s->entries[e].prev_same_id) {
			uint32_t b = s->entries[e].branch;
			if (b != 0 && s->branches[b].first == e && s->branches[b].parent == dir &&
			    s->entries[e].depth == depth) {
				*out = b;
				err = PS_OK;
				goto out;
			}
		}
	}
	free(key);
	if (!(key = layout_typed_label(rest, &err)) && err)
		return err;
	err = PS_ERR_NOENT;
	for (uint32_t i = 0; key && i < s->n_labeled; i++) {
		uint32_t e = s->labeled[i];
		uint32_t b = s->entries[e].branch;
		if (layout_label_eq(s, e, key) && b != 0 && s->branches[b].first == e &&
		    s->branches[b].parent == dir && s->entries[e].depth == depth &&
		    layout_branch_label_wins(s, b)) {
			*out = b;
			err = PS_OK;
			goto out;
		}
	}
	if (strchr(rest, '~'))
		err = layout_scan_branch(s, dir, name, out);
out:
	free(key);
	return err;
}

static ps_err layout_find_entry(const struct ps_session *s, uint32_t dir, const char *name, uint32_t *out)
{
	uint32_t depth;
	const char *rest;
	size_t len = strlen(name);
	if (len < 4 || strcmp(name + len - 3, ".md") != 0 || !layout_parse_depth(name, '-', &depth, &rest))
		return PS_ERR_NOENT;
	const char *dot = memchr(rest, '.', (size_t)(name + len - 3 - rest));
	if (!dot)
		return PS_ERR_NOENT;
	if (escape_is_shortened(rest))
		return layout_scan_entry(s, dir, name, out);
	char *key = strndup(dot + 1, (size_t)(name + len - 3 - (dot + 1)));
	if (!key)
		return PS_ERR_NOMEM;
	size_t n = escape_unname(key);
	ps_err err = PS_ERR_NOENT;
	if (n == (size_t)-1 || n == 0 || strlen(key) != n)
		goto out;
	for (uint32_t e = session_find(s, key, n); e != PS_NIL; e = s->entries[e].prev_same_id) {
		if (s->entries[e].branch != dir || s->entries[e].depth != depth)
			continue;
		/* The kind must match too: one entry, one name. */
		char *canon = layout_entry_name(s, e);
		if (!canon) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		int same = strcmp(canon, name) == 0;
		free(canon);
		if (same) {
			*out = e;
			err = PS_OK;
			goto out;
		}
	}
out:
	free(key);
	return err;
}

char *layout_typed_label(const char *name, ps_err *err)
{
	size_t n;
	char *label = escape_typed_string(name, &n);
	*err = PS_OK;
	if (label || n == (size_t)-1) {
		if (!label)
			*err = PS_ERR_NOMEM;
		return label;
	}
	if (!(label = strdup(name))) {
		*err = PS_ERR_NOMEM;
		return NULL;
	}
	n = escape_unname(label);
	if (n == (size_t)-1 || n == 0 || strlen(label) != n) {
		free(label);
		label = NULL;
	}
	return label;
}

/* Whether name is one an entry's label was listed under, or may be listed
 * under when another entry's label comes or goes (label, label~<id>,
 * label~<id>~L<line>, as shown now or before): such names keep resolving. */
static ps_err layout_label_alias(const struct ps_session *s, uint32_t e, const char *name, const char *typed, int *same)
{
	const char *label = session_str(s, s->entries[e].label);
	*same = typed && strcmp(label, typed) == 0;
	if (*same)
		return PS_OK;
	for (int which = 1; which < 3 && !*same; which++) {
		char *now = layout_label_candidate(s, e, label, which);
		if (!now)
			return PS_ERR_NOMEM;
		*same = strcmp(now, name) == 0;
		free(now);
	}
	/* The names of before: escape_name_max, suffixes as above. */
	char *old = escape_name_max(label, strlen(label), LAYOUT_MAX_LABEL);
	const char *id = session_str(s, s->entries[e].id);
	char *eid = escape_name_max(id, strlen(id), LAYOUT_MAX_ID);
	size_t ol = old ? strlen(old) : 0, il = eid ? strlen(eid) : 0;
	if (!old || !eid) {
		free(old);
		free(eid);
		return PS_ERR_NOMEM;
	}
	if (!*same && strncmp(name, old, ol) == 0) {
		const char *rest = name + ol;
		char line[16];
		snprintf(line, sizeof line, "~L%u", s->entries[e].line);
		*same = !*rest || (rest[0] == '~' && strncmp(rest + 1, eid, il) == 0 &&
				   (!rest[1 + il] || strcmp(rest + 1 + il, line) == 0));
	}
	free(old);
	free(eid);
	return PS_OK;
}

/* Resolves one name inside the labels/ directory: a listed name, else a
 * name of the same label from before (see layout_label_alias). */
char *layout_label_name(const struct ps_session *s, uint32_t idx)
{
	char **names;
	char *out = NULL;
	if (s->entries[idx].label == PS_NIL || !(names = layout_label_names(s)))
		return NULL;
	for (uint32_t i = 0; i < s->n_labeled; i++)
		if (s->labeled[i] == idx && names[i]) {
			out = names[i];
			names[i] = NULL;
			break;
		}
	layout_label_names_free(s, names);
	return out;
}

static ps_err layout_find_label(const struct ps_session *s, const char *name, uint32_t *out)
{
	char **names = layout_label_names(s);
	ps_err err = PS_ERR_NOENT;
	char *typed = NULL;
	if (!names)
		return PS_ERR_NOMEM;
	for (uint32_t i = 0; i < s->n_labeled; i++) {
		if (names[i] && strcmp(names[i], name) == 0) {
			*out = s->labeled[i];
			err = PS_OK;
			goto out;
		}
	}
	typed = layout_typed_label(name, &err);
	if (err)
		goto out;
	err = PS_ERR_NOENT;
	for (uint32_t i = 0; i < s->n_labeled; i++) {
		uint32_t e = s->labeled[i];
		int same;
		if (s->entries[e].label == PS_NIL)
			continue;
		ps_err r = layout_label_alias(s, e, name, typed, &same);
		if (r || same) {
			err = r;
			*out = e;
			goto out;
		}
	}
out:
	free(typed);
	layout_label_names_free(s, names);
	return err;
}

static const struct {
	const char *name;
	enum layout_kind kind;
} layout_specials[] = {
	/* First: `rm -r` removes what a directory lists in its order, and
	 * removing this file moves the whole session to the trash (fs/
	 * namespace.c psfs_unlink), so nothing after it is asked to go one
	 * by one (docs/layout.md "Deleting a session"). */
	{ "session.jsonl", LAYOUT_RAW },
	{ "context.json", LAYOUT_CONTEXT },
	{ "leaf", LAYOUT_LEAF },
	{ "parent", LAYOUT_PARENT },
	{ "labels", LAYOUT_LABELS_DIR },
	{ "name", LAYOUT_NAME },
	{ "loadout.json", LAYOUT_LOADOUT },
	{ "header.json", LAYOUT_HEADER },
	{ "entries", LAYOUT_ENTRIES_DIR },
	{ "problems", LAYOUT_PROBLEMS },
	{ "transcript.md", LAYOUT_TRANSCRIPT },
	{ "tree.txt", LAYOUT_TREE_TXT },
	{ "usage.json", LAYOUT_USAGE },
};

/* Whether a special file exists in a directory: not-sessions show only the
 * raw file and the error; an empty session has no leaf. */
static int layout_special_shown(const struct ps_session *s, enum layout_kind kind, int session_root)
{
	if (!s->have_header)
		return kind == LAYOUT_RAW || kind == LAYOUT_ERROR;
	if (kind == LAYOUT_ERROR)
		return 0;
	if (!session_root)
		return kind == LAYOUT_CONTEXT || kind == LAYOUT_TRANSCRIPT;
	if (kind == LAYOUT_LEAF)
		return s->n_entries > 0;
	if (kind == LAYOUT_PARENT) {
		char *target = sessionparent_target(s);
		free(target);
		return target != NULL;
	}
	return 1;
}

/* Whether a special file that exists is also listed.  A recursive walk
 * (grep -r, rg, find, du, tar, rsync) should meet each entry's text once,
 * in its entry file, plus the session's own context, transcript and raw
 * file and each fork's context: entries/ repeats every entry and a fork's
 * transcript.md repeats the fork's whole path, so they answer by name but
 * are left out of listings, as ZFS's hidden .zfs is (docs/layout.md
 * "What a recursive walk sees"). */
static int layout_special_listed(const struct ps_session *s, enum layout_kind kind, int session_root)
{
	if (!layout_special_shown(s, kind, session_root))
		return 0;
	if (kind == LAYOUT_ENTRIES_DIR)
		return 0;
	return kind != LAYOUT_TRANSCRIPT || session_root;
}

/* NNNN-kind.id.images: the images of the entry NNNN-kind.id.md. */
static ps_err layout_find_images_dir(const struct ps_session *s, uint32_t dir, const char *name, uint32_t *out)
{
	size_t n = strlen(name);
	if (n <= 7 || strcmp(name + n - 7, ".images") != 0)
		return PS_ERR_NOENT;
	char *md = NULL;
	if (asprintf(&md, "%.*s.md", (int)(n - 7), name) < 0)
		return PS_ERR_NOMEM;
	ps_err err = layout_find_entry(s, dir, md, out);
	free(md);
	if (!err) {
		if (!layout_image_count(s, *out, NULL))
			err = PS_ERR_NOENT;
	}
	return err;
}

static ps_err layout_step(const struct ps_session *s, struct layout_node *node, const char *name)
{
	uint32_t found;
	ps_err err;

	switch (node->kind) {
	case LAYOUT_TREE_DIR:
		for (size_t i = 0; i < sizeof layout_specials / sizeof layout_specials[0]; i++) {
			if (strcmp(name, layout_specials[i].name) == 0) {
				if (!layout_special_shown(s, layout_specials[i].kind, node->session_root))
					return PS_ERR_NOENT;
				node->kind = layout_specials[i].kind;
				node->entry = node->kind == LAYOUT_LEAF ? session_leaf(s) : PS_NIL;
				return PS_OK;
			}
		}
		if (strcmp(name, "error") == 0 && layout_special_shown(s, LAYOUT_ERROR, node->session_root)) {
			node->kind = LAYOUT_ERROR;
			return PS_OK;
		}
		if (!s->have_header)
			return PS_ERR_NOENT;
		err = layout_find_entry(s, node->branch, name, &found);
		if (err == PS_OK) {
			node->kind = LAYOUT_ENTRY;
			node->entry = found;
			return PS_OK;
		}
		if (err != PS_ERR_NOENT)
			return err;
		err = layout_find_branch(s, node->branch, name, &found);
		if (err == PS_OK) {
			node->branch = found;
			node->session_root = 0;
			return err;
		}
		if (err == PS_ERR_NOENT)
			err = layout_find_images_dir(s, node->branch, name, &found);
		if (err == PS_OK) {
			node->kind = LAYOUT_IMAGES_DIR;
			node->entry = found;
		}
		return err;
	case LAYOUT_IMAGES_DIR: {
		struct image_ref *refs;
		size_t n = layout_image_count(s, node->entry, &refs);
		err = PS_ERR_NOENT;
		for (size_t i = 0; i < n && err; i++) {
			char file[IMAGES_NAME_MAX];
			images_file_name(i, refs[i].ext, file);
			if (strcmp(file, name) == 0) {
				node->kind = LAYOUT_IMAGE;
				node->index = (uint32_t)i;
				err = PS_OK;
			}
		}
		images_free(refs, n);
		return err;
	}
	case LAYOUT_LABELS_DIR:
		err = layout_find_label(s, name, &found);
		if (!err) {
			node->kind = LAYOUT_LABEL;
			node->entry = found;
		}
		return err;
	case LAYOUT_ENTRIES_DIR:
		err = entryjson_find(s, name, LAYOUT_MAX_ID, &found);
		if (!err) {
			node->kind = LAYOUT_ENTRY_JSON;
			node->entry = found;
		}
		return err;
	default:
		return PS_ERR_NOTDIR;
	}
}

ps_err layout_resolve(const struct ps_session *s, const char *rel, struct layout_node *out)
{
	struct layout_node node = { LAYOUT_TREE_DIR, 0, PS_NIL, 1, 0 };
	char name[4096];

	while (*rel) {
		while (*rel == '/')
			rel++;
		if (!*rel)
			break;
		size_t n = strcspn(rel, "/");
		if (n >= sizeof name)
			return PS_ERR_NOENT;
		memcpy(name, rel, n);
		name[n] = '\0';
		rel += n;
		ps_err err = layout_step(s, &node, name);
		if (err)
			return err;
	}
	*out = node;
	return PS_OK;
}

static int layout_emit(layout_fill_fn fill, void *ctx, char *name, const struct layout_node *node, ps_err *err)
{
	if (!name) {
		*err = PS_ERR_NOMEM;
		return 1;
	}
	int stop = fill(ctx, name, node);
	free(name);
	return stop;
}

static ps_err layout_list_tree(const struct ps_session *s, const struct layout_node *dir,
			       layout_fill_fn fill, void *ctx)
{
	ps_err err = PS_OK;
	const struct ps_branch *b = &s->branches[dir->branch];
	struct layout_node node = { LAYOUT_ENTRY, dir->branch, PS_NIL, 0, 0 };

	for (uint32_t e = b->first; e != PS_NIL; e = s->entries[e].first_child) {
		node.kind = LAYOUT_ENTRY;
		node.branch = dir->branch;
		node.entry = e;
		if (layout_emit(fill, ctx, layout_entry_name(s, e), &node, &err))
			return err;
		if (layout_image_count(s, e, NULL)) {
			node.kind = LAYOUT_IMAGES_DIR;
			if (layout_emit(fill, ctx, layout_images_dir_name(s, e), &node, &err))
				return err;
		}
		node.kind = LAYOUT_TREE_DIR;
		node.entry = PS_NIL;
		for (uint32_t c = s->entries[e].first_child; c != PS_NIL && (c = s->entries[c].next_sibling) != PS_NIL;) {
			node.branch = s->entries[c].branch;
			if (layout_emit(fill, ctx, layout_branch_name(s, node.branch), &node, &err))
				return err;
		}
	}
	if (dir->session_root) {
		/* Extra roots and orphans. */
		node.kind = LAYOUT_TREE_DIR;
		node.entry = PS_NIL;
		for (uint32_t sub = b->first_sub; sub != PS_NIL; sub = s->branches[sub].next_sub) {
			if (s->entries[s->branches[sub].first].parent != PS_NIL)
				continue;
			node.branch = sub;
			if (layout_emit(fill, ctx, layout_branch_name(s, sub), &node, &err))
				return err;
		}
	}
	return err;
}

ps_err layout_list(const struct ps_session *s, const struct layout_node *dir, layout_fill_fn fill, void *ctx)
{
	ps_err err = PS_OK;
	struct layout_node node = *dir;

	switch (dir->kind) {
	case LAYOUT_TREE_DIR:
		node.session_root = dir->session_root;
		for (size_t i = 0; i < sizeof layout_specials / sizeof layout_specials[0]; i++) {
			if (!layout_special_listed(s, layout_specials[i].kind, dir->session_root))
				continue;
			node.kind = layout_specials[i].kind;
			node.entry = node.kind == LAYOUT_LEAF ? session_leaf(s) : PS_NIL;
			if (fill(ctx, layout_specials[i].name, &node))
				return PS_OK;
		}
		if (layout_special_shown(s, LAYOUT_ERROR, dir->session_root)) {
			node.kind = LAYOUT_ERROR;
			if (fill(ctx, "error", &node))
				return PS_OK;
		}
		if (!s->have_header)
			return PS_OK;
		return layout_list_tree(s, dir, fill, ctx);
	case LAYOUT_LABELS_DIR:
		node.kind = LAYOUT_LABEL;
		char **names = layout_label_names(s);
		if (!names)
			return PS_ERR_NOMEM;
		for (uint32_t i = 0; i < s->n_labeled; i++) {
			node.entry = s->labeled[i];
			if (names[i] && fill(ctx, names[i], &node))
				break;
		}
		layout_label_names_free(s, names);
		return PS_OK;
	case LAYOUT_IMAGES_DIR: {
		struct image_ref *refs;
		size_t n = layout_image_count(s, dir->entry, &refs);
		node.kind = LAYOUT_IMAGE;
		for (size_t i = 0; i < n; i++) {
			char file[IMAGES_NAME_MAX];
			images_file_name(i, refs[i].ext, file);
			node.index = (uint32_t)i;
			if (fill(ctx, file, &node))
				break;
		}
		images_free(refs, n);
		return PS_OK;
	}
	case LAYOUT_ENTRIES_DIR:
		node.kind = LAYOUT_ENTRY_JSON;
		for (uint32_t e = 0; e < s->n_entries; e++) {
			node.entry = e;
			if (layout_emit(fill, ctx, entryjson_name(s, e, LAYOUT_MAX_ID), &node, &err))
				return err;
		}
		return PS_OK;
	default:
		return PS_ERR_NOTDIR;
	}
}

