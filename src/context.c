/* Model context of a session path: pi 1.6.0's buildSessionContext()
 * (dist/core/session-manager.js, with the message constructors of
 * dist/core/messages.js), mirrored detail for detail so the JSON we serve is
 * the JSON pi would compute.  JavaScript semantics are spelled out where C
 * would naturally differ: a missing key is JS undefined (and vanishes from
 * JSON.stringify output), a NaN timestamp serialises as null, and keys keep
 * the order a JS object literal or spread would give them.
 *
 * The one deliberate difference from pi is the spec's compaction.retainedTail:
 * such a compaction is a self-contained checkpoint. */
#include "context.h"
#include "jsonout.h"
#include "jstext.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The Makefile links no libm, and these few are easy without it. */
static int context_within(double v, double limit)
{
	return v >= -limit && v <= limit;
}

/* JS `v === s` for a string literal s; NULL (undefined) never matches. */
static int context_str_eq(const json_t *v, const char *s)
{
	size_t len = strlen(s);

	return json_is_string(v) && json_string_length(v) == len &&
	       memcmp(json_string_value(v), s, len) == 0;
}

/* JS `a === b` (and Map's SameValueZero, equal for JSON values) where NULL
 * stands for undefined.  Numbers compare as the doubles JS holds, so 1 and
 * 1.0 are equal; objects and arrays only by identity. */
static int context_js_same(const json_t *a, const json_t *b)
{
	if (!a || !b)
		return a == b;
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_typeof(a) != json_typeof(b))
		return 0;
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		       memcmp(json_string_value(a), json_string_value(b),
			      json_string_length(a)) == 0;
	case JSON_OBJECT:
	case JSON_ARRAY:
		return a == b;
	default:
		/* null, true, false: the type is the value */
		return 1;
	}
}

/* JS `v == null`: missing or null. */
static int context_nullish(const json_t *v)
{
	return !v || json_is_null(v);
}

static int context_entry_is(const json_t *entry, const char *type)
{
	return context_str_eq(json_object_get(entry, "type"), type);
}

/* Sets key to a borrowed value, or leaves it out when the value is JS
 * undefined (NULL), which is what JSON.stringify does with such a key. */
static int context_set_opt(json_t *obj, const char *key, json_t *value)
{
	if (!value)
		return 0;
	return json_object_set(obj, key, value);
}

/* new Date(v).getTime() for the JSON value v (NULL: undefined), as a new
 * JSON integer, or JSON null where JS has NaN (JSON.stringify's rendering).
 * Non-strings follow Date's ToPrimitive/ToNumber path: null and false are 0,
 * true is 1, objects are NaN.  An array becomes its join(","); of those only
 * a lone string element (possibly nested) is parsed, the rest are NaN. */
static json_t *context_timestamp(const json_t *v)
{
	double ms = 0;
	int ok = 0;

	if (json_is_array(v)) {
		while (json_is_array(v) && json_array_size(v) == 1)
			v = json_array_get(v, 0);
		if (json_is_string(v))
			ms = jstext_iso_to_ms(json_string_value(v), &ok);
	} else if (json_is_string(v)) {
		ms = jstext_iso_to_ms(json_string_value(v), &ok);
	} else if (json_is_number(v)) {
		ms = json_number_value(v);
		/* TimeClip: range first, then truncation towards zero */
		ok = context_within(ms, JSTEXT_MAX_TIME_MS);
	} else if (json_is_null(v) || json_is_false(v)) {
		ok = 1;
	} else if (json_is_true(v)) {
		ms = 1;
		ok = 1;
	}
	if (!ok)
		return json_null();
	return json_integer((json_int_t)ms);
}

/* ---- Messages ---------------------------------------------------------- */

/* {...message} followed by message.content = content: a new object with
 * message's keys in order; content replaces the old value in place or is
 * appended, and when content is NULL (undefined) the key is dropped since
 * JSON.stringify would drop it.  message and content are borrowed. */
static json_t *context_with_content(json_t *message, json_t *content)
{
	json_t *copy = json_object();
	const char *key;
	size_t key_len;
	json_t *value;

	if (!copy)
		return NULL;
	json_object_keylen_foreach(message, key, key_len, value) {
		if (json_object_setn_nocheck(copy, key, key_len, value) < 0)
			goto fail;
	}
	if (content) {
		if (json_object_set(copy, "content", content) < 0)
			goto fail;
	} else {
		json_object_del(copy, "content");
	}
	return copy;
fail:
	json_decref(copy);
	return NULL;
}

/* Appends a new message object built from (key, borrowed value) pairs in
 * order; NULL values are undefined and left out, except that "timestamp" is
 * computed from the entry timestamp it is given. */
static int context_append_generated(json_t *out, const char *role,
				    const char *const *keys, json_t *const *values,
				    size_t nkeys, const json_t *entry_ts)
{
	json_t *msg = json_object();
	json_t *ts = NULL;
	int rc = -1;

	if (!msg)
		goto out;
	if (json_object_set_new(msg, "role", json_string(role)) < 0)
		goto out;
	for (size_t i = 0; i < nkeys; i++)
		if (context_set_opt(msg, keys[i], values[i]) < 0)
			goto out;
	ts = context_timestamp(entry_ts);
	if (!ts || json_object_set_new(msg, "timestamp", ts) < 0)
		goto out;
	rc = json_array_append(out, msg);
out:
	json_decref(msg);
	return rc;
}

/* sessionEntryToContextMessages(): appends the messages one entry stands
 * for to out; entries that are not context (labels, custom, ...) add none.
 * With retainedTail the compaction also carries the retained messages. */
static int context_entry_messages(json_t *out, json_t *entry)
{
	if (context_entry_is(entry, "message")) {
		json_t *message = json_object_get(entry, "message");
		json_t *role = json_object_get(message, "role");
		json_t *content = json_object_get(message, "content");
		json_t *fixed = NULL;

		/* pi throws on a message entry without a message; having no
		 * way to fail the whole context, we drop the entry. */
		if (context_nullish(message))
			return 0;
		if (context_nullish(content) && context_str_eq(role, "system")) {
			json_t *empty = json_string("");

			fixed = empty ? context_with_content(message, empty) : NULL;
			json_decref(empty);
			if (!fixed)
				return -1;
		} else if (context_nullish(content) &&
			   (context_str_eq(role, "user") ||
			    context_str_eq(role, "assistant") ||
			    context_str_eq(role, "toolResult"))) {
			json_t *empty = json_array();

			fixed = empty ? context_with_content(message, empty) : NULL;
			json_decref(empty);
			if (!fixed)
				return -1;
		}
		if (fixed)
			return json_array_append_new(out, fixed);
		return json_array_append(out, message);
	}
	if (context_entry_is(entry, "custom_message")) {
		static const char *const keys[] = {
			"customType", "content", "display", "details",
		};
		json_t *content = json_object_get(entry, "content");
		json_t *empty = NULL;
		json_t *values[4];
		int rc;

		if (context_nullish(content)) {
			empty = json_array();
			if (!empty)
				return -1;
			content = empty;
		}
		values[0] = json_object_get(entry, "customType");
		values[1] = content;
		values[2] = json_object_get(entry, "display");
		values[3] = json_object_get(entry, "details");
		rc = context_append_generated(out, "custom", keys, values, 4,
					      json_object_get(entry, "timestamp"));
		json_decref(empty);
		return rc;
	}
	if (context_entry_is(entry, "branch_summary")) {
		static const char *const keys[] = { "summary", "fromId" };
		json_t *values[2];

		values[0] = json_object_get(entry, "summary");
		if (!jstext_truthy(values[0]))
			return 0;
		values[1] = json_object_get(entry, "fromId");
		return context_append_generated(out, "branchSummary", keys,
						values, 2,
						json_object_get(entry, "timestamp"));
	}
	if (context_entry_is(entry, "compaction")) {
		static const char *const keys[] = { "summary", "tokensBefore" };
		json_t *system = json_object_get(entry, "systemMessage");
		json_t *tail = json_object_get(entry, "retainedTail");
		json_t *values[2];

		if (jstext_truthy(system) && json_array_append(out, system) < 0)
			return -1;
		values[0] = json_object_get(entry, "summary");
		values[1] = json_object_get(entry, "tokensBefore");
		if (context_append_generated(out, "compactionSummary", keys,
					     values, 2,
					     json_object_get(entry, "timestamp")) < 0)
			return -1;
		/* the spec's checkpoint: retained messages are stored whole */
		if (json_is_array(tail) && json_array_extend(out, tail) < 0)
			return -1;
		return 0;
	}
	return 0;
}

/* projectContextEntry(): the entry's messages with its latest context edit
 * (borrowed, or NULL for none) applied, appended to out. */
static int context_project_entry(json_t *out, json_t *entry, json_t *edit)
{
	json_t *msgs = json_array();
	json_t *replacement, *content, *msg;
	size_t i;
	int rc = -1;

	if (!msgs)
		goto out;
	if (context_entry_messages(msgs, entry) < 0)
		goto out;
	if (!edit) {
		rc = json_array_extend(out, msgs);
		goto out;
	}
	replacement = json_object_get(edit, "replacement");
	if (json_is_null(replacement)) {
		rc = 0;
		goto out;
	}
	/* pi reads replacement.content: undefined for a non-object (and a
	 * TypeError for a missing replacement, which we treat the same) */
	content = json_object_get(replacement, "content");
	json_array_foreach(msgs, i, msg) {
		json_t *role = json_object_get(msg, "role");
		json_t *text_content = NULL;
		json_t *edited;
		int is_model = context_str_eq(role, "assistant") ||
			       context_str_eq(role, "toolResult");

		if (!is_model && !context_str_eq(role, "user") &&
		    !context_str_eq(role, "custom")) {
			if (json_array_append(out, msg) < 0)
				goto out;
			continue;
		}
		if (is_model && json_is_string(content)) {
			json_t *part = json_object();

			text_content = json_array();
			if (!part || !text_content ||
			    json_object_set_new(part, "type", json_string("text")) < 0 ||
			    json_object_set(part, "text", content) < 0 ||
			    json_array_append(text_content, part) < 0) {
				json_decref(part);
				json_decref(text_content);
				goto out;
			}
			json_decref(part);
		}
		edited = context_with_content(msg, text_content ? text_content : content);
		json_decref(text_content);
		if (!edited || json_array_append_new(out, edited) < 0)
			goto out;
	}
	rc = 0;
out:
	json_decref(msgs);
	return rc;
}

/* ---- Context ----------------------------------------------------------- */

/* getSessionContextSettings() over the whole path: new {"thinkingLevel"?,
 * "model"} fragment added to result. */
static int context_settings(json_t *result, json_t *const *path, size_t n)
{
	json_t *thinking = NULL;
	const json_t *model_from = NULL;
	int thinking_set = 0, from_message = 0;
	json_t *model;

	for (size_t i = 0; i < n; i++) {
		json_t *entry = path[i];

		if (context_entry_is(entry, "thinking_level_change")) {
			thinking = json_object_get(entry, "thinkingLevel");
			thinking_set = 1;
		} else if (context_entry_is(entry, "model_change")) {
			model_from = entry;
			from_message = 0;
		} else if (context_entry_is(entry, "message")) {
			json_t *message = json_object_get(entry, "message");

			if (context_str_eq(json_object_get(message, "role"),
					   "assistant")) {
				model_from = message;
				from_message = 1;
			}
		}
	}
	if (!thinking_set) {
		if (json_object_set_new(result, "thinkingLevel",
					json_string("off")) < 0)
			return -1;
	} else if (context_set_opt(result, "thinkingLevel", thinking) < 0) {
		return -1;
	}
	if (!model_from)
		return json_object_set_new(result, "model", json_null());
	model = json_object();
	if (!model || json_object_set_new(result, "model", model) < 0)
		return -1;
	if (context_set_opt(model, "provider",
			    json_object_get(model_from, "provider")) < 0)
		return -1;
	return context_set_opt(model, "modelId",
			       json_object_get(model_from,
					       from_message ? "model" : "modelId"));
}

/* buildContextEntries(): the borrowed entries whose messages make up the
 * context, into sel (room for n + 1).  Returns their count. */
static size_t context_select(json_t *const *path, size_t n, json_t **sel)
{
	json_t *compaction = NULL;
	size_t comp_pos = 0, comp_idx, count = 0, start;
	json_t *first_kept;
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		if (context_entry_is(path[i], "compaction")) {
			compaction = path[i];
			comp_pos = i;
		}
	}
	if (!compaction) {
		if (n)
			memcpy(sel, path, n * sizeof *sel);
		return n;
	}
	sel[count++] = compaction;
	if (json_is_array(json_object_get(compaction, "retainedTail"))) {
		/* the spec's checkpoint: nothing before it matters */
		start = comp_pos + 1;
		goto tail;
	}
	/* pi finds the compaction again by id (findIndex: the first match) */
	for (comp_idx = 0; comp_idx < n; comp_idx++)
		if (context_js_same(json_object_get(path[comp_idx], "id"),
				    json_object_get(compaction, "id")))
			break;
	first_kept = json_object_get(compaction, "firstKeptEntryId");
	for (size_t i = 0; i < comp_idx; i++) {
		json_t *entry = path[i];

		if (context_js_same(json_object_get(entry, "id"), first_kept))
			found = 1;
		if (!found)
			continue;
		/* the system prompt is re-sent by the compaction itself */
		if (context_entry_is(entry, "message") &&
		    context_str_eq(json_object_get(json_object_get(entry, "message"),
						   "role"), "system"))
			continue;
		sel[count++] = entry;
	}
	start = comp_idx + 1;
tail:
	for (size_t i = start; i < n; i++)
		sel[count++] = path[i];
	return count;
}

json_t *context_build(json_t *const *path, size_t n)
{
	json_t *result = json_object();
	json_t *messages = json_array();
	json_t **sel = NULL;
	json_t **edits = NULL;
	size_t count, nedits = 0;

	if (!result || !messages)
		goto fail;
	/* with pi's duplicate-id quirk the compaction can appear twice */
	sel = malloc((n + 1) * sizeof *sel);
	edits = malloc((n + 1) * sizeof *edits);
	if (!sel || !edits)
		goto fail;
	count = context_select(path, n, sel);
	for (size_t i = 0; i < count; i++)
		if (context_entry_is(sel[i], "context_edit"))
			edits[nedits++] = sel[i];
	for (size_t i = 0; i < count; i++) {
		json_t *id = json_object_get(sel[i], "id");
		json_t *edit = NULL;

		/* only the newest compaction, at index 0, is a checkpoint;
		 * older ones inside its kept range say nothing */
		if (i > 0 && context_entry_is(sel[i], "compaction"))
			continue;
		/* Map.set: the last edit for a target wins */
		for (size_t e = nedits; e-- > 0;) {
			if (context_js_same(json_object_get(edits[e], "targetId"), id)) {
				edit = edits[e];
				break;
			}
		}
		if (context_project_entry(messages, sel[i], edit) < 0)
			goto fail;
	}
	if (json_object_set(result, "messages", messages) < 0)
		goto fail;
	if (context_settings(result, path, n) < 0)
		goto fail;
	json_decref(messages);
	free(sel);
	free(edits);
	return result;
fail:
	json_decref(messages);
	json_decref(result);
	free(sel);
	free(edits);
	return NULL;
}

static int context_kind_is(const struct ps_session *s, uint32_t e, const char *kind)
{
	return strcmp(session_str(s, s->entries[e].kind), kind) == 0;
}

/* The entries of the path to idx that can change its context, in path
 * order: with a compaction on the path, only the kept range from it on,
 * and the last entries that set the thinking level and the model (what
 * pi's settings scan ends with).  Everything else is summarised away, so
 * it is not parsed: a compacted 50 MB session builds its context from a few
 * hundred kilobytes.  Returns the count, or 0 to mean "the whole path". */
static size_t context_entries(const struct ps_session *s, const uint32_t *path, size_t n, uint32_t *keep)
{
	size_t comp = n, thinking = n, model = n, start, k = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t e = path[i];
		if (s->entries[e].prev_same_id != PS_NIL)
			return 0; /* duplicate ids: pi looks ids up by position */
		if (context_kind_is(s, e, "compaction"))
			comp = i;
		else if (context_kind_is(s, e, "thinking_level_change"))
			thinking = i;
		else if (context_kind_is(s, e, "model_change") || context_kind_is(s, e, "assistant"))
			model = i;
	}
	if (comp == n)
		return 0;
	json_t *c;
	if (session_load_entry_shared(s, path[comp], &c) != PS_OK)
		return 0;
	start = comp; /* firstKeptEntryId missing or not on the path: nothing before */
	const char *first = json_string_value(json_object_get(c, "firstKeptEntryId"));
	if (!json_is_array(json_object_get(c, "retainedTail")) && first) {
		for (size_t i = 0; i < comp; i++) {
			if (strcmp(session_str(s, s->entries[path[i]].id), first) == 0) {
				start = i;
				break;
			}
		}
	}
	json_decref(c);
	for (size_t i = 0; i < n; i++)
		if (i >= start || i == thinking || i == model)
			keep[k++] = path[i];
	return k;
}

ps_err context_text(const struct ps_session *s, uint32_t idx, char **buf, size_t *len)
{
	json_t **path = NULL;
	uint32_t *order = NULL, *keep = NULL;
	size_t n = 0, k;
	ps_err err = PS_OK;

	if (idx != PS_NIL) {
		if (idx >= s->n_entries)
			return PS_ERR_NOENT;
		size_t depth = s->entries[idx].depth, i = depth;
		order = malloc(depth * sizeof *order);
		keep = malloc(depth * sizeof *keep);
		if (!order || !keep) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		for (uint32_t e = idx; e != PS_NIL && i > 0; e = s->entries[e].parent)
			order[--i] = e;
		k = context_entries(s, order, depth, keep);
		if (k) {
			path = calloc(k, sizeof *path);
			for (size_t j = 0; path && j < k && !err; j++) {
				err = session_load_entry_shared(s, keep[j], &path[j]);
				if (err == PS_ERR_INVALID) {
					path[j] = json_pack("{s:s,s:s}", "type", "unreadable", "id", session_str(s, s->entries[keep[j]].id));
					err = path[j] ? PS_OK : PS_ERR_NOMEM;
				}
			}
			n = k;
			if (!path)
				err = PS_ERR_NOMEM;
		} else {
			err = session_load_path(s, idx, &path, &n);
		}
		if (err)
			goto out;
	}
	json_t *ctx = context_build(path, n);
	if (!ctx) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	err = jsonout_pretty(ctx, buf, len);
	json_decref(ctx);
out:
	session_path_free(path, n);
	free(order);
	free(keep);
	return err;
}
