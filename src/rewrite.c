/* The body-only rewrite of an entry file (rewrite.h): finds the entry's
 * texts the way render.c lays them out, and replaces the one there is. */
#include <stdio.h>
#include <string.h>
#include "rewrite.h"

/* The verbatim fields render.c writes after the slot (entry-format.md). */
static const char *const rewrite_fields[] = { "summary", "command", "output" };
#define REWRITE_NFIELDS (sizeof rewrite_fields / sizeof rewrite_fields[0])

/* Where an entry's texts are, and how many of each kind. */
struct rewrite_texts {
	json_t *scope;          /* the default scope (in the copy) */
	json_t *slot_obj;       /* the object holding a string slot, with its key */
	const char *slot_key;
	json_t *block;          /* the last text block found */
	json_t *field_obj;      /* the last verbatim field found, and its key */
	const char *field_key;
	json_t *sections;       /* the sections object and the key of its last string */
	const char *section_key;
	size_t n_slot, n_blocks, n_fields[REWRITE_NFIELDS], n_sections;
};

static int rewrite_str_is(const json_t *v, const char *lit)
{
	return json_is_string(v) && json_string_length(v) == strlen(lit) && !strcmp(json_string_value(v), lit);
}

/* A text block: {"type":"text","text":STRING} with any other keys. */
static int rewrite_is_text_block(const json_t *b)
{
	return json_is_object(b) && rewrite_str_is(json_object_get(b, "type"), "text") &&
	       json_is_string(json_object_get(b, "text"));
}

/* The default scope of entry: its message when it is a message entry
 * whose message is a non-empty object (render.c's two scopes). */
static json_t *rewrite_scope(json_t *entry)
{
	json_t *msg = json_object_get(entry, "message");
	if (rewrite_str_is(json_object_get(entry, "type"), "message") && json_is_object(msg) && json_object_size(msg) > 0)
		return msg;
	return entry;
}

static void rewrite_find(json_t *entry, struct rewrite_texts *t)
{
	json_t *d = rewrite_scope(entry), *slot, *repl, *v;
	json_t *slot_obj = d;
	const char *slot_key = "content", *key;
	size_t i;

	memset(t, 0, sizeof *t);
	t->scope = d;
	slot = json_object_get(d, "content");
	if (!json_is_string(slot) && !json_is_array(slot)) {
		/* a context_edit's replacement: {"content": ...} and nothing else */
		repl = json_object_get(d, "replacement");
		slot = NULL;
		if (json_is_object(repl) && json_object_size(repl) == 1) {
			slot = json_object_get(repl, "content");
			slot_obj = repl;
		}
	}
	if (json_is_string(slot)) {
		t->n_slot = 1;
		t->slot_obj = slot_obj;
		t->slot_key = slot_key;
	} else if (json_is_array(slot)) {
		json_array_foreach(slot, i, v) {
			if (rewrite_is_text_block(v)) {
				t->n_blocks++;
				t->block = v;
			}
		}
	}
	for (i = 0; i < REWRITE_NFIELDS; i++) {
		if (json_is_string(json_object_get(d, rewrite_fields[i]))) {
			t->n_fields[i]++;
			t->field_obj = d;
			t->field_key = rewrite_fields[i];
		}
	}
	json_t *sections = json_object_get(d, "sections");
	if (json_is_object(sections)) {
		json_object_foreach(sections, key, v) {
			if (json_is_string(v)) {
				t->n_sections++;
				t->sections = sections;
				t->section_key = key;
			}
		}
	}
}

/* Appends ", " (or " and " before the last) and a count of what to out. */
static void rewrite_list(char *out, size_t outlen, size_t *used, size_t n, const char *one, const char *many)
{
	if (!n || *used >= outlen)
		return;
	int k = snprintf(out + *used, outlen - *used, "%s", *used ? ", " : "");
	if (k > 0)
		*used += (size_t)k;
	if (*used >= outlen)
		return;
	k = n == 1 ? snprintf(out + *used, outlen - *used, "%s", one)
		   : snprintf(out + *used, outlen - *used, "%zu %s", n, many);
	if (k > 0)
		*used += (size_t)k;
}

/* What the entry is, for a reason: "this user message", "this
 * model_change entry".  The role or type is the session's data: shown
 * up to 40 bytes, printable ASCII only. */
static void rewrite_what(const json_t *entry, char *out, size_t outlen)
{
	const json_t *msg = json_object_get(entry, "message");
	const json_t *role = json_is_object(msg) ? json_object_get(msg, "role") : NULL;
	const json_t *type = json_object_get(entry, "type");
	const json_t *name = json_is_string(role) ? role : type;
	char shown[48];
	size_t n = 0;

	if (json_is_string(name)) {
		const char *s = json_string_value(name);
		for (size_t i = 0; i < json_string_length(name) && n < 40; i++)
			shown[n++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	}
	shown[n] = '\0';
	if (!n)
		snprintf(out, outlen, "this entry");
	else
		snprintf(out, outlen, "this %s %s", shown, json_is_string(role) ? "message" : "entry");
}

/* How to change an entry that has no text, for the reason. */
static const char *rewrite_hint(const json_t *entry)
{
	const json_t *type = json_object_get(entry, "type");
	if (rewrite_str_is(type, "label"))
		return "labels are set with ln -s ENTRY labels/NAME";
	if (rewrite_str_is(type, "session_info"))
		return "the session's name is set by writing its name file";
	return "to change its fields, write the whole file back, front matter first (cat it, edit, write)";
}

/* PS_OK when entry (found in t) has one text, else the refusal. */
static ps_err rewrite_one_text(const json_t *original, const struct rewrite_texts *t, char *why, size_t why_len)
{
	char what[96], list[160];
	size_t used = 0, n;

	n = t->n_slot + t->n_blocks + t->n_sections;
	for (size_t i = 0; i < REWRITE_NFIELDS; i++)
		n += t->n_fields[i];
	if (n != 1) {
		rewrite_what(original, what, sizeof what);
		if (why && why_len && n == 0) {
			snprintf(why, why_len, "the file has no front matter, so it would replace the entry's text, "
				 "but %s has no text; %s", what, rewrite_hint(original));
		} else if (why && why_len) {
			list[0] = '\0';
			rewrite_list(list, sizeof list, &used, t->n_slot, "a content string", "content strings");
			rewrite_list(list, sizeof list, &used, t->n_blocks, "a text block", "text blocks");
			rewrite_list(list, sizeof list, &used, t->n_fields[0], "a summary", "summaries");
			rewrite_list(list, sizeof list, &used, t->n_fields[1], "a command", "commands");
			rewrite_list(list, sizeof list, &used, t->n_fields[2], "an output", "outputs");
			rewrite_list(list, sizeof list, &used, t->n_sections, "a section", "sections");
			snprintf(why, why_len, "the file has no front matter, so it would replace the entry's text, "
				 "but %s has %zu texts (%s): write the whole file back, front matter and markers "
				 "included, to say which one changes", what, n, list);
		}
		return PS_ERR_INVALID;
	}
	return PS_OK;
}

/* The refusal of an entry that is not an object. */
static ps_err rewrite_not_object(char *why, size_t why_len)
{
	if (why && why_len)
		snprintf(why, why_len, "the file has no front matter, so it would replace the entry's text, "
			 "but this entry is not a JSON object: write the whole file back, front matter first");
	return PS_ERR_INVALID;
}

ps_err rewrite_check(const json_t *original, char *why, size_t why_len)
{
	struct rewrite_texts t;

	if (why && why_len)
		why[0] = '\0';
	if (!json_is_object(original))
		return rewrite_not_object(why, why_len);
	/* rewrite_find() only reads: the borrowed entry is not changed. */
	rewrite_find((json_t *)original, &t);
	return rewrite_one_text(original, &t, why, why_len);
}

ps_err rewrite_entry_text(const json_t *original, const char *text, size_t len, json_t **out, char *why,
			  size_t why_len)
{
	struct rewrite_texts t;
	json_t *copy = NULL, *v = NULL;
	ps_err err = PS_OK;

	if (why && why_len)
		why[0] = '\0';
	*out = NULL;
	if (!json_is_object(original))
		return rewrite_not_object(why, why_len);
	if (!(copy = json_deep_copy(original)))
		goto nomem;
	rewrite_find(copy, &t);
	if ((err = rewrite_one_text(original, &t, why, why_len)))
		goto out;
	if (!(v = json_stringn(text, len)))
		goto nomem; /* the caller checked the UTF-8 */
	if (t.n_slot)
		err = json_object_set(t.slot_obj, t.slot_key, v) ? PS_ERR_NOMEM : PS_OK;
	else if (t.n_blocks)
		err = json_object_set(t.block, "text", v) ? PS_ERR_NOMEM : PS_OK;
	else if (t.n_sections)
		err = json_object_set(t.sections, t.section_key, v) ? PS_ERR_NOMEM : PS_OK;
	else
		err = json_object_set(t.field_obj, t.field_key, v) ? PS_ERR_NOMEM : PS_OK;
	if (err)
		goto nomem;
	/* the appender's to fill, as for any edit */
	json_object_del(copy, "id");
	json_object_del(copy, "parentId");
	json_object_del(copy, "timestamp");
	*out = copy;
	copy = NULL;
	goto out;
nomem:
	if (why && why_len)
		snprintf(why, why_len, "out of memory");
	err = PS_ERR_NOMEM;
out:
	json_decref(v);
	json_decref(copy);
	return err;
}
