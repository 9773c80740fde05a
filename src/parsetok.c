/* The tokens of an entry file, for the parser (parse.c): the refusals
 * with the line they are on, the bytes (UTF-8, line endings, line
 * numbers), JSON values within a line, and names with their scopes. */
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

const char *const parse_kinds[PARSE_NKINDS] = {
	"text", "thinking", "toolCall", "image", "block", "summary",
	"command", "output", "section", "json", "value",
};

const char *const parse_ids[PARSE_NIDS] = {
	"type", "id", "parentId", "timestamp", "role", "toolCallId", "toolName", "customType",
};

/* ---- refusals -------------------------------------------------------- */

/* Copies a user's bytes into out for a message: at most PARSE_SHOW_MAX
 * bytes, control characters as '?', cut at a character boundary. */
const char *parse_show(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0, i = 0, max = outlen - 4;

	if (max > PARSE_SHOW_MAX)
		max = PARSE_SHOW_MAX;
	for (; i < n && o < max; i++) {
		unsigned char ch = (unsigned char)s[i];
		out[o++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
	}
	if (i < n) {
		/* drop a partial UTF-8 sequence at the cut */
		size_t lead = o;
		while (lead > 0 && ((unsigned char)out[lead - 1] & 0xC0) == 0x80)
			lead--;
		if (lead > 0 && ((unsigned char)out[lead - 1] & 0x80)) {
			unsigned char b = (unsigned char)out[lead - 1];
			size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
			if (o - (lead - 1) < need)
				o = lead - 1;
		}
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

/* A value as a refusal shows it: plain strings as they are, anything else
 * as compact JSON. */
const char *parse_show_value(const json_t *v, char *out, size_t outlen)
{
	if (!v)
		return "absent";
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		/* bare unless it would read as something else */
		int plain = n > 0 && !strchr(" \"{[", s[0]) && s[n - 1] != ' ' && !jstext_is_json_number(s, n) &&
			    !parse_eq(s, n, "true") && !parse_eq(s, n, "false") && !parse_eq(s, n, "null");
		for (size_t i = 0; i < n && plain; i++)
			plain = (unsigned char)s[i] >= 0x20 && s[i] != 0x7f;
		if (plain)
			return parse_show(s, n, out, outlen);
	}
	char *dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!dump)
		return "?";
	parse_show(dump, strlen(dump), out, outlen);
	free(dump);
	return out;
}

/* Writes "line N: reason" into why and returns PS_ERR_INVALID. */
ps_err parse_fail(struct parse_ctx *c, size_t line, const char *fmt, ...)
{
	va_list ap;
	size_t n = 0;

	if (!c->why || !c->why_len)
		return PS_ERR_INVALID;
	if (line) {
		int k = snprintf(c->why, c->why_len, "line %zu: ", line);
		n = k < 0 ? 0 : (size_t)k;
	}
	if (n < c->why_len) {
		va_start(ap, fmt);
		vsnprintf(c->why + n, c->why_len - n, fmt, ap);
		va_end(ap);
	}
	return PS_ERR_INVALID;
}

ps_err parse_nomem(struct parse_ctx *c)
{
	if (c->why && c->why_len)
		snprintf(c->why, c->why_len, "out of memory");
	return PS_ERR_NOMEM;
}

/* ---- bytes ----------------------------------------------------------- */

int parse_eq(const char *s, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	return n == m && memcmp(s, lit, m) == 0;
}

/* Compares with the real length: a string may hold NUL. */
int parse_str_is(const json_t *v, const char *lit)
{
	return json_is_string(v) && parse_eq(json_string_value(v), json_string_length(v), lit);
}

int parse_is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static int parse_is_bare_char(char ch, int first)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_' ||
	       (!first && parse_is_digit(ch));
}

/* Offset of the first byte that is not valid UTF-8 as jansson checks it
 * (no overlong forms, surrogates or code points past U+10FFFF), or n.
 * Checked once for the whole file so that every later json_stringn() of a
 * slice succeeds unless memory runs out. */
size_t parse_utf8_bad(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char b = s[i];
		size_t k;
		uint32_t cp;
		if (b < 0x80) {
			i++;
			continue;
		}
		if (b >= 0xC2 && b <= 0xDF) {
			k = 1;
			cp = b & 0x1F;
		} else if (b >= 0xE0 && b <= 0xEF) {
			k = 2;
			cp = b & 0x0F;
		} else if (b >= 0xF0 && b <= 0xF4) {
			k = 3;
			cp = b & 0x07;
		} else {
			return i;
		}
		if (n - i <= k)
			return i;
		for (size_t j = 1; j <= k; j++) {
			unsigned char t = s[i + j];
			if ((t & 0xC0) != 0x80)
				return i;
			cp = cp << 6 | (t & 0x3F);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) || cp > 0x10FFFF ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return i;
		i += k + 1;
	}
	return n;
}

/* Every "\n" is preceded by "\r", and there is one: a file saved with
 * CRLF line endings.  A rendered file never is one (its first line is a
 * bare "---\n"), so this cannot mistake a text's own "\r\n" for it. */
int parse_is_crlf(const char *s, size_t n)
{
	const char *p = s, *end = s + n, *nl;
	int any = 0;

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (nl == s || nl[-1] != '\r')
			return 0;
		any = 1;
		p = nl + 1;
	}
	return any;
}

/* Sets c->text to the file with LF line endings and a final "\n",
 * copying only when it differs. */
ps_err parse_normalize(struct parse_ctx *c, const char *text, size_t len)
{
	int crlf = parse_is_crlf(text, len);
	int add_nl = len > 0 && text[len - 1] != '\n';
	size_t o = 0;

	c->text = text;
	c->len = len;
	if (!crlf && !add_nl)
		return PS_OK;
	if (len == SIZE_MAX || !(c->owned = malloc(len + 1)))
		return parse_nomem(c);
	if (crlf) {
		const char *p = text, *end = text + len, *nl;
		while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			size_t n = (size_t)(nl - p) - 1; /* without the "\r" */
			memcpy(c->owned + o, p, n);
			o += n;
			c->owned[o++] = '\n';
			p = nl + 1;
		}
		memcpy(c->owned + o, p, (size_t)(end - p));
		o += (size_t)(end - p);
	} else {
		memcpy(c->owned, text, len);
		o = len;
	}
	if (o > 0 && c->owned[o - 1] != '\n')
		c->owned[o++] = '\n';
	c->text = c->owned;
	c->len = o;
	return PS_OK;
}

/* The line number of byte pos.  Lines are asked for mostly in order, so a
 * cursor makes a whole pass over the file linear. */
size_t parse_line_of(struct parse_ctx *c, size_t pos)
{
	const char *p, *end, *nl;

	if (pos < c->lc_pos) {
		c->lc_pos = 0;
		c->lc_line = 1;
	}
	p = c->text + c->lc_pos;
	end = c->text + pos;
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		c->lc_line++;
		p = nl + 1;
	}
	c->lc_pos = pos;
	return c->lc_line;
}

/* ---- JSON tokens ----------------------------------------------------- */

/* Length of the JSON value at the start of s: a string, a balanced
 * object or array (brackets inside strings skipped), or a scalar up to the
 * next space.  0 when it does not end.  Only finds the end; jansson
 * decides whether it is JSON.  Marker attributes need this because a
 * string value may hold " -->" or " x=1". */
size_t parse_json_span(const char *s, size_t n)
{
	size_t depth = 0;
	int in_str = 0;

	if (n == 0)
		return 0;
	if (s[0] != '"' && s[0] != '{' && s[0] != '[') {
		size_t i = 0;
		while (i < n && s[i] != ' ')
			i++;
		return i;
	}
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (in_str) {
			if (ch == '\\') {
				i++;
			} else if (ch == '"') {
				in_str = 0;
				if (depth == 0)
					return i + 1;
			}
		} else if (ch == '"') {
			in_str = 1;
		} else if (ch == '{' || ch == '[') {
			depth++;
		} else if (ch == '}' || ch == ']') {
			if (--depth == 0)
				return i + 1;
		}
	}
	return 0;
}

/* Decodes s as one JSON value; NULL and the reason in err otherwise. */
json_t *parse_json(const char *s, size_t n, json_error_t *err)
{
	return json_loadb(s, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, err);
}

/* A front matter VALUE: JSON when it starts like JSON or is wholly a
 * literal or number that decodes, else the bytes as a string. */
ps_err parse_value(struct parse_ctx *c, const char *s, size_t n, size_t line, json_t **out)
{
	json_error_t err;
	char show[PARSE_SHOW_MAX + 8];

	if (n > 0 && (s[0] == '"' || s[0] == '{' || s[0] == '[')) {
		*out = parse_json(s, n, &err);
		if (!*out)
			return parse_fail(c, line, "bad JSON value: %s",
					  parse_show(err.text, strlen(err.text), show, sizeof show));
		return PS_OK;
	}
	if (parse_eq(s, n, "true") || parse_eq(s, n, "false") || parse_eq(s, n, "null") ||
	    jstext_is_json_number(s, n)) {
		/* 1e999 or an integer past 64 bits does not decode: a string,
		 * as the format says; out of memory is no reason to change a
		 * number into a string. */
		if ((*out = parse_json(s, n, &err)) != NULL)
			return PS_OK;
		/* The text is a valid literal or number, so anything but an
		 * overflow is jansson running out of memory (it does not always
		 * say so). */
		if (json_error_code(&err) != json_error_numeric_overflow)
			return parse_nomem(c);
	}
	*out = json_stringn(s, n);
	return *out ? PS_OK : parse_nomem(c);
}

/* ---- names ----------------------------------------------------------- */

void parse_key_free(struct parse_key *k)
{
	json_decref(k->decoded);
	k->decoded = NULL;
}

/* KEY := BARE | JSON-STRING at the start of s; *used gets its length. */
ps_err parse_key(struct parse_ctx *c, const char *s, size_t n, size_t line, size_t *used,
			struct parse_key *k)
{
	json_error_t err;
	char show[PARSE_SHOW_MAX + 8];
	size_t i = 0;

	memset(k, 0, sizeof *k);
	if (n > 0 && s[0] == '"') {
		size_t span = parse_json_span(s, n);
		if (!span)
			return parse_fail(c, line, "unterminated quoted name %s", parse_show(s, n, show, sizeof show));
		k->decoded = parse_json(s, span, &err);
		if (!json_is_string(k->decoded)) {
			parse_key_free(k);
			return parse_fail(c, line, "bad quoted name %s", parse_show(s, span, show, sizeof show));
		}
		k->s = json_string_value(k->decoded);
		k->n = json_string_length(k->decoded);
		k->quoted = 1;
		*used = span;
		return PS_OK;
	}
	while (i < n && parse_is_bare_char(s[i], i == 0))
		i++;
	if (i == 0)
		return parse_fail(c, line, "expected a name (letters, digits, _ or a \"quoted name\") at \"%s\"",
				  parse_show(s, n, show, sizeof show));
	k->s = s;
	k->n = i;
	*used = i;
	return PS_OK;
}

/* NAME := [SCOPE "."] KEY.  A bare key never holds a dot, so "entry."
 * can only be a scope. */
ps_err parse_name(struct parse_ctx *c, const char *s, size_t n, size_t line, size_t *used,
			 struct parse_name *name)
{
	static const struct { const char *prefix; enum parse_scope scope; } scopes[] = {
		{ "entry.", PARSE_ENTRY }, { "message.", PARSE_MESSAGE }, { "pi.", PARSE_PI },
	};
	size_t off = 0, kused;
	ps_err err;

	name->scope = PARSE_NONE;
	for (size_t i = 0; i < sizeof scopes / sizeof scopes[0]; i++) {
		size_t plen = strlen(scopes[i].prefix);
		if (n > plen && memcmp(s, scopes[i].prefix, plen) == 0) {
			name->scope = scopes[i].scope;
			off = plen;
			break;
		}
	}
	err = parse_key(c, s + off, n - off, line, &kused, &name->key);
	if (err)
		return err;
	*used = off + kused;
	return PS_OK;
}

static int parse_is_base(const struct parse_key *k)
{
	return parse_eq(k->s, k->n, "type") || parse_eq(k->s, k->n, "id") ||
	       parse_eq(k->s, k->n, "parentId") || parse_eq(k->s, k->n, "timestamp") ||
	       parse_eq(k->s, k->n, "message");
}

/* Does the name, read in either mode, mean the entry's own key lit? */
int parse_is_entry_key(const struct parse_name *name, const char *lit)
{
	return (name->scope == PARSE_NONE || name->scope == PARSE_ENTRY) && parse_eq(name->key.s, name->key.n, lit);
}

/* The object a name belongs to (docs: Names). */
ps_err parse_target(struct parse_ctx *c, const struct parse_name *name, size_t line, json_t **obj)
{
	char show[PARSE_SHOW_MAX + 8];

	if (name->scope == PARSE_PI)
		return parse_fail(c, line, "unknown name \"pi.%s\" (pi.marker is the only one)",
				  parse_show(name->key.s, name->key.n, show, sizeof show));
	if (!c->two) {
		if (name->scope == PARSE_MESSAGE)
			return parse_fail(c, line, "\"message.%s\": the message scope exists only in an entry "
					  "of type message with a message object",
					  parse_show(name->key.s, name->key.n, show, sizeof show));
		*obj = c->entry;
		return PS_OK;
	}
	if (name->scope == PARSE_ENTRY)
		*obj = c->entry;
	else if (name->scope == PARSE_MESSAGE)
		*obj = c->msg;
	else
		*obj = parse_is_base(&name->key) ? c->entry : c->msg;
	return PS_OK;
}

/* Sets obj[key] = v (stolen), refusing a key that is already there, and
 * notes where identity fields were for the refusals of an edit. */
ps_err parse_set(struct parse_ctx *c, json_t *obj, const char *key, size_t klen, json_t *v, size_t line,
			int from_json)
{
	char show[PARSE_SHOW_MAX + 8];
	int level = obj == c->msg ? 1 : 0;

	if (json_object_getn(obj, key, klen)) {
		json_decref(v);
		return parse_fail(c, line, "duplicate field \"%s\"", parse_show(key, klen, show, sizeof show));
	}
	if (json_object_setn_new(obj, key, klen, v))
		return parse_nomem(c);
	for (size_t i = 0; i < PARSE_NIDS; i++) {
		if (parse_eq(key, klen, parse_ids[i])) {
			c->id_line[level][i] = line;
			c->id_json[level][i] = from_json;
		}
	}
	if (obj == c->entry && parse_eq(key, klen, "message"))
		c->message_line = line;
	return PS_OK;
}

