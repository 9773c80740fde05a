/* What an entry must be to be appended (appendcheck.h): the checks pi's
 * own entries pass, refused with the reason in err. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "appendcheck.h"
#include "jstext.h"

ps_err append_error_set(struct append_error *err, ps_err code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->why, sizeof err->why, fmt, ap);
	va_end(ap);
	err->code = code;
	return code;
}

static int append_is_content(const json_t *v)
{
	return json_is_string(v) || json_is_array(v);
}

static int append_blocks_ok(const json_t *content, struct append_error *err)
{
	size_t i;
	json_t *blk;
	if (!json_is_array(content))
		return 1;
	json_array_foreach(content, i, blk) {
		const char *type = json_string_value(json_object_get(blk, "type"));
		if (!json_is_object(blk) || !type) {
			append_error_set(err, PS_ERR_INVALID, "content block %zu is not an object with a string \"type\"", i);
			return 0;
		}
		if (!strcmp(type, "text") && !json_is_string(json_object_get(blk, "text"))) {
			append_error_set(err, PS_ERR_INVALID, "text block %zu has no string \"text\"", i);
			return 0;
		}
		if (!strcmp(type, "image") && (!json_is_string(json_object_get(blk, "data")) ||
					       !json_is_string(json_object_get(blk, "mimeType")))) {
			append_error_set(err, PS_ERR_INVALID, "image block %zu needs string \"data\" and \"mimeType\"", i);
			return 0;
		}
		if (!strcmp(type, "toolCall") && (!json_is_string(json_object_get(blk, "id")) ||
						  !json_is_string(json_object_get(blk, "name")) ||
						  !json_is_object(json_object_get(blk, "arguments")))) {
			append_error_set(err, PS_ERR_INVALID, "toolCall block %zu needs \"id\", \"name\" and object \"arguments\"", i);
			return 0;
		}
	}
	return 1;
}

static ps_err append_validate_message(const json_t *msg, struct append_error *err)
{
	const char *role = json_string_value(json_object_get(msg, "role"));
	json_t *content = json_object_get(msg, "content");
	if (!json_is_object(msg) || !role)
		return append_error_set(err, PS_ERR_INVALID, "a message entry needs a \"message\" object with a string \"role\"");
	if (!strcmp(role, "user") || !strcmp(role, "custom") || !strcmp(role, "system")) {
		if (!append_is_content(content))
			return append_error_set(err, PS_ERR_INVALID, "a %s message needs \"content\": a string or an array of blocks", role);
	} else if (!strcmp(role, "assistant")) {
		if (!json_is_array(content))
			return append_error_set(err, PS_ERR_INVALID, "an assistant message needs \"content\": an array of blocks");
	} else if (!strcmp(role, "toolResult")) {
		if (!json_is_array(content) || !json_is_string(json_object_get(msg, "toolCallId")) ||
		    !json_is_string(json_object_get(msg, "toolName")))
			return append_error_set(err, PS_ERR_INVALID, "a toolResult message needs array \"content\", \"toolCallId\" and \"toolName\"");
	} else if (!strcmp(role, "bashExecution")) {
		if (!json_is_string(json_object_get(msg, "command")) || !json_is_string(json_object_get(msg, "output")))
			return append_error_set(err, PS_ERR_INVALID, "a bashExecution message needs string \"command\" and \"output\"");
	} else if (!strcmp(role, "branchSummary") || !strcmp(role, "compactionSummary")) {
		/* pi's appendMessage refuses these: they are entries of their own. */
		return append_error_set(err, PS_ERR_INVALID, "%s is not a message role: append a %s entry instead", role,
				   role[0] == 'b' ? "branch_summary" : "compaction");
	} else {
		return append_error_set(err, PS_ERR_INVALID, "unknown message role \"%s\"", role);
	}
	if (!append_blocks_ok(content, err))
		return err->code;
	json_t *ts = json_object_get(msg, "timestamp");
	if (ts && !json_is_number(ts))
		return append_error_set(err, PS_ERR_INVALID, "a message's \"timestamp\" is a number (Unix ms)");
	return PS_OK;
}


static int append_id_known(const struct append_known *k, const json_t *id)
{
	if (!json_is_string(id))
		return 0;
	if (session_find(k->s, json_string_value(id), json_string_length(id)) != PS_NIL)
		return 1;
	for (size_t i = 0; i < k->n; i++)
		if (json_equal(json_object_get(k->batch[i], "id"), id))
			return 1;
	return 0;
}

/* Whether an assistant message holds a toolCall block with this id. */
static int append_has_call(const json_t *entry, const char *call_id)
{
	const json_t *msg = json_object_get(entry, "message");
	const json_t *content = json_object_get(msg, "content");
	const char *role = json_string_value(json_object_get(msg, "role"));
	size_t i;
	const json_t *block;
	if (!role || strcmp(role, "assistant") || !json_is_array(content))
		return 0;
	json_array_foreach(content, i, block) {
		const char *type = json_string_value(json_object_get(block, "type"));
		const char *id = json_string_value(json_object_get(block, "id"));
		if (type && id && !strcmp(type, "toolCall") && !strcmp(id, call_id))
			return 1;
	}
	return 0;
}

/* Whether the entry an edit revises (its item appends a sibling) is a
 * toolResult for call_id: the edit takes its place, and is no more an
 * orphan than it was (a file written by hand may hold one). */
static int append_revises_result(const struct append_known *k, const char *call_id)
{
	const struct append_item *it = k->item;
	json_t *e;
	if (!it || it->parent != APPEND_PARENT_SIBLING || it->ref >= k->s->n_entries ||
	    session_load_entry_shared(k->s, it->ref, &e) != PS_OK)
		return 0;
	const char *was = json_string_value(json_object_get(json_object_get(e, "message"), "toolCallId"));
	int same = was && !strcmp(was, call_id);
	json_decref(e);
	return same;
}

/* Whether the tool call call_id is on the path that ends at parent: the
 * earlier items of the write first, then the session's entries, nearest
 * first (a result follows its call, mostly at once).  1, 0, or -1 when an
 * entry could not be read. */
static int append_call_on_path(const struct append_known *k, const json_t *parent, const char *call_id)
{
	for (;;) {
		const json_t *e = NULL;
		for (size_t i = 0; json_is_string(parent) && i < k->n; i++)
			if (json_equal(json_object_get(k->batch[i], "id"), parent))
				e = k->batch[i];
		if (!e)
			break;
		if (append_has_call(e, call_id))
			return 1;
		parent = json_object_get(e, "parentId");
	}
	if (!json_is_string(parent))
		return 0;
	uint32_t idx = session_find(k->s, json_string_value(parent), json_string_length(parent));
	while (idx != PS_NIL) {
		json_t *e;
		if (session_load_entry_shared(k->s, idx, &e) != PS_OK)
			return -1;
		int has = append_has_call(e, call_id);
		json_decref(e);
		if (has)
			return 1;
		idx = k->s->entries[idx].parent;
	}
	return 0;
}

/* `s` is named for the session it mostly stands for. */
ps_err append_check(const struct append_known *s, const json_t *entry, struct append_error *err)
{
	const char *type = json_string_value(json_object_get(entry, "type"));
	json_t *id = json_object_get(entry, "id");
	json_t *parent = json_object_get(entry, "parentId");
	json_t *ts = json_object_get(entry, "timestamp");
	int ok;

	if (!json_is_object(entry))
		return append_error_set(err, PS_ERR_INVALID, "an entry is a JSON object");
	if (!type)
		return append_error_set(err, PS_ERR_INVALID, "an entry needs a string \"type\"");
	if (!strcmp(type, "session"))
		return append_error_set(err, PS_ERR_INVALID, "a session header cannot be appended");
	if (!json_is_string(id) || json_string_length(id) == 0 || json_string_length(id) > 128 ||
	    strlen(json_string_value(id)) != json_string_length(id))
		return append_error_set(err, PS_ERR_INVALID, "\"id\" must be a non-empty string of at most 128 bytes");
	if (append_id_known(s, id))
		return append_error_set(err, PS_ERR_INVALID, "id \"%s\" is already used in this session", json_string_value(id));
	if (!json_is_null(parent) && !append_id_known(s, parent))
		return append_error_set(err, PS_ERR_INVALID, "parentId %s names no entry of this session",
				   json_is_string(parent) ? json_string_value(parent) : "(not a string)");
	if (!json_is_string(ts))
		return append_error_set(err, PS_ERR_INVALID, "\"timestamp\" must be an ISO-8601 string");
	jstext_iso_to_ms(json_string_value(ts), &ok);
	if (!ok)
		return append_error_set(err, PS_ERR_INVALID, "\"timestamp\" %s is not an ISO-8601 time", json_string_value(ts));

	if (!strcmp(type, "message")) {
		json_t *msg = json_object_get(entry, "message");
		ps_err code = append_validate_message(msg, err);
		if (code || strcmp(json_string_value(json_object_get(msg, "role")), "toolResult"))
			return code;
		/* A result whose call is not on its path is an orphan in pi's
		 * context, which a provider refuses (cp of a toolResult's file
		 * into another branch). */
		const char *call_id = json_string_value(json_object_get(msg, "toolCallId"));
		int on_path = append_call_on_path(s, parent, call_id);
		if (on_path < 0)
			return append_error_set(err, PS_ERR_IO, "reading the path above the toolResult failed");
		if (!on_path && !append_revises_result(s, call_id))
			return append_error_set(err, PS_ERR_INVALID,
					   "a toolResult for tool call %s, which no assistant message on its path made: "
					   "the model would see a result without its call",
					   call_id);
		return PS_OK;
	}
	if (!strcmp(type, "label")) {
		json_t *label = json_object_get(entry, "label");
		if (!append_id_known(s, json_object_get(entry, "targetId")))
			return append_error_set(err, PS_ERR_INVALID, "a label's \"targetId\" must name an entry of this session");
		if (label && !json_is_string(label))
			return append_error_set(err, PS_ERR_INVALID, "\"label\" is a string (or absent to clear)");
		return PS_OK;
	}
	if (!strcmp(type, "session_info")) {
		if (!json_is_string(json_object_get(entry, "name")))
			return append_error_set(err, PS_ERR_INVALID, "a session_info entry needs a string \"name\"");
		return PS_OK;
	}
	if (!strcmp(type, "model_change")) {
		if (!json_is_string(json_object_get(entry, "provider")) || !json_is_string(json_object_get(entry, "modelId")))
			return append_error_set(err, PS_ERR_INVALID, "a model_change needs string \"provider\" and \"modelId\"");
		return PS_OK;
	}
	if (!strcmp(type, "thinking_level_change")) {
		if (!json_is_string(json_object_get(entry, "thinkingLevel")))
			return append_error_set(err, PS_ERR_INVALID, "a thinking_level_change needs a string \"thinkingLevel\"");
		return PS_OK;
	}
	if (!strcmp(type, "compaction")) {
		if (!json_is_string(json_object_get(entry, "summary")) || !json_is_number(json_object_get(entry, "tokensBefore")))
			return append_error_set(err, PS_ERR_INVALID, "a compaction needs string \"summary\" and number \"tokensBefore\"");
		json_t *fk = json_object_get(entry, "firstKeptEntryId");
		if (fk && !append_id_known(s, fk) && !json_equal(fk, id))
			return append_error_set(err, PS_ERR_INVALID, "\"firstKeptEntryId\" names no entry of this session");
		return PS_OK;
	}
	if (!strcmp(type, "branch_summary")) {
		if (!json_is_string(json_object_get(entry, "summary")) || !json_is_string(json_object_get(entry, "fromId")))
			return append_error_set(err, PS_ERR_INVALID, "a branch_summary needs string \"summary\" and \"fromId\"");
		return PS_OK;
	}
	if (!strcmp(type, "custom")) {
		if (!json_is_string(json_object_get(entry, "customType")))
			return append_error_set(err, PS_ERR_INVALID, "a custom entry needs a string \"customType\"");
		return PS_OK;
	}
	if (!strcmp(type, "custom_message")) {
		json_t *content = json_object_get(entry, "content");
		if (!json_is_string(json_object_get(entry, "customType")) || !append_is_content(content))
			return append_error_set(err, PS_ERR_INVALID, "a custom_message needs \"customType\" and string or array \"content\"");
		if (!append_blocks_ok(content, err))
			return err->code;
		return PS_OK;
	}
	if (!strcmp(type, "context_edit")) {
		json_t *rep = json_object_get(entry, "replacement");
		if (!append_id_known(s, json_object_get(entry, "targetId")))
			return append_error_set(err, PS_ERR_INVALID, "a context_edit's \"targetId\" must name an entry of this session");
		if (!json_is_null(rep) && !(json_is_object(rep) && append_is_content(json_object_get(rep, "content"))))
			return append_error_set(err, PS_ERR_INVALID, "\"replacement\" is null or an object with string or array \"content\"");
		return PS_OK;
	}
	if (!strcmp(type, "usage"))
		return PS_OK;
	return append_error_set(err, PS_ERR_INVALID, "unknown entry type \"%s\"", type);
}

