/* Session loadouts (the spec's "pi.loadout" custom entries): which of the
 * user's skills, prompts and extensions a session turns on or off.  They
 * are session-wide metadata: the one that counts is the latest valid entry
 * in physical file order, not along the current branch.  An entry whose
 * overrides array is empty is a reset marker: no loadout.
 *
 * A valid payload (data) is an object with "version": 1 and "overrides",
 * an array of objects each with "reference" (an object whose "type",
 * "origin", "scope" and "relativePath" are non-empty strings) and
 * "enabled" (true or false).  Other members are allowed and kept, as pi
 * keeps what it does not know. */
#ifndef PS_LOADOUT_H
#define PS_LOADOUT_H

#include <stddef.h>
#include <jansson.h>

#define LOADOUT_CUSTOM_TYPE "pi.loadout"

/* 1 when data (borrowed) is a valid payload; else 0, and why says what is
 * wrong, for the user ("overrides[2].enabled is not true or false"). */
int loadout_valid(const json_t *data, char *why, size_t why_len);

/* 1 when entry (borrowed, a parsed line) is a valid loadout entry. */
int loadout_entry_valid(const json_t *entry);

/* Whether a custom entry's line may be a loadout entry, before parsing
 * it: the indexer parses only those (they name "pi.loadout", or hold an
 * escape that may spell it). */
int loadout_line_may_be(const char *line, size_t len);

/* The payload shown when no loadout is saved (or the latest is a reset
 * marker): version 1, no overrides.  A new reference. */
json_t *loadout_none(void);

/* 1 when data (borrowed, valid) has no overrides: a reset marker. */
int loadout_is_reset(const json_t *data);

#endif
