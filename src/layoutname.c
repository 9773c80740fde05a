/* The names a session's nodes are listed under (layoutname.h): entry
 * files, branch directories, labels and images directories, each within
 * a file name's length and never shared by two nodes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "escape.h"
#include "layoutname.h"

/* How many images an entry has (0 for most: only lines that mention
 * "image" are parsed to find out), and with refs non-NULL their list
 * (free with images_free). */
size_t layout_image_count(const struct ps_session *s, uint32_t idx, struct image_ref **refs)
{
	size_t n = 0;
	uint32_t flags = s->entries[idx].flags;
	struct image_ref *list = NULL;
	if (refs)
		*refs = NULL;
	if (!(flags & PS_ENTRY_MAY_HAVE_IMAGES))
		return 0;
	/* Most lookups only need to know whether there are any: the count is
	 * kept in the entry (entries never change), the list (which sizes
	 * every image by decoding it) is built only when asked for. */
	if ((flags & PS_ENTRY_IMAGES_COUNTED) && (!refs || !(flags >> PS_ENTRY_IMAGE_SHIFT)))
		return flags >> PS_ENTRY_IMAGE_SHIFT;
	if (images_list_names(s, idx, &list, &n) != PS_OK)
		return 0;
	if (refs)
		*refs = list;
	else
		images_free(list, n);
	if (n < (1u << (32 - PS_ENTRY_IMAGE_SHIFT)))
		((struct ps_session *)s)->entries[idx].flags =
			(flags & ((1u << PS_ENTRY_IMAGE_SHIFT) - 1)) | PS_ENTRY_IMAGES_COUNTED | (uint32_t)n << PS_ENTRY_IMAGE_SHIFT;
	return n;
}

char *layout_images_dir_name(const struct ps_session *s, uint32_t idx)
{
	char *name = layout_entry_name(s, idx);
	size_t n = name ? strlen(name) : 0;
	char *out = NULL;
	if (name && n > 3 && asprintf(&out, "%.*s.images", (int)(n - 3), name) < 0)
		out = NULL;
	free(name);
	return out;
}

char *layout_entry_name(const struct ps_session *s, uint32_t idx)
{
	const struct ps_entry *e = &s->entries[idx];
	char *id = escape_name_max(session_str(s, e->id), strlen(session_str(s, e->id)), LAYOUT_MAX_ID);
	char *name = NULL;
	if (id && asprintf(&name, "%04u-%s.%s.md", e->depth, session_str(s, e->kind), id) < 0)
		name = NULL;
	free(id);
	return name;
}

int layout_label_eq(const struct ps_session *s, uint32_t idx, const char *label)
{
	uint32_t l = s->entries[idx].label;
	return l != PS_NIL && strcmp(session_str(s, l), label) == 0;
}

static int layout_branch_shadowed(const struct ps_session *s, uint32_t branch);
static char *layout_branch_name_as(const struct ps_session *s, uint32_t branch, int by_label);

/* How long the label part of a branch name NNNN~<label> may be, so that
 * the whole name fits in a file name. */
static size_t layout_branch_label_max(uint32_t depth)
{
	int digits = snprintf(NULL, 0, "%04u", depth);
	return (size_t)(NAME_MAX - 1 - digits);
}

/* A labelled branch is listed by its label unless an earlier branch (in file
 * order) of the same directory and depth has the same label, or the name
 * would be the id name of another branch there. */
int layout_branch_label_wins(const struct ps_session *s, uint32_t branch)
{
	const struct ps_branch *b = &s->branches[branch];
	uint32_t first = b->first;
	const char *label;
	if (s->entries[first].label == PS_NIL)
		return 0;
	label = session_str(s, s->entries[first].label);
	/* A label that is the id of another branch here would name two
	 * directories: the id keeps its name. */
	for (uint32_t e = session_find(s, label, strlen(label)); e != PS_NIL; e = s->entries[e].prev_same_id) {
		const struct ps_entry *x = &s->entries[e];
		if (e != first && x->branch != 0 && s->branches[x->branch].first == e &&
		    s->branches[x->branch].parent == b->parent && x->depth == s->entries[first].depth)
			return 0;
	}
	for (uint32_t i = 0; i < s->n_labeled; i++) {
		uint32_t other = s->labeled[i];
		if (other >= first || !layout_label_eq(s, other, label))
			continue;
		const struct ps_entry *o = &s->entries[other];
		if (s->branches[o->branch].first == other && s->branches[o->branch].parent == b->parent &&
		    o->depth == s->entries[first].depth && o->branch != 0)
			return 0;
	}
	/* Labels keep their '~': one that reads like an id name with a
	 * suffix (NNNN~<id>~L<line>, a cut id ~h<hash>) must not take it. */
	if (strchr(label, '~')) {
		char *mine = layout_branch_name_as(s, branch, 1);
		int clash = !mine;
		for (uint32_t o = s->branches[b->parent].first_sub; !clash && o != PS_NIL; o = s->branches[o].next_sub) {
			if (o == branch || s->entries[s->branches[o].first].depth != s->entries[first].depth)
				continue;
			char *id_name = layout_branch_name_as(s, o, 0);
			clash = !id_name || strcmp(id_name, mine) == 0;
			free(id_name);
		}
		free(mine);
		if (clash)
			return 0;
	}
	return 1;
}

/* Whether another branch of the same directory and depth starts with an
 * entry of the same id and comes first where the name is resolved (the
 * latest such entry wins the plain name, as ids resolve to the latest). */
static int layout_branch_shadowed(const struct ps_session *s, uint32_t branch)
{
	const struct ps_branch *b = &s->branches[branch];
	const char *id = session_str(s, s->entries[b->first].id);
	for (uint32_t e = session_find(s, id, strlen(id)); e != PS_NIL; e = s->entries[e].prev_same_id) {
		const struct ps_entry *x = &s->entries[e];
		if (x->branch != 0 && s->branches[x->branch].first == e && s->branches[x->branch].parent == b->parent &&
		    x->depth == s->entries[b->first].depth)
			return e != b->first;
	}
	return 0;
}

/* A branch directory's name: NNNN~<label> when its label wins, else
 * NNNN~<id>, with ~L<line> for the earlier of two same-id branches. */
static char *layout_branch_name_as(const struct ps_session *s, uint32_t branch, int by_label)
{
	const struct ps_entry *e = &s->entries[s->branches[branch].first];
	const char *raw = by_label ? session_str(s, e->label) : session_str(s, e->id);
	/* Ids keep the strict escaping of entry names; labels are shown as
	 * typed (docs/layout.md "Escaping"). */
	char *esc = by_label ? escape_typed_name(raw, strlen(raw), layout_branch_label_max(e->depth))
			     : escape_name_max(raw, strlen(raw), LAYOUT_MAX_ID);
	char *name = NULL;
	int r;
	if (!esc)
		return NULL;
	/* A duplicate id's earlier branch is told apart by its line. */
	if (!by_label && layout_branch_shadowed(s, branch))
		r = asprintf(&name, "%04u~%s~L%u", e->depth, esc, e->line);
	else
		r = asprintf(&name, "%04u~%s", e->depth, esc);
	if (r < 0)
		name = NULL;
	free(esc);
	return name;
}

char *layout_branch_name(const struct ps_session *s, uint32_t branch)
{
	return layout_branch_name_as(s, branch, layout_branch_label_wins(s, branch));
}

char *layout_branch_id_name(const struct ps_session *s, uint32_t branch)
{
	return layout_branch_name_as(s, branch, 0);
}

char *layout_entry_path(const struct ps_session *s, uint32_t idx)
{
	/* Collect the branch chain up to the session directory, then join. */
	uint32_t chain[64];
	uint32_t *ids = chain;
	size_t n = 0, cap = 64;
	struct buf b = BUF_INIT;
	char *out = NULL;

	for (uint32_t br = s->entries[idx].branch; br != 0; br = s->branches[br].parent) {
		if (n == cap) {
			uint32_t *more = malloc(cap * 2 * sizeof *more);
			if (!more)
				goto out;
			memcpy(more, ids, n * sizeof *ids);
			if (ids != chain)
				free(ids);
			ids = more;
			cap *= 2;
		}
		ids[n++] = br;
	}
	while (n--) {
		char *name = layout_branch_name(s, ids[n]);
		int bad = !name || buf_puts(&b, name) || buf_putc(&b, '/');
		free(name);
		if (bad)
			goto out;
	}
	char *leaf = layout_entry_name(s, idx);
	if (!leaf || buf_puts(&b, leaf) || buf_finish(&b)) {
		free(leaf);
		goto out;
	}
	free(leaf);
	out = b.data;
	b.data = NULL;
out:
	if (ids != chain)
		free(ids);
	buf_free(&b);
	return out;
}

/* The names an entry labelled `label` may be listed under in labels/, in
 * order of preference: the label, label~<id>, label~<id>~L<line>; each
 * kept within a file name's length.  which is 0, 1 or 2. */
char *layout_label_candidate(const struct ps_session *s, uint32_t idx, const char *label, int which)
{
	const char *id = session_str(s, s->entries[idx].id);
	char *eid = which ? escape_name_max(id, strlen(id), LAYOUT_MAX_ID) : NULL;
	char line[16] = "";
	char *esc = NULL, *name = NULL;
	if (which && !eid)
		return NULL;
	if (which == 2)
		snprintf(line, sizeof line, "~L%u", s->entries[idx].line);
	size_t suffix = which ? 1 + strlen(eid) + strlen(line) : 0;
	esc = escape_typed_name(label, strlen(label), NAME_MAX - suffix);
	if (esc && which && asprintf(&name, "%s~%s%s", esc, eid, line) < 0)
		name = NULL;
	if (!which) {
		name = esc;
		esc = NULL;
	}
	free(esc);
	free(eid);
	return name;
}

/* The names labels/ lists: names[i] for s->labeled[i], NULL where the
 * label was cleared.  Each entry takes the first of its candidates no
 * earlier entry took, so a name never moves to another entry when labels
 * are added, and no two entries share one even when a label holds '~'.
 * Returns NULL when memory runs out; free with layout_label_names_free. */
char **layout_label_names(const struct ps_session *s)
{
	char **names = calloc(s->n_labeled ? s->n_labeled : 1, sizeof *names);
	if (!names)
		return NULL;
	for (uint32_t i = 0; i < s->n_labeled; i++) {
		uint32_t e = s->labeled[i];
		if (s->entries[e].label == PS_NIL)
			continue;
		const char *label = session_str(s, s->entries[e].label);
		for (int which = 0; which < 3 && !names[i]; which++) {
			char *name = layout_label_candidate(s, e, label, which);
			int taken = 0;
			if (!name)
				goto fail;
			for (uint32_t j = 0; j < i && !taken; j++)
				taken = names[j] && strcmp(names[j], name) == 0;
			/* The last candidate holds the line: only a crafted label
			 * can clash with it, and it is listed anyway. */
			if (taken && which < 2)
				free(name);
			else
				names[i] = name;
		}
	}
	return names;
fail:
	for (uint32_t i = 0; i < s->n_labeled; i++)
		free(names[i]);
	free(names);
	return NULL;
}

void layout_label_names_free(const struct ps_session *s, char **names)
{
	for (uint32_t i = 0; names && i < s->n_labeled; i++)
		free(names[i]);
	free(names);
}
