/* libFuzzer harness: scan_line() on arbitrary bytes, cross-checked against
 * jansson.
 *
 * scan.h's contract: scan_line() accepts exactly the lines that are one
 * well-formed JSON object (invalid UTF-8 inside strings is accepted, as pi
 * reads files with a replacing decoder), with nesting limited as jansson
 * limits it "so the scanner and the renderer agree on which lines are
 * entries"; and the fields it reports are the top-level "type", "id",
 * "parentId", "timestamp" and message "role"/"toolName" (a later duplicate
 * key wins), unless key_escaped says a top-level key held an escape.
 *
 * So the checks are:
 *   - every pointer in the result lies inside the line;
 *   - scanner rejects, jansson (session_parse_line: what the renderer uses)
 *     accepts an object: inconsistency (unless the line holds a NUL byte:
 *     jansson skips one after a number or literal);
 *   - scanner accepts, session_parse_line fails: inconsistency, except for
 *     what jansson cannot represent and the code already expects (the
 *     "unreadable" entry of content.c/session.c): lone surrogate escapes, and
 *     also \u0000 in a key and a number beyond the double range, which
 *     JSON.parse reads but jansson refuses (counted, see the report);
 *   - scanner accepts valid UTF-8, plain json_loadb must accept too (with
 *     JSON_ALLOW_NUL, big integers as reals), same exceptions;
 *   - the fields agree with jansson's parse of the same line;
 *   - a line with an image block (images.h) has maybe_image set. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "fuzz_common.h"
#include "images.h"
#include "scan.h"
#include "session.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lines the scanner takes and jansson cannot represent, by kind. */
static int known_counts[3];

static void report_known(void)
{
	if (known_counts[0] + known_counts[1] + known_counts[2])
		fprintf(stderr, "fuzz_scan: scanner-only lines: number overflow %d, NUL in key %d, lone surrogate %d\n",
			known_counts[0], known_counts[1], known_counts[2]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	atexit(report_known);
	(void)argc;
	(void)argv;
	json_object_seed(1);
	return 0;
}

static void check_ptr(const struct scan_field *f, const char *line, size_t len, const char *name)
{
	if (f->kind == SCAN_ABSENT)
		return;
	FZ_CHECK(f->kind == SCAN_NULL || (f->ptr >= line && f->ptr + f->len <= line + len),
		 "scan field %s points outside the line", name);
}

/* Why jansson refuses a line the scanner took; NULL when it is not one of
 * the representable-in-JS-only cases. */
static const char *known_refusal(const json_error_t *err)
{
	enum json_error_code code = json_error_code(err);
	if (code == json_error_numeric_overflow)
		return "number-overflow";
	if (code == json_error_null_byte_in_key)
		return "nul-in-key";
	if (strncmp(err->text, "invalid Unicode", 15) == 0)
		return "lone-surrogate";
	/* Known bug "scan-depth" (reported): jansson counts a scalar as a
	 * level, the scanner does not, so a scalar at level 2049 passes. */
	if (code == json_error_stack_overflow && fz_known("scan-depth"))
		return "depth";
	return NULL;
}

/* Decodes a scanned string field as session.c does. */
static json_t *decode_field(const struct scan_field *f)
{
	if (!f->escaped)
		return json_stringn_nocheck(f->ptr, f->len);
	char *q = malloc(f->len + 2);
	FZ_CHECK(q != NULL, "malloc");
	q[0] = '"';
	memcpy(q + 1, f->ptr, f->len);
	q[f->len + 1] = '"';
	json_t *v = json_loadb(q, f->len + 2, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	free(q);
	return v;
}

/* Whether the scanner's field agrees with jansson's value (check_field's
 * test, without aborting). */
static int field_agrees(const struct scan_field *f, const json_t *v)
{
	switch (f->kind) {
	case SCAN_ABSENT:
		return v == NULL;
	case SCAN_NULL:
		return json_is_null(v);
	case SCAN_OTHER:
		return v && !json_is_string(v) && !json_is_null(v);
	case SCAN_STRING: {
		if (!json_is_string(v))
			return 0;
		json_t *d = decode_field(f);
		int same = !d || json_equal(d, v);
		json_decref(d);
		return same;
	}
	}
	return 0;
}

/* Known bug "scan-nested-escaped-key" (reported): a key of "message"
 * written with an escape ("r\u006fle") is not seen by the scanner, and
 * key_escaped stays 0.  True when the message fields disagree only
 * because of escapes: the same object written without them agrees. */
static int nested_escape_only(const json_t *strict)
{
	char *plain = json_dumps(strict, JSON_COMPACT);
	struct scan_result r2;
	int ok = 0;
	if (plain && scan_line(plain, strlen(plain), &r2) == PS_OK && !r2.key_escaped) {
		json_t *msg = json_object_get(strict, "message");
		ok = field_agrees(&r2.role, json_object_get(msg, "role")) &&
		     field_agrees(&r2.tool_name, json_object_get(msg, "toolName"));
	}
	free(plain);
	return ok;
}

static void check_field(const struct scan_field *f, const json_t *v, const char *name, const char *line,
			size_t len)
{
	switch (f->kind) {
	case SCAN_ABSENT:
		FZ_CHECK(v == NULL, "scanner misses %s (jansson: %s) in %.*s", name, fz_dump(v), (int)len, line);
		return;
	case SCAN_NULL:
		FZ_CHECK(json_is_null(v), "scanner says %s is null, jansson: %s", name, fz_dump(v));
		return;
	case SCAN_OTHER:
		FZ_CHECK(v && !json_is_string(v) && !json_is_null(v), "scanner says %s is not a string, jansson: %s",
			 name, fz_dump(v));
		return;
	case SCAN_STRING: {
		FZ_CHECK(json_is_string(v), "scanner says %s is a string, jansson: %s", name, fz_dump(v));
		json_t *d = decode_field(f);
		/* an escape jansson cannot decode was already classed above */
		if (d) {
			FZ_CHECK(json_equal(d, v), "scanner's %s (%s) differs from jansson's (%s)", name, fz_dump(d),
				 fz_dump(v));
			json_decref(d);
		}
		return;
	}
	}
}


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line = (const char *)data;
	struct scan_result r;
	ps_err err = scan_line(line, size, &r);
	int blank = scan_is_blank(line, size);

	FZ_CHECK(err == PS_OK || err == PS_ERR_INVALID, "scan_line returned %d", (int)err);
	FZ_CHECK(!(blank && err == PS_OK), "scan_line accepted a blank line");

	/* What the renderer will read (pi's reading: replaced invalid UTF-8,
	 * big integers as reals). */
	json_t *parsed = session_parse_line(line, size);
	/* Plain jansson, for the UTF-8-valid case. */
	json_error_t jerr;
	size_t strict_flags = JSON_ALLOW_NUL;
	json_t *strict = json_loadb(line, size, strict_flags, &jerr);
	if (!strict && json_error_code(&jerr) == json_error_numeric_overflow)
		strict = json_loadb(line, size, strict_flags |= JSON_DECODE_INT_AS_REAL, &jerr);
	int utf8 = fz_utf8_valid(data, size);

	if (err != PS_OK) {
		/* jansson 2.14 quirk, not ours: a NUL byte right after a number
		 * or literal is skipped ({"a":1\0} loads), so with a NUL byte
		 * in the line only the scanner's "no" counts (JSON.parse
		 * refuses such lines too). */
		if (memchr(data, '\0', size))
			goto out;
		FZ_CHECK(parsed == NULL, "scanner rejects a line jansson reads as an object: %.*s", (int)size, line);
		FZ_CHECK(!json_is_object(strict), "scanner rejects a line jansson reads as an object: %.*s",
			 (int)size, line);
		goto out;
	}

	check_ptr(&r.type, line, size, "type");
	check_ptr(&r.id, line, size, "id");
	check_ptr(&r.parent_id, line, size, "parentId");
	check_ptr(&r.timestamp, line, size, "timestamp");
	check_ptr(&r.role, line, size, "role");
	check_ptr(&r.tool_name, line, size, "toolName");
	check_ptr(&r.content, line, size, "content");
	check_ptr(&r.msg_time, line, size, "message.timestamp");

	if (utf8 && !strict) {
		const char *why = known_refusal(&jerr);
		FZ_CHECK(why != NULL, "scanner accepts valid UTF-8 that json_loadb refuses (%s): %.*s", jerr.text,
			 (int)(size > 300 ? 300 : size), line);
	}
	if (!parsed) {
		/* Redo session_parse_line's steps to learn jansson's reason. */
		json_error_t e2;
		size_t clen;
		char *clean = fz_sanitize(data, size, &clen);
		json_t *v = json_loadb(clean, clen, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &e2);
		free(clean);
		FZ_CHECK(v == NULL, "session_parse_line refuses a line that sanitised jansson reads: %.*s",
			 (int)(size > 300 ? 300 : size), line);
		const char *why = known_refusal(&e2);
		FZ_CHECK(why != NULL, "scanner accepts a line session_parse_line refuses (%s): %.*s", e2.text,
			 (int)(size > 300 ? 300 : size), line);
		/* sessioninfo's fast path reads only lines without the flag,
		 * trusting jansson would read them. */
		FZ_CHECK(r.maybe_unreadable, "session_parse_line refuses (%s) a line without maybe_unreadable: %.*s",
			 e2.text, (int)(size > 300 ? 300 : size), line);
		if (!strcmp(why, "number-overflow"))
			known_counts[0]++;
		else if (!strcmp(why, "nul-in-key"))
			known_counts[1]++;
		else if (!strcmp(why, "lone-surrogate"))
			known_counts[2]++;
		goto out;
	}
	FZ_CHECK(json_is_object(parsed), "session_parse_line returned a non-object");
	/* A line the scanner takes holds a \r only as white space, which it
	 * notes (session.c tells a listing it is not pi's line then). */
	FZ_CHECK(r.carriage_return == (memchr(line, '\r', size) != NULL), "carriage_return is %d: %.*s",
		 r.carriage_return, (int)(size > 300 ? 300 : size), line);

	/* maybe_image may say yes for nothing, never no for an image block:
	 * only flagged lines are searched for images. */
	{
		size_t i;
		json_t *blk;
		json_array_foreach(images_content(parsed), i, blk)
			FZ_CHECK(!images_is_image(blk) || r.maybe_image, "image block not flagged by the scanner: %.*s",
				 (int)(size > 300 ? 300 : size), line);
	}

	/* The fields, against jansson's reading of the same bytes (only when
	 * nothing was replaced: replacement changes the strings). */
	if (strict && utf8) {
		FZ_CHECK(json_is_object(strict), "scanner accepted a non-object");
		if (!r.key_escaped) {
			check_field(&r.type, json_object_get(strict, "type"), "type", line, size);
			check_field(&r.id, json_object_get(strict, "id"), "id", line, size);
			check_field(&r.parent_id, json_object_get(strict, "parentId"), "parentId", line, size);
			check_field(&r.timestamp, json_object_get(strict, "timestamp"), "timestamp", line, size);
			json_t *msg = json_object_get(strict, "message");
			if ((!field_agrees(&r.role, json_object_get(msg, "role")) ||
			     !field_agrees(&r.tool_name, json_object_get(msg, "toolName"))) &&
			    fz_known("scan-nested-escaped-key") && nested_escape_only(strict))
				goto out;
			check_field(&r.role, json_object_get(msg, "role"), "message.role", line, size);
			check_field(&r.tool_name, json_object_get(msg, "toolName"), "message.toolName", line, size);
			check_field(&r.content, json_object_get(msg, "content"), "message.content", line, size);
			check_field(&r.msg_time, json_object_get(msg, "timestamp"), "message.timestamp", line, size);
			/* A container's span is the whole value. */
			if (r.content.kind == SCAN_OTHER) {
				json_t *span = json_loadb(r.content.ptr, r.content.len, JSON_DECODE_ANY | strict_flags, NULL);
				FZ_CHECK(span && json_equal(span, json_object_get(msg, "content")),
					 "message.content's span is not its value: %.*s", (int)(size > 300 ? 300 : size), line);
				json_decref(span);
				/* null among an array's own elements, as noted */
				const json_t *content = json_object_get(msg, "content");
				int has_null = 0;
				for (size_t i = 0; json_is_array(content) && i < json_array_size(content); i++)
					has_null |= json_is_null(json_array_get(content, i));
				FZ_CHECK(r.content.null_element == has_null, "message.content's null_element is %d, not %d: %.*s",
					 r.content.null_element, has_null, (int)(size > 300 ? 300 : size), line);
			}
		}
	}
out:
	json_decref(parsed);
	json_decref(strict);
	return 0;
}
