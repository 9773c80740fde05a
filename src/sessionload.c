/* Reading entries back through a session's index (session.h): a stored
 * line, parsed as pi's reader parses it and migrated to version 3, alone
 * or with its path from the root, shared through the entry cache. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "entrycache.h"
#include "jsonline.h"
#include "session.h"

static ps_err session_pread(const struct ps_session *s, uint64_t off, size_t len, char **buf)
{
	char *b = malloc(len + 1);
	size_t have = 0;
	if (!b)
		return PS_ERR_NOMEM;
	while (have < len) {
		ssize_t got = pread(s->fd, b + have, len - have, (off_t)(off + have));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			/* The file shrank under us: the caller's view is stale. */
			free(b);
			return PS_ERR_IO;
		}
		have += (size_t)got;
	}
	b[len] = '\0';
	*buf = b;
	return PS_OK;
}

ps_err session_read_line(const struct ps_session *s, uint32_t idx, char **buf, size_t *len)
{
	if (idx >= s->n_entries)
		return PS_ERR_NOENT;
	*len = s->entries[idx].len;
	return session_pread(s, s->entries[idx].off, *len, buf);
}

ps_err session_read_header(const struct ps_session *s, char **buf, size_t *len)
{
	if (!s->have_header)
		return PS_ERR_NOENT;
	*len = s->header_len;
	return session_pread(s, s->header_off, *len, buf);
}

static uint32_t session_by_ordinal(const struct ps_session *s, uint32_t ordinal)
{
	uint32_t lo = 0, hi = s->n_entries;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->entries[mid].ordinal < ordinal)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n_entries && s->entries[lo].ordinal == ordinal ? lo : PS_NIL;
}

static ps_err session_migrate(const struct ps_session *s, uint32_t idx, json_t *entry)
{
	const struct ps_entry *e = &s->entries[idx];
	if (s->version < 2) {
		json_t *pid = e->parent == PS_NIL ? json_null()
			: json_string(session_str(s, s->entries[e->parent].id));
		if (json_object_set_new(entry, "id", json_string(session_str(s, e->id))) ||
		    json_object_set_new(entry, "parentId", pid))
			return PS_ERR_NOMEM;
		const char *type = json_string_value(json_object_get(entry, "type"));
		json_t *fki = json_object_get(entry, "firstKeptEntryIndex");
		if (type && strcmp(type, "compaction") == 0 && json_is_number(fki)) {
			double d = json_number_value(fki);
			uint32_t t = d >= 0 && d < PS_NIL && d == (double)(uint32_t)d
				? session_by_ordinal(s, (uint32_t)d) : PS_NIL;
			if (t != PS_NIL &&
			    json_object_set_new(entry, "firstKeptEntryId", json_string(session_str(s, s->entries[t].id))))
				return PS_ERR_NOMEM;
			json_object_del(entry, "firstKeptEntryIndex");
		}
	}
	if (s->version < 3) {
		json_t *msg = json_object_get(entry, "message");
		const char *role = json_string_value(json_object_get(msg, "role"));
		if (role && strcmp(role, "hookMessage") == 0 &&
		    json_object_set_new(msg, "role", json_string("custom")))
			return PS_ERR_NOMEM;
	}
	return PS_OK;
}

ps_err session_load_entry(const struct ps_session *s, uint32_t idx, json_t **out)
{
	char *line;
	size_t len;
	ps_err err = session_read_line(s, idx, &line, &len);
	if (err)
		return err;
	json_t *entry = jsonline_object(line, len, &err);
	free(line);
	if (!entry)
		return err;
	err = session_migrate(s, idx, entry);
	if (err) {
		json_decref(entry);
		return err;
	}
	*out = entry;
	return PS_OK;
}

ps_err session_load_entry_shared(const struct ps_session *s, uint32_t idx, json_t **out)
{
	if (idx >= s->n_entries)
		return PS_ERR_NOENT;
	if ((*out = entrycache_get(s->serial, s->generation, idx)))
		return PS_OK;
	ps_err err = session_load_entry(s, idx, out);
	if (!err)
		entrycache_put(s->serial, s->generation, idx, *out, s->entries[idx].len);
	return err;
}

ps_err session_load_entry_keep(const struct ps_session *s, uint32_t idx, const struct jparse_keep *keep,
			       json_t **out)
{
	char *line;
	size_t len;
	if (idx >= s->n_entries)
		return PS_ERR_NOENT;
	if ((*out = entrycache_get(s->serial, s->generation, idx)))
		return PS_OK;
	ps_err err = session_read_line(s, idx, &line, &len);
	if (err)
		return err;
	json_t *entry = jsonline_object_keep(line, len, keep, &err);
	free(line);
	if (!entry)
		return err;
	err = session_migrate(s, idx, entry);
	if (err) {
		json_decref(entry);
		return err;
	}
	*out = entry;
	return PS_OK;
}

void session_path_free(json_t **path, size_t n)
{
	if (!path)
		return;
	for (size_t i = 0; i < n; i++)
		json_decref(path[i]);
	free(path);
}

ps_err session_load_path_entry(const struct ps_session *s, uint32_t idx, json_t **out)
{
	ps_err err = session_load_entry_shared(s, idx, out);
	if (err == PS_ERR_INVALID) {
		/* A line the scanner took but jansson cannot decode (a lone
		 * surrogate escape): stand in an empty entry of its id so the
		 * context stays aligned with the tree. */
		*out = json_pack("{s:s,s:s}", "type", "unreadable", "id", session_str(s, s->entries[idx].id));
		err = *out ? PS_OK : PS_ERR_NOMEM;
	}
	return err;
}

ps_err session_load_path(const struct ps_session *s, uint32_t idx, json_t ***path, size_t *n)
{
	*path = NULL;
	*n = 0;
	if (idx == PS_NIL)
		return PS_OK;
	if (idx >= s->n_entries)
		return PS_ERR_NOENT;
	size_t depth = s->entries[idx].depth;
	json_t **p = calloc(depth ? depth : 1, sizeof *p);
	if (!p)
		return PS_ERR_NOMEM;
	size_t i = depth;
	for (uint32_t e = idx; e != PS_NIL && i > 0; e = s->entries[e].parent) {
		ps_err err = session_load_path_entry(s, e, &p[--i]);
		if (err) {
			session_path_free(p, depth);
			return err;
		}
	}
	*path = p;
	*n = depth;
	return PS_OK;
}

json_t *session_parse_line(const char *line, size_t len)
{
	ps_err err;
	return jsonline_object(line, len, &err);
}
