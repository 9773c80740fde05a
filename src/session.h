/* The index of one session file: where every entry's line is, how entries
 * form the tree, and how the tree is cut into directories ("branches").
 * Built by scanning lines (scan.h), grown incrementally as the file is
 * appended to, and rebuilt only when the file shrinks or is replaced.
 * Not thread-safe: callers hold their own lock around a session. */
#ifndef PS_SESSION_H
#define PS_SESSION_H

/* Longest escaped parts of a name before they are shortened (escape.h):
 * an entry file name stays under the kernel's 255 bytes. */
#define LAYOUT_MAX_KIND 48
#define LAYOUT_MAX_ID 120
#define LAYOUT_MAX_LABEL 160

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "ps_error.h"
#include "strpool.h"

struct ps_entry {
	uint64_t off;          /* byte offset of the line in the file */
	uint32_t len;          /* line length, without the newline */
	uint32_t line;         /* 1-based physical line number */
	uint32_t ordinal;      /* index among parsed lines (header = 0), for v1 migration */
	uint32_t parent;       /* entry index, or PS_NIL for roots and orphans */
	uint32_t first_child;  /* first child in file order: continues the branch */
	uint32_t last_child;
	uint32_t next_sibling;
	uint32_t depth;        /* 1 for roots */
	uint32_t branch;       /* the branch (directory) showing this entry */
	uint32_t id;           /* pool offset of the id (decoded) */
	uint32_t kind;         /* pool offset of the escaped kind, e.g. "toolResult-bash" */
	uint32_t prev_same_id; /* the previous entry with the same id, or PS_NIL */
	uint32_t label;        /* pool offset of the live label, or PS_NIL */
	uint32_t md_size;      /* rendered size + 1; 0 while unknown */
	int64_t time_ms;       /* the entry's timestamp, 0 if it has none: its file's mtime */
	uint32_t flags;        /* PS_ENTRY_* */
};

/* The line mentions "image": it may hold image blocks (confirmed by parsing
 * when its directory is listed; most entries never need it). */
#define PS_ENTRY_MAY_HAVE_IMAGES 1u
/* The images were counted; the count is in the bits above PS_ENTRY_IMAGE_SHIFT. */
#define PS_ENTRY_IMAGES_COUNTED 2u
#define PS_ENTRY_IMAGE_SHIFT 8

/* A directory of the tree: a chain from `first` following first children
 * to `tip`.  Branch 0 is the session directory (the first root's chain);
 * the others hang off an entry of their parent branch, or off the session
 * directory for extra roots and orphans (fork_entry == PS_NIL). */
struct ps_branch {
	uint32_t first, tip;
	uint32_t parent;       /* parent branch, PS_NIL for branch 0 */
	uint32_t first_sub, last_sub, next_sub; /* sub-branches in creation order */
};

struct ps_problem {
	uint32_t line;
	const char *why;       /* static text */
};

struct usage_acc;

struct ps_session {
	uint64_t serial;       /* unique for the process's lifetime (entrycache.h) */
	char *path;
	int fd;
	dev_t dev;
	ino_t ino;
	uint64_t scanned;      /* bytes consumed: the end of the last complete line */
	uint64_t size;         /* file size at the last refresh */
	int64_t mtime_ns;
	uint32_t lines;        /* physical lines consumed */
	uint32_t ordinals;     /* parsed lines consumed (header included) */
	uint64_t generation;   /* bumps when the index is rebuilt: paths may change */
	/* Bytes of the file as indexed, to tell an append from a rewrite in
	 * place that left the file longer (pi migrating a version-1 file). */
	unsigned char head[64], tail[64];
	uint32_t head_len, tail_len;
	uint64_t changes;      /* bumps whenever anything was added */

	int have_header;
	const char *not_session; /* static reason while there is no header */
	int version;
	uint64_t header_off;
	uint32_t header_len;
	uint32_t session_id;   /* pool offset */

	struct ps_entry *entries;
	uint32_t n_entries, cap_entries;
	struct ps_branch *branches;
	uint32_t n_branches, cap_branches;
	uint32_t *labeled;     /* entries that ever got a label, in that order */
	uint32_t n_labeled, cap_labeled;
	struct ps_problem *problems;
	uint32_t n_problems, cap_problems;
	uint32_t name;         /* pool offset of the display name, PS_NIL if none */

	/* Generated context.json texts, by tip entry: the context of an entry
	 * never changes (its path to the root is fixed), so these only go when
	 * the index is rebuilt.  Owned by content.c, within a budget over all
	 * sessions (session_contexts_held). */
	struct ps_context_cache {
		uint32_t tip;
		char *text;
		size_t len;
		uint64_t used;
	} contexts[8];
	uint64_t context_clock;

	/* The last text content_size generated for a node, kept for the open that
	 * usually follows a stat (the kernel stats before it opens).  Owned by
	 * content.c; valid while `changes` and `generation` are as recorded. */
	struct ps_view_stash {
		int kind;
		uint32_t entry, branch, index;
		int session_root;
		uint64_t changes, generation;
		char *text;
		size_t len;
	} stash;

	/* Sizes of generated files (context.json, transcript.md, usage.json)
	 * by node, so a stat does not build the text again: `ls -l` asks
	 * each time.  A context's size holds while its tip is the same; the
	 * others while `changes` is.  Owned by content.c. */
	struct ps_view_size {
		uint64_t changes;
		uint64_t size;     /* size + 1; 0 while unknown */
		uint32_t tip;
	} *sizes;
	uint32_t n_sizes;

	/* usage.c's running totals over entries [0, usage_upto): usage only
	 * adds up, so an append costs only the new entries. */
	struct usage_acc *usage;
	uint32_t usage_upto;

	struct strpool pool;
	struct strmap ids;     /* id -> latest entry index */
	struct strmap kinds;   /* escaped kind -> its pool offset (interning) */
};

/* The bytes of context.json texts held in the contexts[] of every session,
 * which content.c keeps within a budget (content_set_context_budget); a reset or
 * freed session gives its back.  Thread-safe. */
size_t session_contexts_held(void);
void session_contexts_account(long long delta);

/* A digest of the live labels (which entries carry one, and which): it
 * changes when a label is set, moved or removed, renaming forks. */
uint64_t session_labels_digest(const struct ps_session *s);

/* Opens and indexes the session file at path (copied).  A file that is not
 * a session still opens (s->not_session says why).  *out is new: release
 * with session_free. */
ps_err session_open(const char *path, struct ps_session **out);
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

/* Loads the entries from the root to idx (root first) into a new array of
 * new references to shared trees (never modify them); free with
 * session_path_free. */
ps_err session_load_path(const struct ps_session *s, uint32_t idx, json_t ***path, size_t *n);
void session_path_free(json_t **path, size_t n);

/* The context JSON text (pretty, final newline) for the path ending at idx,
 * or for an empty session when idx is PS_NIL.  *buf is new. */
ps_err session_context_text(const struct ps_session *s, uint32_t idx, char **buf, size_t *len);

static inline const char *session_str(const struct ps_session *s, uint32_t off)
{
	return strpool_get(&s->pool, off);
}

#endif
