/* libFuzzer harness: parse_entry_md() on arbitrary bytes, as a new file
 * (original NULL).
 *
 * Checks parse.h's contract: the result is PS_OK or PS_ERR_INVALID; a
 * refusal leaves *out NULL and gives a one-line reason; an accepted file
 * is an object with a string "type" and without id/parentId/timestamp;
 * parse_is_front_matter() says 0 only for files read as a plain user
 * message.  Then the accepted entry goes round: parse_entry_md(
 * render_entry(E), E) must give E back (see fuzz_common.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "fuzz_common.h"
#include "parse.h"
#include "render.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	json_object_seed(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char why[256];
	json_t *out = (json_t *)1;

	memset(why, 'x', sizeof why);
	ps_err err = parse_entry_md_at(text, size, NULL, NULL, FZ_NOW, &out, why, sizeof why);
	FZ_CHECK(err == PS_OK || err == PS_ERR_INVALID, "parse_entry_md returned %d", (int)err);
	fz_check_refusal(err, out, why, sizeof why);
	int front = parse_is_front_matter(text, size);
	FZ_CHECK(front == 0 || front == 1, "parse_is_front_matter returned %d", front);
	if (err != PS_OK)
		return 0;

	FZ_CHECK(json_is_object(out) && json_is_string(json_object_get(out, "type")),
		 "a new file gave an entry without a string type: %s", fz_dump(out));
	FZ_CHECK(!json_object_get(out, "id") && !json_object_get(out, "parentId") &&
		 !json_object_get(out, "timestamp"), "a new entry kept id/parentId/timestamp: %s", fz_dump(out));
	if (!front) {
		/* a plain file: {"type":"message","message":{"role":"user","content":TEXT,"timestamp":NOW}} */
		json_t *msg = json_object_get(out, "message");
		FZ_CHECK(json_object_size(out) == 2 && json_is_object(msg) && json_object_size(msg) == 3 &&
			 json_is_string(json_object_get(msg, "content")) &&
			 json_integer_value(json_object_get(msg, "timestamp")) == FZ_NOW,
			 "parse_is_front_matter says plain text, but the file gave %s", fz_dump(out));
	}
	fz_roundtrip(out, "parsed entry");
	json_decref(out);
	return 0;
}
