/* Renders one session entry as Markdown: front matter with the metadata,
 * then the text verbatim, split into sections by marker lines.  The format
 * is specified in docs/entry-format.md; this file implements the renderer
 * side of it and the comments below only say why things are done the way
 * they are.  The write side parses the same format back, so every choice
 * here (what is bare, what is quoted, which bytes surround a text) is part
 * of a contract: change the document first.
 *
 * Performance: this runs for every entry file that is read and for the
 * sizes shown by `ls -l` (every entry of a session), so the output is built
 * in one growing buffer with no allocation per field; JSON is written by a
 * small serialiser straight into that buffer (json_dumps() and jsonout_*()
 * return a new allocation per value; only jsonout_number() is shared, so
 * numbers look the same here as in context.json).
 *
 * Ownership: the entry and the file name are borrowed, the entry is never
 * modified; the returned buffer belongs to the caller. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "images.h"
#include "jsonout.h"
#include "jstext.h"
#include "render.h"

/* jansson caps parse depth at 2048; anything deeper was built by hand and
 * could be cyclic, so the serialiser stops there rather than recurse
 * without bound. */
#define RENDER_MAX_DEPTH 4096

/* Where a key of the entry (or of its message) goes in the file. */
enum render_place {
	RENDER_SKIP,     /* the message object itself (it is split into fields) */
	RENDER_FRONT,    /* a front matter line */
	RENDER_SLOT,     /* the content slot: descriptor line + body text/blocks */
	RENDER_FIELD,    /* a verbatim string section (summary, command, output) */
	RENDER_SECTIONS, /* system-message sections, one marker each */
	RENDER_JSON,     /* a pretty JSON section */
};

struct render_ctx {
	struct buf out;
	int err;               /* an allocation failed: further writes are skipped */
	const json_t *entry;   /* borrowed */
	/* Two-scope mode (type "message" with a non-empty message object): the
	 * message's keys are shown beside the entry's.  NULL otherwise. */
	const json_t *msg;
	const json_t *dflt;    /* the default scope: msg, or entry */
	const json_t *slot;    /* string or array shown as the leading body, or NULL */
	const char *slot_key;  /* "content" or "replacement" */
	const char *name;      /* the entry file's name: image links are relative to it */
	int slot_files;        /* the slot's images are files in NAME.images/ (images.h) */
	size_t images;         /* images linked so far: the next one's index */
	char tag[32];          /* marker tag: "pi", or "piN" when a text holds "<!-- pi:" */
	size_t taglen;
	uint64_t tag_used;     /* bit n: a text line starts with the marker of tag n */
	unsigned long long tag_max; /* largest tag number seen in a text */
	int items;             /* body items written so far (for the blank separators) */
};

/* ---- output ---------------------------------------------------------- */

static void render_put(struct render_ctx *c, const char *s, size_t n)
{
	if (!c->err && buf_put(&c->out, s, n))
		c->err = 1;
}

static void render_puts(struct render_ctx *c, const char *s)
{
	render_put(c, s, strlen(s));
}

static void render_putc(struct render_ctx *c, char ch)
{
	if (!c->err && buf_putc(&c->out, ch))
		c->err = 1;
}

/* ---- small predicates ------------------------------------------------ */

static int render_key_is(const char *key, size_t klen, const char *lit)
{
	size_t n = strlen(lit);
	return klen == n && memcmp(key, lit, n) == 0;
}

/* Compares with the string's real length: a value parsed with
 * JSON_ALLOW_NUL may hold "text\0..." which strcmp would call "text". */
static int render_str_is(const json_t *v, const char *lit)
{
	return json_is_string(v) && render_key_is(json_string_value(v), json_string_length(v), lit);
}

static int render_is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Names written without quotes: [A-Za-z_][A-Za-z0-9_]*.  No '.', so a
 * scope prefix ("message.", "entry.", "pi.") is never part of a bare key. */
static int render_is_bare(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_')
			continue;
		if (i > 0 && render_is_digit(ch))
			continue;
		return 0;
	}
	return 1;
}

/* May the string be written bare as a front matter value?  Bare means "the
 * rest of the line is the string", so anything that would read back as
 * another JSON value, or would not survive an editor (control bytes,
 * leading or trailing blanks), is quoted.  The YAML indicator rules are not
 * needed by our parser; they keep YAML-aware viewers from misreading. */
static int render_is_plain(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	/* '"' '{' '[' would read back as JSON; the rest are YAML indicators */
	if (strchr("\"{[ \t?:,]}#&*!|>'%@`", s[0]))
		return 0;
	if (s[0] == '-' && (n == 1 || s[1] == ' '))
		return 0; /* a YAML list item */
	if (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == ':')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 || ch == 0x7f)
			return 0;
		/* YAML reads ": " as a mapping and " #" as a comment */
		if (i + 1 < n && ((ch == ':' && s[i + 1] == ' ') || (ch == ' ' && s[i + 1] == '#')))
			return 0;
	}
	if (render_key_is(s, n, "true") || render_key_is(s, n, "false") || render_key_is(s, n, "null"))
		return 0;
	return !jstext_is_json_number(s, n);
}

/* The base keys of an entry.  In two-scope mode a bare name among these
 * means the entry's key, any other bare name the message's. */
static int render_is_base(const char *key, size_t klen)
{
	return render_key_is(key, klen, "type") || render_key_is(key, klen, "id") ||
	       render_key_is(key, klen, "parentId") || render_key_is(key, klen, "timestamp") ||
	       render_key_is(key, klen, "message");
}

/* ---- JSON ------------------------------------------------------------ */

static void render_json_string(struct render_ctx *c, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	render_putc(c, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		char esc[6];
		size_t elen = 2;
		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		render_put(c, s + run, i - run);
		esc[0] = '\\';
		switch (ch) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[ch >> 4];
			esc[5] = hex[ch & 15];
			elen = 6;
		}
		render_put(c, esc, elen);
		run = i + 1;
	}
	render_put(c, s + run, n - run);
	render_putc(c, '"');
}

/* JavaScript's form (shortest round trip: 0.00006, not 6.0000000000000002e-05),
 * as pi wrote it, and with ".0" added when that form has neither '.' nor an
 * exponent, so that it reads back as a jansson real, not an integer. */
static void render_json_real(struct render_ctx *c, double d)
{
	char tmp[48];

	jsonout_number(d, tmp);
	render_puts(c, tmp);
	if (!strpbrk(tmp, ".eEn")) /* "null" for a non-finite value stays */
		render_put(c, ".0", 2);
}

static void render_json_indent(struct render_ctx *c, int depth)
{
	render_putc(c, '\n');
	for (int i = 0; i < depth; i++)
		render_put(c, "  ", 2);
}

/* pretty: two-space indentation as JSON.stringify(v, null, 2); else the
 * compact one-line form.  Object keys keep their stored order. */
static void render_json(struct render_ctx *c, const json_t *v, int pretty, int depth)
{
	char num[32];
	const char *key;
	size_t klen, i;
	json_t *member;
	int first = 1;

	if (depth > RENDER_MAX_DEPTH) {
		render_puts(c, "null");
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		render_putc(c, '{');
		json_object_keylen_foreach((json_t *)v, key, klen, member) {
			if (!first)
				render_putc(c, ',');
			if (pretty)
				render_json_indent(c, depth + 1);
			render_json_string(c, key, klen);
			render_put(c, pretty ? ": " : ":", pretty ? 2 : 1);
			render_json(c, member, pretty, depth + 1);
			first = 0;
		}
		if (!first && pretty)
			render_json_indent(c, depth);
		render_putc(c, '}');
		break;
	case JSON_ARRAY:
		render_putc(c, '[');
		json_array_foreach(v, i, member) {
			if (i)
				render_putc(c, ',');
			if (pretty)
				render_json_indent(c, depth + 1);
			render_json(c, member, pretty, depth + 1);
		}
		if (json_array_size(v) && pretty)
			render_json_indent(c, depth);
		render_putc(c, ']');
		break;
	case JSON_STRING:
		render_json_string(c, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		render_puts(c, num);
		break;
	case JSON_REAL:
		render_json_real(c, json_real_value(v));
		break;
	case JSON_TRUE:
		render_puts(c, "true");
		break;
	case JSON_FALSE:
		render_puts(c, "false");
		break;
	default:
		render_puts(c, "null");
		break;
	}
}

/* ---- names and values ------------------------------------------------ */

static void render_key(struct render_ctx *c, const char *key, size_t klen)
{
	if (render_is_bare(key, klen))
		render_put(c, key, klen);
	else
		render_json_string(c, key, klen);
}

/* The name of key in its object: in two-scope mode a prefix says which
 * object it belongs to whenever the bare name would say otherwise. */
static void render_name(struct render_ctx *c, int in_entry, const char *key, size_t klen)
{
	if (c->msg) {
		int base = render_is_base(key, klen);
		if (in_entry && !base)
			render_puts(c, "entry.");
		else if (!in_entry && base)
			render_puts(c, "message.");
	}
	render_key(c, key, klen);
}

static void render_front_line(struct render_ctx *c, int in_entry, const char *key, size_t klen,
			      const json_t *v, enum render_place place)
{
	render_name(c, in_entry, key, klen);
	render_put(c, ": ", 2);
	if (place == RENDER_SLOT) {
		render_puts(c, json_is_string(c->slot) ? "string" : "blocks");
	} else if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		/* bare "string"/"blocks" under these names is a slot descriptor */
		int descriptor_name = render_key_is(key, klen, "content") ||
				      render_key_is(key, klen, "replacement");
		if (!descriptor_name && render_is_plain(s, n))
			render_put(c, s, n);
		else
			render_json_string(c, s, n);
	} else {
		render_json(c, v, 0, 0);
	}
	render_putc(c, '\n');
}

static enum render_place render_place_of(const struct render_ctx *c, int in_entry,
					 const char *key, size_t klen, const json_t *v)
{
	int dflt = c->msg ? !in_entry : in_entry;

	if (c->msg && in_entry && render_key_is(key, klen, "message"))
		return RENDER_SKIP;
	if (dflt) {
		if (c->slot && render_key_is(key, klen, c->slot_key))
			return RENDER_SLOT;
		if (json_is_string(v) && (render_key_is(key, klen, "summary") ||
					  render_key_is(key, klen, "command") ||
					  render_key_is(key, klen, "output")))
			return RENDER_FIELD;
		if (render_key_is(key, klen, "sections") && json_object_size(v) > 0)
			return RENDER_SECTIONS;
	}
	if (!json_is_object(v) && !json_is_array(v))
		return RENDER_FRONT;
	if (json_is_object(v) && render_key_is(key, klen, "usage"))
		return RENDER_FRONT;
	return RENDER_JSON;
}

/* ---- body items ------------------------------------------------------ */

/* Notes every line of a verbatim text that starts like a marker, so that
 * a tag can be chosen that no text line can be mistaken for. */
static void render_scan_tags(struct render_ctx *c, const char *s, size_t n)
{
	const char *p = s, *end = s + n;

	while (p < end && (p = memmem(p, (size_t)(end - p), "<!-- pi", 7)) != NULL) {
		const char *q = p + 7;
		unsigned long long num = 0;
		int digits = 0;
		if (p != s && p[-1] != '\n')
			goto next;
		if (q < end && *q == '0')
			goto next; /* "pi0..." is never a tag we write */
		for (; q < end && render_is_digit(*q); q++, digits++)
			num = num * 10 + (unsigned long long)(*q - '0');
		/* more digits than a tag we would pick can have: no conflict */
		if (digits > 18 || q >= end || *q != ':')
			goto next;
		if (num < 64)
			c->tag_used |= (uint64_t)1 << num;
		if (num > c->tag_max)
			c->tag_max = num;
	next:
		p += 7;
	}
}

/* Before every body item but the first: the blank line that separates. */
static void render_item(struct render_ctx *c)
{
	if (c->items++)
		render_putc(c, '\n');
}

/* The renderer adds exactly one "\n" after every verbatim text. */
static void render_verbatim(struct render_ctx *c, const char *s, size_t n)
{
	render_scan_tags(c, s, n);
	render_put(c, s, n);
	render_putc(c, '\n');
}

static void render_verbatim_json(struct render_ctx *c, const json_t *str)
{
	render_verbatim(c, json_string_value(str), json_string_length(str));
}

static void render_marker_open(struct render_ctx *c, const char *kind)
{
	render_item(c);
	render_put(c, "<!-- ", 5);
	render_put(c, c->tag, c->taglen);
	render_putc(c, ':');
	render_puts(c, kind);
}

static void render_marker_close(struct render_ctx *c)
{
	render_put(c, " -->\n", 5);
}

static void render_fence(struct render_ctx *c, const json_t *v)
{
	render_puts(c, "```json\n");
	render_json(c, v, 1, 0);
	render_puts(c, "\n```\n");
}

/* Every key of a block but the ones the marker kind shows otherwise, as
 * name=JSON.  quote_bytes: in an image marker a bare "bytes" is the derived
 * size, so a stored key of that name is written quoted. */
static void render_attrs(struct render_ctx *c, const json_t *blk, const char *skip1,
			 const char *skip2, int quote_bytes)
{
	const char *key;
	size_t klen;
	json_t *v;

	json_object_keylen_foreach((json_t *)blk, key, klen, v) {
		if (render_key_is(key, klen, skip1) || (skip2 && render_key_is(key, klen, skip2)))
			continue;
		render_putc(c, ' ');
		if (quote_bytes && render_key_is(key, klen, "bytes"))
			render_json_string(c, key, klen);
		else
			render_key(c, key, klen);
		render_putc(c, '=');
		render_json(c, v, 0, 0);
	}
}

/* Decoded size of base64 text: 3 bytes per 4 characters, less padding. */
static size_t render_b64_size(const char *s, size_t n)
{
	size_t pad = 0;
	while (pad < 2 && n > pad && s[n - 1 - pad] == '=')
		pad++;
	n -= pad;
	return n / 4 * 3 + n % 4 * 3 / 4;
}

/* A block with nothing but its text: shown bare when it comes first. */
static int render_is_plain_text(const json_t *blk)
{
	return json_is_object(blk) && json_object_size(blk) == 2 &&
	       render_str_is(json_object_get(blk, "type"), "text") &&
	       json_is_string(json_object_get(blk, "text"));
}

static void render_image_link(struct render_ctx *c, const json_t *blk)
{
	const char *mime = json_string_value(json_object_get(blk, "mimeType"));
	char *link = images_link(NULL, c->name, c->images++, images_ext(mime));

	if (!link) {
		c->err = 1;
		return;
	}
	render_puts(c, link);
	render_putc(c, '\n');
	free(link);
}

static void render_block(struct render_ctx *c, const json_t *blk)
{
	const json_t *type = json_object_get(blk, "type");
	const json_t *payload;
	char num[32];

	if (render_str_is(type, "text") || render_str_is(type, "thinking")) {
		const char *field = json_string_value(type);
		payload = json_object_get(blk, field);
		if (json_is_string(payload)) {
			render_marker_open(c, field);
			render_attrs(c, blk, "type", field, 0);
			render_marker_close(c);
			render_verbatim_json(c, payload);
			return;
		}
	} else if (render_str_is(type, "toolCall")) {
		payload = json_object_get(blk, "arguments");
		render_marker_open(c, "toolCall");
		render_attrs(c, blk, "type", "arguments", 0);
		render_marker_close(c);
		if (payload)
			render_fence(c, payload);
		return;
	} else if (render_str_is(type, "image")) {
		payload = json_object_get(blk, "data");
		render_marker_open(c, "image");
		render_attrs(c, blk, "type", json_is_string(payload) ? "data" : NULL, 1);
		if (json_is_string(payload)) {
			snprintf(num, sizeof num, " bytes=%zu",
				 render_b64_size(json_string_value(payload), json_string_length(payload)));
			render_puts(c, num);
		}
		render_marker_close(c);
		/* The image itself is a file beside the entry file: the link
		 * shows it in a Markdown viewer and tells the parser which
		 * image this is (no text, so no tag scan). */
		if (json_is_string(payload) && c->slot_files)
			render_image_link(c, blk);
		return;
	}
	/* Unknown kind, or a known kind whose payload has an unexpected type:
	 * the block as stored. */
	render_marker_open(c, "block");
	render_marker_close(c);
	render_fence(c, blk);
}

static void render_slot(struct render_ctx *c)
{
	size_t i;
	json_t *blk;

	if (!c->slot)
		return;
	if (json_is_string(c->slot)) {
		/* An empty string is written as no item at all: the parser knows
		 * from "content: string" that the leading text is the string, so
		 * none means "".  This keeps pi's system messages (content "")
		 * from starting with two blank lines. */
		if (json_string_length(c->slot) > 0) {
			render_item(c);
			render_verbatim_json(c, c->slot);
		}
		return;
	}
	json_array_foreach(c->slot, i, blk) {
		if (i == 0 && render_is_plain_text(blk)) {
			render_item(c);
			render_verbatim_json(c, json_object_get(blk, "text"));
		} else {
			render_block(c, blk);
		}
	}
}

static void render_sections(struct render_ctx *c, const json_t *sections)
{
	const char *key;
	size_t klen;
	json_t *v;

	json_object_keylen_foreach((json_t *)sections, key, klen, v) {
		render_marker_open(c, "section");
		render_putc(c, ' ');
		render_key(c, key, klen);
		if (json_is_string(v)) {
			render_marker_close(c);
			render_verbatim_json(c, v);
		} else {
			render_puts(c, " value=");
			render_json(c, v, 0, 0);
			render_marker_close(c);
		}
	}
}

/* The body items of one object's keys (the slot is written before). */
static void render_body_keys(struct render_ctx *c, const json_t *obj, int in_entry)
{
	const char *key;
	size_t klen;
	json_t *v;

	json_object_keylen_foreach((json_t *)obj, key, klen, v) {
		switch (render_place_of(c, in_entry, key, klen, v)) {
		case RENDER_FIELD:
			render_marker_open(c, key); /* summary, command or output */
			render_marker_close(c);
			render_verbatim_json(c, v);
			break;
		case RENDER_SECTIONS:
			render_sections(c, v);
			break;
		case RENDER_JSON:
			render_marker_open(c, "json");
			render_putc(c, ' ');
			render_name(c, in_entry, key, klen);
			render_marker_close(c);
			render_fence(c, v);
			break;
		default:
			break;
		}
	}
}

/* The entry keys written first, whatever their stored order. */
static int render_is_top(const char *key, size_t klen)
{
	return render_key_is(key, klen, "type") || render_key_is(key, klen, "id") ||
	       render_key_is(key, klen, "parentId") || render_key_is(key, klen, "timestamp");
}

/* Front matter lines for obj's keys; skip_top: the entry's top keys were
 * already written; skip_role: so was the message's role. */
static void render_front_keys(struct render_ctx *c, const json_t *obj, int in_entry,
			      int skip_top, int skip_role)
{
	const char *key;
	size_t klen;
	json_t *v;

	json_object_keylen_foreach((json_t *)obj, key, klen, v) {
		enum render_place place = render_place_of(c, in_entry, key, klen, v);
		if (place != RENDER_FRONT && place != RENDER_SLOT)
			continue;
		if (skip_top && place == RENDER_FRONT && render_is_top(key, klen))
			continue;
		if (skip_role && place == RENDER_FRONT && render_key_is(key, klen, "role"))
			continue;
		render_front_line(c, in_entry, key, klen, v, place);
	}
}

static void render_all(struct render_ctx *c)
{
	static const char *const base[] = { "type", "id", "parentId", "timestamp" };
	const json_t *v;

	c->items = 0;
	c->images = 0;
	render_puts(c, "---\n");
	if (strcmp(c->tag, "pi")) {
		render_puts(c, "pi.marker: ");
		render_put(c, c->tag, c->taglen);
		render_putc(c, '\n');
	}
	/* The base keys first, whatever their stored order ("custom" entries
	 * are stored with customType before id), then the rest as stored. */
	for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
		v = json_object_get(c->entry, base[i]);
		if (v && render_place_of(c, 1, base[i], strlen(base[i]), v) == RENDER_FRONT)
			render_front_line(c, 1, base[i], strlen(base[i]), v, RENDER_FRONT);
	}
	if (c->msg) {
		v = json_object_get(c->msg, "role");
		int role = v && render_place_of(c, 0, "role", 4, v) == RENDER_FRONT;
		if (role)
			render_front_line(c, 0, "role", 4, v, RENDER_FRONT);
		render_front_keys(c, c->msg, 0, 0, role);
	}
	render_front_keys(c, c->entry, 1, 1, 0);
	render_puts(c, "---\n");

	render_slot(c);
	render_body_keys(c, c->dflt, c->dflt == c->entry);
	if (c->msg)
		render_body_keys(c, c->entry, 1);
}

static void render_setup(struct render_ctx *c, const json_t *entry)
{
	const json_t *msg = json_object_get(entry, "message");
	const json_t *v;

	c->entry = entry;
	/* An empty or non-object message keeps one scope: it is then shown as
	 * the entry key "message", which tells the parser which mode it is. */
	if (render_str_is(json_object_get(entry, "type"), "message") && json_is_object(msg) &&
	    json_object_size(msg) > 0)
		c->msg = msg;
	c->dflt = c->msg ? c->msg : entry;

	v = json_object_get(c->dflt, "content");
	if (json_is_string(v) || json_is_array(v)) {
		c->slot = v;
		c->slot_key = "content";
		/* Only messages and custom messages have image files (a
		 * context_edit's replacement or an unknown entry's content
		 * shows its images as markers only). */
		c->slot_files = v == images_content(entry);
		return;
	}
	/* context_edit: {"content": ...} and nothing else */
	v = json_object_get(c->dflt, "replacement");
	if (json_is_object(v) && json_object_size(v) == 1) {
		const json_t *inner = json_object_get(v, "content");
		if (json_is_string(inner) || json_is_array(inner)) {
			c->slot = inner;
			c->slot_key = "replacement";
		}
	}
}

char *render_entry(const json_t *entry, const char *name, size_t *len)
{
	struct render_ctx c;
	char *ret = NULL;
	json_t *empty = NULL;

	memset(&c, 0, sizeof c);
	c.name = name ? name : RENDER_DEFAULT_NAME;
	strcpy(c.tag, "pi");
	c.taglen = 2;
	if (!json_is_object(entry)) {
		/* Not an entry at all: show an empty entry and, if there was a
		 * value, that value, so nothing is hidden. */
		empty = json_object();
		if (!empty)
			goto out;
		render_setup(&c, empty);
		render_all(&c);
		if (entry) {
			render_marker_open(&c, "value");
			render_marker_close(&c);
			render_fence(&c, entry);
		}
	} else {
		render_setup(&c, entry);
		render_all(&c);
		if (c.tag_used & 1) {
			/* A text line looks like one of our markers: render again
			 * with the lowest tag no text line uses (rare; the buffer is
			 * reused). */
			unsigned long long n = 1;
			while (n < 64 && (c.tag_used >> n & 1))
				n++;
			if (n == 64)
				n = c.tag_max + 1;
			c.taglen = (size_t)snprintf(c.tag, sizeof c.tag, "pi%llu", n);
			c.out.len = 0;
			render_all(&c);
		}
	}
	if (!c.err && buf_finish(&c.out))
		c.err = 1;
	if (c.err)
		goto out;
	if (len)
		*len = c.out.len;
	ret = c.out.data; /* ownership passes to the caller */
	c.out.data = NULL;
out:
	buf_free(&c.out);
	json_decref(empty);
	return ret;
}
