/* Serialises JSON the way JavaScript's JSON.stringify(value, null, 2) does,
 * so context.json is byte for byte what pi computes: numbers in their
 * shortest round-trip form (0.1, not 0.10000000000000001; 3, not 3.0;
 * 1e+21), object keys in insertion order (but array-index keys such as
 * "2" first, in numeric order, as JavaScript orders an object's keys),
 * only '"', '\\' and control characters escaped.  jansson's own dumper
 * differs in all three. */
#ifndef PS_JSONOUT_H
#define PS_JSONOUT_H

#include <stddef.h>
#include <jansson.h>
#include "ps_error.h"

/* Pretty form with two-space indentation and a final newline.  *buf is a
 * new NUL-terminated buffer; *len excludes the NUL.  value is borrowed. */
ps_err jsonout_pretty(const json_t *value, char **buf, size_t *len);

/* Compact form (JSON.stringify(value)), no newline. */
ps_err jsonout_compact(const json_t *value, char **buf, size_t *len);

/* Writes the JavaScript string form of a double into out (>= 32 bytes). */
void jsonout_number(double d, char *out);

/* Writes d (finite) as "%.*e" with the fewest digits that read back as d,
 * the digits JavaScript writes, into out (>= 40 bytes). */
void jsonout_shortest_e(double d, char *out);

#endif
