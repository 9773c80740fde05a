#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <limits.h>
#include "caller.h"
#include "append.h"
#include "catalog.h"
#include "journal.h"
#include "jstext.h"
#include "layout.h"
#include "loadout.h"
#include "parse.h"
#include "pisessionfs.h"
#include "rewrite.h"
#include "commit.h"

int commit_is_entry_name(const char *name)
{
	size_t n = strlen(name);
	if (name[0] == '.' || name[0] == '#')
		return 0;
	return (n > 3 && strcmp(name + n - 3, ".md") == 0) || (n > 5 && strcmp(name + n - 5, ".json") == 0);
}

int commit_is_blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!text[i] || !strchr(" \t\n\r\v\f", text[i]))
			return 0;
	return 1;
}

static int commit_refuse(const char *path, const char *text, size_t len, ps_err code, const char *why)
{
	journal_reject(path, text, len, why);
	return -psfs_errno(code ? code : PS_ERR_INVALID);
}

static int64_t commit_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The entry a new file holds: a .json file is an entry (has "type") or an
 * AgentMessage (has "role"); a .md file is parsed as an entry file (name:
 * the edited entry's file name, which its image links are relative to). */
static ps_err commit_parse(const char *path, const char *text, size_t len, const json_t *original,
			   const char *name, json_t **out, char *why, size_t why_len)
{
	size_t n = strlen(path);
	if (!original && n > 5 && strcmp(path + n - 5, ".json") == 0) {
		json_error_t error;
		json_t *v = json_loadb(text, len, JSON_ALLOW_NUL, &error);
		if (!v) {
			snprintf(why, why_len, "not valid JSON: line %d: %s", error.line, error.text);
			return PS_ERR_INVALID;
		}
		if (json_is_object(v) && json_is_string(json_object_get(v, "type"))) {
			*out = v;
			return PS_OK;
		}
		if (json_is_object(v) && json_is_string(json_object_get(v, "role"))) {
			if (!json_object_get(v, "timestamp"))
				json_object_set_new(v, "timestamp", json_integer(commit_now_ms()));
			*out = json_pack("{s:s,s:o}", "type", "message", "message", v);
			return *out ? PS_OK : PS_ERR_NOMEM;
		}
		json_decref(v);
		snprintf(why, why_len, "a .json file holds an entry (with \"type\") or a message (with \"role\")");
		return PS_ERR_INVALID;
	}
	return parse_entry_md(text, len, original, name, out, why, why_len);
}

static int commit_append(struct store_ref *ref, uint64_t generation, struct append_item *items, size_t n,
			 const char *path, const char *text, size_t len, char *id_out)
{
	struct append_error err;
	if (id_out)
		id_out[0] = '\0';
	ps_err code = append_items(ref->session, generation, items, n, &err);
	if (err.note[0])
		journal_log("before writing %s: %s (in %s)", journal_path(path), err.note, ref->session->path);
	if (code)
		return commit_refuse(path, text, len, code, err.why);
	for (size_t i = 0; i < n; i++) {
		journal_log("appended %s %s to %s (from %s)",
			    json_string_value(json_object_get(items[i].entry, "type")),
			    json_string_value(json_object_get(items[i].entry, "id")), ref->session->path,
			    journal_path(path));
	}
	if (id_out && n)
		snprintf(id_out, COMMIT_ID_MAX, "%s", json_string_value(json_object_get(items[0].entry, "id")));
	return 0;
}

/* Does the new content differ from the entry, apart from what the
 * appender fills in? */
static int commit_unchanged(const json_t *original, const json_t *parsed)
{
	json_t *copy = json_deep_copy(original);
	int same = 0;
	if (copy) {
		json_object_del(copy, "id");
		json_object_del(copy, "parentId");
		json_object_del(copy, "timestamp");
		same = json_equal(copy, parsed);
		json_decref(copy);
	}
	return same;
}

int commit_edit(struct store_ref *ref, uint64_t generation, uint32_t entry, const char *path,
		const char *text, size_t len, char *id_out)
{
	struct ps_session *s = ref->session;
	json_t *original = NULL, *parsed = NULL;
	char why[512], *name = NULL;
	int res;

	if (id_out)
		id_out[0] = '\0';
	if (s->generation != generation || entry >= s->n_entries)
		return commit_refuse(path, text, len, PS_ERR_IO, "the session file was replaced while the entry was open");
	ps_err code = session_load_entry(s, entry, &original);
	if (code)
		return commit_refuse(path, text, len, code, "the original entry cannot be read");
	/* The image links in the file are relative to the entry's name. */
	if (!(name = layout_entry_name(s, entry))) {
		res = commit_refuse(path, text, len, PS_ERR_NOMEM, "out of memory");
		goto out;
	}
	code = commit_parse(path, text, len, original, name, &parsed, why, sizeof why);
	if (code) {
		res = commit_refuse(path, text, len, code, why);
		goto out;
	}
	if (commit_unchanged(original, parsed)) {
		res = 0;
		goto out;
	}
	/* An edited message is a new message: it gets the time of the edit. */
	json_t *msg = json_object_get(parsed, "message");
	if (json_is_object(msg))
		json_object_set_new(msg, "timestamp", json_integer(commit_now_ms()));
	struct append_item item = { parsed, APPEND_PARENT_SIBLING, entry, NULL, 0 };
	res = commit_append(ref, generation, &item, 1, path, text, len, id_out);
out:
	free(name);
	json_decref(original);
	json_decref(parsed);
	return res;
}

int commit_check_text(struct store_ref *ref, uint64_t generation, uint32_t entry, const char *path,
		      const char *text, size_t len)
{
	struct ps_session *s = ref->session;
	json_t *original = NULL;
	char why[512];
	int res = 0;

	if (parse_may_be_front_matter(text, len) || s->generation != generation || entry >= s->n_entries ||
	    session_load_entry(s, entry, &original))
		return 0;
	if (rewrite_check(original, why, sizeof why) == PS_ERR_INVALID)
		res = commit_refuse(path, text, len, PS_ERR_INVALID, why);
	json_decref(original);
	return res;
}

/* A message of a new .md file is new activity: it gets the time of its
 * commit, whatever front matter it was copied with (cp ENTRY.md new.md),
 * as an edit does.  A .json entry keeps what it says. */
static void commit_stamp_md(const char *path, json_t *parsed)
{
	size_t n = strlen(path);
	json_t *msg = json_object_get(parsed, "message");
	if (n > 3 && strcmp(path + n - 3, ".md") == 0 && json_is_object(msg))
		json_object_set_new(msg, "timestamp", json_integer(commit_now_ms()));
}

int commit_new(struct store_ref *ref, uint64_t generation, uint32_t branch, const char *path,
	       const char *text, size_t len, char *id_out)
{
	json_t *parsed = NULL;
	char why[512];
	if (id_out)
		id_out[0] = '\0';
	ps_err code = commit_parse(path, text, len, NULL, NULL, &parsed, why, sizeof why);
	if (code)
		return commit_refuse(path, text, len, code, why);
	commit_stamp_md(path, parsed);
	/* A .json entry that names its parent hangs there; otherwise under
	 * the directory's tip. */
	enum append_parent how = json_object_get(parsed, "parentId") ? APPEND_PARENT_GIVEN : APPEND_PARENT_BRANCH;
	struct append_item item = { parsed, how, branch, NULL, 0 };
	int res = commit_append(ref, generation, &item, 1, path, text, len, id_out);
	json_decref(parsed);
	return res;
}

int commit_branch(struct store_ref *ref, const char *fork_id, const char *label, const char *path,
		  const char *text, size_t len, char *id_out)
{
	struct ps_session *s = ref->session;
	json_t *parsed = NULL, *mark = NULL;
	char why[512], id[9];
	int res;
	uint32_t fork = PS_NIL;

	if (id_out)
		id_out[0] = '\0';
	if (*fork_id && (fork = session_find(s, fork_id, strlen(fork_id))) == PS_NIL)
		return commit_refuse(path, text, len, PS_ERR_NOENT, "the entry this branch starts after is gone");
	ps_err code = commit_parse(path, text, len, NULL, NULL, &parsed, why, sizeof why);
	if (code)
		return commit_refuse(path, text, len, code, why);
	commit_stamp_md(path, parsed);
	append_fresh_id(s, id);
	json_object_set_new(parsed, "id", json_string(id));
	json_object_del(parsed, "parentId");
	mark = json_pack("{s:s,s:s,s:s}", "type", "label", "targetId", id, "label", label);
	if (!mark) {
		res = commit_refuse(path, text, len, PS_ERR_NOMEM, "out of memory");
		goto out;
	}
	struct append_item items[2] = {
		{ parsed, APPEND_PARENT_UNDER, fork, NULL, 0 },
		{ mark, APPEND_PARENT_LEAF, PS_NIL, NULL, 0 },
	};
	res = commit_append(ref, s->generation, items, 2, path, text, len, id_out);
out:
	json_decref(parsed);
	json_decref(mark);
	return res;
}

/* Tells the catalog of the session's new name now, so that by-name/ and
 * a lookup of the name under its project know it as soon as the write
 * that named it returns (`echo X > name && cd by-name/X`), not at the
 * next scan. */
static void commit_name_known(const struct ps_session *s, const char *name)
{
	struct fuse_context *ctx = psfs_context();
	struct psfs *fs = ctx ? ctx->private_data : NULL;
	if (!fs || !fs->catalog || !fs->store)
		return; /* no mount (a unit test) */
	const char *root = store_root(fs->store);
	size_t rl = strlen(root), n;
	char project[NAME_MAX + 1] = "", stem[NAME_MAX + 1];
	if (!s->path || strncmp(s->path, root, rl) != 0 || s->path[rl] != '/')
		return;
	const char *rel = s->path + rl + 1, *slash = strchr(rel, '/');
	if (slash) {
		/* A subagent's session (family.h) is in no catalog. */
		if ((size_t)(slash - rel) > NAME_MAX || strchr(slash + 1, '/'))
			return;
		snprintf(project, sizeof project, "%.*s", (int)(slash - rel), rel);
		rel = slash + 1;
	}
	n = strlen(rel);
	if (n < 6 || n - 6 > NAME_MAX || strcmp(rel + n - 6, ".jsonl") != 0)
		return;
	snprintf(stem, sizeof stem, "%.*s", (int)(n - 6), rel);
	catalog_renamed(fs->catalog, project, stem, s, name);
}

int commit_name(struct store_ref *ref, const char *path, const char *text, size_t len)
{
	struct ps_session *s = ref->session;
	char *name = malloc(len + 1);
	size_t n = 0;
	int res = 0;
	if (!name)
		return commit_refuse(path, text, len, PS_ERR_NOMEM, "out of memory");
	/* pi: name.replace(/[\r\n]+/g, " ").trim() */
	for (size_t i = 0; i < len;) {
		if (text[i] == '\r' || text[i] == '\n') {
			name[n++] = ' ';
			while (i < len && (text[i] == '\r' || text[i] == '\n'))
				i++;
		} else {
			name[n++] = text[i++];
		}
	}
	size_t start, trimmed;
	jstext_trim(name, n, &start, &trimmed);
	name[start + trimmed] = '\0';
	const char *current = s->name == PS_NIL ? "" : session_str(s, s->name);
	if (strcmp(current, name + start) == 0)
		goto out;
	json_t *info = json_pack("{s:s,s:s?}", "type", "session_info", "name", name + start);
	if (!info) {
		res = commit_refuse(path, text, len, PS_ERR_INVALID, "the name is not valid UTF-8 text");
		goto out;
	}
	struct append_item item = { info, APPEND_PARENT_LEAF, PS_NIL, NULL, 0 };
	res = commit_append(ref, s->generation, &item, 1, path, text, len, NULL);
	json_decref(info);
	if (res == 0)
		commit_name_known(ref->session, name + start);
out:
	free(name);
	return res;
}

int commit_loadout(struct store_ref *ref, const char *path, const char *text, size_t len)
{
	struct ps_session *s = ref->session;
	json_t *data = NULL, *current = NULL, *entry = NULL;
	json_error_t error;
	char why[256];
	int res = 0;

	/* Any JSON value: one that is no object is JSON all the same, and
	 * refused for its shape (loadout_valid says so). */
	if (!(data = json_loadb(text, len, JSON_DECODE_ANY, &error))) {
		snprintf(why, sizeof why, "not valid JSON: line %d: %s", error.line, error.text);
		return commit_refuse(path, text, len, PS_ERR_INVALID, why);
	}
	if (!loadout_valid(data, why, sizeof why)) {
		res = commit_refuse(path, text, len, PS_ERR_INVALID, why);
		goto out;
	}
	ps_err err = session_loadout(s, &current, NULL);
	if (err) {
		res = commit_refuse(path, text, len, err, "the saved loadout could not be read");
		goto out;
	}
	/* An editor's save of what it read, or a reset with nothing to
	 * reset: the spec writes a reset marker only to clear a saved
	 * loadout. */
	if (json_equal(current, data) || (loadout_is_reset(data) && loadout_is_reset(current)))
		goto out;
	entry = json_pack("{s:s,s:s,s:O}", "type", "custom", "customType", LOADOUT_CUSTOM_TYPE, "data", data);
	if (!entry) {
		res = commit_refuse(path, text, len, PS_ERR_NOMEM, "out of memory");
		goto out;
	}
	struct append_item item = { entry, APPEND_PARENT_LEAF, PS_NIL, NULL, 0 };
	res = commit_append(ref, s->generation, &item, 1, path, text, len, NULL);
out:
	json_decref(entry);
	json_decref(current);
	json_decref(data);
	return res;
}

int commit_meta(struct store_ref *ref, enum layout_kind kind, const char *path, const char *text, size_t len)
{
	return kind == LAYOUT_LOADOUT ? commit_loadout(ref, path, text, len) : commit_name(ref, path, text, len);
}

int commit_raw(struct store_ref *ref, const char *path, const char *text, size_t len)
{
	struct ps_session *s = ref->session;
	struct append_item *items = NULL;
	size_t n = 0, cap = 0;
	int res = 0;

	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - (text + off)) : len - off;
		const char *line = text + off;
		off += ll + (nl ? 1 : 0);
		if (ll == 0 || (ll == 1 && line[0] == '\r'))
			continue;
		json_t *entry = session_parse_line(line, ll);
		if (!entry) {
			char why[128];
			snprintf(why, sizeof why, "line %zu of what was appended is not a JSON object", n + 1);
			res = commit_refuse(path, text, len, PS_ERR_INVALID, why);
			goto out;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct append_item *grown = realloc(items, ncap * sizeof *grown);
			if (!grown) {
				json_decref(entry);
				res = commit_refuse(path, text, len, PS_ERR_NOMEM, "out of memory");
				goto out;
			}
			items = grown;
			cap = ncap;
		}
		items[n++] = (struct append_item){ entry, APPEND_PARENT_GIVEN, PS_NIL, line, ll };
	}
	if (n)
		res = commit_append(ref, s->generation, items, n, path, text, len, NULL);
out:
	for (size_t i = 0; i < n; i++)
		json_decref(items[i].entry);
	free(items);
	return res;
}

int commit_label(struct store_ref *ref, const char *path, uint32_t target, const char *label, uint32_t clear)
{
	struct ps_session *s = ref->session;
	struct append_item items[2];
	size_t n = 0;
	int res;

	if (clear != PS_NIL && clear != target) {
		items[n++] = (struct append_item){
			json_pack("{s:s,s:s}", "type", "label", "targetId", session_str(s, s->entries[clear].id)),
			APPEND_PARENT_LEAF, PS_NIL, NULL, 0 };
	}
	items[n++] = (struct append_item){
		label ? json_pack("{s:s,s:s,s:s}", "type", "label", "targetId", session_str(s, s->entries[target].id), "label", label)
		      : json_pack("{s:s,s:s}", "type", "label", "targetId", session_str(s, s->entries[target].id)),
		APPEND_PARENT_LEAF, PS_NIL, NULL, 0 };
	for (size_t i = 0; i < n; i++)
		if (!items[i].entry) {
			res = commit_refuse(path, label ? label : "", label ? strlen(label) : 0, PS_ERR_INVALID,
					    "the label is not valid UTF-8 text");
			goto out;
		}
	res = commit_append(ref, s->generation, items, n, path, label ? label : "", label ? strlen(label) : 0, NULL);
out:
	for (size_t i = 0; i < n; i++)
		json_decref(items[i].entry);
	return res;
}
