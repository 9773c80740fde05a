/* The entry-file parser's shared state and tools, for its three files
 * only: parse.c (the reading of a whole file: front matter, body, the
 * entry's identity), parsetok.c (refusals, bytes, JSON tokens and names)
 * and parsemark.c (markers and the images they stand for).  Nothing here
 * is for other modules; parse.h is the parser's contract.
 *
 * Ownership: a struct parse_ctx is its caller's (parse.c), which frees what
 * its fields mark owned.  Every ps_err function returns PS_OK, PS_ERR_NOMEM
 * (parse_nomem), or PS_ERR_INVALID with the reason in c->why (parse_fail). */
#ifndef PS_PARSECTX_H
#define PS_PARSECTX_H

#include <stddef.h>
#include <jansson.h>
#include "ps_error.h"

/* The longest tag we accept: "pi" and 20 digits. */
#define PARSE_TAG_MAX 24
/* How much of a user's value a refusal quotes. */
#define PARSE_SHOW_MAX 60

enum parse_scope { PARSE_NONE, PARSE_ENTRY, PARSE_MESSAGE, PARSE_PI };

enum parse_kind {
	PARSE_TEXT, PARSE_THINKING, PARSE_TOOLCALL, PARSE_IMAGE, PARSE_BLOCK, PARSE_SUMMARY,
	PARSE_COMMAND, PARSE_OUTPUT, PARSE_SECTION, PARSE_JSON, PARSE_VALUE, PARSE_NKINDS
};

extern const char *const parse_kinds[PARSE_NKINDS];

/* The fields that say which entry this is and where it hangs: an edit
 * cannot change them.  The first four are the entry's own; the rest are
 * checked in the entry and in its message. */
#define PARSE_NIDS 8
#define PARSE_NIDS_ENTRY_ONLY 4
extern const char *const parse_ids[PARSE_NIDS];

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

/* ---- parsetok.c ------------------------------------------------------ */

const char *parse_show(const char *s, size_t n, char *out, size_t outlen);
const char *parse_show_value(const json_t *v, char *out, size_t outlen);
ps_err parse_fail(struct parse_ctx *c, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
ps_err parse_nomem(struct parse_ctx *c);
int parse_eq(const char *s, size_t n, const char *lit);
int parse_str_is(const json_t *v, const char *lit);
int parse_is_digit(char ch);
size_t parse_utf8_bad(const unsigned char *s, size_t n);
int parse_is_crlf(const char *s, size_t n);
ps_err parse_normalize(struct parse_ctx *c, const char *text, size_t len);
size_t parse_line_of(struct parse_ctx *c, size_t pos);
size_t parse_json_span(const char *s, size_t n);
json_t *parse_json(const char *s, size_t n, json_error_t *err);
ps_err parse_value(struct parse_ctx *c, const char *s, size_t n, size_t line, json_t **out);
void parse_key_free(struct parse_key *k);
ps_err parse_key(struct parse_ctx *c, const char *s, size_t n, size_t line, size_t *used,
			struct parse_key *k);
ps_err parse_name(struct parse_ctx *c, const char *s, size_t n, size_t line, size_t *used,
			 struct parse_name *name);
int parse_is_entry_key(const struct parse_name *name, const char *lit);
ps_err parse_target(struct parse_ctx *c, const struct parse_name *name, size_t line, json_t **obj);
ps_err parse_set(struct parse_ctx *c, json_t *obj, const char *key, size_t klen, json_t *v, size_t line,
			int from_json);

/* ---- parsemark.c ----------------------------------------------------- */

void parse_marker_free(struct parse_marker *m);
ps_err parse_marker(struct parse_ctx *c, const char *s, size_t n, size_t line, struct parse_marker *m);
ps_err parse_image(struct parse_ctx *c, struct parse_marker *m);
ps_err parse_image_link(struct parse_ctx *c, struct parse_marker *m, const char *p, size_t n, size_t line);
ps_err parse_check_lost_links(struct parse_ctx *c);

#endif
