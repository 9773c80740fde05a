/* pi's createBranchedSession, reimplemented over the index (sessionfork.h). */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "append.h"
#include "buf.h"
#include "jsonout.h"
#include "jstext.h"
#include "sessionfork.h"
#include "sessionnew.h"
#include "strpool.h"

char *sessionfork_resolve(const char *base, const char *path)
{
	int rel = path[0] != '/';
	if (rel && (!base || base[0] != '/'))
		return NULL;
	size_t blen = rel ? strlen(base) : 0, plen = strlen(path);
	char *joined = malloc(blen + 1 + plen + 1);
	char *out = malloc(blen + 1 + plen + 2);
	if (!joined || !out) {
		free(joined);
		free(out);
		return NULL;
	}
	if (rel) {
		memcpy(joined, base, blen);
		joined[blen++] = '/';
	}
	memcpy(joined + blen, path, plen + 1);
	size_t len = 0;
	for (char *c = joined; *c;) {
		char *end = strchr(c, '/');
		size_t n = end ? (size_t)(end - c) : strlen(c);
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--; /* the '/' before it */
		} else if (n > 0 && !(n == 1 && c[0] == '.')) {
			out[len++] = '/';
			memcpy(out + len, c, n);
			len += n;
		}
		c += n;
		while (*c == '/')
			c++;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	free(joined);
	return out;
}

/* A set of strings, or a map from string to string, over one pool. */
struct fork_ids {
	struct strpool pool;
	struct strmap map;
};

static void fork_ids_free(struct fork_ids *ids)
{
	strpool_free(&ids->pool);
	strmap_free(&ids->map);
}

static uint32_t fork_ids_get(const struct fork_ids *ids, const char *s)
{
	return strmap_get(&ids->map, &ids->pool, s, strlen(s));
}

/* Adds s, mapped to val or, for a set (val == FORK_SELF), to its own
 * offset, which *off (may be NULL) receives. */
#define FORK_SELF (PS_NIL - 1)
static ps_err fork_ids_put(struct fork_ids *ids, const char *s, uint32_t val, uint32_t *off)
{
	uint32_t o;
	ps_err err = strpool_add(&ids->pool, s, strlen(s), &o);
	if (!err)
		err = strmap_put(&ids->map, &ids->pool, o, val == FORK_SELF ? o : val);
	if (!err && off)
		*off = o;
	return err;
}

/* pi's generateId: 8 hex digits of a random UUID, not taken yet. */
static void fork_new_id(const struct fork_ids *taken, char out[9])
{
	do
		sessionnew_short_id(out);
	while (fork_ids_get(taken, out) != PS_NIL);
}

/* pi's labelsById and labelTimestampsById: a Map from target id to the
 * latest truthy label and its entry's timestamp, in the Map's order (a
 * target set again stays where it was; one cleared and set again moves to
 * the end). */
struct fork_label {
	uint32_t target;      /* offset in the labels' pool */
	json_t *label;        /* owned */
	json_t *timestamp;    /* owned, NULL when the label entry had none */
	int live;
};

struct fork_labels {
	struct fork_ids targets; /* target -> index in recs */
	struct fork_label *recs;
	size_t n, cap;
};

static void fork_labels_free(struct fork_labels *l)
{
	for (size_t i = 0; i < l->n; i++) {
		json_decref(l->recs[i].label);
		json_decref(l->recs[i].timestamp);
	}
	free(l->recs);
	fork_ids_free(&l->targets);
}

static ps_err fork_label_apply(struct fork_labels *l, const json_t *entry)
{
	json_t *target = json_object_get(entry, "targetId");
	json_t *label = json_object_get(entry, "label");
	json_t *ts = json_object_get(entry, "timestamp");
	/* Only a string target can be a path entry's id. */
	if (!json_is_string(target) || strlen(json_string_value(target)) != json_string_length(target))
		return PS_OK;
	const char *t = json_string_value(target);
	uint32_t i = fork_ids_get(&l->targets, t);
	struct fork_label *r = i != PS_NIL ? &l->recs[i] : NULL;
	if (!jstext_truthy(label)) {
		if (r)
			r->live = 0; /* Map.delete */
		return PS_OK;
	}
	if (r && r->live) {
		json_decref(r->label);
		json_decref(r->timestamp);
		r->label = json_incref(label);
		r->timestamp = json_incref(ts);
		return PS_OK;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct fork_label *recs = realloc(l->recs, cap * sizeof *recs);
		if (!recs)
			return PS_ERR_NOMEM;
		l->recs = recs;
		l->cap = cap;
	}
	if (l->n >= PS_NIL - 2)
		return PS_ERR_TOOBIG;
	uint32_t off;
	ps_err err = r ? PS_OK : strpool_add(&l->targets.pool, t, strlen(t), &off);
	if (r)
		off = r->target;
	if (!err)
		err = strmap_put(&l->targets.map, &l->targets.pool, off, (uint32_t)l->n);
	if (err)
		return err;
	l->recs[l->n++] = (struct fork_label){ off, json_incref(label), json_incref(ts), 1 };
	return PS_OK;
}

/* Every label entry of the file, in file order, as pi's _buildIndex reads
 * them. */
static ps_err fork_collect_labels(const struct ps_session *s, struct fork_labels *l)
{
	for (uint32_t i = 0; i < s->n_entries; i++) {
		if (strcmp(session_str(s, s->entries[i].kind), "label") != 0)
			continue;
		json_t *e;
		ps_err err = session_load_entry(s, i, &e);
		if (err == PS_ERR_INVALID)
			continue;
		if (err)
			return err;
		const char *type = json_string_value(json_object_get(e, "type"));
		if (type && strcmp(type, "label") == 0)
			err = fork_label_apply(l, e);
		json_decref(e);
		if (err)
			return err;
	}
	return PS_OK;
}

static ps_err fork_put_line(struct buf *out, const json_t *v)
{
	char *text = NULL;
	size_t len = 0;
	ps_err err = jsonout_compact(v, &text, &len);
	if (!err && (buf_put(out, text, len) || buf_putc(out, '\n')))
		err = PS_ERR_NOMEM;
	free(text);
	return err;
}

/* The source header's cwd as pi's SessionManager.open takes it:
 * resolvePath(header.cwd).  Only an absolute one: pi would resolve any
 * other against its own working directory or home, which are not ours. */
static ps_err fork_cwd(const struct ps_session *s, char **cwd)
{
	char *line = NULL;
	size_t len = 0;
	ps_err err = session_read_header(s, &line, &len);
	if (err)
		return err == PS_ERR_NOENT ? PS_ERR_NOTSESSION : err;
	json_t *h = session_parse_line(line, len);
	free(line);
	if (!h)
		return PS_ERR_IO; /* the header was indexed, so the file changed */
	json_t *c = json_object_get(h, "cwd");
	const char *text = json_string_value(c);
	if (!text || text[0] != '/' || strlen(text) != json_string_length(c))
		err = PS_ERR_INVALID;
	else if (!(*cwd = sessionfork_resolve(NULL, text)))
		err = PS_ERR_NOMEM;
	json_decref(h);
	return err;
}

/* The path without its labels, re-chained (pi's pathWithoutLabels); the
 * ids of the entries kept go into kept, the last one's into *last. */
static ps_err fork_path(const struct ps_session *s, uint32_t leaf, struct buf *out, struct fork_ids *kept,
			uint32_t *last)
{
	struct fork_ids repl = { 0 };   /* label id -> the kept entry after it */
	uint32_t *path = NULL, *pending = NULL;
	size_t n = 0, n_pending = 0;
	ps_err err = PS_OK;
	json_t *e = NULL;

	for (uint32_t i = leaf; i != PS_NIL; i = s->entries[i].parent)
		n++;
	path = malloc(n * sizeof *path);
	pending = malloc(n * sizeof *pending);
	if (!path || !pending) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	size_t k = n;
	for (uint32_t i = leaf; i != PS_NIL; i = s->entries[i].parent)
		path[--k] = i;
	*last = PS_NIL;
	for (k = 0; k < n; k++) {
		const char *id = session_str(s, s->entries[path[k]].id);
		err = session_load_entry(s, path[k], &e);
		if (err)
			goto out;
		const char *type = json_string_value(json_object_get(e, "type"));
		if (type && strcmp(type, "label") == 0) {
			pending[n_pending++] = path[k];
			json_decref(e);
			e = NULL;
			continue;
		}
		uint32_t idoff;
		if ((err = fork_ids_put(kept, id, FORK_SELF, &idoff)))
			goto out;
		for (size_t j = 0; j < n_pending; j++)
			if ((err = fork_ids_put(&repl, session_str(s, s->entries[pending[j]].id), idoff, NULL)))
				goto out;
		n_pending = 0;
		json_t *pid = *last == PS_NIL ? json_null() : json_string(strpool_get(&kept->pool, *last));
		if (!pid || json_object_set_new(e, "parentId", pid)) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		json_t *fk = json_object_get(e, "firstKeptEntryId");
		if (type && strcmp(type, "compaction") == 0 && json_is_string(fk) && !json_equal(fk, json_object_get(e, "id")) &&
		    strlen(json_string_value(fk)) == json_string_length(fk)) {
			uint32_t to = fork_ids_get(&repl, json_string_value(fk));
			if (to != PS_NIL && json_object_set_new(e, "firstKeptEntryId", json_string(strpool_get(&kept->pool, to)))) {
				err = PS_ERR_NOMEM;
				goto out;
			}
		}
		if ((err = fork_put_line(out, e)))
			goto out;
		json_decref(e);
		e = NULL;
		*last = idoff;
	}
out:
	json_decref(e);
	free(path);
	free(pending);
	fork_ids_free(&repl);
	return err;
}

ps_err sessionfork_session_info(struct buf *out, const char *id, const json_t *parent, const char *name)
{
	size_t len = strlen(name), n = 0, start, trimmed;
	char now[32];
	char *clean = malloc(len + 1);
	if (!clean)
		return PS_ERR_NOMEM;
	for (size_t i = 0; i < len;) {
		if (name[i] == '\r' || name[i] == '\n') {
			clean[n++] = ' ';
			while (i < len && (name[i] == '\r' || name[i] == '\n'))
				i++;
		} else {
			clean[n++] = name[i++];
		}
	}
	jstext_trim(clean, n, &start, &trimmed);
	clean[start + trimmed] = '\0';
	append_now_iso(now);
	ps_err err = PS_ERR_NOMEM;
	json_t *v = json_string(clean + start);
	json_t *e = json_object();
	if (!v) {
		err = PS_ERR_INVALID;
	} else if (e && !json_object_set_new(e, "type", json_string("session_info")) &&
		   !json_object_set_new(e, "id", json_string(id)) &&
		   (!parent || !json_object_set(e, "parentId", (json_t *)parent)) &&
		   !json_object_set_new(e, "timestamp", json_string(now)) && !json_object_set(e, "name", v)) {
		err = fork_put_line(out, e);
	}
	json_decref(v);
	json_decref(e);
	free(clean);
	return err;
}

ps_err sessionfork_create(const struct ps_session *s, uint32_t leaf, int dirfd, const char *parent_path,
			  const char *name, mode_t mode, uid_t uid, gid_t gid, char **stem)
{
	struct sessionnew_stamp st;
	struct fork_labels labels = { 0 };
	struct fork_ids ids = { 0 };
	struct buf out = BUF_INIT;
	char *cwd = NULL, *header = NULL;
	size_t hlen;
	uint32_t last;
	json_t *e = NULL;
	ps_err err;

	if (!s->have_header)
		return PS_ERR_NOTSESSION;
	if (leaf >= s->n_entries)
		return PS_ERR_NOENT;
	if (parent_path[0] != '/')
		return PS_ERR_INVALID;
	if ((err = fork_cwd(s, &cwd)))
		return err;
	sessionnew_stamp(&st);
	if ((err = sessionnew_header(&st, cwd, parent_path, &header, &hlen)))
		goto out;
	if (buf_put(&out, header, hlen)) {
		err = PS_ERR_NOMEM;
		goto out;
	}
	if ((err = fork_collect_labels(s, &labels)) || (err = fork_path(s, leaf, &out, &ids, &last)))
		goto out;
	/* The labels whose target is on the path, chosen before any new id is
	 * made (pi's labelsToWrite), then written in the Map's order. */
	size_t n_write = 0;
	for (size_t i = 0; i < labels.n; i++) {
		struct fork_label *r = &labels.recs[i];
		r->live = r->live && fork_ids_get(&ids, strpool_get(&labels.targets.pool, r->target)) != PS_NIL;
		n_write += r->live;
	}
	for (size_t i = 0; i < labels.n && n_write; i++) {
		struct fork_label *r = &labels.recs[i];
		char id[9];
		uint32_t off;
		if (!r->live)
			continue;
		fork_new_id(&ids, id);
		json_t *pid = last == PS_NIL ? json_null() : json_string(strpool_get(&ids.pool, last));
		if (!(e = json_object()) || json_object_set_new(e, "type", json_string("label")) ||
		    json_object_set_new(e, "id", json_string(id)) || json_object_set_new(e, "parentId", pid) ||
		    (r->timestamp && json_object_set(e, "timestamp", r->timestamp)) ||
		    json_object_set_new(e, "targetId", json_string(strpool_get(&labels.targets.pool, r->target))) ||
		    json_object_set(e, "label", r->label)) {
			err = PS_ERR_NOMEM;
			goto out;
		}
		if ((err = fork_put_line(&out, e)) || (err = fork_ids_put(&ids, id, FORK_SELF, &off)))
			goto out;
		json_decref(e);
		e = NULL;
		last = off;
	}
	if (name) {
		char id[9];
		fork_new_id(&ids, id);
		json_t *pid = last == PS_NIL ? json_null() : json_string(strpool_get(&ids.pool, last));
		err = pid ? sessionfork_session_info(&out, id, pid, name) : PS_ERR_NOMEM;
		json_decref(pid);
		if (err)
			goto out;
	}
	err = sessionnew_write_named(dirfd, &st, out.data, out.len, mode, uid, gid, stem);
out:
	json_decref(e);
	buf_free(&out);
	free(header);
	free(cwd);
	fork_ids_free(&ids);
	fork_labels_free(&labels);
	return err;
}
