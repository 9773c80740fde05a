/* The index of one session file: where every entry's line is, how entries
 * form the tree, and how the tree is cut into directories ("branches").
 * Built by scanning lines (scan.h), grown incrementally as the file is
 * appended to, and rebuilt only when the file shrinks or is replaced
 * (session.c); entries are read back through it by sessionload.c.
 * The index's types are sessiondata.h's; what it reads of one line,
 * sessionline.c's.  Not thread-safe: callers hold their own lock around
 * a session. */
#ifndef PS_SESSION_H
#define PS_SESSION_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "ps_error.h"
#include "sessiondata.h"

/* The cache of that type hung on s, or NULL.  Borrowed: valid until the
 * index is rebuilt (session_refresh) or s freed. */
struct ps_attachment *session_attachment(const struct ps_session *s, const struct ps_attachment_type *type);

/* Hangs a (whose type s has no cache of yet) on s, which from then on
 * releases it as sessiondata.h describes. */
void session_attach(struct ps_session *s, struct ps_attachment *a);

/* A digest of the live labels (which entries carry one, and which): it
 * changes when a label is set, moved or removed, renaming forks. */
uint64_t session_labels_digest(const struct ps_session *s);

/* Opens and indexes the session file at path (copied).  A file that is not
 * a session still opens (s->not_session says why).  *out is new: release
 * with session_free. */
ps_err session_open(const char *path, struct ps_session **out);
/* Opens the file as session_open does, indexing only what the views'
 * catalog reads of it: every line up to the header and the header itself,
 * then only the lines that may be a session_info entry or a user message
 * (they hold "session_info", "user" in quotes, or a \u escape that could
 * spell either), each indexed exactly as session_open indexes it.  So the
 * header's fields, s->name, and the entries of kind "user" in file order
 * are session_open's; the other entries are missing and the tree is not
 * the file's (parents, branches, labels, loadout: do not use).  A store of
 * 5,000 sessions reads in a quarter of the time.  Private: never put in
 * the store's cache.  *out is new: release with session_free. */
ps_err session_open_skim(const char *path, struct ps_session **out);
/* Reading a file's lines once for two readers: the index, and a reader
 * of the same lines (sessioninfo.h's listing) that would split and scan
 * the file again.  line is called with each complete line in file order
 * as the index reads it, with the scanner's reading of it (r NULL for a
 * blank line or one that is no JSON object); it returns PS_ERR_NOMEM to
 * stop the open.  The index splits lines at \n only and leaves an
 * unterminated last line for later: where a reader splitting as pi does
 * would see other lines (a \r in the file, a last line without \n, a line
 * the index cannot hold), unusable is set and the lines given are not the
 * file's: read it another way. */
struct scan_result;
struct session_observer {
	ps_err (*line)(void *ctx, const char *line, size_t len, const struct scan_result *r);
	void *ctx;
	int unusable;
};

/* session_open, telling obs (borrowed for the call) each line. */
ps_err session_open_observed(const char *path, struct session_observer *obs, struct ps_session **out);
/* The problem line for bytes after the last newline (a line cut short, or
 * one being written), "line N: ...\n" like the others, into buf (n bytes);
 * 0 when the file ends in a newline, else the length (cut to fit). */
size_t session_tail_problem(const struct ps_session *s, char *buf, size_t n);
void session_free(struct ps_session *s);

/* Brings the index up to date with the file: appended bytes are indexed
 * incrementally; a shrunk or replaced file is indexed anew (generation
 * bumps).  *changed (may be NULL) is set when anything visible changed. */
ps_err session_refresh(struct ps_session *s, int *changed);

/* The current leaf: the last entry in file order, or PS_NIL. */
uint32_t session_leaf(const struct ps_session *s);

/* Looks up an entry by id: the latest one with that id, or PS_NIL. */
uint32_t session_find(const struct ps_session *s, const char *id, size_t n);

/* Reads an entry's stored line into a new buffer (caller frees), NUL
 * terminated, *len without the NUL. */
ps_err session_read_line(const struct ps_session *s, uint32_t idx, char **buf, size_t *len);
ps_err session_read_header(const struct ps_session *s, char **buf, size_t *len);

/* Parses an entry and migrates it to version 3 in memory the way pi does
 * (ids and parentIds from the index for v1, firstKeptEntryIndex ->
 * firstKeptEntryId, hookMessage -> custom).  *out is a new reference. */
ps_err session_load_entry(const struct ps_session *s, uint32_t idx, json_t **out);

/* Parses a stored JSON line as pi's reader would accept it: invalid UTF-8
 * is replaced (pi decodes with replacement characters), integers beyond 64
 * bits become reals.  Returns a new reference or NULL. */
json_t *session_parse_line(const char *line, size_t len);

/* Like session_load_entry, but the tree may be shared with other readers
 * through the entry cache (entrycache.h): *out is a new reference to a tree
 * nobody may modify.  For everything that only reads entries. */
ps_err session_load_entry_shared(const struct ps_session *s, uint32_t idx, json_t **out);

/* Like session_load_entry_shared, but a tree parsed now holds only the
 * members keep names (jparse.h) and is the caller's alone (not shared,
 * not cached); a tree the entry cache holds already is lent whole.  For a
 * reader of a few fields of many entries (usage.c), which would otherwise
 * build and free every message's content.  Never modify the tree. */
struct jparse_keep;
ps_err session_load_entry_keep(const struct ps_session *s, uint32_t idx, const struct jparse_keep *keep,
			       json_t **out);

/* Loads the entries from the root to idx (root first) into a new array of
 * new references to shared trees (never modify them); free with
 * session_path_free. */
ps_err session_load_path(const struct ps_session *s, uint32_t idx, json_t ***path, size_t *n);
void session_path_free(json_t **path, size_t n);

/* One entry of a path as session_load_path loads it (*out: a new
 * reference to a tree nobody may modify): for a reader that walks a long
 * path one entry at a time rather than holding all of it parsed. */
ps_err session_load_path_entry(const struct ps_session *s, uint32_t idx, json_t **out);

/* The loadout pi would apply (loadout.h): the payload of the latest valid
 * pi.loadout entry in file order, or loadout_none() when none is saved
 * (*saved 0; a reset marker counts as saved).  *out is a new reference;
 * saved may be NULL. */
ps_err session_loadout(struct ps_session *s, json_t **out, int *saved);

#endif
