/* tree.txt (treetext.h).  The drawing follows pi 1.6.0's tree-selector.js
 * (flattenTree and render): a chain of single children stays in one
 * column, the children of a fork each get a connector (├─ or └─) one
 * level in, and the generation after a fork one more; a gutter (│) runs
 * down from each connector that has later siblings.  At every fork the
 * child holding the current leaf comes first, then the others in file
 * order; several roots hang off an invisible root.  What pi leaves out
 * (treetext_hidden) is looked through: what hangs below it is drawn on
 * the nearest entry drawn above, as pi's recalculateVisualStructure does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "layout.h"
#include "jparse.h"
#include "treetext.h"

/* A gutter column below a connector, shared by every line under it: a
 * list through `up`, so a child's gutters are its parent's plus at most
 * one, without copying (copying them per line would cost the depth of
 * forks on every line twice). */
struct treetext_gutter {
	uint32_t position; /* the level (three columns each) it is drawn at */
	uint32_t up;       /* the gutter drawn before it, or PS_NIL */
	int show;          /* │ while the connector has later siblings, else blank */
};

/* One entry waiting on the walk's stack, with how it is drawn. */
struct treetext_item {
	uint32_t entry;
	uint32_t indent;
	uint32_t gutters;  /* newest gutter, or PS_NIL */
	unsigned char just_branched, show_connector, is_last, virtual_root_child;
};

/* What the walk knows of each entry (treetext_ctx.flags). */
#define TREETEXT_ON_PATH 1u  /* on the path from the root to the current leaf */
#define TREETEXT_KNOWN 2u    /* treetext_hidden has decided */
#define TREETEXT_HIDDEN 4u   /* ... that pi draws no line for it */

struct treetext_ctx {
	const struct ps_session *s;
	struct buf out;
	unsigned char *flags;    /* per entry: TREETEXT_* */
	uint32_t leaf;
	int multiple_roots;
	struct treetext_gutter *gutters;
	uint32_t n_gutters, cap_gutters;
	struct treetext_item *stack;
	uint32_t n_stack, cap_stack;
	uint32_t *level_gutter;  /* scratch for one line: level -> gutter */
	uint32_t *kids, n_kids, cap_kids;  /* scratch: the entries drawn below one */
	uint32_t *look, n_look, cap_look;  /* scratch: entries to look through for them */
	uint32_t cap_levels;
	/* The last assistant message loaded, for the tool results after it
	 * (pi names a result by the call it answers). */
	uint32_t assistant;
	json_t *assistant_json;
	int bad;
};

/* UTF-8 sequence length from its first byte; 1 for a stray byte. */
static size_t treetext_seq(unsigned char c)
{
	if (c >= 0xf0 && c < 0xf8)
		return 4;
	if (c >= 0xe0)
		return c < 0xf0 ? 3 : 1;
	if (c >= 0xc0)
		return 2;
	return 1;
}

/* Appends to b (when not NULL) the first limit code points of text's
 * one-line form; returns how many it has in all, counting no further than
 * limit + 1. */
static size_t treetext_walk_text(const char *text, size_t n, size_t limit, struct buf *b, int *bad)
{
	size_t i = 0, chars = 0;
	int space = 0;
	/* Leading blanks go (pi trims). */
	while (i < n && ((unsigned char)text[i] <= ' ' || text[i] == 0x7f))
		i++;
	while (i < n && chars <= limit) {
		unsigned char c = (unsigned char)text[i];
		if (c <= ' ' || c == 0x7f) {
			/* A newline, tab or other control: one line per entry. */
			space = 1;
			i++;
			continue;
		}
		size_t k = treetext_seq(c);
		if (k > n - i)
			k = n - i;
		if (space) {
			if (b && chars < limit && !*bad)
				*bad = buf_putc(b, ' ');
			chars++;
			space = 0;
		}
		if (b && chars < limit && !*bad)
			*bad = buf_put(b, text + i, k);
		chars++;
		i += k;
	}
	return chars;
}

static int treetext_cut(struct buf *b, const char *text, size_t n, size_t width)
{
	int bad = 0;
	if (!width)
		return 0;
	size_t chars = treetext_walk_text(text, n, width, NULL, &bad);
	if (chars <= width) {
		treetext_walk_text(text, n, width, b, &bad);
		return bad;
	}
	/* Cut to leave room for the ellipsis, on a character boundary; a
	 * space before the cut goes. */
	size_t at = b->len;
	treetext_walk_text(text, n, width - 1, b, &bad);
	if (!bad && b->len > at && b->data[b->len - 1] == ' ')
		b->len--;
	return bad || buf_puts(b, "…");
}

static const char *treetext_str(const json_t *obj, const char *key)
{
	const char *v = json_string_value(json_object_get(obj, key));
	return v ? v : "";
}

/* pi's extractFullContent: a string, or the text blocks run together. */
static int treetext_content(struct buf *b, const json_t *content)
{
	if (json_is_string(content))
		return buf_puts(b, json_string_value(content));
	size_t i;
	const json_t *blk;
	json_array_foreach(content, i, blk) {
		if (json_is_object(blk) && strcmp(treetext_str(blk, "type"), "text") == 0 &&
		    buf_puts(b, treetext_str(blk, "text")))
			return -1;
	}
	return 0;
}

static int treetext_has_text(const json_t *content)
{
	if (json_is_string(content)) {
		for (const char *p = json_string_value(content); *p; p++)
			if ((unsigned char)*p > ' ')
				return 1;
		return 0;
	}
	size_t i;
	const json_t *blk;
	json_array_foreach(content, i, blk) {
		if (json_is_object(blk) && strcmp(treetext_str(blk, "type"), "text") == 0)
			for (const char *p = treetext_str(blk, "text"); *p; p++)
				if ((unsigned char)*p > ' ')
					return 1;
	}
	return 0;
}

/* The first n code points of s (JavaScript's slice counts UTF-16 units;
 * for text outside the astral planes the same). */
static size_t treetext_prefix(const char *s, size_t n)
{
	size_t i = 0, len = strlen(s);
	while (n-- && i < len)
		i += treetext_seq((unsigned char)s[i]);
	return i < len ? i : len;
}

static size_t treetext_chars(const char *s)
{
	size_t chars = 0;
	for (; *s; s++)
		chars += ((unsigned char)*s & 0xc0) != 0x80;
	return chars;
}

/* pi's formatToolCall, without shortening paths under $HOME (the
 * daemon's home is not the reader's). */
static int treetext_tool_call(struct buf *b, const char *name, const json_t *args)
{
	const char *path = treetext_str(args, "path");
	if (!*path)
		path = treetext_str(args, "file_path");
	if (!strcmp(name, "read")) {
		const json_t *off = json_object_get(args, "offset"), *lim = json_object_get(args, "limit");
		int bad = buf_printf(b, "[read: %s", path);
		if (json_is_integer(off) || json_is_integer(lim)) {
			long long start = json_is_integer(off) ? json_integer_value(off) : 1;
			bad = bad || buf_printf(b, ":%lld", start);
			if (json_is_integer(lim) && start + json_integer_value(lim) - 1)
				bad = bad || buf_printf(b, "-%lld", start + json_integer_value(lim) - 1);
		}
		return bad || buf_putc(b, ']');
	}
	if (!strcmp(name, "write") || !strcmp(name, "edit"))
		return buf_printf(b, "[%s: %s]", name, path);
	if (!strcmp(name, "bash")) {
		const char *cmd = treetext_str(args, "command");
		/* Cut at 50 first; the line's own cut comes after. */
		return buf_puts(b, "[bash: ") || buf_put(b, cmd, treetext_prefix(cmd, 50)) ||
		       buf_puts(b, treetext_chars(cmd) > 50 ? "...]" : "]");
	}
	const char *where = *treetext_str(args, "path") ? treetext_str(args, "path") : ".";
	if (!strcmp(name, "grep"))
		return buf_printf(b, "[grep: /%s/ in %s]", treetext_str(args, "pattern"), where);
	if (!strcmp(name, "find"))
		return buf_printf(b, "[find: %s in %s]", treetext_str(args, "pattern"), where);
	if (!strcmp(name, "ls"))
		return buf_printf(b, "[ls: %s]", where);
	char *json = json_dumps(args ? args : json_null(), JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	if (!json)
		return -1;
	int bad = buf_printf(b, "[%s: ", name) || buf_put(b, json, treetext_prefix(json, 40)) ||
		  buf_puts(b, treetext_chars(json) > 40 ? "...]" : "]");
	free(json);
	return bad;
}

/* What a line of the tree reads of an entry.  A tool result's line shows
 * its call (toolCallId, toolName), never its output, which is most of a
 * long session's bytes: it is read (and checked) but not built; an
 * assistant message keeps what its line and its results' lines show. */
static const char *const treetext_keep_top[] = { "type", "message", NULL };
static const char *const treetext_keep_result[] = { "role", "toolCallId", "toolName", NULL };
static const char *const treetext_keep_assistant[] = { "role", "content", "stopReason", "errorMessage", NULL };
static const struct jparse_keep treetext_result_keep = { treetext_keep_top, "message", treetext_keep_result };
static const struct jparse_keep treetext_assistant_keep = { treetext_keep_top, "message", treetext_keep_assistant };

/* session_load_entry for the tree's lines: *out is a new reference, to a
 * tree nobody may modify. */
static ps_err treetext_load(const struct ps_session *s, uint32_t idx, json_t **out)
{
	const char *kind = session_str(s, s->entries[idx].kind);
	if (!strcmp(kind, "assistant"))
		return session_load_entry_keep(s, idx, &treetext_assistant_keep, out);
	if (!strncmp(kind, "toolResult", 10) && (!kind[10] || kind[10] == '-'))
		return session_load_entry_keep(s, idx, &treetext_result_keep, out);
	return session_load_entry(s, idx, out);
}

/* The assistant message nearest above a tool result (results follow
 * their call, each a child of the one before), into *out (borrowed from
 * the ctx; NULL when there is none, or it cannot be read): at most a few
 * steps up, so a walk over every result stays linear.  -1 when memory
 * runs out. */
#define TREETEXT_CALL_SEARCH 64
static int treetext_calling(struct treetext_ctx *c, uint32_t idx, const json_t **out)
{
	*out = NULL;
	uint32_t e = c->s->entries[idx].parent;
	for (int step = 0; e != PS_NIL && step < TREETEXT_CALL_SEARCH; step++, e = c->s->entries[e].parent) {
		if (e == c->assistant) {
			*out = c->assistant_json;
			return 0;
		}
		if (strcmp(session_str(c->s, c->s->entries[e].kind), "assistant") != 0)
			continue;
		json_t *j;
		ps_err err = treetext_load(c->s, e, &j);
		if (err)
			return err == PS_ERR_NOMEM ? -1 : 0;
		json_decref(c->assistant_json);
		c->assistant = e;
		c->assistant_json = j;
		*out = j;
		return 0;
	}
	return 0;
}

static int treetext_tool_result(struct treetext_ctx *c, struct buf *b, uint32_t idx, const json_t *msg)
{
	const char *call_id = treetext_str(msg, "toolCallId");
	const json_t *calling = NULL;
	if (*call_id && treetext_calling(c, idx, &calling))
		return -1;
	const json_t *am = json_object_get(calling, "message");
	size_t i;
	const json_t *blk;
	json_array_foreach(json_object_get(am, "content"), i, blk) {
		if (json_is_object(blk) && !strcmp(treetext_str(blk, "type"), "toolCall") &&
		    !strcmp(treetext_str(blk, "id"), call_id))
			return treetext_tool_call(b, treetext_str(blk, "name"), json_object_get(blk, "arguments"));
	}
	const char *tool = treetext_str(msg, "toolName");
	return buf_printf(b, "[%s]", *tool ? tool : "tool");
}

/* pi's getEntryDisplayText, less the "user: " and "assistant: " it puts
 * before messages: the line's file name says the role already. */
static int treetext_display(struct treetext_ctx *c, struct buf *b, uint32_t idx, const json_t *e)
{
	const char *type = treetext_str(e, "type");
	if (!strcmp(type, "message")) {
		const json_t *msg = json_object_get(e, "message");
		const char *role = treetext_str(msg, "role");
		const json_t *content = json_object_get(msg, "content");
		if (!strcmp(role, "user"))
			return treetext_content(b, content);
		if (!strcmp(role, "assistant")) {
			if (treetext_has_text(content))
				return treetext_content(b, content);
			if (!strcmp(treetext_str(msg, "stopReason"), "aborted"))
				return buf_puts(b, "(aborted)");
			if (*treetext_str(msg, "errorMessage"))
				return buf_put(b, treetext_str(msg, "errorMessage"),
					       treetext_prefix(treetext_str(msg, "errorMessage"), 80));
			return buf_puts(b, "(no content)");
		}
		if (!strcmp(role, "toolResult"))
			return treetext_tool_result(c, b, idx, msg);
		if (!strcmp(role, "bashExecution"))
			return buf_printf(b, "[bash]: %s", treetext_str(msg, "command"));
		return buf_printf(b, "[%s]", role);
	}
	if (!strcmp(type, "custom_message")) {
		return buf_printf(b, "[%s]: ", treetext_str(e, "customType")) ||
		       treetext_content(b, json_object_get(e, "content"));
	}
	if (!strcmp(type, "compaction")) {
		double tokens = json_number_value(json_object_get(e, "tokensBefore"));
		/* Math.round: halves up. */
		return buf_printf(b, "[compaction: %.0fk tokens]", floor(tokens / 1000 + 0.5));
	}
	if (!strcmp(type, "branch_summary"))
		return buf_puts(b, "[branch summary]: ") || buf_puts(b, treetext_str(e, "summary"));
	if (!strcmp(type, "model_change"))
		return buf_printf(b, "[model: %s]", treetext_str(e, "modelId"));
	if (!strcmp(type, "thinking_level_change"))
		return buf_printf(b, "[thinking: %s]", treetext_str(e, "thinkingLevel"));
	if (!strcmp(type, "custom"))
		return buf_printf(b, "[custom: %s]", treetext_str(e, "customType"));
	if (!strcmp(type, "context_edit"))
		return buf_printf(b, "[context %s: %s]", json_is_null(json_object_get(e, "replacement")) ? "omit" : "replace",
				  treetext_str(e, "targetId"));
	if (!strcmp(type, "label")) {
		const char *l = json_string_value(json_object_get(e, "label"));
		return buf_printf(b, "[label: %s]", l ? l : "(cleared)");
	}
	if (!strcmp(type, "session_info"))
		return buf_printf(b, "[title: %s]", *treetext_str(e, "name") ? treetext_str(e, "name") : "empty");
	return 0;
}

/* The tree prefix of a line, as pi's render builds it column by column. */
static int treetext_prefix_draw(struct treetext_ctx *c, const struct treetext_item *it)
{
	uint32_t display = c->multiple_roots ? (it->indent ? it->indent - 1 : 0) : it->indent;
	int connector = it->show_connector && !it->virtual_root_child;
	if (display > c->cap_levels) {
		uint32_t *grown = realloc(c->level_gutter, (size_t)display * sizeof *grown);
		if (!grown)
			return -1;
		c->level_gutter = grown;
		c->cap_levels = display;
	}
	for (uint32_t l = 0; l < display; l++)
		c->level_gutter[l] = PS_NIL;
	/* pi takes the first gutter of a level; the list runs newest first. */
	for (uint32_t g = it->gutters; g != PS_NIL; g = c->gutters[g].up)
		if (c->gutters[g].position < display)
			c->level_gutter[c->gutters[g].position] = g;
	for (uint32_t l = 0; l < display; l++) {
		const char *col = "   ";
		if (c->level_gutter[l] != PS_NIL)
			col = c->gutters[c->level_gutter[l]].show ? "│  " : "   ";
		else if (connector && l == display - 1)
			col = it->is_last ? "└─ " : "├─ ";
		if (buf_puts(&c->out, col))
			return -1;
	}
	return 0;
}

static int treetext_line(struct treetext_ctx *c, const struct treetext_item *it)
{
	const struct ps_session *s = c->s;
	uint32_t idx = it->entry;
	if (treetext_prefix_draw(c, it))
		return -1;
	if ((c->flags[idx] & TREETEXT_ON_PATH) && buf_puts(&c->out, "• "))
		return -1;
	char *name = layout_entry_name(s, idx);
	size_t n = name ? strlen(name) : 0;
	/* The file's name less ".md". */
	if (!name || buf_put(&c->out, name, n - 3)) {
		free(name);
		return -1;
	}
	free(name);

	struct buf text = BUF_INIT;
	json_t *e = NULL;
	ps_err err = treetext_load(s, idx, &e);
	int bad = 0;
	if (err == PS_ERR_NOMEM)
		return -1;
	if (err)
		bad = buf_puts(&text, "(unreadable line)");
	else
		bad = treetext_display(c, &text, idx, e);
	if (!bad && e && !strcmp(treetext_str(e, "type"), "message") &&
	    !strcmp(treetext_str(json_object_get(e, "message"), "role"), "assistant")) {
		/* Kept for the tool results that follow it. */
		json_decref(c->assistant_json);
		c->assistant = idx;
		c->assistant_json = json_incref(e);
	}
	json_decref(e);
	if (!bad && text.len) {
		size_t at = c->out.len;
		bad = buf_puts(&c->out, "  ") || treetext_cut(&c->out, text.data, text.len, TREETEXT_WIDTH);
		if (!bad && c->out.len == at + 2)
			c->out.len = at; /* only blanks: no text to show */
	}
	buf_free(&text);
	if (!bad && s->entries[idx].label != PS_NIL)
		bad = buf_puts(&c->out, "  [") ||
		      treetext_cut(&c->out, session_str(s, s->entries[idx].label),
				   strlen(session_str(s, s->entries[idx].label)), TREETEXT_WIDTH) ||
		      buf_putc(&c->out, ']');
	if (!bad && idx == c->leaf)
		bad = buf_puts(&c->out, "  ← leaf");
	return bad || buf_putc(&c->out, '\n');
}

static int treetext_push(struct treetext_ctx *c, struct treetext_item it)
{
	if (c->n_stack == c->cap_stack) {
		uint32_t cap = c->cap_stack ? c->cap_stack * 2 : 64;
		struct treetext_item *grown = realloc(c->stack, (size_t)cap * sizeof *grown);
		if (!grown)
			return -1;
		c->stack = grown;
		c->cap_stack = cap;
	}
	c->stack[c->n_stack++] = it;
	return 0;
}

/* Whether pi's /tree leaves an entry out, in every filter: an assistant
 * message without text that is neither an error nor aborted (it only
 * calls tools; each result's line shows the call), and pi's `usage`
 * entries, unless the entry is the current leaf (pi shows the leaf
 * always; it hides a `usage` leaf too, but the leaf's mark would go with
 * it).  1 or 0, -1 when memory runs out; each entry is looked at once. */
static int treetext_hidden(struct treetext_ctx *c, uint32_t e)
{
	const struct ps_session *s = c->s;
	if (c->flags[e] & TREETEXT_KNOWN)
		return (c->flags[e] & TREETEXT_HIDDEN) != 0;
	int hidden = 0;
	const char *kind = session_str(s, s->entries[e].kind);
	if (e == c->leaf) {
		hidden = 0;
	} else if (!strcmp(kind, "usage")) {
		hidden = 1;
	} else if (!strcmp(kind, "assistant")) {
		json_t *j;
		ps_err err = treetext_load(s, e, &j);
		if (err == PS_ERR_NOMEM)
			return -1;
		if (!err) {
			const json_t *msg = json_object_get(j, "message");
			const char *stop = treetext_str(msg, "stopReason");
			int failed = *stop && strcmp(stop, "stop") && strcmp(stop, "toolUse");
			hidden = !treetext_has_text(json_object_get(msg, "content")) && !failed;
			json_decref(j);
		}
	}
	c->flags[e] |= TREETEXT_KNOWN | (hidden ? TREETEXT_HIDDEN : 0);
	return hidden;
}

static int treetext_append(uint32_t **a, uint32_t *n, uint32_t *cap, uint32_t v)
{
	if (*n == *cap) {
		uint32_t grown_cap = *cap ? *cap * 2 : 64;
		uint32_t *grown = realloc(*a, (size_t)grown_cap * sizeof *grown);
		if (!grown)
			return -1;
		*a = grown;
		*cap = grown_cap;
	}
	(*a)[(*n)++] = v;
	return 0;
}

/* The siblings after e: through next_sibling, or for roots (roots and
 * orphans, which have no parent to list them) the next one in file order. */
static uint32_t treetext_next(const struct ps_session *s, uint32_t e, int roots)
{
	if (!roots)
		return s->entries[e].next_sibling;
	while (++e < s->n_entries && s->entries[e].parent != PS_NIL)
		;
	return e < s->n_entries ? e : PS_NIL;
}

/* Pushes first and its siblings (as treetext_next goes) onto the look-
 * through stack so that they pop in pi's order: the one on the leaf's path
 * first, then the rest in file order. */
static int treetext_push_siblings(struct treetext_ctx *c, uint32_t first, int roots)
{
	const struct ps_session *s = c->s;
	uint32_t base = c->n_look, active = PS_NIL;
	for (uint32_t e = first; e != PS_NIL && active == PS_NIL; e = treetext_next(s, e, roots))
		if (c->flags[e] & TREETEXT_ON_PATH)
			active = e;
	/* Pushed in the order they are drawn, then turned over in place. */
	if (active != PS_NIL && treetext_append(&c->look, &c->n_look, &c->cap_look, active))
		return -1;
	for (uint32_t e = first; e != PS_NIL; e = treetext_next(s, e, roots))
		if (e != active && treetext_append(&c->look, &c->n_look, &c->cap_look, e))
			return -1;
	for (uint32_t i = base, j = c->n_look; i + 1 < j; i++, j--) {
		uint32_t t = c->look[i];
		c->look[i] = c->look[j - 1];
		c->look[j - 1] = t;
	}
	return 0;
}

/* The entries drawn right below a drawn one (first is its first child),
 * or at the top (first is the first root), into c->kids in pi's order: a
 * hidden child's place is taken by what is drawn below it, as pi's
 * recalculateVisualStructure hangs entries on their nearest drawn
 * ancestor.  A hidden entry has one such ancestor, so a whole walk looks
 * through each once. */
static int treetext_gather(struct treetext_ctx *c, uint32_t first, int roots)
{
	const struct ps_session *s = c->s;
	c->n_kids = 0;
	c->n_look = 0;
	if (first == PS_NIL)
		return 0;
	if (treetext_push_siblings(c, first, roots))
		return -1;
	while (c->n_look) {
		uint32_t e = c->look[--c->n_look];
		int hidden = treetext_hidden(c, e);
		if (hidden < 0)
			return -1;
		if (!hidden) {
			if (treetext_append(&c->kids, &c->n_kids, &c->cap_kids, e))
				return -1;
		} else if (s->entries[e].first_child != PS_NIL &&
			   treetext_push_siblings(c, s->entries[e].first_child, 0)) {
			return -1;
		}
	}
	return 0;
}

/* Pushes c->kids onto the walk's stack to pop in their order. */
static int treetext_push_kids(struct treetext_ctx *c, struct treetext_item proto)
{
	for (uint32_t i = c->n_kids; i-- > 0;) {
		proto.entry = c->kids[i];
		proto.is_last = i == c->n_kids - 1;
		if (treetext_push(c, proto))
			return -1;
	}
	return 0;
}

static int treetext_walk(struct treetext_ctx *c)
{
	const struct ps_session *s = c->s;
	uint32_t first_root = 0;
	while (first_root < s->n_entries && s->entries[first_root].parent != PS_NIL)
		first_root++;
	if (treetext_gather(c, first_root < s->n_entries ? first_root : PS_NIL, 1))
		return -1;
	/* Several roots are the children of an invisible one: indented one
	 * level that is not drawn, without connectors. */
	c->multiple_roots = c->n_kids > 1;
	unsigned char multi = (unsigned char)c->multiple_roots;
	struct treetext_item proto = { PS_NIL, multi, PS_NIL, multi, multi, 0, multi };
	if (treetext_push_kids(c, proto))
		return -1;
	while (c->n_stack) {
		struct treetext_item it = c->stack[--c->n_stack];
		if (treetext_line(c, &it))
			return -1;
		if (treetext_gather(c, s->entries[it.entry].first_child, 0))
			return -1;
		if (!c->n_kids)
			continue;
		int multiple = c->n_kids > 1;
		struct treetext_item child = { PS_NIL, it.indent, it.gutters, (unsigned char)multiple,
					       (unsigned char)multiple, 0, 0 };
		if (multiple || (it.just_branched && it.indent > 0))
			child.indent = it.indent + 1;
		if (it.show_connector && !it.virtual_root_child) {
			/* A gutter where this line's connector is, for what hangs below. */
			uint32_t display = c->multiple_roots ? (it.indent ? it.indent - 1 : 0) : it.indent;
			if (c->n_gutters == c->cap_gutters) {
				uint32_t cap = c->cap_gutters ? c->cap_gutters * 2 : 16;
				struct treetext_gutter *grown = realloc(c->gutters, (size_t)cap * sizeof *grown);
				if (!grown)
					return -1;
				c->gutters = grown;
				c->cap_gutters = cap;
			}
			c->gutters[c->n_gutters] = (struct treetext_gutter){ display ? display - 1 : 0, it.gutters, !it.is_last };
			child.gutters = c->n_gutters++;
		}
		if (treetext_push_kids(c, child))
			return -1;
	}
	return 0;
}

ps_err treetext_text(const struct ps_session *s, char **buf, size_t *len)
{
	if (!s->have_header)
		return PS_ERR_NOTSESSION;
	struct treetext_ctx c = { .s = s, .leaf = session_leaf(s), .assistant = PS_NIL };
	int bad = 0;
	if (s->n_entries) {
		c.flags = calloc(s->n_entries, 1);
		bad = !c.flags;
		for (uint32_t e = c.leaf; !bad && e != PS_NIL; e = s->entries[e].parent)
			c.flags[e] |= TREETEXT_ON_PATH;
		bad = bad || treetext_walk(&c);
	}
	bad = bad || buf_finish(&c.out);
	free(c.flags);
	free(c.kids);
	free(c.look);
	free(c.gutters);
	free(c.stack);
	free(c.level_gutter);
	json_decref(c.assistant_json);
	if (bad) {
		buf_free(&c.out);
		return PS_ERR_NOMEM;
	}
	*buf = c.out.data;
	*len = c.out.len;
	return PS_OK;
}
