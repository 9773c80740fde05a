/* The names of a session's entries/ (docs/layout.md): <id>.json for the
 * latest entry with an id, <id>~<line>.json for the earlier ones, the id
 * escaped for a name and, past max_id bytes, shortened (escape.h). */
#ifndef PS_ENTRYJSON_H
#define PS_ENTRYJSON_H

#include <stddef.h>
#include <stdint.h>
#include "session.h"

/* Entry idx's name: a new string, NULL when memory runs out. */
char *entryjson_name(const struct ps_session *s, uint32_t idx, size_t max_id);

/* The entry a name of entries/ stands for: PS_OK with *out, PS_ERR_NOENT,
 * or PS_ERR_NOMEM. */
ps_err entryjson_find(const struct ps_session *s, const char *name, size_t max_id, uint32_t *out);

#endif
