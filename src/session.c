#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bytefind.h"
#include "entrycache.h"
#include "fileio.h"
#include "jsonline.h"
#include "jstext.h"
#include "escape.h"
#include "scan.h"
#include "session.h"
#include "loadout.h"
#include "usagescan.h"

#define SESSION_READ_CHUNK (1u << 20)

static ps_err session_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return PS_OK;
	if (need == PS_NIL)
		return PS_ERR_TOOBIG;
	uint64_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	if (c >= PS_NIL)
		c = PS_NIL - 1;
	void *p = realloc(*arr, (size_t)c * elem);
	if (!p)
		return PS_ERR_NOMEM;
	*arr = p;
	*cap = (uint32_t)c;
	return PS_OK;
}

size_t session_tail_problem(const struct ps_session *s, char *buf, size_t n)
{
	if (s->size <= s->scanned || !n)
		return 0;
	uint64_t bytes = s->size - s->scanned;
	int w = snprintf(buf, n,
			 "line %u: no newline at its end (%llu byte%s), not shown: cut short by a crash or a full "
			 "disk, or being written now; pi skips it unless it is whole JSON, and the mount's next "
			 "append ends it with a newline first\n",
			 s->lines + 1, (unsigned long long)bytes, bytes == 1 ? "" : "s");
	if (w < 0)
		return 0;
	return (size_t)w < n ? (size_t)w : n - 1;
}

static ps_err session_problem(struct ps_session *s, uint32_t line, const char *why)
{
	ps_err err = session_grow((void **)&s->problems, &s->cap_problems, s->n_problems + 1,
				  sizeof *s->problems);
	if (err)
		return err;
	s->problems[s->n_problems].line = line;
	s->problems[s->n_problems].why = why;
	s->n_problems++;
	return PS_OK;
}

/* Decodes a scanned string field; escaped ones go through jansson. */
static ps_err session_field_string(const struct scan_field *f, char **out, size_t *len)
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
static ps_err session_field_view(const struct scan_field *f, const char **text, size_t *len, char **owned)
{
	*owned = NULL;
	if (f->kind == SCAN_STRING && !f->escaped && jstext_utf8_valid(f->ptr, f->len)) {
		*text = f->ptr;
		*len = f->len;
		return PS_OK;
	}
	ps_err err = session_field_string(f, owned, len);
	*text = *owned;
	return err;
}

static ps_err session_intern_kind(struct ps_session *s, const char *raw, size_t n, uint32_t *off)
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

struct kind_memo {
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

static const struct kind_memo_slot *kind_memo_find(const struct kind_memo *m, const struct kind_memo_slot *key)
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
static ps_err session_kind_decode(struct ps_session *s, const struct scan_result *r, const json_t *parsed,
				  uint32_t *off);

static ps_err session_kind(struct ps_session *s, struct kind_memo *memo, const struct scan_result *r,
			   const json_t *parsed, uint32_t *off)
{
	struct kind_memo_slot key;
	if (parsed || !memo || !kind_memo_key(r, &key))
		return session_kind_decode(s, r, parsed, off);
	const struct kind_memo_slot *hit = kind_memo_find(memo, &key);
	if (hit) {
		*off = hit->kind;
		return PS_OK;
	}
	ps_err err = session_kind_decode(s, r, parsed, off);
	if (!err) {
		key.used = 1;
		key.kind = *off;
		memo->slot[memo->next++ % KIND_MEMO_SLOTS] = key;
	}
	return err;
}

static ps_err session_kind_decode(struct ps_session *s, const struct scan_result *r, const json_t *parsed,
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
	} else if (session_field_string(&r->type, &type, &type_len) == PS_ERR_NOMEM ||
		   session_field_string(&r->role, &role, &role_len) == PS_ERR_NOMEM ||
		   session_field_string(&r->tool_name, &tool, &tool_len) == PS_ERR_NOMEM) {
		/* Out of memory is an error; a field that is not a string
		 * (PS_ERR_INVALID) is only absent. */
		err = PS_ERR_NOMEM;
		goto out;
	}
	if (!type) {
		err = session_intern_kind(s, "entry", 5, off);
		goto out;
	}
	if (strcmp(type, "message") != 0 || !role) {
		err = session_intern_kind(s, type, type_len, off);
		goto out;
	}
	if (s->version < 3 && strcmp(role, "hookMessage") == 0) {
		err = session_intern_kind(s, "custom", 6, off);
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
		err = session_intern_kind(s, kind, role_len + 1 + tool_len, off);
		goto out;
	}
	err = session_intern_kind(s, role, role_len, off);
out:
	free(kind);
	free(type);
	free(role);
	free(tool);
	return err;
}

/* An entry's own time makes its file's mtime: it never changes, so an
 * editor never sees the file "changed since reading" as the session grows. */
static int64_t session_time(const struct scan_result *r, const json_t *parsed)
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

static ps_err session_new_branch(struct ps_session *s, uint32_t first, uint32_t parent, uint32_t *out)
{
	ps_err err = session_grow((void **)&s->branches, &s->cap_branches, s->n_branches + 1,
				  sizeof *s->branches);
	if (err)
		return err;
	uint32_t b = s->n_branches++;
	struct ps_branch *br = &s->branches[b];
	br->first = br->tip = first;
	br->parent = parent;
	br->first_sub = br->last_sub = br->next_sub = PS_NIL;
	if (parent != PS_NIL) {
		struct ps_branch *pb = &s->branches[parent];
		if (pb->last_sub == PS_NIL)
			pb->first_sub = b;
		else
			s->branches[pb->last_sub].next_sub = b;
		pb->last_sub = b;
	}
	*out = b;
	return PS_OK;
}

/* Places a new entry in the tree.  Only ever adds: nothing already placed
 * moves, which is what keeps paths stable. */
static ps_err session_place(struct ps_session *s, uint32_t idx)
{
	struct ps_entry *e = &s->entries[idx];
	ps_err err;

	if (e->parent == PS_NIL) {
		e->depth = 1;
		if (s->branches[0].first == PS_NIL) {
			s->branches[0].first = s->branches[0].tip = idx;
			e->branch = 0;
			return PS_OK;
		}
		return session_new_branch(s, idx, 0, &e->branch);
	}
	struct ps_entry *p = &s->entries[e->parent];
	e->depth = p->depth + 1;
	if (p->first_child == PS_NIL) {
		p->first_child = p->last_child = idx;
		e->branch = p->branch;
		s->branches[p->branch].tip = idx;
		return PS_OK;
	}
	s->entries[p->last_child].next_sibling = idx;
	p->last_child = idx;
	uint32_t parent_branch = p->branch;
	err = session_new_branch(s, idx, parent_branch, &s->entries[idx].branch);
	return err;
}

/* Version-1 entries have no ids; pi makes random ones.  These are derived
 * from the session id and the line, so a remount shows the same names. */
static ps_err session_derive_id(struct ps_session *s, uint32_t line, uint32_t *off)
{
	const char *sid = session_str(s, s->session_id);
	char seed[512];
	char id[9];
	for (uint32_t salt = 0;; salt++) {
		int n = snprintf(seed, sizeof seed, "%.400s:%u:%u", sid, line, salt);
		uint64_t h = strpool_hash(seed, (size_t)n);
		snprintf(id, sizeof id, "%08x", (unsigned)(h ^ (h >> 32)));
		if (strmap_get(&s->ids, &s->pool, id, 8) == PS_NIL)
			break;
	}
	return strpool_add(&s->pool, id, 8, off);
}

static ps_err session_apply_label(struct ps_session *s, const json_t *entry)
{
	const char *target = json_string_value(json_object_get(entry, "targetId"));
	json_t *label = json_object_get(entry, "label");
	if (!target)
		return PS_OK;
	uint32_t t = session_find(s, target, strlen(target));
	if (t == PS_NIL)
		return PS_OK;
	/* pi: a falsy label clears. */
	if (!json_is_string(label) || json_string_length(label) == 0) {
		s->entries[t].label = PS_NIL;
		return PS_OK;
	}
	uint32_t off;
	ps_err err = strpool_add(&s->pool, json_string_value(label), strlen(json_string_value(label)), &off);
	if (err)
		return err;
	if (s->entries[t].label == PS_NIL) {
		err = session_grow((void **)&s->labeled, &s->cap_labeled, s->n_labeled + 1, sizeof *s->labeled);
		if (err)
			return err;
		/* Keep a target once: a label that comes back reuses its slot. */
		uint32_t i;
		for (i = 0; i < s->n_labeled && s->labeled[i] != t; i++)
			;
		if (i == s->n_labeled)
			s->labeled[s->n_labeled++] = t;
	}
	s->entries[t].label = off;
	return PS_OK;
}

static ps_err session_apply_name(struct ps_session *s, const json_t *entry)
{
	json_t *name = json_object_get(entry, "name");
	size_t start, n;
	if (!json_is_string(name)) {
		s->name = PS_NIL;
		return PS_OK;
	}
	/* pi: entry.name?.trim() || undefined */
	jstext_trim(json_string_value(name), json_string_length(name), &start, &n);
	if (!n) {
		s->name = PS_NIL;
		return PS_OK;
	}
	/* A NUL inside the name ends it here: the pool holds C strings. */
	return strpool_add(&s->pool, json_string_value(name) + start, n, &s->name);
}

static ps_err session_read_header_line(struct ps_session *s, const char *line, size_t len, uint64_t off)
{
	ps_err err;
	json_t *h = jsonline_object(line, len, &err);
	if (!h)
		return err;
	const char *type = json_string_value(json_object_get(h, "type"));
	const char *id = json_string_value(json_object_get(h, "id"));
	if (!type || strcmp(type, "session") != 0 || !id) {
		s->not_session = "the first JSON line is not a session header ({\"type\":\"session\",\"id\":...})";
		err = PS_ERR_NOTSESSION;
		goto out;
	}
	json_t *v = json_object_get(h, "version");
	s->version = json_is_number(v) ? (int)json_number_value(v) : 1;
	if (s->version < 1)
		s->version = 1;
	err = strpool_add(&s->pool, id, strlen(id), &s->session_id);
	if (err)
		goto out;
	const char *parent = json_string_value(json_object_get(h, "parentSession"));
	if (parent && *parent && (err = strpool_add(&s->pool, parent, strlen(parent), &s->parent_session)))
		goto out;
	s->have_header = 1;
	s->not_session = NULL;
	s->header_off = off;
	s->header_len = (uint32_t)len;
out:
	json_decref(h);
	return err;
}

/* The pool offset of a name (len bytes, no NUL), interned among the
 * last names seen: a session names a few models over thousands of
 * messages. */
static ps_err session_intern_name(struct ps_session *s, struct kind_memo *memo, const char *name, size_t len,
				  uint32_t *off)
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
static ps_err session_note_usage(struct ps_session *s, struct kind_memo *memo, struct ps_entry *e,
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
				err = session_intern_name(s, memo, m.provider, m.provider_len, &rec.provider);
			if (!err && named && model)
				err = session_intern_name(s, memo, model, model_len, &rec.model);
			if (!err)
				err = session_grow((void **)&s->usages, &s->cap_usages, s->n_usages + 1, sizeof *s->usages);
			if (err)
				return err;
			e->usage = s->n_usages;
			s->usages[s->n_usages++] = rec;
		}
	}
	e->flags |= (uint32_t)u << PS_ENTRY_USAGE_SHIFT;
	return PS_OK;
}

static ps_err session_observe(struct ps_session *s, const char *line, size_t len, const struct scan_result *r)
{
	return s->observer ? s->observer->line(s->observer->ctx, line, len, r) : PS_OK;
}

/* Indexes one complete line.  Malformed lines are skipped, as pi skips them,
 * and remembered as problems; only allocation failures are errors. */
static ps_err session_index_line(struct ps_session *s, struct kind_memo *kinds, const char *line, size_t len,
				 uint64_t off)
{
	struct scan_result r;
	json_t *parsed = NULL;
	char *id_owned = NULL, *parent_owned = NULL;
	const char *id = NULL, *parent_id = NULL;
	size_t id_len = 0, parent_len = 0;
	ps_err err = PS_OK;
	uint32_t lineno = ++s->lines;

	if (scan_is_blank(line, len))
		return session_observe(s, line, len, NULL);
	if (len >= UINT32_MAX) {
		if (s->observer)
			s->observer->unusable = 1;
		return session_problem(s, lineno, "line longer than 4 GiB, skipped");
	}
	int scanned = scan_line(line, len, &r) == PS_OK;
	if ((err = session_observe(s, line, len, scanned ? &r : NULL)))
		return err;
	if (!scanned) {
		/* The scanner is strict JSON; jansson decides the rare cases it
		 * cannot (a line whose only fault is invalid UTF-8 is a valid
		 * line for pi). */
		if (!s->have_header && s->ordinals == 0)
			s->not_session = "no valid JSON line holds a session header";
		return session_problem(s, lineno, "not a JSON object, skipped");
	}
	s->ordinals++;
	if (!s->have_header) {
		if (s->ordinals != 1)
			return PS_OK;
		err = session_read_header_line(s, line, len, off);
		if (err == PS_ERR_NOTSESSION || err == PS_ERR_INVALID)
			return PS_OK;
		return err;
	}
	if (r.key_escaped || r.type.escaped || r.id.escaped || r.parent_id.escaped || r.role.escaped ||
	    r.tool_name.escaped) {
		parsed = jsonline_object(line, len, &err);
		if (!parsed)
			return err == PS_ERR_NOMEM ? err : session_problem(s, lineno, "not a JSON object, skipped");
	}
	const char *type_s = parsed ? json_string_value(json_object_get(parsed, "type")) : NULL;
	int is_type = 0;
	if (parsed)
		is_type = type_s != NULL;
	else
		is_type = r.type.kind == SCAN_STRING;
#define TYPE_IS(lit) (parsed ? (type_s && strcmp(type_s, lit) == 0) \
			     : (r.type.len == sizeof(lit) - 1 && memcmp(r.type.ptr, lit, sizeof(lit) - 1) == 0))
	if (is_type && TYPE_IS("session")) {
		err = session_problem(s, lineno, "a second session header, skipped");
		goto out;
	}

	err = session_grow((void **)&s->entries, &s->cap_entries, s->n_entries + 1, sizeof *s->entries);
	if (err)
		goto out;
	uint32_t idx = s->n_entries;
	struct ps_entry e = {
		.off = off, .len = (uint32_t)len, .line = lineno, .ordinal = s->ordinals - 1,
		.parent = PS_NIL, .first_child = PS_NIL, .last_child = PS_NIL,
		.next_sibling = PS_NIL, .prev_same_id = PS_NIL, .label = PS_NIL, .usage = PS_NIL,
	};

	if (s->version < 2) {
		e.parent = idx ? idx - 1 : PS_NIL;
		err = session_derive_id(s, lineno, &e.id);
		if (err)
			goto out;
	} else {
		if (parsed) {
			json_t *jid = json_object_get(parsed, "id");
			json_t *jp = json_object_get(parsed, "parentId");
			/* Borrowed from parsed, which lives until out. */
			if (json_is_string(jid)) {
				id_len = json_string_length(jid);
				id = json_string_value(jid);
			}
			if (json_is_string(jp)) {
				parent_len = json_string_length(jp);
				parent_id = json_string_value(jp);
			}
		} else if ((r.id.kind == SCAN_STRING &&
			    session_field_view(&r.id, &id, &id_len, &id_owned) == PS_ERR_NOMEM) ||
			   (r.parent_id.kind == SCAN_STRING &&
			    session_field_view(&r.parent_id, &parent_id, &parent_len, &parent_owned) == PS_ERR_NOMEM)) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		if (!id || id_len == 0 || memchr(id, '\0', id_len)) {
			err = session_problem(s, lineno, "entry without a usable string id (empty, or holds NUL), skipped");
			goto out;
		}
		/* Only an earlier entry can be a parent: no cycles, stable paths. */
		if (parent_id && !memchr(parent_id, '\0', parent_len))
			e.parent = session_find(s, parent_id, parent_len);
		if (parent_id && e.parent == PS_NIL &&
		    (err = session_problem(s, lineno, "parentId names no earlier entry: shown as an extra root")))
			goto out;
		e.prev_same_id = session_find(s, id, id_len);
		if (e.prev_same_id != PS_NIL &&
		    (err = session_problem(s, lineno, "duplicate id: both lines are shown; later children, labels and entries/<id>.json take this one")))
			goto out;
		err = strpool_add(&s->pool, id, id_len, &e.id);
		if (err)
			goto out;
	}
	e.time_ms = session_time(&r, parsed);
	if (r.maybe_image)
		e.flags |= PS_ENTRY_MAY_HAVE_IMAGES;
	if (!parsed && !r.maybe_unreadable && !r.maybe_surrogate && (err = session_note_usage(s, kinds, &e, &r)))
		goto out;
	err = session_kind(s, kinds, &r, parsed, &e.kind);
	if (err)
		goto out;
	s->entries[idx] = e;
	s->n_entries++;
	err = strmap_put(&s->ids, &s->pool, e.id, idx);
	if (!err)
		err = session_place(s, idx);
	if (err) {
		s->n_entries--;
		goto out;
	}
	if (is_type && TYPE_IS("custom") && loadout_line_may_be(line, len)) {
		json_t *full = parsed ? json_incref(parsed) : jsonline_object(line, len, &err);
		if (full && loadout_entry_valid(full))
			s->loadout = idx;
		json_decref(full);
		if (err == PS_ERR_NOMEM)
			goto out;
		err = PS_OK;
	}
	if (is_type && (TYPE_IS("label") || TYPE_IS("session_info"))) {
		json_t *full = parsed ? json_incref(parsed) : jsonline_object(line, len, &err);
		if (full) {
			err = TYPE_IS("label") ? session_apply_label(s, full) : session_apply_name(s, full);
			json_decref(full);
		} else if (err != PS_ERR_NOMEM) {
			err = PS_OK; /* the scanner took it: jansson's retries did not */
		}
	}
#undef TYPE_IS
out:
	json_decref(parsed);
	free(id_owned);
	free(parent_owned);
	return err;
}

static void session_reset(struct ps_session *s)
{
	while (s->attachments) {
		struct ps_attachment *a = s->attachments;
		s->attachments = a->next;
		a->type->release(a);
	}
	free(s->entries);
	free(s->usages);
	free(s->branches);
	free(s->labeled);
	free(s->problems);
	strpool_free(&s->pool);
	strmap_free(&s->ids);
	strmap_free(&s->kinds);
	s->entries = NULL;
	s->usages = NULL;
	s->n_usages = s->cap_usages = 0;
	s->branches = NULL;
	s->labeled = NULL;
	s->problems = NULL;
	s->n_entries = s->cap_entries = s->n_branches = s->cap_branches = 0;
	s->n_labeled = s->cap_labeled = s->n_problems = s->cap_problems = 0;
	s->scanned = s->size = 0;
	s->lines = s->ordinals = 0;
	s->have_header = 0;
	s->version = 0;
	s->name = PS_NIL;
	s->loadout = PS_NIL;
	s->session_id = PS_NIL;
	s->parent_session = PS_NIL;
	s->not_session = "the file is empty";
}

static ps_err session_begin(struct ps_session *s)
{
	session_reset(s);
	s->generation++;
	uint32_t b;
	return session_new_branch(s, PS_NIL, PS_NIL, &b);
}

/* Where a byte string next occurs in a read buffer, found once for many
 * lines: a skim asks each line whether it holds the string, and most
 * lines of a store hold none of them. */
struct skim_needle {
	const char *text;
	size_t len;
	const char *at; /* the next hit at or after the last line asked about; NULL: not searched */
};

/* Whether [line, eol) holds the needle; end is the end of the buffer's
 * data, valid until the buffer is refilled (then at must be NULL again). */
static int skim_needle_in(struct skim_needle *k, const char *line, const char *eol, const char *end)
{
	if (!k->at || k->at < line) {
		k->at = bytefind(line, end, k->text, k->len);
		if (!k->at)
			k->at = end;
	}
	return k->at < eol;
}

/* Whether a skim must index the line: it may be what session_open_skim
 * promises to read (a session_info entry, a user message), where an escape
 * could spell either.  No needle holds a newline, so none spans lines. */
static int skim_wanted(struct skim_needle needles[3], const char *line, const char *eol, const char *end)
{
	for (int i = 0; i < 3; i++)
		if (skim_needle_in(&needles[i], line, eol, end))
			return 1;
	return 0;
}

/* Indexes [s->scanned, size).  A final line without a newline is indexed
 * only once its newline is there: a writer may be in the middle of it, and
 * pi writes every line with its newline in one call. */
static ps_err session_scan_from(struct ps_session *s, uint64_t size)
{
	char *buf = NULL;
	size_t cap = 0, have = 0;
	uint64_t pos = s->scanned;
	ps_err err = PS_OK;
	struct kind_memo *kinds = calloc(1, sizeof *kinds); /* NULL: every kind decoded */
	if (kinds)
		memset(kinds->names, 0xff, sizeof kinds->names); /* PS_NIL */

	while (pos + have < size) {
		if (have == cap) {
			size_t ncap = cap ? cap * 2 : SESSION_READ_CHUNK;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				err = PS_ERR_NOMEM;
				goto out;
			}
			buf = nb;
			cap = ncap;
		}
		size_t want = cap - have;
		if (want > size - pos - have)
			want = (size_t)(size - pos - have);
		ssize_t got = pread(s->fd, buf + have, want, (off_t)(pos + have));
		if (got < 0) {
			if (errno == EINTR)
				continue;
			err = PS_ERR_IO;
			goto out;
		}
		if (got == 0)
			break; /* truncated meanwhile; the next refresh sees it */
		if (s->observer && memchr(buf + have, '\r', (size_t)got))
			s->observer->unusable = 1; /* pi's reader splits there, the index does not */
		size_t start = 0;
		size_t end = have + (size_t)got;
		struct skim_needle needles[3] = {
			{ "session_info", 12, NULL }, { "\"user\"", 6, NULL }, { "\\u", 2, NULL },
		};
		for (char *nl; (nl = memchr(buf + start, '\n', end - start)); ) {
			size_t ll = (size_t)(nl - (buf + start));
			if (s->skim && s->have_header && !skim_wanted(needles, buf + start, nl, buf + end))
				s->lines++; /* counted, as the line numbers of problems need */
			else if ((err = session_index_line(s, kinds, buf + start, ll, pos + start)))
				goto out;
			start += ll + 1;
		}
		memmove(buf, buf + start, end - start);
		have = end - start;
		pos += start;
		s->scanned = pos;
	}
out:
	free(kinds);
	free(buf);
	return err;
}

static int session_read_at(const struct ps_session *s, unsigned char *buf, uint32_t n, uint64_t off)
{
	return fileio_pread_full(s->fd, buf, n, off);
}

/* Notes the first and last bytes of what was indexed. */
static void session_remember_bytes(struct ps_session *s)
{
	s->head_len = s->scanned < sizeof s->head ? (uint32_t)s->scanned : (uint32_t)sizeof s->head;
	s->tail_len = s->head_len;
	if (session_read_at(s, s->head, s->head_len, 0) != 0 ||
	    session_read_at(s, s->tail, s->tail_len, s->scanned - s->tail_len) != 0)
		s->head_len = s->tail_len = 0;
}

/* Whether what was indexed is still there, byte for byte at both ends. */
static int session_same_bytes(const struct ps_session *s)
{
	unsigned char buf[64];
	if (session_read_at(s, buf, s->head_len, 0) != 0 || memcmp(buf, s->head, s->head_len) != 0)
		return 0;
	if (session_read_at(s, buf, s->tail_len, s->scanned - s->tail_len) != 0 || memcmp(buf, s->tail, s->tail_len) != 0)
		return 0;
	return 1;
}

/* skim: session_open_skim's index.  Serials are one sequence for both
 * kinds: the entry cache tells sessions apart by them. */
static ps_err session_open_as(const char *path, int skim, struct session_observer *obs, struct ps_session **out)
{
	struct ps_session *s = calloc(1, sizeof *s);
	if (!s)
		return PS_ERR_NOMEM;
	static uint64_t serials;
	s->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
	s->fd = -1;
	s->skim = skim;
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		return PS_ERR_NOMEM;
	}
	s->observer = obs;
	ps_err err = session_refresh(s, NULL);
	s->observer = NULL;
	if (!err && obs && s->scanned != s->size)
		obs->unusable = 1; /* a last line without its \n: pi reads it, the index waits */
	if (err) {
		session_free(s);
		return err;
	}
	*out = s;
	return PS_OK;
}

ps_err session_open(const char *path, struct ps_session **out)
{
	return session_open_as(path, 0, NULL, out);
}

ps_err session_open_skim(const char *path, struct ps_session **out)
{
	return session_open_as(path, 1, NULL, out);
}

ps_err session_open_observed(const char *path, struct session_observer *obs, struct ps_session **out)
{
	return session_open_as(path, 0, obs, out);
}

void session_free(struct ps_session *s)
{
	if (!s)
		return;
	session_reset(s);
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
}

ps_err session_refresh(struct ps_session *s, int *changed)
{
	struct stat st;
	uint64_t gen = s->generation, scanned = s->scanned, old_size = s->size;
	ps_err err = PS_OK;

	if (changed)
		*changed = 0;
	if (stat(s->path, &st) != 0)
		return errno == ENOENT || errno == ENOTDIR ? PS_ERR_NOENT : PS_ERR_IO;
	if (!S_ISREG(st.st_mode))
		return PS_ERR_NOENT;
	int64_t mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	int replaced = s->fd < 0 || st.st_ino != s->ino || st.st_dev != s->dev;
	if (replaced) {
		int fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return errno == ENOENT ? PS_ERR_NOENT : PS_ERR_IO;
		if (fstat(fd, &st) != 0) {
			close(fd);
			return PS_ERR_IO;
		}
		if (s->fd >= 0)
			close(s->fd);
		s->fd = fd;
		s->dev = st.st_dev;
		s->ino = st.st_ino;
	}
	uint64_t size = (uint64_t)st.st_size;
	if (!replaced && (size != s->size || mtime_ns != s->mtime_ns) && !session_same_bytes(s))
		replaced = 1;
	if (replaced || size < s->scanned) {
		err = session_begin(s);
		if (err)
			goto out;
	}
	if (size > s->scanned)
		err = session_scan_from(s, size);
	/* The ends of what is indexed move only when something was indexed
	 * (a stat with nothing new, the common case, reads nothing). */
	if (!err && (gen != s->generation || scanned != s->scanned))
		session_remember_bytes(s);
	s->size = size;
	s->mtime_ns = mtime_ns;
out:
	if (gen != s->generation || scanned != s->scanned || old_size != s->size)
		s->changes++;
	if (changed)
		*changed = gen != s->generation || scanned != s->scanned;
	return err;
}

uint32_t session_leaf(const struct ps_session *s)
{
	return s->n_entries ? s->n_entries - 1 : PS_NIL;
}

uint32_t session_find(const struct ps_session *s, const char *id, size_t n)
{
	return strmap_get(&s->ids, &s->pool, id, n);
}

uint64_t session_labels_digest(const struct ps_session *s)
{
	uint64_t h = 0;
	for (uint32_t i = 0; i < s->n_labeled; i++) {
		uint32_t e = s->labeled[i];
		uint32_t pair[2] = { e, s->entries[e].label };
		h = h * 31 ^ strpool_hash((const char *)pair, sizeof pair);
	}
	return h;
}

struct ps_attachment *session_attachment(const struct ps_session *s, const struct ps_attachment_type *type)
{
	for (struct ps_attachment *a = s->attachments; a; a = a->next)
		if (a->type == type)
			return a;
	return NULL;
}

void session_attach(struct ps_session *s, struct ps_attachment *a)
{
	a->next = s->attachments;
	s->attachments = a;
}

ps_err session_loadout(struct ps_session *s, json_t **out, int *saved)
{
	if (saved)
		*saved = s->loadout != PS_NIL;
	if (s->loadout == PS_NIL) {
		*out = loadout_none();
		return *out ? PS_OK : PS_ERR_NOMEM;
	}
	char *line;
	size_t n;
	ps_err err = session_read_line(s, s->loadout, &line, &n);
	if (err)
		return err;
	json_t *entry = session_parse_line(line, n);
	free(line);
	if (!entry)
		return PS_ERR_INVALID; /* indexed as valid: the file changed under us */
	*out = json_incref(json_object_get(entry, "data"));
	json_decref(entry);
	return PS_OK;
}
