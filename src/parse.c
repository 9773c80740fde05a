/* Parses an entry file (docs/entry-format.md) back into an entry: the
 * inverse of render.c.  The comments say why; the format is in the
 * document, and parse.h lists what is accepted beyond the renderer's
 * exact bytes.
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
#include "render.h"
#include "rewrite.h"

/* The longest tag we accept: "pi" and 20 digits. */
#define PARSE_TAG_MAX 24
/* How much of a user's value a refusal quotes. */
#define PARSE_SHOW_MAX 60

enum parse_scope { PARSE_NONE, PARSE_ENTRY, PARSE_MESSAGE, PARSE_PI };

enum parse_kind {
	PARSE_TEXT, PARSE_THINKING, PARSE_TOOLCALL, PARSE_IMAGE, PARSE_BLOCK, PARSE_SUMMARY,
	PARSE_COMMAND, PARSE_OUTPUT, PARSE_SECTION, PARSE_JSON, PARSE_VALUE, PARSE_NKINDS
};

static const char *const parse_kinds[PARSE_NKINDS] = {
	"text", "thinking", "toolCall", "image", "block", "summary",
	"command", "output", "section", "json", "value",
};

/* The fields that say which entry this is and where it hangs: an edit
 * cannot change them.  The first four are the entry's own; the rest are
 * checked in the entry and in its message. */
#define PARSE_NIDS 8
#define PARSE_NIDS_ENTRY_ONLY 4
static const char *const parse_ids[PARSE_NIDS] = {
	"type", "id", "parentId", "timestamp", "role", "toolCallId", "toolName", "customType",
};

/* A key as written: bytes of the line (bare), or a decoded JSON string. */
struct parse_key {
	const char *s;
	size_t n;
	json_t *decoded; /* owns s when the key was quoted */
	int quoted;
};

struct parse_name {
	enum parse_scope scope;
	struct parse_key key;
};

struct parse_marker {
	enum parse_kind kind;
	size_t line;
	json_t *blk;            /* text/thinking/toolCall/image: the block being built (owned) */
	int has_bytes;          /* image: a bare bytes= (the derived size) */
	json_int_t bytes;
	int has_data;           /* image: a data= attribute */
	struct parse_name name; /* json: NAME; section: the section's key */
	json_t *value;          /* section: value= (owned) */
};

struct parse_ctx {
	const char *text;       /* normalised: valid UTF-8, ends with "\n" */
	size_t len;
	char *owned;            /* text, when normalising had to copy */
	char *why;
	size_t why_len;
	const json_t *original; /* borrowed */
	size_t lc_pos, lc_line; /* line-number cursor: line of byte lc_pos */

	size_t fm_end;          /* start of the closing "---" line */
	size_t close_line;      /* its line number */
	size_t body;            /* start of the body */
	char pat[PARSE_TAG_MAX + 8]; /* "\n<!-- TAG:" */
	size_t patlen;
	json_t *type;           /* the entry's type, as pass 1 found it (owned) */
	size_t type_line;
	int type_message;       /* the entry's type is "message" */
	int has_message_key;    /* an entry-level name "message" occurs */
	int n_fields;           /* front matter fields but pi.marker */
	int two;                /* two scopes: the message's keys are shown beside the entry's */

	json_t *entry;          /* owned */
	json_t *msg;            /* owned; two-scope mode only */
	json_t *dflt;           /* the default scope: msg or entry (borrowed) */
	json_t *value;          /* a value marker: the whole entry (owned) */

	json_t *slot_obj;       /* where the slot descriptor was (borrowed) */
	const char *slot_key;   /* "content" or "replacement" */
	int slot_string;        /* "string", else "blocks" */
	json_t *slot_text;      /* string slot: the leading text (owned) */
	json_t *blocks;         /* blocks slot (owned) */
	json_t *sections;       /* made by section markers (borrowed from dflt) */

	const json_t *orig_slot; /* the original's content blocks, if an array */
	size_t img_cursor[3];   /* per enum parse_img: where the next search starts */
	size_t img_count[3];    /* ... and how many markers asked */
	/* When the original's slot holds image files (images.h), its images
	 * are found by their links instead of by counting. */
	const char *name;       /* the entry file's name, which the links are relative to */
	const json_t **files;   /* the original's image blocks with files, in order (owned array) */
	size_t n_files;
	unsigned char *linked;  /* per file: a marker's link named it (owned) */

	size_t id_line[2][PARSE_NIDS]; /* where each identity field was: [entry|message] */
	int id_json[2][PARSE_NIDS];    /* ... in a json block rather than the front matter */
	size_t message_line;           /* one scope: the line of the "message" value */
};

static int parse_eq(const char *s, size_t n, const char *lit);

/* ---- refusals -------------------------------------------------------- */

/* Copies a user's bytes into out for a message: at most PARSE_SHOW_MAX
 * bytes, control characters as '?', cut at a character boundary. */
static const char *parse_show(const char *s, size_t n, char *out, size_t outlen)
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
static const char *parse_show_value(const json_t *v, char *out, size_t outlen)
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

static ps_err parse_fail(struct parse_ctx *c, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes "line N: reason" into why and returns PS_ERR_INVALID. */
static ps_err parse_fail(struct parse_ctx *c, size_t line, const char *fmt, ...)
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

static ps_err parse_nomem(struct parse_ctx *c)
{
	if (c->why && c->why_len)
		snprintf(c->why, c->why_len, "out of memory");
	return PS_ERR_NOMEM;
}

/* ---- bytes ----------------------------------------------------------- */

static int parse_eq(const char *s, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	return n == m && memcmp(s, lit, m) == 0;
}

/* Compares with the real length: a string may hold NUL. */
static int parse_str_is(const json_t *v, const char *lit)
{
	return json_is_string(v) && parse_eq(json_string_value(v), json_string_length(v), lit);
}

static int parse_is_digit(char ch)
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
static size_t parse_utf8_bad(const unsigned char *s, size_t n)
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
static int parse_is_crlf(const char *s, size_t n)
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
static ps_err parse_normalize(struct parse_ctx *c, const char *text, size_t len)
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
static size_t parse_line_of(struct parse_ctx *c, size_t pos)
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
static size_t parse_json_span(const char *s, size_t n)
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
static json_t *parse_json(const char *s, size_t n, json_error_t *err)
{
	return json_loadb(s, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, err);
}

/* A front matter VALUE: JSON when it starts like JSON or is wholly a
 * literal or number that decodes, else the bytes as a string. */
static ps_err parse_value(struct parse_ctx *c, const char *s, size_t n, size_t line, json_t **out)
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

static void parse_key_free(struct parse_key *k)
{
	json_decref(k->decoded);
	k->decoded = NULL;
}

/* KEY := BARE | JSON-STRING at the start of s; *used gets its length. */
static ps_err parse_key(struct parse_ctx *c, const char *s, size_t n, size_t line, size_t *used,
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
static ps_err parse_name(struct parse_ctx *c, const char *s, size_t n, size_t line, size_t *used,
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
static int parse_is_entry_key(const struct parse_name *name, const char *lit)
{
	return (name->scope == PARSE_NONE || name->scope == PARSE_ENTRY) && parse_eq(name->key.s, name->key.n, lit);
}

/* The object a name belongs to (docs: Names). */
static ps_err parse_target(struct parse_ctx *c, const struct parse_name *name, size_t line, json_t **obj)
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
static ps_err parse_set(struct parse_ctx *c, json_t *obj, const char *key, size_t klen, json_t *v, size_t line,
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

/* ---- markers --------------------------------------------------------- */

static void parse_marker_free(struct parse_marker *m)
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
static ps_err parse_marker(struct parse_ctx *c, const char *s, size_t n, size_t line, struct parse_marker *m)
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

/* What an image block holds as "data": the three kinds are matched
 * separately, each in order (parse.h). */
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
 * the data when the marker says bytes= (parse.h). */
static ps_err parse_image(struct parse_ctx *c, struct parse_marker *m)
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
 * their links but never added or made up (parse.h).  p[0..n) is the
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
 * their links but never added or made up (parse.h).  p[0..n) is the
 * payload, line its first line. */
static ps_err parse_image_link(struct parse_ctx *c, struct parse_marker *m, const char *p, size_t n, size_t line)
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
static ps_err parse_check_lost_links(struct parse_ctx *c)
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
