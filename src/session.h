/* The index of one session file: where every entry's line is, how entries
 * form the tree, and how the tree is cut into directories ("branches").
 * Built by scanning lines (scan.h), grown incrementally as the file is
 * appended to, and rebuilt only when the file shrinks or is replaced
 * (session.c); entries are read back through it by sessionload.c.
 * Not thread-safe: callers hold their own lock around a session. */
#ifndef PS_SESSION_H
#define PS_SESSION_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "ps_error.h"
#include "strpool.h"
#include "usagescan.h" /* struct usage_sum */

/* The index keeps each entry's kind escaped for a name (escape.h) and
 * shortened to this many bytes: the kind's part of an entry file's name,
 * within the budget layout.h keeps under the kernel's 255 bytes. */
#define SESSION_MAX_KIND 48

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
	uint32_t kind;         /* pool offset of the escaped kind, e.g. "toolResult-bash",
				* at most SESSION_MAX_KIND bytes */
	uint32_t prev_same_id; /* the previous entry with the same id, or PS_NIL */
	uint32_t label;        /* pool offset of the live label, or PS_NIL */
	uint32_t md_size;      /* rendered size + 1; 0 while unknown */
	int64_t time_ms;       /* the entry's timestamp, 0 if it has none: its file's mtime */
	uint32_t flags;        /* PS_ENTRY_* */
	/* What a usage total reads of the entry, read from its line while
	 * indexing (by its PS_ENTRY_USAGE class): s->usages[usage], or PS_NIL
	 * when its last "usage" member is no object (or it has none). */
	uint32_t usage;
};

/* An entry's usage as the index read it (usagescan.h): the numbers, and
 * the names they count under (pool offsets, PS_NIL for none): an
 * assistant message's provider and its responseModel when that is a
 * string, else its model; a "usage" entry's provider and model; nothing
 * for the other classes. */
struct ps_usage {
	struct usage_sum sum;
	uint32_t provider, model;
};

/* The line mentions "image": it may hold image blocks (confirmed by parsing
 * when its directory is listed; most entries never need it). */
#define PS_ENTRY_MAY_HAVE_IMAGES 1u
/* The images were counted; the count is in the bits above PS_ENTRY_IMAGE_SHIFT. */
#define PS_ENTRY_IMAGES_COUNTED 2u
#define PS_ENTRY_IMAGE_SHIFT 8
/* What the index learned of the entry for usage.c (bits 2 to 4 of flags),
 * so that a usage total reads the entry's ps_usage instead of parsing the
 * line; set only where the scanner read the line plainly (no escaped key,
 * nothing a reader may refuse) and usagescan read its usage members. */
#define PS_ENTRY_USAGE_SHIFT 2
#define PS_ENTRY_USAGE_MASK (7u << PS_ENTRY_USAGE_SHIFT)
enum ps_entry_usage {
	PS_USAGE_UNKNOWN = 0,  /* parse the line */
	PS_USAGE_MESSAGE,      /* a message of another role (or none): counted, no usage */
	PS_USAGE_ASSISTANT,    /* an assistant message: its usage, provider and model */
	PS_USAGE_TOOL_RESULT,  /* a tool result: its usage, under no model */
	PS_USAGE_SUMMARY,      /* compaction, branch_summary: the entry's usage, under no model */
	PS_USAGE_ENTRY,        /* a "usage" entry: its usage, provider and model */
	PS_USAGE_NONE,         /* no message and nothing a total reads */
};

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
	int skim;              /* session_open_skim's partial index */
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
	uint32_t parent_session; /* pool offset of the header's parentSession (a fork's source), PS_NIL if none */
	const char *store_root; /* borrowed: the store the file lies in (store.c sets it), or NULL */

	struct ps_entry *entries;
	uint32_t n_entries, cap_entries;
	struct ps_usage *usages; /* the entries' (ps_entry.usage) */
	uint32_t n_usages, cap_usages;
	struct ps_branch *branches;
	uint32_t n_branches, cap_branches;
	uint32_t *labeled;     /* entries that ever got a label, in that order */
	uint32_t n_labeled, cap_labeled;
	struct ps_problem *problems;
	uint32_t n_problems, cap_problems;
	uint32_t name;         /* pool offset of the display name, PS_NIL if none */
	uint32_t loadout;      /* the latest valid loadout entry in file order (loadout.h), PS_NIL if none */

	/* Caches other modules derive from this index (content.c's texts and
	 * sizes, usage.c's running totals).  Each belongs to its module; the
	 * session only holds the chain and releases it (ps_attachment) when the
	 * index is rebuilt, since what they were derived from is gone, or when
	 * the session is freed. */
	struct ps_attachment *attachments;

	struct strpool pool;
	struct strmap ids;     /* id -> latest entry index */
	struct strmap kinds;   /* escaped kind -> its pool offset (interning) */

	struct session_observer *observer; /* session_open_observed's, during that open only */
};

/* A module's cache of derived data for one session.  The module embeds
 * this as the first member of its own struct, which it owns whole: the
 * session never looks inside, it only calls type->release(a) (which frees
 * a) when the index is rebuilt or the session freed.  `type` is the address
 * of the module's own static struct ps_attachment_type, which tells the
 * modules' caches apart. */
struct ps_attachment;
struct ps_attachment_type {
	void (*release)(struct ps_attachment *a);
};
struct ps_attachment {
	const struct ps_attachment_type *type;
	struct ps_attachment *next;
};

/* The cache of that type hung on s, or NULL.  Borrowed: valid until the
 * index is rebuilt (session_refresh) or s freed. */
struct ps_attachment *session_attachment(const struct ps_session *s, const struct ps_attachment_type *type);

/* Hangs a (whose type s has no cache of yet) on s, which from then on
 * releases it as described above. */
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

static inline const char *session_str(const struct ps_session *s, uint32_t off)
{
	return strpool_get(&s->pool, off);
}

/* The loadout pi would apply (loadout.h): the payload of the latest valid
 * pi.loadout entry in file order, or loadout_none() when none is saved
 * (*saved 0; a reset marker counts as saved).  *out is a new reference;
 * saved may be NULL. */
ps_err session_loadout(struct ps_session *s, json_t **out, int *saved);

#endif
