/* Reading the usage of one message or entry straight from its text,
 * without building JSON values: the members a usage total needs (usage,
 * provider, model, responseModel) as the index found them (scan.h's
 * msg_usage and top_usage spans, members separated by commas, other
 * members possibly among them).
 *
 * usage.c read these spans through jparse into jansson objects: a dozen
 * allocations per assistant message, most of a store's first usage.csv.
 * This reads the common case in place and declines the rest (an escape in
 * a key or in a name it returns, invalid UTF-8 in such a name, a number jparse
 * would decline, anything that is not the JSON it expects), so that the
 * caller parses the line as before, which then decides.  The values are
 * those jparse_object + usage.c's reading would give: the last member of a
 * name wins, a usage field that is not a number counts 0, a usage that is
 * not an object is none.
 *
 * Ownership: the names returned point into the text (borrowed). */
#ifndef PS_USAGESCAN_H
#define PS_USAGESCAN_H

#include <stddef.h>

/* Token and cost numbers of one usage, or their sum (usage.h). */
struct usage_sum {
	double input, output, cache_read, cache_write, total_tokens, cost;
};

struct usagescan {
	int has_usage;              /* the last "usage" member is an object */
	struct usage_sum sum;         /* its numbers (0 where not a number) */
	/* The last member of each name when it is a string, else NULL;
	 * valid UTF-8 without escapes, so the bytes are the decoded text. */
	const char *provider, *model, *response_model;
	size_t provider_len, model_len, response_model_len;
};

/* Reads the members in text[0..len) (no braces around them).  1 when read,
 * 0 when declined (*out is then unspecified). */
int usagescan_members(const char *text, size_t len, struct usagescan *out);

#endif
