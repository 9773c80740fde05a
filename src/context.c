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

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ECMAScript's time value range (TimeClip) and V8's slack for a local time
 * before its UTC offset is applied (DateCache::kMaxTimeBeforeUTCInMs). */
#define CONTEXT_MAX_TIME_MS 8.64e15
#define CONTEXT_MAX_LOCAL_MS (8.64e15 + 864000000.0)
#define CONTEXT_MS_PER_DAY 86400000.0

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

/* JS truthiness of a JSON value; NULL is undefined. */
static int context_truthy(const json_t *v)
{
	if (!v)
		return 0;
	switch (json_typeof(v)) {
	case JSON_NULL:
	case JSON_FALSE:
		return 0;
	case JSON_STRING:
		return json_string_length(v) > 0;
	case JSON_INTEGER:
	case JSON_REAL:
		return json_number_value(v) != 0.0;
	default:
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

/* ---- Date parsing ------------------------------------------------------ */

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil); exact for any year the parser accepts. */
static int64_t context_days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Seconds east of UTC in effect at UTC second t, 0 when unknown. */
static long context_gmtoff_at(double t)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (!localtime_r(&tt, &tm))
		return 0;
	return tm.tm_gmtoff;
}

/* V8 converts a local wall-clock time with ICU's UCAL_TZ_LOCAL_FORMER rule:
 * a repeated time is its first occurrence, a skipped time uses the offset
 * from before the transition.  Offsets a day either side bracket any real
 * transition, so try those. */
static double context_local_to_utc(double local_ms)
{
	/* whole seconds, rounded down; the caller bounds local_ms */
	int64_t ms = (int64_t)local_ms;
	double local_s = (double)(ms / 1000 - (ms % 1000 < 0));
	long cand[3];
	long best = 0;
	int found = 0;

	cand[0] = context_gmtoff_at(local_s - 86400.0);
	cand[1] = context_gmtoff_at(local_s);
	cand[2] = context_gmtoff_at(local_s + 86400.0);
	for (int i = 0; i < 3; i++) {
		/* consistent: the offset holds at the instant it maps to */
		if (context_gmtoff_at(local_s - (double)cand[i]) != cand[i])
			continue;
		/* earliest instant = largest offset */
		if (!found || cand[i] > best)
			best = cand[i];
		found = 1;
	}
	if (!found)
		best = cand[0];
	return local_ms - (double)best * 1000.0;
}

/* A run of ASCII digits as V8's date tokenizer reads it: every digit counts
 * towards the length, but the value skips leading zeros and keeps only the
 * next nine digits (which is why ".0090000001" is 90 ms to V8). */
struct context_num {
	int value;
	size_t len;
};

static struct context_num context_read_num(const char **pp)
{
	struct context_num n = { 0, 0 };
	const char *p = *pp;
	size_t significant = 0;

	while (*p == '0') {
		n.len++;
		p++;
	}
	while (*p >= '0' && *p <= '9') {
		if (significant++ < 9)
			n.value = n.value * 10 + (*p - '0');
		n.len++;
		p++;
	}
	*pp = p;
	return n;
}

/* V8 reads a word as every following char >= 'A'; the ISO grammar only
 * wants a one-letter word (T or Z, either case). */
static int context_one_letter(const char **pp, char lower)
{
	const char *p = *pp;

	if ((*p | 0x20) != lower || (unsigned char)p[1] >= 'A')
		return 0;
	*pp = p + 1;
	return 1;
}

/* First three significant digits of a fraction, as V8's ReadMilliseconds. */
static int context_millis(struct context_num n)
{
	if (n.len == 1)
		return n.value * 100;
	if (n.len == 2)
		return n.value * 10;
	for (size_t len = n.len > 9 ? 9 : n.len; len > 3; len--)
		n.value /= 10;
	return n.value;
}

/* The ES5 date-time string format as V8's ParseES5DateTime accepts it:
 *   (YYYY | +YYYYYY | -YYYYYY) [-MM [-DD]] [T HH:mm [:ss [.f+]] [Z | +-hh:mm | +-hhmm]]
 * with HH 24 allowed only for 24:00[:00[.0]].  Strings V8 would hand to its
 * legacy (browser-compatible) parser are not accepted here: pi never writes
 * them. */
double context_iso_to_ms(const char *iso, int *ok)
{
	const char *p = iso;
	struct context_num n;
	int64_t year, month = 1, day = 1;
	int hour = 0, minute = 0, second = 0, milli = 0;
	int has_time = 0, has_tz = 0, tz_sign = 1;
	int tz_hour = 0, tz_min = 0;
	double ms;

	*ok = 0;
	if (!iso)
		return 0;
	if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;

		p++;
		n = context_read_num(&p);
		if (n.len != 6 || (sign < 0 && n.value == 0))
			return 0;
		year = (int64_t)sign * n.value;
	} else {
		n = context_read_num(&p);
		if (n.len != 4)
			return 0;
		year = n.value;
	}
	if (*p == '-') {
		p++;
		n = context_read_num(&p);
		if (n.len != 2 || n.value < 1 || n.value > 12)
			return 0;
		month = n.value;
		if (*p == '-') {
			p++;
			n = context_read_num(&p);
			if (n.len != 2 || n.value < 1 || n.value > 31)
				return 0;
			day = n.value;
		}
	}
	/* V8's fallback parser also takes a space for the T ("2026-11-29
	 * 10:00:03Z"), with the same meaning. */
	if (context_one_letter(&p, 't') || (*p == ' ' && p[1] >= '0' && p[1] <= '9' && p > iso + 7)) {
		if (*p == ' ')
			p++;
		has_time = 1;
		n = context_read_num(&p);
		if (n.len != 2 || n.value > 24)
			return 0;
		hour = n.value;
		if (*p++ != ':')
			return 0;
		n = context_read_num(&p);
		if (n.len != 2 || n.value > 59 || (hour == 24 && n.value > 0))
			return 0;
		minute = n.value;
		if (*p == ':') {
			p++;
			n = context_read_num(&p);
			if (n.len != 2 || n.value > 59 ||
			    (hour == 24 && n.value > 0))
				return 0;
			second = n.value;
			if (*p == '.') {
				p++;
				n = context_read_num(&p);
				if (n.len == 0 || (hour == 24 && n.value > 0))
					return 0;
				milli = context_millis(n);
			}
		}
		if (context_one_letter(&p, 'z')) {
			has_tz = 1;
		} else if (*p == '+' || *p == '-') {
			has_tz = 1;
			tz_sign = *p == '-' ? -1 : 1;
			p++;
			n = context_read_num(&p);
			if (n.len == 4) {
				tz_hour = n.value / 100;
				tz_min = n.value % 100;
			} else {
				if (n.len != 2)
					return 0;
				tz_hour = n.value;
				if (*p++ != ':')
					return 0;
				n = context_read_num(&p);
				if (n.len != 2)
					return 0;
				tz_min = n.value;
			}
			if (tz_hour > 23 || tz_min > 59)
				return 0;
		}
	}
	if (*p != '\0')
		return 0;

	ms = (double)context_days_from_civil(year, month, 1) + (double)(day - 1);
	ms = ms * CONTEXT_MS_PER_DAY + hour * 3600000.0 + minute * 60000.0 +
	     second * 1000.0 + milli;
	if (has_time && !has_tz) {
		/* the spec: date-time forms without an offset are local time */
		if (!context_within(ms, CONTEXT_MAX_LOCAL_MS))
			return 0;
		ms = context_local_to_utc(ms);
	} else {
		ms -= tz_sign * (tz_hour * 3600000.0 + tz_min * 60000.0);
	}
	if (!context_within(ms, CONTEXT_MAX_TIME_MS))
		return 0;
	*ok = 1;
	return ms + 0.0; /* no -0 */
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
			ms = context_iso_to_ms(json_string_value(v), &ok);
	} else if (json_is_string(v)) {
		ms = context_iso_to_ms(json_string_value(v), &ok);
	} else if (json_is_number(v)) {
		ms = json_number_value(v);
		/* TimeClip: range first, then truncation towards zero */
		ok = context_within(ms, CONTEXT_MAX_TIME_MS);
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
		if (!context_truthy(values[0]))
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

		if (context_truthy(system) && json_array_append(out, system) < 0)
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
