/* An entry file rewritten without front matter: `echo 'new text' >
 * ENTRY.md`, `cat`, `printf`, `tee`, a program's open(f, "w").  Such a
 * file is the entry's new text; everything else of the entry (type, role,
 * metadata, other blocks, images) stays as it was, so the result is what
 * an editor's save of the rendered file with only the text changed gives
 * (docs/entry-format.md, "Rewriting with the shell").
 *
 * Which text: the entry's one text, if it has exactly one.  The texts of
 * an entry are those of its default scope (the message in a message entry,
 * the entry otherwise, as render.c shows them):
 *   - its content slot when that is a string (content, or a context_edit's
 *     replacement.content);
 *   - each text block ({"type":"text","text":STRING}) of a slot that is an
 *     array (other blocks: thinking, tool calls, images, are not texts);
 *   - the verbatim fields summary, command and output, when strings;
 *   - each string of a non-empty sections object.
 * One text: it is replaced (a text block keeps its other keys).  None, or
 * several: refused, with a reason that says what the entry holds and how to
 * change it instead (write the whole file, front matter first).
 *
 * Ownership: original is borrowed, never modified; *out is new and may
 * share values with original (it is a deep copy). */
#ifndef PS_REWRITE_H
#define PS_REWRITE_H

#include <stddef.h>
#include <jansson.h>
#include "ps_error.h"

/* original: the entry the file showed.  text, len: the new text exactly
 * (valid UTF-8; the caller has already dropped one final newline and
 * normalised line endings); borrowed.
 * On success *out is the entry with its text replaced, WITHOUT "id",
 * "parentId" and top-level "timestamp" (as parse_entry_md() returns it),
 * and PS_OK is returned.  On refusal PS_ERR_INVALID and a one-line reason
 * in why (NUL-terminated when why_len > 0); PS_ERR_NOMEM when memory runs
 * out.  *out is NULL on any error. */
ps_err rewrite_entry_text(const json_t *original, const char *text, size_t len, json_t **out, char *why,
			  size_t why_len);

/* Whether original can take a rewrite without front matter: PS_OK when
 * it has one text, else PS_ERR_INVALID and the reason rewrite_entry_text()
 * would give, in why.  Lets a writer be refused at its first bytes. */
ps_err rewrite_check(const json_t *original, char *why, size_t why_len);

#endif
