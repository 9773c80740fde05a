/* Parses an entry file (docs/entry-format.md) back into an entry: the
 * inverse of render.c.  The comments say why; the format, and what is
 * accepted beyond the renderer's exact bytes, is in the document.
 *
 * Shape: the text is normalised once (line endings, final newline) and
 * checked to be UTF-8, so everything after works on one buffer of valid
 * UTF-8 ending in "\n" and may hand any slice of it to jansson.  The front
 * matter and the body are each read twice: the first pass only learns what
 * decides the reading of the rest (the marker tag, whether the entry is a
 * message shown in two scopes), the second builds the entry.  Nothing is
 * stored per line, so a 100 MB file costs its own size plus the entry, and
 * no function recurses (jansson's decoder is depth-limited).
 *
 * Ownership: the text, the original entry and its file name are borrowed;
 * the result is a new reference that may share image data strings with the
 * original. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "images.h"
#include "jstext.h"
#include "parse.h"
#include "parsectx.h"
#include "render.h"
#include "rewrite.h"

/* ---- front matter ---------------------------------------------------- */

/* One front matter line: NAME ": " VALUE, or NAME ":" at the end of the
 * line (an editor that strips trailing blanks turns an emptied "x: " into
 * that).  *raw is the VALUE's bytes. */
static ps_err parse_front_line(struct parse_ctx *c, const char *s, size_t n, size_t line,
			       struct parse_name *name, const char **raw, size_t *rawlen)
{
	char show[PARSE_SHOW_MAX + 8];
	size_t used;
	ps_err err = parse_name(c, s, n, line, &used, name);

	if (err)
		return err;
	if (used + 1 == n && s[used] == ':') {
		*raw = s + n;
		*rawlen = 0;
		return PS_OK;
	}
	if (n - used < 2 || s[used] != ':' || s[used + 1] != ' ') {
		parse_key_free(&name->key);
		return parse_fail(c, line, "expected \"NAME: VALUE\" in the front matter, found \"%s\"",
				  parse_show(s, n, show, sizeof show));
	}
	*raw = s + used + 2;
	*rawlen = n - used - 2;
	return PS_OK;
}

/* "pi" or "piN", N >= 1 without a leading zero: the tags the renderer
 * writes. */
static int parse_is_tag(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	if (!json_is_string(v) || n < 2 || n > PARSE_TAG_MAX || memcmp(s, "pi", 2) != 0)
		return 0;
	if (n == 2)
		return 1;
	if (s[2] == '0')
		return 0;
	for (size_t i = 2; i < n; i++)
		if (!parse_is_digit(s[i]))
			return 0;
	return 1;
}

/* Pass 1 learns the tag and the mode; pass 2 fills the objects. */
static ps_err parse_front(struct parse_ctx *c, int pass)
{
	char show[PARSE_SHOW_MAX + 8];
	size_t pos = 4, line = 2;
	int have_tag = 0;
	ps_err err = PS_OK;

	for (; pos < c->fm_end; line++) {
		const char *s = c->text + pos;
		const char *nl = memchr(s, '\n', c->fm_end - pos); /* fm_end follows a "\n" */
		size_t n = (size_t)(nl - s);
		struct parse_name name;
		const char *raw = NULL;
		size_t rawlen = 0;
		json_t *v = NULL, *obj;

		pos += n + 1;
		if (n == 0)
			continue; /* a blank line: harmless, so not refused */
		err = parse_front_line(c, s, n, line, &name, &raw, &rawlen);
		if (err)
			return err;
		if (pass == 1) {
			if (name.scope == PARSE_PI) {
				if (!parse_eq(name.key.s, name.key.n, "marker"))
					err = parse_target(c, &name, line, &obj); /* the refusal */
				else if (have_tag++)
					err = parse_fail(c, line, "duplicate field \"pi.marker\"");
				else if (!(err = parse_value(c, raw, rawlen, line, &v)) && !parse_is_tag(v))
					err = parse_fail(c, line, "pi.marker must be pi or piN (N = 1, 2, ...), not %s",
							 parse_show_value(v, show, sizeof show));
				if (!err)
					c->patlen = (size_t)snprintf(c->pat, sizeof c->pat, "\n<!-- %s:",
								    json_string_value(v));
			} else {
				c->n_fields++;
				if (parse_is_entry_key(&name, "message"))
					c->has_message_key = 1;
				if (parse_is_entry_key(&name, "type") && !c->type &&
				    !(err = parse_value(c, raw, rawlen, line, &v))) {
					c->type = json_incref(v);
					c->type_line = line;
					c->type_message = parse_str_is(v, "message");
				}
			}
			json_decref(v);
			parse_key_free(&name.key);
			if (err)
				return err;
			continue;
		}
		if (name.scope == PARSE_PI) {
			parse_key_free(&name.key);
			continue;
		}
		err = parse_target(c, &name, line, &obj);
		if (!err && (parse_eq(name.key.s, name.key.n, "content") ||
			     parse_eq(name.key.s, name.key.n, "replacement")) &&
		    (parse_eq(raw, rawlen, "string") || parse_eq(raw, rawlen, "blocks"))) {
			/* the slot descriptor: the value is in the body */
			const char *key = name.key.n == 7 ? "content" : "replacement";
			if (obj != c->dflt)
				err = parse_fail(c, line, "\"%s: %.*s\" describes the %s's content; here it needs a "
						 "quoted value", key, (int)rawlen, raw, c->two ? "message" : "entry");
			else if (c->slot_obj)
				err = parse_fail(c, line, "a second content descriptor (\"%s: ...\" already said "
						 "where the content is)", c->slot_key);
			else if (!(err = parse_set(c, obj, key, name.key.n, json_null(), line, 0))) {
				/* a placeholder keeps the key's place in the object */
				c->slot_obj = obj;
				c->slot_key = key;
				c->slot_string = raw[0] == 's';
				if (!c->slot_string && !(c->blocks = json_array()))
					err = parse_nomem(c);
			}
		} else if (!err && !(err = parse_value(c, raw, rawlen, line, &v))) {
			err = parse_set(c, obj, name.key.s, name.key.n, v, line, 0);
		}
		parse_key_free(&name.key);
		if (err)
			return err;
	}
	return PS_OK;
}

/* ---- body ------------------------------------------------------------ */

/* Start of the first marker line at or after pos (a line start), or len. */
static size_t parse_next_marker(const struct parse_ctx *c, size_t pos)
{
	const char *hit;

	if (pos >= c->len)
		return c->len;
	if (c->len - pos >= c->patlen - 1 && memcmp(c->text + pos, c->pat + 1, c->patlen - 1) == 0)
		return pos;
	hit = memmem(c->text + pos, c->len - pos, c->pat, c->patlen);
	return hit ? (size_t)(hit - c->text) + 1 : c->len;
}

/* A text payload: the text, then its terminator "\n" (missing only when
 * the separator line before the next marker was deleted: the text then
 * ends where the marker starts). */
static json_t *parse_text(const char *p, size_t n)
{
	if (n > 0 && p[n - 1] == '\n')
		n--;
	return json_stringn(p, n);
}

static int parse_all_newlines(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != '\n')
			return 0;
	return 1;
}

/* A JSON payload: "```json\n" JSON "\n```\n" (blank lines after it are
 * allowed).  line: the line of the opening fence. */
static ps_err parse_fence(struct parse_ctx *c, const char *p, size_t n, size_t line, json_t **out)
{
	char show[PARSE_SHOW_MAX + 8];
	json_error_t err;

	while (n > 0 && p[n - 1] == '\n')
		n--;
	if (n < 8 || memcmp(p, "```json\n", 8) != 0)
		return parse_fail(c, line, "expected a ```json block after the marker line");
	if (n < 12 || memcmp(p + n - 4, "\n```", 4) != 0)
		return parse_fail(c, line, "the ```json block does not end with a ``` line (a text after "
				  "it needs a marker line of its own)");
	if (!(*out = parse_json(p + 8, n - 12, &err)))
		return parse_fail(c, line + (err.line > 0 ? (size_t)err.line : 0), "bad JSON in the ```json block: %s",
				  parse_show(err.text, strlen(err.text), show, sizeof show));
	return PS_OK;
}

/* The block markers need "content: blocks" (or "replacement: blocks"). */
static ps_err parse_need_blocks(struct parse_ctx *c, const struct parse_marker *m)
{
	if (c->blocks)
		return PS_OK;
	if (c->slot_obj)
		return parse_fail(c, m->line, "a %s marker needs \"%s: blocks\" in the front matter, not \"%s: string\"",
				  parse_kinds[m->kind], c->slot_key, c->slot_key);
	return parse_fail(c, m->line, "a %s marker needs a \"content: blocks\" line in the front matter",
			  parse_kinds[m->kind]);
}

/* One body item: marker m (NULL for the leading text) and its payload
 * p[0..n) up to the next marker line; last: nothing follows. */
static ps_err parse_item(struct parse_ctx *c, struct parse_marker *m, const char *p, size_t n, int last,
			 size_t line, int first)
{
	char show[PARSE_SHOW_MAX + 8];
	size_t pline = m ? m->line + 1 : line; /* the payload's first line */
	json_t *v = NULL, *obj;
	ps_err err = PS_OK;

	/* the blank line before the next marker */
	if (!last && n > 0 && p[n - 1] == '\n')
		n--;
	if (c->value)
		return parse_fail(c, line, "nothing may follow a value marker");
	if (!m) {
		if (!c->slot_obj)
			return parse_fail(c, line, "text outside a marker, but the front matter has no "
					  "\"content: string\" or \"content: blocks\" line");
		if (!(v = parse_text(p, n)))
			return parse_nomem(c);
		if (c->slot_string) {
			c->slot_text = v;
			return PS_OK;
		}
		obj = json_object();
		if (!obj || json_object_set_new(obj, "type", json_string("text")) ||
		    json_object_set_new(obj, "text", v) || json_array_append_new(c->blocks, obj)) {
			json_decref(obj);
			return parse_nomem(c);
		}
		return PS_OK;
	}
	switch (m->kind) {
	case PARSE_TEXT:
	case PARSE_THINKING:
		if ((err = parse_need_blocks(c, m)))
			return err;
		if (!(v = parse_text(p, n)) || json_object_set_new(m->blk, parse_kinds[m->kind], v))
			return parse_nomem(c);
		break;
	case PARSE_TOOLCALL:
		if ((err = parse_need_blocks(c, m)))
			return err;
		if (!parse_all_newlines(p, n)) {
			if ((err = parse_fence(c, p, n, pline, &v)))
				return err;
			if (json_object_set_new(m->blk, "arguments", v))
				return parse_nomem(c);
		}
		break;
	case PARSE_IMAGE:
		if ((err = parse_need_blocks(c, m)))
			return err;
		if (m->has_bytes && c->files)
			err = parse_image_link(c, m, p, n, pline);
		else if (!(err = parse_image(c, m)) && !parse_all_newlines(p, n))
			err = parse_fail(c, pline, "an image marker has nothing below it (a text needs a "
					 "marker line of its own)");
		if (err)
			return err;
		break;
	case PARSE_BLOCK:
		if ((err = parse_need_blocks(c, m)))
			return err;
		if ((err = parse_fence(c, p, n, pline, &v)))
			return err;
		if (json_array_append_new(c->blocks, v))
			return parse_nomem(c);
		return PS_OK;
	case PARSE_SUMMARY:
	case PARSE_COMMAND:
	case PARSE_OUTPUT:
		if (!(v = parse_text(p, n)))
			return parse_nomem(c);
		return parse_set(c, c->dflt, parse_kinds[m->kind], strlen(parse_kinds[m->kind]), v, m->line, 1);
	case PARSE_SECTION:
		if (!c->sections) {
			if (json_object_get(c->dflt, "sections"))
				return parse_fail(c, m->line, "duplicate field \"sections\"");
			if (!(c->sections = json_object()) || json_object_set_new(c->dflt, "sections", c->sections))
				return parse_nomem(c);
		}
		if (json_object_getn(c->sections, m->name.key.s, m->name.key.n))
			return parse_fail(c, m->line, "duplicate section \"%s\"",
					  parse_show(m->name.key.s, m->name.key.n, show, sizeof show));
		if (m->value) {
			if (!parse_all_newlines(p, n))
				return parse_fail(c, pline, "a section marker with value= has nothing below it");
			v = json_incref(m->value);
		} else if (!(v = parse_text(p, n))) {
			return parse_nomem(c);
		}
		if (json_object_setn_new(c->sections, m->name.key.s, m->name.key.n, v))
			return parse_nomem(c);
		return PS_OK;
	case PARSE_JSON:
		if ((err = parse_target(c, &m->name, m->line, &obj)))
			return err;
		if ((err = parse_fence(c, p, n, pline, &v)))
			return err;
		return parse_set(c, obj, m->name.key.s, m->name.key.n, v, m->line, 1);
	case PARSE_VALUE:
		if (c->n_fields > 0 || !first)
			return parse_fail(c, m->line, "a value marker must be the only thing in the file");
		return parse_fence(c, p, n, pline, &c->value);
	default:
		return PS_OK;
	}
	if (json_array_append(c->blocks, m->blk))
		return parse_nomem(c);
	return PS_OK;
}

/* Pass 1 only reads json markers (their NAME may be "message", which
 * decides the mode); pass 2 reads every item. */
static ps_err parse_body(struct parse_ctx *c, int pass)
{
	size_t pos = c->body, m = parse_next_marker(c, pos);
	int first = 1;
	ps_err err;

	if (m > pos) {
		if (pass == 2 && (err = parse_item(c, NULL, c->text + pos, m - pos, m == c->len,
						   parse_line_of(c, pos), 1)))
			return err;
		first = 0;
	}
	while (m < c->len) {
		const char *s = c->text + m;
		size_t eol = (size_t)((const char *)memchr(s, '\n', c->len - m) - c->text);
		size_t next = parse_next_marker(c, eol + 1);
		size_t line = parse_line_of(c, m);
		struct parse_marker mk;

		if (pass == 1) {
			size_t plen = c->patlen - 1;
			if (eol - m > plen + 5 && memcmp(s + plen, "json ", 5) == 0) {
				if ((err = parse_marker(c, s, eol - m, line, &mk))) {
					/* A refused marker may hold its decoded name. */
					parse_marker_free(&mk);
					return err;
				}
				if (parse_is_entry_key(&mk.name, "message"))
					c->has_message_key = 1;
				parse_marker_free(&mk);
			}
		} else {
			err = parse_marker(c, s, eol - m, line, &mk);
			if (!err)
				err = parse_item(c, &mk, c->text + eol + 1, next - eol - 1, next == c->len, line, first);
			parse_marker_free(&mk);
			if (err)
				return err;
		}
		first = 0;
		m = next;
	}
	return PS_OK;
}

/* The original's content array, found as the renderer finds the slot. */
static void parse_orig_slot(struct parse_ctx *c)
{
	const json_t *o = c->original, *msg = json_object_get(o, "message"), *d = o, *slot, *repl;

	if (parse_str_is(json_object_get(o, "type"), "message") && json_is_object(msg) && json_object_size(msg) > 0)
		d = msg;
	slot = json_object_get(d, "content");
	if (!json_is_string(slot) && !json_is_array(slot)) {
		repl = json_object_get(d, "replacement");
		slot = json_is_object(repl) && json_object_size(repl) == 1 ? json_object_get(repl, "content") : NULL;
	}
	c->orig_slot = json_is_array(slot) ? slot : NULL;
}

/* The original's images that are files, when its slot is where they are
 * (images.h: the renderer links exactly these). */
static ps_err parse_orig_files(struct parse_ctx *c)
{
	size_t i, n = 0;
	json_t *b;

	if (!c->orig_slot || c->orig_slot != images_content(c->original))
		return PS_OK;
	json_array_foreach(c->orig_slot, i, b)
		n += images_is_image(b) != 0;
	/* one spare so that an entry without images still marks the mode */
	c->files = calloc(n + 1, sizeof *c->files);
	c->linked = calloc(n + 1, 1);
	if (!c->files || !c->linked)
		return parse_nomem(c);
	json_array_foreach(c->orig_slot, i, b)
		if (images_is_image(b))
			c->files[c->n_files++] = b;
	return PS_OK;
}

/* The refusal of an edit that changed identity field name from va to vb
 * (either may be NULL: absent). */
static ps_err parse_id_fail(struct parse_ctx *c, size_t line, const char *what, const char *name,
			    const json_t *va, const json_t *vb)
{
	char was[PARSE_SHOW_MAX + 8], now[PARSE_SHOW_MAX + 8];

	parse_show_value(va, was, sizeof was);
	parse_show_value(vb, now, sizeof now);
	if (!vb)
		return parse_fail(c, line, "%s \"%s\" cannot be removed (was %s)", what, name, was);
	if (!va)
		return parse_fail(c, line, "%s \"%s\" cannot be added (now %s)", what, name, now);
	return parse_fail(c, line, "%s \"%s\" cannot change (was %s, now %s)", what, name, was, now);
}

/* An edit keeps the entry's identity (parse.h). */
static ps_err parse_check_ids(struct parse_ctx *c, const json_t *res)
{
	char name[64];
	const json_t *o = c->original;
	const json_t *om = json_object_get(o, "message"), *nm = json_object_get(res, "message");

	for (int level = 0; level < 2; level++) {
		const json_t *a = level ? (json_is_object(om) ? om : NULL) : o;
		const json_t *b = level ? (json_is_object(nm) ? nm : NULL) : res;
		for (size_t i = level ? PARSE_NIDS_ENTRY_ONLY : 0; i < PARSE_NIDS; i++) {
			const json_t *va = json_object_get(a, parse_ids[i]), *vb = json_object_get(b, parse_ids[i]);
			size_t line = c->id_line[level][i];
			if ((!va && !vb) || (va && vb && json_equal(va, vb)))
				continue;
			if (!line)
				line = level && c->message_line ? c->message_line : c->close_line;
			if (level == 0 && c->two && i >= PARSE_NIDS_ENTRY_ONLY)
				snprintf(name, sizeof name, "entry.%s", parse_ids[i]);
			else if (level == 1 && !c->two)
				snprintf(name, sizeof name, "message.%s", parse_ids[i]);
			else
				snprintf(name, sizeof name, "%s", parse_ids[i]);
			return parse_id_fail(c, line, c->id_json[level][i] ? "field" : "front matter field", name,
					     va, vb);
		}
	}
	return PS_OK;
}

/* Front matter and body into c->entry (or c->value). */
static ps_err parse_file(struct parse_ctx *c)
{
	const char *close;
	json_t *slot;
	ps_err err;

	/* the closing line may be the first after the opening one */
	close = memmem(c->text + 3, c->len - 3, "\n---\n", 5);
	if (!close)
		return parse_fail(c, 1, "the front matter has no closing \"---\" line (a file whose first line "
				  "is \"---\" starts with front matter: a text that starts with such a line needs "
				  "the front matter above it)");
	c->fm_end = (size_t)(close - c->text) + 1;
	c->body = c->fm_end + 4;
	c->close_line = parse_line_of(c, c->fm_end);
	c->patlen = (size_t)snprintf(c->pat, sizeof c->pat, "\n<!-- pi:");

	if ((err = parse_front(c, 1)))
		return err;
	/* A changed type would make the rest read differently (and fail
	 * there); say what really happened. */
	const json_t *otype = json_object_get(c->original, "type"); /* a string is always a front matter line */
	if (json_is_string(otype) && !(c->type && json_equal(c->type, otype)))
		return parse_id_fail(c, c->type ? c->type_line : c->close_line, "front matter field", "type", otype,
				     c->type);
	if ((err = parse_body(c, 1)))
		return err;
	c->two = c->type_message && !c->has_message_key;
	/* The renderer shows {"type":"message", ...} without a "message" key
	 * in one scope, and the file cannot say so (docs: Names); the entry
	 * that was rendered can. */
	if (c->two && c->original && !json_object_get(c->original, "message") &&
	    parse_str_is(json_object_get(c->original, "type"), "message"))
		c->two = 0;
	if (!(c->entry = json_object()) || (c->two && !(c->msg = json_object())))
		return parse_nomem(c);
	c->dflt = c->two ? c->msg : c->entry;
	if (c->original) {
		parse_orig_slot(c);
		if ((err = parse_orig_files(c)))
			return err;
	}
	if ((err = parse_front(c, 2)) || (err = parse_body(c, 2)))
		return err;
	if (c->files && (err = parse_check_lost_links(c)))
		return err;

	if (c->slot_obj) {
		if (c->slot_string)
			slot = c->slot_text ? json_incref(c->slot_text) : json_string("");
		else
			slot = json_incref(c->blocks);
		if (slot && !strcmp(c->slot_key, "replacement"))
			slot = json_pack("{s:o}", "content", slot);
		if (!slot || json_object_set_new(c->slot_obj, c->slot_key, slot))
			return parse_nomem(c);
	}
	/* in two scopes, a message with no key at all was no message */
	if (c->two && json_object_size(c->msg) > 0 && json_object_set(c->entry, "message", c->msg))
		return parse_nomem(c);
	return PS_OK;
}

/* A new file without front matter: the text of a user message. */
static ps_err parse_plain(struct parse_ctx *c, int64_t now_ms, json_t **out)
{
	json_t *msg = json_object(), *entry = json_object();
	/* less the final "\n" (normalising made sure there is one) */
	json_t *text = json_stringn(c->text, c->len - 1);

	if (!msg || !entry || !text || json_object_set_new(msg, "role", json_string("user")) ||
	    json_object_set(msg, "content", text) ||
	    json_object_set_new(msg, "timestamp", json_integer((json_int_t)now_ms)) ||
	    json_object_set_new(entry, "type", json_string("message")) ||
	    json_object_set(entry, "message", msg)) {
		json_decref(entry);
		entry = NULL;
	}
	json_decref(text);
	json_decref(msg);
	*out = entry;
	return entry ? PS_OK : parse_nomem(c);
}

ps_err parse_entry_md_at(const char *text, size_t len, const json_t *original, const char *name,
			 int64_t now_ms, json_t **out, char *why, size_t why_len)
{
	struct parse_ctx c;
	json_t *res = NULL;
	size_t bad, i;
	ps_err err;

	memset(&c, 0, sizeof c);
	c.why = why;
	c.why_len = why_len;
	c.original = original;
	c.name = name ? name : RENDER_DEFAULT_NAME;
	c.lc_line = 1;
	if (why && why_len)
		why[0] = '\0';
	if (out)
		*out = NULL;
	if (!out || (!text && len))
		return parse_fail(&c, 0, "no text to parse");
	if ((err = parse_normalize(&c, text ? text : "", len)))
		goto out;
	if ((bad = parse_utf8_bad((const unsigned char *)c.text, c.len)) < c.len) {
		err = parse_fail(&c, parse_line_of(&c, bad), "invalid UTF-8 (byte 0x%02x): an entry holds text only",
				 (unsigned char)c.text[bad]);
		goto out;
	}
	for (i = 0; i < c.len && strchr(" \t\n\r\v\f", c.text[i]) && c.text[i]; i++)
		;
	if (i == c.len) {
		err = parse_fail(&c, 0, "empty file: nothing to append");
		goto out;
	}
	if (c.len < 4 || memcmp(c.text, "---\n", 4) != 0) {
		/* An entry rewritten without front matter: the file is its
		 * new text (rewrite.h), less the final "\n" as a new file. */
		if (original)
			err = rewrite_entry_text(original, c.text, c.len - 1, out, why, why_len);
		else
			err = parse_plain(&c, now_ms, out);
		goto out;
	}
	if ((err = parse_file(&c)))
		goto out;
	res = c.value ? c.value : c.entry;
	if (original && (err = parse_check_ids(&c, res)))
		goto out;
	if (!original && (!json_is_object(res) || !json_is_string(json_object_get(res, "type")))) {
		err = parse_fail(&c, c.close_line, "a new entry needs a \"type\" line with a string in the front matter");
		goto out;
	}
	if (json_is_object(res)) {
		/* the appender's to fill (a copied entry file keeps them) */
		json_object_del(res, "id");
		json_object_del(res, "parentId");
		json_object_del(res, "timestamp");
	}
	if (!original && parse_str_is(json_object_get(res, "type"), "message")) {
		json_t *msg = json_object_get(res, "message");
		if (json_is_object(msg) && !json_object_get(msg, "timestamp") &&
		    json_object_set_new(msg, "timestamp", json_integer((json_int_t)now_ms))) {
			err = parse_nomem(&c);
			goto out;
		}
	}
	*out = json_incref(res);
out:
	json_decref(c.type);
	json_decref(c.entry);
	json_decref(c.msg);
	json_decref(c.value);
	json_decref(c.slot_text);
	json_decref(c.blocks);
	free(c.files);
	free(c.linked);
	free(c.owned);
	return err;
}

ps_err parse_entry_md(const char *text, size_t len, const json_t *original, const char *name, json_t **out,
		      char *why, size_t why_len)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return parse_entry_md_at(text, len, original, name, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, out,
				 why, why_len);
}

int parse_is_front_matter(const char *text, size_t len)
{
	if (!text)
		return 0;
	if (len >= 4 && memcmp(text, "---\n", 4) == 0)
		return 1;
	if (len == 3 && memcmp(text, "---", 3) == 0)
		return 1; /* the final newline was stripped */
	if (len >= 5 && memcmp(text, "---\r\n", 5) == 0)
		return parse_is_crlf(text, len);
	return 0;
}

int parse_may_be_front_matter(const char *prefix, size_t len)
{
	size_t n = len < 4 ? len : 4;
	if (!prefix)
		return len == 0;
	/* "---\n", "---" at the end, or "---\r\n" of a CRLF file */
	return memcmp(prefix, "---\n", n) == 0 || memcmp(prefix, "---\r", n) == 0;
}
