/* A conversation as one readable Markdown document: the path from the root
 * to an entry, each entry a short section.  Meant for reading and for
 * `tail -f` as a session grows, not for parsing back (the entry files,
 * docs/entry-format.md, are the exact form).
 *
 * Ownership: this module (src/transcript.c) is owned by the images/
 * transcript/usage work; the layout and the FUSE front end only call it.
 * The buffer returned is new and belongs to the caller; the session is
 * borrowed.
 *
 * Append-friendly by construction: the document is a title that depends
 * only on the session header, then one section per entry that depends only
 * on that entry (and on names that never change: its entry file name).  So
 * the transcript of an entry's path is a byte prefix of the transcript of
 * any descendant's path, and of the same path later, whatever else the file
 * gains.  Nothing in it is the time of now.
 *
 * Format (every section ends with a blank line):
 *
 *   # Session <session id>                    (the id, never the name: it
 *                                               would change the first line)
 *   *Started <header timestamp>. Working directory <cwd>*
 *
 *   ## User                                   user text verbatim
 *   ## Assistant (provider/model)             thinking as "> " blockquotes,
 *                                               text verbatim, each tool call
 *                                               as **name** and a ```json
 *                                               block of its arguments;
 *                                               an error as an italic note
 *   ## Tool result: <tool>[ (error)]          text in a ``` fence
 *   ## Bash: <command>                        output in a ``` fence, exit
 *                                               code etc. as a note (a
 *                                               multi-line command is a
 *                                               fenced block under ## Bash)
 *   ## Summary of the conversation before this point   (compaction) the
 *                                               summary, and a note of what
 *                                               was kept
 *   ## Branch summary                         the summary
 *   ## Custom message: <customType>           its content
 *   ## System prompt                          content, then ### per section
 *   *Model: provider/model*, *Thinking level: x*, *Label "x" on entry id*,
 *   *Session name: x*, *Context edit of entry id*   one-line italic notes;
 *   the notes a section adds (exit code, compaction range, errors) are
 *   the same: "*Part. Part*" on one line after it
 *
 * `custom` entries (extension state, never sent to the model) and `usage`
 * entries (accounting, see usage.h) add nothing.  Images are links
 * `![image N](<entry file path>.images/N.<ext>)` (images_link(): the same
 * link as in the entry file, %XX escapes of names written %25XX), numbered
 * as images.h lists them; the path goes from the transcript's directory
 * up to the session directory and down to the entry file through the
 * branches' id names (layout_branch_id_name(): a label that comes later
 * renames a branch in listings, never in a transcript).  Fences are longer than any run of backticks in what they hold.
 * Text is copied byte for byte, except that lone UTF-16 surrogates (kept by
 * the reader as stand-in code points, jstext.h) become U+FFFD, as Node
 * writes them; headings and notes fold control characters to spaces so
 * each stays one line. */
#ifndef PS_TRANSCRIPT_H
#define PS_TRANSCRIPT_H

#include <stddef.h>
#include <stdint.h>
#include "ps_error.h"
#include "session.h"

/* Image links are link_prefix (NULL for none; "../" per directory level of
 * the transcript below the session directory) plus the entry file's path
 * from the session directory by id names, less ".md", plus
 * ".images/N.ext".
 *
 * The transcript of the path from the root to tip (an index into
 * s->entries; PS_NIL gives the title alone).  *buf is new and
 * NUL-terminated; *len excludes the NUL.  PS_ERR_NOTSESSION for a file
 * without a header, PS_ERR_NOENT for a tip out of range. */
ps_err transcript_text(const struct ps_session *s, uint32_t tip, const char *link_prefix, char **buf, size_t *len);

#endif
