/* The markers of an entry file's body, for the parser (parse.c): a marker
 * line's kind and attributes, and the images a marker stands for, found in
 * the original entry by their links or by counting (docs/entry-format.md, Images). */
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

/* ---- markers --------------------------------------------------------- */

void parse_marker_free(struct parse_marker *m)
{
	json_decref(m->blk);
	json_decref(m->value);
	parse_key_free(&m->name.key);
	memset(m, 0, sizeof *m);
}

/* The " KEY=JSON" attributes of a block marker, into m->blk. */
static ps_err parse_attrs(struct parse_ctx *c, const char *s, size_t n, struct parse_marker *m)
{
	static const char *const payload[PARSE_NKINDS] = {
		[PARSE_TEXT] = "text", [PARSE_THINKING] = "thinking", [PARSE_TOOLCALL] = "arguments",
	};
	char show[PARSE_SHOW_MAX + 8], show2[PARSE_SHOW_MAX + 8];
	const char *kind = parse_kinds[m->kind];
	size_t i = 0;
	ps_err err = PS_OK;

	if (!(m->blk = json_object()) || json_object_set_new(m->blk, "type", json_string(kind)))
		return parse_nomem(c);
	/* the payload's place, so that blocks read type, text, ... and
	 * type, data, mimeType as pi writes them */
	if (m->kind != PARSE_TOOLCALL &&
	    json_object_set_new(m->blk, m->kind == PARSE_IMAGE ? "data" : payload[m->kind], json_null()))
		return parse_nomem(c);
	while (i < n && !err) {
		struct parse_key k;
		size_t used, span;
		json_error_t jerr;
		json_t *v;

		if (s[i] != ' ')
			return parse_fail(c, m->line, "expected \" name=value\" in the marker at \"%s\"",
					  parse_show(s + i, n - i, show, sizeof show));
		i++;
		if ((err = parse_key(c, s + i, n - i, m->line, &used, &k)))
			return err;
		i += used;
		parse_show(k.s, k.n, show, sizeof show);
		if (i >= n || s[i] != '=') {
			err = parse_fail(c, m->line, "marker attribute \"%s\" has no \"=value\"", show);
		} else if (!(span = parse_json_span(s + i + 1, n - i - 1))) {
			err = parse_fail(c, m->line, "marker attribute \"%s\": unterminated value", show);
		} else if (!(v = parse_json(s + i + 1, span, &jerr))) {
			err = parse_fail(c, m->line, "marker attribute \"%s\": bad JSON value: %s", show,
					 parse_show(jerr.text, strlen(jerr.text), show2, sizeof show2));
		} else if (m->kind == PARSE_IMAGE && !k.quoted && parse_eq(k.s, k.n, "bytes")) {
			/* the derived size: the data comes from the original */
			if (m->has_bytes++)
				err = parse_fail(c, m->line, "duplicate marker attribute \"bytes\"");
			else if (!json_is_integer(v) || json_integer_value(v) < 0)
				err = parse_fail(c, m->line, "bytes= must be a whole number, not %s",
						 parse_show_value(v, show2, sizeof show2));
			else
				m->bytes = json_integer_value(v);
			json_decref(v);
			i += 1 + span;
		} else {
			if (parse_eq(k.s, k.n, "type"))
				err = parse_fail(c, m->line, "attribute \"type\" cannot be set: the marker kind is the type");
			else if (payload[m->kind] && parse_eq(k.s, k.n, payload[m->kind]))
				err = parse_fail(c, m->line, "attribute \"%s\" cannot be set: it is the text or "
						 "JSON below the marker", show);
			else if (m->kind == PARSE_IMAGE && parse_eq(k.s, k.n, "data") && !m->has_data++)
				err = json_object_set(m->blk, "data", v) ? parse_nomem(c) : PS_OK;
			else if (json_object_getn(m->blk, k.s, k.n))
				err = parse_fail(c, m->line, "duplicate marker attribute \"%s\"", show);
			else if (json_object_setn_new(m->blk, k.s, k.n, json_incref(v)))
				err = parse_nomem(c);
			json_decref(v);
			i += 1 + span;
		}
		parse_key_free(&k);
	}
	if (!err && m->has_bytes && m->has_data)
		err = parse_fail(c, m->line, "an image marker has bytes= (its data is in the entry) or data=, not both");
	/* no data at all: the placeholder goes */
	if (!err && m->kind == PARSE_IMAGE && !m->has_bytes && !m->has_data)
		json_object_del(m->blk, "data");
	return err;
}

/* Reads the marker line s[0..n) (without its "\n"), which starts with
 * "<!-- TAG:". */
ps_err parse_marker(struct parse_ctx *c, const char *s, size_t n, size_t line, struct parse_marker *m)
{
	char show[PARSE_SHOW_MAX + 8];
	size_t plen = c->patlen - 1, k = 0, used;
	const char *in;
	size_t inlen;
	ps_err err;

	memset(m, 0, sizeof *m);
	m->line = line;
	if (n < plen + 4 || memcmp(s + n - 4, " -->", 4) != 0)
		return parse_fail(c, line, "a marker line must end with \" -->\": \"%s\"",
				  parse_show(s, n, show, sizeof show));
	in = s + plen;
	inlen = n - plen - 4;
	while (k < inlen && in[k] != ' ')
		k++;
	for (m->kind = 0; m->kind < PARSE_NKINDS; m->kind++)
		if (parse_eq(in, k, parse_kinds[m->kind]))
			break;
	if (m->kind == PARSE_NKINDS)
		return parse_fail(c, line, "unknown marker \"%s\" (known: text, thinking, toolCall, image, block, "
				  "summary, command, output, section, json, value)",
				  parse_show(in, k, show, sizeof show));
	in += k;
	inlen -= k;
	switch (m->kind) {
	case PARSE_TEXT:
	case PARSE_THINKING:
	case PARSE_TOOLCALL:
	case PARSE_IMAGE:
		return parse_attrs(c, in, inlen, m);
	case PARSE_SECTION:
	case PARSE_JSON:
		if (inlen < 2 || in[0] != ' ')
			return parse_fail(c, line, "the %s marker needs a name", parse_kinds[m->kind]);
		if (m->kind == PARSE_JSON)
			err = parse_name(c, in + 1, inlen - 1, line, &used, &m->name);
		else
			err = parse_key(c, in + 1, inlen - 1, line, &used, &m->name.key);
		if (err)
			return err;
		in += 1 + used;
		inlen -= 1 + used;
		if (m->kind == PARSE_SECTION && inlen > 7 && memcmp(in, " value=", 7) == 0) {
			json_error_t jerr;
			if (!(m->value = parse_json(in + 7, inlen - 7, &jerr)))
				return parse_fail(c, line, "section value=: bad JSON value: %s",
						  parse_show(jerr.text, strlen(jerr.text), show, sizeof show));
			return PS_OK;
		}
		break;
	default:
		break;
	}
	if (inlen > 0)
		return parse_fail(c, line, "unexpected \"%s\" in the %s marker",
				  parse_show(in, inlen, show, sizeof show), parse_kinds[m->kind]);
	return PS_OK;
}

/* What an image block holds as "data": the three kinds are matched
 * separately, each in order (docs/entry-format.md, Images). */
enum parse_img { PARSE_IMG_NONE, PARSE_IMG_STRING, PARSE_IMG_OTHER };

static enum parse_img parse_img_kind(const json_t *data)
{
	return !data ? PARSE_IMG_NONE : json_is_string(data) ? PARSE_IMG_STRING : PARSE_IMG_OTHER;
}

/* The next image block of the original's content whose data is of kind
 * k; the cursor of that kind walks the array once. */
static const json_t *parse_next_image(struct parse_ctx *c, enum parse_img k)
{
	size_t n = json_array_size(c->orig_slot);

	c->img_count[k]++;
	while (c->img_cursor[k] < n) {
		const json_t *b = json_array_get(c->orig_slot, c->img_cursor[k]++);
		if (parse_str_is(json_object_get(b, "type"), "image") &&
		    parse_img_kind(json_object_get(b, "data")) == k)
			return b;
	}
	return NULL;
}

/* Decoded size of base64 text, as the renderer computes bytes=. */
static size_t parse_b64_size(const char *s, size_t n)
{
	size_t pad = 0;

	while (pad < 2 && n > pad && s[n - 1 - pad] == '=')
		pad++;
	n -= pad;
	return n / 4 * 3 + n % 4 * 3 / 4;
}

/* An image marker needs its counterpart in the original, which holds
 * the data when the marker says bytes= (docs/entry-format.md, Images). */
ps_err parse_image(struct parse_ctx *c, struct parse_marker *m)
{
	static const char added[] = "images cannot be added through the Markdown file; append a .json entry instead";
	json_t *data = json_object_get(m->blk, "data");
	enum parse_img k = m->has_bytes ? PARSE_IMG_STRING : parse_img_kind(data);
	const json_t *orig;

	if (json_is_string(data))
		return parse_fail(c, m->line, "image data cannot be written in the Markdown file; append a .json "
				  "entry instead");
	if (!(orig = parse_next_image(c, k)))
		return parse_fail(c, m->line, "%s", added);
	if (k != PARSE_IMG_STRING)
		return PS_OK;
	data = json_object_get(orig, "data");
	size_t size = parse_b64_size(json_string_value(data), json_string_length(data));
	if ((uint64_t)m->bytes != (uint64_t)size)
		return parse_fail(c, m->line, "image %zu says bytes=%" JSON_INTEGER_FORMAT " but image %zu of the "
				  "entry has %zu bytes: images cannot be removed or reordered through the Markdown "
				  "file (except the last ones)", c->img_count[k], m->bytes, c->img_count[k], size);
	/* shared, not copied: an image may be megabytes */
	if (json_object_set(m->blk, "data", data))
		return parse_nomem(c);
	return PS_OK;
}

/* The link of file image k as the renderer writes it (images_link()). */
static ps_err parse_link_of(struct parse_ctx *c, size_t k, char **out)
{
	const char *mime = json_string_value(json_object_get(c->files[k], "mimeType"));

	if (!(*out = images_link(NULL, c->name, k, images_ext(mime))))
		return parse_nomem(c);
	return PS_OK;
}

/* An image of a message or custom message is shown by the link to its
 * file below its marker: the link, not the marker's place, says which of
 * the original's images it is, so images can be moved and removed with
 * their links but never added or made up (docs/entry-format.md, Images).  p[0..n) is the
 * payload, line its first line. */
/* Which file image s[0..n) is the exact link of: *k = 1..n_files, or 0
 * for none.  "![image N](" says which link to compare with. */
static ps_err parse_which_link(struct parse_ctx *c, const char *s, size_t n, size_t *k)
{
	char *link = NULL;
	ps_err err;

	*k = 0;
	if (n > 8 && memcmp(s, "![image ", 8) == 0 && s[8] != '0')
		for (size_t i = 8; i < n && parse_is_digit(s[i]) && *k <= c->n_files; i++)
			*k = *k * 10 + (size_t)(s[i] - '0');
	if (*k > c->n_files)
		*k = 0;
	if (!*k)
		return PS_OK;
	if ((err = parse_link_of(c, *k - 1, &link)))
		return err;
	if (!parse_eq(s, n, link))
		*k = 0;
	free(link);
	return PS_OK;
}

static ps_err parse_lost_link(struct parse_ctx *c, size_t line, size_t k)
{
	return parse_fail(c, line, "the link of image %zu has lost its image marker line: put the marker back "
			  "above it to keep the image, or delete the link too to remove the image", k);
}

/* An image of a message or custom message is shown by the link to its
 * file below its marker: the link, not the marker's place, says which of
 * the original's images it is, so images can be moved and removed with
 * their links but never added or made up (docs/entry-format.md, Images).  p[0..n) is the
 * payload, line its first line. */
ps_err parse_image_link(struct parse_ctx *c, struct parse_marker *m, const char *p, size_t n, size_t line)
{
	static const char added[] = "images cannot be added through the Markdown file; append a .json entry instead";
	char show[PARSE_SHOW_MAX + 8], *link = NULL;
	const char *nl;
	size_t k, first;
	ps_err err;

	while (n > 0 && p[n - 1] == '\n')
		n--;
	if (!c->n_files)
		return parse_fail(c, m->line, "%s", added);
	first = (nl = memchr(p, '\n', n)) ? (size_t)(nl - p) : n;
	if (first < n) {
		/* more than the link: say where, and whose link it is if it
		 * is one (its own marker was deleted) */
		size_t at = first, extra = line;
		while (p[at] == '\n') {
			at++;
			extra++;
		}
		nl = memchr(p + at, '\n', n - at);
		if ((err = parse_which_link(c, p + at, nl ? (size_t)(nl - p) - at : n - at, &k)))
			return err;
		if (k)
			return parse_lost_link(c, extra, k);
		return parse_fail(c, extra, "only the image's link may follow an image marker (a text needs a "
				  "marker line of its own)");
	}
	if ((err = parse_which_link(c, p, n, &k)))
		return err;
	if (!k) {
		if ((err = parse_link_of(c, 0, &link)))
			return err;
		if (n == 0)
			err = parse_fail(c, line, "an image marker needs its image's link on the line below it, "
					 "as the file showed it (image 1 is %s)", link);
		else
			err = parse_fail(c, line, "\"%s\" is not the link of one of this entry's images (image 1 "
					 "is %s); %s", parse_show(p, n, show, sizeof show), link, added);
		free(link);
		return err;
	}
	if (c->linked[k - 1]++)
		return parse_fail(c, line, "image %zu is shown twice; %s", k, added);
	json_t *data = json_object_get(c->files[k - 1], "data");
	size_t size = parse_b64_size(json_string_value(data), json_string_length(data));
	if ((uint64_t)m->bytes != (uint64_t)size)
		return parse_fail(c, m->line, "the marker says bytes=%" JSON_INTEGER_FORMAT " but image %zu, linked "
				  "below it, has %zu bytes: move or delete each image marker together with its link",
				  m->bytes, k, size);
	/* shared, not copied: an image may be megabytes */
	if (json_object_set(m->blk, "data", data))
		return parse_nomem(c);
	return PS_OK;
}

/* A link whose marker line was deleted would read as text and the image
 * would be gone without a word: refused.  A rendered file links every
 * image below its marker, so this never refuses one that was not edited. */
ps_err parse_check_lost_links(struct parse_ctx *c)
{
	char *link = NULL;
	ps_err err = PS_OK;

	for (size_t k = 0; k < c->n_files && !err; k++) {
		if (c->linked[k])
			continue;
		if ((err = parse_link_of(c, k, &link)))
			break;
		size_t n = strlen(link);
		const char *from = c->text + c->body, *end = c->text + c->len, *hit;
		while (from < end && (hit = memmem(from, (size_t)(end - from), link, n)) != NULL) {
			size_t pos = (size_t)(hit - c->text);
			if ((pos == c->body || hit[-1] == '\n') && pos + n < c->len && hit[n] == '\n') {
				err = parse_lost_link(c, parse_line_of(c, pos), k + 1);
				break;
			}
			from = hit + 1;
		}
		free(link);
		link = NULL;
	}
	return err;
}

