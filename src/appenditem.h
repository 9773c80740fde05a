/* What is handed to an append (append.h) and checked before it
 * (appendcheck.h): the items, and the error an append reports. */
#ifndef PS_APPENDITEM_H
#define PS_APPENDITEM_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "ps_error.h"

/* Where an appended entry hangs when it does not say (no "parentId"). */
enum append_parent {
	APPEND_PARENT_GIVEN,  /* the entry's own parentId (must be present) */
	APPEND_PARENT_BRANCH, /* the tip of branch `ref`, as it is when the file is re-read */
	APPEND_PARENT_SIBLING,/* the parent of entry `ref` (an edit: a sibling of the edited entry) */
	APPEND_PARENT_UNDER,  /* entry `ref` itself (PS_NIL: a new root) */
	APPEND_PARENT_LEAF,   /* the current leaf, or the previous item of the batch */
};

struct append_item {
	json_t *entry;        /* borrowed; id, parentId and timestamp are filled in */
	enum append_parent parent;
	uint32_t ref;
	const char *raw;      /* if set, these bytes (one line, no newline) are written
			       * instead of the serialised entry; entry must be their
			       * parse and complete (nothing is filled in) */
	size_t raw_len;
};

/* Why an append was refused; text for the user (errno, log, kept file). */
struct append_error {
	ps_err code;
	char why[512];
	char note[512];       /* what was repaired first (a dead writer's unfinished
			       * line taken back), for the log; "" when nothing */
};

#endif
