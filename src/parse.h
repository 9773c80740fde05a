/* The write side of the entry files: the text of an entry file
 * (docs/entry-format.md, as render_entry() writes it) read back into an
 * entry.  parse_entry_md(render_entry(E, F), E, F) equals E without its
 * "id", "parentId" and top-level "timestamp"; what is accepted beyond the
 * renderer's exact bytes, and how images are matched to the original, is
 * in docs/entry-format.md ("What the parser accepts", "Images").
 *
 * Ownership: every argument is borrowed; a result is a new reference
 * (which may share image data strings with the original).  Pure: no
 * global state, safe from any thread.
 * Errors: PS_ERR_INVALID with a one-line reason naming the line of the
 * file ("line N: ..."), for everything not in the format (nothing is
 * guessed); PS_ERR_NOMEM.  Nothing is returned on an error. */
#ifndef PS_PARSE_H
#define PS_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "ps_error.h"

/* Turns the text of an entry file back into an entry object.
 *
 * text, len: the file's bytes (any bytes: NUL, invalid UTF-8, ... are
 * refused or kept as the format says, never read past len; no NUL
 * terminator is needed).  Borrowed.
 *
 * original: the entry the file showed, when this is an edit of an existing
 * entry file (borrowed, never modified; *out may share its image data
 * strings), or NULL for a new file.
 *
 * name: the entry file's name the renderer was given (render.h; the image
 * links are relative to it), borrowed; NULL stands for
 * RENDER_DEFAULT_NAME.  Only an edit of an entry with images uses it.
 *   - Edit: type, id, parentId, top-level timestamp, role, toolCallId,
 *     toolName and customType (of the entry and of its message) cannot
 *     change, appear or disappear.  Any other field may change; a front
 *     matter line that was removed means its field is removed.
 *   - Edit not starting with front matter (a file written with the shell:
 *     `echo text > ENTRY.md`): the whole file less one final newline is
 *     the entry's new text, and every other field stays as it was
 *     (rewrite.h says which text, and which entries have none or several
 *     and are refused).  A file of whitespace only is refused.
 *   - New file not starting with front matter ("---" line): the whole file
 *     less one final newline is the text of a user message,
 *     {"type":"message","message":{"role":"user","content":TEXT,
 *     "timestamp":NOW_MS}}.  A file of whitespace only is refused.
 *   - New file with front matter: any entry type (a "type" is required);
 *     "id", "parentId" and "timestamp" in it are ignored, and a message
 *     without "timestamp" gets the current time in milliseconds.
 *
 * On success *out is a new reference to the entry as it should be
 * appended, WITHOUT "id", "parentId" and top-level "timestamp" (the
 * appender fills those), and PS_OK is returned.
 * On refusal returns PS_ERR_INVALID and writes a one-line, user-readable
 * reason into why (why_len bytes, always NUL-terminated when why_len > 0;
 * why may be NULL), e.g.
 *   line 3: front matter field "role" cannot change (was user, now assistant)
 * PS_ERR_NOMEM when memory runs out (why says so too).  *out is NULL on
 * any error. */
ps_err parse_entry_md(const char *text, size_t len, const json_t *original, const char *name, json_t **out,
		      char *why, size_t why_len);

/* The same with the clock given: now_ms is the time (milliseconds since
 * the epoch) a new message gets.  For tests and reproducible tools. */
ps_err parse_entry_md_at(const char *text, size_t len, const json_t *original, const char *name,
			 int64_t now_ms, json_t **out, char *why, size_t why_len);

/* 1 when parse_entry_md() would read text as front matter plus body (it
 * starts with the line "---", after the line-ending rules above), 0 when
 * a new file of this text is a plain user message.  Reads at most the
 * first line unless the file starts "---\r\n" (then every line ending is
 * checked). */
int parse_is_front_matter(const char *text, size_t len);

/* 0 when no file that starts with these len bytes is read as front matter
 * (parse_is_front_matter() is 0 for all of them), 1 when one may be: the
 * first bytes written decide that a file is the text alone. */
int parse_may_be_front_matter(const char *prefix, size_t len);

#endif
