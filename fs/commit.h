/* What a write means: turning an editor's save, a new file, a name, a raw
 * append or a label change into entries appended to the session.  Each
 * function takes the session acquired (locked) through ref, validates
 * everything before writing, and on refusal keeps the text, logs why and
 * returns -errno; 0 when appended (or when nothing changed). */
#ifndef PSFS_COMMIT_H
#define PSFS_COMMIT_H

#include <stddef.h>
#include <stdint.h>
#include "layout.h"
#include "store.h"

/* Room for the id of what a commit appended (id_out below, which may be
 * NULL): set to "" when nothing was appended. */
#define COMMIT_ID_MAX 128

/* An entry file rewritten: a sibling entry with the new content. */
int commit_edit(struct store_ref *ref, uint64_t generation, uint32_t entry, const char *path,
		const char *text, size_t len, char *id_out);

/* The first bytes written into an emptied entry file (at offset 0): when
 * no front matter can start so, the file is the entry's text alone
 * (parse.h), and an entry that has no text or several refuses it now, at
 * the write, which a shell reports (it ignores close()).  0 when the write
 * may go on, else the refusal (logged, the bytes kept) as -errno.  What
 * cannot be checked now (the session was replaced) is left to the commit. */
int commit_check_text(struct store_ref *ref, uint64_t generation, uint32_t entry, const char *path,
		      const char *text, size_t len);

/* A new NAME.md or NAME.json in a tree directory: appended under the tip
 * of that directory's branch. */
int commit_new(struct store_ref *ref, uint64_t generation, uint32_t branch, const char *path,
	       const char *text, size_t len, char *id_out);

/* The first file written into a pending branch: appended under fork_id
 * ("" for a new root), labelled `label`. */
int commit_branch(struct store_ref *ref, const char *fork_id, const char *label, const char *path,
		  const char *text, size_t len, char *id_out);

/* `name` rewritten: a session_info entry (newlines folded, trimmed). */
int commit_name(struct store_ref *ref, const char *path, const char *text, size_t len);

/* `loadout.json` rewritten: a pi.loadout custom entry with the written
 * payload (loadout.h), refused when it is not valid.  Nothing is appended
 * when it equals the loadout in force, nor for an empty overrides array
 * (the reset marker) when no loadout is saved. */
int commit_loadout(struct store_ref *ref, const char *path, const char *text, size_t len);

/* commit_name or commit_loadout, for a layout node of that kind: the
 * session's metadata files. */
int commit_meta(struct store_ref *ref, enum layout_kind kind, const char *path, const char *text, size_t len);

/* Bytes appended to session.jsonl: whole JSON lines, each an entry. */
int commit_raw(struct store_ref *ref, const char *path, const char *text, size_t len);

/* A label entry: target gets `label`, or loses its label when label is
 * NULL.  clear (PS_NIL if none) loses its label in the same write (mv over
 * an existing label). */
int commit_label(struct store_ref *ref, const char *path, uint32_t target, const char *label, uint32_t clear);

/* Whether text is whitespace only: an entry file saved so is refused
 * ("empty file"), and that refusal waits for close() (docs/layout.md,
 * "Refusals"). */
int commit_is_blank(const char *text, size_t len);

/* Whether a new file of this name becomes an entry when written: *.md and
 * *.json, but not editors' hidden side files (.f.swp, #f#).  A new .md
 * message gets the time of its commit as its message.timestamp (a copy of
 * an entry file is new activity, as pi counts it). */
int commit_is_entry_name(const char *name);

#endif
