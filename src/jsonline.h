/* A JSON text decoded the way pi's reader (JSON.parse over Node's UTF-8
 * decoding) accepts it, where jansson alone would refuse: invalid UTF-8
 * decoded with replacement characters, lone surrogate escapes kept (as
 * stand-ins, jstext.h), integers beyond 64 bits as reals.  Pure functions:
 * the text is borrowed, the result is a new reference. */
#ifndef PS_JSONLINE_H
#define PS_JSONLINE_H

#include <stddef.h>
#include <jansson.h>
#include "ps_error.h"

/* Any JSON text (flags: jansson's decoding flags; JSON_DECODE_ANY for a
 * value that is not an object).  NULL with *err PS_ERR_INVALID for a text
 * pi would refuse too, or PS_ERR_NOMEM. */
json_t *jsonline_load(const char *text, size_t len, size_t flags, ps_err *err);

/* A stored line, which must be a JSON object: NULL with *err
 * PS_ERR_INVALID when it is not one (or not JSON), PS_ERR_NOMEM when
 * memory ran out. */
json_t *jsonline_object(const char *line, size_t len, ps_err *err);

/* jsonline_object building only the members keep names (jparse.h); a line
 * the fast path declines is decoded whole, as jsonline_object decodes it,
 * so what keep names reads the same either way. */
struct jparse_keep;
json_t *jsonline_object_keep(const char *line, size_t len, const struct jparse_keep *keep, ps_err *err);

#endif
