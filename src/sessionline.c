#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "jsonline.h"
#include "jstext.h"
#include "sessionline.h"
#include "strpool.h"
#include "usagescan.h"

/* Decodes a scanned string field; escaped ones go through jansson. */
static ps_err sessionline_field_string(const struct scan_field *f, char **out, size_t *len)
{
	*out = NULL;
	if (f->kind != SCAN_STRING)
		return PS_ERR_INVALID;
	if (!f->escaped) {
		/* Read as pi reads it: invalid UTF-8 becomes U+FFFD, so a
		 * parentId spelled the way pi decodes the id still matches. */
		if (jstext_utf8_valid(f->ptr, f->len)) {
			*out = strndup(f->ptr, f->len);
			*len = f->len;
		} else {
			*out = jstext_utf8_replace(f->ptr, f->len, len);
		}
		return *out ? PS_OK : PS_ERR_NOMEM;
	}
	/* Re-wrap the raw bytes in quotes so jansson decodes the escapes. */
	char *quoted = malloc(f->len + 2);
	if (!quoted)
		return PS_ERR_NOMEM;
	quoted[0] = '"';
	memcpy(quoted + 1, f->ptr, f->len);
	quoted[f->len + 1] = '"';
	ps_err ignored;
	json_t *v = jsonline_load(quoted, f->len + 2, JSON_DECODE_ANY, &ignored);
	free(quoted);
	if (!v)
		return PS_ERR_INVALID;
	*len = json_string_length(v);
	*out = malloc(*len + 1);
	if (*out) {
		memcpy(*out, json_string_value(v), *len + 1);
	}
	json_decref(v);
	return *out ? PS_OK : PS_ERR_NOMEM;
}

/* A scanned string field's decoded text: in place when it needs no
 * decoding (no escape, valid UTF-8; then no NUL either, which JSON only
 * spells escaped), else decoded into *owned, which the caller frees. */
ps_err sessionline_field_view(const struct scan_field *f, const char **text, size_t *len, char **owned)
{
	*owned = NULL;
	if (f->kind == SCAN_STRING && !f->escaped && jstext_utf8_valid(f->ptr, f->len)) {
		*text = f->ptr;
		*len = f->len;
		return PS_OK;
	}
	ps_err err = sessionline_field_string(f, owned, len);
	*text = *owned;
	return err;
}

static ps_err sessionline_intern_kind(struct ps_session *s, const char *raw, size_t n, uint32_t *off)
{
	char *esc = escape_name_max(raw, n, SESSION_MAX_KIND);
	if (!esc)
		return PS_ERR_NOMEM;
	size_t elen = strlen(esc);
	ps_err err = PS_OK;
	*off = strmap_get(&s->kinds, &s->pool, esc, elen);
	if (*off == PS_NIL) {
		err = strpool_add(&s->pool, esc, elen, off);
		if (!err)
			err = strmap_put(&s->kinds, &s->pool, *off, *off);
	}
	free(esc);
	return err;
}

/* The kinds of the lines indexed last, by the raw bytes of their type,
 * role and toolName as the scanner found them: a session has a handful of
 * kinds, so nearly every line finds its own here without decoding,
 * escaping and interning it again (three allocations and a hash lookup
 * per entry, a tenth of indexing a store). */
#define KIND_MEMO_SLOTS 8
#define KIND_MEMO_BYTES 64

struct kind_memo_slot {
	int used;
	uint32_t kind;                 /* pool offset, as session_kind gives it */
	unsigned char len[3];          /* type, role, toolName; 0xff: not a string */
	char bytes[KIND_MEMO_BYTES];   /* the three strings' raw bytes, one after another */
};

#define NAME_MEMO_SLOTS 4

struct sessionline_memo {
	struct kind_memo_slot slot[KIND_MEMO_SLOTS];
	unsigned next;                 /* the slot to fill next, round robin */
	uint32_t names[NAME_MEMO_SLOTS]; /* the last provider and model names interned (PS_NIL: none) */
	unsigned next_name;
};

/* Fills key with the three fields' lengths and bytes; 0 when they do not
 * fit a slot (or one is escaped: the parser decides those). */
static int kind_memo_key(const struct scan_result *r, struct kind_memo_slot *key)
{
	const struct scan_field *f[3] = { &r->type, &r->role, &r->tool_name };
	size_t at = 0;
	for (int i = 0; i < 3; i++) {
		if (f[i]->kind != SCAN_STRING) {
			key->len[i] = 0xff;
			continue;
		}
		if (f[i]->escaped || f[i]->len >= 0xff || f[i]->len > KIND_MEMO_BYTES - at)
			return 0;
		key->len[i] = (unsigned char)f[i]->len;
		memcpy(key->bytes + at, f[i]->ptr, f[i]->len);
		at += f[i]->len;
	}
	return 1;
}

static size_t kind_memo_bytes(const struct kind_memo_slot *k)
{
	size_t n = 0;
	for (int i = 0; i < 3; i++)
		n += k->len[i] == 0xff ? 0 : k->len[i];
	return n;
}

static const struct kind_memo_slot *kind_memo_find(const struct sessionline_memo *m, const struct kind_memo_slot *key)
{
	for (unsigned i = 0; i < KIND_MEMO_SLOTS; i++) {
		const struct kind_memo_slot *s = &m->slot[i];
		if (s->used && memcmp(s->len, key->len, sizeof s->len) == 0 &&
		    memcmp(s->bytes, key->bytes, kind_memo_bytes(key)) == 0)
			return s;
	}
	return NULL;
}

/* The kind shown in the file name: the role for messages (toolResult with
 * its tool), else the entry type. */
static ps_err sessionline_kind_decode(struct ps_session *s, const struct scan_result *r, const json_t *parsed,
				      uint32_t *off);

ps_err sessionline_kind(struct ps_session *s, struct sessionline_memo *memo, const struct scan_result *r,
			const json_t *parsed, uint32_t *off)
{
	struct kind_memo_slot key;
	if (parsed || !memo || !kind_memo_key(r, &key))
		return sessionline_kind_decode(s, r, parsed, off);
	const struct kind_memo_slot *hit = kind_memo_find(memo, &key);
	if (hit) {
		*off = hit->kind;
		return PS_OK;
	}
	ps_err err = sessionline_kind_decode(s, r, parsed, off);
	if (!err) {
		key.used = 1;
		key.kind = *off;
		memo->slot[memo->next++ % KIND_MEMO_SLOTS] = key;
	}
	return err;
}

static ps_err sessionline_kind_decode(struct ps_session *s, const struct scan_result *r, const json_t *parsed,
				      uint32_t *off)
{
	char *type = NULL, *role = NULL, *tool = NULL;
	size_t type_len = 0, role_len = 0, tool_len = 0;
	ps_err err = PS_OK;
	char *kind = NULL;

	if (parsed) {
		const char *t = json_string_value(json_object_get(parsed, "type"));
		json_t *msg = json_object_get(parsed, "message");
		const char *ro = json_string_value(json_object_get(msg, "role"));
		const char *tn = json_string_value(json_object_get(msg, "toolName"));
		type = t ? strdup(t) : NULL;
		role = ro ? strdup(ro) : NULL;
		tool = tn ? strdup(tn) : NULL;
		if ((t && !type) || (ro && !role) || (tn && !tool)) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		type_len = type ? strlen(type) : 0;
		role_len = role ? strlen(role) : 0;
		tool_len = tool ? strlen(tool) : 0;
	} else if (sessionline_field_string(&r->type, &type, &type_len) == PS_ERR_NOMEM ||
		   sessionline_field_string(&r->role, &role, &role_len) == PS_ERR_NOMEM ||
		   sessionline_field_string(&r->tool_name, &tool, &tool_len) == PS_ERR_NOMEM) {
		/* Out of memory is an error; a field that is not a string
		 * (PS_ERR_INVALID) is only absent. */
		err = PS_ERR_NOMEM;
		goto out;
	}
	if (!type) {
		err = sessionline_intern_kind(s, "entry", 5, off);
		goto out;
	}
	if (strcmp(type, "message") != 0 || !role) {
		err = sessionline_intern_kind(s, type, type_len, off);
		goto out;
	}
	if (s->version < 3 && strcmp(role, "hookMessage") == 0) {
		err = sessionline_intern_kind(s, "custom", 6, off);
		goto out;
	}
	if (strcmp(role, "toolResult") == 0 && tool) {
		kind = malloc(role_len + 1 + tool_len + 1);
		if (!kind) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		/* Escape the tool name alone so '-' stays the separator. */
		memcpy(kind, role, role_len);
		kind[role_len] = '-';
		memcpy(kind + role_len + 1, tool, tool_len);
		err = sessionline_intern_kind(s, kind, role_len + 1 + tool_len, off);
		goto out;
	}
	err = sessionline_intern_kind(s, role, role_len, off);
out:
	free(kind);
	free(type);
	free(role);
	free(tool);
	return err;
}

/* An entry's own time makes its file's mtime: it never changes, so an
 * editor never sees the file "changed since reading" as the session grows. */
int64_t sessionline_time(const struct scan_result *r, const json_t *parsed)
{
	char iso[64];
	const char *ts = NULL;
	int ok = 0;
	if (parsed) {
		ts = json_string_value(json_object_get(parsed, "timestamp"));
	} else if (r->timestamp.kind == SCAN_STRING && !r->timestamp.escaped && r->timestamp.len < sizeof iso) {
		memcpy(iso, r->timestamp.ptr, r->timestamp.len);
		iso[r->timestamp.len] = '\0';
		ts = iso;
	}
	if (!ts)
		return 0;
	double ms = jstext_iso_to_ms(ts, &ok);
	return ok ? (int64_t)ms : 0;
}

/* The pool offset of a name (len bytes, no NUL), interned among the
 * last names seen: a session names a few models over thousands of
 * messages. */
static ps_err sessionline_intern_name(struct ps_session *s, struct sessionline_memo *memo, const char *name,
				      size_t len, uint32_t *off)
{
	for (unsigned i = 0; memo && i < NAME_MEMO_SLOTS; i++) {
		uint32_t o = memo->names[i];
		if (o != PS_NIL && strncmp(session_str(s, o), name, len) == 0 && session_str(s, o)[len] == '\0') {
			*off = o;
			return PS_OK;
		}
	}
	ps_err err = strpool_add(&s->pool, name, len, off);
	if (!err && memo)
		memo->names[memo->next_name++ % NAME_MEMO_SLOTS] = *off;
	return err;
}

/* Notes what usage.c needs of a line the scanner read plainly: its class
 * (PS_ENTRY_USAGE) and its usage, read from its usage members (when
 * usagescan declines them, the class stays unknown: the line is parsed). */
ps_err sessionline_note_usage(struct ps_session *s, struct sessionline_memo *memo, struct ps_entry *e,
			      const struct scan_result *r)
{
#define FIELD_IS(f, lit) ((f).kind == SCAN_STRING && (f).len == sizeof(lit) - 1 && memcmp((f).ptr, lit, sizeof(lit) - 1) == 0)
	enum ps_entry_usage u = PS_USAGE_NONE;
	const struct scan_field *span = &r->top_usage;
	if (FIELD_IS(r->type, "message")) {
		u = FIELD_IS(r->role, "assistant") ? PS_USAGE_ASSISTANT
		  : FIELD_IS(r->role, "toolResult") ? PS_USAGE_TOOL_RESULT : PS_USAGE_MESSAGE;
		span = &r->msg_usage;
	} else if (FIELD_IS(r->type, "compaction") || FIELD_IS(r->type, "branch_summary")) {
		u = PS_USAGE_SUMMARY;
	} else if (FIELD_IS(r->type, "usage")) {
		u = PS_USAGE_ENTRY;
	}
#undef FIELD_IS
	ps_err err = PS_OK;
	struct usagescan m;
	if (u != PS_USAGE_NONE && u != PS_USAGE_MESSAGE && span->kind != SCAN_ABSENT) {
		if (!usagescan_members(span->ptr, span->len, &m)) {
			u = PS_USAGE_UNKNOWN;
		} else if (m.has_usage) {
			struct ps_usage rec = { m.sum, PS_NIL, PS_NIL };
			const char *model = u == PS_USAGE_ASSISTANT && m.response_model ? m.response_model : m.model;
			size_t model_len = model == m.response_model ? m.response_model_len : m.model_len;
			int named = u == PS_USAGE_ASSISTANT || u == PS_USAGE_ENTRY;
			if (named && m.provider)
				err = sessionline_intern_name(s, memo, m.provider, m.provider_len, &rec.provider);
			if (!err && named && model)
				err = sessionline_intern_name(s, memo, model, model_len, &rec.model);
			if (!err)
				err = sessiondata_grow((void **)&s->usages, &s->cap_usages, s->n_usages + 1,
						       sizeof *s->usages);
			if (err)
				return err;
			e->usage = s->n_usages;
			s->usages[s->n_usages++] = rec;
		}
	}
	e->flags |= (uint32_t)u << PS_ENTRY_USAGE_SHIFT;
	return PS_OK;
}

struct sessionline_memo *sessionline_memo_new(void)
{
	struct sessionline_memo *m = calloc(1, sizeof *m);
	if (m)
		memset(m->names, 0xff, sizeof m->names); /* PS_NIL */
	return m;
}

void sessionline_memo_free(struct sessionline_memo *m)
{
	free(m);
}
