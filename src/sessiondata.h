/* What the index of one session file holds (session.h builds and keeps
 * it): its entries, the usage read of them, the branches the tree is cut
 * into, and the caches other modules hang on it.  Apart from session.h so
 * that the code reading one line into the index (sessionline.h) and the
 * code keeping the whole index (session.c) share the types without
 * including each other. */
#ifndef PS_SESSIONDATA_H
#define PS_SESSIONDATA_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
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

static inline const char *session_str(const struct ps_session *s, uint32_t off)
{
	return strpool_get(&s->pool, off);
}

/* Grows *arr (of elem-byte elements, *cap of them) to hold need, doubling;
 * PS_ERR_TOOBIG past what a uint32_t index can name. */
static inline ps_err sessiondata_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return PS_OK;
	if (need == PS_NIL)
		return PS_ERR_TOOBIG;
	uint64_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	if (c >= PS_NIL)
		c = PS_NIL - 1;
	void *p = realloc(*arr, (size_t)c * elem);
	if (!p)
		return PS_ERR_NOMEM;
	*arr = p;
	*cap = (uint32_t)c;
	return PS_OK;
}


#endif
