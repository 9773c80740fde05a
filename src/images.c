/* The images of an entry (images.h).  Neither jansson, libuuid nor libc
 * offers a base64 decoder, so a small strict one lives here; it reads its
 * input once, never looks past n bytes and never writes past the bound the
 * header states, whatever the input (fuzz-safe). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "buf.h"
#include "images.h"

/* 0..63 for the base64 alphabet, -1 for anything else. */
static int images_b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* What isspace() accepts in the C locale, spelled out so the locale can
 * never change which data decodes. */
static int images_b64_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

ps_err images_base64_decode(const char *in, size_t n, unsigned char *out, size_t *len)
{
	uint32_t acc = 0;
	unsigned k = 0, pad = 0;   /* sextets in the current quantum, '=' seen */
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		if (images_b64_space(c))
			continue;
		if (c == '=') {
			/* Padding ends the last quantum: it needs at least two
			 * data sextets before it and fills the quantum exactly. */
			if (k < 2 || k + pad >= 4)
				return PS_ERR_INVALID;
			pad++;
			continue;
		}
		int v = images_b64_value(c);
		if (v < 0 || pad)
			return PS_ERR_INVALID;
		acc = acc << 6 | (uint32_t)v;
		if (++k == 4) {
			if (out) {
				out[o] = (unsigned char)(acc >> 16);
				out[o + 1] = (unsigned char)(acc >> 8);
				out[o + 2] = (unsigned char)acc;
			}
			o += 3;
			acc = 0;
			k = 0;
		}
	}
	if (pad) {
		if (k + pad != 4)
			return PS_ERR_INVALID;
		/* The bits below the last whole byte are ignored, as most
		 * decoders do (Python's b64decode(validate=True) among them). */
		if (k == 2) {
			if (out)
				out[o] = (unsigned char)(acc >> 4);
			o += 1;
		} else {
			if (out) {
				out[o] = (unsigned char)(acc >> 10);
				out[o + 1] = (unsigned char)(acc >> 2);
			}
			o += 2;
		}
	} else if (k) {
		return PS_ERR_INVALID; /* unpadded tail */
	}
	*len = o;
	return PS_OK;
}

const char *images_ext(const char *mime)
{
	static const struct {
		const char *mime, *ext;
	} map[] = {
		{ "image/png", "png" },   { "image/jpeg", "jpg" }, { "image/jpg", "jpg" },
		{ "image/gif", "gif" },   { "image/webp", "webp" }, { "image/svg+xml", "svg" },
	};
	if (!mime)
		return "bin";
	/* "image/png; foo=bar" and "image/png " name the same type. */
	size_t n = strcspn(mime, "; \t");
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strlen(map[i].mime) == n && strncasecmp(mime, map[i].mime, n) == 0)
			return map[i].ext;
	return "bin";
}

void images_file_name(size_t index, const char *ext, char *out)
{
	snprintf(out, IMAGES_NAME_MAX, "%zu.%s", index + 1, ext);
}

/* Compares with the string's real length: a line read with JSON_ALLOW_NUL
 * may hold "image\0x", which the renderer does not take for an image, so
 * neither may the numbering of the files its links point to. */
static int images_str_is(const json_t *v, const char *lit)
{
	size_t n = strlen(lit);
	return json_is_string(v) && json_string_length(v) == n && memcmp(json_string_value(v), lit, n) == 0;
}

const json_t *images_content(const json_t *entry)
{
	const json_t *type = json_object_get(entry, "type");
	const json_t *content = NULL;

	if (images_str_is(type, "message"))
		content = json_object_get(json_object_get(entry, "message"), "content");
	else if (images_str_is(type, "custom_message"))
		content = json_object_get(entry, "content");
	return json_is_array(content) ? content : NULL;
}

int images_is_image(const json_t *block)
{
	return images_str_is(json_object_get(block, "type"), "image") &&
	       json_is_string(json_object_get(block, "data"));
}

/* RFC 3986's unreserved bytes, and '/' which separates the path. */
static int images_url_plain(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '.' || c == '_' || c == '~' || c == '/';
}

static int images_put_url(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[3] = { '%', hex[c >> 4], hex[c & 15] };
		if (images_url_plain(c) ? buf_putc(b, (char)c) : buf_put(b, esc, 3))
			return -1;
	}
	return 0;
}

char *images_link(const char *prefix, const char *entry_file, size_t index, const char *ext)
{
	struct buf b = BUF_INIT;
	char name[IMAGES_NAME_MAX];
	size_t n = strlen(entry_file);
	char *out = NULL;

	if (n < 3 || strcmp(entry_file + n - 3, ".md") != 0)
		goto out;
	images_file_name(index, ext, name);
	if (buf_printf(&b, "![image %zu](", index + 1) || (prefix && images_put_url(&b, prefix, strlen(prefix))) ||
	    images_put_url(&b, entry_file, n - 3) || buf_puts(&b, ".images/") ||
	    images_put_url(&b, name, strlen(name)) || buf_putc(&b, ')') || buf_finish(&b))
		goto out;
	out = b.data;
	b.data = NULL;
out:
	buf_free(&b);
	return out;
}

/* Loads the entry; a line jansson cannot decode has no images rather than
 * failing the directory it would be listed in. */
static ps_err images_load(const struct ps_session *s, uint32_t entry, json_t **out)
{
	*out = NULL;
	if (entry >= s->n_entries)
		return PS_ERR_NOENT;
	ps_err err = session_load_entry_shared(s, entry, out);
	if (err == PS_ERR_INVALID) {
		*out = NULL;
		return PS_OK;
	}
	return err;
}

void images_free(struct image_ref *refs, size_t n)
{
	if (!refs)
		return;
	for (size_t i = 0; i < n; i++)
		free(refs[i].mime);
	free(refs);
}

static ps_err images_collect(const struct ps_session *s, uint32_t entry, int sized, struct image_ref **out,
			     size_t *n)
{
	json_t *e = NULL;
	struct image_ref *refs = NULL;
	size_t count = 0;
	ps_err err;

	*out = NULL;
	*n = 0;
	err = images_load(s, entry, &e);
	if (err || !e)
		goto out;
	const json_t *content = images_content(e);
	size_t i;
	json_t *blk;
	json_array_foreach(content, i, blk)
		if (images_is_image(blk))
			count++;
	if (!count)
		goto out;
	refs = calloc(count, sizeof *refs);
	if (!refs) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	count = 0;
	json_array_foreach(content, i, blk) {
		if (!images_is_image(blk))
			continue;
		struct image_ref *r = &refs[count++];
		const char *mime = json_string_value(json_object_get(blk, "mimeType"));
		const json_t *data = json_object_get(blk, "data");
		if (mime && !(r->mime = strdup(mime))) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		r->ext = images_ext(mime);
		if (!sized)
			continue;
		/* A dry run sizes the file without holding the decoded bytes. */
		r->valid = images_base64_decode(json_string_value(data), json_string_length(data), NULL,
						&r->size) == PS_OK;
		if (!r->valid)
			r->size = 0;
	}
	*out = refs;
	*n = count;
	refs = NULL;
out:
	images_free(refs, count);
	json_decref(e);
	return err;
}

ps_err images_list(const struct ps_session *s, uint32_t entry, struct image_ref **out, size_t *n)
{
	return images_collect(s, entry, 1, out, n);
}

ps_err images_list_names(const struct ps_session *s, uint32_t entry, struct image_ref **out, size_t *n)
{
	return images_collect(s, entry, 0, out, n);
}

ps_err images_data(const struct ps_session *s, uint32_t entry, size_t index, char **buf, size_t *len)
{
	json_t *e = NULL;
	unsigned char *bytes = NULL;
	ps_err err;

	*buf = NULL;
	*len = 0;
	err = images_load(s, entry, &e);
	if (err)
		goto out;
	const json_t *content = images_content(e);
	const json_t *found = NULL;
	size_t i, seen = 0;
	json_t *blk;
	json_array_foreach(content, i, blk) {
		if (images_is_image(blk) && seen++ == index) {
			found = json_object_get(blk, "data");
			break;
		}
	}
	if (!found) {
		err = PS_ERR_NOENT;
		goto out;
	}
	size_t n = json_string_length(found);
	bytes = malloc(n / 4 * 3 + 4);
	if (!bytes) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	err = images_base64_decode(json_string_value(found), n, bytes, len);
	if (err)
		goto out;
	bytes[*len] = '\0';
	*buf = (char *)bytes;
	bytes = NULL;
out:
	free(bytes);
	json_decref(e);
	return err;
}
