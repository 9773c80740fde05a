/* A validating JSON line scanner that indexes a session line without
 * building a jansson tree: it checks the line is one well-formed JSON object
 * and returns where the few top-level fields the index needs are.  jansson is
 * used later, when an entry is rendered; parsing every line of a 50 MB
 * session with it up front would cost a full tree per line. */
#ifndef PS_SCAN_H
#define PS_SCAN_H

#include <stddef.h>
#include "ps_error.h"

/* Deeper nesting is rejected, as jansson rejects it, so the scanner and the
 * renderer agree on which lines are entries. */
#define SCAN_MAX_DEPTH 2048

enum scan_kind { SCAN_ABSENT = 0, SCAN_STRING, SCAN_NULL, SCAN_OTHER };

/* A field's raw value: for strings, the bytes between the quotes, still
 * escaped when `escaped` is set (then the caller decodes with jansson). */
struct scan_field {
	enum scan_kind kind;
	int escaped;
	const char *ptr;
	size_t len;
	int null_element;  /* an array with null among its own elements (pi's
			    * extractTextContent throws on one) */
};

struct scan_result {
	struct scan_field type;      /* top-level "type" */
	struct scan_field id;        /* top-level "id" */
	struct scan_field parent_id; /* top-level "parentId" */
	struct scan_field timestamp; /* top-level "timestamp" */
	struct scan_field role;      /* "message"."role" */
	struct scan_field tool_name; /* "message"."toolName" */
	struct scan_field content;   /* "message"."content" (containers: SCAN_OTHER, the whole value) */
	struct scan_field msg_time;  /* "message"."timestamp" */
	/* What a usage total reads (usage.c): the members from the first to
	 * the end of the last one named usage, provider, model or
	 * responseModel within "message" (msg_usage), or usage, provider or
	 * model at the top level (top_usage), as text that reads as an object
	 * between braces; SCAN_ABSENT when there are none. */
	struct scan_field msg_usage;
	struct scan_field top_usage;
	int key_escaped;             /* a top-level key held an escape: fields may be missed */
	int maybe_surrogate;         /* an escape in \uD800-\uDFFF: a reader may refuse the line */
	int maybe_image;             /* a nested object has "type":"image" (or an escaped
				      * type key or value that might decode to it) */
	int maybe_unreadable;        /* the line may hold what JSON.parse reads and jansson
				      * refuses: a number that may be beyond the double range,
				      * an escape that may be \u0000 in a key */
	int carriage_return;         /* a \r in the line: white space to JSON, a line break
				      * to pi's reader (a valid line can hold none elsewhere) */
};

/* Scans line[0..len) (no newline).  Returns PS_OK and fills *out for a valid
 * JSON object, PS_ERR_INVALID for anything else (blank lines included).  All
 * pointers in *out point into line.  Invalid UTF-8 is accepted, as pi's
 * reader accepts it (it decodes with replacement characters). */
ps_err scan_line(const char *line, size_t len, struct scan_result *out);

/* True when line[0..len) holds only JSON white space. */
int scan_is_blank(const char *line, size_t len);

#endif
