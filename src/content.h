/* The bytes of every file a session directory shows, and their sizes.
 * Shared by the FUSE daemon and the pisession tool so both show the same. */
/* Ownership: the texts and sizes this module keeps for reuse are its own,
 * hung on each session (session_attach) and released with its index.
 * Returned buffers are new and the caller's; sessions and nodes are
 * borrowed, and the caller holds the session's lock. */
#ifndef PS_CONTENT_H
#define PS_CONTENT_H

#include <stddef.h>
#include <stdint.h>
#include "layout.h"

/* Size of a file node without building it when a cache knows (entry files
 * remember their rendered size, contexts are cached by tip). */
ps_err content_size(struct ps_session *s, const struct layout_node *node, uint64_t *size);

/* Like content_size, but only when it is known without building anything
 * (returns 0 then, 1 with *size set otherwise). */
int content_size_known(const struct ps_session *s, const struct layout_node *node, uint64_t *size);

/* The whole content of a file node (not LAYOUT_RAW, which is the session
 * file itself and read in place).  *buf is new; *len its length. */
ps_err content_build(struct ps_session *s, const struct layout_node *node, char **buf, size_t *len);

/* The context.json texts kept for reuse (per session, by tip) stay within
 * a byte budget over all sessions; past it, texts are built for each open
 * and not kept.  Default CONTENT_CONTEXT_BUDGET; set it before any thread
 * runs. */
#define CONTENT_CONTEXT_BUDGET ((size_t)32 << 20)
void content_set_context_budget(size_t bytes);
/* The bytes of context.json texts kept now, over all sessions (a reset or
 * freed session gives its back).  Thread-safe. */
size_t content_contexts_held(void);

/* Whether a node's content can never change: entry files and stored lines.
 * The front end lets the kernel cache those for good. */
int content_immutable(const struct layout_node *node);

/* Entry files sized off the session's lock, for a thread that sizes ahead
 * of a stat-heavy reader (fs/sizer.c): their lines and names are taken
 * under the lock, rendered without it, and the sizes kept under it again.
 * Rendering is most of what a first `ls -l` costs; the lock is held for
 * the pread only. */
#define CONTENT_BATCH_MAX 32
struct content_batch {
	uint64_t generation;
	uint32_t n;
	uint32_t entry[CONTENT_BATCH_MAX];
	char *line[CONTENT_BATCH_MAX];   /* owned */
	size_t line_len[CONTENT_BATCH_MAX];
	char *name[CONTENT_BATCH_MAX];   /* owned */
	size_t size[CONTENT_BATCH_MAX];  /* rendered size; SIZE_MAX when not known */
};

/* Takes the entries of [*next, end) whose size is not known yet, up to
 * CONTENT_BATCH_MAX of them or about max_bytes of lines, and moves *next past
 * the entries it looked at.  b is overwritten (clear it first if reused). */
ps_err content_batch_take(const struct ps_session *s, uint32_t *next, uint32_t end, size_t max_bytes,
		       struct content_batch *b);
/* Renders every entry of b to size it.  Touches no session: call it
 * without the lock.  A line that cannot be rendered keeps SIZE_MAX. */
void content_batch_render(struct content_batch *b);
/* Keeps b's sizes in s, unless the index was rebuilt since b was taken. */
void content_batch_keep(struct ps_session *s, const struct content_batch *b);
void content_batch_clear(struct content_batch *b);

#endif
