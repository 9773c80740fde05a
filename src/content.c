#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "context.h"
#include "jsonout.h"
#include "images.h"
#include "render.h"
#include "transcript.h"
#include "treetext.h"
#include "usage.h"
#include "content.h"
#include "loadout.h"

/* The texts kept for the open that follows a stat: each at most
 * CONTENT_STASH_MAX, all sessions' together at most CONTENT_STASH_BUDGET
 * (a tree.txt of a 50,000-entry session is 4.5 MB; without a stash the
 * open builds it a second time).  Larger ones are regenerated at open
 * rather than held between a stat and an open that may never come. */
#define CONTENT_STASH_MAX (16u << 20)
#define CONTENT_STASH_BUDGET (32u << 20)
/* A text this large was built from parsed entries many times its size,
 * freed now: their pages go back to the system (malloc_trim) rather than
 * stay with the thread's malloc arena, where each of libfuse's workers
 * would keep its own largest build (grep -r of a 50,000-entry session
 * peaked at 107 MB with 39 MB in use). */
#define CONTENT_TRIM_AFTER (1u << 20)

static ps_err content_generate(struct ps_session *s, const struct layout_node *node, char **buf, size_t *len);

/* What this module keeps for one session, hung on it (session_attach) and
 * released with its index. */
struct content_cache {
	struct ps_attachment link; /* first: the session holds this */

	/* Generated context.json texts, by tip entry: the context of an entry
	 * never changes (its path to the root is fixed), so these only go
	 * when the index is rebuilt.  Within a budget over all sessions
	 * (content_contexts_held). */
	struct content_context {
		uint32_t tip;
		char *text;
		size_t len;
		uint64_t used;
	} contexts[8];
	uint64_t context_clock;

	/* The last text content_size generated for a node, kept for the open
	 * that usually follows a stat (the kernel stats before it opens);
	 * valid while the session's `changes` and `generation` are as
	 * recorded. */
	struct content_stash {
		int kind;
		uint32_t entry, branch, index;
		int session_root;
		uint64_t changes, generation;
		char *text;
		size_t len;
	} stash;

	/* Sizes of generated files (context.json, transcript.md, usage.json,
	 * tree.txt) by node, so a stat does not build the text again: `ls -l`
	 * asks each time.  A context's size holds while its tip is the same; the
	 * others while the session's `changes` is. */
	struct content_size {
		uint64_t changes;
		uint64_t size;     /* size + 1; 0 while unknown */
		uint32_t tip;
	} *sizes;
	uint32_t n_sizes;
};

/* The bytes of context.json texts held by every session's cache. */
static size_t content_context_bytes;
/* After a text of len bytes was built: see CONTENT_TRIM_AFTER.  Every
 * text built passes here once: content_generate's, and context.json's
 * where content_context builds it. */
static void content_give_back(size_t len)
{
	if (len >= CONTENT_TRIM_AFTER)
		malloc_trim(0);
}

/* The bytes of stashed texts held by every session's cache. */
static size_t content_stash_bytes;

static void content_stash_account(long long delta)
{
	__atomic_add_fetch(&content_stash_bytes, (size_t)delta, __ATOMIC_RELAXED);
}

size_t content_contexts_held(void)
{
	return __atomic_load_n(&content_context_bytes, __ATOMIC_RELAXED);
}

static void content_contexts_account(long long delta)
{
	__atomic_add_fetch(&content_context_bytes, (size_t)delta, __ATOMIC_RELAXED);
}

static void content_cache_release(struct ps_attachment *a)
{
	struct content_cache *c = (struct content_cache *)a;
	for (size_t i = 0; i < sizeof c->contexts / sizeof c->contexts[0]; i++) {
		if (c->contexts[i].text)
			content_contexts_account(-(long long)c->contexts[i].len);
		free(c->contexts[i].text);
	}
	if (c->stash.text)
		content_stash_account(-(long long)c->stash.len);
	free(c->stash.text);
	free(c->sizes);
	free(c);
}

static const struct ps_attachment_type content_cache_type = { content_cache_release };

/* The session's cache, made on first use; NULL without memory for it (the
 * texts are then built each time and nothing is kept). */
static struct content_cache *content_cache_of(struct ps_session *s)
{
	struct content_cache *c = (struct content_cache *)session_attachment(s, &content_cache_type);
	if (c)
		return c;
	c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->link.type = &content_cache_type;
	session_attach(s, &c->link);
	return c;
}

/* The cache if there is one, for callers that only look. */
static const struct content_cache *content_cache_peek(const struct ps_session *s)
{
	return (const struct content_cache *)session_attachment(s, &content_cache_type);
}


int content_immutable(const struct layout_node *node)
{
	return node->kind == LAYOUT_ENTRY || node->kind == LAYOUT_ENTRY_JSON || node->kind == LAYOUT_IMAGE;
}

static ps_err content_entry_md(struct ps_session *s, uint32_t idx, char **buf, size_t *len)
{
	json_t *entry;
	ps_err err = session_load_entry_shared(s, idx, &entry);
	if (err == PS_ERR_INVALID) {
		/* The scanner accepted the line but jansson cannot decode it (a
		 * lone surrogate escape): say so instead of failing the read. */
		char *line;
		size_t n;
		err = session_read_line(s, idx, &line, &n);
		if (err)
			return err;
		struct buf b = BUF_INIT;
		int bad = buf_printf(&b, "---\nid: %s\nunreadable: true\n---\nThis line is not JSON that can be decoded; the stored line follows.\n\n",
				     session_str(s, s->entries[idx].id)) ||
			  buf_put(&b, line, n) || buf_putc(&b, '\n') || buf_finish(&b);
		free(line);
		if (bad) {
			buf_free(&b);
			return PS_ERR_NOMEM;
		}
		*buf = b.data;
		*len = b.len;
		return PS_OK;
	}
	if (err)
		return err;
	/* Image links are relative to the file's own name. */
	char *name = layout_entry_name(s, idx);
	*buf = name ? render_entry(entry, name, len) : NULL;
	free(name);
	json_decref(entry);
	return *buf ? PS_OK : PS_ERR_NOMEM;
}

static size_t content_context_budget = CONTENT_CONTEXT_BUDGET;

void content_set_context_budget(size_t bytes)
{
	content_context_budget = bytes;
}

static ps_err content_context(struct ps_session *s, uint32_t tip, char **buf, size_t *len, int copy)
{
	struct content_cache *c = content_cache_of(s);
	struct content_context *slot = c ? &c->contexts[0] : NULL;
	size_t n = c ? sizeof c->contexts / sizeof c->contexts[0] : 0;
	for (size_t i = 0; i < n; i++) {
		if (c->contexts[i].text && c->contexts[i].tip == tip) {
			slot = &c->contexts[i];
			goto found;
		}
		if (!c->contexts[i].text || c->contexts[i].used < slot->used)
			slot = &c->contexts[i];
	}
	char *text;
	size_t tlen;
	ps_err err = context_text(s, tip, &text, &tlen);
	if (err)
		return err;
	content_give_back(tlen);
	size_t freed = slot && slot->text ? slot->len : 0;
	if (!slot || content_contexts_held() - freed + tlen > content_context_budget) {
		/* Over the budget (many sessions, or huge contexts): handed
		 * out, not kept. */
		*len = tlen;
		if (copy)
			*buf = text;
		else
			free(text);
		return PS_OK;
	}
	if (slot->text)
		content_contexts_account(-(long long)slot->len);
	free(slot->text);
	slot->text = text;
	slot->len = tlen;
	slot->tip = tip;
	content_contexts_account((long long)tlen);
found:
	slot->used = ++c->context_clock;
	*len = slot->len;
	if (!copy)
		return PS_OK;
	*buf = malloc(slot->len + 1);
	if (!*buf)
		return PS_ERR_NOMEM;
	memcpy(*buf, slot->text, slot->len + 1);
	return PS_OK;
}

static uint32_t content_tip(const struct ps_session *s, const struct layout_node *node)
{
	/* The session directory's context is pi's: the last entry of the file,
	 * wherever it is in the tree. */
	return node->session_root ? session_leaf(s) : s->branches[node->branch].tip;
}

/* The kinds of generated files whose sizes are memoized per directory. */
#define CONTENT_SIZED_KINDS 4

/* Where a generated file's size is memoized in the cache's sizes: 0 for files
 * that are not (cheap or immutable ones), else the slot's index + 1. */
static uint64_t content_size_index(const struct ps_session *s, const struct layout_node *node)
{
	uint64_t kind;
	switch (node->kind) {
	case LAYOUT_CONTEXT:
		kind = 0;
		break;
	case LAYOUT_TRANSCRIPT:
		kind = 1;
		break;
	case LAYOUT_USAGE:
		kind = 2;
		break;
	case LAYOUT_TREE_TXT:
		kind = 3;
		break;
	default:
		return 0;
	}
	/* Directory 0 is the session directory's (pi's leaf). */
	uint64_t dir = node->session_root ? 0 : (uint64_t)node->branch + 1;
	if (dir > s->n_branches)
		return 0;
	return dir * CONTENT_SIZED_KINDS + kind + 1;
}

/* The memo slot of a generated file, the table grown to the session's
 * branches; NULL for files not memoized, or without memory for the table
 * (sizes are then built each time). */
static struct content_size *content_size_slot(struct ps_session *s, const struct layout_node *node)
{
	uint64_t idx = content_size_index(s, node);
	uint64_t want = ((uint64_t)s->n_branches + 1) * CONTENT_SIZED_KINDS;
	if (!idx || want > UINT32_MAX)
		return NULL;
	struct content_cache *c = content_cache_of(s);
	if (!c)
		return NULL;
	if (c->n_sizes < want) {
		struct content_size *grown = realloc(c->sizes, want * sizeof *grown);
		if (!grown)
			return NULL;
		memset(grown + c->n_sizes, 0, (want - c->n_sizes) * sizeof *grown);
		c->sizes = grown;
		c->n_sizes = (uint32_t)want;
	}
	return &c->sizes[idx - 1];
}

static int content_size_remembered(const struct ps_session *s, const struct layout_node *node,
				const struct content_size *slot, uint64_t *size)
{
	if (!slot || !slot->size)
		return 0;
	if (node->kind == LAYOUT_CONTEXT ? slot->tip != content_tip(s, node) : slot->changes != s->changes)
		return 0;
	*size = slot->size - 1;
	return 1;
}

static void content_size_remember(const struct ps_session *s, const struct layout_node *node,
			       struct content_size *slot, uint64_t size)
{
	if (!slot)
		return;
	slot->size = size + 1;
	slot->changes = s->changes;
	slot->tip = node->kind == LAYOUT_CONTEXT ? content_tip(s, node) : 0;
}

static ps_err content_text(struct buf *b, char **buf, size_t *len, int bad)
{
	if (bad || buf_finish(b)) {
		buf_free(b);
		return PS_ERR_NOMEM;
	}
	*buf = b->data;
	*len = b->len;
	return PS_OK;
}

/* A reset marker shows as no loadout: it is what it means. */
static ps_err content_loadout(struct ps_session *s, char **buf, size_t *len)
{
	json_t *data;
	ps_err err = session_loadout(s, &data, NULL);
	if (err)
		return err;
	err = jsonout_pretty(data, buf, len);
	json_decref(data);
	return err;
}

static int content_stash_matches(const struct ps_session *s, const struct layout_node *node)
{
	const struct content_cache *c = content_cache_peek(s);
	const struct content_stash *st = c ? &c->stash : NULL;
	return st && st->text && st->kind == (int)node->kind && st->entry == node->entry && st->branch == node->branch &&
	       st->index == node->index && st->session_root == node->session_root && st->changes == s->changes &&
	       st->generation == s->generation;
}

/* Keeps text (taken) for the open that usually follows a stat. */
static void content_stash_keep(struct ps_session *s, const struct layout_node *node, char *text, size_t len)
{
	struct content_cache *c = content_cache_of(s);
	if (!c) {
		free(text);
		return;
	}
	struct content_stash *st = &c->stash;
	if (st->text)
		content_stash_account(-(long long)st->len);
	free(st->text);
	st->text = NULL;
	if (__atomic_load_n(&content_stash_bytes, __ATOMIC_RELAXED) + len > CONTENT_STASH_BUDGET) {
		free(text); /* the open builds it again */
		return;
	}
	content_stash_account((long long)len);
	st->text = text;
	st->len = len;
	st->kind = (int)node->kind;
	st->entry = node->entry;
	st->branch = node->branch;
	st->index = node->index;
	st->session_root = node->session_root;
	st->changes = s->changes;
	st->generation = s->generation;
}

ps_err content_build(struct ps_session *s, const struct layout_node *node, char **buf, size_t *len)
{
	if (content_stash_matches(s, node)) {
		struct content_stash *st = &content_cache_of(s)->stash;
		*buf = st->text;
		*len = st->len;
		st->text = NULL;
		content_stash_account(-(long long)st->len);
		return PS_OK;
	}
	ps_err err = content_generate(s, node, buf, len);
	if (!err)
		content_size_remember(s, node, content_size_slot(s, node), *len);
	return err;
}

/* Generates a node's text anew. */
static ps_err content_generate_text(struct ps_session *s, const struct layout_node *node, char **buf, size_t *len);

static ps_err content_generate(struct ps_session *s, const struct layout_node *node, char **buf, size_t *len)
{
	ps_err err = content_generate_text(s, node, buf, len);
	/* A context.json was given back where it was built, if it was
	 * (content_context), not at each read of the one kept. */
	if (!err && node->kind != LAYOUT_CONTEXT)
		content_give_back(*len);
	return err;
}

static ps_err content_generate_text(struct ps_session *s, const struct layout_node *node, char **buf, size_t *len)
{
	struct buf b = BUF_INIT;
	char *line;
	size_t n;
	ps_err err;
	int bad = 0;

	switch (node->kind) {
	case LAYOUT_ENTRY:
		err = content_entry_md(s, node->entry, buf, len);
		if (!err && *len < UINT32_MAX)
			s->entries[node->entry].md_size = (uint32_t)*len + 1;
		return err;
	case LAYOUT_CONTEXT:
		return content_context(s, content_tip(s, node), buf, len, 1);
	case LAYOUT_LEAF:
	case LAYOUT_LABEL:
	case LAYOUT_PARENT:
		*buf = layout_symlink_target(s, node);
		*len = *buf ? strlen(*buf) : 0;
		return *buf ? PS_OK : PS_ERR_NOMEM;
	case LAYOUT_NAME:
		if (s->name != PS_NIL)
			bad = buf_puts(&b, session_str(s, s->name)) || buf_putc(&b, '\n');
		return content_text(&b, buf, len, bad);
	case LAYOUT_LOADOUT:
		return content_loadout(s, buf, len);
	case LAYOUT_HEADER: {
		err = session_read_header(s, &line, &n);
		if (err)
			return err;
		json_t *h = session_parse_line(line, n);
		free(line);
		if (!h)
			return PS_ERR_INVALID;
		err = jsonout_pretty(h, buf, len);
		json_decref(h);
		return err;
	}
	case LAYOUT_ENTRY_JSON:
		err = session_read_line(s, node->entry, &line, &n);
		if (err)
			return err;
		/* The line has room for the NUL: reuse it for the newline. */
		line = realloc(line, n + 2);
		if (!line)
			return PS_ERR_NOMEM;
		line[n] = '\n';
		line[n + 1] = '\0';
		*buf = line;
		*len = n + 1;
		return PS_OK;
	case LAYOUT_PROBLEMS:
		for (uint32_t i = 0; i < s->n_problems && !bad; i++)
			bad = buf_printf(&b, "line %u: %s\n", s->problems[i].line, s->problems[i].why);
		if (!bad) {
			char tail[512];
			size_t tail_len = session_tail_problem(s, tail, sizeof tail);
			bad = tail_len && buf_put(&b, tail, tail_len);
		}
		return content_text(&b, buf, len, bad);
	case LAYOUT_TRANSCRIPT:
		/* Links go up to the session directory, then down to the entry. */
		if (!node->session_root)
			for (uint32_t br = node->branch; br != 0 && !bad; br = s->branches[br].parent)
				bad = buf_puts(&b, "../");
		if (bad || buf_finish(&b)) {
			buf_free(&b);
			return PS_ERR_NOMEM;
		}
		err = transcript_text(s, content_tip(s, node), b.data ? b.data : "", buf, len);
		buf_free(&b);
		return err;
	case LAYOUT_USAGE:
		return usage_json(s, buf, len);
	case LAYOUT_TREE_TXT:
		return treetext_text(s, buf, len);
	case LAYOUT_IMAGE:
		return images_data(s, node->entry, node->index, buf, len);
	case LAYOUT_ERROR:
		bad = buf_printf(&b, "not a pi session: %s\n",
				 s->not_session ? s->not_session : "no session header");
		return content_text(&b, buf, len, bad);
	default:
		return PS_ERR_ISDIR;
	}
}

ps_err content_size(struct ps_session *s, const struct layout_node *node, uint64_t *size)
{
	char *buf = NULL;
	size_t len = 0;
	ps_err err;
	struct content_size *slot = content_size_slot(s, node);

	if (content_size_remembered(s, node, slot, size))
		return PS_OK;
	switch (node->kind) {
	case LAYOUT_RAW:
		*size = s->size;
		return PS_OK;
	case LAYOUT_ENTRY_JSON:
		*size = (uint64_t)s->entries[node->entry].len + 1;
		return PS_OK;
	case LAYOUT_ENTRY:
		if (s->entries[node->entry].md_size) {
			*size = s->entries[node->entry].md_size - 1;
			return PS_OK;
		}
		break;
	case LAYOUT_CONTEXT:
		err = content_context(s, content_tip(s, node), NULL, &len, 0);
		if (!err)
			content_size_remember(s, node, slot, len);
		*size = len;
		return err;
	default:
		if (layout_is_dir(node->kind)) {
			*size = 0;
			return PS_OK;
		}
		break;
	}
	if (content_stash_matches(s, node)) {
		*size = content_cache_peek(s)->stash.len;
		return PS_OK;
	}
	err = content_generate(s, node, &buf, &len);
	if (!err)
		content_size_remember(s, node, slot, len);
	if (!err && len <= CONTENT_STASH_MAX)
		content_stash_keep(s, node, buf, len);
	else
		free(buf);
	*size = len;
	return err;
}

int content_size_known(const struct ps_session *s, const struct layout_node *node, uint64_t *size)
{
	switch (node->kind) {
	case LAYOUT_RAW:
		*size = s->size;
		return 1;
	case LAYOUT_ENTRY_JSON:
		*size = (uint64_t)s->entries[node->entry].len + 1;
		return 1;
	case LAYOUT_ENTRY:
		if (!s->entries[node->entry].md_size)
			return 0;
		*size = s->entries[node->entry].md_size - 1;
		return 1;
	case LAYOUT_CONTEXT:
	case LAYOUT_TRANSCRIPT:
	case LAYOUT_USAGE:
	case LAYOUT_TREE_TXT: {
		uint64_t idx = content_size_index(s, node);
		const struct content_cache *c = content_cache_peek(s);
		return c && idx && idx <= c->n_sizes && content_size_remembered(s, node, &c->sizes[idx - 1], size);
	}
	default:
		if (layout_is_dir(node->kind)) {
			*size = 0;
			return 1;
		}
		return 0;
	}
}

ps_err content_batch_take(const struct ps_session *s, uint32_t *next, uint32_t end, size_t max_bytes,
		       struct content_batch *b)
{
	size_t bytes = 0;
	ps_err err = PS_OK;

	b->generation = s->generation;
	b->n = 0;
	if (end > s->n_entries)
		end = s->n_entries;
	/* Older files' entries are migrated as they load, which needs the
	 * session (session_load_entry): those are sized where they are read. */
	if (s->version < 3)
		*next = end;
	for (; *next < end && b->n < CONTENT_BATCH_MAX && bytes < max_bytes; (*next)++) {
		uint32_t e = *next;
		if (s->entries[e].md_size)
			continue;
		uint32_t i = b->n;
		b->entry[i] = e;
		b->size[i] = SIZE_MAX;
		b->name[i] = layout_entry_name(s, e);
		if (!b->name[i]) {
			err = PS_ERR_NOMEM;
			break;
		}
		err = session_read_line(s, e, &b->line[i], &b->line_len[i]);
		if (err) {
			free(b->name[i]);
			break;
		}
		bytes += b->line_len[i];
		b->n++;
	}
	return err;
}

void content_batch_render(struct content_batch *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		/* As content_entry_md renders it, minus the entry cache: these
		 * entries are being sized, not read. */
		json_t *entry = session_parse_line(b->line[i], b->line_len[i]);
		if (!entry)
			continue;
		size_t len;
		char *text = render_entry(entry, b->name[i], &len);
		json_decref(entry);
		if (text)
			b->size[i] = len;
		free(text);
	}
}

void content_batch_keep(struct ps_session *s, const struct content_batch *b)
{
	if (b->generation != s->generation)
		return;
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t e = b->entry[i];
		if (b->size[i] < UINT32_MAX && e < s->n_entries)
			s->entries[e].md_size = (uint32_t)b->size[i] + 1;
	}
}

void content_batch_clear(struct content_batch *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		free(b->line[i]);
		free(b->name[i]);
	}
	b->n = 0;
}
