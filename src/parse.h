/* The write side of the entry files: turns the Markdown of an entry file
 * (docs/entry-format.md, written by render_entry()) back into an entry.
 * For every entry E and file name F, parse_entry_md(render_entry(E, F), E,
 * F) equals E without its "id", "parentId" and top-level "timestamp".
 *
 * What the parser accepts beyond the renderer's exact bytes, because
 * editors and people produce it:
 *   - a file that lost its final "\n" reads as if it had it (when the
 *     last text ended with "\n" itself, that file is byte for byte the
 *     rendering of the text without it, and reads so);
 *   - a file in which every "\n" is preceded by "\r" (saved with CRLF line
 *     endings) reads with every "\r\n" turned into "\n".  A file with any
 *     bare "\n" is taken byte for byte, so a text holding "\r\n" (tool
 *     output) in a rendered file (whose "---\n" first line is bare) keeps
 *     its "\r";
 *   - a marker line not preceded by the blank separator line (the text
 *     before it then simply ends there), extra blank lines after a
 *     ```json block or after a marker without payload, blank front matter
 *     lines, and "NAME:" with nothing after it (the empty string);
 *   - redundant scope prefixes in a message entry ("entry.type",
 *     "message.role" mean what "type" and "role" mean).
 * Everything else that is not in the format is refused with the line it is
 * on: nothing is guessed.
 *
 * One reading needs the original: {"type":"message", "role":...} without a
 * "message" object renders exactly as a message entry whose message holds
 * "role" (docs: Names).  A file is read as the latter unless it is an edit
 * of an entry of type "message" that has no "message" key.
 *
 * Images: the file does not hold image data, so every image marker needs
 * its counterpart in the original entry's content.  In a message's or
 * custom message's content (images_content(), the images that are files)
 * a marker with a bare bytes=N has the link to its file on the next line,
 * exactly as render_entry() wrote it for the same file name
 * (images_link()): the link names image K of the original, which gives
 * the block its "data"; N must be image K's size.  So an image moves or
 * goes with its marker and link; a link that names no image of the entry
 * (another entry's, a made-up one), an image shown twice, a marker
 * without its link, or a link left as text without its marker (the image
 * would silently go) are refused.  Elsewhere (a context_edit's
 * replacement, unknown entries), markers are counted in order and
 * separately for the three kinds the renderer writes: the k-th marker
 * with a bare bytes=N is the k-th image block with string data, takes its
 * "data" from there, and N must be that image's size; the k-th marker
 * with a data= attribute (data that is not a string) is the k-th such
 * block; the k-th marker with neither is the k-th image block without
 * data.  Other keys (mimeType, ...) are the marker's attributes.  An image
 * marker without a counterpart, or with a string data=, is refused:
 * images cannot be added through a Markdown file. */
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
