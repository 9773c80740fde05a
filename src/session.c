#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bytefind.h"
#include "fileio.h"
#include "jsonline.h"
#include "jstext.h"
#include "scan.h"
#include "session.h"
#include "sessionline.h"
#include "loadout.h"

#define SESSION_READ_CHUNK (1u << 20)

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
	ps_err err = sessiondata_grow((void **)&s->problems, &s->cap_problems, s->n_problems + 1,
				      sizeof *s->problems);
	if (err)
		return err;
	s->problems[s->n_problems].line = line;
	s->problems[s->n_problems].why = why;
	s->n_problems++;
	return PS_OK;
}

static ps_err session_new_branch(struct ps_session *s, uint32_t first, uint32_t parent, uint32_t *out)
{
	ps_err err = sessiondata_grow((void **)&s->branches, &s->cap_branches, s->n_branches + 1,
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
		err = sessiondata_grow((void **)&s->labeled, &s->cap_labeled, s->n_labeled + 1, sizeof *s->labeled);
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

/* pi's reader splits lines at \r too, the index does not: an observer is
 * told its lines are not pi's where a line holds one.  The scanner notes a
 * \r in a line it read (only white space can be one); other lines are
 * searched. */
static void session_note_carriage_return(struct ps_session *s, const char *line, size_t len,
					 const struct scan_result *r)
{
	if (s->observer && (r ? r->carriage_return : memchr(line, '\r', len) != NULL))
		s->observer->unusable = 1;
}

static ps_err session_observe(struct ps_session *s, const char *line, size_t len, const struct scan_result *r)
{
	return s->observer ? s->observer->line(s->observer->ctx, line, len, r) : PS_OK;
}

/* Indexes one complete line.  Malformed lines are skipped, as pi skips them,
 * and remembered as problems; only allocation failures are errors. */
/* A version 2+ entry's place by its id and parentId (from r, or from
 * parsed where the scanner saw escapes): e->parent an earlier entry or
 * PS_NIL, e->prev_same_id, e->id pooled.  A line with no usable id is
 * a problem (session_problem) and *skipped: it is no entry. */
static ps_err session_link_entry(struct ps_session *s, uint32_t lineno, const struct scan_result *r, json_t *parsed,
				 struct ps_entry *e, int *skipped)
{
	char *id_owned = NULL, *parent_owned = NULL;
	const char *id = NULL, *parent_id = NULL;
	size_t id_len = 0, parent_len = 0;
	ps_err err = PS_OK;

	if (parsed) {
		json_t *jid = json_object_get(parsed, "id");
		json_t *jp = json_object_get(parsed, "parentId");
		/* Borrowed from parsed, which outlives this call. */
		if (json_is_string(jid)) {
			id_len = json_string_length(jid);
			id = json_string_value(jid);
		}
		if (json_is_string(jp)) {
			parent_len = json_string_length(jp);
			parent_id = json_string_value(jp);
		}
	} else if ((r->id.kind == SCAN_STRING &&
		    sessionline_field_view(&r->id, &id, &id_len, &id_owned) == PS_ERR_NOMEM) ||
		   (r->parent_id.kind == SCAN_STRING &&
		    sessionline_field_view(&r->parent_id, &parent_id, &parent_len, &parent_owned) == PS_ERR_NOMEM)) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	if (!id || id_len == 0 || memchr(id, '\0', id_len)) {
		*skipped = 1;
		err = session_problem(s, lineno, "entry without a usable string id (empty, or holds NUL), skipped");
		goto out;
	}
	/* Only an earlier entry can be a parent: no cycles, stable paths. */
	if (parent_id && !memchr(parent_id, '\0', parent_len))
		e->parent = session_find(s, parent_id, parent_len);
	if (parent_id && e->parent == PS_NIL &&
	    (err = session_problem(s, lineno, "parentId names no earlier entry: shown as an extra root")))
		goto out;
	e->prev_same_id = session_find(s, id, id_len);
	if (e->prev_same_id != PS_NIL &&
	    (err = session_problem(s, lineno, "duplicate id: both lines are shown; later children, labels and entries/<id>.json take this one")))
		goto out;
	err = strpool_add(&s->pool, id, id_len, &e->id);
out:
	free(id_owned);
	free(parent_owned);
	return err;
}

static ps_err session_index_line(struct ps_session *s, struct sessionline_memo *kinds, const char *line, size_t len,
				 uint64_t off)
{
	struct scan_result r;
	json_t *parsed = NULL;
	ps_err err = PS_OK;
	uint32_t lineno = ++s->lines;

	if (scan_is_blank(line, len)) {
		session_note_carriage_return(s, line, len, NULL);
		return session_observe(s, line, len, NULL);
	}
	if (len >= UINT32_MAX) {
		if (s->observer)
			s->observer->unusable = 1;
		return session_problem(s, lineno, "line longer than 4 GiB, skipped");
	}
	int scanned = scan_line(line, len, &r) == PS_OK;
	session_note_carriage_return(s, line, len, scanned ? &r : NULL);
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

	err = sessiondata_grow((void **)&s->entries, &s->cap_entries, s->n_entries + 1, sizeof *s->entries);
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
		int skipped = 0;
		if ((err = session_link_entry(s, lineno, &r, parsed, &e, &skipped)) || skipped)
			goto out;
	}
	e.time_ms = sessionline_time(&r, parsed);
	if (r.maybe_image)
		e.flags |= PS_ENTRY_MAY_HAVE_IMAGES;
	if (!parsed && !r.maybe_unreadable && !r.maybe_surrogate && (err = sessionline_note_usage(s, kinds, &e, &r)))
		goto out;
	err = sessionline_kind(s, kinds, &r, parsed, &e.kind);
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

/* What a scan copied of the bytes session_remember_bytes keeps, from the
 * buffer it read them into: two reads of the file fewer per session (a
 * store's first sessions.md opens 14,000). */
struct session_scan_ends {
	int from_zero; /* the scan began at the file's start */
	uint32_t head; /* head_bytes holds the file's first `head` bytes */
	uint32_t tail; /* tail_bytes holds the `tail` bytes before s->scanned */
	unsigned char head_bytes[64], tail_bytes[64];
};

/* Indexes [s->scanned, size).  A final line without a newline is indexed
 * only once its newline is there: a writer may be in the middle of it, and
 * pi writes every line with its newline in one call. */
static ps_err session_scan_from(struct ps_session *s, uint64_t size, struct session_scan_ends *ends)
{
	char *buf = NULL;
	size_t cap = 0, have = 0;
	uint64_t pos = s->scanned;
	ps_err err = PS_OK;
	struct sessionline_memo *kinds = sessionline_memo_new(); /* NULL: every line decodes */

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
		if (start) {
			size_t t = start < sizeof ends->tail_bytes ? start : sizeof ends->tail_bytes;
			if (pos == 0) {
				ends->head = (uint32_t)(start < sizeof ends->head_bytes ? start : sizeof ends->head_bytes);
				memcpy(ends->head_bytes, buf, ends->head);
			}
			/* Fewer than its size past a chunk's start: the rest lies in
			 * the chunk before, read again from the file. */
			ends->tail = pos == 0 || t == sizeof ends->tail_bytes ? (uint32_t)t : 0;
			memcpy(ends->tail_bytes, buf + start - ends->tail, ends->tail);
		}
		memmove(buf, buf + start, end - start);
		have = end - start;
		pos += start;
		s->scanned = pos;
	}
out:
	sessionline_memo_free(kinds);
	free(buf);
	return err;
}

static int session_read_at(const struct ps_session *s, unsigned char *buf, uint32_t n, uint64_t off)
{
	return fileio_pread_full(s->fd, buf, n, off);
}

/* Notes the first and last bytes of what was indexed, from what the scan
 * copied where it covers them (ends), else from the file. */
static void session_remember_bytes(struct ps_session *s, const struct session_scan_ends *ends)
{
	uint32_t want = s->scanned < sizeof s->head ? (uint32_t)s->scanned : (uint32_t)sizeof s->head;
	/* A scan past the start leaves the head read before (an append
	 * changes no byte of it). */
	int head_ok, tail_ok;
	if (ends->from_zero && ends->head >= want)
		head_ok = (memcpy(s->head, ends->head_bytes, want), 1);
	else
		head_ok = (!ends->from_zero && s->head_len >= want) || session_read_at(s, s->head, want, 0) == 0;
	if (ends->tail >= want)
		tail_ok = (memcpy(s->tail, ends->tail_bytes + (ends->tail - want), want), 1);
	else
		tail_ok = session_read_at(s, s->tail, want, s->scanned - want) == 0;
	s->head_len = s->tail_len = head_ok && tail_ok ? want : 0;
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
	struct session_scan_ends ends = { 0, 0, 0, { 0 }, { 0 } };
	ps_err err = PS_OK;
	int fresh = 0;

	if (changed)
		*changed = 0;
	if (s->fd < 0) {
		/* Never opened: opened before any stat, one walk of its path
		 * where a stat first took two (a store's first sessions.md
		 * opens 14,000).  O_NONBLOCK: a FIFO in the file's place opens
		 * without waiting for a writer, and is then refused. */
		int fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			return errno == ENOENT || errno == ENOTDIR ? PS_ERR_NOENT : PS_ERR_IO;
		if (fstat(fd, &st) != 0) {
			close(fd);
			return PS_ERR_IO;
		}
		if (!S_ISREG(st.st_mode)) {
			close(fd);
			return PS_ERR_NOENT;
		}
		s->fd = fd;
		s->dev = st.st_dev;
		s->ino = st.st_ino;
		fresh = 1;
	} else if (stat(s->path, &st) != 0) {
		return errno == ENOENT || errno == ENOTDIR ? PS_ERR_NOENT : PS_ERR_IO;
	} else if (!S_ISREG(st.st_mode)) {
		return PS_ERR_NOENT;
	}
	int64_t mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	int replaced = fresh || st.st_ino != s->ino || st.st_dev != s->dev;
	if (replaced && !fresh) {
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
	ends.from_zero = s->scanned == 0;
	if (size > s->scanned)
		err = session_scan_from(s, size, &ends);
	/* The ends of what is indexed move only when something was indexed
	 * (a stat with nothing new, the common case, reads nothing). */
	if (!err && (gen != s->generation || scanned != s->scanned))
		session_remember_bytes(s, &ends);
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
