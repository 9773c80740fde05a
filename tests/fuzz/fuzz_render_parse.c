/* libFuzzer harness: render_entry() and parse_entry_md() against each other.
 *
 * Input: JSON text, optionally followed by a NUL byte and Markdown.
 *   - The JSON (before the first NUL; JSON text never holds a raw NUL) is
 *     read as an entry E (jansson, JSON_DECODE_ANY | JSON_ALLOW_NUL; a line
 *     with invalid UTF-8 or huge integers as session_parse_line reads it).
 *     parse_entry_md(render_entry(E, F), E, F) must equal E less id, parentId and
 *     timestamp (json_equal), also without the final newline and with CRLF
 *     line endings (parse.h); anything else aborts.
 *   - The Markdown (the bytes after the NUL, or the whole input when there
 *     is none) is parsed with original NULL and with original E (as the
 *     file RENDER_DEFAULT_NAME, so image links read entry.images/N.ext): it must
 *     not crash, and a refusal must keep parse.h's contract (*out NULL, a
 *     one-line reason); an accepted new file must be an object with a
 *     string "type", and an accepted edit of E must keep E's identity
 *     fields (type, role, ...) as parse.h promises. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "fuzz_common.h"
#include "parse.h"
#include "render.h"
#include "session.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	json_object_seed(1);
	return 0;
}

/* parse.h: an edit cannot change, add or remove these. */
static void check_identity(const json_t *orig, const json_t *got)
{
	static const char *const entry_ids[] = { "type", "role", "toolCallId", "toolName", "customType" };
	static const char *const msg_ids[] = { "role", "toolCallId", "toolName", "customType" };
	if (!json_is_object(orig) || !json_is_object(got))
		return;
	for (size_t i = 0; i < sizeof entry_ids / sizeof entry_ids[0]; i++) {
		json_t *a = json_object_get(orig, entry_ids[i]), *b = json_object_get(got, entry_ids[i]);
		FZ_CHECK((!a && !b) || (a && b && json_equal(a, b)), "an edit changed \"%s\": %s -> %s", entry_ids[i],
			 fz_dump(a), fz_dump(b));
	}
	json_t *om = json_object_get(orig, "message"), *gm = json_object_get(got, "message");
	om = json_is_object(om) ? om : NULL;
	gm = json_is_object(gm) ? gm : NULL;
	for (size_t i = 0; i < sizeof msg_ids / sizeof msg_ids[0]; i++) {
		json_t *a = json_object_get(om, msg_ids[i]), *b = json_object_get(gm, msg_ids[i]);
		FZ_CHECK((!a && !b) || (a && b && json_equal(a, b)), "an edit changed \"message.%s\": %s -> %s",
			 msg_ids[i], fz_dump(a), fz_dump(b));
	}
}

static void parse_raw(const char *md, size_t n, const json_t *orig)
{
	char why[256];
	json_t *out = (json_t *)1;
	memset(why, 'x', sizeof why);
	ps_err err = parse_entry_md_at(md, n, orig, NULL, FZ_NOW, &out, why, sizeof why);
	FZ_CHECK(err == PS_OK || err == PS_ERR_INVALID, "parse_entry_md returned %d", (int)err);
	fz_check_refusal(err, out, why, sizeof why);
	if (err != PS_OK)
		return;
	FZ_CHECK(out != NULL, "parse_entry_md accepted but gave no entry");
	if (!orig) {
		FZ_CHECK(json_is_object(out) && json_is_string(json_object_get(out, "type")),
			 "a new file gave an entry without a string type: %s", fz_dump(out));
		FZ_CHECK(!json_object_get(out, "id") && !json_object_get(out, "parentId") &&
			 !json_object_get(out, "timestamp"), "a new entry kept id/parentId/timestamp: %s",
			 fz_dump(out));
	} else {
		check_identity(orig, out);
	}
	json_decref(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nul = memchr(text, '\0', size);
	size_t jlen = nul ? (size_t)(nul - text) : size;
	const char *md = nul ? nul + 1 : text;
	size_t mdlen = nul ? size - jlen - 1 : size;

	json_error_t jerr;
	json_t *e = json_loadb(text, jlen, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (!e)
		e = session_parse_line(text, jlen);
	if (e)
		fz_roundtrip(e, "entry");

	parse_raw(md, mdlen, NULL);
	if (e)
		parse_raw(md, mdlen, e);
	(void)parse_is_front_matter(md, mdlen);
	json_decref(e);
	return 0;
}
