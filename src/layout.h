/* The names a session shows in the mount (docs/layout.md): entry files,
 * branch directories, labels and the generated files, and resolving a path
 * inside a session directory back to what it names. */
#ifndef PS_LAYOUT_H
#define PS_LAYOUT_H

#include <stdint.h>
#include "layoutname.h"
#include "session.h"

enum layout_kind {
	LAYOUT_TREE_DIR,    /* session directory or a branch directory: branch */
	LAYOUT_ENTRY,       /* NNNN-kind.id.md: entry */
	LAYOUT_CONTEXT,     /* context.json of a tree directory: branch */
	LAYOUT_LEAF,        /* leaf symlink */
	LAYOUT_LABELS_DIR,
	LAYOUT_LABEL,       /* labels/<name> symlink: entry */
	LAYOUT_NAME,
	LAYOUT_HEADER,
	LAYOUT_ENTRIES_DIR,
	LAYOUT_ENTRY_JSON,  /* entries/<id>.json: entry */
	LAYOUT_RAW,         /* session.jsonl */
	LAYOUT_PROBLEMS,
	LAYOUT_ERROR,       /* only in directories of files that are not sessions */
	LAYOUT_TRANSCRIPT,  /* transcript.md of a tree directory: branch */
	LAYOUT_USAGE,       /* usage.json of the session */
	LAYOUT_IMAGES_DIR,  /* NNNN-kind.id.images/ beside an entry with images: entry */
	LAYOUT_IMAGE,       /* N.ext in it: entry, index */
	LAYOUT_PARENT,      /* parent symlink: a fork's source session (header's parentSession) */
	LAYOUT_LOADOUT,     /* loadout.json of the session (loadout.h) */
	LAYOUT_TREE_TXT,    /* tree.txt of the session directory: the entry tree drawn */
};

struct layout_node {
	enum layout_kind kind;
	uint32_t branch;
	uint32_t entry;
	int session_root;   /* the tree directory is the session directory */
	uint32_t index;     /* LAYOUT_IMAGE: which image of the entry */
};

int layout_is_dir(enum layout_kind kind);
/* leaf, labels/NAME and parent. */
int layout_is_symlink(enum layout_kind kind);


/* Resolves rel, a path inside the session directory without a leading '/'
 * ("" is the session directory itself). */
ps_err layout_resolve(const struct ps_session *s, const char *rel, struct layout_node *out);

/* Calls fill(ctx, name, node) for every name in a directory node, stopping
 * early when fill returns non-zero.  Returns PS_ERR_NOMEM or PS_OK. */
typedef int (*layout_fill_fn)(void *ctx, const char *name, const struct layout_node *node);
ps_err layout_list(const struct ps_session *s, const struct layout_node *dir, layout_fill_fn fill, void *ctx);

/* The label a name typed in labels/ or after NNNN~ stands for (new
 * string): the label whose name it is as labels are shown now, or as they
 * were shown before (every byte outside A-Z a-z 0-9 _ - written %XX), so
 * paths once shown keep working.  NULL with *err PS_OK when no label has
 * that name ("%41": the label "A" is named "A"), with *err PS_ERR_NOMEM
 * when memory runs out. */
char *layout_typed_label(const char *name, ps_err *err);
/* The name labels/ lists the entry's live label under (new string), or
 * NULL when it has none or memory runs out. */
char *layout_label_name(const struct ps_session *s, uint32_t idx);
/* Target of a symlink node (leaf, label, parent), relative to the symlink. */
char *layout_symlink_target(const struct ps_session *s, const struct layout_node *node);

#endif
